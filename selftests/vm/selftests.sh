#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of `make selftests`: run selftests/vm/run_tests.sh [TEST...] in
# CNF_VM_JOBS VMs at once (default 2), each booted on its own and given a
# share of the tests, and sum up their KTAP (each test's own results, as
# run_tests.sh counts them):
#   selftests: N passed, N failed, N skipped
#   selftests: failed: TEST:NAME...         (when any)
#   selftests: skipped: TEST:NAME...        (when any)
# Tests a VM's plan announced but that never reported (the VM died) and a VM
# failure no test accounts for (kernel splat at the end, panic, timeout)
# count as failures.  Exits non-zero when anything failed.  The
# "# reliability:" lines of the tests go to build/bench/reliability.json
# (scripts/reliability.py).
#
# The tests are shared out longest first, each to the VM with the least
# work so far, by the durations of the last run here (build/vm/durations,
# or $CNF_VM_DURATIONS: check-kernels keeps one file per kernel), else the
# typical ones of selftests/Makefile's TEST_COST (written to
# build/selftests/test-costs.txt), else DEFAULT_COST seconds.  Each VM's console is kept
# in build/selftests.N.log and streamed with a "vmN| " prefix; with one VM,
# in build/selftests.log, unprefixed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LIST=$ROOT/build/selftests/kselftest-list.txt
DURATIONS=${CNF_VM_DURATIONS:-$ROOT/build/vm/durations}
TYPICAL=$ROOT/build/selftests/test-costs.txt
JOBS=${CNF_VM_JOBS:-2}
DEFAULT_COST=30
mkdir -p "$ROOT/build/vm"

# The whole suite needs more than one test's time (selftests/settings).
export CNF_VM_TIMEOUT=${CNF_VM_TIMEOUT:-3600}

die() { echo "selftests: $*" >&2; exit 1; }

[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "CNF_VM_JOBS must be a positive number, not '$JOBS'"

cost_of() {
	local f c=
	for f in "$DURATIONS" "$TYPICAL"; do
		[[ -f $f ]] || continue
		c=$(awk -v t="$1" '$1 == t { print $2; exit }' "$f")
		[[ -n $c ]] && break
	done
	echo "${c:-$DEFAULT_COST}"
}

# GROUP[i]: the tests of VM i, in the order given.
declare -a GROUP
share_out() {
	local -a tests=("$@") load=() order=()
	local t i best
	for ((i = 0; i < JOBS; i++)); do
		load[i]=0
		GROUP[i]=
	done
	mapfile -t order < <(for t in "${tests[@]}"; do echo "$(cost_of "$t") $t"; done |
		sort -k1,1nr -s | cut -d' ' -f2)
	declare -A vm_of
	for t in "${order[@]}"; do
		best=0
		for ((i = 1; i < JOBS; i++)); do
			((load[i] < load[best])) && best=$i
		done
		vm_of[$t]=$best
		load[best]=$((load[best] + $(cost_of "$t")))
	done
	for t in "${tests[@]}"; do
		GROUP[${vm_of[$t]}]+="$t "
	done
}

# run_vm LOG PREFIX TEST...: one VM; its status in LOG.rc.
run_vm() {
	local log=$1 prefix=$2 rc
	shift 2
	set +e
	CNF_VM_LOG=${log%.log}.console "$ROOT/selftests/vm/run" "$ROOT/selftests/vm/run_tests.sh" "$@" 2>&1 |
		tee "$log" | sed -u "s/^/$prefix/"
	rc=${PIPESTATUS[0]}
	set -e
	echo "$rc" >"$log.rc"
}

# Counts of one VM's log: PASS FAIL SKIP, failures for tests that never
# reported and for a VM failure no test accounts for.
tally() {
	local log=$1 vm=$2 plan totals pass fail skip missing vmrc
	vmrc=$(cat "$log.rc")
	# Only run_tests.sh prints results at the start of a line; test
	# output is indented by "# ".
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | head -n1)
	totals=$(grep -aE '^# Totals: pass:[0-9]+ fail:[0-9]+ ' "$log" | tail -n1 || true)
	if [[ -n $totals ]]; then
		# run_tests.sh's own count: immune to a kernel message
		# splitting a line.
		read -r pass fail skip < <(sed -E 's/.*pass:([0-9]+) fail:([0-9]+) .*skip:([0-9]+).*/\1 \2 \3/' <<<"$totals")
	else
		pass=$(grep -caE '^ok [0-9]+ ' "$log" || true)
		skip=$(grep -caE '^ok [0-9]+ .* # SKIP' "$log" || true)
		fail=$(grep -caE '^not ok [0-9]+ ' "$log" || true)
		pass=$((pass - skip))
	fi
	missing=$(( ${plan:-0} - pass - skip - fail ))
	if ((missing > 0)); then
		echo "selftests: $vm: $missing test(s) never reported (the VM stopped early)" >&2
		fail=$((fail + missing))
	fi
	if [[ -z $plan ]]; then
		echo "selftests: $vm: run_tests.sh did not start" >&2
		fail=$((fail + 1))
	elif ((vmrc != 0 && fail == 0)); then
		echo "selftests: $vm: the VM run failed (status $vmrc) though no test did" >&2
		fail=$((fail + 1))
	fi
	echo "$pass $fail $skip"
}

