#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The iptables match `cuckoo` (-m cuckoo --match-set NAME src|dst) with
# real iptables-legacy and iptables-nft (nft_compat), IPv4 and IPv6, and
# the rules-only sets it is meant for.
#
#   sender ns S: 10.0.3.10 (listed), 10.0.3.20       receiver ns R
#                fd03::10 (listed), fd03::20
#      s1 -------------------------------------------- r1  10.0.3.2, fd03::2
#
#   forwarding: S2 10.0.4.10 (listed), 10.0.4.20 -- RT (forwards) -- D 10.0.5.2
#
# R's set xt-block is rules-only and lists the sender's .10 addresses.
# Verdicts come from the rules' own packet counters (iptables -L -v -x),
# read once the pings are done: a rule counts every packet it saw, an
# ACCEPT rule after the cuckoo rule every packet that one let through.
#
# test_rules_only    the set alone drops nothing, the hooks never see it
# test_src           src, DROP, both iptables, both families; the rules'
#                    counters (stats' "rule" path): the packets checked
#                    those both rules counted, the matched ones and their
#                    bytes what the listed source sent; --prometheus
#                    path="rule" as stats -j
# test_invert        ! --match-set
# test_dst_output    dst in OUTPUT: the replies to the listed source
# test_tables        raw and mangle PREROUTING, filter INPUT
# test_port          a listed source dropped on one UDP port, served on another
# test_reject        -j REJECT: the sender sees the ICMP error
# test_log           -j LOG: the kernel log has the line; -j NFLOG counts
# test_forward       FORWARD in a namespace between two others
# test_with_allow    --with-allow: an allow set of the hooks exempts
# test_save_restore  iptables-save | iptables-restore reads the rules back as saved
# test_missing_set   a set that does not exist: refused at insertion, named
# test_destroy_in_use  destroy and reset refused while a rule names the set
# test_rmmod_in_use  the module cannot be removed while a rule uses the match
# test_netns_exit    a namespace deleted with rules holding its sets
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_rules_only test_src test_invert test_dst_output test_tables
	test_port test_reject test_log test_forward test_with_allow
	test_save_restore test_missing_set test_destroy_in_use
	test_rmmod_in_use test_netns_exit"
N=3
S=cnf-xt-s-$$
R=cnf-xt-r-$$
S2=cnf-xt-s2-$$
RT=cnf-xt-rt-$$
D=cnf-xt-d-$$
# Read by lib.sh's ping_argv.
# shellcheck disable=SC2034
DST4=10.0.3.2 DST6=fd03::2
LISTED4=10.0.3.10 OTHER4=10.0.3.20 LISTED6=fd03::10 OTHER6=fd03::20
SET=xt-block
VARIANTS="legacy nft"
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

ctl() { nsx "$R" cuckooctl "$@"; }

# ipt VARIANT FAM ARG...: iptables of VARIANT (legacy, nft) for family
# FAM (4, 6) in the receiver's namespace.
ipt() {
	local v=$1 fam=$2
	shift 2
	ipt_in "$R" "$v" "$fam" "$@"
}

ipt_in() {
	local ns=$1 v=$2 fam=$3 cmd=iptables
	shift 3
	[[ $fam == 6 ]] && cmd=ip6tables
	nsx "$ns" "$cmd-$v" -w "$@"
}

# flush_all: no rule left in any table of R and RT, both iptables, both
# families: one shell per namespace, which flushes the legacy tables that
# exist there (loaded, /proc/net/ip*_tables_names) and nftables' ruleset,
# where iptables-nft keeps its rules.
flush_all() {
	local ns
	for ns in "$R" "$RT"; do
		[[ -e /run/netns/$ns ]] || continue
		# shellcheck disable=SC2016 # expanded by the namespace's bash
		nsx "$ns" bash -c '
			for t in $(cat /proc/net/ip_tables_names); do
				iptables-legacy -w -t "$t" -F
			done
			for t in $(cat /proc/net/ip6_tables_names); do
				ip6tables-legacy -w -t "$t" -F
			done
			nft flush ruleset' 2>/dev/null
	done
	return 0
}

# pkts VARIANT FAM TABLE CHAIN N: the packets rule N of CHAIN counted.
pkts() {
	local v=$1 fam=$2 t=$3 c=$4 n=$5 line
	# iptables-nft warns on stderr of legacy tables beside its own.
	line=$(ipt "$v" "$fam" -t "$t" -L "$c" "$n" -v -x -n 2>/dev/null) || return 1
	read -r line _ <<<"$line"
	echo "$line"
}

