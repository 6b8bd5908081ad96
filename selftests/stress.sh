#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress: the filter changed hard while traffic flows through it.
#
# Both tests share one topology and one verdict.  A sender namespace with
# several source addresses talks over veth to a receiver namespace whose
# filter lists the "stable blocked" sources, before the test and never
# touched again, and never the "stable allowed" ones (some of them one bit
# away from a blocked one).  Every stable source pings the receiver, one
# ping each for the whole test, while the test changes the filter; then
# the pings are killed and everything is asserted with counters, never
# timing (the counters, not ping's own tally, decide: a reply can be on its
# way when ping is killed):
#   - nft counters per source: sent (sender output), arrived (receiver
#     netdev ingress, before the module's PRE_ROUTING hook), delivered
#     (receiver inet input, after it) and replies back (sender input):
#     blocked sources 0 delivered, allowed ones all delivered and every
#     delivered echo request answered;
#   - cuckooctl stats: dropped == matched == what arrived from blocked
#     sources, per family; checked == all IPv4 that arrived.
#
# test_growth: small batches of OTHER addresses (some in the same /24 and
#   /64 as the stable ones) are added, tested and deleted in a loop, and
#   bulk loads of BIG addresses per family force the tables to grow, then
#   are deleted (the grow counters go up); at the end the set is exactly
#   the stable blocked sources.  CNF_TEST_STRESS_* set the amount of work.
# test_storm: WRITERS processes at once on the receiver's filter:
#   cuckooctl add/del/test of single addresses and small lists from one
#   pool all writers share (so they collide: "already present"/"not
#   present" are expected, any other failure is not), batch loads and del
#   --file of big files (growth), ITERS iterations each; meanwhile a
#   flusher loads and flushes the filter of another namespace and creates
#   and deletes namespaces whose filters hold entries, the pings are
#   pinned round-robin on the CPUs, and rmmod cuckoo_nf is tried
#   throughout: it must fail (an fd is held open) and never crash.  At the
#   end, after every writer ended by deleting the pool and re-adding its
#   final set, the dump equals the model (stable blocked + every writer's
#   final set) and stats count what the dump lists.
#   CNF_TEST_STORM_WRITERS (default 4), CNF_TEST_STORM_ITERS (default 6,
#   16 with CNF_TEST_FULL, 40 in make check-debug), CNF_TEST_STORM_BIG
#   (addresses per big load, default 10000).
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_growth test_storm"
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
INTERVAL=${CNF_TEST_STRESS_INTERVAL:-0.02}	# ping -i, test_growth
# Bulk load size per family (x round): 10,000 at the quick size, still
# grows the tables several times over; 100,000 in make check-kernels.
BIG=${CNF_TEST_STRESS_BIG:-$(scaled 10000 100000)}
LOADS=${CNF_TEST_STRESS_LOADS:-2}		# bulk load/delete rounds
SMALL=${CNF_TEST_STRESS_SMALL:-15}		# small add/test/del rounds, at least
WRITERS=${CNF_TEST_STORM_WRITERS:-4}
ITERS=${CNF_TEST_STORM_ITERS:-$(scaled 6 16)}
STORM_BIG=${CNF_TEST_STORM_BIG:-10000}

# Read by lib.sh's counter_tables and ping_argv.
# shellcheck disable=SC2034
DST4=10.0.1.2 DST6=fd00:1::2
# Stable sources.  Allowed ones include neighbours of blocked ones.
BLOCKED4=(10.0.1.11 10.0.1.13 10.0.1.130)
ALLOWED4=(10.0.1.10 10.0.1.12 10.0.1.131)
BLOCKED6=(fd00:1::11 fd00:1::13 fd00:1::8000:11)
ALLOWED6=(fd00:1::10 fd00:1::12 fd00:1::8000:10)
BLOCKED=("${BLOCKED4[@]}" "${BLOCKED6[@]}")
ALLOWED=("${ALLOWED4[@]}" "${ALLOWED6[@]}")
SRCS=("${BLOCKED[@]}" "${ALLOWED[@]}")
NS_S=
NS_R=
TMP=
PINGERS=()	# the stable sources' pings
PIDS=()		# other background jobs
HELD_FD=

