#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-kernels: the selftests on every kernel we support, one after
# the other (kver --list): Debian 12's 6.1 cloud kernel and its 6.12 cloud
# kernel run the whole suite at its full sizes (CNF_TEST_FULL=1:
# selftests/lib.sh), the 6.12 PREEMPT_RT kernel runs RT_TESTS.
# The newest Debian kernel, sid's cloud kernel (7.2), runs the whole
# suite too, built and booted from the sid root deps.sh --kernels makes
# (scripts/sid-root.sh).
# make check-rt: the PREEMPT_RT part alone.  check-kernels then runs
# make check-dkms (scripts/check-dkms.sh: DKMS and the packages on 6.1 and
# 6.12 cloud), one line of the summary.
#
#   check-kernels.sh [--rt | --kernel NAME]
#
# --kernel NAME runs one kernel's row (a kver short name, 7.2 say), the
# whole suite, without check-dkms.
#
# Per kernel: the W=1 + sparse build of the module and the test modules
# against its headers (one test), the build for its VM, the selftests in
# VMs booting it (their KTAP counts).  Installs the 6.12 kernels and their
# headers first (deps.sh --kernels).  Logs are in build/check-kernels/,
# one directory per kernel.  The last line is "N passed, N failed", with
# ", N skipped" when some were skipped, named on the line before.
#
# Under PREEMPT_RT softirqs run in threads and local_bh_disable() only
# serialises with the softirqs of its CPU, without disabling preemption:
# the tests that race writers, packets, namespace teardown and module
# unload (stress: its growth and storm tests; lifecycle) are the ones that
# kernel is for.
# CNF_RT_TESTS overrides the list; "all" runs the whole suite.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VM=$ROOT/selftests/vm
SCRIPTS=$ROOT/scripts
LOGS=$ROOT/build/check-kernels
MAKE=${MAKE:-make}
RT_TESTS=${CNF_RT_TESTS:-stress.sh lifecycle.sh}
cd "$ROOT" || exit 1

# shellcheck source=tally.sh
source "$ROOT/scripts/tally.sh"

# run_logged LOG COMMAND...: output shown and kept in LOG.
run_logged() {
	local log=$1
	shift
	"$@" 2>&1 | tee "$log"
	return "${PIPESTATUS[0]}"
}

# one_kernel NAME TEST...: build and test on kernel NAME (a kver short
# name); no TEST: the whole suite.
one_kernel() {
	local k=$1 rel dir
	shift
	dir=$LOGS/$k
	mkdir -p "$dir"
	echo
	echo "==== $k"
	if ! rel=$(KVER=$k "$SCRIPTS/kver"); then
		fail "$k" kernel "FAILED (not installed)"
		return
	fi
	if run_logged "$dir/lint.log" env KVER="$rel" "$SCRIPTS/lint.sh" --build; then
		pass "$k" build "W=1 + sparse clean ($rel)"
	else
		fail "$k" build "FAILED ($rel)"
	fi
	if ! run_logged "$dir/vm-build.log" "$MAKE" --no-print-directory vm-build KVER="$rel"; then
		fail "$k" selftests "FAILED (not run: the build for the VM failed)"
		return
	fi
	# Each kernel balances its VMs by its own test durations.  The
	# timeouts only catch a hang: at full size on a busy host every test
	# takes several times its quiet time (cuckooctl.sh: 121 s beside one
	# other VM, past 600 s, the default, at a load average of 17), so a
	# test gets half an hour and a VM three hours, unless told otherwise.
	CNF_TEST_FULL=1 CNF_VM_DURATIONS=$ROOT/build/vm/durations.$k KVER=$rel \
		CNF_TEST_TIMEOUT=${CNF_TEST_TIMEOUT:-1800} \
		CNF_VM_TIMEOUT=${CNF_VM_TIMEOUT:-10800} \
		run_logged "$dir/suite.log" "$VM/selftests.sh" "$@"
	# The VMs' consoles, which the next kernel's run replaces.
	cp "$ROOT"/build/selftests.*log "$dir/" 2>/dev/null
	tally_suite "$dir/suite.log" "$k" "$k" selftests
}

main() {
	local k rt_only=0 tests only=
	case ${1:-} in
	--rt) rt_only=1 ;;
	--kernel)
		only=${2:-}
		if [[ -z $only ]] || ! KVER=$only "$SCRIPTS/kver" >/dev/null; then
			echo "check-kernels: --kernel NAME, one of: $("$SCRIPTS/kver" --list | xargs)" >&2
			exit 2
		fi
		;;
	"") ;;
	*) echo "usage: check-kernels.sh [--rt | --kernel NAME]" >&2; exit 2 ;;
	esac
	mkdir -p "$LOGS"
	if ! run_logged "$LOGS/deps.log" "$SCRIPTS/deps.sh" --kernels; then
		fail deps "" FAILED
		summary
		exit 1
	fi
	if [[ -n $only ]]; then
		one_kernel "$only"
		summary
		((FAIL == 0))
		return
	fi
	for k in $("$SCRIPTS/kver" --list); do
		if [[ $k == *-rt ]]; then
			tests=$RT_TESTS
			[[ $tests == all ]] && tests=
			# shellcheck disable=SC2086 # a list of test names
			one_kernel "$k" $tests
		elif ((!rt_only)); then
			one_kernel "$k"
		fi
	done
	if ((!rt_only)); then
		echo
		echo "==== dkms"
		if run_logged "$LOGS/dkms.log" "$SCRIPTS/check-dkms.sh"; then
			pass dkms "" "$(tail -n1 "$LOGS/dkms.log")"
		else
			fail dkms "" "FAILED: $(tail -n1 "$LOGS/dkms.log") (build/check-dkms/)"
		fi
	fi
	summary
	((FAIL == 0))
}

main "$@"
