#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: install what is missing, build for the VM's kernel, then run
# the host unit tests, lint, the W=1 + sparse build for the other supported
# kernels and the selftests in the VMs, side by side.  Every stage runs
# even when an earlier one failed (except that selftests need a build).
# The selftests on the other kernels, and at full size, are make
# check-kernels'; the unit tests run at their quick size here
# (CNF_TEST_FULL=0: cnf_scaled() in userspace/tests/cnf_test.h), at full
# size in make unit.
# Totals: unit test cases (from the runner's "N passed, N failed" line), lint
# as one test, each other kernel's build as one test (skipped when its
# headers are not installed: scripts/deps.sh --kernels installs them; it is
# not done here because Debian's 6.12 headers pull in their kernel, which a
# developer's boot loader would then boot), selftests from their KTAP.  The
# last line is
# "N passed, N failed", with ", N skipped" when some were skipped, named on
# the line before.  Logs are in build/check/; each stage's seconds and CPU
# seconds, and the load average, in build/check/times too.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOGS=$ROOT/build/check
cd "$ROOT" || exit 1
mkdir -p "$LOGS"
MAKE=${MAKE:-make}

# shellcheck source=tally.sh
source "$ROOT/scripts/tally.sh"

# cpu_seconds VAR: VAR = the CPU seconds (user and system) of this
# shell's children that have ended, from bash's times: what a stage cost
# whatever else the machine was doing, where its seconds on the clock
# depend on the load beside it.
cpu_seconds() {
	local -n _cpu=$1
	local f
	# A builtin's redirection, not a pipe: a pipe's subshell would report
	# its own children, none.
	f=$(mktemp) || return 1
	times >"$f"
	_cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } }
		END { printf "%d", t + 0.5 }' "$f")
	rm -f "$f"
}

# STAGE_TIMES: "NAME S CPU" of every stage that ended, for the summary.
STAGE_TIMES=()

# run_stage NAME COMMAND...: run with output shown and kept in NAME.log.
run_stage() {
	local name=$1 t0=$SECONDS rc cpu
	shift
	echo
	echo "==== $name: $*"
	(
		"$@" 2>&1 | tee "$LOGS/$name.log"
		rc=${PIPESTATUS[0]}
		cpu_seconds cpu
		echo "$cpu" >"$LOGS/$name.cpu"
		exit "$rc"
	)
	rc=$?
	read -r cpu <"$LOGS/$name.cpu" || cpu='?'
	STAGE_TIMES+=("$name $((SECONDS - t0)) $cpu")
	echo "==== $name: exit $rc after $((SECONDS - t0)) s, $cpu s of CPU"
	return "$rc"
}

# The unit tests, lint, the other kernels' builds and the selftests' VMs run
# side by side: each alone leaves much of the two CPUs idle (one CPU each
# for the host stages; the VMs wait on packets and timers).  start_stage runs one in the background
# with its output in NAME.log, finish_stage waits for it, then shows its
# output and returns its status.
declare -A STAGE_PID
start_stage() {
	local name=$1
	shift
	(
		t0=$SECONDS
		"$@" >"$LOGS/$name.log" 2>&1
		rc=$?
		cpu_seconds cpu
		echo "$rc $((SECONDS - t0)) $cpu" >"$LOGS/$name.rc"
	) &
	STAGE_PID[$name]=$!
}

finish_stage() {
	local name=$1 rc=1 t='?' cpu='?'
	wait "${STAGE_PID[$name]}"
	[[ -f $LOGS/$name.rc ]] && read -r rc t cpu <"$LOGS/$name.rc"
	STAGE_TIMES+=("$name $t $cpu")
	echo
	echo "==== $name (run alongside the other stages)"
	cat "$LOGS/$name.log"
	echo "==== $name: exit $rc after $t s, $cpu s of CPU"
	return "$rc"
}

# vms_up: the selftests' VMs have booted (each VM's "CNF_VM: kernel ...
# up after" in the stage's log), or 60 s went by, or the stage ended.
# The VMs take longest; their boot, CPU-bound under TCG, took three times
# as long (5 s to 15 s) with the host stages starting beside it, which
# have time to spare.
vms_up() {
	local n end=$((SECONDS + 60))
	while ((SECONDS < end)) && [[ ! -f $LOGS/selftests.rc ]]; do
		n=$(grep -c 'CNF_VM: kernel .* up after' "$LOGS/selftests.log" 2>/dev/null)
		((${n:-0} >= ${CNF_VM_JOBS:-2})) && return
		sleep 0.2
	done
}