rctl() { nsx "$NS_R" cuckooctl "$@"; }

# ---- the shared part: topology, stable sources, verdicts ----

# stable_up NAME: namespaces cnf-NAME-s/-r, the pair, its static
# neighbours (no ARP/ND, so the only IP packets from the stable sources
# are the pings), per source the counters (cN, N = IDX[source]) of: sent
# (sender output) and replies received (sender input); arrived (receiver
# ingress, before the module's PRE_ROUTING hook) and delivered (receiver
# input); the stable blocked sources listed.
stable_up() {
	NS_S=cnf-$1-s-$$ NS_R=cnf-$1-r-$$
	veth_pair 0 "$NS_S" "$NS_R" "$DST4" "$DST6" 10.0.1.1 fd00:1::1 "${SRCS[@]}" &&
		counter_tables "$NS_S" cnf_tx:req:output cnf_back:reply:input &&
		counter_tables "$NS_R" cnf_in:req:r0 cnf_rx:req:input || {
		fail "setup: namespaces, veth pair and counters"
		return 1
	}
	if rctl add "${BLOCKED[@]}" >/dev/null; then
		pass "stable blocked sources added"
	else
		fail "cannot add the stable blocked sources"
		return 1
	fi
}

# stable_pings INTERVAL [PIN]: one ping per stable source for the whole
# test, every INTERVAL s; pinned round-robin on the CPUs when PIN is 1.
# One process each, not rounds of pings: under TCG a process start costs
# tens of milliseconds.
stable_pings() {
	local i ncpu=1 cpu=
	[[ ${2:-0} == 1 ]] && ncpu=$(nproc)
	for i in "${!SRCS[@]}"; do
		[[ ${2:-0} == 1 ]] && cpu=$((i % ncpu))
		flood PINGERS "$NS_S" "${SRCS[$i]}" "$1" $cpu
	done
}

# snap: SNAP_S and SNAP_R, the sender's and the receiver's named counters
# (TABLE/cN).
declare -A SNAP_S SNAP_R
snap() {
	nft_read SNAP_S "$NS_S" "$TMP/nft"
	nft_read SNAP_R "$NS_R" "$TMP/nft"
}

# stable_verdicts: the pings are stopped, then the counters and stats
# judged (see the top of this file).
stable_verdicts() {
	local s i kind sent arrived delivered back fam d m c all4=0
	local -A drop_want=([4]=0 [6]=0) st
	local blocked=" ${BLOCKED[*]} "
	kill_all PINGERS
	settle_counters snap SNAP_S SNAP_R
	for s in "${SRCS[@]}"; do
		i=${IDX[$s]}
		kind=allowed
		[[ $blocked == *" $s "* ]] && kind=blocked
		sent=${SNAP_S[cnf_tx/c$i]:-0}
		back=${SNAP_S[cnf_back/c$i]:-0}
		arrived=${SNAP_R[cnf_in/c$i]:-0}
		delivered=${SNAP_R[cnf_rx/c$i]:-0}
		note "$kind $s: sent $sent, arrived $arrived, delivered $delivered, replies back $back"
		if ((arrived == 0)); then
			fail "$kind $s: no packet arrived at the receiver"
			continue
		fi
		((sent == arrived)) ||
			note "warning: $kind $s: $((sent - arrived)) packets lost on the veth, before the filter"
		if is_v6 "$s"; then
			[[ $kind == blocked ]] && drop_want[6]=$((drop_want[6] + arrived))
		else
			[[ $kind == blocked ]] && drop_want[4]=$((drop_want[4] + arrived))
			all4=$((all4 + arrived))
		fi
		if [[ $kind == blocked ]]; then
			((delivered == 0))
			verdict $? "blocked $s: $delivered of $arrived packets got through"
		else
			((delivered == arrived))
			verdict $? "allowed $s: $delivered of $arrived packets got through"
			((back == delivered))
			verdict $? "allowed $s: $back replies back for $delivered echo requests delivered"
		fi
	done

	if ! ns_stats st "$NS_R" "$TMP/stats"; then
		fail "stats: cannot read them: ${st[json]:-}"
		return
	fi
	note "stats: ${st[json]}"
	for fam in 4 6; do
		d=${st[ipv$fam.dropped]}
		m=${st[ipv$fam.matched]}
		c=${st[ipv$fam.checked]}
		((d == drop_want[$fam] && m == d))
		verdict $? "stats IPv$fam: dropped $d, matched $m, packets from blocked sources ${drop_want[$fam]}"
		if [[ $fam == 4 ]]; then
			((c == all4))
			verdict $? "stats IPv4: checked $c, IPv4 packets that arrived $all4"
		fi
	done
}