# Keep each test's time for the next run's sharing out: the mean of this
# run's and the one kept before, so that one run on a busy host (every
# test slower, but not all alike) does not unbalance the next.
record_durations() {
	local new
	new=$(mktemp -p "$(dirname "$DURATIONS")")
	{
		sed -nE 's/^# ([^ ]+): exit [0-9]+ after ([0-9]+) s(, .*)?$/new \1 \2/p' "$@"
		if [[ -f $DURATIONS ]]; then
			sed 's/^/old /' "$DURATIONS"
		fi
	} | awk '
		$1 == "new" && !($2 in t) { t[$2] = $3; order[n++] = $2; next }
		$1 == "old" { old[$2] = $3; if (!($2 in t) && !($2 in seen)) { seen[$2]; rest[m++] = $2 } }
		END {
			for (i = 0; i < n; i++) {
				k = order[i]
				print k, (k in old) ? int((t[k] + old[k] + 1) / 2) : t[k]
			}
			for (i = 0; i < m; i++)
				if (!(rest[i] in t))
					print rest[i], old[rest[i]]
		}' >"$new"
	mv "$new" "$DURATIONS"
}

main() {
	local tests=("$@") logs=() pids=() i n log p f s pass=0 fail=0 skip=0 skipped='' failed=''
	if ((${#tests[@]} == 0)); then
		[[ -f $LIST ]] || die "no $LIST (run make selftests-build)"
		mapfile -t tests <"$LIST"
	fi
	n=$JOBS
	((n > ${#tests[@]})) && n=${#tests[@]}
	JOBS=$n
	share_out "${tests[@]}"
	rm -f "$ROOT"/build/selftests.*.log "$ROOT"/build/selftests.*.log.rc
	if ((JOBS == 1)); then
		logs=("$ROOT/build/selftests.log")
		run_vm "${logs[0]}" "" "${tests[@]}"
	else
		for ((i = 0; i < JOBS; i++)); do
			log=$ROOT/build/selftests.$((i + 1)).log
			logs+=("$log")
			echo "selftests: vm$((i + 1)): ${GROUP[i]}"
			# shellcheck disable=SC2086 # a list of test names
			run_vm "$log" "vm$((i + 1))| " ${GROUP[i]} &
			pids+=($!)
		done
		wait "${pids[@]}"
		cat "${logs[@]}" >"$ROOT/build/selftests.log"
	fi
	record_durations "${logs[@]}"

	echo
	for ((i = 0; i < ${#logs[@]}; i++)); do
		read -r p f s < <(tally "${logs[i]}" "vm$((i + 1))")
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		skipped+=$(sed -nE 's/^# cuckoo_nf: skipped: ([^ ]*).*/\1 /p' "${logs[i]}")
		failed+=$(sed -nE 's/^# cuckoo_nf: failed: ([^ ]*).*/\1 /p' "${logs[i]}")
	done
	python3 "$ROOT/scripts/reliability.py" collect "make selftests" "${logs[@]}" ||
		echo "selftests: the reliability figures were not collected" >&2
	grep -ahE '^(not )?ok [0-9]+ selftests: ' "${logs[@]}" | sed 's/^/selftests: /'
	echo "selftests: $pass passed, $fail failed, $skip skipped"
	if [[ -n $failed ]]; then
		echo "selftests: failed: $failed"
	fi
	if ((skip > 0)); then
		echo "selftests: skipped: $skipped"
	fi
	((fail == 0))
}

main "$@"