stage_unit() {
	local rc line p f s
	finish_stage unit
	rc=$?
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/unit.log" | tail -n1)
	p=$(sed -nE 's/^([0-9]+) passed.*/\1/p' <<<"$line")
	f=$(sed -nE 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/p' <<<"$line")
	s=$(sed -nE 's/^[0-9]+ passed, [0-9]+ failed, ([0-9]+) skipped$/\1/p' <<<"$line")
	p=${p:-0} f=${f:-0} s=${s:-0}
	if [[ -z $line ]]; then
		f=1
		result unit "FAILED (no result line; exit $rc)"
	elif ((rc != 0 && f == 0)); then
		f=1
		result unit "$p passed, failed with exit $rc"
	else
		result unit "$p passed, $f failed$( ((s)) && echo ", $s skipped")"
	fi
	PASS=$((PASS + p)) FAIL=$((FAIL + f)) SKIP=$((SKIP + s))
	if ((s)); then
		mapfile -t -O "${#SKIPPED[@]}" SKIPPED < <(sed -nE 's/^ok [0-9]+ ([^ ]+) # SKIP.*/unit:\1/p' "$LOGS/unit.log")
	fi
}

stage_lint() {
	if finish_stage lint; then
		pass lint passed
	else
		fail lint FAILED
	fi
}

# The kernels besides the VM's that the module must build for: 7.2, the
# newest Debian kernel, where the sid root is made (deps.sh --kernels),
# so that its API drift shows here and not only in check-kernels; a
# kernel that is not there is reported skipped.
OTHER_KERNELS=(6.12 6.12-rt 7.2)

start_other_builds() {
	local k
	for k in "${OTHER_KERNELS[@]}"; do
		KVER=$k scripts/kver >/dev/null 2>&1 || continue
		start_stage "build-$k" env KVER="$k" scripts/lint.sh --build
	done
}

stage_other_builds() {
	local k
	for k in "${OTHER_KERNELS[@]}"; do
		if [[ -z ${STAGE_PID[build-$k]:-} ]]; then
			SKIP=$((SKIP + 1))
			SKIPPED+=("build-$k")
			result "build-$k" "skipped (no headers: scripts/deps.sh --kernels)"
		elif finish_stage "build-$k"; then
			pass "build-$k" "W=1 + sparse clean ($(KVER=$k scripts/kver))"
		else
			fail "build-$k" FAILED
		fi
	done
}

stage_selftests() {
	finish_stage selftests
	tally_suite "$LOGS/selftests.log" selftests selftests
}

main() {
	if ! run_stage deps "$MAKE" --no-print-directory deps; then
		fail deps FAILED
		summary
		exit 1
	fi
	if run_stage build "$MAKE" --no-print-directory vm-build; then
		result build ok
		BUILT=1
	else
		fail build FAILED
		BUILT=0
	fi
	rm -f "$LOGS"/*.rc
	if ((BUILT)); then
		echo "==== selftests: selftests/vm/selftests.sh, in the background (build/check/selftests.log)"
		start_stage selftests selftests/vm/selftests.sh
		vms_up
	fi
	start_stage unit "$MAKE" --no-print-directory unit CNF_TEST_FULL="${CNF_TEST_FULL:-0}"
	start_stage lint "$MAKE" --no-print-directory lint
	start_other_builds
	stage_unit
	stage_lint
	stage_other_builds
	if ((BUILT)); then
		stage_selftests
	else
		fail selftests "FAILED (not run: the build failed)"
	fi
	stage_times
	summary
	((FAIL == 0))
}

# stage_times: each stage's seconds and CPU seconds, and the machine's
# load, one line (also in build/check/times): the figures to compare runs
# by, the CPU seconds whatever the load.
stage_times() {
	local st name t cpu line=''
	for st in "${STAGE_TIMES[@]}"; do
		read -r name t cpu <<<"$st"
		line+=" $name ${t}s/${cpu}cpu"
	done
	line="stages:$line; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "==== $line"
	echo "$line" >"$LOGS/times"
}

main
