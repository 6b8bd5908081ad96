#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A network namespace where cuckoo_nf is never configured costs nothing:
# no filter, no counters, no hooks.  The script inserts and removes the
# module itself, from $CNF_KO, and leaves it loaded.
#
#  1. memory: after a round of NS_N namespaces that only warms the slab
#     caches up, NS_N namespaces made with the module out, NS_N with it
#     in, NS_N with it in, NS_N with it out again (the order cancels a
#     drift that grows with the number of namespaces); the kernel memory
#     each round added per namespace, with the module against without,
#     must differ by at most BOUND bytes.  Before, it was about 46 kB.
#     Slab memory is counted as /proc/slabinfo's objects in use times
#     their size: Slab of /proc/meminfo counts whole pages, and pages
#     half-filled by earlier tests made it swing by kilobytes per
#     namespace from one round to the next.  VmallocUsed and Percpu come
#     from /proc/meminfo.
#  2. one namespace, pinged from a source before and after each step:
#     never configured (passes, stats inactive after reading them), the
#     first add (the very next packet is dropped), emptied by del (passes,
#     still active, counted), reset (passes, inactive, counters gone), used
#     again (dropped, counters from 0), flush (passes, still active).
#     Verdicts come from nft counters at the receiver's ingress (arrived)
#     and input (delivered) and from the module's counters.
#  3. races, while listed sources flood: add and reset in a loop; namespaces
#     configured and deleted with traffic inside them; rmmod with a
#     namespace active.  After them, the filter still drops what it lists
#     and a reset namespace is inactive.  Kernel reports (WARN, KASAN,
#     lockdep) are the harness's to catch.
# ALL_TESTS: the three parts; TESTS="test_steps" runs one.
set -uo pipefail

ALL_TESTS="test_memory test_steps test_races"

NS_N=${CNF_TEST_UNUSED_NS:-500}
BOUND=${CNF_TEST_UNUSED_BOUND:-1024}
RACE_ITERS=${CNF_TEST_UNUSED_RACES:-10}
CNF_KO=${CNF_KO:-/cnf/cuckoo_nf.ko}
NS_S=cnf-un-s-$$
NS_R=cnf-un-r-$$
MANY=cnf-un-m-$$-
DST4=10.0.9.2
DST6=fd00:9::2
SRC4=10.0.9.1
SRC6=fd00:9::1
SRCS=("$SRC4" "$SRC6")
INTERVAL=0.005
TMP=
PIDS=()
MADE=0
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

# At exit (deferred): the namespaces of the memory rounds gone, and the
# module loaded, as the harness expects it.
un_cleanup() {
	local i
	for ((i = 0; i < MADE; i++)); do
		echo "netns del $MANY$i"
	done | ip -force -batch -
	mod_loaded || insmod "$CNF_KO" || echo "# cannot insert $CNF_KO at exit"
}

check_requirements() {
	require_ko "$CNF_KO"
	require_cmds cuckooctl ip nft ping
	modprobe -q veth 2>/dev/null
	modprobe -q nf_tables 2>/dev/null
}

# mod_in: the module loaded (inserted if it is not).
mod_in() {
	mod_loaded || insmod "$CNF_KO" || { fail "insmod $CNF_KO"; return 1; }
}

# ---- 1. memory ----

# mem_kb VAR: VAR = Slab + VmallocUsed + Percpu of /proc/meminfo, read in
# this shell, to tell when memory stands still.
mem_kb() {
	local -n _kb=$1
	local k v _
	_kb=0
	while read -r k v _; do
		case $k in
		Slab: | VmallocUsed: | Percpu:) _kb=$((_kb + v)) ;;
		esac
	done </proc/meminfo
}

# mem_settled VAR: let RCU-deferred frees and netns work finish; then VAR
# = the bytes of slab objects in use plus VmallocUsed and Percpu (one awk:
# /proc/slabinfo has hundreds of lines).
mem_settled() {
	local -n _b=$1
	local prev=-1 n k v _ kb
	for ((n = 0; n < 8; n++)); do
		sleep 0.3
		mem_kb kb
		((kb == prev)) && break
		prev=$kb
	done
	_b=$(awk 'NR > 2 { s += $2 * $4 } END { printf "%d", s }' /proc/slabinfo)
	while read -r k v _; do
		case $k in
		VmallocUsed: | Percpu:) _b=$((_b + v * 1024)) ;;
		esac
	done </proc/meminfo
}

