#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet-path benchmark of cuckoo_nf against an nftables set and ipset, run
# inside the test VM (userspace/bench/vm/bench-vm starts it; `make bench-vm`).
# Raw measurements are printed as "CNF_BENCH {json}" lines, one per sample;
# the host side (vm_report.py) turns them into the table and build/bench/vm.json.
#
#   init netns                 ns-r (receiver)
#   s0 (pktgen) ---- veth ---- r0 --PRE_ROUTING--> forward --> d0 (dummy)
#   192.0.2.1                  192.0.2.2                     198.51.100.0/24
#
# pktgen sends 60-byte UDP packets to 198.51.100.1 with a random source in a
# range of N addresses: 10.0.0.0 + [0, N) (the blocked set: "blocked" case) or
# 10.128.0.0 + [0, N) (never listed: "pass" case).  The receiver forwards
# what passes to a dummy device, whose tx counter proves the verdicts: all
# dropped, or all passed.  Received packets are counted by IP InReceives.
#
# Contenders, interleaved in every repetition (A B C D E A B C D E ...):
#   none    no hook at all (cuckoo_nf unloaded, no nft chain, no iptable_raw)
#   unused  cuckoo_nf.ko inserted, never configured in the receiver's
#           namespace: it should cost what "none" costs, as it registers
#           no hook there (checked: stats say inactive)
#   cuckoo  cuckoo_nf.ko inserted and `cuckooctl load` of the N addresses
#           (reloaded every repetition, which gives load-time samples too)
#   nft     table ip bench, set blocked { type ipv4_addr }, chain at
#           prerouting priority raw: ip saddr @blocked drop
#   ipset   hash:ip set from `ipset restore`, matched by an iptables (legacy)
#           raw PREROUTING rule -m set --match-set blocked src -j DROP;
#           iptable_raw is unloaded afterwards (an empty raw table keeps its
#           hooks)
# The nft and ipset sets are loaded once per size (timed, with memory
# deltas) and stay loaded; only their hooks come and go.
#
# Then the same with prefix sets (mkdata.py: IPv4 prefixes of 25 lengths,
# shaped like blocklists) of PFX_SIZES prefixes, contenders none, cuckoo
# (`cuckooctl load` of the prefixes), nft (set blocked { type ipv4_addr;
# flags interval; }, same rule) and ipset (hash:net, same rule).  Sources
# are random in a /16: 100.64.0.0/16, which no prefix covers ("pass"), or
# 10.0.0.0/16, covered whole by prefixes of /17 to /32 ("blocked").  Their
# samples carry "set":"prefix".
#
# Then IPv6 prefix sets (mkdata.py: 35 lengths, /19 to /128, shaped like
# country lists) of PFX6_SIZES prefixes, the same contenders in IPv6 (nft:
# table ip6, set { type ipv6_addr; flags interval; }, rule ip6 saddr;
# ipset: hash:net family inet6, matched by ip6tables-legacy's raw table).
# pktgen draws no random IPv6 source (it randomises IPv6 destinations
# only, and its flows do not change the source): a sample sends its
# packets in 4 runs of pktgen, a quarter from each of 4 sources,
# PFX6_PASS_SRCS (in four /32s of 3fff::/30, which no prefix enters, as
# no prefix enters the IPv4 pass case's /16: "pass") or PFX6_BLOCK_SRCS
# (each covered by a prefix of /48, /56, /64 or /128 of 2001:db8::/32,
# which no other prefix enters: "blocked").  Their samples
# carry "set":"prefix6"; the receiver's IPv6 is turned on after the IPv4
# parts (setup_ipv6).
#
# Then named sets, at SETS_SIZES addresses, the address sets' sources:
# contenders none, cuckoo (all addresses in the default set, as above),
# sets (the same addresses dealt into 4 block sets, and an allow set of
# SIZE / 4 other addresses: every blocked packet is also checked against
# the allow set) and, when bench-vm built one (CNF_BENCH_BASE), base: the
# module of another revision with all addresses in its one list.  Their
# samples carry "set":"sets".
#
# Then placement, at PLACE_SIZE addresses (the address sets' sources),
# sent to PLACE_DST, an address of the receiver's: delivered there (IP
# InDelivers counts them), so that filter INPUT sees them too.  cuckoo_nf
# stays inserted, the addresses in its default set and in a rules-only
# set rb (`cuckooctl create rb block --rules-only`), its hooks off
# between contenders; nft's set (ipv4_addr) and two ipsets, hash:ip and
# hash:net (the addresses as /32s), hold the same addresses:
#   none        hooks off (registers no hook), no rule: the baseline
#   hook        `cuckooctl hooks on`: the hooks unscoped (loopback is
#               tested and spared), as in the address sets
#   hook_iif    `hooks on --iif r0`, the receiving device: in scope
#   hook_log    as hook, the default set logging its drops (`cuckooctl
#               set default log on`): a flood of listed sources, nearly
#               every drop past the log's rate limit (counted, not logged)
#   hook_other  `hooks on --iif d0`: every packet (on r0) out of scope,
#               listed or not, passes
#   mark        `mode mark 0x10/0x10`, hooks on, and an nft chain at
#               prerouting priority raw: meta mark and 0x10 == 0x10 drop
#   place_base  when bench-vm built one (CNF_BENCH_BASE): the module of
#               another revision, the addresses in its one list, hooks on
#   xt_raw      iptables (legacy) raw PREROUTING -m cuckoo --match-set rb
#               src -j DROP; xt_in the same in filter INPUT; xtnft_raw
#               and xtnft_in with iptables-nft, when the VM has both
#   ipset_raw, ipset_in  -m set --match-set on the hash:ip, same places
#   ipnet_raw, ipnet_in  the same on the hash:net
#   nft_raw     ip saddr @blocked drop, at prerouting priority raw;
#               nft_in at hook input priority filter
#   floor_raw, floor_in, floor_xtnft_raw, floor_xtnft_in, floor_nft_raw,
#   floor_nft_in  an unconditional drop at the same places (iptables,
#               iptables-nft, nft): what a drop there costs with no
#               match, blocked case only
#   empty_raw, empty_in, empty_xtnft_raw, empty_xtnft_in, empty_nft_raw,
#   empty_nft_in  the table's chain there with no rule (policy ACCEPT;
#               nft: an empty base chain): what the table costs a
#               packet without a rule, pass case only
# A table's hooks go with its contender (iptable_raw and iptable_filter
# unloaded, iptables-nft's table deleted).  Their samples carry
# "set":"place".
#
# Then XDP, at XDP_SIZES addresses, the address sets' sources, native XDP
# on r0 (veth runs it in r0's NAPI poll, before an skb is built for it):
#   none        as above (the netfilter path, no hook)
#   xdp_drop    an XDP program returning XDP_DROP for every packet: the
#               floor of any drop at XDP here (pktgen's and the sending
#               veth's work is in every figure); blocked case only
#   xdp_pass    one returning XDP_PASS for every packet, the floor of a
#               pass at XDP; pass case only
#   cuckoo      cuckoo_nf's netfilter hook, as above
#   nft         the nftables set, as above
#   cuckoo_xdp  the same cuckoo_nf set, and `cuckooctl xdp attach r0
#               native` (left out, with a log line, when this cuckooctl
#               or module cannot)
#   cuckoo_xdp_nohooks  the same, and `cuckooctl hooks off`: XDP alone
#   bpf_hash    a BPF hash map of the addresses (key and value 4 bytes)
#               and a program dropping the sources it holds
#               (bench_xdp.bpf.c, loaded by bpf_xdp.c):
#               what a plain eBPF blocklist costs, per packet and per
#               address
#   xdp_filter  xdp-filter (xdp-tools), `load -m native -f ipv4`, the
#               addresses added one by one with `xdp-filter ip ADDR -m
#               src`, at the sizes its map takes (XDP_FILTER_MAX: its
#               IPv4 map is compiled with max_entries 10000); left out
#               when bench-vm found no xdp-filter to ship
# Their samples carry "set":"xdp"; bpf_hash's and xdp-filter's loads
# print "kind":"xdp_load" samples (memory, fill time).
#
# Then the same in IPv6 at XDP6_SIZES addresses (2001:db8:a:: + [0, N)),
# contenders none, xdp_drop, xdp_pass, cuckoo, cuckoo_xdp and xdp_filter
# (-f ipv6): pktgen draws no random IPv6 source, so every packet of a
# sample comes from one source, 2001:db8:a::1 (blocked) or 2001:db8:b::1
# (pass), to 2001:db8:64::1, forwarded to d0.  Samples carry
# "set":"xdp6".
#
# Then cnf_bench.ko (userspace/bench/kmod) times the filter core against
# rhashtable in kernel context; its kernel log lines are passed on.
#
# Environment (CNF_TEST_* reach the VM):
#   CNF_TEST_BENCH_SIZES    set sizes (default "1000 100000 1000000")
#   CNF_TEST_BENCH_PFX_SIZES  prefix set sizes (default "1000 10000 100000")
#   CNF_TEST_BENCH_PFX6_SIZES  IPv6 prefix set sizes (default "1000 10000
#                           100000"; empty: none)
#   CNF_TEST_BENCH_SETS_SIZES  address counts of the sets part (default
#                           "1000 100000")
#   CNF_TEST_BENCH_XDP_SIZES  address counts of the XDP part (default
#                           "1000 100000 1000000")
#   CNF_TEST_BENCH_XDP6_SIZES  address counts of its IPv6 run (default
#                           "1000"; empty: none)
#   CNF_TEST_BENCH_PLACE_SIZE  addresses of the placement part (default
#                           100000)
#   CNF_TEST_BENCH_PLACE_REPS  its repetitions (default 5)
#   CNF_TEST_BENCH_PLACE_ONLY  its contenders, when only some are wanted
#                           ("none hook hook_log place_base": the hooks'
#                           pass and drop costs beside the base's)
#   CNF_TEST_BENCH_REPS     repetitions (default 7)
#   CNF_TEST_BENCH_REPS_BIG repetitions at sizes >= 1000000 (default 5)
#   CNF_TEST_BENCH_PKTS     packets per sample (default 60000)
#   CNF_TEST_BENCH_MODLOG   cnf_bench max_log: 20 = up to 1M (default),
#                           24 = 16M too (needs ~1400 MB of RAM and adds
#                           10+ minutes of TCG time)
#   CNF_TEST_BENCH_MODOPS   cnf_bench lookups per run (default 1048576)
#   CNF_TEST_BENCH_SKIP     words: "pkt" skips the packet path, "pps" only
#                           its pktgen samples (loads and memory still
#                           measured, but for the XDP part's, measured
#                           with its packets: it is left out), "addr" its
#                           address sets, "prefix"
#                           its prefix sets (IPv4 and IPv6), "sets" its
#                           named sets, "place" its placement part,
#                           "xdp" its XDP part, "mod" the test module
#   CNF_TEST_BENCH_ICOUNT   the VM's -icount shift, when bench-vm boots it
#                           with one (selftests/vm/run CNF_VM_ICOUNT); only
#                           recorded in the meta line for the report
# The address and prefix files and cnf_bench.ko come from bench-vm, in
# /cnf/selftests/bench/ (see make_files).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1

