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
set -uo pipefail

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
ret=0
TMP=
PIDS=()
MADE=0
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

cleanup() {
	local p i
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_R" 2>/dev/null
	for ((i = 0; i < MADE; i++)); do
		echo "netns del $MANY$i"
	done | ip -force -batch - 2>/dev/null
	[[ -n $TMP ]] && rm -rf "$TMP"
	mod_loaded || insmod "$CNF_KO" || echo "FAIL: cannot insert $CNF_KO at exit"
}

check_requirements() {
	[[ $(id -u) == 0 ]] || skip "must run as root"
	[[ -r $CNF_KO ]] || skip "no module at \$CNF_KO ($CNF_KO)"
	command -v cuckooctl >/dev/null || skip "cuckooctl not on PATH"
	require_cmds ip nft ping insmod rmmod
	modprobe -q veth 2>/dev/null
	modprobe -q nf_tables 2>/dev/null
	if mod_loaded && ! rmmod cuckoo_nf; then
		log_fail "cuckoo_nf is loaded and cannot be removed at start"
		exit 1
	fi
}

# ---- 1. memory ----

# MEM_KB: Slab + VmallocUsed + Percpu of /proc/meminfo, read in this
# shell, to tell when memory stands still.
mem_read() {
	local k v _
	MEM_KB=0
	while read -r k v _; do
		case $k in
		Slab: | VmallocUsed: | Percpu:) MEM_KB=$((MEM_KB + v)) ;;
		esac
	done </proc/meminfo
}

# Let RCU-deferred frees and netns work finish; then MEM_B, the bytes of
# slab objects in use plus VmallocUsed and Percpu.
mem_settled() {
	local prev=-1 n k v _
	for ((n = 0; n < 8; n++)); do
		sleep 0.3
		mem_read
		((MEM_KB == prev)) && break
		prev=$MEM_KB
	done
	MEM_B=$(awk 'NR > 2 { s += $2 * $4 } END { printf "%d", s }' /proc/slabinfo)
	while read -r k v _; do
		case $k in
		VmallocUsed: | Percpu:) MEM_B=$((MEM_B + v * 1024)) ;;
		esac
	done </proc/meminfo
}

# round: NS_N more namespaces, by one ip; ROUND_B, the bytes they added
# per namespace.
round() {
	local i m0
	mem_settled
	m0=$MEM_B
	for ((i = MADE; i < MADE + NS_N; i++)); do
		echo "netns add $MANY$i"
	done | ip -batch - || return 1
	MADE=$((MADE + NS_N))
	mem_settled
	ROUND_B=$(((MEM_B - m0) / NS_N))
}

test_memory() {
	local a1 b1 b2 a2 t0=$SECONDS d
	[[ -r /proc/slabinfo ]] || { log_info "no /proc/slabinfo: memory not measured"; return; }
	round || { log_fail "cannot make $NS_N namespaces"; return; }
	log_info "warm-up round: $ROUND_B B per namespace"
	round || { log_fail "cannot make $NS_N namespaces"; return; }
	a1=$ROUND_B
	insmod "$CNF_KO" || { log_fail "insmod"; return; }
	round || { log_fail "cannot make $NS_N namespaces"; return; }
	b1=$ROUND_B
	round || { log_fail "cannot make $NS_N namespaces"; return; }
	b2=$ROUND_B
	rmmod cuckoo_nf || { log_fail "rmmod with $MADE namespaces"; return; }
	round || { log_fail "cannot make $NS_N namespaces"; return; }
	a2=$ROUND_B
	d=$(((b1 + b2 - a1 - a2) / 2))
	log_info "memory per namespace (B), $NS_N per round: without $a1, with $b1, with $b2, without $a2; module's share $d ($((SECONDS - t0)) s)"
	if ((d <= BOUND)); then
		log_pass "an unused namespace costs $d B with the module loaded (bound $BOUND)"
	else
		log_fail "an unused namespace costs $d B with the module loaded (bound $BOUND)"
	fi
	insmod "$CNF_KO" || { log_fail "insmod"; return; }
}

# ---- 2. one namespace, step by step ----

declare -A CNT
snap() { nft_read CNT "$NS_R" "$TMP/nft"; }

# stats_r: the receiver's stats in STAT (lib.sh).
stats_r() { ns_stats "$NS_R" "$TMP/stats" || log_fail "stats in $NS_R"; }

# step NAME N LISTED ACTIVE: N packets from each source, all sources at
# once; they must arrive, and be dropped by the module (LISTED 1) or
# delivered (0), with the module's counters following when the namespace
# is ACTIVE (1), or stats showing it inactive (0) and all zero.  Replies
# do not matter: counters decide.
step() {
	local name=$1 n=$2 listed=$3 active=$4 s fam ok=1
	local -A a0 d0 k0 c0
	snap
	stats_r
	for s in "${SRCS[@]}"; do
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		a0[$s]=${CNT[cnf_in/c${IDX[$s]}]:-0}
		d0[$s]=${CNT[cnf_rx/c${IDX[$s]}]:-0}
		k0[$s]=${STAT[$fam.dropped]:-x}
		c0[$s]=${STAT[$fam.checked]:-x}
	done
	ping_all "$NS_S" "$n" 0.01 0.2 "${SRCS[@]}"
	settle_counters snap CNT
	stats_r
	for s in "${SRCS[@]}"; do
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		a0[$s]=$((${CNT[cnf_in/c${IDX[$s]}]:-0} - a0[$s]))
		d0[$s]=$((${CNT[cnf_rx/c${IDX[$s]}]:-0} - d0[$s]))
		k0[$s]=$((${STAT[$fam.dropped]:-0} - k0[$s]))
		c0[$s]=$((${STAT[$fam.checked]:-0} - c0[$s]))
		if ((a0[$s] != n || d0[$s] != (listed ? 0 : n))); then
			log_info "$name: $s: ${a0[$s]} of $n arrived, ${d0[$s]} delivered"
			ok=0
		fi
		if ((active)); then
			if [[ ${STAT[active]} != true ]] ||
				((k0[$s] != (listed ? n : 0) || c0[$s] < n)); then
				log_info "$name: $s: active=${STAT[active]}, module dropped ${k0[$s]} and checked ${c0[$s]} of $n"
				ok=0
			fi
		elif [[ ${STAT[active]} != false ]] || ((STAT[$fam.checked] || STAT[$fam.capacity])); then
			log_info "$name: $s: active=${STAT[active]}, checked ${STAT[$fam.checked]}, capacity ${STAT[$fam.capacity]}"
			ok=0
		fi
	done
	if ((ok)); then
		log_pass "$name"
	else
		log_fail "$name"
	fi
}

