# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The counts and the summary of scripts/check.sh and check-kernels.sh
# (sourced): every check passes, fails or is skipped; the last line is
# "N passed, N failed", with ", N skipped" when some were; the lines
# before it name the failed results of the selftests and the skipped ones.

PASS=0 FAIL=0 SKIP=0
RESULTS=()
SKIPPED=()
FAILED=()
START=$SECONDS

# result COLUMN... TEXT: one line of the summary's table.
result() {
	RESULTS+=("$(printf '%-10s ' "${@:1:$#-1}")${*: -1}")
}

# pass|fail COLUMN... TEXT: count one check and record its line.
pass() { PASS=$((PASS + 1)); result "$@"; }
fail() { FAIL=$((FAIL + 1)); result "$@"; }

# tally_suite LOG PREFIX COLUMN... [SUFFIX]: add the counts of the
# selftests' summary line in LOG ("selftests: N passed, N failed, N
# skipped"), its failed and skipped results named PREFIX:TEST[:NAME].  A
# log without one counts as a failure.
tally_suite() {
	local log=$1 prefix=$2 line p f s n
	shift 2
	line=$(grep -E '^selftests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n1)
	if [[ -z $line ]]; then
		fail "$@" "FAILED (no result)"
		return
	fi
	read -r p f s < <(sed -E 's/^selftests: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' <<<"$line")
	PASS=$((PASS + p)) FAIL=$((FAIL + f)) SKIP=$((SKIP + s))
	result "$@" "$p passed, $f failed, $s skipped"
	for n in $(sed -n 's/^selftests: skipped: //p' "$log" | tail -n1); do
		SKIPPED+=("$prefix:$n")
	done
	for n in $(sed -n 's/^selftests: failed: //p' "$log" | tail -n1); do
		FAILED+=("$prefix:$n")
	done
}

summary() {
	local r
	echo
	echo "==== summary ($((SECONDS - START)) s)"
	for r in "${RESULTS[@]}"; do
		echo "$r"
	done
	if ((${#FAILED[@]})); then
		echo "failed: ${FAILED[*]}"
	fi
	if ((SKIP > 0)); then
		echo "skipped: ${SKIPPED[*]}"
		echo "$PASS passed, $FAIL failed, $SKIP skipped"
	else
		echo "$PASS passed, $FAIL failed"
	fi
}

# tally_step NAME COMMAND...: pass or fail NAME by COMMAND's status, its
# output in $OUT/NAME.log (its last lines shown when it fails).  Returns
# 0 when it passed, 1 when not.
tally_step() {
	local name=$1 log
	log=$OUT/$(tr -c 'a-z0-9\n' - <<<"$1").log
	shift
	if "$@" >"$log" 2>&1; then
		pass "$name" ok
		return 0
	fi
	sed 's/^/  | /' "$log" | tail -n 30
	fail "$name" "FAILED (${log#"$ROOT"/})"
	return 1
}