SIZES=${CNF_TEST_BENCH_SIZES:-1000 100000 1000000}
PFX_SIZES=${CNF_TEST_BENCH_PFX_SIZES:-1000 10000 100000}
PFX6_SIZES=${CNF_TEST_BENCH_PFX6_SIZES-1000 10000 100000}
SETS_SIZES=${CNF_TEST_BENCH_SETS_SIZES:-1000 100000}
XDP_SIZES=${CNF_TEST_BENCH_XDP_SIZES:-1000 100000 1000000}
XDP6_SIZES=${CNF_TEST_BENCH_XDP6_SIZES-1000}
PLACE_SIZE=${CNF_TEST_BENCH_PLACE_SIZE:-100000}
PLACE_REPS=${CNF_TEST_BENCH_PLACE_REPS:-5}
REPS=${CNF_TEST_BENCH_REPS:-7}
REPS_BIG=${CNF_TEST_BENCH_REPS_BIG:-5}
PKTS=${CNF_TEST_BENCH_PKTS:-60000}
MODOPS=${CNF_TEST_BENCH_MODOPS:-1048576}
SKIP=${CNF_TEST_BENCH_SKIP:-}
CNF_KO=${CNF_KO:-/cnf/cuckoo_nf.ko}
BENCH_DIR=/cnf/selftests/bench
BENCH_KO=$BENCH_DIR/cnf_bench.ko
NS=ns-r
PG=/proc/net/pktgen
DST=198.51.100.1
BLOCK_BASE=$((10 << 24))
PASS_BASE=$((10 << 24 | 128 << 16))
D=/tmp/cnf-bench
CONTENDERS=(none unused cuckoo nft ipset)
PFX_CONTENDERS=(none cuckoo nft ipset)
SETS_CONTENDERS=(none cuckoo sets)
PLACE_CONTENDERS=(none hook hook_log hook_iif hook_other mark place_base
	xt_raw ipset_raw ipnet_raw nft_raw xtnft_raw
	floor_raw floor_nft_raw floor_xtnft_raw
	empty_raw empty_nft_raw empty_xtnft_raw
	xt_in ipset_in ipnet_in nft_in xtnft_in
	floor_in floor_nft_in floor_xtnft_in
	empty_in empty_nft_in empty_xtnft_in)
# The placement part's destination, an address of the receiver's.
PLACE_DST=203.0.113.1
XDP_CONTENDERS=(none xdp_drop xdp_pass cuckoo nft cuckoo_xdp cuckoo_xdp_nohooks
	bpf_hash xdp_filter)
# bpf_xdp with its programs' object, and xdp-filter (its libraries come
# along; its BPF objects in xdp-tools/bpf), from bench-vm; the bpffs their
# links and maps are pinned on.
BPF_XDP=$BENCH_DIR/bpf_xdp
BPF_XDP_OBJ=$BENCH_DIR/bench_xdp.bpf.o
XDP_TOOLS=$BENCH_DIR/xdp-tools
XDP_FILTER_MAX=10000
# What the XDP part sends: IPv4 (random sources) or IPv6 (one source a
# sample, FAM=ipv6); xdp-filter's feature and map for it.
FAM=ipv4
XF_FEAT=ipv4
XF_MAP=filter_ipv4
SRC6_BLOCK=2001:db8:a::1
SRC6_PASS=2001:db8:b::1
DST6=2001:db8:64::1
BPFFS=/sys/fs/bpf
BASE_KO=$BENCH_DIR/base/cuckoo_nf.ko
# The prefix sets' source ranges (mkdata.py's BLOCK_NET and PASS_NET): a /16
# covered whole, and one no prefix covers.
PFX_BLOCK_BASE=$((10 << 24))
PFX_PASS_BASE=$((100 << 24 | 64 << 16))
PFX_RANGE=65536
# The IPv6 prefix sets' sources (mkdata.py's BLOCK6 covers the first four,
# and no prefix enters its PASS6, where the others are).
PFX6_BLOCK_SRCS="2001:db8:a::1 2001:db8:b::1 2001:db8:c::1 2001:db8:d::1"
PFX6_PASS_SRCS="3fff:0:f::1 3fff:1:f::1 3fff:2:f::1 3fff:3:f::1"