stable_down() {
	kill_all PINGERS
	kill_all PIDS
	ip netns del "$NS_S"
	ip netns del "$NS_R"
}

# ---- test_growth ----

# Small batches of other addresses, some next to the stable ones: add all,
# test all present, delete all, one cuckooctl (one ioctl per address) each.
# At least SMALL rounds, and more while the bulk loads go on.  Failures go
# to $TMP/small.fail, the number of rounds to $TMP/small.rounds.
small_churn() {
	local i j a=() rc
	for ((i = 0; ; i++)); do
		((i >= SMALL)) && [[ -e $TMP/bulk.done ]] && break
		a=(10.0.1.200 fd00:1::200)
		for ((j = 0; j < 16; j++)); do
			a+=("10.0.1.$((140 + j))" "198.18.$((i % 256)).$j")
			a+=("fd00:1::4:$((i % 16)):$j" "2001:db8:$i::$j")
		done
		rctl add "${a[@]}" >/dev/null 2>"$TMP/small.err"
		rc=$?
		((rc == 0)) || echo "round $i: add exit $rc: $(cat "$TMP/small.err")" >>"$TMP/small.fail"
		rctl test "${a[@]}" >/dev/null 2>&1
		rc=$?
		((rc == 0)) || echo "round $i: test exit $rc" >>"$TMP/small.fail"
		rctl del "${a[@]}" >/dev/null 2>"$TMP/small.err"
		rc=$?
		((rc == 0)) || echo "round $i: del exit $rc: $(cat "$TMP/small.err")" >>"$TMP/small.fail"
	done
	echo "$i" >"$TMP/small.rounds"
}

# Bulk loads that force growth, then their deletion, LOADS times with a
# bigger file each time (the tables only shrink on flush).
bulk_churn() {
	local k n fam key before after entries out rc
	local -A st
	for ((k = 1; k <= LOADS; k++)); do
		n=$((BIG * k))
		# Outside the ranges anything else here uses.
		addr_list "$TMP/big4.$n" 172.16.0.0 "$n"
		addr_list "$TMP/big6.$n" fd00:200:: "$n"
		for fam in 4 6; do
			key=ipv$fam
			before=-1
			ns_stats st "$NS_R" "$TMP/stats" && before=${st[$key.grows]}
			rctl load "$TMP/big$fam.$n" >"$TMP/load.out" 2>&1
			rc=$?
			out=$(<"$TMP/load.out")
			((rc == 0)) && [[ $out == *"$n added, 0 already present"* ]]
			verdict $? "bulk load $k: $n IPv$fam addresses added under traffic: ${out##*$'\r'}"
			after=-1 entries=-1
			if ns_stats st "$NS_R" "$TMP/stats"; then
				after=${st[$key.grows]} entries=${st[$key.entries]}
			fi
			((after > before && before >= 0))
			verdict $? "bulk load $k: IPv$fam table grew (grows $before -> $after, capacity ${st[$key.capacity]:-?})"
			((entries >= n + 3))
			verdict $? "bulk load $k: IPv$fam entries $entries >= $((n + 3))"
		done
		for fam in 4 6; do
			out=$(rctl del --file "$TMP/big$fam.$n" 2>&1) &&
				[[ $out == *"$n deleted, 0 not present"* ]]
			verdict $? "bulk delete $k: $n IPv$fam addresses deleted under traffic: ${out##*$'\r'}"
		done
		rm -f "$TMP/big4.$n" "$TMP/big6.$n"
	done
}