# pkts_bytes VARIANT FAM TABLE CHAIN N: "PACKETS BYTES" rule N counted.
pkts_bytes() {
	local v=$1 fam=$2 t=$3 c=$4 n=$5 line p b
	line=$(ipt "$v" "$fam" -t "$t" -L "$c" "$n" -v -x -n 2>/dev/null) || return 1
	read -r p b _ <<<"$line"
	echo "$p $b"
}

# want_pkts WHAT WANT VARIANT FAM TABLE CHAIN N: rule N counted WANT.
want_pkts() {
	local what=$1 want=$2 got
	shift 2
	got=$(pkts "$@")
	[[ $got == "$want" ]]
	verdict $? "$what: $got packets, want $want"
}

# ping_n NS SRC DST [ARG...]: N pings from SRC to DST, its summary on
# stdout.  Nothing is decided by it but REJECT's errors (every one comes
# back before ping ends, as the count includes errors).
ping_n() {
	local ns=$1 src=$2 dst=$3 fam=-4
	shift 3
	is_v6 "$src" && fam=-6
	nsx "$ns" ping "$fam" -q -n -c "$N" -i 0.2 -W 30 "$@" -I "$src" "$dst" 2>&1
}

# pings FAM: N pings from the listed and from the other source of FAM,
# each waiting a second at most for its replies: the counters decide,
# and every request is counted on arrival whether a reply comes or not.
pings() {
	if [[ $1 == 6 ]]; then
		ping_n "$S" "$LISTED6" "$DST6" -W 1 >/dev/null
		ping_n "$S" "$OTHER6" "$DST6" -W 1 >/dev/null
	else
		ping_n "$S" "$LISTED4" "$DST4" -W 1 >/dev/null
		ping_n "$S" "$OTHER4" "$DST4" -W 1 >/dev/null
	fi
}

# proto FAM: the ICMP of FAM, as iptables names it.
proto() { if [[ $1 == 6 ]]; then echo ipv6-icmp; else echo icmp; fi; }
dst_of() { if [[ $1 == 6 ]]; then echo "$DST6"; else echo "$DST4"; fi; }

make_set() {
	ctl create "$SET" block --rules-only >/dev/null &&
		ctl add -s "$SET" "$LISTED4" "$LISTED6" >/dev/null
}

setup() {
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "$LISTED4" "$OTHER4" \
		"$LISTED6" "$OTHER6" || return 1
	# Before the namespaces go (deferred last, run first): their rules
	# hold the module until cleanup_net() gets to them, so a run cut
	# short by its timeout would leave the next test's rmmod refused.
	defer flush_all
	make_set
}

test_rules_only() {
	local -A st
	local out fam
	flush_all
	for fam in 4 6; do
		ipt legacy "$fam" -A INPUT -d "$(dst_of "$fam")" -p "$(proto "$fam")" -j ACCEPT
		pings "$fam"
		want_pkts "IPv$fam: no rule, every ping delivered" $((2 * N)) \
			legacy "$fam" filter INPUT 1
	done
	ns_stats st "$R" "$TMP/stats"
	[[ ${st[ipv4.matched]:-x} == 0 && ${st[ipv6.matched]:-x} == 0 ]]
	verdict $? "the hooks matched nothing (${st[ipv4.matched]:-?}, ${st[ipv6.matched]:-?})"
	out=$(ctl test "$LISTED4")
	[[ $out == *"passes"*"rules-only set"*"$SET"* ]]
	verdict $? "cuckooctl test names the rules-only set: $out"
	out=$(ctl sets)
	[[ $out == *"$SET "*"rules-only"* ]]
	verdict $? "cuckooctl sets shows the flag"
	out=$(ctl save --all)
	[[ $out == *"# cuckoo_nf set $SET block rules-only"* ]]
	verdict $? "cuckooctl save keeps it"
}

