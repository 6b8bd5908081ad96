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
#   - every allowed ping got its reply; the grow counters went up; at the end
#     the set is exactly the stable blocked sources.
# The amount of work is set by counts (CNF_TEST_STRESS_* below).

ksft_skip=4
ret=0

PKTS=${CNF_TEST_STRESS_PKTS:-200}		# packets per ping round
INTERVAL=${CNF_TEST_STRESS_INTERVAL:-0.02}	# ping -i
MAX_ROUNDS=${CNF_TEST_STRESS_MAX_ROUNDS:-100}	# ping rounds per source, at most
BIG=${CNF_TEST_STRESS_BIG:-100000}		# bulk load size per family (x round)
LOADS=${CNF_TEST_STRESS_LOADS:-2}		# bulk load/delete rounds
SMALL=${CNF_TEST_STRESS_SMALL:-15}		# small add/test/del rounds
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

log_pass() { echo "PASS: $*"; }
log_fail() { echo "FAIL: $*"; ret=1; }

cleanup() {
	local p
	[[ -n $TMP ]] && touch "$TMP/stop"
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_R" 2>/dev/null
	[[ -n $TMP ]] && rm -rf "$TMP"
}
trap cleanup EXIT

skip() {
	echo "SKIP: $*"
	exit $ksft_skip
}

rctl() { nsx "$NS_R" cuckooctl "$@"; }

is_v6() { [[ $1 == *:* ]]; }

# The index of a source in SRCS, for counter names.
src_idx() {
	local i
	for i in "${!SRCS[@]}"; do
		[[ ${SRCS[$i]} == "$1" ]] && echo "$i" && return
	done
}

# read_counters ARRAY NS FAMILY TABLE: ARRAY[name]=packets for the table's
# named counters.
read_counters() {
	local -n arr=$1
	local name n
	while read -r _ name n; do
		arr[$name]=$n
	done < <(nft_counters "$2" table "$3" "$4")
}

check_requirements() {
	local t
	[[ $(id -u) == 0 ]] || skip "must run as root"
	[[ -c /dev/cuckoo_nf ]] || skip "/dev/cuckoo_nf missing (module not loaded)"
	command -v cuckooctl >/dev/null || skip "cuckooctl not on PATH"
	for t in ip nft ping awk; do
		command -v $t >/dev/null || skip "$t not found"
	done
	[[ -x $ADDRGEN ]] || skip "$ADDRGEN missing (make -C selftests)"
	modprobe -q veth 2>/dev/null
	modprobe -q nf_tables 2>/dev/null
	ip netns add "$NS_S" || skip "cannot create network namespaces"
	ip netns add "$NS_R" || skip "cannot create network namespaces"
	ip -n "$NS_S" link add veth0 type veth peer name veth1 netns "$NS_R" ||
		skip "cannot create a veth pair"
}

# Counter rules for every stable source: "<match> counter name cN".
counter_rules() {
	local dir=$1 s i
	for s in "${SRCS[@]}"; do
		i=$(src_idx "$s")
		echo "counter c$i { }"
	done
	echo "chain c { $2"
	for s in "${SRCS[@]}"; do
		i=$(src_idx "$s")
		if is_v6 "$s"; then
			echo "ip6 saddr $s ip6 daddr $DST6 icmpv6 type echo-request counter name c$i"
		else
			echo "ip saddr $s ip daddr $DST4 icmp type echo-request counter name c$i"
		fi
	done
	echo "}"
}

