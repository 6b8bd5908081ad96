# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The counts and the summary of every script that ends "N passed, N
# failed" (sourced: scripts/check.sh, check-kernels.sh, check-busy.sh,
# check-deb.sh, debug-kernel.sh, userspace/tests/run_unit.sh): every
# check passes, fails or is skipped; the last line is "N passed, N
# failed", with ", N skipped" when some were; the lines before it name
# the failed results of the selftests and the skipped ones.

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

# tally_totals TOTALS STATUS COLUMN...: add the counts of a kselftest
# "# Totals:" line's rest (TOTALS: "pass:N fail:N xfail:N xpass:N skip:N
# error:N"; errors count as failures) of a run that exited STATUS.  No
# totals, or a failed exit without a failure counted, is one failure.
tally_totals() {
	local totals=$1 rc=$2 p=0 f=0 e=0 s=0 why=""
	shift 2
	[[ " $totals" =~ \ pass:([0-9]+) ]] && p=${BASH_REMATCH[1]}
	[[ " $totals" =~ \ fail:([0-9]+) ]] && f=${BASH_REMATCH[1]}
	[[ " $totals" =~ \ error:([0-9]+) ]] && e=${BASH_REMATCH[1]}
	[[ " $totals" =~ \ skip:([0-9]+) ]] && s=${BASH_REMATCH[1]}
	f=$((f + e))
	if [[ -z $totals ]]; then
		f=$((f + 1)) why=" (no Totals line, exit status $rc)"
	elif ((rc != 0 && f == 0)); then
		f=1 why=" (exit status $rc without a reported failure)"
	fi
	PASS=$((PASS + p)) FAIL=$((FAIL + f)) SKIP=$((SKIP + s))
	result "$@" "$p passed, $f failed$( ((s)) && echo ", $s skipped")$why"
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
		if ((${#SKIPPED[@]})); then
			echo "skipped: ${SKIPPED[*]}"
		fi
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
