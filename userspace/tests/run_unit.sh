#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs each unit test binary given as an argument and sums the kselftest
# "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N" lines
# (scripts/tally.sh's tally_totals).  A binary that exits non-zero without
# reporting a failure (crash, sanitizer abort, no Totals line) counts as
# one failed test.  Ends with tally.sh's summary: a line per binary, then
# "N passed, N failed", with ", N skipped" when any was skipped (counted
# in neither).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/tally.sh
source "$ROOT/scripts/tally.sh"

# All of it is also kept in $CNF_UNIT_LOG when set.
log=${CNF_UNIT_LOG:-/dev/null}
: >"$log"
for t in "$@"; do
	echo "== ${t##*/}"
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	printf '== %s\n%s\n' "${t##*/}" "$out" >>"$log"
	totals=$(printf '%s\n' "$out" | sed -n 's/^# Totals: //p' | tail -n 1)
	tally_totals "$totals" "$rc" "${t##*/}"
done
summary
((FAIL == 0))