setup() {
	local ns s mac_s mac_r
	for ns in "$NS_S" "$NS_R"; do
		ip -n "$ns" link set lo up
		nsx "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0
		nsx "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0
	done
	ip -n "$NS_S" addr add 10.0.1.1/24 dev veth0
	ip -n "$NS_S" addr add fd00:1::1/64 dev veth0 nodad
	for s in "${SRCS[@]}"; do
		if is_v6 "$s"; then
			ip -n "$NS_S" addr add "$s/64" dev veth0 nodad
		else
			ip -n "$NS_S" addr add "$s/24" dev veth0
		fi
	done
	ip -n "$NS_R" addr add $DST4/24 dev veth1
	ip -n "$NS_R" addr add $DST6/64 dev veth1 nodad
	ip -n "$NS_S" link set veth0 up
	ip -n "$NS_R" link set veth1 up

	# Static neighbours: no ARP/ND, so the only IP packets from the stable
	# sources are the pings (an IPv6 neighbour solicitation from a blocked
	# source would be dropped and counted too).
	mac_s=$(ip netns exec "$NS_S" cat /sys/class/net/veth0/address)
	mac_r=$(ip netns exec "$NS_R" cat /sys/class/net/veth1/address)
	ip -n "$NS_S" neigh replace $DST4 lladdr "$mac_r" dev veth0 nud permanent
	ip -n "$NS_S" neigh replace $DST6 lladdr "$mac_r" dev veth0 nud permanent
	for s in 10.0.1.1 fd00:1::1 "${SRCS[@]}"; do
		ip -n "$NS_R" neigh replace "$s" lladdr "$mac_s" dev veth1 nud permanent
	done

	# Sent (sender output), arrived (receiver ingress, before the module's
	# PRE_ROUTING hook) and delivered (receiver input) per source.
	nsx "$NS_S" nft -f - <<-EOF || return 1
		table inet cnf_tx {
		$(counter_rules tx "type filter hook output priority 0; policy accept;")
		}
	EOF
	nsx "$NS_R" nft -f - <<-EOF || return 1
		table netdev cnf_in {
		$(counter_rules in "type filter hook ingress device veth1 priority 0; policy accept;")
		}
		table inet cnf_rx {
		$(counter_rules rx "type filter hook input priority 0; policy accept;")
		}
	EOF
}

# One source's traffic: rounds of PKTS pings until told to stop (or
# MAX_ROUNDS).  Always at least one round.
traffic() {
	local src=$1 idx=$2 dst=$DST4 fam=-4 wait=() r=0
	if is_v6 "$src"; then
		dst=$DST6
		fam=-6
	fi
	# Blocked: no reply comes, do not linger 10 s for it.
	[[ $3 == blocked ]] && wait=(-W 1)
	while :; do
		r=$((r + 1))
		nsx "$NS_S" ping $fam -q -n -c "$PKTS" -i "$INTERVAL" \
			"${wait[@]}" -I "$src" "$dst" >"$TMP/ping.$idx.$r" 2>&1
		[[ -e $TMP/stop ]] && break
		((r >= MAX_ROUNDS)) && break
	done
	echo "$r" >"$TMP/rounds.$idx"
}

# Small batches of other addresses, some next to the stable ones: add all,
# test all present, delete all.  Failures go to $TMP/small.fail.
small_churn() {
	local i j a=() rc
	for ((i = 0; i < SMALL; i++)); do
		a=()
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
		# And one at a time.
		rctl add 10.0.1.200 >/dev/null 2>&1 || echo "round $i: add 10.0.1.200 failed" >>"$TMP/small.fail"
		rctl add fd00:1::200 >/dev/null 2>&1 || echo "round $i: add fd00:1::200 failed" >>"$TMP/small.fail"
		rctl del 10.0.1.200 >/dev/null 2>&1 || echo "round $i: del 10.0.1.200 failed" >>"$TMP/small.fail"
		rctl del fd00:1::200 >/dev/null 2>&1 || echo "round $i: del fd00:1::200 failed" >>"$TMP/small.fail"
	done
	touch "$TMP/small.done"
}

# gen_big N: $TMP/big4.N and $TMP/big6.N, N addresses each, outside the
# ranges anything else here uses.
gen_big() {
	"$ADDRGEN" 172.16.0.0 "$1" >"$TMP/big4.$1"
	"$ADDRGEN" fd00:200:: "$1" >"$TMP/big6.$1"
}

