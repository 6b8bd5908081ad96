#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prefixes on the packet path: a source is dropped exactly when a stored
# prefix covers it, whatever the mix of lengths and overlaps.
#
#   sender ns: 10.0.1.x, fd01::x (the SRCS below)    receiver ns
#      s1 -------------------------------------------- r1  10.0.1.2, fd01::2
#
# Each step changes the receiver's set, then every source pings at once;
# the verdict per source comes from counters: an nft counter per source at
# the receiver's input (echo requests delivered) and the module's dropped
# counters, which must grow by exactly the pings of the covered sources.
# The sources sit inside, outside and at both edges of prefixes of every
# tier (IPv4 /8 in the /16 map, /18, /23 and /26 expanded into /20, /24
# and /28 keys, /31 into /32 keys; IPv6 /8 in its /16 map, /20 into /24
# keys, /62 into /64 keys, /125 into /127 keys, /120 and /112 keys of
# their own tiers), before and after overlapping adds and deletes.  Then the set comes
# back identically from list, save and restore, and a load of NBIG
# prefixes of mixed lengths (4,000: each of the 42 lengths about a hundred
# times, the tables grown from their smallest; 100,000 with
# CNF_TEST_FULL, in make check-kernels) is matched like the prefixes it
# holds.
set -uo pipefail

ALL_TESTS="test_edges test_overlaps test_round_trip test_big_load"
NPINGS=2
S=cnf-pfx-s-$$
R=cnf-pfx-r-$$
DST4=10.0.1.2
DST6=fd01::2
SRCS=(10.0.1.1 10.0.1.63 10.0.1.64 10.0.1.127 10.0.1.128 10.0.1.129
      10.0.1.130 10.0.1.131 10.0.1.132 10.0.1.200 10.0.1.201 10.0.1.254
      fd01::1 fd01::ff fd01::100 fd01::1ff fd01::200 fd01::207 fd01::208
      fd01::1:0 fd01::1:ffff fd01::2:0)
TMP=
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
NBIG=${CNF_TEST_PREFIX_N:-$(scaled 4000 100000)}

setup() {
	tmpdir TMP || return 1
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "${SRCS[@]}" || return 1
	counter_tables "$R" cnf_pfx:req:input
}

ctl() { nsx "$R" cuckooctl "$@"; }

declare -A CTR ST
# SETTLED: CTR and ST hold a settled reading that no packet has changed
# since: the one the last expect_dropped ended with.  Between two of them
# only the set changes (static neighbours: nothing else is sent), so it
# is the next one's starting point, without settling again (four nft and
# cuckooctl runs at least, in the receiver's namespace).
SETTLED=0
read_counters() {
	nft_read CTR "$R" "$TMP/nft" table inet cnf_pfx
	ns_stats ST "$R" "$TMP/stats"
}

