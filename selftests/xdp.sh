#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cuckoo_nf at XDP: cuckooctl's program (userspace/xdp/cuckoo_xdp.bpf.c),
# attached with `cuckooctl xdp attach` to the receiving end of a veth pair,
# drops listed sources before netfilter sees them and lets the others on.
# So does its tc twin (userspace/xdp/cuckoo_tc.bpf.c), attached by tc(8)
# to the same device's ingress.
#
#            10.0.1.1 (A), .11 (B) / fd01::1, ::11        10.0.1.2 / fd01::2
#   ns-s:  s1 --------------------------------------------- r1  :ns-r
#          s1.10       (802.1Q 10)                           r1.10
#            10.0.10.1, .11 / fd10::1, ::11               10.0.10.2 / fd10::2
#          s1.20.30    (802.1ad 20, then 802.1Q 30)          r1.20.30
#            10.0.23.1, .11                               10.0.23.2
#
# Every verdict is read on counters: an nft counter per source in the
# receiver's namespace at prerouting, priority -1000 (before cuckoo_nf's
# hook), sees every echo request that reached netfilter, so a source
# dropped at XDP adds nothing to it and a delivered one adds each ping;
# `cuckooctl stats -j` gives the XDP path's counters (xdp_checked,
# xdp_matched, xdp_dropped), and the tc path's (tc_*), beside the hook's,
# which must not see the dropped ones.  The sender's VLAN tags are put in
# the frame (ethtool -K txvlan off), not beside it, so the program parses
# them.
#
# The test_held_* tests hold echo requests that the program passed, with
# its mark, in an nfqueue between XDP and cuckoo_nf's hook (nfq_verdict
# with a release file), change the filter meanwhile (an add, a switch from
# monitor to drop, an allow set's exception deleted, run out, flushed,
# replaced, destroyed), then let them on: the hook must drop them, as the
# mark is of the filter they were judged against, no longer the current.
set -uo pipefail

ALL_TESTS="test_native_drops_before_netfilter test_vlan test_prefix_and_allow
	test_monitor test_netns_move test_generic test_ip_link test_other_program
	test_no_privileges test_mark_not_trusted test_held_add
	test_held_mode_switch test_held_allow_del test_held_allow_expiry
	test_held_allow_set_ops
	test_hooks_off test_mark_mode test_scoped_hooks
	test_rmmod_while_attached test_tc test_tc_egress
	test_tc_rmmod_while_attached test_tracepoint"
NPINGS=3
S=ns-xs-$$
R=ns-xr-$$
R2=ns-xr2-$$
A4=10.0.1.1 B4=10.0.1.11 A6=fd01::1 B6=fd01::11
V4A=10.0.10.1 V4B=10.0.10.11 V6A=fd10::1 V6B=fd10::11
Q4A=10.0.23.1 Q4B=10.0.23.11
SRCS=("$A4" "$B4" "$A6" "$B6" "$V4A" "$V4B" "$V6A" "$V6B" "$Q4A" "$Q4B")
declare -A SIDX	# SIDX[SRC]: its index in SRCS, its nft counter's
for i in "${!SRCS[@]}"; do SIDX[${SRCS[$i]}]=$i; done
CNF_KO=${CNF_KO:-/cnf/cuckoo_nf.ko}
TMP=
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
XDP_OBJ=$(dirname "$(realpath "$0")")/cuckoo_xdp.o
OTHER_OBJ=$(dirname "$(realpath "$0")")/xdp_other.bpf.o
FORGE_OBJ=$(dirname "$(realpath "$0")")/xdp_forge.bpf.o
REWRITE_OBJ=$(dirname "$(realpath "$0")")/xdp_rewrite.bpf.o
TC_OBJ=$(dirname "$(realpath "$0")")/cuckoo_tc.o
NFQ=$(dirname "$(realpath "$0")")/nfq_verdict
# The nfqueue the test_held_* tests hold packets in.
QUEUE=5
PIDS=()
# The path whose counters round() reads: xdp, or tc for the tc program
# (KF=tc round ...).
KF=xdp

# The receiving ends: r1's addresses and static neighbours in namespace NS
# (again after a move: a device leaves its addresses behind).
r1_up() {
	local a
	{
		echo "addr add 10.0.1.2/24 dev r1"
		echo "addr add fd01::2/64 dev r1 nodad"
		echo "link set r1 up"
		for a in "$A4" "$B4" "$A6" "$B6"; do
			echo "neigh replace $a lladdr 02:cf:00:00:01:01 dev r1 nud permanent"
		done
	} | ip -n "$1" -batch -
}

# vlan_pair SUFFIX LINK-ARGS NET4 NET6 SRC...: a VLAN device s1SUFFIX over
# s1${SUFFIX%.*} and r1SUFFIX likewise, the receiver .2 (::2), the sender
# every SRC, static neighbours both ways.
vlan_pair() {
	local sfx=$1 args=$2 n4=$3 n6=$4 a
	shift 4
	{
		echo "link add link s1${sfx%.*} name s1$sfx $args"
		for a; do
			if is_v6 "$a"; then echo "addr add $a/64 dev s1$sfx nodad"
			else echo "addr add $a/24 dev s1$sfx"; fi
		done
		echo "link set s1$sfx up"
		echo "neigh replace ${n4}2 lladdr 02:cf:00:00:01:02 dev s1$sfx nud permanent"
		[[ -z $n6 ]] || echo "neigh replace ${n6}2 lladdr 02:cf:00:00:01:02 dev s1$sfx nud permanent"
	} | ip -n "$S" -batch - || return 1
	{
		echo "link add link r1${sfx%.*} name r1$sfx $args"
		echo "addr add ${n4}2/24 dev r1$sfx"
		[[ -z $n6 ]] || echo "addr add ${n6}2/64 dev r1$sfx nodad"
		echo "link set r1$sfx up"
		for a; do
			echo "neigh replace $a lladdr 02:cf:00:00:01:01 dev r1$sfx nud permanent"
		done
	} | ip -n "$R" -batch -
}