# Bulk loads that force growth, then their deletion, LOADS times with a
# bigger file each time (the tables only shrink on flush).
bulk_churn() {
	local k n fam key before after out
	for ((k = 1; k <= LOADS; k++)); do
		n=$((BIG * k))
		gen_big "$n"
		for fam in 4 6; do
			key=.ipv$fam
			STATS=$(rctl stats -j)
			before=$(stats_field "$STATS" "$key.grows")
			if out=$(rctl load "$TMP/big$fam.$n" 2>&1) &&
				[[ $out == *"$n added, 0 already present"* ]]; then
				log_pass "bulk load $k: $n IPv$fam addresses added under traffic"
			else
				log_fail "bulk load $k: $n IPv$fam addresses: ${out##*$'\r'}"
			fi
			STATS=$(rctl stats -j)
			after=$(stats_field "$STATS" "$key.grows")
			if ((after > before)); then
				log_pass "bulk load $k: IPv$fam table grew (grows $before -> $after, capacity $(stats_field "$STATS" "$key.capacity"))"
			else
				log_fail "bulk load $k: IPv$fam table did not grow (grows $before -> $after)"
			fi
			if (($(stats_field "$STATS" "$key.entries") >= n + 3)); then
				log_pass "bulk load $k: IPv$fam entries $(stats_field "$STATS" "$key.entries") >= $((n + 3))"
			else
				log_fail "bulk load $k: IPv$fam entries $(stats_field "$STATS" "$key.entries") < $((n + 3))"
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

# Sum of "N packets transmitted" / "M received" over a source's ping rounds.
ping_sum() {
	cat "$TMP"/ping."$1".* | awk -v w="$2" '
		/packets transmitted/ { t += $1; r += $4 }
		END { print (w == "tx" ? t : r) + 0 }'
}

verify_traffic() {
	local s i kind sent arrived delivered tx rx rounds
	local -A drop_want=([4]=0 [6]=0) TX=() IN=() RX=()
	local all4=0 fam
	read_counters TX "$NS_S" inet cnf_tx
	read_counters IN "$NS_R" netdev cnf_in
	read_counters RX "$NS_R" inet cnf_rx
	for s in "${SRCS[@]}"; do
		i=$(src_idx "$s")
		kind=allowed
		[[ " ${BLOCKED4[*]} ${BLOCKED6[*]} " == *" $s "* ]] && kind=blocked
		sent=${TX[c$i]:-0}
		arrived=${IN[c$i]:-0}
		delivered=${RX[c$i]:-0}
		tx=$(ping_sum "$i" tx)
		rx=$(ping_sum "$i" rx)
		rounds=$(cat "$TMP/rounds.$i" 2>/dev/null)
		echo "INFO: $kind $s: rounds $rounds, ping sent $tx, nft sent $sent arrived $arrived delivered $delivered, replies $rx"
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
			if ((rx == tx)); then
				log_pass "allowed $s: $rx of $tx pings answered"
			else
				log_fail "allowed $s: $rx of $tx pings answered"
			fi
		fi
	done

	STATS=$(rctl stats -j)
	echo "INFO: stats: $STATS"
	for fam in 4 6; do
		local d m c
		d=$(stats_field "$STATS" ".ipv$fam.dropped")
		m=$(stats_field "$STATS" ".ipv$fam.matched")
		c=$(stats_field "$STATS" ".ipv$fam.checked")
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

verify_state() {
	local s rc
	for s in "${BLOCKED4[@]}" "${BLOCKED6[@]}"; do
		rctl test "$s" >/dev/null 2>&1
		rc=$?
		((rc == 0)) && log_pass "set: $s still present" ||
			log_fail "set: $s absent after the churn (test exit $rc)"
	done
	for s in "${ALLOWED4[@]}" "${ALLOWED6[@]}"; do
		rctl test "$s" >/dev/null 2>&1
		rc=$?
		((rc == 1)) && log_pass "set: $s absent" ||
			log_fail "set: $s present after the churn (test exit $rc)"
	done
	STATS=$(rctl stats -j)
	if [[ $(stats_field "$STATS" .ipv4.entries) == 3 && $(stats_field "$STATS" .ipv6.entries) == 3 ]]; then
		log_pass "set: 3 IPv4 and 3 IPv6 entries left, the stable blocked ones"
	else
		log_fail "set: $(stats_field "$STATS" .ipv4.entries) IPv4 and $(stats_field "$STATS" .ipv6.entries) IPv6 entries left, want 3 and 3"
		rctl list | head -n 20 | sed 's/^/INFO: left: /'
	fi
	if [[ -s $TMP/small.fail ]]; then
		log_fail "small add/test/del churn: $(wc -l <"$TMP/small.fail") failures"
		head -n 10 "$TMP/small.fail" | sed 's/^/INFO: /'
	else
		log_pass "small add/test/del churn: $SMALL rounds, no failure"
	fi
}

main() {
	local s i kind
	check_requirements
	TMP=$(mktemp -d)
	setup || { log_fail "setup"; exit 1; }

	if rctl add "${BLOCKED4[@]}" "${BLOCKED6[@]}" >/dev/null; then
		log_pass "stable blocked sources added"
	else
		log_fail "cannot add the stable blocked sources"
		exit 1
	fi

	for s in "${SRCS[@]}"; do
		i=$(src_idx "$s")
		kind=allowed
		[[ " ${BLOCKED4[*]} ${BLOCKED6[*]} " == *" $s "* ]] && kind=blocked
		traffic "$s" "$i" $kind &
		PIDS+=($!)
	done
	small_churn &
	PIDS+=($!)
	bulk_churn
	wait "${PIDS[-1]}"
	touch "$TMP/stop"
	wait
	PIDS=()

	verify_traffic
	verify_state

	if ((ret == 0)); then
		echo "PASS: stress"
	else
		echo "FAIL: stress"
	fi
	exit $ret
}

main "$@"