# One cuckooctl test -s default for every stable source: "ADDR: present (PREFIX)"
# ("ADDR: present" from a module without CNF_IOC_MATCH) or "ADDR: absent"
# each; the set is exactly the stable blocked sources.
growth_state() {
	local s line rounds='?'
	local -A res=() st
	rctl test -s default "${BLOCKED[@]}" "${ALLOWED[@]}" >"$TMP/test.out" 2>&1
	while read -r line; do
		[[ $line =~ ^([0-9a-f.:]+):\ (present|absent)(\ \([0-9a-f.:/]+\))?$ ]] &&
			res[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done <"$TMP/test.out"
	for s in "${BLOCKED[@]}"; do
		[[ ${res[$s]:-} == present ]]
		verdict $? "set: $s still present (test says ${res[$s]:-nothing})"
	done
	for s in "${ALLOWED[@]}"; do
		[[ ${res[$s]:-} == absent ]]
		verdict $? "set: $s absent (test says ${res[$s]:-nothing})"
	done
	if ns_stats st "$NS_R" "$TMP/stats" &&
		[[ "${st[ipv4.entries]} ${st[ipv6.entries]}" == "3 3" ]]; then
		pass "set: 3 IPv4 and 3 IPv6 entries left, the stable blocked ones"
	else
		fail "set: ${st[ipv4.entries]:-?} IPv4 and ${st[ipv6.entries]:-?} IPv6 entries left, want 3 and 3"
		rctl list | head -n 20 | sed 's/^/# left: /'
	fi
	if [[ -s $TMP/small.fail ]]; then
		fail "small add/test/del churn: $(wc -l <"$TMP/small.fail") failures"
		head -n 10 "$TMP/small.fail" | sed 's/^/# /'
	else
		[[ -f $TMP/small.rounds ]] && read -r rounds <"$TMP/small.rounds"
		pass "small add/test/del churn: $rounds rounds, no failure"
	fi
}

test_growth() {
	rm -f "$TMP"/small.* "$TMP/bulk.done"
	stable_up growth || return
	stable_pings "$INTERVAL"
	small_churn &
	PIDS+=($!)
	bulk_churn
	touch "$TMP/bulk.done"
	wait "${PIDS[@]}"
	PIDS=()
	stable_verdicts
	growth_state
	stable_down
}

# ---- test_storm ----

# The pool all writers share: next to the stable sources, never one of
# them.  pool_addr VAR I: VAR = the pool's address I (odd I IPv4, even
# IPv6).
pool_addr() {
	local -n _a=$1
	local i=$2
	if ((i % 2)); then
		_a=10.0.$((2 + (i >> 8) % 4)).$((i & 255))
	else
		printf -v _a 'fd00:1::1:%x' $((i % 1024))
	fi
}

# pool_list I...: the pool's addresses I..., one per line.
pool_list() {
	local i a
	for i in "$@"; do
		pool_addr a "$i"
		echo "$a"
	done
}

writer() {
	local w=$1 it a b i ops=0 rc
	RANDOM=$((w * 7919 + 1))
	for ((it = 0; it < ITERS; it++)); do
		pool_addr a $RANDOM
		pool_addr b $RANDOM
		case $((RANDOM % 8)) in
		0 | 1) rctl add "$a" "$b" ;;
		2 | 3) rctl del "$a" "$b" ;;
		4) rctl test "$a" ;;
		5) # a batch of the shared pool
			for ((i = 0; i < 64; i++)); do pool_list $RANDOM; done >"$TMP/w$w.batch"
			rctl load "$TMP/w$w.batch" ;;
		6) rctl del --file "$TMP/w$w.batch" ;;
		7) # growth: a big private file, loaded then deleted
			rctl load "$TMP/big.$w" && rctl del --file "$TMP/big.$w" ;;
		esac >/dev/null 2>>"$TMP/w$w.err"
		rc=$?
		# 0, or 1 for a collision with another writer; never anything else.
		((rc <= 1)) || echo "writer $w iteration $it: exit $rc" >>"$TMP/w$w.bad"
		ops=$((ops + 1))
	done
	echo $ops >"$TMP/w$w.ops"
}