# What bench_size measures: "addr" (address sets of SIZE addresses, random
# sources in ranges of SIZE) or "prefix" (prefix sets of SIZE prefixes,
# random sources in ranges of PFX_RANGE).  Set by main.
SET=addr
RANGE=0

IPT=iptables-legacy
command -v "$IPT" >/dev/null || IPT=iptables
IPT6=ip6tables-legacy
command -v "$IPT6" >/dev/null || IPT6=ip6tables
# nft's table family and address match of what is sent (FAM): ip or ip6.
NFT_FAM=ip

die() {
	echo "bench: FAIL: $*" >&2
	cleanup
	exit 1
}

log() { echo "bench: [$(cut -d" " -f1 /proc/uptime)] $*" >&2; }

# One raw sample, for the host side.
emit() { echo "CNF_BENCH $*"; }

inns() { ip netns exec "$NS" "$@"; }

cleanup() {
	[[ -z ${HOLD:-} ]] || kill "$HOLD" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	ip link del s0 2>/dev/null
	rmmod iptable_raw 2>/dev/null
	rmmod ip6table_raw 2>/dev/null
	true
}

# Kernel memory in kB: slab (kmalloc_large included), vmalloc, free.
meminfo() {
	awk '/^Slab:/ { s = $2 } /^VmallocUsed:/ { v = $2 }
	     /^MemFree:/ { f = $2 } END { print s, v, f }' /proc/meminfo
}

# Let RCU-deferred frees finish before memory is read: kvfree_rcu() (the
# filter's replaced tables) batches for up to 5 s in 6.1 before its grace
# period even starts.
settle() {
	sync
	sleep 7
}

# ip4 X: address X (a number) in dotted form.
ip4() {
	echo "$(($1 >> 24 & 255)).$(($1 >> 16 & 255)).$(($1 >> 8 & 255)).$(($1 & 255))"
}

# dotted N BASE: addresses BASE .. BASE + N - 1, one per line.
dotted() {
	awk -v n="$1" -v base="$2" 'BEGIN {
		for (i = 0; i < n; i++) {
			x = base + i
			printf "%d.%d.%d.%d\n", int(x / 16777216) % 256,
				int(x / 65536) % 256, int(x / 256) % 256, x % 256
		}
	}'
}

# ---- setup ----

setup_net() {
	local m
	for m in veth dummy pktgen; do
		modprobe "$m" || die "cannot load $m"
	done
	ip netns add "$NS" || die "ip netns add"
	ip link add s0 type veth peer name r0 netns "$NS" || die "veth"
	ip addr add 192.0.2.1/24 dev s0
	ip link set s0 up
	inns ip link set lo up
	inns ip addr add 192.0.2.2/24 dev r0
	inns ip link set r0 up
	inns ip link add d0 type dummy
	inns ip link set d0 up
	inns ip route add 198.51.100.0/24 dev d0
	# shellcheck disable=SC2016 # for the inner shell
	inns sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward
		for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 >$f; done
		echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6' ||
		die "receiver sysctls"
	R0_MAC=$(inns cat /sys/class/net/r0/address)
	# A process in the receiver's namespace: its /proc/PID/net shows the
	# receiver's counters without a fork per read.
	ip netns exec "$NS" sleep 1000000 &
	HOLD=$!
	sleep 1
	[[ -d $PG ]] || die "no $PG"
}

setup_pktgen() {
	local t
	for t in "$PG"/kpktgend_*; do
		echo rem_device_all >"$t"
	done
	echo "add_device s0" >"$PG/kpktgend_0" || die "pktgen add_device"
	for t in "clone_skb 0" "pkt_size 60" "delay 0" "dst $DST" \
		"dst_mac $R0_MAC" "udp_src_min 9" "udp_src_max 9" \
		"udp_dst_min 9" "udp_dst_max 9" "flag IPSRC_RND"; do
		echo "$t" >"$PG/s0" || die "pktgen: $t"
	done
}

# "InReceives d0-tx": IP InReceives counts every packet ip_rcv() saw,
# dropped by a hook or not (Ip6InReceives, ipv6_rcv(), for FAM=ipv6); the
# dummy's tx counter what was forwarded.
counters() {
	local a b rx fwd ip dlv
	if [[ $FAM == ipv6 ]]; then
		while read -r a b; do
			[[ $a == Ip6InReceives ]] && rx=$b
		done <"/proc/$HOLD/net/snmp6"
	else
		while read -r -a ip; do
			[[ ${ip[0]} == Ip: && ${ip[1]} == [0-9]* ]] && rx=${ip[3]} &&
				dlv=${ip[9]}
		done <"/proc/$HOLD/net/snmp"
	fi
	while read -r a b; do
		[[ $a == d0: ]] && read -ra fwd <<<"$b"
	done <"/proc/$HOLD/net/dev"
	# The placement part's packets are delivered to the receiver: IP
	# InDelivers counts them instead.
	[[ $SET == place ]] && fwd[9]=$dlv
	echo "$rx ${fwd[9]}"
}

