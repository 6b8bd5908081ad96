#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress: adds, deletes and growth of the filter while traffic flows.
#
# A sender namespace with several source addresses talks over veth to a
# receiver namespace whose filter lists the "stable blocked" sources and
# never the "stable allowed" ones (some of them one bit away from a blocked
# one).  While every stable source pings the receiver, the receiver's filter
# churns: small batches of OTHER addresses (some in the same /24 and /64 as
# the stable ones) are added, tested and deleted in a loop, and bulk loads
# of BIG addresses per family force the tables to grow, then are deleted.
#
# Everything is asserted with counters, never with timing:
#   - an nft netdev ingress counter on the receiver's veth counts what
#     arrived per source, an inet input counter (after the module's hook)
#     what got through: zero for blocked sources, all of it for allowed ones;
#   - cuckooctl stats: dropped == matched == what arrived from blocked
#     sources, per family; checked == all IPv4 that arrived;
#   - every echo request delivered from an allowed source got its reply
#     back to the sender (an inet input counter there); the grow counters
#     went up; at the end the set is exactly the stable blocked sources.
# Each source's ping runs for the whole churn and is killed after it (the
# counters, not ping's own tally, decide: a reply can be on its way when
# ping is killed).  The amount of work is set by counts (CNF_TEST_STRESS_*
# below).

ret=0

INTERVAL=${CNF_TEST_STRESS_INTERVAL:-0.02}	# ping -i
BIG=${CNF_TEST_STRESS_BIG:-100000}		# bulk load size per family (x round)
LOADS=${CNF_TEST_STRESS_LOADS:-2}		# bulk load/delete rounds
SMALL=${CNF_TEST_STRESS_SMALL:-15}		# small add/test/del rounds, at least
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

NS_S=cnf-stress-s-$$
NS_R=cnf-stress-r-$$
DST4=10.0.1.2
DST6=fd00:1::2
# Stable sources.  Allowed ones include neighbours of blocked ones.
BLOCKED4=(10.0.1.11 10.0.1.13 10.0.1.130)
ALLOWED4=(10.0.1.10 10.0.1.12 10.0.1.131)
BLOCKED6=(fd00:1::11 fd00:1::13 fd00:1::8000:11)
ALLOWED6=(fd00:1::10 fd00:1::12 fd00:1::8000:10)
SRCS=("${BLOCKED4[@]}" "${ALLOWED4[@]}" "${BLOCKED6[@]}" "${ALLOWED6[@]}")

TMP=
PIDS=()
PINGERS=()

cleanup() {
	local p
	for p in "${PIDS[@]}" "${PINGERS[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_R" 2>/dev/null
	[[ -n $TMP ]] && rm -rf "$TMP"
}
trap cleanup EXIT

rctl() { nsx "$NS_R" cuckooctl "$@"; }

check_requirements() {
	[[ $(id -u) == 0 ]] || skip "must run as root"
	[[ -c /dev/cuckoo_nf ]] || skip "/dev/cuckoo_nf missing (module not loaded)"
	command -v cuckooctl >/dev/null || skip "cuckooctl not on PATH"
	require_cmds ip nft ping awk
	[[ -x $ADDRGEN ]] || skip "$ADDRGEN missing (make -C selftests)"
	modprobe -q veth 2>/dev/null
	modprobe -q nf_tables 2>/dev/null
}

# The pair, its static neighbours (no ARP/ND, so the only IP packets from
# the stable sources are the pings) and per source the counters (cN, N =
# IDX[source]) of: sent (sender output) and replies received (sender
# input); arrived (receiver ingress, before the module's PRE_ROUTING hook)
# and delivered (receiver input).
setup() {
	veth_pair 0 "$NS_S" "$NS_R" "$DST4" "$DST6" 10.0.1.1 fd00:1::1 "${SRCS[@]}" || {
		(($? == 2)) && skip "cannot create network namespaces and a veth pair"
		return 1
	}
	counter_tables "$NS_S" cnf_tx:req:output cnf_back:reply:input &&
		counter_tables "$NS_R" cnf_in:req:r0 cnf_rx:req:input
}

