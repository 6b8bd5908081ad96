#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Concurrency storm: several writer processes at once on one namespace's
# filter, while traffic flows through it from every CPU, plus flush and
# namespace churn elsewhere and module unload attempts throughout.
#
#   receiver netns R (its filter is the one under test), sender netns S,
#   joined by veth.  The stable blocked sources are listed in R before the
#   storm and never touched; the stable allowed ones are never listed.
#   - WRITERS processes: cuckooctl add/del/test of single addresses and small
#     lists from one pool all writers share (so they collide: "already
#     present"/"not present" are expected), batch loads and del --file of
#     big files (growth), each writer ITERS iterations;
#   - a flusher: loads and flushes the filter of another netns F, and
#     creates and deletes namespaces whose filters hold entries;
#   - a pinger per stable source, pinned round-robin on the CPUs;
#   - rmmod cuckoo_nf attempts: must fail (the module is in use: an fd is
#     held open) and never crash.
# Checked with counters, never timing: per stable source an nft netdev
# ingress counter (arrived, before the module's PRE_ROUTING hook) and an
# inet prerouting counter after it (got through): blocked sources 0 through,
# allowed ones all through; the module's dropped counter equals the blocked
# arrivals.  At the end, after every writer ended by deleting the pool and
# re-adding its final set, the dump equals the model: stable blocked +
# every writer's final set.
#
# CNF_TEST_STORM_WRITERS (default 4), CNF_TEST_STORM_ITERS (default 16, 40 in
# make check-debug),
# CNF_TEST_STORM_BIG (addresses per big load, default 10000).

ret=0
export LC_ALL=C

WRITERS=${CNF_TEST_STORM_WRITERS:-4}
ITERS=${CNF_TEST_STORM_ITERS:-16}
BIG=${CNF_TEST_STORM_BIG:-10000}
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
NS_S=cnf-storm-s-$$
NS_R=cnf-storm-r-$$
NS_F=cnf-storm-f-$$
# Read by lib.sh's counter_tables and ping_argv.
# shellcheck disable=SC2034
DST4=10.9.0.2 DST6=fd09::2
BLOCKED=(10.9.0.11 10.9.0.13 fd09::11 fd09::13)
ALLOWED=(10.9.0.10 10.9.0.12 fd09::10 fd09::12)
SRCS=("${BLOCKED[@]}" "${ALLOWED[@]}")
TMP=
PIDS=()
HELD_FD=

cleanup() {
	local p
	[[ -n $TMP ]] && touch "$TMP/stop"
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[[ -n $HELD_FD ]] && exec {HELD_FD}<&-
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_R" 2>/dev/null
	ip netns del "$NS_F" 2>/dev/null
	ip netns list 2>/dev/null | grep -o "^cnf-storm-x-$$-[0-9]*" | xargs -r -n1 ip netns del 2>/dev/null
	[[ -n $TMP ]] && rm -rf "$TMP"
}
trap cleanup EXIT

rctl() { nsx "$NS_R" cuckooctl "$@"; }
fctl() { nsx "$NS_F" cuckooctl "$@"; }
# counters: CTR[TABLE/cN]=PACKETS, the receiver's counters of source N.
declare -A CTR
counters() { nft_read CTR "$NS_R" "$TMP/nft"; }

# Static neighbours: the only packets from stable sources are pings.  Per
# source (cN, N its index in SRCS), the echo requests that arrived (netdev
# ingress, before the module's PRE_ROUTING hook) and got through (inet
# prerouting).
setup() {
	veth_pair 0 "$NS_S" "$NS_R" "$DST4" "$DST6" 10.9.0.1 fd09::1 "${SRCS[@]}" || {
		(($? == 2)) && skip "cannot create network namespaces and a veth pair"
		return 1
	}
	ip netns add "$NS_F" && ip -n "$NS_F" link set lo up &&
		counter_tables "$NS_R" storm_in:req:r0 storm_thru:req:prerouting
}

# ---- the storm's parties ----

