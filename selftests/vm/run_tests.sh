#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the selftests (inside the VM: see selftests/vm/run) and report in KTAP.
#
#   run_tests.sh [TEST...]     default: every test in kselftest-list.txt
#
# Each test runs from this directory with a timeout (selftests/settings, or
# CNF_TEST_TIMEOUT seconds).  Exit status 0 is a pass, 4 a skip, anything
# else (timeout included) a failure.  The test's output is shown as KTAP
# diagnostics ("# ..."), and the last line is kselftest's "# Totals:" line.
set -uo pipefail

# Tests, settings and kselftest-list.txt are in the selftests directory.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
KSFT_SKIP=4

default_timeout() {
	local t
	t=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' settings 2>/dev/null)
	echo "${CNF_TEST_TIMEOUT:-${t:-600}}"
}

# Test output becomes KTAP diagnostic lines, shown as they come.
diag() {
	local line
	while IFS= read -r line || [[ -n $line ]]; do
		printf '# %s\n' "$line"
	done
}

run_one() {
	local n=$1 name=$2 to=$3 rc t0=$SECONDS
	echo "# selftests: cuckoo_nf: $name"
	if [[ ! -f ./$name ]]; then
		echo "not ok $n selftests: cuckoo_nf: $name # not found (run make -C selftests)"
		return 1
	fi
	if [[ $name == *.sh ]]; then
		timeout -k 10 "$to" bash "./$name" 2>&1 | diag
	else
		timeout -k 10 "$to" "./$name" 2>&1 | diag
	fi
	rc=${PIPESTATUS[0]}
	echo "# $name: exit $rc after $((SECONDS - t0)) s"
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
	echo "TAP version 13"
	echo "1..${#tests[@]}"
	for t in "${tests[@]}"; do
		n=$((n + 1))
		run_one "$n" "$t" "$to"
		rc=$?
		case $rc in
		0) pass=$((pass + 1)) ;;
		"$KSFT_SKIP") skip=$((skip + 1)) ;;
		*) fail=$((fail + 1)) ;;
		esac
	done
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	((fail == 0))
}

main "$@"
