# SPDX-License-Identifier: GPL-2.0
# Included by every Makefile whose rules need files from Debian's kernel
# source (scripts/kernel-source.sh names the package and extracts them).
# A rule that includes kselftest headers lists $(KSFT_HARNESS) among its
# prerequisites, so a fresh clone extracts them on first use.
KSRC_SCRIPT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/kernel-source.sh
KSRC_DIR := $(shell $(KSRC_SCRIPT) dir)
KSFT := $(KSRC_DIR)/tools/testing/selftests
KSFT_HARNESS := $(KSFT)/kselftest_harness.h

# Not the including Makefile's default goal: that stays its own first one.
KSRC_GOAL := $(.DEFAULT_GOAL)
$(KSFT_HARNESS):
	$(KSRC_SCRIPT) extract >/dev/null
.DEFAULT_GOAL := $(KSRC_GOAL)