# The pool all writers share: next to the stable sources, never one of them.
# pool_addr I: ADDR, the pool's address I (in a variable: $(...) forks).
pool_addr() {
	local i=$1
	if ((i % 2)); then
		ADDR=10.9.$((1 + (i >> 8) % 4)).$((i & 255))
	else
		printf -v ADDR 'fd09::1:%x' $((i % 1024))
	fi
}

# pool_list I...: the pool's addresses I..., one per line.
pool_list() {
	local i
	for i in "$@"; do
		pool_addr "$i"
		echo "$ADDR"
	done
}

writer() {
	local w=$1 it a b i n ops=0 rc
	RANDOM=$((w * 7919 + 1))
	for ((it = 0; it < ITERS; it++)); do
		pool_addr $RANDOM
		a=$ADDR
		pool_addr $RANDOM
		b=$ADDR
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
		fctl load "$TMP/flush.list" >/dev/null 2>>"$TMP/flusher.err" || echo "load $n" >>"$TMP/flusher.bad"
		fctl flush >/dev/null 2>>"$TMP/flusher.err" || echo "flush $n" >>"$TMP/flusher.bad"
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

# pinger SRC CPU: one ping for the whole storm, pinned on CPU, killed at
# the end (its own output is not needed: the counters decide).  One
# process, not a ping round every half second: under TCG a process start
# costs tens of milliseconds, and eight pingers' restarts took most of
# the VM's CPU.  Started directly (not as a function in the background),
# so that its pid in PINGERS is ping's.
PINGERS=()
pinger() {
	flood "$NS_S" "$1" 0.01 "$2"
	PINGERS+=("$FLOOD_PID")
	PIDS+=("$FLOOD_PID")
}

main() {
	local i w s n p ncpu t0 ops=0 arrived thru drop4=0 drop6=0
	[[ $(id -u) == 0 ]] || skip "must run as root"
	[[ -c /dev/cuckoo_nf ]] || skip "/dev/cuckoo_nf missing"
	mod_loaded || skip "cuckoo_nf is not a loaded module"
	require_cmds cuckooctl ip nft ping awk rmmod
	[[ -x $ADDRGEN ]] || skip "$ADDRGEN missing (make -C selftests)"
	TMP=$(mktemp -d)
	setup || { log_fail "setup"; return 1; }
	rctl add "${BLOCKED[@]}" >/dev/null || { log_fail "adding the stable blocked sources"; return 1; }
	for ((w = 0; w < WRITERS; w++)); do
		{
			"$ADDRGEN" 172.$((16 + w)).0.0 $((BIG / 2))
			"$ADDRGEN" fd09:$((100 + w))::0 $((BIG - BIG / 2))
		} >"$TMP/big.$w"
	done
	# Held open for the whole storm: rmmod must fail with "in use".
	exec {HELD_FD}</dev/cuckoo_nf || { log_fail "open /dev/cuckoo_nf"; return 1; }

	ncpu=$(nproc)
	echo "# storm: $WRITERS writers x $ITERS iterations, big loads of $BIG, $ncpu CPUs, ${#SRCS[@]} pingers"
	t0=$SECONDS
	for i in "${!SRCS[@]}"; do
		pinger "${SRCS[$i]}" $((i % ncpu))
	done
	flusher &
	PIDS+=($!)
	unloader &
	PIDS+=($!)
	local wpids=() bad=0 pid
	for ((w = 0; w < WRITERS; w++)); do
		writer $w &
		wpids+=($!)
	done
	wait "${wpids[@]}"
	# Each writer ends with its final set: the pool removed, its set added.
	# The whole pool: pool_addr of every I, odd ones IPv4, even ones IPv6.
	printf '%s\n' 10.9.{1..4}.{1..255..2} >"$TMP/pool"
	printf 'fd09::1:%x\n' {0..1022..2} >>"$TMP/pool"
	rctl del --file "$TMP/pool" >/dev/null 2>"$TMP/final.err" || log_fail "removing the pool: $(cat "$TMP/final.err")"
	for ((w = 0; w < WRITERS; w++)); do
		final_set $w >"$TMP/final.$w"
		rctl load "$TMP/final.$w" >/dev/null 2>>"$TMP/final.err" &
		wpids+=($!)
	done
	for pid in "${wpids[@]:WRITERS}"; do
		wait "$pid" || bad=1
	done
	((bad == 0)) || log_fail "re-adding the final sets: $(cat "$TMP/final.err")"
	touch "$TMP/stop"
	kill "${PINGERS[@]}" 2>/dev/null
	wait "${PIDS[@]}"
	PIDS=()
	local dur=$((SECONDS - t0))

	# ---- verdicts ----
	for ((w = 0; w < WRITERS; w++)); do
		ops=$((ops + $(cat "$TMP/w$w.ops" 2>/dev/null || echo 0)))
		[[ -s $TMP/w$w.bad ]] && log_fail "writer $w: $(head -n3 "$TMP/w$w.bad"): $(grep -v 'already present\|not present' "$TMP/w$w.err" | head -n3)"
	done
	[[ -s $TMP/flusher.bad ]] && log_fail "flusher: $(head -n3 "$TMP/flusher.bad"): $(head -n3 "$TMP/flusher.err")"
	if [[ -s $TMP/rmmod.bad ]]; then
		log_fail "$(head -n3 "$TMP/rmmod.bad")"
	else
		log_pass "rmmod refused $(cat "$TMP/rmmod.tries") times while in use"
	fi
	mod_loaded || log_fail "the module is gone"

	settle_counters counters CTR
	for i in "${!SRCS[@]}"; do
		s=${SRCS[$i]}
		arrived=${CTR[storm_in/c$i]:-0}
		thru=${CTR[storm_thru/c$i]:-0}
		if ((i < ${#BLOCKED[@]})); then
			if is_v6 "$s"; then drop6=$((drop6 + arrived)); else drop4=$((drop4 + arrived)); fi
			((arrived > 0)) || log_fail "blocked $s: no packet arrived"
			((thru == 0)) && log_pass "blocked $s: 0 of $arrived packets got through" ||
				log_fail "blocked $s: $thru of $arrived packets got through"
		else
			((arrived > 0)) || log_fail "allowed $s: no packet arrived"
			((thru == arrived)) && log_pass "allowed $s: all $arrived packets got through" ||
				log_fail "allowed $s: $((arrived - thru)) of $arrived packets lost"
		fi
	done
	ns_stats "$NS_R" "$TMP/stats"
	if [[ "${STAT[ipv4.dropped]:-} ${STAT[ipv6.dropped]:-}" == "$drop4 $drop6" ]]; then
		log_pass "module dropped exactly the blocked arrivals ($drop4 IPv4, $drop6 IPv6)"
	else
		log_fail "module dropped ${STAT[ipv4.dropped]:-?}/${STAT[ipv6.dropped]:-?}, blocked arrivals $drop4/$drop6"
	fi

	# The set equals the model.
	{ printf '%s\n' "${BLOCKED[@]}"; cat "$TMP"/final.*; } | sort -u >"$TMP/model"
	rctl list | sort >"$TMP/set"
	if cmp -s "$TMP/model" "$TMP/set"; then
		log_pass "the set equals the model ($(wc -l <"$TMP/set") entries)"
	else
		log_fail "the set differs from the model: $(diff "$TMP/model" "$TMP/set" | head -n 10 | tr '\n' ' ')"
	fi
	n=$((${STAT[ipv4.entries]:-0} + ${STAT[ipv6.entries]:-0}))
	((n == $(wc -l <"$TMP/set"))) ||
		log_fail "stats count $n entries, the dump $(wc -l <"$TMP/set")"
	echo "# storm figures: ${dur}s, $ops writer operations, $(cat "$TMP/flusher.rounds") flush/netns rounds, $(cat "$TMP/rmmod.tries" 2>/dev/null) rmmod attempts, $((drop4 + drop6)) blocked packets all dropped, allowed packets all through"
	return $ret
}

main
exit $ret