# Final sets: writer w keeps the pool addresses w, w+WRITERS, ... < 200.
final_set() {
	local w=$1 i
	for ((i = w; i < 200; i += WRITERS)); do pool_list $i; done
}

flusher() {
	local n=0 k ns
	"$ADDRGEN" 198.18.0.0 3000 >"$TMP/flush.list"
	while [[ ! -e $TMP/stop ]]; do
		nsx "$NS_F" cuckooctl load "$TMP/flush.list" >/dev/null 2>>"$TMP/flusher.err" ||
			echo "load $n" >>"$TMP/flusher.bad"
		nsx "$NS_F" cuckooctl flush >/dev/null 2>>"$TMP/flusher.err" ||
			echo "flush $n" >>"$TMP/flusher.bad"
		# A namespace born and torn down with a filter holding entries.
		k=$((n % 3))
		ns=cnf-storm-x-$$-$k
		ip netns add "$ns" 2>/dev/null
		nsx "$ns" cuckooctl add 192.0.2.$((n % 250 + 1)) 2001:db8::$n >/dev/null 2>&1
		ip netns del "$ns"
		n=$((n + 1))
	done
	echo $n >"$TMP/flusher.rounds"
}

unloader() {
	local n=0 out
	while [[ ! -e $TMP/stop ]]; do
		out=$(rmmod cuckoo_nf 2>&1) && { echo "rmmod succeeded during the storm" >>"$TMP/rmmod.bad"; return; }
		[[ $out == *"in use"* || $out == *"Resource temporarily unavailable"* ]] ||
			echo "rmmod: unexpected: $out" >>"$TMP/rmmod.bad"
		n=$((n + 1))
		sleep 0.2
	done
	echo $n >"$TMP/rmmod.tries"
}

close_held_fd() {
	[[ -n $HELD_FD ]] && exec {HELD_FD}<&-
	HELD_FD=
}