# pkts N BASE: send N packets from random sources in BASE + [0, RANGE)
# (FAM=ipv6: BASE is a list of IPv6 addresses, each the source of an
# equal share of the N, one pktgen run each).  Prints "usec received
# forwarded", the runs' sums.
pkts() {
	local n=$1 base=$2 c0 c1 line usec=0 u i=0 k src srcs=("$2")
	[[ $FAM == ipv6 ]] && read -ra srcs <<<"$base"
	read -ra c0 <<<"$(counters)"
	for src in "${srcs[@]}"; do
		k=$((n / ${#srcs[@]} + (i < n % ${#srcs[@]})))
		i=$((i + 1))
		echo "count $k" >"$PG/s0"
		if [[ $FAM == ipv6 ]]; then
			echo "src6 $src" >"$PG/s0"
		else
			echo "src_min $(ip4 "$src")" >"$PG/s0"
			echo "src_max $(ip4 $((src + RANGE - 1)))" >"$PG/s0"
		fi
		echo start >"$PG/pgctrl" || die "pktgen start"
		u=
		while read -r line; do
			[[ $line =~ ^Result:\ OK:\ ([0-9]+)\( ]] && u=${BASH_REMATCH[1]}
		done <"$PG/s0"
		[[ -n $u ]] || die "pktgen: $(grep -A1 '^Result:' "$PG/s0")"
		usec=$((usec + u))
	done
	read -ra c1 <<<"$(counters)"
	echo "$usec $((c1[0] - c0[0])) $((c1[1] - c0[1]))"
}

# IPv6 in the receiver (off until now: no neighbour discovery in the IPv4
# samples), forwarding DST6's /64 to d0; pktgen sending IPv6 to it.  Once.
setup_ipv6() {
	[[ -z ${IPV6_UP:-} ]] || return 0
	IPV6_UP=1
	# shellcheck disable=SC2016 # for the inner shell
	inns sh -c 'for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do
			echo 0 >$f; done
		echo 1 >/proc/sys/net/ipv6/conf/all/forwarding' ||
		die "receiver IPv6 sysctls"
	inns ip -6 route add "${DST6%::*}::/64" dev d0 || die "IPv6 route to d0"
	echo "dst6 $DST6" >"$PG/s0" || die "pktgen: dst6 $DST6"
	# Let DAD and the first router solicitations pass.
	sleep 3
}

# ---- contenders ----

# Files of a size: the list ($LIST: "addrs" or "prefixes", cuckooctl
# load), "nft" (nft -f), "ipset" (ipset restore).  bench-vm writes them on
# the host (awk takes minutes for 1M lines under TCG) and they arrive in
# $DATA/SIZE (addresses), $DATA/prefix/SIZE and $DATA/prefix6/SIZE
# (prefixes); addresses are
# made here when missing.
DATA=$BENCH_DIR
LIST=addrs

make_files() {
	mkdir -p "$D"
	if [[ $SET == xdp6 ]]; then
		F=$D
		awk -v n="$SIZE" 'BEGIN {
			for (i = 0; i < n; i++)
				printf "2001:db8:a::%x:%x\n", int(i / 65536), i % 65536
		}' >"$F/addrs"
		return
	fi
	if [[ $SET == sets ]]; then
		F=$DATA/$SIZE S=$DATA/sets/$SIZE
		[[ -f $F/addrs && -f $S/block0 && -f $S/allow ]] ||
			die "no set files in $S (bench-vm writes them)"
		return
	fi
	if [[ $SET == prefix* ]]; then
		F=$DATA/$SET/$SIZE
		[[ -f $F/prefixes && -f $F/nft && -f $F/ipset ]] ||
			die "no prefix files in $F (bench-vm writes them)"
		return
	fi
	F=$DATA/$SIZE
	[[ -f $F/addrs && -f $F/nft && -f $F/ipset ]] && return
	F=$D
	log "size $SIZE: generating address files in the VM"
	dotted "$SIZE" "$BLOCK_BASE" >"$F/addrs"
	awk '{ a = a (NR % 1000 == 1 ? "" : ", ") $0 }
	     NR % 1000 == 0 { print "add element ip bench blocked { " a " }"; a = "" }
	     END { if (a != "") print "add element ip bench blocked { " a " }" }' \
		"$F/addrs" >"$F/nft"
	{
		echo "create blocked hash:ip family inet maxelem $((SIZE < 65536 ? 65536 : SIZE))"
		sed 's/^/add blocked /' "$F/addrs"
	} >"$F/ipset"
}

# timed CMD...: run CMD quietly in the receiver's namespace, timed from
# there (not counting `ip netns exec`); T="real user sys" seconds, real to
# the microsecond (a small load takes a few milliseconds).
# Its status.
timed() {
	local rc
	# shellcheck disable=SC2016 # for the inner shell
	T=$(inns bash -c 'TIMEFORMAT="%3U %3S"
		s=$EPOCHREALTIME
		{ time "$@" >/dev/null 2>"$0"; } 2>"$0.t"
		rc=$?
		e=$EPOCHREALTIME
		us=$((${e/./} - ${s/./}))
		printf "%d.%06d %s\n" $((us / 1000000)) $((us % 1000000)) "$(<"$0.t")"
		exit $rc' "$D/cmd.err" "$@")
	rc=$?
	((rc == 0)) || cat "$D/cmd.err" >&2
	return $rc
}

# load_sample CONTENDER REP BEFORE AFTER TOOL_BYTES [KEYS], after timed:
# KEYS, cuckoo_nf's lookup keys (a prefix expands into several).
load_sample() {
	local b a t
	read -ra b <<<"$3"
	read -ra a <<<"$4"
	read -ra t <<<"$T"
	emit "{\"kind\":\"load\",\"set\":\"$SET\",\"size\":$SIZE,\"contender\":\"$1\",\"rep\":$2,\"sec\":${t[0]},\"user\":${t[1]},\"sys\":${t[2]},\"slab_kb\":$((a[0] - b[0])),\"vmalloc_kb\":$((a[1] - b[1])),\"memfree_kb\":$((b[2] - a[2])),\"tool_bytes\":$5,\"keys\":${6:-null}}"
}

cuckoo_on() {
	local rep=$1 m0 m1 st
	insmod "${KO:-$CNF_KO}" || die "insmod ${KO:-$CNF_KO}"
	sleep 1
	m0=$(meminfo)
	timed cuckooctl load "$F/$LIST" || die "cuckooctl load $F/$LIST"
	settle
	m1=$(meminfo)
	read -r -a st <<<"$(inns cuckooctl stats -j |
		jq -r --arg f "$FAM" '"\(.[$f].bytes) \(.[$f].keys // "null")"')"
	load_sample "${CONTENDER:-cuckoo}" "$rep" "$m0" "$m1" "${st[0]:-null}" \
		"${st[1]:-null}"
}

# The module of another revision, its one list loaded as cuckoo's.
base_on() { KO=$BASE_KO CONTENDER=base cuckoo_on "$1"; }
base_off() { cuckoo_off; }

# 4 block sets and an allow set (mkdata.py's sets/SIZE files).
sets_on() {
	local k
	insmod "$CNF_KO" || die "insmod $CNF_KO"
	for k in 0 1 2 3; do
		{ inns cuckooctl create "block$k" >/dev/null &&
			inns cuckooctl -s "block$k" load "$S/block$k" >/dev/null; } ||
			die "set block$k"
	done
	{ inns cuckooctl create ok allow >/dev/null &&
		inns cuckooctl -s ok load "$S/allow" >/dev/null; } || die "set ok"
}

sets_off() { cuckoo_off; }

cuckoo_off() {
	local i
	# A detached XDP program holds the module until its deferred free.
	for ((i = 0; i < 50; i++)); do
		rmmod cuckoo_nf 2>/dev/null && return
		sleep 0.1
	done
	rmmod cuckoo_nf || die "rmmod cuckoo_nf"
}

unused_on() {
	local active
	insmod "$CNF_KO" || die "insmod $CNF_KO"
	active=$(inns cuckooctl stats -j | jq -r '.active')
	[[ $active == false ]] ||
		log "WARNING: unused: the receiver's namespace is active ($active)"
}

unused_off() {
	local active
	active=$(inns cuckooctl stats -j | jq -r '.active')
	[[ $active == false ]] ||
		log "WARNING: unused: traffic made the namespace active ($active)"
	rmmod cuckoo_nf || die "rmmod cuckoo_nf"
}

cuckoo_dropped() { inns cuckooctl stats -j | jq ".$FAM.dropped"; }

nft_load() {
	local m0 m1 type=ipv4_addr spec
	[[ $NFT_FAM == ip6 ]] && type=ipv6_addr
	spec="{ type $type; }"
	[[ $SET == prefix* ]] && spec="{ type $type; flags interval; }"
	inns nft add table "$NFT_FAM" bench || die "nft add table"
	inns nft add set "$NFT_FAM" bench blocked "$spec" || die "nft add set"
	settle
	m0=$(meminfo)
	timed nft -f "$F/nft" || die "nft -f"
	settle
	m1=$(meminfo)
	load_sample nft 0 "$m0" "$m1" null
}

nft_on() {
	inns nft -f - <<-EOF || die "nft chain"
		add chain $NFT_FAM bench pre { type filter hook prerouting priority raw; }
		add rule $NFT_FAM bench pre $NFT_FAM saddr @blocked drop
	EOF
}

nft_off() {
	inns nft -f - <<-EOF || die "nft delete chain"
		flush chain $NFT_FAM bench pre
		delete chain $NFT_FAM bench pre
	EOF
}

nft_unload() { inns nft delete table "$NFT_FAM" bench; }

ipset_load() {
	local m0 m1 bytes type=ip
	[[ $SET == prefix* ]] && type=net
	modprobe "ip_set_hash_$type" || die "modprobe ip_set_hash_$type"
	settle
	m0=$(meminfo)
	timed ipset restore <"$F/ipset" || die "ipset restore"
	settle
	m1=$(meminfo)
	bytes=$(inns ipset list -t blocked | awk '/^Size in memory:/ { print $4 }')
	load_sample ipset 0 "$m0" "$m1" "${bytes:-null}"
}

# iptables, or ip6tables for FAM=ipv6, and its raw table's module.
ipt() {
	if [[ $FAM == ipv6 ]]; then
		echo "$IPT6 ip6table_raw"
	else
		echo "$IPT iptable_raw"
	fi
}

ipset_on() {
	local t
	read -ra t <<<"$(ipt)"
	inns "${t[0]}" -t raw -A PREROUTING -m set --match-set blocked src \
		-j DROP || die "${t[0]} -m set"
}

ipset_off() {
	local t
	read -ra t <<<"$(ipt)"
	inns "${t[0]}" -t raw -F PREROUTING || die "${t[0]} -F"
	rmmod "${t[1]}" || die "rmmod ${t[1]}"
}

ipset_unload() { inns ipset destroy blocked; }

none_on() { :; }
none_off() { :; }

# ---- XDP contenders ----

# innet CMD...: CMD in the receiver's network namespace and no other: `ip
# netns exec` mounts a sysfs of its own on /sys, which hides the bpffs.
innet() { nsenter --net="$NETNS_FILE" "$@"; }

# The link of bpf_xdp's program, on the bpffs.
XDP_PIN=$BPFFS/cnf_bench_xdp

# xdp_prog_on MODE [FILE]: bpf_xdp's program MODE on r0; its JSON line in
# $D/bpf_xdp.json.
xdp_prog_on() {
	innet "$BPF_XDP" "$1" "$BPF_XDP_OBJ" r0 "$XDP_PIN" ${2:+"$2"} \
		>"$D/bpf_xdp.json" || die "bpf_xdp $1 $BPF_XDP_OBJ r0 $XDP_PIN $*"
}

xdp_prog_off() { rm "$XDP_PIN" || die "rm $XDP_PIN"; }

# xdp_contenders [LEFT_OUT...]: in cs, the XDP part's contenders at SIZE
# but LEFT_OUT (xdp-filter only up to the entries its maps hold).
xdp_contenders() {
	local c
	cs=()
	for c in "${XDP_HAVE[@]}"; do
		[[ " $* " == *" $c "* ]] && continue
		[[ $c == xdp_filter ]] && ((SIZE > XDP_FILTER_MAX)) && continue
		cs+=("$c")
	done
}

xdp_drop_on() { xdp_prog_on drop; }
xdp_drop_off() { xdp_prog_off; }
xdp_pass_on() { xdp_prog_on pass; }
xdp_pass_off() { xdp_prog_off; }

# The hash map made and filled every repetition: its memory and fill time
# as a sample each time.
bpf_hash_on() {
	xdp_prog_on hash "$F/addrs"
	emit "{\"kind\":\"xdp_load\",\"set\":\"$SET\",\"size\":$SIZE,\"contender\":\"bpf_hash\",\"rep\":$1,\"info\":$(<"$D/bpf_xdp.json")}"
}

bpf_hash_off() { xdp_prog_off; }

cuckoo_xdp_on() {
	CONTENDER=${CONTENDER:-cuckoo_xdp} cuckoo_on "$1"
	innet cuckooctl xdp attach r0 native >/dev/null ||
		die "cuckooctl xdp attach r0 native"
}

cuckoo_xdp_off() {
	innet cuckooctl xdp detach r0 >/dev/null || die "cuckooctl xdp detach r0"
	cuckoo_off
}

cuckoo_xdp_nohooks_on() {
	CONTENDER=cuckoo_xdp_nohooks cuckoo_xdp_on "$1"
	inns cuckooctl hooks off || die "cuckooctl hooks off"
}

cuckoo_xdp_nohooks_off() { cuckoo_xdp_off; }

# xdpf ARG...: xdp-filter, its BPF objects (and libxdp's dispatcher)
# from XDP_TOOLS.
xdpf() {
	LIBXDP_OBJECT_PATH=$XDP_TOOLS/bpf "$XDP_TOOLS/xdp-filter" "$@"
}

# Load xdp-filter with the SIZE addresses, one `xdp-filter ip` each, timed
# (the kernel memory it took too), and unload it keeping its maps: every
# repetition loads it again on them.
xdp_filter_fill() {
	local m0 m1 t0 t1 map info a
	xdpf unload -a >/dev/null 2>&1
	settle
	m0=$(meminfo)
	t0=$EPOCHREALTIME
	innet env LIBXDP_OBJECT_PATH="$XDP_TOOLS/bpf" "$XDP_TOOLS/xdp-filter" \
		load -m native -f "$XF_FEAT" r0 || die "xdp-filter load -m native -f $XF_FEAT r0"
	while read -r a; do
		xdpf ip -m src "$a" || die "xdp-filter ip -m src $a"
	done <"$F/addrs"
	t1=$EPOCHREALTIME
	m1=$(meminfo)
	map=$(find "$BPFFS" -name "$XF_MAP" | head -n1)
	info=null
	[[ -n $map ]] && info=$("$BPF_XDP" info "$map")
	innet env LIBXDP_OBJECT_PATH="$XDP_TOOLS/bpf" "$XDP_TOOLS/xdp-filter" \
		unload -k r0 || die "xdp-filter unload -k r0"
	read -ra m0 <<<"$m0"
	read -ra m1 <<<"$m1"
	emit "{\"kind\":\"xdp_load\",\"set\":\"$SET\",\"size\":$SIZE,\"contender\":\"xdp_filter\",\"rep\":0,\"info\":{\"entries\":$SIZE,\"fill_sec\":$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'),\"kernel_bytes\":$(((m1[0] - m0[0] + m1[1] - m0[1]) * 1024)),\"map\":$info}}"
}

xdp_filter_on() {
	innet env LIBXDP_OBJECT_PATH="$XDP_TOOLS/bpf" "$XDP_TOOLS/xdp-filter" \
		load -m native -f "$XF_FEAT" r0 || die "xdp-filter load -m native -f $XF_FEAT r0"
}

xdp_filter_off() {
	innet env LIBXDP_OBJECT_PATH="$XDP_TOOLS/bpf" "$XDP_TOOLS/xdp-filter" \
		unload -k r0 || die "xdp-filter unload -k r0"
}

# The XDP part's contenders this VM can run: the bpffs mounted, cuckoo_xdp
# tried once (attach and detach with a set loaded), xdp-filter present.
xdp_setup() {
	local p err
	grep -q "^[^ ]* $BPFFS bpf " /proc/mounts ||
		mount -t bpf bpf "$BPFFS" ||
		die "mount -t bpf bpf $BPFFS"
	for p in /run/netns /var/run/netns; do
		[[ -e $p/$NS ]] && NETNS_FILE=$p/$NS
	done
	[[ -n ${NETNS_FILE:-} ]] || die "no netns file of $NS"
	mkdir -p "$D"
	[[ -x $BPF_XDP ]] || die "no $BPF_XDP (bench-vm builds it)"
	XDP_HAVE=()
	for p in "${XDP_CONTENDERS[@]}"; do
		case $p in
		cuckoo_xdp_nohooks)
			[[ " ${XDP_HAVE[*]} " == *" cuckoo_xdp "* ]] || continue
			;;
		cuckoo_xdp)
			insmod "$CNF_KO" || die "insmod $CNF_KO"
			if ! inns cuckooctl add 10.255.255.255 >/dev/null ||
			   ! err=$(innet cuckooctl xdp attach r0 native 2>&1); then
				log "cuckoo_nf at XDP left out: ${err:-cuckooctl add failed}"
				rmmod cuckoo_nf
				continue
			fi
			innet cuckooctl xdp detach r0 >/dev/null ||
				die "cuckooctl xdp detach r0"
			cuckoo_off
			;;
		xdp_filter)
			if [[ ! -x $XDP_TOOLS/xdp-filter ]]; then
				log "xdp-filter left out: not in $XDP_TOOLS (bench-vm ships Debian's xdp-tools)"
				continue
			fi
			;;
		esac
		XDP_HAVE+=("$p")
	done
}