# nft_counters NS: table inet cnf_xdp in NS, a counter cI per source of
# SRCS counting its echo requests at prerouting, before cuckoo_nf's hook.
nft_counters() {
	local i s
	{
		echo "table inet cnf_xdp {"
		for i in "${!SRCS[@]}"; do echo "counter c$i { }"; done
		echo "chain c { type filter hook prerouting priority -1000; policy accept;"
		for i in "${!SRCS[@]}"; do
			s=${SRCS[$i]}
			if is_v6 "$s"; then
				echo "ip6 saddr $s icmpv6 type echo-request counter name c$i"
			else
				echo "ip saddr $s icmp type echo-request counter name c$i"
			fi
		done
		echo "}"
		echo "}"
	} | nsx "$1" nft -f -
}

setup() {
	tmpdir TMP || return 1
	netns_add "$R2" || return 1
	veth_pair 1 "$S" "$R" 10.0.1.2 fd01::2 "$A4" "$B4" "$A6" "$B6" || return 1
	# The tags in the frame, where the program must find them.
	if command -v ethtool >/dev/null; then
		nsx "$S" ethtool -K s1 txvlan off tx-vlan-stag-hw-insert off || return 1
	fi
	vlan_pair .10 "type vlan id 10" 10.0.10. fd10:: "$V4A" "$V4B" "$V6A" "$V6B" || return 1
	vlan_pair .20 "type vlan proto 802.1ad id 20" 10.0.20. "" || return 1
	vlan_pair .20.30 "type vlan id 30" 10.0.23. "" "$Q4A" "$Q4B" || return 1
	nft_counters "$R" && nft_counters "$R2" || return 1
	# Before the namespaces go: rmmod right after the script must work.
	defer nsx "$R" cuckooctl xdp detach r1
	defer nsx "$R2" cuckooctl xdp detach r1
	defer tc -n "$R" qdisc del dev r1 clsact
}

ctl() { nsx "$R" cuckooctl "$@"; }
ctl2() { nsx "$R2" cuckooctl "$@"; }

# fresh: R's and R2's filters as after load, no program on r1, no
# packet held (hold_table).
fresh() {
	local ns
	nsx "$R" nft delete table inet cnf_hold >/dev/null 2>&1
	for ns in "$R" "$R2"; do
		nsx "$ns" cuckooctl xdp detach r1 >/dev/null 2>&1
		tc -n "$ns" qdisc del dev r1 clsact >/dev/null 2>&1
		nsx "$ns" cuckooctl reset || return 1
	done
}

# snap NS XS CT: XS = NS's `cuckooctl stats -j`, CT = its nft counters.
snap() {
	ns_stats "$2" "$1" "$TMP/stats" && nft_read "$3" "$1" "$TMP/nft" table inet cnf_xdp
}