test_storm() {
	local w n pid t0 ops=0 dur bad=0 wpids=() k
	local -A st
	if ! mod_loaded; then
		skip_test "cuckoo_nf is not a loaded module (rmmod is part of the storm)"
		return
	fi
	NS_F=cnf-storm-f-$$
	rm -f "$TMP"/w* "$TMP"/final.* "$TMP"/flusher.* "$TMP"/rmmod.* "$TMP/stop"
	stable_up storm || return
	netns_add "$NS_F" || { fail "setup: namespace $NS_F"; return; }
	for k in 0 1 2; do
		defer ip netns del "cnf-storm-x-$$-$k"
	done
	for ((w = 0; w < WRITERS; w++)); do
		{
			"$ADDRGEN" 172.$((16 + w)).0.0 $((STORM_BIG / 2))
			"$ADDRGEN" fd09:$((100 + w))::0 $((STORM_BIG - STORM_BIG / 2))
		} >"$TMP/big.$w"
	done
	# Held open for the whole storm: rmmod must fail with "in use".
	exec {HELD_FD}</dev/cuckoo_nf || { fail "open /dev/cuckoo_nf"; return; }
	defer close_held_fd

	note "storm: $WRITERS writers x $ITERS iterations, big loads of $STORM_BIG, $(nproc) CPUs, ${#SRCS[@]} pingers"
	t0=$SECONDS
	# 12 pings every 15 ms: the packet rate of 8 every 10 ms, which the
	# storm was sized with.
	stable_pings 0.015 1
	flusher &
	PIDS+=($!)
	unloader &
	PIDS+=($!)
	for ((w = 0; w < WRITERS; w++)); do
		writer $w &
		wpids+=($!)
	done
	wait "${wpids[@]}"
	# Each writer ends with its final set: the pool removed, its set added.
	# The whole pool: pool_addr of every I, odd ones IPv4, even ones IPv6.
	printf '%s\n' 10.0.{2..5}.{1..255..2} >"$TMP/pool"
	printf 'fd00:1::1:%x\n' {0..1022..2} >>"$TMP/pool"
	rctl del --file "$TMP/pool" >/dev/null 2>"$TMP/final.err" ||
		fail "removing the pool: $(cat "$TMP/final.err")"
	for ((w = 0; w < WRITERS; w++)); do
		final_set $w >"$TMP/final.$w"
		rctl load "$TMP/final.$w" >/dev/null 2>>"$TMP/final.err" &
		wpids+=($!)
	done
	for pid in "${wpids[@]:WRITERS}"; do
		wait "$pid" || bad=1
	done
	((bad == 0)) || fail "re-adding the final sets: $(cat "$TMP/final.err")"
	touch "$TMP/stop"
	wait "${PIDS[@]}"
	PIDS=()
	close_held_fd
	dur=$((SECONDS - t0))

	for ((w = 0; w < WRITERS; w++)); do
		read -r n 2>/dev/null <"$TMP/w$w.ops" || n=0
		ops=$((ops + n))
		[[ -s $TMP/w$w.bad ]] &&
			fail "writer $w: $(head -n3 "$TMP/w$w.bad"): $(grep -v 'already present\|not present' "$TMP/w$w.err" | head -n3)"
	done
	[[ -s $TMP/flusher.bad ]] && fail "flusher: $(head -n3 "$TMP/flusher.bad"): $(head -n3 "$TMP/flusher.err")"
	if [[ -s $TMP/rmmod.bad ]]; then
		fail "$(head -n3 "$TMP/rmmod.bad")"
	else
		pass "rmmod refused $(cat "$TMP/rmmod.tries") times while in use"
	fi
	mod_loaded || fail "the module is gone"

	stable_verdicts

	# The set equals the model.
	{ printf '%s\n' "${BLOCKED[@]}"; cat "$TMP"/final.*; } | sort -u >"$TMP/model"
	rctl list | sort >"$TMP/set"
	if cmp -s "$TMP/model" "$TMP/set"; then
		pass "the set equals the model ($(wc -l <"$TMP/set") entries)"
	else
		fail "the set differs from the model: $(diff "$TMP/model" "$TMP/set" | head -n 10 | tr '\n' ' ')"
	fi
	ns_stats st "$NS_R" "$TMP/stats"
	n=$((${st[ipv4.entries]:-0} + ${st[ipv6.entries]:-0}))
	((n == $(wc -l <"$TMP/set")))
	verdict $? "stats count $n entries, the dump $(wc -l <"$TMP/set")"
	note "storm figures: ${dur}s, $ops writer operations, $(cat "$TMP/flusher.rounds") flush/netns rounds, $(cat "$TMP/rmmod.tries" 2>/dev/null) rmmod attempts"
	stable_down
	ip netns del "$NS_F"
}

require_root
require_module
require_cmds ip nft ping rmmod
require_file "$ADDRGEN" "make -C selftests"
modprobe -q veth 2>/dev/null
modprobe -q nf_tables 2>/dev/null
tmpdir TMP || ktap_bail "mktemp"
defer kill_all PIDS
defer kill_all PINGERS
defer touch "$TMP/stop"
run_tests