# rule_counts ST0 ST1 FAM VARIANT LEN: the "rule" path's counters (stats
# -j) moved between ST0 and ST1 as test_src's two rules of VARIANT saw:
# checked, every packet the cuckoo rule (1) was asked about, its drops
# and the ACCEPT's (2) together; matched, the N pings of LEN bytes of the
# listed source, which rule 1 dropped.
rule_counts() {
	local -n _s0=$1 _s1=$2
	local f=ipv$3 v=$4 fam=$3 len=$5 got p b p2 b2
	read -r p b <<<"$(pkts_bytes "$v" "$fam" filter INPUT 1)"
	read -r p2 b2 <<<"$(pkts_bytes "$v" "$fam" filter INPUT 2)"
	got="$((_s1[$f.rule_checked] - _s0[$f.rule_checked])) $((_s1[$f.rule_checked_bytes] - _s0[$f.rule_checked_bytes]))"
	[[ $got == "$((p + p2)) $((b + b2))" ]] && ((p + p2 >= 2 * N))
	verdict $? "$v IPv$fam: rule checked $got (packets bytes), iptables' rules $((p + p2)) $((b + b2))"
	got="$((_s1[$f.rule_matched] - _s0[$f.rule_matched])) $((_s1[$f.rule_matched_bytes] - _s0[$f.rule_matched_bytes]))"
	[[ $got == "$N $((N * len))" && $got == "$p $b" ]]
	verdict $? "$v IPv$fam: rule matched $got, the listed source sent $N $((N * len)), iptables dropped $p $b"
}