# is_xdp CONTENDER: whether it drops at XDP (before IP sees a packet).
is_xdp() { [[ $1 == xdp_* || $1 == cuckoo_xdp* || $1 == bpf_hash ]]; }

# cases_of CONTENDER: the cases it is measured in.
cases_of() {
	case $1 in
	xdp_drop | floor_*) echo blocked ;;
	empty_*) echo pass ;;
	xdp_pass) echo pass ;;
	*) echo blocked pass ;;
	esac
}

# measure CONTENDER REP: both cases, one sample each.
measure() {
	local c=$1 rep=$2 case base want_rx want_fwd r usec rx fwd d0 d1
	for case in $(cases_of "$c"); do
		if [[ $case == blocked ]]; then
			base=$BLOCK_BASE
			[[ $SET == prefix ]] && base=$PFX_BLOCK_BASE
			[[ $FAM == ipv6 ]] && base=$SRC6_BLOCK
			[[ $SET == prefix6 ]] && base=$PFX6_BLOCK_SRCS
		else
			base=$PASS_BASE
			[[ $SET == prefix ]] && base=$PFX_PASS_BASE
			[[ $FAM == ipv6 ]] && base=$SRC6_PASS
			[[ $SET == prefix6 ]] && base=$PFX6_PASS_SRCS
		fi
		[[ $c == cuckoo || $c == sets ]] && d0=$(cuckoo_dropped)
		read -ra r <<<"$(pkts "$PKTS" "$base")"
		((${#r[@]} == 3)) || die "no pktgen result for $c/$case"
		usec=${r[0]} rx=${r[1]} fwd=${r[2]}
		# Verdicts: with a filter, blocked packets never reach d0; at
		# XDP, or at the receiving device's ingress (hooks scoped to
		# it), never IP either.
		want_rx=$PKTS want_fwd=$rx
		if [[ $c != none && $c != unused && $c != hook_other &&
			$case == blocked ]]; then
			want_fwd=0
			is_xdp "$c" || [[ $c == hook_iif ]] && want_rx=0
		fi
		((rx == want_rx && fwd == want_fwd)) ||
			log "WARNING: $c/$case: sent $PKTS, received $rx, forwarded $fwd (expected $want_rx, $want_fwd)"
		if [[ $c == cuckoo || $c == sets ]]; then
			d1=$(cuckoo_dropped)
			[[ $case == pass ]] || ((d1 - d0 == PKTS)) ||
				log "WARNING: cuckoo dropped $((d1 - d0)) of $PKTS"
		fi
		emit "{\"kind\":\"pps\",\"set\":\"$SET\",\"size\":$SIZE,\"contender\":\"$c\",\"case\":\"$case\",\"rep\":$rep,\"pkts\":$PKTS,\"rx\":$rx,\"fwd\":$fwd,\"usec\":$usec}"
	done
}

# bench_size CONTENDER...: SIZE of the SET kind, the contenders
# interleaved in every repetition.
bench_size() {
	local reps=$REPS rep c
	((SIZE >= 1000000)) && reps=$REPS_BIG
	make_files
	if [[ $SET != sets && $SET != xdp6 ]]; then
		log "$SET size $SIZE: nft -f"
		nft_load
	fi
	if [[ $SET != sets && $SET != xdp* ]]; then
		log "$SET size $SIZE: ipset restore"
		ipset_load
	fi
	if [[ " $* " == *" xdp_filter "* ]]; then
		log "$SET size $SIZE: xdp-filter ip, one by one"
		xdp_filter_fill
	fi
	for ((rep = 1; rep <= reps; rep++)); do
		log "$SET size $SIZE: repetition $rep/$reps"
		if [[ " $SKIP " == *" pps "* ]]; then
			# Load-time and memory samples only.
			cuckoo_on "$rep"
			cuckoo_off
			continue
		fi
		for c in "$@"; do
			"${c}_on" "$rep"
			measure "$c" "$rep"
			"${c}_off"
		done
	done
	[[ $SET == sets || $SET == xdp6 ]] || nft_unload
	[[ $SET == sets || $SET == xdp* ]] || ipset_unload
	# xdp-filter's maps, kept by every unload -k, go.
	[[ " $* " != *" xdp_filter "* ]] || xdpf unload -a ||
		die "xdp-filter unload -a"
	rm -rf "$D"
}

# ---- placement: the hooks' scope, the xtables match, mark mode ----
#
# One set of PLACE_SIZE addresses (the address sets' files), sent to
# PLACE_DST, an address of the receiver's (on d0): delivered, so that a
# rule in filter INPUT sees the packets (UDP to a port no socket has; the
# ICMP errors it answers are held by the global ICMP rate limit).
# cuckoo_nf stays inserted the whole part, the addresses in its default
# set and in the rules-only set rb, its hooks off between contenders
# (`cuckooctl hooks off` registers no hook: "none", the baseline, costs
# what an unconfigured namespace does).  Contenders (see the header):
# each rule drops with -j DROP (nft: drop) after its match, at raw
# PREROUTING ("_raw") or filter INPUT ("_in", nft: hook input priority
# filter).

# xrule TOOL TABLE CHAIN MATCH...: one rule, TOOL -t TABLE -A CHAIN MATCH
# -j DROP.  xempty TOOL TABLE CHAIN: the table and its chain, no rule (the
# policy ACCEPT set).  xrule_off TOOL TABLE CHAIN: flushed, and the table's hooks
# gone (an empty table keeps them): iptable_TABLE unloaded (legacy), the
# nft table deleted (iptables-nft).
xrule() {
	local tool=$1 tab=$2 chain=$3
	shift 3
	inns "$tool" -t "$tab" -A "$chain" "$@" -j DROP ||
		die "$tool -t $tab -A $chain $* -j DROP"
}

xempty() {
	inns "$1" -t "$2" -P "$3" ACCEPT || die "$1 -t $2 -P $3 ACCEPT"
}

xrule_off() {
	inns "$1" -t "$2" -F "$3" 2>/dev/null || die "$1 -t $2 -F $3"
	if [[ $1 == *-nft ]]; then
		inns nft delete table ip "$2" || die "nft delete table ip $2"
	else
		rmmod "iptable_$2" || die "rmmod iptable_$2"
	fi
}

# nchain NAME HOOK PRIORITY RULE: an nft chain of table ip bench with one
# rule (none without RULE); nchain_off NAME.
nchain() {
	inns nft -f - <<-EOF || die "nft chain $1: ${4:-}"
		add chain ip bench $1 { type filter hook $2 priority $3; }
		${4:+add rule ip bench $1 $4}
	EOF
}

nchain_off() {
	inns nft -f - <<-EOF || die "nft delete chain $1"
		flush chain ip bench $1
		delete chain ip bench $1
	EOF
}

# quiet CMD...: CMD in the receiver's namespace, its output (cuckooctl
# load's progress) shown only when it fails.
quiet() {
	inns "$@" >"$D/quiet.out" 2>&1 && return
	cat "$D/quiet.out" >&2
	return 1
}

place_hooks() { inns cuckooctl hooks "$@" || die "cuckooctl hooks $*"; }

hook_on() { place_hooks on; }
hook_off() { place_hooks off; }
hook_log_on() {
	inns cuckooctl set default log on || die "cuckooctl set default log on"
	place_hooks on
}
hook_log_off() {
	place_hooks off
	inns cuckooctl set default log off || die "cuckooctl set default log off"
}
hook_iif_on() { place_hooks on --iif r0; }
hook_iif_off() { place_hooks off; }
# Scoped to d0 only: every packet, arriving on r0, is out of scope.
hook_other_on() { place_hooks on --iif d0; }
hook_other_off() { place_hooks off; }

mark_on() {
	inns cuckooctl mode mark 0x10/0x10 || die "cuckooctl mode mark"
	place_hooks on
	nchain mk prerouting raw "meta mark and 0x10 == 0x10 drop"
}

mark_off() {
	nchain_off mk
	place_hooks off
	inns cuckooctl mode drop || die "cuckooctl mode drop"
}

xt_raw_on() { xrule "$IPT" raw PREROUTING -m cuckoo --match-set rb src; }
xt_raw_off() { xrule_off "$IPT" raw PREROUTING; }
xt_in_on() { xrule "$IPT" filter INPUT -m cuckoo --match-set rb src; }
xt_in_off() { xrule_off "$IPT" filter INPUT; }
xtnft_raw_on() { xrule "$IPT_NFT" raw PREROUTING -m cuckoo --match-set rb src; }
xtnft_raw_off() { xrule_off "$IPT_NFT" raw PREROUTING; }
xtnft_in_on() { xrule "$IPT_NFT" filter INPUT -m cuckoo --match-set rb src; }
xtnft_in_off() { xrule_off "$IPT_NFT" filter INPUT; }
ipset_raw_on() { xrule "$IPT" raw PREROUTING -m set --match-set blocked src; }
ipset_raw_off() { xrule_off "$IPT" raw PREROUTING; }
ipset_in_on() { xrule "$IPT" filter INPUT -m set --match-set blocked src; }
ipset_in_off() { xrule_off "$IPT" filter INPUT; }
ipnet_raw_on() { xrule "$IPT" raw PREROUTING -m set --match-set blockednet src; }
ipnet_raw_off() { xrule_off "$IPT" raw PREROUTING; }
ipnet_in_on() { xrule "$IPT" filter INPUT -m set --match-set blockednet src; }
ipnet_in_off() { xrule_off "$IPT" filter INPUT; }
nft_raw_on() { nchain pre prerouting raw "ip saddr @blocked drop"; }
nft_raw_off() { nchain_off pre; }
nft_in_on() { nchain inp input filter "ip saddr @blocked drop"; }
nft_in_off() { nchain_off inp; }
# The floors: an unconditional drop at the same place, for the drop's
# added cost (a match's cost on a hit).
floor_raw_on() { xrule "$IPT" raw PREROUTING; }
floor_raw_off() { xrule_off "$IPT" raw PREROUTING; }
floor_in_on() { xrule "$IPT" filter INPUT; }
floor_in_off() { xrule_off "$IPT" filter INPUT; }
floor_xtnft_raw_on() { xrule "$IPT_NFT" raw PREROUTING; }
floor_xtnft_raw_off() { xrule_off "$IPT_NFT" raw PREROUTING; }
floor_xtnft_in_on() { xrule "$IPT_NFT" filter INPUT; }
floor_xtnft_in_off() { xrule_off "$IPT_NFT" filter INPUT; }
floor_nft_raw_on() { nchain pre prerouting raw drop; }
floor_nft_raw_off() { nchain_off pre; }
floor_nft_in_on() { nchain inp input filter drop; }
floor_nft_in_off() { nchain_off inp; }
# The empty chains: the table (nft: the base chain) at the same place and
# no rule, for the pass's added cost of a rule alone, pass case only.
empty_raw_on() { xempty "$IPT" raw PREROUTING; }
empty_raw_off() { xrule_off "$IPT" raw PREROUTING; }
empty_in_on() { xempty "$IPT" filter INPUT; }
empty_in_off() { xrule_off "$IPT" filter INPUT; }
empty_xtnft_raw_on() { xempty "$IPT_NFT" raw PREROUTING; }
empty_xtnft_raw_off() { xrule_off "$IPT_NFT" raw PREROUTING; }
empty_xtnft_in_on() { xempty "$IPT_NFT" filter INPUT; }
empty_xtnft_in_off() { xrule_off "$IPT_NFT" filter INPUT; }
empty_nft_raw_on() { nchain pre prerouting raw; }
empty_nft_raw_off() { nchain_off pre; }
empty_nft_in_on() { nchain inp input filter; }
empty_nft_in_off() { nchain_off inp; }

# The module of another revision (bench-vm's CNF_BENCH_BASE), hooks on
# with the addresses in its one list: this module's hooks beside it.  Its
# off puts this tree's module back as place_setup left it.
place_base_on() {
	rmmod cuckoo_nf || die "rmmod cuckoo_nf"
	insmod "$BASE_KO" || die "insmod $BASE_KO"
	quiet cuckooctl load "$F/addrs" || die "base: cuckooctl load"
}

place_base_off() {
	rmmod cuckoo_nf || die "rmmod cuckoo_nf (base)"
	place_module
}

# This tree's module, the addresses in its default set and in rb, hooks
# off.
place_module() {
	insmod "$CNF_KO" || die "insmod $CNF_KO"
	{ quiet cuckooctl load "$F/addrs" &&
		quiet cuckooctl create rb block --rules-only &&
		quiet cuckooctl -s rb load "$F/addrs"; } ||
		die "cuckooctl: the default set and rb"
	place_hooks off
}

# The contenders this VM can run, in cs: iptables-nft's only with it.
place_contenders() {
	local c
	cs=()
	for c in "${PLACE_CONTENDERS[@]}"; do
		[[ -n ${CNF_TEST_BENCH_PLACE_ONLY:-} &&
			" $CNF_TEST_BENCH_PLACE_ONLY " != *" $c "* ]] && continue
		[[ $c == *xtnft* && -z $IPT_NFT ]] && continue
		[[ $c == place_base && ! -f $BASE_KO ]] && continue
		cs+=("$c")
	done
}

place_part() {
	local rep c cs
	SET=place LIST=addrs SIZE=$PLACE_SIZE RANGE=$PLACE_SIZE
	make_files
	IPT_NFT=
	if command -v iptables-nft >/dev/null && [[ $IPT == *-legacy ]]; then
		IPT_NFT=iptables-nft
	else
		log "place: no iptables-nft beside $IPT: its rules left out"
	fi
	place_contenders
	inns ip addr add "$PLACE_DST/32" dev d0 || die "ip addr add $PLACE_DST"
	echo "dst $PLACE_DST" >"$PG/s0" || die "pktgen: dst $PLACE_DST"
	log "place size $SIZE: cuckooctl load, nft -f, ipset restore (hash:ip, hash:net)"
	place_module
	inns nft add table ip bench || die "nft add table"
	inns nft add set ip bench blocked "{ type ipv4_addr; }" ||
		die "nft add set"
	inns nft -f "$F/nft" >/dev/null || die "nft -f"
	modprobe -a ip_set_hash_ip ip_set_hash_net ||
		die "modprobe -a ip_set_hash_ip ip_set_hash_net"
	inns ipset restore <"$F/ipset" || die "ipset restore"
	sed -e 's/^create blocked hash:ip /create blockednet hash:net /' \
		-e 's/^add blocked /add blockednet /' "$F/ipset" |
		inns ipset restore || die "ipset restore (hash:net)"
	for ((rep = 1; rep <= PLACE_REPS; rep++)); do
		log "place size $SIZE: repetition $rep/$PLACE_REPS"
		for c in "${cs[@]}"; do
			"${c}_on" "$rep"
			# What the last change deferred (RCU callbacks, a
			# table's freeing) done before the packets.
			sleep 1
			measure "$c" "$rep"
			"${c}_off"
		done
	done
	inns nft delete table ip bench
	inns ipset destroy blocked
	inns ipset destroy blockednet
	rmmod cuckoo_nf || die "rmmod cuckoo_nf"
	inns ip addr del "$PLACE_DST/32" dev d0
	echo "dst $DST" >"$PG/s0" || die "pktgen: dst $DST"
	rm -rf "$D"
}

# ---- test module ----

run_module() {
	local maxlog=${CNF_TEST_BENCH_MODLOG:-20} out
	[[ -f $BENCH_KO ]] || { log "no $BENCH_KO: test module skipped"; return; }
	log "cnf_bench.ko max_log=$maxlog ops=$MODOPS"
	dmesg -c >/dev/null
	insmod "$BENCH_KO" max_log="$maxlog" ops="$MODOPS" ||
		log "WARNING: cnf_bench.ko failed to load"
	rmmod cnf_bench 2>/dev/null
	out=$(dmesg | grep 'cnf_bench: ')
	echo "$out" >&2
	sed -n 's/.*cnf_bench: n=\([0-9]*\) op=\([a-z-]*\) cuckoo_ns=\([0-9.]*\) rht_ns=\([0-9.]*\) ratio=\([0-9.]*\)$/{"kind":"kmod","n":\1,"op":"\2","cuckoo_ns":\3,"rht_ns":\4,"ratio":\5}/p;
		s/.*cnf_bench: n=\([0-9]*\) mem cuckoo_bytes=\([0-9]*\) rht_bytes=\([0-9]*\)$/{"kind":"kmem","n":\1,"cuckoo_bytes":\2,"rht_bytes":\3}/p' \
		<<<"$out" | while IFS= read -r l; do emit "$l"; done
}

main() {
	local nproc memmb c cs
	# Kernel messages on the console would split the sample lines.
	echo 1 >/proc/sys/kernel/printk
	nproc=$(grep -c ^processor /proc/cpuinfo)
	memmb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
	emit "{\"kind\":\"meta\",\"kernel\":\"$(uname -r)\",\"vcpus\":$nproc,\"mem_mb\":$memmb,\"pkts\":$PKTS,\"reps\":$REPS,\"pfx_sizes\":\"$PFX_SIZES\",\"pfx6_sizes\":\"$PFX6_SIZES\",\"sets_sizes\":\"$SETS_SIZES\",\"place_size\":$PLACE_SIZE,\"place_reps\":$PLACE_REPS,\"xdp_sizes\":\"$XDP_SIZES\",\"xdp6_sizes\":\"$XDP6_SIZES\",\"reps_big\":$REPS_BIG,\"icount\":\"${CNF_TEST_BENCH_ICOUNT:-}\",\"skip\":\"$SKIP\",\"iptables\":\"$IPT\",\"nft\":\"$(nft --version | head -n1)\",\"ipset\":\"$(ipset version | head -n1)\"}"
	grep -q '^cuckoo_nf ' /proc/modules && rmmod cuckoo_nf
	[[ " $SKIP " == *" mod "* ]] || run_module
	if [[ " $SKIP " != *" pkt "* ]]; then
		setup_net
		setup_pktgen
		if [[ " $SKIP " != *" addr "* ]]; then
			SET=addr LIST=addrs
			for SIZE in $SIZES; do
				RANGE=$SIZE
				bench_size "${CONTENDERS[@]}"
			done
		fi
		if [[ " $SKIP " != *" prefix "* ]]; then
			SET=prefix LIST=prefixes RANGE=$PFX_RANGE
			for SIZE in $PFX_SIZES; do
				bench_size "${PFX_CONTENDERS[@]}"
			done
		fi
		if [[ " $SKIP " != *" sets "* ]]; then
			SET=sets LIST=addrs
			[[ -f $BASE_KO ]] && SETS_CONTENDERS+=(base)
			for SIZE in $SETS_SIZES; do
				RANGE=$SIZE
				bench_size "${SETS_CONTENDERS[@]}"
			done
		fi
		if [[ " $SKIP " != *" place "* && " $SKIP " != *" pps "* ]]; then
			place_part
		fi
		# Its loads and memory are measured with its packets.
		if [[ " $SKIP " != *" xdp "* && " $SKIP " != *" pps "* ]]; then
			SET=xdp LIST=addrs
			xdp_setup
			for SIZE in $XDP_SIZES; do
				RANGE=$SIZE
				xdp_contenders
				bench_size "${cs[@]}"
			done
		fi
		# IPv6 last: the IPv4 parts' receiver has it off.
		if [[ " $SKIP " != *" prefix "* && -n $PFX6_SIZES ]]; then
			setup_ipv6
			SET=prefix6 LIST=prefixes FAM=ipv6 NFT_FAM=ip6
			for SIZE in $PFX6_SIZES; do
				bench_size "${PFX_CONTENDERS[@]}"
			done
			FAM=ipv4 NFT_FAM=ip
		fi
		if [[ " $SKIP " != *" xdp "* && " $SKIP " != *" pps "* &&
			-n $XDP6_SIZES ]]; then
			setup_ipv6
			SET=xdp6 LIST=addrs FAM=ipv6 XF_FEAT=ipv6 XF_MAP=filter_ipv6
			for SIZE in $XDP6_SIZES; do
				xdp_contenders nft bpf_hash
				bench_size "${cs[@]}"
			done
		fi
		cleanup
	fi
	emit '{"kind":"end"}'
}

main