# expect_dropped WHAT SRC...: ping from every source; exactly the SRC given
# are dropped (none of their pings delivered, all counted by the module),
# every other source's pings are all delivered.
expect_dropped() {
	local what=$1 s i d0 d1 bad=0
	local -A drop=() c0=()
	shift
	for s; do drop[$s]=1; done
	((SETTLED)) || settle_counters read_counters CTR ST
	for i in "${!SRCS[@]}"; do c0[$i]=${CTR[cnf_pfx/c$i]:-0}; done
	d0=$((${ST[ipv4.dropped]:-0} + ${ST[ipv6.dropped]:-0}))
	ping_all "$S" "$NPINGS" 0.05 0.1 "${SRCS[@]}"
	settle_counters read_counters CTR ST
	SETTLED=1
	d1=$((${ST[ipv4.dropped]:-0} + ${ST[ipv6.dropped]:-0}))
	for i in "${!SRCS[@]}"; do
		s=${SRCS[$i]}
		local got=$((${CTR[cnf_pfx/c$i]:-0} - c0[$i])) want=$NPINGS
		[[ -n ${drop[$s]:-} ]] && want=0
		if ((got != want)); then
			note "$s: $got of $NPINGS echo requests delivered, want $want"
			bad=1
		fi
	done
	if ((d1 - d0 != NPINGS * $#)); then
		note "module dropped $((d1 - d0)) pings, want $((NPINGS * $#))"
		bad=1
	fi
	verdict "$bad" "$what: dropped exactly {$*}"
}

# listed WHAT PREFIX...: `cuckooctl list` prints exactly these.
listed() {
	local what=$1 want got
	shift
	want=$(printf '%s\n' "$@" | sort)
	got=$(ctl list | sort)
	[[ $got == "$want" ]]
	verdict $? "$what: the set is {${want//$'\n'/ }}" || note "list: ${got//$'\n'/ }"
}

start_from() {
	ctl flush >/dev/null && { (($# == 0)) || ctl add "$@" >/dev/null; }
	verdict $? "set {$*}"
}

test_edges() {
	note "prefixes of several tiers, sources at their edges"
	start_from 10.0.1.64/26 10.0.1.130/31 10.0.1.200 fd01::100/120 \
		fd01::200/125 fd01::1:0/112
	expect_dropped "/26 /31 /32 /120 /125 /112" 10.0.1.64 10.0.1.127 \
		10.0.1.130 10.0.1.131 10.0.1.200 fd01::100 fd01::1ff fd01::200 \
		fd01::207 fd01::1:0 fd01::1:ffff
	ctl add 10.0.0.0/8 fd00::/8 >/dev/null
	verdict $? "add 10.0.0.0/8 fd00::/8"
	expect_dropped "a /8 over them" "${SRCS[@]}"
	ctl del 10.0.0.0/8 fd00::/8 >/dev/null
	verdict $? "del 10.0.0.0/8 fd00::/8"
	expect_dropped "the /8s gone" 10.0.1.64 10.0.1.127 10.0.1.130 \
		10.0.1.131 10.0.1.200 fd01::100 fd01::1ff fd01::200 fd01::207 \
		fd01::1:0 fd01::1:ffff
	ctl add 10.0.0.0/18 fd01::/20 >/dev/null
	verdict $? "add 10.0.0.0/18 fd01::/20"
	expect_dropped "a /18 and a /20 over them" "${SRCS[@]}"
	ctl del 10.0.0.0/18 fd01::/20 >/dev/null
	verdict $? "del 10.0.0.0/18 fd01::/20"
	expect_dropped "the /18 and the /20 gone" 10.0.1.64 10.0.1.127 \
		10.0.1.130 10.0.1.131 10.0.1.200 fd01::100 fd01::1ff fd01::200 \
		fd01::207 fd01::1:0 fd01::1:ffff
}

test_overlaps() {
	note "overlapping prefixes are kept as given"
	start_from 10.0.1.64/26 10.0.1.200 fd01::100/120 fd01::1:0/112
	ctl add 10.0.0.0/23 fd01::/62 >/dev/null
	verdict $? "add 10.0.0.0/23 fd01::/62 over them"
	expect_dropped "/23 and /62 cover every source" "${SRCS[@]}"
	ctl del 10.0.1.64/26 fd01::100/120 >/dev/null
	verdict $? "del 10.0.1.64/26 fd01::100/120 under them"
	expect_dropped "still covered" "${SRCS[@]}"
	! ctl del 10.0.1.0/24 >/dev/null 2>&1
	verdict $? "del 10.0.1.0/24, covered but not stored, fails"
	ctl del 10.0.0.0/23 fd01::/62 >/dev/null
	verdict $? "del 10.0.0.0/23 fd01::/62"
	expect_dropped "back to the /32 and the /112" 10.0.1.200 fd01::1:0 fd01::1:ffff
	listed "after the deletes" 10.0.1.200 fd01::1:0/112
}

test_round_trip() {
	local set=(10.0.0.0/8 10.0.1.0/24 10.0.1.64/26 10.0.1.130/31 10.0.1.200
		   192.0.2.0/25 fd00::/8 fd01::/48 fd01::/56 fd01::100/120
		   2001:db8::/32 2001:db8::1)
	note "list, save and restore give the prefixes back as stored"
	start_from "${set[@]}"
	listed "as added" "${set[@]}"
	ctl save >"$TMP/saved" && ctl flush >/dev/null && ctl restore "$TMP/saved" >/dev/null
	verdict $? "save, flush, restore"
	listed "restored" "${set[@]}"
	expect_dropped "restored set" "${SRCS[@]}"
}

# big_list FILE N: N distinct prefixes, IPv4 of every length from /9 to
# /32, IPv6 /48 to /64 and /128, none covering a source.  For busybox awk:
# no ^ (no math library), printf of small numbers only.
big_list() {
	awk -v n="$2" 'function p2(n,   r) { r = 1; while (n-- > 0) r *= 2; return r }
	function v4(i,   len, k, size, room) {
		len = 9 + i % 24
		size = p2(32 - len)
		room = p2(len)
		k = (int(i / 24) * 7 + 3) % room	# spread out
		if (k == int(167772416 / size))		# never over 10.0.1.0
			k = (k + 1) % room
		k *= size
		printf "%d.%d.%d.%d/%d\n", int(k / 16777216), int(k / 65536) % 256,
			int(k / 256) % 256, k % 256, len
	}
	function v6(i,   len, k) {
		len = i % 18 == 17 ? 128 : 48 + i % 17
		k = int(i / 18)
		if (len == 128) {
			printf "2001:db8:ffff::%x\n", k
			return
		}
		k *= p2(64 - len)
		printf "2001:db8:%x:%x::/%d\n", int(k / 65536), k % 65536, len
	}
	BEGIN {
		for (i = 0; i < n * 0.8; i++) {
			v4(i)
			if (i % 8 < 3)
				v6(int(i / 8) * 3 + i % 8)
		}
	}' | awk '!seen[$0]++' | head -n "$2" >"$1"
}

test_big_load() {
	local -A st
	local n
	note "a load of $NBIG prefixes of mixed lengths"
	big_list "$TMP/big" "$NBIG"
	printf '%s\n' 10.0.1.0/24 fd01::/64 >>"$TMP/big"
	n=$(wc -l <"$TMP/big")
	ctl flush >/dev/null && ctl load "$TMP/big" >/dev/null
	verdict $? "load $n prefixes"
	ns_stats st "$R" "$TMP/stats"
	((n > NBIG && ${st[ipv4.entries]:-0} + ${st[ipv6.entries]:-0} == n))
	verdict $? "stats count every prefix (${st[ipv4.entries]:-?} + ${st[ipv6.entries]:-?} of $n)"
	expect_dropped "the load's /24 and /64" "${SRCS[@]}"
	ctl del 10.0.1.0/24 fd01::/64 >/dev/null
	verdict $? "del 10.0.1.0/24 fd01::/64"
	expect_dropped "nothing else covers the sources"
}

require_module
require_cmds awk nft
setup || ktap_bail "setup: namespaces, veth pair, counters"
run_tests
