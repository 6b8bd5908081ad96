#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the selftests (inside the VM: see selftests/vm/run) and report in KTAP.
#
#   run_tests.sh [TEST...]     default: every test in kselftest-list.txt
#
# Each test runs from this directory with a timeout (selftests/settings, or
# CNF_TEST_TIMEOUT seconds).  Every test speaks KTAP (the scripts through
# lib.sh, the C tests through kselftest_harness.h); its output is shown as
# KTAP diagnostics ("# ..."), a nested result in it as "# ok N NAME".
# Each test gets one result line here: exit status 0 is a pass, 4 a skip,
# anything else (timeout included) a failure.  The totals count the
# test's own results: each "ok" a pass, "ok ... # SKIP" a skip, "not ok"
# a failure; results its plan announced that never came, and a failing
# exit that no result accounts for, are failures too.  A test that
# reports no result counts once, by its exit status.  Failed and skipped
# results are named ("# cuckoo_nf: failed: TEST:NAME", "# cuckoo_nf:
# skipped: TEST:NAME"), and the last line is kselftest's "# Totals:" line
# over all of them.
set -uo pipefail

# Tests, settings and kselftest-list.txt are in the selftests directory.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
KSFT_SKIP=4

default_timeout() {
	local t
	t=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' settings 2>/dev/null)
	echo "${CNF_TEST_TIMEOUT:-${t:-600}}"
}

# diag FILE: test output becomes KTAP diagnostic lines, shown as they
# come, and kept in FILE.
diag() {
	local line
	exec 3>"$1"
	while IFS= read -r line || [[ -n $line ]]; do
		printf '# %s\n' "$line"
		printf '%s\n' "$line" >&3
	done
	exec 3>&-
}

# count NAME RC: adds the results of test NAME (exit status RC, its output
# in FILE_OUT) to pass, fail and skip (see the top of this file).
count() {
	local name=$1 rc=$2 line plan=-1 p=0 f=0 s=0 missing
	while IFS= read -r line; do
		if [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
		elif [[ $line =~ ^ok\ [0-9]+\ (.*)\ \#\ SKIP ]]; then
			s=$((s + 1))
			echo "# cuckoo_nf: skipped: $name:${BASH_REMATCH[1]}"
		elif [[ $line =~ ^ok\ [0-9]+ ]]; then
			p=$((p + 1))
		elif [[ $line =~ ^not\ ok\ [0-9]+\ ?(.*) ]]; then
			f=$((f + 1))
			echo "# cuckoo_nf: failed: $name:${BASH_REMATCH[1]%% # *}"
		fi
	done <"$FILE_OUT"
	if ((p + f + s == 0)); then
		case $rc in
		0) p=1 ;;
		"$KSFT_SKIP") s=1; echo "# cuckoo_nf: skipped: $name" ;;
		*) f=1; echo "# cuckoo_nf: failed: $name (exit $rc)" ;;
		esac
	else
		missing=$((plan - p - f - s))
		if ((missing > 0)); then
			echo "# cuckoo_nf: failed: $name: $missing result(s) announced, never reported"
			f=$((f + missing))
		fi
		if ((rc != 0 && rc != KSFT_SKIP && f == 0)); then
			echo "# cuckoo_nf: failed: $name (exit $rc, no failed result)"
			f=1
		fi
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
}

# busy_cs VAR: VAR = the centiseconds the VM's CPUs have been busy (not
# idle, not waiting on I/O) since boot, from /proc/stat.
busy_cs() {
	local -n _cs=$1
	local user nice sys irq softirq steal _
	read -r _ user nice sys _ _ irq softirq steal _ </proc/stat
	_cs=$((user + nice + sys + irq + softirq + steal))
}

# Each test's seconds and the seconds the VM's CPUs were busy with it
# (summed over CPUs: more than the seconds when it kept both busy, less
# when it waited on timers): what it costs, where its time goes.
run_one() {
	local n=$1 name=$2 to=$3 rc t0=$SECONDS c0 c1
	busy_cs c0
	echo "# selftests: cuckoo_nf: $name"
	if [[ ! -f ./$name ]]; then
		echo "not ok $n selftests: cuckoo_nf: $name # not found (run make -C selftests)"
		return 1
	fi
	if [[ $name == *.sh ]]; then
		timeout -k 10 "$to" bash "./$name" 2>&1 | diag "$FILE_OUT"
	else
		timeout -k 10 "$to" "./$name" 2>&1 | diag "$FILE_OUT"
	fi
	rc=${PIPESTATUS[0]}
	busy_cs c1
	echo "# $name: exit $rc after $((SECONDS - t0)) s, CPUs busy $(((c1 - c0 + 50) / 100)) s"
	case $rc in
	0) echo "ok $n selftests: cuckoo_nf: $name" ;;
	"$KSFT_SKIP") echo "ok $n selftests: cuckoo_nf: $name # SKIP" ;;
	124 | 137) echo "not ok $n selftests: cuckoo_nf: $name # TIMEOUT ${to} seconds" ;;
	*) echo "not ok $n selftests: cuckoo_nf: $name # exit=$rc" ;;
	esac
	return "$rc"
}

main() {
	local tests=("$@") to n=0 pass=0 fail=0 skip=0 rc
	if ((${#tests[@]} == 0)); then
		if [[ ! -f kselftest-list.txt ]]; then
			echo "run_tests.sh: no kselftest-list.txt (run make -C selftests)" >&2
			exit 1
		fi
		mapfile -t tests < kselftest-list.txt
	fi
	to=$(default_timeout)
	FILE_OUT=$(mktemp) || exit 1
	echo "TAP version 13"
	echo "1..${#tests[@]}"
	echo "# kernel: $(uname -r)"
	for t in "${tests[@]}"; do
		n=$((n + 1))
		: >"$FILE_OUT"
		run_one "$n" "$t" "$to"
		rc=$?
		count "$t" "$rc"
	done
	rm -f "$FILE_OUT"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	((fail == 0))
}

main "$@"