# round NS DST4 DST6 VERDICT:SRC...: NPINGS pings from each SRC at once,
# then in namespace NS, each SRC as its VERDICT says:
#   drop     never reached netfilter (its nft counter unchanged), counted
#            matched and dropped at XDP;
#   pass     reached netfilter with every ping, not dropped at XDP;
#   monitor  reached netfilter with every ping, counted matched at XDP
#            and never dropped.
# And per family: the program's path ($KF) checked every ping (IPv6 at
# least: the link's own router solicitations count too), matched and
# dropped exactly those above; the hook checked none at XDP, since every
# packet XDP passed carries the kfuncs' mark (module/xdp.h), and at tc
# every ping tc passed (IPv6 at least), since nothing marks them.
round() {
	local ns=$1 v s i fam n srcs=() want
	local -A x0 x1 c0 c1 drop=() match=() seen=()
	DST4=$2 DST6=$3
	shift 3
	snap "$ns" x0 c0 || { fail "$ns: counters not read"; return; }
	for v; do srcs+=("${v#*:}"); done
	ping_all "$S" "$NPINGS" 0.1 0.1 "${srcs[@]}"
	# Until two readings agree: the receiver's queue drained.
	reader() { snap "$ns" x1 c1; }
	settle_counters reader x1 c1
	for v; do
		s=${v#*:} v=${v%%:*}
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		i=${SIDX[$s]}
		n=$((${c1[cnf_xdp/c$i]:-0} - ${c0[cnf_xdp/c$i]:-0}))
		want=$NPINGS
		[[ $v == drop ]] && want=0
		[[ $n == "$want" ]]
		verdict $? "$ns: $v $s: $n of $NPINGS echo requests reached netfilter"
		seen[$fam]=$((${seen[$fam]:-0} + NPINGS))
		[[ $v == pass ]] && continue
		match[$fam]=$((${match[$fam]:-0} + NPINGS))
		[[ $v == drop ]] && drop[$fam]=$((${drop[$fam]:-0} + NPINGS))
	done
	for fam in ipv4 ipv6; do
		[[ -n ${seen[$fam]:-} ]] || continue
		n=$((${x1[$fam.${KF}_checked]} - ${x0[$fam.${KF}_checked]}))
		if [[ $fam == ipv4 ]]; then
			((n == seen[$fam]))
		else
			((n >= seen[$fam]))
		fi
		verdict $? "$ns: $fam: $KF checked $n (pings: ${seen[$fam]})"
		n=$((${x1[$fam.${KF}_dropped]} - ${x0[$fam.${KF}_dropped]}))
		((n == ${drop[$fam]:-0}))
		verdict $? "$ns: $fam: $KF dropped $n (want ${drop[$fam]:-0})"
		n=$((${x1[$fam.${KF}_matched]} - ${x0[$fam.${KF}_matched]}))
		((n == ${match[$fam]:-0}))
		verdict $? "$ns: $fam: $KF matched $n (want ${match[$fam]:-0})"
		n=$((${x1[$fam.checked]} - ${x0[$fam.checked]}))
		if [[ $KF == xdp ]]; then
			((n == 0))
			verdict $? "$ns: $fam: the hook checked $n (XDP passed them)"
			continue
		fi
		want=$((seen[$fam] - ${drop[$fam]:-0}))
		if [[ $fam == ipv4 ]]; then
			((n == want))
		else
			((n >= want))
		fi
		verdict $? "$ns: $fam: the hook checked $n (tc passed $want pings)"
	done
}

# status_is NS WANT: `cuckooctl xdp status -j` in NS lists r1 in mode WANT
# (or no device, WANT "none").
status_is() {
	local out
	out=$(nsx "$1" cuckooctl xdp status -j)
	if [[ $2 == none ]]; then
		[[ $out == '{"devices":[]}' ]]
	else
		[[ $out =~ ^\{\"devices\":\[\{\"device\":\"r1\",\"ifindex\":[0-9]+,\"mode\":\"$2\",\"id\":[0-9]+\}\]\}$ ]]
	fi
	verdict $? "$1: xdp status -j: $out"
}

# attach NS MODE: cuckooctl xdp attach r1 MODE in NS, and status says so.
attach() {
	local out
	out=$(nsx "$1" cuckooctl xdp attach r1 "$2" 2>&1)
	verdict $? "$1: xdp attach r1 $2: $out"
	status_is "$1" "$2"
}

test_native_drops_before_netfilter() {
	local out
	fresh || { fail "reset"; return; }
	ctl add "$A4" "$A6" || fail "add"
	attach "$R" native
	out=$(ctl xdp status)
	[[ $out == *$'\n'"r1               native   "[0-9]* ]]
	verdict $? "xdp status: $out"
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4" drop:"$A6" pass:"$B6"
	ctl xdp detach r1 || fail "xdp detach r1"
	status_is "$R" none
	# Detached: the hook drops them again, and counts it.
	ctl stats -j >"$TMP/before"
	ping_all "$S" 1 0.1 0.1 "$A4"
	out=$(ctl stats -j)
	[[ $out =~ \"ipv4\":\{[^}]*\"dropped\":([0-9]+) && ${BASH_REMATCH[1]} -ge 1 ]]
	verdict $? "detached: the hook dropped ${BASH_REMATCH[1]:-none}"
}

# cuckoo_nf:drop shows the drops of XDP, which never reach nf_log: one
# event per ping dropped, path xdp, none of the hook's; XDP's byte
# counter counts their frames.
test_tracepoint() {
	local tr=/sys/kernel/tracing ev n h b
	local -A st0 st1
	[[ -d $tr/events ]] || mount -t tracefs nodev "$tr" 2>/dev/null
	ev=$tr/events/cuckoo_nf/drop/enable
	[[ -e $ev ]] || { skip_test "no tracefs or no cuckoo_nf:drop"; return; }
	fresh || { fail "reset"; return; }
	ctl add "$A4" || fail "add"
	attach "$R" native
	ns_stats st0 "$R" "$TMP/stats"
	: >"$tr/trace"
	echo 1 >"$ev"
	ping_all "$S" "$NPINGS" 0.1 0.1 "$A4" "$B4"
	echo 0 >"$ev"
	ns_stats st1 "$R" "$TMP/stats"
	# The frames: ping's 56 bytes, the ICMP, IP and Ethernet headers.
	b=$((${st1[ipv4.xdp_dropped_bytes]:-0} - ${st0[ipv4.xdp_dropped_bytes]:-0}))
	((b == NPINGS * (56 + 8 + 20 + 14)))
	verdict $? "XDP's dropped bytes: $b, want $((NPINGS * (56 + 8 + 20 + 14)))"
	n=$(grep -c "drop: netns=[1-9][0-9]* path=xdp family=ipv4 saddr=::ffff:$A4 set=default\$" "$tr/trace")
	h=$(grep -c "drop: .*path=hook" "$tr/trace")
	((n == NPINGS && h == 0))
	verdict $? "cuckoo_nf:drop at XDP: $n events for $A4 (want $NPINGS), $h of the hook's"
	ctl xdp detach r1 || fail "xdp detach r1"
}

test_vlan() {
	fresh || { fail "reset"; return; }
	if ! command -v ethtool >/dev/null; then
		skip_test "ethtool missing: the tags would not be in the frame"
		return
	fi
	[[ $(nsx "$S" ethtool -k s1) == *$'\n'"tx-vlan-offload: off"* ]]
	verdict $? "s1: tx-vlan-offload off, tags in the frame"
	ctl add "$V4A" "$V6A" "$Q4A" || fail "add"
	attach "$R" native
	round "$R" 10.0.10.2 fd10::2 drop:"$V4A" pass:"$V4B" drop:"$V6A" pass:"$V6B"
	round "$R" 10.0.23.2 fd10::2 drop:"$Q4A" pass:"$Q4B"
}

# With a scope the hooks sit at the covered devices' ingress: XDP's mark
# is trusted there as at PRE_ROUTING (round: the hook looks up none of
# the pings XDP passed).  Without the program, the VLAN device r1.10
# named alone has its hook judge VLAN 10's packets, which r1's would not:
# r1's own are delivered.
test_scoped_hooks() {
	fresh || { fail "reset"; return; }
	ctl add "$A4" "$A6" "$V4A" || fail "add"
	ctl hooks on --iif r1 || fail "hooks on --iif r1"
	attach "$R" native
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4" drop:"$A6" pass:"$B6"
	ctl xdp detach r1 || fail "xdp detach r1"
	ctl hooks on --iif r1.10 || fail "hooks on --iif r1.10"
	! nsx "$S" ping -q -n -c 2 -i 0.2 -W 2 -I "$V4A" 10.0.10.2 >/dev/null 2>&1
	verdict $? "--iif r1.10, no XDP: $V4A's pings over VLAN 10 dropped"
	nsx "$S" ping -q -n -c 2 -i 0.2 -W 2 -I "$A4" 10.0.1.2 >/dev/null 2>&1
	verdict $? "--iif r1.10, no XDP: $A4's pings over r1 delivered"
	ctl hooks on || fail "hooks on"
}

test_prefix_and_allow() {
	fresh || { fail "reset"; return; }
	# 10.0.1.0/24 and fd01::/64 blocked, B4 and B6 allowed.
	ctl add 10.0.1.0/24 fd01::/64 || fail "add prefixes"
	ctl create office allow || fail "create office allow"
	ctl add -s office "$B4" "$B6" || fail "add -s office"
	attach "$R" native
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4" drop:"$A6" pass:"$B6"
}

test_monitor() {
	fresh || { fail "reset"; return; }
	ctl add "$A4" "$A6" || fail "add"
	ctl mode monitor || fail "mode monitor"
	attach "$R" native
	round "$R" 10.0.1.2 fd01::2 monitor:"$A4" pass:"$B4" monitor:"$A6" pass:"$B6"
	ctl mode drop || fail "mode drop"
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4"
}

# r1 moves from R (A listed) to R2 (B listed) with the program attached:
# the program answers from the namespace r1 is in.
test_netns_move() {
	fresh || { fail "reset"; return; }
	ctl add "$A4" || fail "add in $R"
	ctl2 add "$B4" || fail "add in $R2"
	attach "$R" native
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4"
	ip -n "$R" link set r1 netns "$R2" && r1_up "$R2"
	verdict $? "r1 moved to $R2"
	status_is "$R2" native
	status_is "$R" none
	round "$R2" 10.0.1.2 fd01::2 pass:"$A4" drop:"$B4"
	ctl2 xdp detach r1
	verdict $? "$R2: xdp detach r1"
	ip -n "$R2" link set r1 netns "$R" && r1_up "$R"
	verdict $? "r1 back in $R"
}

test_generic() {
	local out
	fresh || { fail "reset"; return; }
	ctl add "$A4" "$A6" || fail "add"
	attach "$R" generic
	out=$(ctl xdp attach r1 native 2>&1)
	[[ $? == 1 && $out == "cuckooctl: xdp attach r1: cuckoo_nf's program is attached in generic mode: detach it first (cuckooctl xdp detach r1)" ]]
	verdict $? "native refused beside generic: $out"
	# Attached again in its mode: replaced in place.
	attach "$R" generic
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4" drop:"$A6" pass:"$B6"
	ctl xdp detach r1 || fail "xdp detach r1"
	out=$(ctl xdp detach r1 2>&1)
	[[ $? == 1 && $out == "cuckooctl: xdp detach r1: cuckoo_nf's XDP program is not attached" ]]
	verdict $? "detach again: $out"
}

# The installed object, attached by ip-link(8) as docs/xdp.md says.
test_ip_link() {
	local out
	fresh || { fail "reset"; return; }
	[[ -r $XDP_OBJ ]] || { skip_test "$XDP_OBJ missing"; return; }
	ctl add "$A4" || fail "add"
	if ! out=$(nsx "$R" ip link set dev r1 xdpdrv obj "$XDP_OBJ" sec xdp 2>&1); then
		[[ $out == *"ELF"*"support"* ]] && { skip_test "ip without libbpf: $out"; return; }
		fail "ip link set dev r1 xdpdrv obj $XDP_OBJ: $out"
		return
	fi
	status_is "$R" native
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4"
	ctl xdp detach r1
	verdict $? "xdp detach r1 of ip link's program"
	[[ $(ip -n "$R" link show dev r1) != *prog/xdp* ]]
	verdict $? "r1 has no XDP program"
}

# Another program on r1: attach refuses to replace it, detach to remove
# it, each saying so; it is still there after both.
test_other_program() {
	local out
	fresh || { fail "reset"; return; }
	[[ -r $OTHER_OBJ ]] || { skip_test "$OTHER_OBJ missing"; return; }
	if ! out=$(nsx "$R" ip link set dev r1 xdpgeneric obj "$OTHER_OBJ" sec xdp 2>&1); then
		[[ $out == *"ELF"*"support"* ]] && { skip_test "ip without libbpf: $out"; return; }
		fail "ip link set dev r1 xdpgeneric obj $OTHER_OBJ: $out"
		return
	fi
	defer ip -n "$R" link set dev r1 xdpgeneric off
	out=$(ctl xdp attach r1 2>&1)
	[[ $? == 1 && $out =~ ^"cuckooctl: xdp attach r1: another XDP program is attached (other_xdp, id "[0-9]+", generic mode): not replaced; detach it first (ip link set dev r1 xdp off)"$ ]]
	verdict $? "attach over another program refused: $out"
	out=$(ctl xdp detach r1 2>&1)
	[[ $? == 1 && $out =~ ^"cuckooctl: xdp detach r1: the XDP program attached (other_xdp, id "[0-9]+", generic mode) is not cuckoo_nf's: left attached"$ ]]
	verdict $? "detach of another program refused: $out"
	status_is "$R" none
	[[ $(ip -n "$R" link show dev r1) == *prog/xdp* ]]
	verdict $? "the other program is still attached"
	ip -n "$R" link set dev r1 xdpgeneric off
}

# Without capabilities (an empty bounding set: root keeps none at exec).
test_no_privileges() {
	local out
	fresh || { fail "reset"; return; }
	command -v setpriv >/dev/null || { skip_test "setpriv missing"; return; }
	out=$(nsx "$R" setpriv --bounding-set -all cuckooctl xdp attach r1 2>&1)
	[[ $? == 5 && $out == "cuckooctl: xdp attach r1: permission denied: needs CAP_BPF and CAP_NET_ADMIN (CAP_SYS_ADMIN to inspect attached programs) in the initial user namespace" ]]
	verdict $? "attach without capabilities: $out"
	status_is "$R" none
}

# hook_sees OBJ FAM SRC SEEN: with the program OBJ on r1, pings from SRC
# reach netfilter as from SEEN, and the hook drops every one.
hook_sees() {
	local obj=$1 fam=$2 src=$3 seen=$4 out n
	local -A x0 x1 c0 c1
	[[ -r $obj ]] || { skip_test "$obj missing"; return; }
	if ! out=$(ip -n "$R" link set dev r1 xdpdrv obj "$obj" sec xdp 2>&1); then
		[[ $out == *"ELF"*"support"* ]] && { skip_test "ip without libbpf: $out"; return; }
		fail "ip link set dev r1 xdpdrv obj $obj: $out"
		return
	fi
	snap "$R" x0 c0 || { fail "counters not read"; return; }
	DST4=10.0.1.2 DST6=fd01::2
	ping_all "$S" "$NPINGS" 0.1 0.1 "$src"
	reader() { snap "$R" x1 c1; }
	settle_counters reader x1 c1
	ip -n "$R" link set dev r1 xdpdrv off
	n=$((${c1[cnf_xdp/c${SIDX[$seen]}]:-0} - ${c0[cnf_xdp/c${SIDX[$seen]}]:-0}))
	((n == NPINGS))
	verdict $? "${obj##*/}: $n of $NPINGS echo requests from $src reached netfilter as from $seen"
	n=$((${x1[$fam.dropped]} - ${x0[$fam.dropped]}))
	((n == NPINGS))
	verdict $? "${obj##*/}: the hook dropped $n of them"
}

# The hooks trust a mark only for the source it names, and only with
# their state's secret: neither a forged mark nor a source rewritten after
# the kfunc passed the packet gets past them.
test_mark_not_trusted() {
	fresh || { fail "reset"; return; }
	ctl add "$A4" "$A6" || fail "add"
	hook_sees "$FORGE_OBJ" ipv4 "$A4" "$A4"
	hook_sees "$REWRITE_OBJ" ipv6 "$B6" "$A6"
}

# hold_table: in R, table inet cnf_hold: echo requests from A4, B4, A6
# and B6 queued to QUEUE at prerouting, priority -500 (after XDP and the
# -1000 counters, before cuckoo_nf's hook at -450), and counted in dI
# (I: the source's index in SRCS) at priority 0, once through the hook.
hold_table() {
	local s
	{
		echo "table inet cnf_hold {"
		for s in "$A4" "$B4" "$A6" "$B6"; do
			echo "counter d${SIDX[$s]} { }"
		done
		echo "chain q { type filter hook prerouting priority -500; policy accept;"
		echo "ip saddr { $A4, $B4 } icmp type echo-request queue num $QUEUE"
		echo "ip6 saddr { $A6, $B6 } icmpv6 type echo-request queue num $QUEUE"
		echo "}"
		echo "chain d { type filter hook prerouting priority 0; policy accept;"
		for s in "$A4" "$B4" "$A6" "$B6"; do
			if is_v6 "$s"; then
				echo "ip6 saddr $s icmpv6 type echo-request counter name d${SIDX[$s]}"
			else
				echo "ip saddr $s icmp type echo-request counter name d${SIDX[$s]}"
			fi
		done
		echo "}"
		echo "}"
	} | nsx "$R" nft -f -
}

# queued N: R's QUEUE is bound and holds N packets
# (/proc/net/netfilter/nfnetlink_queue: queue, port id, packets waiting).
queued() {
	local q _p n _
	nsx "$R" cat /proc/net/netfilter/nfnetlink_queue >"$TMP/queues" 2>/dev/null
	while read -r q _p n _; do
		[[ $q == "$QUEUE" && $n == "$1" ]] && return 0
	done <"$TMP/queues"
	return 1
}

# hold_start SRC...: NPINGS echo requests from each SRC, passed by
# cuckoo_nf's program on r1 (with its mark) and held in QUEUE by
# nfq_verdict until hold_release.  1 when they are not all held; with
# HOLD_QUIET=1 that is no failure (the caller tries again).
declare -A HOLD_X HOLD_C
hold_start() {
	local argv n=$((NPINGS * $#)) ok=0
	local -A x1
	rm -f "$TMP/release"
	nsx_argv argv "$R" "$NFQ" "$QUEUE" "$n" 60 "$TMP/release"
	"${argv[@]}" >"$TMP/verdicts" 2>/dev/null &
	PIDS=($!)
	wait_for 10 queued 0 || { fail "nfq_verdict did not bind queue $QUEUE"; return 1; }
	if ! { ns_stats HOLD_X "$R" "$TMP/stats" &&
	       nft_read HOLD_C "$R" "$TMP/nft" table inet cnf_hold; }; then
		fail "counters not read"
		return 1
	fi
	DST4=10.0.1.2 DST6=fd01::2
	ping_all "$S" "$NPINGS" 0.1 0.1 "$@"
	wait_for 10 queued "$n" || ok=1
	ns_stats x1 "$R" "$TMP/stats"
	n=$((${x1[ipv4.xdp_dropped]} + ${x1[ipv6.xdp_dropped]} -
	     ${HOLD_X[ipv4.xdp_dropped]} - ${HOLD_X[ipv6.xdp_dropped]}))
	((n == 0)) || ok=1
	[[ ${HOLD_QUIET:-0} == 1 ]] && return "$ok"
	((ok == 0))
	verdict $? "$((NPINGS * $#)) echo requests held between XDP and the hook (XDP dropped $n)"
	return "$ok"
}

# hold_release SRC...: let the held requests on to cuckoo_nf's hook, which
# must drop every one: the filter, changed since XDP passed them, lists
# each SRC now.  Its counters say it judged them; none was delivered.
hold_release() {
	local fam s i n verdicts want
	local -A x1 c1 seen=()
	touch "$TMP/release"
	wait "${PIDS[@]}"
	PIDS=()
	read -r verdicts <"$TMP/verdicts"
	((verdicts == NPINGS * $#))
	verdict $? "nfq_verdict accepted $verdicts of $((NPINGS * $#)) held"
	reader() { ns_stats x1 "$R" "$TMP/stats" && nft_read c1 "$R" "$TMP/nft" table inet cnf_hold; }
	settle_counters reader x1 c1
	for s; do
		i=cnf_hold/d${SIDX[$s]}
		n=$((${c1[$i]:-0} - ${HOLD_C[$i]:-0}))
		((n == 0))
		verdict $? "$s: $n of $NPINGS held echo requests delivered"
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		seen[$fam]=$((${seen[$fam]:-0} + NPINGS))
	done
	for fam in "${!seen[@]}"; do
		want=${seen[$fam]}
		n=$((${x1[$fam.dropped]} - ${HOLD_X[$fam.dropped]}))
		((n == want))
		verdict $? "$fam: the hook dropped $n of the $want held (mark not trusted)"
	done
}

# hold_abandon: stop holding, whatever becomes of the requests held (the
# queue drops them when nfq_verdict goes; it would wait for those XDP
# dropped).
hold_abandon() {
	kill_all PIDS
}

# A packet that XDP passed before an add, held on its way to the hook
# until after it, is dropped there: its mark is of the filter before.
test_held_add() {
	fresh || { fail "reset"; return; }
	hold_table || { fail "nft table cnf_hold"; return; }
	# A filter, so that the hook is there and the kfunc marks.
	ctl add 10.0.99.1 || fail "add"
	attach "$R" native
	hold_start "$A4" "$A6" || { hold_abandon; return; }
	ctl add "$A4" "$A6" || fail "add $A4 $A6 while held"
	hold_release "$A4" "$A6"
}

# In monitor mode XDP passes listed sources, with a mark; after a switch
# to drop, the hook drops them.
test_held_mode_switch() {
	fresh || { fail "reset"; return; }
	hold_table || { fail "nft table cnf_hold"; return; }
	{ ctl add "$A4" "$A6" && ctl mode monitor; } || fail "add, mode monitor"
	attach "$R" native
	hold_start "$A4" "$A6" || { hold_abandon; return; }
	ctl mode drop || fail "mode drop while held"
	hold_release "$A4" "$A6"
}

# A source that an allow set's exception passed at XDP is dropped at the
# hook once the exception is deleted.
test_held_allow_del() {
	fresh || { fail "reset"; return; }
	hold_table || { fail "nft table cnf_hold"; return; }
	{ ctl add 10.0.1.0/24 fd01::/64 && ctl create office allow &&
		ctl add -s office "$B4" "$B6"; } || fail "add, allow set"
	attach "$R" native
	hold_start "$B4" "$B6" || { hold_abandon; return; }
	ctl del -s office "$B4" "$B6" || fail "del -s office while held"
	hold_release "$B4" "$B6"
}

# Likewise once the exception runs out: expiry changes the filter too.
# The exception must outlive the pings' way through XDP, so that they are
# passed there and held: its timeout is doubled until it did.
test_held_allow_expiry() {
	local t held=1
	fresh || { fail "reset"; return; }
	hold_table || { fail "nft table cnf_hold"; return; }
	{ ctl add 10.0.1.0/24 && ctl create office allow; } || fail "add, allow set"
	attach "$R" native
	for t in 4 8 16 32; do
		ctl add -s office --exist "$B4" timeout "$t" ||
			{ fail "add -s office $B4 timeout $t"; return; }
		HOLD_QUIET=1 hold_start "$B4" && set_has office "$B4" &&
			{ held=0; break; }
		note "$B4 ran out before its pings were held: timeout $t too short"
		hold_abandon
	done
	((held == 0))
	verdict $? "$B4's pings held while it was allowed (timeout $t)"
	((held == 0)) || return
	wait_for $((t + 10)) set_lacks office "$B4"
	verdict $? "$B4 ran out while its pings were held"
	hold_release "$B4"
}

# The other changes of an allow set that end an exception: its contents
# flushed, replaced, the set destroyed.  B4's pings, passed at XDP by the
# exception, are held across each, then dropped at the hook.
office_b4() { ctl create office allow 2>/dev/null; ctl add -s office "$B4"; }
office_replace() { echo 10.0.99.1 | ctl replace -q -s office -; }
test_held_allow_set_ops() {
	local change
	fresh || { fail "reset"; return; }
	hold_table || { fail "nft table cnf_hold"; return; }
	ctl add 10.0.1.0/24 || fail "add"
	attach "$R" native
	for change in "ctl flush -s office" office_replace "ctl destroy office"; do
		note "$change"
		office_b4 || { fail "office: add $B4"; return; }
		hold_start "$B4" || { hold_abandon; return; }
		$change || fail "$change while held"
		hold_release "$B4"
	done
}

# With the namespace's hooks off, only the program filters: listed
# sources are dropped where it is attached and let through where it is
# not; on again, the hook drops them.
test_hooks_off() {
	local out rc n
	local -A x0 x1
	fresh || { fail "reset"; return; }
	ctl add "$A4" "$A6" || fail "add"
	attach "$R" native
	out=$(ctl hooks off 2>&1)
	verdict $? "hooks off: $out"
	out=$(ctl hooks)
	[[ $out == off ]]
	verdict $? "hooks: $out"
	ns_stats x0 "$R" "$TMP/stats"
	[[ ${x0[hooks]:-} == off ]]
	verdict $? "stats -j: hooks ${x0[hooks]:-missing}"
	round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4" drop:"$A6" pass:"$B6"
	# No program, no hooks: nothing drops A4 now, as documented.
	ctl xdp detach r1 || fail "xdp detach r1"
	ns_stats x0 "$R" "$TMP/stats"
	DST4=10.0.1.2 DST6=fd01::2
	ping_all "$S" "$NPINGS" 0.1 0.5 "$A4"
	ns_stats x1 "$R" "$TMP/stats"
	n=$((${x1[ipv4.checked]} - ${x0[ipv4.checked]}))
	((n == 0))
	verdict $? "hooks off, no program: $A4 looked up $n times"
	ctl hooks on || fail "hooks on"
	[[ $(ctl hooks) == on ]]
	verdict $? "hooks on again"
	ns_stats x0 "$R" "$TMP/stats"
	ping_all "$S" "$NPINGS" 0.1 0.5 "$A4"
	ns_stats x1 "$R" "$TMP/stats"
	n=$((${x1[ipv4.dropped]} - ${x0[ipv4.dropped]}))
	((n == NPINGS))
	verdict $? "hooks on: the hook dropped $n of $NPINGS from $A4"
	out=$(ctl hooks maybe 2>&1)
	rc=$?
	[[ $rc == 3 && $out == "cuckooctl: hooks maybe: unknown setting (on or off)" ]]
	verdict $? "hooks maybe: exit $rc: $out"
	# A reset forgets the setting.
	ctl hooks off || fail "hooks off"
	ctl reset || fail "reset"
	ctl add "$A4" || fail "add after reset"
	[[ $(ctl hooks) == on ]]
	verdict $? "after reset: hooks on"
}

# Mark mode with the program attached: it passes a listed source on
# without the kfuncs' mark, so the hook looks the packet up and marks it,
# and an nft rule on meta mark drops it; an unlisted source keeps the
# mark that spares it the hook's lookup.
test_mark_mode() {
	local n
	local -A x0 x1 c0 c1
	fresh || { fail "reset"; return; }
	ctl add "$A4" || fail "add"
	ctl mode mark 0x10/0x10 || fail "mode mark"
	attach "$R" native
	nsx "$R" nft -f - <<-NFT || { fail "nft"; return; }
	table inet cnf_mark {
		counter m { }
		chain in {
			type filter hook input priority 0;
			meta mark & 0x10 == 0x10 counter name m drop
		}
	}
	NFT
	reader() {
		ns_stats x1 "$R" "$TMP/stats" &&
			nft_read c1 "$R" "$TMP/nft" table inet cnf_mark
	}
	ns_stats x0 "$R" "$TMP/stats" || fail "stats"
	nft_read c0 "$R" "$TMP/nft" table inet cnf_mark || fail "nft list"
	DST4=10.0.1.2 DST6=fd01::2
	ping_all "$S" "$NPINGS" 0.1 0.5 "$A4" "$B4"
	settle_counters reader x1 c1
	n=$((${x1[ipv4.xdp_matched]} - ${x0[ipv4.xdp_matched]}))
	((n == NPINGS && ${x1[ipv4.xdp_dropped]} == ${x0[ipv4.xdp_dropped]}))
	verdict $? "XDP matched $n of $NPINGS from $A4, dropped none"
	n=$((${x1[ipv4.checked]} - ${x0[ipv4.checked]}))
	((n == NPINGS))
	verdict $? "the hook looked up $n: $A4's $NPINGS, not $B4's"
	n=$((${x1[ipv4.marked]} - ${x0[ipv4.marked]}))
	((n == NPINGS && ${x1[ipv4.dropped]} == ${x0[ipv4.dropped]}))
	verdict $? "the hook marked $n of $NPINGS, dropped none"
	n=$((${c1[cnf_mark/m]:-0} - ${c0[cnf_mark/m]:-0}))
	((n == NPINGS))
	verdict $? "the nft rule on meta mark dropped $n of $NPINGS"
	nsx "$R" nft delete table inet cnf_mark
}

test_rmmod_while_attached() {
	local out rc
	fresh || { fail "reset"; return; }
	attach "$R" native
	out=$(rmmod cuckoo_nf 2>&1)
	rc=$?
	((rc != 0)) && mod_loaded
	verdict $? "rmmod refused while attached: $out"
	ctl xdp detach r1 || fail "xdp detach r1"
	# The program is freed after an RCU grace period.
	wait_for 10 rmmod cuckoo_nf 2>/dev/null
	verdict $? "rmmod after detach"
	out=$(ctl xdp attach r1 native 2>&1)
	rc=$?
	[[ $rc == 6 && $out == "cuckooctl: xdp attach r1: the kfuncs bpf_cnf_lookup4/6 are not in the kernel: the module is not loaded (modprobe cuckoo_nf)" ]]
	verdict $? "attach without the module: exit $rc: $out"
	mod_loaded || insmod "$CNF_KO"
	[[ -c /dev/cuckoo_nf ]]
	verdict $? "insmod again"
}

# tc_attach NS DEV DIR: cuckoo_tc.o on DEV's DIR (ingress or egress) in
# namespace NS, as docs/xdp.md says; 1 when the test cannot run (skipped), 2
# when the attach failed.
tc_attach() {
	local ns=$1 dev=$2 dir=$3 out
	command -v tc >/dev/null || { skip_test "tc missing"; return 1; }
	[[ -r $TC_OBJ ]] || { skip_test "$TC_OBJ missing"; return 1; }
	tc -n "$ns" qdisc replace dev "$dev" clsact ||
		{ fail "tc qdisc add dev $dev clsact"; return 2; }
	if ! out=$(tc -n "$ns" filter add dev "$dev" "$dir" bpf direct-action \
		   obj "$TC_OBJ" sec tc 2>&1); then
		if [[ $out == *"ELF"*"support"* || $out == *"BPF"*"support"* ]]; then
			skip_test "tc without libbpf: $out"
			return 1
		fi
		fail "tc filter add dev $dev $dir bpf obj $TC_OBJ: $out"
		return 2
	fi
	[[ $(tc -n "$ns" filter show dev "$dev" "$dir") == *cuckoo_tc* ]]
	verdict $? "tc: cuckoo_tc on $dev's $dir"
}

# The tc program drops listed sources before netfilter, tagged or not, and
# counts as the tc path; the hook looks up again what it passed.
test_tc() {
	fresh || { fail "reset"; return; }
	ctl add "$A4" "$A6" "$V4A" "$V6A" "$Q4A" || fail "add"
	tc_attach "$R" r1 ingress || return
	KF=tc round "$R" 10.0.1.2 fd01::2 drop:"$A4" pass:"$B4" drop:"$A6" pass:"$B6"
	if command -v ethtool >/dev/null; then
		KF=tc round "$R" 10.0.10.2 fd10::2 drop:"$V4A" pass:"$V4B" drop:"$V6A" pass:"$V6B"
		KF=tc round "$R" 10.0.23.2 fd10::2 drop:"$Q4A" pass:"$Q4B"
	fi
	ctl mode monitor || fail "mode monitor"
	KF=tc round "$R" 10.0.1.2 fd01::2 monitor:"$A4" pass:"$B4"
	ctl mode drop || fail "mode drop"
	# A move deletes the device's qdiscs, the program with them.
	ip -n "$R" link set r1 netns "$R2" && r1_up "$R2"
	verdict $? "r1 moved to $R2"
	[[ $(tc -n "$R2" qdisc show dev r1) != *clsact* ]]
	verdict $? "$R2: r1 has no clsact qdisc after the move"
	ip -n "$R2" link set r1 netns "$R" && r1_up "$R"
	verdict $? "r1 back in $R"
}

# On the sender's egress, in the sender's namespace: its listed source
# never leaves, the other does, and the sender's tc counters say so.
test_tc_egress() {
	local n drop
	local -A x0 x1 c0 c1
	fresh || { fail "reset"; return; }
	defer nsx "$S" cuckooctl reset
	defer tc -n "$S" qdisc del dev s1 clsact
	nsx "$S" cuckooctl add "$A4" || fail "add in $S"
	tc_attach "$S" s1 egress || return
	if ! { ns_stats x0 "$S" "$TMP/stats" &&
	       nft_read c0 "$R" "$TMP/nft" table inet cnf_xdp; }; then
		fail "counters not read"
		return
	fi
	DST4=10.0.1.2 DST6=fd01::2
	ping_all "$S" "$NPINGS" 0.1 0.5 "$A4" "$B4"
	reader() { ns_stats x1 "$S" "$TMP/stats"; nft_read c1 "$R" "$TMP/nft" table inet cnf_xdp; }
	settle_counters reader c1
	n=$((${c1[cnf_xdp/c${SIDX[$A4]}]:-0} - ${c0[cnf_xdp/c${SIDX[$A4]}]:-0}))
	((n == 0))
	verdict $? "egress: $n of $NPINGS echo requests from $A4 left $S"
	n=$((${c1[cnf_xdp/c${SIDX[$B4]}]:-0} - ${c0[cnf_xdp/c${SIDX[$B4]}]:-0}))
	((n == NPINGS))
	verdict $? "egress: $n of $NPINGS echo requests from $B4 left $S"
	# A request shot at egress fails ping's send (ENOBUFS), and ping sends
	# it again until its wait runs out: each is dropped at least once.
	drop=$((${x1[ipv4.tc_dropped]} - ${x0[ipv4.tc_dropped]}))
	((drop >= NPINGS))
	verdict $? "egress: $S's tc path dropped $drop (at least $NPINGS)"
	n=$((${x1[ipv4.tc_matched]} - ${x0[ipv4.tc_matched]}))
	((n == drop))
	verdict $? "egress: $S's tc path matched $n (dropped $drop)"
	n=$((${x1[ipv4.tc_checked]} - ${x0[ipv4.tc_checked]} - drop))
	((n == NPINGS))
	verdict $? "egress: $S's tc path passed $n (want $NPINGS)"
	tc -n "$S" qdisc del dev s1 clsact
	verdict $? "tc qdisc del dev s1 clsact"
	nsx "$S" cuckooctl reset || fail "reset $S"
}

test_tc_rmmod_while_attached() {
	local out rc
	fresh || { fail "reset"; return; }
	tc_attach "$R" r1 ingress || return
	out=$(rmmod cuckoo_nf 2>&1)
	rc=$?
	((rc != 0)) && mod_loaded
	verdict $? "rmmod refused while the tc program is attached: $out"
	tc -n "$R" qdisc del dev r1 clsact || fail "tc qdisc del dev r1 clsact"
	wait_for 10 rmmod cuckoo_nf 2>/dev/null
	verdict $? "rmmod after the tc program went"
	out=$(tc -n "$R" qdisc add dev r1 clsact 2>&1 &&
	      tc -n "$R" filter add dev r1 ingress bpf direct-action \
		 obj "$TC_OBJ" sec tc 2>&1)
	rc=$?
	((rc != 0)) && [[ $out == *bpf_cnf_skb_lookup* ]]
	verdict $? "tc attach without the module refused: ${out%%$'\n'*}"
	tc -n "$R" qdisc del dev r1 clsact 2>/dev/null
	mod_loaded || insmod "$CNF_KO"
	[[ -c /dev/cuckoo_nf ]]
	verdict $? "insmod again"
}

require_root
require_module
require_cmds nft ping ip
require_file "$NFQ" "make -C selftests"
modprobe -q nfnetlink_queue 2>/dev/null
modprobe -q nft_queue 2>/dev/null
defer kill_all PIDS
# The kfuncs are registered with the module's BTF (see docs/xdp.md).
[[ -e /sys/kernel/btf/cuckoo_nf ]] ||
	ktap_skip_all "cuckoo_nf.ko has no BTF (/sys/kernel/btf/cuckoo_nf): its kfuncs are not registered"
if ! setup; then
	ktap_bail "setup failed"
fi
run_tests