ctl_r() { nsx "$NS_R" cuckooctl "$@" >/dev/null || log_fail "cuckooctl $*"; }

test_steps() {
	step "never configured: passes, reads create nothing" 3 0 0
	nsx "$NS_R" cuckooctl test "$SRC4" >/dev/null
	(($? == 1)) || log_fail "cuckooctl test of an unlisted source in a fresh namespace"
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
	stats_r
	[[ ${STAT[ipv4.dropped]} == 3 && ${STAT[ipv6.dropped]} == 3 ]] ||
		log_fail "after the reset the counters did not start from 0 (${STAT[ipv4.dropped]}, ${STAT[ipv6.dropped]})"
	ctl_r flush
	step "flush: passes, still active" 2 0 1
	ctl_r reset
}

# ---- 3. races ----

# delivered SRC: D, the packets from SRC delivered so far.
delivered() {
	snap
	D=${CNT[cnf_rx/c${IDX[$1]}]:-0}
}

# churn N: N namespaces in turn configured, flooding themselves through
# lo from a listed address, and deleted while the flood runs.
churn() {
	local i ns p
	for ((i = 0; i < $1; i++)); do
		ns=cnf-un-c-$$-$i
		ip netns add "$ns" || { echo "churn: netns add $ns"; return 1; }
		ip -n "$ns" link set lo up
		nsx "$ns" cuckooctl add 127.0.0.1 >/dev/null ||
			{ echo "churn: add in $ns"; return 1; }
		nsx_argv "$ns" ping -q -n -i "$INTERVAL" 127.0.0.1
		"${NSX[@]}" >/dev/null 2>&1 &
		p=$!
		sleep 0.05
		ip netns del "$ns" || { echo "churn: netns del $ns"; return 1; }
		kill "$p"
		wait "$p" 2>/dev/null
	done
	return 0
}

test_races() {
	local i d0 rc=0 cpid
	for i in "${SRCS[@]}"; do
		flood "$NS_S" "$i" "$INTERVAL"
		PIDS+=("$FLOOD_PID")
	done
	churn "$RACE_ITERS" &
	cpid=$!
	for ((i = 0; i < RACE_ITERS; i++)); do
		nsx "$NS_R" cuckooctl add "${SRCS[@]}" >/dev/null ||
			{ echo "add, cycle $i"; rc=1; }
		nsx "$NS_R" cuckooctl reset || { echo "reset, cycle $i"; rc=1; }
	done
	wait "$cpid" || rc=1
	((rc == 0)) || log_fail "add/reset or namespace churn failed under floods"
	# Still exact after the churn: listed, nothing more is delivered.
	ctl_r add "${SRCS[@]}"
	delivered "$SRC4"
	d0=$D
	sleep 1
	delivered "$SRC4"
	stats_r
	if ((D == d0 && STAT[ipv4.dropped] > 0)); then
		log_pass "after $RACE_ITERS add/reset cycles and deletions under floods, listed sources are dropped"
	else
		log_fail "after the races: $((D - d0)) delivered from $SRC4 while listed, ${STAT[ipv4.dropped]} dropped"
	fi
	# rmmod with this namespace active, under the floods; then a fresh
	# module gives it nothing until configured again.
	if ! rmmod cuckoo_nf; then
		log_fail "rmmod with an active namespace under floods"
		return
	fi
	insmod "$CNF_KO" || { log_fail "insmod after rmmod"; return; }
	delivered "$SRC4"
	d0=$D
	sleep 0.5
	delivered "$SRC4"
	stats_r
	if ((D > d0)) && [[ ${STAT[active]} == false ]]; then
		log_pass "rmmod under floods with an active namespace; reloaded, it is inactive and passes"
	else
		log_fail "after rmmod and insmod: $((D - d0)) delivered, active=${STAT[active]}"
	fi
}

main() {
	local t0
	check_requirements
	TMP=$(mktemp -d) || exit 1
	trap cleanup EXIT
	t0=$SECONDS
	test_memory
	log_info "memory: $((SECONDS - t0)) s"
	mod_loaded || insmod "$CNF_KO" || { log_fail "insmod"; exit 1; }
	veth_pair 0 "$NS_S" "$NS_R" "$DST4" "$DST6" "${SRCS[@]}" ||
		{ log_fail "cannot set up the veth pair"; exit 1; }
	counter_tables "$NS_R" cnf_in:req:r0 cnf_rx:req:input ||
		{ log_fail "cannot set up the counters"; exit 1; }
	t0=$SECONDS
	test_steps
	log_info "steps: $((SECONDS - t0)) s"
	t0=$SECONDS
	test_races
	log_info "races: $((SECONDS - t0)) s"
	finish "unused namespaces cost nothing; activation and reset are exact"
}

main