# round VAR: NS_N more namespaces, by one ip; VAR = the bytes they added
# per namespace.
round() {
	local -n _per=$1
	local i m0 m1
	mem_settled m0
	for ((i = MADE; i < MADE + NS_N; i++)); do
		echo "netns add $MANY$i"
	done | ip -batch - || { fail "cannot make $NS_N namespaces"; return 1; }
	MADE=$((MADE + NS_N))
	mem_settled m1
	_per=$(((m1 - m0) / NS_N))
}

test_memory() {
	local w a1 b1 b2 a2 t0=$SECONDS d
	if [[ ! -r /proc/slabinfo ]]; then
		skip_test "no /proc/slabinfo: memory not measured"
		return
	fi
	if mod_loaded && ! rmmod cuckoo_nf; then
		fail "cuckoo_nf is loaded and cannot be removed"
		return
	fi
	round w || return
	note "warm-up round: $w B per namespace"
	round a1 || return
	insmod "$CNF_KO" || { fail "insmod"; return; }
	round b1 || return
	round b2 || return
	rmmod cuckoo_nf || { fail "rmmod with $MADE namespaces"; return; }
	round a2 || return
	d=$(((b1 + b2 - a1 - a2) / 2))
	note "memory per namespace (B), $NS_N per round: without $a1, with $b1, with $b2, without $a2; module's share $d ($((SECONDS - t0)) s)"
	((d <= BOUND))
	verdict $? "an unused namespace costs $d B with the module loaded (bound $BOUND)"
	insmod "$CNF_KO" || fail "insmod"
}

# ---- 2. one namespace, step by step ----

declare -A CNT
snap() { nft_read CNT "$NS_R" "$TMP/nft"; }

# stats_r ARRAY: the receiver's stats in ARRAY (lib.sh's ns_stats).
stats_r() { ns_stats "$1" "$NS_R" "$TMP/stats" || fail "stats in $NS_R"; }

# net_up: the module in, the sender and the receiver over veth with the
# receiver's counters (once: the tests after the first reuse them).
net_up() {
	mod_in || return 1
	[[ -e /run/netns/$NS_R ]] && return 0
	veth_pair 0 "$NS_S" "$NS_R" "$DST4" "$DST6" "${SRCS[@]}" ||
		{ fail "cannot set up the veth pair"; return 1; }
	counter_tables "$NS_R" cnf_in:req:r0 cnf_rx:req:input ||
		{ fail "cannot set up the counters"; return 1; }
}

# step NAME N LISTED ACTIVE: N packets from each source, all sources at
# once; they must arrive, and be dropped by the module (LISTED 1) or
# delivered (0), with the module's counters following when the namespace
# is ACTIVE (1), or stats showing it inactive (0) and all zero.  Replies
# do not matter: counters decide.
step() {
	local name=$1 n=$2 listed=$3 active=$4 s fam ok=1
	local -A a0 d0 k0 c0 st
	snap
	stats_r st
	for s in "${SRCS[@]}"; do
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		a0[$s]=${CNT[cnf_in/c${IDX[$s]}]:-0}
		d0[$s]=${CNT[cnf_rx/c${IDX[$s]}]:-0}
		k0[$s]=${st[$fam.dropped]:-x}
		c0[$s]=${st[$fam.checked]:-x}
	done
	ping_all "$NS_S" "$n" 0.01 0.2 "${SRCS[@]}"
	settle_counters snap CNT
	stats_r st
	for s in "${SRCS[@]}"; do
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		a0[$s]=$((${CNT[cnf_in/c${IDX[$s]}]:-0} - a0[$s]))
		d0[$s]=$((${CNT[cnf_rx/c${IDX[$s]}]:-0} - d0[$s]))
		k0[$s]=$((${st[$fam.dropped]:-0} - k0[$s]))
		c0[$s]=$((${st[$fam.checked]:-0} - c0[$s]))
		if ((a0[$s] != n || d0[$s] != (listed ? 0 : n))); then
			note "$name: $s: ${a0[$s]} of $n arrived, ${d0[$s]} delivered"
			ok=0
		fi
		if ((active)); then
			if [[ ${st[active]} != true ]] ||
				((k0[$s] != (listed ? n : 0) || c0[$s] < n)); then
				note "$name: $s: active=${st[active]}, module dropped ${k0[$s]} and checked ${c0[$s]} of $n"
				ok=0
			fi
		elif [[ ${st[active]} != false ]] || ((st[$fam.checked] || st[$fam.capacity])); then
			note "$name: $s: active=${st[active]}, checked ${st[$fam.checked]}, capacity ${st[$fam.capacity]}"
			ok=0
		fi
	done
	if ((ok)); then
		pass "$name"
	else
		fail "$name"
	fi
}

