#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ioctl fuzzer (ioctl_fuzz.c) with a call count: 20000 calls by default
# (make check), CNF_TEST_FUZZ_CALLS from the host (make check-debug: 1M).
# CNF_TEST_FUZZ_PROCS and CNF_TEST_FUZZ_SEED are passed on too.
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
[[ -x ./ioctl_fuzz ]] || { echo "ioctl_fuzz not built (make -C selftests)"; exit 1; }
export CNF_FUZZ_CALLS=${CNF_TEST_FUZZ_CALLS:-20000}
[[ -n ${CNF_TEST_FUZZ_PROCS:-} ]] && export CNF_FUZZ_PROCS=$CNF_TEST_FUZZ_PROCS
[[ -n ${CNF_TEST_FUZZ_SEED:-} ]] && export CNF_FUZZ_SEED=$CNF_TEST_FUZZ_SEED
exec ./ioctl_fuzz