# snap: SNAP_S and SNAP_R, the sender's and the receiver's named counters
# (TABLE/cN).
declare -A SNAP_S SNAP_R
snap() {
	nft_read SNAP_S "$NS_S" "$TMP/nft"
	nft_read SNAP_R "$NS_R" "$TMP/nft"
}

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
	for ((k = 1; k <= LOADS; k++)); do
		n=$((BIG * k))
		# Outside the ranges anything else here uses.
		addr_list "$TMP/big4.$n" 172.16.0.0 "$n"
		addr_list "$TMP/big6.$n" fd00:200:: "$n"
		for fam in 4 6; do
			key=ipv$fam
			before=-1
			ns_stats "$NS_R" "$TMP/stats" && before=${STAT[$key.grows]}
			rctl load "$TMP/big$fam.$n" >"$TMP/load.out" 2>&1
			rc=$?
			out=$(<"$TMP/load.out")
			if ((rc == 0)) && [[ $out == *"$n added, 0 already present"* ]]; then
				log_pass "bulk load $k: $n IPv$fam addresses added under traffic"
			else
				log_fail "bulk load $k: $n IPv$fam addresses: ${out##*$'\r'}"
			fi
			after=-1 entries=-1
			if ns_stats "$NS_R" "$TMP/stats"; then
				after=${STAT[$key.grows]} entries=${STAT[$key.entries]}
			fi
			if ((after > before && before >= 0)); then
				log_pass "bulk load $k: IPv$fam table grew (grows $before -> $after, capacity ${STAT[$key.capacity]})"
			else
				log_fail "bulk load $k: IPv$fam table did not grow (grows $before -> $after)"
			fi
			if ((entries >= n + 3)); then
				log_pass "bulk load $k: IPv$fam entries $entries >= $((n + 3))"
			else
				log_fail "bulk load $k: IPv$fam entries $entries < $((n + 3))"
			fi
		done
		for fam in 4 6; do
			if out=$(rctl del --file "$TMP/big$fam.$n" 2>&1) &&
				[[ $out == *"$n deleted, 0 not present"* ]]; then
				log_pass "bulk delete $k: $n IPv$fam addresses deleted under traffic"
			else
				log_fail "bulk delete $k: $n IPv$fam addresses: ${out##*$'\r'}"
			fi
		done
		rm -f "$TMP/big4.$n" "$TMP/big6.$n"
	done
}

verify_traffic() {
	local s i kind sent arrived delivered back
	local -A drop_want=([4]=0 [6]=0)
	local all4=0 fam d m c
	settle_counters snap SNAP_S SNAP_R
	for s in "${SRCS[@]}"; do
		i=${IDX[$s]}
		kind=allowed
		[[ " ${BLOCKED4[*]} ${BLOCKED6[*]} " == *" $s "* ]] && kind=blocked
		sent=${SNAP_S[cnf_tx/c$i]:-0}
		back=${SNAP_S[cnf_back/c$i]:-0}
		arrived=${SNAP_R[cnf_in/c$i]:-0}
		delivered=${SNAP_R[cnf_rx/c$i]:-0}
		log_info "$kind $s: sent $sent, arrived $arrived, delivered $delivered, replies back $back"
		if ((arrived == 0)); then
			log_fail "$kind $s: no packet arrived at the receiver"
			continue
		fi
		if ((sent != arrived)); then
			echo "WARN: $kind $s: $((sent - arrived)) packets lost on the veth, before the filter"
		fi
		if is_v6 "$s"; then
			[[ $kind == blocked ]] && drop_want[6]=$((drop_want[6] + arrived))
		else
			[[ $kind == blocked ]] && drop_want[4]=$((drop_want[4] + arrived))
			all4=$((all4 + arrived))
		fi
		if [[ $kind == blocked ]]; then
			if ((delivered == 0)); then
				log_pass "blocked $s: 0 of $arrived packets got through"
			else
				log_fail "blocked $s: $delivered of $arrived packets got through"
			fi
		else
			if ((delivered == arrived)); then
				log_pass "allowed $s: all $arrived packets got through"
			else
				log_fail "allowed $s: $((arrived - delivered)) of $arrived packets dropped"
			fi
			if ((back == delivered)); then
				log_pass "allowed $s: all $delivered echo requests delivered were answered"
			else
				log_fail "allowed $s: $back replies back for $delivered echo requests delivered"
			fi
		fi
	done

	if ! ns_stats "$NS_R" "$TMP/stats"; then
		log_fail "stats: cannot read them: $STATS_JSON"
		return
	fi
	log_info "stats: $STATS_JSON"
	for fam in 4 6; do
		d=${STAT[ipv$fam.dropped]}
		m=${STAT[ipv$fam.matched]}
		c=${STAT[ipv$fam.checked]}
		if ((d == drop_want[$fam] && m == d)); then
			log_pass "stats IPv$fam: dropped $d == matched $m == packets from blocked sources"
		else
			log_fail "stats IPv$fam: dropped $d, matched $m, packets from blocked sources ${drop_want[$fam]}"
		fi
		if [[ $fam == 4 ]]; then
			if ((c == all4)); then
				log_pass "stats IPv4: checked $c == IPv4 packets that arrived"
			else
				log_fail "stats IPv4: checked $c, IPv4 packets that arrived $all4"
			fi
		fi
	done
}

