#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Timeouts on the packet path: entries that run out stop dropping, with no
# daemon, within a second of their deadline; a refresh moves the deadline;
# and expiry stays safe beside everything else that changes sets.
#
#   sender ns: 10.0.3.x, fd03::x (the SRCS below)    receiver ns
#      s1 -------------------------------------------- r1  10.0.3.2, fd03::2
#
# Verdicts come from counters only: per source, nft counters of the echo
# requests that arrived at the receiver (netdev ingress, before the
# module's hook) and were delivered (inet input, after it), and the
# module's expiry figures (cuckooctl stats -j).
#
# test_expire      a timed source (IPv4 and IPv6) is dropped, then passes
#                  once its timeout ran out; a permanent one stays dropped;
#                  the kernel counts both expired entries
# (A test VM on a loaded host runs its timers late: the entries' removal is
# waited for GRACE_MS past the second the kernel promises, and the kernel's
# own lateness figures are reported.  ioctl_test's precision test asserts
# the second, beyond what the guest measures of its stalls and of the
# removal's own time.)
#
# CNF_TEST_EXPIRY_UNIT   seconds test_expire and test_refresh count in
#                        (default 1; make check-debug: 4)
# CNF_TEST_EXPIRY_N      entries per storm round (2000; full size 20000)
# CNF_TEST_EXPIRY_ROUNDS storm rounds (4; full size 20)
# test_refresh     `add --exist` with a longer timeout keeps a source
#                  dropped past its first deadline, until the new one
#                  (full size only)
# test_storm       thousands of entries running out while sets are
#                  replaced, swapped, flushed, created and destroyed and
#                  every source pings: afterwards nothing timed is left,
#                  the permanent source is still dropped, the others pass
# test_teardown    timed entries pending in namespaces that are reset or
#                  deleted, while the work may be removing them
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_expire test_refresh test_storm test_teardown"
# At the quick size (make check), the refresh is left to ioctl_test's and
# cuckooctl.sh's: its two deadlines are 15 s of waiting.
FULL_TESTS="test_refresh"
S=cnf-exp-s-$$
R=cnf-exp-r-$$
# Read by lib.sh's counter_tables and ping_argv.
# shellcheck disable=SC2034
DST4=10.0.3.2 DST6=fd03::2
SRCS=(10.0.3.10 fd03::10 10.0.3.20 fd03::20 10.0.3.30 fd03::30)
TIMED=(10.0.3.10 fd03::10)
PERMANENT=(10.0.3.20 fd03::20)
FREE=(10.0.3.30 fd03::30)
TMP=
# shellcheck disable=SC2034 # filled by flood and ping_start, by name
PINGERS=()
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
# The seconds test_expire and test_refresh count in: their timeouts and
# waits are multiples of it (a debug kernel pings a lot slower).
U=${CNF_TEST_EXPIRY_UNIT:-1}
# Entries a storm round replaces a set with, and the rounds.
NSTORM=${CNF_TEST_EXPIRY_N:-$(scaled 2000 20000)}
ROUNDS=${CNF_TEST_EXPIRY_ROUNDS:-$(scaled 4 20)}

setup() {
	tmpdir TMP || return 1
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "${SRCS[@]}" || return 1
	counter_tables "$R" cnf_in:req:r1 cnf_rx:req:input
}

ctl() { nsx "$R" cuckooctl "$@"; }

now_ms() {
	local t
	t=$(date +%s%N)
	echo $((t / 1000000))
}

# sleep_until MS: until now_ms() is MS.
sleep_until() {
	local left=$(($1 - $(now_ms)))
	((left <= 0)) || sleep "$((left / 1000)).$(printf %03d $((left % 1000)))"
}

