#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What kbuild asks before C=1 runs sparse: "1" when the checker runs with
# its flags.  Debian's 7.2 headers call scripts/checker-valid.sh but do not
# ship it, so scripts/sid-root.sh puts this one there.
#   checker-valid.sh CHECK CHECKFLAGS...
"$@" -E -x c /dev/null >/dev/null 2>&1 && echo 1
exit 0