# One cuckooctl test for every stable source: "ADDR: present (PREFIX)"
# ("ADDR: present" from a module without CNF_IOC_MATCH) or "ADDR: absent"
# each.
verify_state() {
	local s line
	local -A res=()
	rctl test "${BLOCKED4[@]}" "${BLOCKED6[@]}" "${ALLOWED4[@]}" "${ALLOWED6[@]}" >"$TMP/test.out" 2>&1
	while read -r line; do
		[[ $line =~ ^([0-9a-f.:]+):\ (present|absent)(\ \([0-9a-f.:/]+\))?$ ]] &&
			res[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done <"$TMP/test.out"
	for s in "${BLOCKED4[@]}" "${BLOCKED6[@]}"; do
		[[ ${res[$s]:-} == present ]] && log_pass "set: $s still present" ||
			log_fail "set: $s absent after the churn (test says ${res[$s]:-nothing})"
	done
	for s in "${ALLOWED4[@]}" "${ALLOWED6[@]}"; do
		[[ ${res[$s]:-} == absent ]] && log_pass "set: $s absent" ||
			log_fail "set: $s present after the churn (test says ${res[$s]:-nothing})"
	done
	if ns_stats "$NS_R" "$TMP/stats" &&
		[[ "${STAT[ipv4.entries]} ${STAT[ipv6.entries]}" == "3 3" ]]; then
		log_pass "set: 3 IPv4 and 3 IPv6 entries left, the stable blocked ones"
	else
		log_fail "set: ${STAT[ipv4.entries]:-?} IPv4 and ${STAT[ipv6.entries]:-?} IPv6 entries left, want 3 and 3"
		rctl list | head -n 20 | sed 's/^/INFO: left: /'
	fi
	if [[ -s $TMP/small.fail ]]; then
		log_fail "small add/test/del churn: $(wc -l <"$TMP/small.fail") failures"
		head -n 10 "$TMP/small.fail" | sed 's/^/INFO: /'
	else
		local rounds='?'
		[[ -f $TMP/small.rounds ]] && read -r rounds <"$TMP/small.rounds"
		log_pass "small add/test/del churn: $rounds rounds, no failure"
	fi
}

main() {
	local s
	check_requirements
	TMP=$(mktemp -d)
	setup || { log_fail "setup"; exit 1; }

	if rctl add "${BLOCKED4[@]}" "${BLOCKED6[@]}" >/dev/null; then
		log_pass "stable blocked sources added"
	else
		log_fail "cannot add the stable blocked sources"
		exit 1
	fi

	# One ping per source for the whole churn.
	for s in "${SRCS[@]}"; do
		flood "$NS_S" "$s" "$INTERVAL"
		PINGERS+=("$FLOOD_PID")
	done
	small_churn &
	PIDS+=($!)
	bulk_churn
	touch "$TMP/bulk.done"
	wait "${PIDS[@]}"
	PIDS=()
	kill "${PINGERS[@]}"
	wait "${PINGERS[@]}"
	PINGERS=()

	verify_traffic
	verify_state

	finish stress
}

main "$@"
