#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of `make selftests`: run selftests/run_tests.sh [TEST...] in the
# VM, keep the console log in build/selftests.log, and sum up its KTAP:
#   selftests: N passed, N failed, N skipped
#   selftests: skipped: NAME...            (when any)
# Tests the plan announced but that never reported (the VM died) and a VM
# failure no test accounts for (kernel splat at the end, panic, timeout)
# count as failures.  Exits non-zero when anything failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LOG=$ROOT/build/selftests.log
mkdir -p "$ROOT/build"

# The whole suite needs more than one test's time (selftests/settings).
export CNF_VM_TIMEOUT=${CNF_VM_TIMEOUT:-3600}

set +e
"$ROOT/selftests/vm/run" "$ROOT/selftests/run_tests.sh" "$@" 2>&1 | tee "$LOG"
vmrc=${PIPESTATUS[0]}
set -e

# Only run_tests.sh prints results at the start of a line; test output is
# indented by "# ".
plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$LOG" | head -n1)
totals=$(grep -aE '^# Totals: pass:[0-9]+ fail:[0-9]+ ' "$LOG" | tail -n1 || true)
if [[ -n $totals ]]; then
	# run_tests.sh's own count: immune to a kernel message splitting a line.
	read -r pass fail skip < <(sed -E 's/.*pass:([0-9]+) fail:([0-9]+) .*skip:([0-9]+).*/\1 \2 \3/' <<<"$totals")
else
	pass=$(grep -caE '^ok [0-9]+ ' "$LOG" || true)
	skip=$(grep -caE '^ok [0-9]+ .* # SKIP' "$LOG" || true)
	fail=$(grep -caE '^not ok [0-9]+ ' "$LOG" || true)
	pass=$((pass - skip))
fi
missing=$(( ${plan:-0} - pass - skip - fail ))

echo
if ((missing > 0)); then
	echo "selftests: $missing test(s) never reported (the VM stopped early)"
	fail=$((fail + missing))
fi
if [[ -z $plan ]]; then
	echo "selftests: run_tests.sh did not start"
	fail=$((fail + 1))
elif ((vmrc != 0 && fail == 0)); then
	echo "selftests: the VM run failed (status $vmrc) though no test did"
	fail=$((fail + 1))
fi
echo "selftests: $pass passed, $fail failed, $skip skipped"
if ((skip > 0)); then
	echo "selftests: skipped: $(sed -nE 's/^ok [0-9]+ selftests: cuckoo_nf: (.*) # SKIP.*/\1/p' "$LOG" | tr '\n' ' ')"
fi
((fail == 0))