ctl_r() { nsx "$NS_R" cuckooctl "$@" >/dev/null || fail "cuckooctl $*"; }

test_steps() {
	local -A st
	net_up || return
	step "never configured: passes, reads create nothing" 3 0 0
	nsx "$NS_R" cuckooctl test "$SRC4" >/dev/null
	(($? == 1)) || fail "cuckooctl test of an unlisted source in a fresh namespace"
	ctl_r list
	step "after test and list: still inactive" 2 0 0
	ctl_r add "${SRCS[@]}"
	step "first add: the next packet is dropped" 1 1 1
	step "listed: dropped" 3 1 1
	ctl_r del "${SRCS[@]}"
	step "emptied by del: passes, still active" 3 0 1
	ctl_r reset
	step "reset: passes, inactive, counters gone" 3 0 0
	ctl_r add "${SRCS[@]}"
	step "used again: dropped, counted from 0" 3 1 1
	stats_r st
	[[ ${st[ipv4.dropped]:-} == 3 && ${st[ipv6.dropped]:-} == 3 ]] ||
		fail "after the reset the counters did not start from 0 (${st[ipv4.dropped]:-?}, ${st[ipv6.dropped]:-?})"
	ctl_r flush
	step "flush: passes, still active" 2 0 1
	ctl_r reset
}

# ---- 3. races ----

# delivered VAR SRC: VAR = the packets from SRC delivered so far.
delivered() {
	local -n _dv=$1
	snap
	_dv=${CNT[cnf_rx/c${IDX[$2]}]:-0}
}

# churn N: N namespaces in turn configured, flooding themselves through
# lo from a listed address, and deleted while the flood runs.
churn() {
	local i ns p argv
	for ((i = 0; i < $1; i++)); do
		ns=cnf-un-c-$$-$i
		ip netns add "$ns" || { echo "churn: netns add $ns"; return 1; }
		ip -n "$ns" link set lo up
		nsx "$ns" cuckooctl add 127.0.0.1 >/dev/null ||
			{ echo "churn: add in $ns"; return 1; }
		nsx_argv argv "$ns" ping -q -n -i "$INTERVAL" 127.0.0.1
		"${argv[@]}" >/dev/null 2>&1 &
		p=$!
		sleep 0.05
		ip netns del "$ns" || { echo "churn: netns del $ns"; return 1; }
		kill "$p"
		wait "$p" 2>/dev/null
	done
	return 0
}

test_races() {
	local i d0 d rc=0 cpid
	local -A st
	net_up || return
	for i in "${SRCS[@]}"; do
		flood PIDS "$NS_S" "$i" "$INTERVAL"
	done
	churn "$RACE_ITERS" &
	cpid=$!
	for ((i = 0; i < RACE_ITERS; i++)); do
		nsx "$NS_R" cuckooctl add "${SRCS[@]}" >/dev/null ||
			{ echo "add, cycle $i"; rc=1; }
		nsx "$NS_R" cuckooctl reset || { echo "reset, cycle $i"; rc=1; }
	done
	wait "$cpid" || rc=1
	((rc == 0)) || fail "add/reset or namespace churn failed under floods"
	# Still exact after the churn: listed, nothing more is delivered.
	ctl_r add "${SRCS[@]}"
	delivered d0 "$SRC4"
	sleep 1
	delivered d "$SRC4"
	stats_r st
	if ((d == d0 && ${st[ipv4.dropped]:-0} > 0)); then
		pass "after $RACE_ITERS add/reset cycles and deletions under floods, listed sources are dropped"
	else
		fail "after the races: $((d - d0)) delivered from $SRC4 while listed, ${st[ipv4.dropped]:-?} dropped"
	fi
	# rmmod with this namespace active, under the floods; then a fresh
	# module gives it nothing until configured again.
	if ! rmmod cuckoo_nf; then
		fail "rmmod with an active namespace under floods"
		kill_all PIDS
		return
	fi
	insmod "$CNF_KO" || { fail "insmod after rmmod"; kill_all PIDS; return; }
	delivered d0 "$SRC4"
	sleep 0.5
	delivered d "$SRC4"
	stats_r st
	if ((d > d0)) && [[ ${st[active]:-} == false ]]; then
		pass "rmmod under floods with an active namespace; reloaded, it is inactive and passes"
	else
		fail "after rmmod and insmod: $((d - d0)) delivered, active=${st[active]:-?}"
	fi
	kill_all PIDS
}

check_requirements
tmpdir TMP || ktap_bail "mktemp"
defer un_cleanup
defer kill_all PIDS
run_tests