# expiry_read ARRAY: ARRAY[KEY] for each key of `stats -j`'s "expiry".
expiry_read() {
	local -n _ex=$1
	local j blk
	_ex=()
	ctl stats -j >"$TMP/stats" || return 1
	read -r j <"$TMP/stats"
	[[ $j =~ \"expiry\":\{([^}]*)\} ]] || return 1
	blk=${BASH_REMATCH[1]},
	while [[ $blk =~ ^\"([a-z_]+)\":([0-9.]+), ]]; do
		# shellcheck disable=SC2004 # an associative array: the key is the text
		_ex[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		blk=${blk#"${BASH_REMATCH[0]}"}
	done
	[[ -n ${_ex[entries]:-} ]]
}

declare -A CTR C0
read_counters() { nft_read CTR "$R" "$TMP/nft"; }
snapshot() {
	local k
	settle_counters read_counters CTR
	C0=()
	for k in "${!CTR[@]}"; do C0[$k]=${CTR[$k]}; done
}

# judge WHAT DROPPED PASSED: after pings since snapshot(), each source of
# the space-separated DROPPED arrived and was never delivered, each of
# PASSED arrived and was delivered every time.
judge() {
	local what=$1 s i in rx bad=0
	settle_counters read_counters CTR
	for s in $2 $3; do
		i=${IDX[$s]}
		in=$((${CTR[cnf_in/c$i]:-0} - ${C0[cnf_in/c$i]:-0}))
		rx=$((${CTR[cnf_rx/c$i]:-0} - ${C0[cnf_rx/c$i]:-0}))
		if ((in == 0)); then
			fail "$what: no echo request from $s arrived"
			bad=1
		elif [[ " $2 " == *" $s "* ]] && ((rx != 0)); then
			fail "$what: $s should be dropped: $rx of $in delivered"
			bad=1
		elif [[ " $3 " == *" $s "* ]] && ((rx != in)); then
			fail "$what: $s should pass: $rx of $in delivered"
			bad=1
		fi
	done
	((bad)) || pass "$what: ${2:-nothing} dropped, ${3:-nothing} passed"
	return "$bad"
}

# pings_judged WHAT DROPPED PASSED: two pings from every source, judged.
pings_judged() {
	snapshot
	ping_all "$S" 2 0.2 0.1 "${SRCS[@]}"
	judge "$@"
}

# gone_by WHAT T ADDR...: waits until no ADDR is listed, polling, and
# fails when one still is at now_ms() T.  An entry stops matching within a
# second of its deadline, but a test VM starved by a loaded host runs its
# timers late too: callers give GRACE_MS more; the kernel's own lateness
# figures are reported.
GRACE_MS=5000
gone_by() {
	local what=$1 t=$2 a left
	shift 2
	while :; do
		left=()
		for a; do
			ctl test "$a" >/dev/null 2>&1 && left+=("$a")
		done
		((${#left[@]} == 0)) && return 0
		(($(now_ms) > t)) && break
		sleep 0.05
	done
	fail "$what: ${left[*]} still listed"
	return 1
}

# late WHAT T: true, saying so, when now_ms() is past T: the host was too
# loaded for the timeout the test relies on, and the round is tried again
# with a longer one.
late() {
	(($(now_ms) <= $2)) && return 1
	echo "# $1 took $(($(now_ms) - $2)) ms past the timeout the test relies on: again with longer ones"
	return 0
}

# expire_round T: with a timeout of T units, a timed source is dropped
# from its add on, then passes once it ran out.  Returns 2, having judged
# nothing, when adding and pinging took longer than T (a host too loaded
# for that timeout: the entries may have run out while the pings were on
# their way, so what they saw proves nothing either way).
expire_round() {
	local T=$1 t0 rc=0
	ctl reset >/dev/null || return 1
	t0=$(now_ms)
	ctl add "${TIMED[0]}" timeout $((T * U)) "${TIMED[1]}" timeout $((T * U)) \
		"${PERMANENT[@]}" >/dev/null || return 1
	snapshot
	ping_all "$S" 2 0.2 0.1 "${SRCS[@]}"
	late "adding and pinging" $((t0 + T * 1000 * U)) && return 2
	judge "timeout $((T * U)), at once" \
		"${TIMED[*]} ${PERMANENT[*]}" "${FREE[*]}" || rc=1
	sleep_until $((t0 + T * 1000 * U))
	gone_by "timeout $((T * U))" $((t0 + T * 1000 * U + 1000 + GRACE_MS)) \
		"${TIMED[@]}" || rc=1
	pings_judged "timeout $((T * U)), once gone" "${PERMANENT[*]}" \
		"${TIMED[*]} ${FREE[*]}" || rc=1
	return "$rc"
}

# The timeout starts at 7 units (the add and the pings take about 2 s under
# TCG) and doubles, up to 56, while the host is too loaded for it: the
# verdict is on what the pings saw inside the timeout, never on how fast
# the host was.
test_expire() {
	local T ex rc=2
	for T in 7 14 28 56; do
		expire_round "$T"
		rc=$?
		((rc == 2)) || break
	done
	if ((rc == 2)); then
		fail "adding and pinging never fitted in a timeout of $((T * U)) s"
		return 1
	fi
	declare -A ex
	expiry_read ex || return 1
	if ((ex[expired] != 2 || ex[entries] != 0)); then
		fail "expiry figures: ${ex[*]@K}"
		rc=1
	else
		pass "2 expired (${ex[late]} over a second late, worst ${ex[max_late_ms]} ms), none left"
	fi
	return "$rc"
}

# refresh_round K: `add --exist` with a longer timeout, at timeouts of K
# times test_refresh's (3 and 12 units).  Returns 2, having judged
# nothing, when the host was too slow for them: the refresh came after
# the first deadline, or the pings after the second, so what they saw
# proves nothing either way.
refresh_round() {
	local k=$1 t0 list rc=0 unit first second
	unit=$((k * U))
	first=$((3 * unit)) second=$((12 * unit))
	ctl reset >/dev/null || return 1
	t0=$(now_ms)
	ctl add "${TIMED[0]}" timeout "$first" "${TIMED[1]}" timeout "$first" \
		>/dev/null || return 1
	sleep_until $((t0 + 1000 * unit))
	ctl add --exist "${TIMED[0]}" timeout "$second" "${TIMED[1]}" \
		timeout "$second" >/dev/null || return 1
	late "the refresh" $((t0 + first * 1000)) && return 2
	list=$(ctl list)
	if ! [[ $list =~ ${TIMED[0]}\ timeout\ ([0-9]+) ]] ||
	   ((BASH_REMATCH[1] <= first)); then
		fail "list after the refresh: $list"
		rc=1
	fi
	# Well past the first deadline: still listed, still dropped.
	sleep_until $((t0 + first * 1000 + GRACE_MS))
	if ! ctl test "${TIMED[@]}" >/dev/null; then
		fail "refreshed to $second s: gone $((GRACE_MS / 1000)) s after the first deadline"
		rc=1
	fi
	snapshot
	ping_all "$S" 2 0.2 0.1 "${SRCS[@]}"
	late "pinging" $((t0 + (unit + second) * 1000)) && return 2
	judge "refreshed to $second s, after the first deadline" \
		"${TIMED[*]}" "${FREE[*]}" || rc=1
	sleep_until $((t0 + (unit + second) * 1000))
	gone_by "refreshed to $second s" \
		$((t0 + (unit + second) * 1000 + 1000 + GRACE_MS)) "${TIMED[@]}" ||
		rc=1
	pings_judged "refreshed to $second s, once gone" "" \
		"${TIMED[*]} ${FREE[*]}" || rc=1
	return "$rc"
}

# As test_expire's, the timeouts double, up to 4 times, while the host is
# too loaded for them: the verdict is on what was seen inside them.
test_refresh() {
	local k rc=2
	for k in 1 2 4; do
		refresh_round "$k"
		rc=$?
		((rc == 2)) || break
	done
	if ((rc == 2)); then
		fail "the refresh and the pings never fitted in their timeouts ($((3 * k * U)) and $((12 * k * U)) s)"
		return 1
	fi
	return "$rc"
}

# storm_files: $TMP/storm.A and .B, NSTORM entries each with timeouts of
# 1 or 2 s, the first timed source in A.
storm_files() {
	local f i
	for f in A B; do
		{
			[[ $f == A ]] && echo "${TIMED[0]} timeout 1"
			for ((i = 0; i < NSTORM; i++)); do
				echo "10.$((64 + i / 65536)).$((i / 256 % 256)).$((i % 256)) timeout $((1 + i % 2))"
			done
		} >"$TMP/storm.$f"
	done
}

test_storm() {
	local k f ok=0 rc=0 timed end
	ctl reset >/dev/null &&
		ctl add "${PERMANENT[@]}" >/dev/null &&
		ctl create t1 >/dev/null && ctl create t2 >/dev/null &&
		ctl create w allow >/dev/null || return 1
	storm_files
	for k in "${SRCS[@]}"; do
		flood PINGERS "$S" "$k" 0.05
	done
	defer kill_all PINGERS
	for ((k = 0; k < ROUNDS; k++)); do
		f=A
		((k % 2)) && f=B
		ctl replace -s t1 "$TMP/storm.$f" >/dev/null || break
		ctl swap t1 t2 >/dev/null || break
		ctl create t3 timeout 1 >/dev/null || break
		ctl add -s t3 "${TIMED[1]}" 10.99.0.1 10.99.0.2 timeout 2 \
			>/dev/null || break
		ctl add --exist -s w 10.64.0.7 timeout 1 >/dev/null || break
		if ((k % 2)); then
			ctl flush -s t2 >/dev/null || break
		fi
		sleep 0.4
		ctl destroy t3 >/dev/null || break
		ok=$((k + 1))
	done
	if ((ok != ROUNDS)); then
		fail "storm round $ok of $ROUNDS: a command failed"
		kill_all PINGERS
		return 1
	fi
	pass "$ROUNDS rounds of replace, swap, flush, create, destroy with $NSTORM timed entries each"
	# Everything timed runs out, under the flood still: none left,
	# nothing else lost.  The last deadlines are 2 s away, each kept to
	# within a second, GRACE_MS more on a loaded host.
	declare -A ex
	end=$(($(now_ms) + 3000 + GRACE_MS))
	while :; do
		expiry_read ex || { kill_all PINGERS; return 1; }
		((ex[entries] == 0 || $(now_ms) > end)) && break
		sleep 0.1
	done
	kill_all PINGERS
	timed=${ex[entries]}
	if ((timed != 0)); then
		fail "$timed timed entries left $((1 + GRACE_MS / 1000)) s after the last deadline"
		rc=1
	else
		pass "${ex[expired]} expired (${ex[late]} over a second late, worst ${ex[max_late_ms]} ms), none left"
	fi
	pings_judged "after the storm" "${PERMANENT[*]}" \
		"${TIMED[*]} ${FREE[*]}" || rc=1
	return "$rc"
}

# Namespaces with timed entries pending: one reset while they run out, one
# deleted with them pending, one deleted while they run out.
test_teardown() {
	local n k ns=() rc=0
	for n in 0 1 2; do
		ns+=("cnf-exp-t$n-$$")
	done
	netns_add "${ns[@]}" || return 1
	for n in 0 1 2; do
		for ((k = 0; k < 2000; k++)); do
			echo "10.$((100 + n)).$((k / 256)).$((k % 256)) timeout $((1 + k % 2))"
		done >"$TMP/teardown.$n"
		nsx "${ns[$n]}" cuckooctl load "$TMP/teardown.$n" >/dev/null || rc=1
	done
	((rc == 0)) || { fail "loading timed entries"; return 1; }
	ip netns del "${ns[1]}" || rc=1
	sleep 1.05
	nsx "${ns[0]}" cuckooctl reset >/dev/null || rc=1
	ip netns del "${ns[2]}" || rc=1
	sleep 2
	# The module still answers, here and in the namespace that was reset.
	declare -A ex
	expiry_read ex || rc=1
	nsx "${ns[0]}" cuckooctl stats >/dev/null || rc=1
	verdict "$rc" "reset and deleted namespaces with timed entries pending"
}

require_root
require_module
require_cmds ip nft ping
ktap_header
setup || ktap_bail "cannot set up the namespaces"
run_tests
