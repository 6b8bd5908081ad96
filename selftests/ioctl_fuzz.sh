#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ioctl fuzzer (ioctl_fuzz.c, KTAP of its own) with a call count: 20000
# calls by default (make check), CNF_TEST_FUZZ_CALLS from the host (make
# check-debug: 1M).  CNF_TEST_FUZZ_PROCS and CNF_TEST_FUZZ_SEED are passed
# on too.  It prints the "# reliability: calls_fuzzed=..." line of the
# reliability table (docs/benchmarks.md).
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
# shellcheck source=lib.sh
source ./lib.sh
[[ -x ./ioctl_fuzz ]] || ktap_bail "ioctl_fuzz not built (make -C selftests)"
export CNF_FUZZ_CALLS=${CNF_TEST_FUZZ_CALLS:-20000}
[[ -n ${CNF_TEST_FUZZ_PROCS:-} ]] && export CNF_FUZZ_PROCS=$CNF_TEST_FUZZ_PROCS
[[ -n ${CNF_TEST_FUZZ_SEED:-} ]] && export CNF_FUZZ_SEED=$CNF_TEST_FUZZ_SEED
exec ./ioctl_fuzz