test_src() {
	local v fam len name f got want
	# shellcheck disable=SC2034 # read through rule_counts' namerefs
	local -A st0 st1
	for v in $VARIANTS; do
		for fam in 4 6; do
			flush_all
			ipt "$v" "$fam" -A INPUT -d "$(dst_of "$fam")" -m cuckoo --match-set "$SET" src -j DROP &&
				ipt "$v" "$fam" -A INPUT -d "$(dst_of "$fam")" -p "$(proto "$fam")" -j ACCEPT
			verdict $? "$v IPv$fam: rules inserted"
			ns_stats st0 "$R" "$TMP/stats" || fail "read stats"
			pings "$fam"
			ns_stats st1 "$R" "$TMP/stats" || fail "read stats"
			want_pkts "$v IPv$fam: the listed source's dropped" "$N" "$v" "$fam" filter INPUT 1
			want_pkts "$v IPv$fam: the other's let through" "$N" "$v" "$fam" filter INPUT 2
			# An echo request's IP datagram: 56 bytes of data.
			len=84
			[[ $fam == 6 ]] && len=104
			rule_counts st0 st1 "$fam" "$v" "$len"
		done
	done
	# --prometheus: the same figures under path="rule".
	if ! ctl stats --prometheus >"$TMP/prom" ||
	   ! ns_stats st1 "$R" "$TMP/stats"; then
		fail "read stats"
		return
	fi
	for name in packets_checked:rule_checked bytes_matched:rule_matched_bytes; do
		for f in ipv4 ipv6; do
			got=$(awk -v s="cuckoo_nf_${name%%:*}_total{family=\"$f\",path=\"rule\"}" \
				'$1 == s { print $2 }' "$TMP/prom")
			want=${st1[$f.${name#*:}]}
			[[ -n $got && $got == "$want" ]]
			verdict $? "--prometheus ${name%%:*}{$f,rule} $got, stats -j $want"
		done
	done
}

test_invert() {
	local v fam
	for v in $VARIANTS; do
		for fam in 4 6; do
			flush_all
			ipt "$v" "$fam" -A INPUT -d "$(dst_of "$fam")" -m cuckoo ! --match-set "$SET" src -j DROP &&
				ipt "$v" "$fam" -A INPUT -d "$(dst_of "$fam")" -p "$(proto "$fam")" -j ACCEPT
			pings "$fam"
			want_pkts "$v IPv$fam !: the other source's dropped" "$N" "$v" "$fam" filter INPUT 1
			want_pkts "$v IPv$fam !: the listed one's let through" "$N" "$v" "$fam" filter INPUT 2
		done
	done
}

test_dst_output() {
	local v fam
	for v in $VARIANTS; do
		for fam in 4 6; do
			flush_all
			ipt "$v" "$fam" -A OUTPUT -s "$(dst_of "$fam")" -m cuckoo --match-set "$SET" dst -j DROP &&
				ipt "$v" "$fam" -A OUTPUT -s "$(dst_of "$fam")" -p "$(proto "$fam")" -j ACCEPT
			pings "$fam"
			want_pkts "$v IPv$fam: the replies to the listed source dropped" "$N" "$v" "$fam" filter OUTPUT 1
			want_pkts "$v IPv$fam: the other's sent" "$N" "$v" "$fam" filter OUTPUT 2
		done
	done
}

test_tables() {
	local v t c
	for v in $VARIANTS; do
		flush_all
		for t in raw mangle filter; do
			c=PREROUTING
			[[ $t == filter ]] && c=INPUT
			ipt "$v" 4 -t "$t" -A "$c" -d "$DST4" -m cuckoo --match-set "$SET" src
		done
		pings 4
		for t in raw mangle filter; do
			c=PREROUTING
			[[ $t == filter ]] && c=INPUT
			want_pkts "$v: $t $c counts the listed source" "$N" "$v" 4 "$t" "$c" 1
		done
	done
}

# udp_from SRC PORT: one UDP datagram from SRC to the receiver's PORT,
# by bash itself (/dev/udp), its source set by a route.
udp_from() {
	nsx "$S" ip route replace "$DST4/32" dev s1 src "$1" &&
		nsx "$S" bash -c "echo x >/dev/udp/$DST4/$2"
}

test_port() {
	local v
	for v in $VARIANTS; do
		flush_all
		ipt "$v" 4 -A INPUT -p udp --dport 5000 -m cuckoo --match-set "$SET" src -j DROP &&
			ipt "$v" 4 -A INPUT -p udp -j ACCEPT
		udp_from "$LISTED4" 5000 && udp_from "$LISTED4" 5001 &&
			udp_from "$OTHER4" 5000
		verdict $? "$v: datagrams sent"
		want_pkts "$v: the listed source dropped on port 5000" 1 "$v" 4 filter INPUT 1
		want_pkts "$v: served on 5001, and the other source on 5000" 2 "$v" 4 filter INPUT 2
	done
	nsx "$S" ip route del "$DST4/32" dev s1
}

test_reject() {
	local v fam out src dst
	for v in $VARIANTS; do
		for fam in 4 6; do
			flush_all
			ipt "$v" "$fam" -A INPUT -d "$(dst_of "$fam")" -m cuckoo --match-set "$SET" src -j REJECT
			src=$LISTED4 dst=$DST4
			[[ $fam == 6 ]] && src=$LISTED6 dst=$DST6
			out=$(ping_n "$S" "$src" "$dst")
			[[ $out == *"0 received, +$N errors"* ]]
			verdict $? "$v IPv$fam: the sender got $N errors: ${out//$'\n'/ }"
		done
	done
}

test_log() {
	local v prefix old
	old=$(sysctl -n net.netfilter.nf_log_all_netns 2>/dev/null) || {
		skip_test "no net.netfilter.nf_log_all_netns"
		return
	}
	# LOG writes nothing from a namespace but the first unless told to.
	sysctl -qw net.netfilter.nf_log_all_netns=1
	for v in $VARIANTS; do
		flush_all
		prefix="cnf-xt-$v-$$: "
		ipt "$v" 4 -A INPUT -d "$DST4" -m cuckoo --match-set "$SET" src -j LOG --log-prefix "$prefix" &&
			ipt "$v" 4 -A INPUT -d "$DST4" -m cuckoo --match-set "$SET" src -j NFLOG --nflog-group 7
		verdict $? "$v: LOG and NFLOG rules inserted"
		pings 4
		dmesg | grep -q "$prefix.*SRC=$LISTED4 DST=$DST4"
		verdict $? "$v: the kernel log has the listed source's line"
		! dmesg | grep -q "$prefix.*SRC=$OTHER4"
		verdict $? "$v: and none of the other source"
		want_pkts "$v: NFLOG got the listed source's packets" "$N" "$v" 4 filter INPUT 2
	done
	sysctl -qw net.netfilter.nf_log_all_netns="$old"
}

# The forwarding topology, made at the first use.
fwd_setup() {
	[[ -e /run/netns/$D ]] && return 0
	veth_pair 2 "$S2" "$RT" 10.0.4.1 fd04::1 10.0.4.10 10.0.4.20 &&
		veth_pair 3 "$RT" "$D" 10.0.5.2 fd05::2 10.0.5.1 &&
		nsx "$S2" ip route add 10.0.5.0/24 via 10.0.4.1 &&
		nsx "$D" ip route add 10.0.4.0/24 via 10.0.5.1 &&
		nsx "$RT" sysctl -qw net.ipv4.ip_forward=1 &&
		nsx "$RT" cuckooctl create fwd --rules-only >/dev/null &&
		nsx "$RT" cuckooctl add -s fwd 10.0.4.10 >/dev/null
}

test_forward() {
	local v
	fwd_setup
	verdict $? "three namespaces, the middle one forwarding"
	for v in $VARIANTS; do
		flush_all
		ipt_in "$RT" "$v" 4 -A FORWARD -m cuckoo --match-set fwd src -j DROP &&
			ipt_in "$RT" "$v" 4 -A FORWARD -p icmp --icmp-type echo-request -j ACCEPT
		ping_n "$S2" 10.0.4.10 10.0.5.2 -W 1 >/dev/null
		ping_n "$S2" 10.0.4.20 10.0.5.2 -W 1 >/dev/null
		local got
		got=$(ipt_in "$RT" "$v" 4 -L FORWARD 1 -v -x -n 2>/dev/null | awk '{ print $1 }')
		[[ $got == "$N" ]]
		verdict $? "$v: the listed source's packets dropped in FORWARD ($got, want $N)"
		got=$(ipt_in "$RT" "$v" 4 -L FORWARD 2 -v -x -n 2>/dev/null | awk '{ print $1 }')
		[[ $got == "$N" ]]
		verdict $? "$v: the other's forwarded ($got, want $N)"
	done
}

test_with_allow() {
	local v
	ctl create office allow >/dev/null && ctl add -s office "$LISTED4" >/dev/null
	verdict $? "allow set office lists the listed source too"
	for v in $VARIANTS; do
		flush_all
		ipt "$v" 4 -A INPUT -d "$DST4" -m cuckoo --match-set "$SET" src --with-allow -j DROP &&
			ipt "$v" 4 -A INPUT -d "$DST4" -m cuckoo --match-set "$SET" src -j DROP
		pings 4
		want_pkts "$v: --with-allow: the allowed source passes" 0 "$v" 4 filter INPUT 1
		want_pkts "$v: without it, the set alone decides" "$N" "$v" 4 filter INPUT 2
		! ipt "$v" 4 -A INPUT -m cuckoo --match-set office src --with-allow -j DROP 2>/dev/null
		verdict $? "$v: --with-allow of an allow set refused"
	done
	flush_all
	ctl destroy office >/dev/null
}

# saved VARIANT FAM: iptables-save of filter, without its comments and
# counters.
saved() {
	local cmd=iptables
	[[ $2 == 6 ]] && cmd=ip6tables
	nsx "$R" "$cmd-$1-save" -t filter 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
}

restore() {
	local cmd=iptables
	[[ $2 == 6 ]] && cmd=ip6tables
	nsx "$R" "$cmd-$1-restore" -w
}

test_save_restore() {
	local v fam a b
	for v in $VARIANTS; do
		for fam in 4 6; do
			flush_all
			ipt "$v" "$fam" -A INPUT -p tcp --dport 22 -m cuckoo --match-set "$SET" src -j REJECT &&
				ipt "$v" "$fam" -A INPUT -m cuckoo ! --match-set "$SET" src -j ACCEPT &&
				ipt "$v" "$fam" -A OUTPUT -m cuckoo --match-set "$SET" dst --with-allow -j DROP
			a=$(saved "$v" "$fam")
			[[ $a == *"-A INPUT -p tcp -m tcp --dport 22 -m cuckoo --match-set $SET src -j REJECT"* &&
			   $a == *"-A INPUT -m cuckoo ! --match-set $SET src -j ACCEPT"* &&
			   $a == *"-A OUTPUT -m cuckoo --match-set $SET dst --with-allow -j DROP"* ]]
			verdict $? "$v IPv$fam: iptables-save prints the rules: ${a//$'\n'/ | }"
			flush_all
			restore "$v" "$fam" <<<"$a"
			verdict $? "$v IPv$fam: iptables-restore reads them"
			b=$(saved "$v" "$fam")
			[[ $a == "$b" ]]
			verdict $? "$v IPv$fam: and saves them again the same"
		done
	done
	flush_all
}

# refused PATTERN ARG...: ipt ARG... fails, its error matching PATTERN.
refused() {
	local pat=$1 err
	shift
	if err=$(ipt "$@" 2>&1); then
		note "accepted: $*"
		return 1
	fi
	note "error: ${err//$'\n'/ }"
	# shellcheck disable=SC2053 # PATTERN is a pattern
	[[ $err == $pat ]]
}

test_missing_set() {
	local v
	for v in $VARIANTS; do
		refused "*nosuch*" "$v" 4 -A INPUT -m cuckoo --match-set nosuch src -j DROP
		verdict $? "$v: a missing set refused, by name"
		! ipt "$v" 4 -S INPUT 2>/dev/null | grep -q cuckoo
		verdict $? "$v: no rule left"
	done
	refused "*bad/name*not a set name*" legacy 4 -A INPUT -m cuckoo --match-set bad/name src
	verdict $? "a bad name refused, named"
	refused "*both*src or dst*" legacy 4 -A INPUT -m cuckoo --match-set "$SET" both
	verdict $? "a bad direction refused, named"
}

test_destroy_in_use() {
	local v err out
	for v in $VARIANTS; do
		flush_all
		ipt "$v" 4 -A INPUT -m cuckoo --match-set "$SET" src -j DROP
		set_rules_are 1
		verdict $? "$v: sets counts the rule"
		err=$(ctl destroy "$SET" 2>&1)
		(($? == 1)) && [[ $err == *"in use by 1 iptables rule"* ]]
		verdict $? "$v: destroy refused: $err"
		err=$(ctl reset 2>&1)
		(($? == 1)) && [[ $err == *"in use by iptables rules"* ]]
		verdict $? "$v: reset refused: $err"
		set_has "$SET" "$LISTED4"
		verdict $? "$v: the set is whole"
		flush_all
		# nf_tables destroys a deleted rule after its commit returns.
		wait_for 30 set_rules_are 0
		verdict $? "$v: the rule gone, its count is back to 0"
	done
	ctl destroy "$SET" >/dev/null
	verdict $? "destroyed once no rule names it"
	make_set
	verdict $? "made again"
}

# set_rules_are N: the receiver's set counts N rules.
set_rules_are() {
	[[ $(ctl sets -j) == *"\"name\":\"$SET\""*"\"rules\":$1"* ]]
}

refcnt() { cat /sys/module/cuckoo_nf/refcnt; }
refcnt_is() { [[ $(refcnt) == "$1" ]]; }

test_rmmod_in_use() {
	local v before
	flush_all
	wait_for 30 refcnt_is 0
	before=$(refcnt)
	for v in $VARIANTS; do
		ipt "$v" 4 -A INPUT -m cuckoo --match-set "$SET" src -j DROP
		! rmmod cuckoo_nf 2>/dev/null && mod_loaded
		verdict $? "$v: rmmod refused while a rule uses the match"
		flush_all
		wait_for 30 refcnt_is "$before"
		verdict $? "$v: the rule gone, the module's count is back to $before"
	done
}

# A namespace deleted with its rules in place: its exit frees its sets
# whatever the rules hold, the rules go with their tables, and the
# module's count comes back (cleanup_net() runs after `ip netns del`
# returns: waited for).
test_netns_exit() {
	local v ns=cnf-xt-x-$$
	wait_for 30 refcnt_is 0
	ip netns add "$ns" &&
		nsx "$ns" cuckooctl create gone --rules-only >/dev/null &&
		nsx "$ns" cuckooctl add -s gone 10.0.9.1 >/dev/null
	verdict $? "a namespace with a rules-only set"
	for v in $VARIANTS; do
		ipt_in "$ns" "$v" 4 -A INPUT -m cuckoo --match-set gone src -j DROP &&
			ipt_in "$ns" "$v" 6 -A INPUT -m cuckoo --match-set default src -j DROP
		verdict $? "$v: rules on it and on the default set"
	done
	! refcnt_is 0
	verdict $? "the rules hold the module ($(refcnt))"
	ip netns del "$ns"
	wait_for 60 refcnt_is 0
	verdict $? "the namespace deleted, the module's count is back to 0 ($(refcnt))"
}

require_module
require_root
require_cmds iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft \
	iptables-legacy-save iptables-legacy-restore iptables-nft-save \
	iptables-nft-restore ip6tables-legacy-save ip6tables-legacy-restore \
	ip6tables-nft-save ip6tables-nft-restore nft ping sysctl dmesg rmmod
iptables-legacy -m cuckoo -h >/dev/null 2>&1 ||
	ktap_skip_all "libxt_cuckoo.so not found (XTABLES_LIBDIR=${XTABLES_LIBDIR:-})"
tmpdir TMP || ktap_bail "tmpdir"
setup || ktap_bail "setup: namespaces, veth pair, the set"
run_tests
