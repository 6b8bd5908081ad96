#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Named sets on the packet path: block sets and allow sets, replace, swap
# and destroy while traffic flows, per-set counters, sets per namespace.
#
#   sender ns: 10.0.2.x, fd02::x (the SRCS below)    receiver ns
#      s1 -------------------------------------------- r1  10.0.2.2, fd02::2
#
# The receiver has two block sets and an allow set with overlapping
# prefixes:
#   b1 (block)  10.0.2.0/25          fd02::/121        (::0 - ::7f)
#   b2 (block)  10.0.2.64/26         fd02::40/122      (::40 - ::7f)
#               10.0.2.128/26        fd02::80/122      (::80 - ::bf)
#   a1 (allow)  10.0.2.96/27         fd02::60/123      (::60 - ::7f)
#               10.0.2.160/28        fd02::a0/124      (::a0 - ::af)
#               10.0.2.240/28        fd02::f0/124      (no block set)
# and a source in every combination of them (SRC_SETS).  A source is
# dropped when a block set covers it and the allow set does not.  Verdicts
# come from counters only: per source, nft counters of the echo requests
# that arrived at the receiver (netdev ingress, before the module's hook)
# and were delivered (inet input, after it); the module's per-family
# dropped and matched counters (cuckooctl stats -j), and each set's
# matched counter (cuckooctl sets -j): a block set counts every packet it
# covers, the allow set those a block set covered and it let through.
#
# test_verdicts    every combination, every counter
# test_replace     `replace` of b1 in a loop while every source pings:
#                  the sources both lists cover lose every packet, the
#                  ones neither covers none; per-set counters still add up
# test_replace_fails  a replace with a bad line, and one past the memory
#                  limit, fail and leave the old contents serving
# test_swap        swap b1 with a block set holding other prefixes
# test_destroy     destroy b2, then a1, while every source pings
# test_per_netns   another namespace sees none of these sets
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_verdicts test_replace test_replace_fails test_swap test_destroy test_per_netns"
NPINGS=2
S=cnf-sets-s-$$
R=cnf-sets-r-$$
R2=cnf-sets-o-$$
# Read by lib.sh's counter_tables and ping_argv.
# shellcheck disable=SC2034
DST4=10.0.2.2 DST6=fd02::2
# Source -> the sets that cover it.
declare -A SRC_SETS=(
	[10.0.2.10]="b1"		[fd02::10]="b1"
	[10.0.2.70]="b1 b2"		[fd02::50]="b1 b2"
	[10.0.2.100]="b1 b2 a1"		[fd02::70]="b1 b2 a1"
	[10.0.2.150]="b2"		[fd02::90]="b2"
	[10.0.2.165]="b2 a1"		[fd02::a5]="b2 a1"
	[10.0.2.245]="a1"		[fd02::f5]="a1"
	[10.0.2.200]=""			[fd02::1:1]=""
)
SRCS=(10.0.2.10 10.0.2.70 10.0.2.100 10.0.2.150 10.0.2.165 10.0.2.245
      10.0.2.200 fd02::10 fd02::50 fd02::70 fd02::90 fd02::a5 fd02::f5
      fd02::1:1)
B1=(10.0.2.0/25 fd02::/121)
B2=(10.0.2.64/26 10.0.2.128/26 fd02::40/122 fd02::80/122)
A1=(10.0.2.96/27 10.0.2.160/28 10.0.2.240/28 fd02::60/123 fd02::a0/124 fd02::f0/124)
TMP=
PINGERS=()
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
# Entries of the lists test_replace switches between, and the rounds: at
# the quick size 1,000 (test_replace_fails' list of twice as many still
# well past its limit, 4 KiB over what is in use) and 4 rounds, each list
# in place twice; make check-kernels' full size 50,000 and 20.
NREPL=${CNF_TEST_SETS_N:-$(scaled 1000 50000)}
ROUNDS=${CNF_TEST_SETS_ROUNDS:-$(scaled 4 20)}

setup() {
	tmpdir TMP || return 1
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "${SRCS[@]}" || return 1
	counter_tables "$R" cnf_in:req:r1 cnf_rx:req:input
}

ctl() { nsx "$R" cuckooctl "$@"; }

# dropped_by SETS: 0 when a source covered by SETS (words b1 b2 a1) is
# dropped.
dropped_by() {
	[[ " $1 " == *" b"* && " $1 " != *" a1 "* ]]
}

# start_sets: the receiver's sets as at the top of this file, counters 0.
start_sets() {
	ctl reset >/dev/null &&
		ctl create b1 >/dev/null && ctl create b2 >/dev/null &&
		ctl create a1 allow >/dev/null &&
		ctl add -s b1 "${B1[@]}" >/dev/null &&
		ctl add -s b2 "${B2[@]}" >/dev/null &&
		ctl add -s a1 "${A1[@]}" >/dev/null
	verdict $? "sets b1, b2 (block) and a1 (allow)"
}

# sets_read ARRAY FILE [NS]: ARRAY[NAME]=matched of each set, from
# `cuckooctl sets -j` (through FILE) in namespace NS (default: the
# receiver's), and ARRAY[.names]="NAME..." in the order listed.
sets_read() {
	local -n _sets=$1
	local j='' rest name
	_sets=([.names]="")
	nsx "${3:-$R}" cuckooctl sets -j >"$2" || return 1
	j=$(<"$2")
	rest=$j
	while [[ $rest =~ \"name\":\ *\"([^\"]*)\"(.*)$ ]]; do
		name=${BASH_REMATCH[1]}
		rest=${BASH_REMATCH[2]}
		_sets[.names]+="$name "
		# This set's fields: up to the next set's name.
		local own=${rest%%\"name\":*}
		[[ $own =~ \"matched\":\ *([0-9]+) ]] && _sets[$name]=${BASH_REMATCH[1]}
	done
	[[ -n ${_sets[.names]} ]]
}

declare -A CTR ST SETS
read_counters() {
	nft_read CTR "$R" "$TMP/nft"
	ns_stats ST "$R" "$TMP/stats"
	sets_read SETS "$TMP/sets"
}

# check_round WHAT COVER_VAR: after the pings stopped, judge every source
# by the counters' growth since the snapshot in C0 (arrived, delivered),
# S0 (stats) and M0 (per set), with COVER_VAR the name of an associative
# array: source -> the sets that covered it throughout.
# check_sources WHAT COVER_VAR: the per-source part alone, for a window in
# which some sources changed verdict: those map to "?" in COVER_VAR and
# are not judged.
declare -A C0 S0 M0
snapshot() {
	settle_counters read_counters CTR ST SETS
	C0=() S0=() M0=()
	local k
	for k in "${!CTR[@]}"; do C0[$k]=${CTR[$k]}; done
	for k in "${!ST[@]}"; do S0[$k]=${ST[$k]}; done
	for k in "${!SETS[@]}"; do M0[$k]=${SETS[$k]}; done
}

check_round() {
	check_sources "$@"
	check_totals "$1"
}

# WANT_SET, WANT_DROP: what check_sources found the counters should show.
declare -A WANT_SET WANT_DROP
check_sources() {
	local what=$1 s i arrived delivered set fam bad=0
	local -n _cover=$2
	local -A want_set=() want_drop=([4]=0 [6]=0)
	settle_counters read_counters CTR ST SETS
	for i in "${!SRCS[@]}"; do
		s=${SRCS[$i]}
		[[ ${_cover[$s]} == "?" ]] && continue
		arrived=$((${CTR[cnf_in/c$i]:-0} - ${C0[cnf_in/c$i]:-0}))
		delivered=$((${CTR[cnf_rx/c$i]:-0} - ${C0[cnf_rx/c$i]:-0}))
		if ((arrived == 0)); then
			note "$what: $s: no packet arrived"
			bad=1
			continue
		fi
		if dropped_by "${_cover[$s]}"; then
			if ((delivered != 0)); then
				note "$what: $s (in ${_cover[$s]}): $delivered of $arrived delivered, want 0"
				bad=1
			fi
			fam=4
			is_v6 "$s" && fam=6
			want_drop[$fam]=$((want_drop[$fam] + arrived))
		elif ((delivered != arrived)); then
			note "$what: $s (in ${_cover[$s]:-no set}): $delivered of $arrived delivered, want all"
			bad=1
		fi
		for set in ${_cover[$s]}; do
			# The allow set counts what a block set covered.
			[[ $set == a* && " ${_cover[$s]} " != *" b"* ]] && continue
			want_set[$set]=$((${want_set[$set]:-0} + arrived))
		done
	done
	verdict $bad "$what: every source's packets dropped or delivered as its sets say"
	WANT_SET=() WANT_DROP=()
	for set in "${!want_set[@]}"; do WANT_SET[$set]=${want_set[$set]}; done
	for fam in 4 6; do WANT_DROP[$fam]=${want_drop[$fam]}; done
}

check_totals() {
	local what=$1 fam set
	local -A want_set=() want_drop=()
	for set in "${!WANT_SET[@]}"; do want_set[$set]=${WANT_SET[$set]}; done
	for fam in 4 6; do want_drop[$fam]=${WANT_DROP[$fam]}; done
	for fam in 4 6; do
		local d=$((${ST[ipv$fam.dropped]:-0} - ${S0[ipv$fam.dropped]:-0}))
		local m=$((${ST[ipv$fam.matched]:-0} - ${S0[ipv$fam.matched]:-0}))
		((d == want_drop[$fam] && m == d))
		verdict $? "$what: IPv$fam dropped $d, matched $m; packets of dropped sources ${want_drop[$fam]}"
	done
	for set in ${SETS[.names]}; do
		local got=$((${SETS[$set]:-0} - ${M0[$set]:-0}))
		((got == ${want_set[$set]:-0}))
		verdict $? "$what: set $set matched $got packets, want ${want_set[$set]:-0}"
	done
}

# ping_round WHAT COVER_VAR: NPINGS from every source, then check_round.
ping_round() {
	snapshot
	ping_all "$S" "$NPINGS" 0.05 0.1 "${SRCS[@]}"
	check_round "$@"
}

# flood_all: a ping from every source every 20 ms until kill_all PINGERS.
flood_all() {
	local s
	for s in "${SRCS[@]}"; do
		flood PINGERS "$S" "$s" 0.02
	done
}

test_verdicts() {
	local -A cover
	local s k
	start_sets
	for s in "${SRCS[@]}"; do cover[$s]=${SRC_SETS[$s]}; done
	ping_round "two block sets and an allow set" cover
	for s in "${SRCS[@]}"; do
		ctl test -q -s b1 "$s"
		k=$?
		[[ " ${SRC_SETS[$s]} " == *" b1 "* ]] && ((k == 0)) ||
			{ [[ " ${SRC_SETS[$s]} " != *" b1 "* ]] && ((k == 1)); } ||
			fail "test -s b1 $s: exit $k"
	done
	pass "test -s b1 answers per set"
	# Monitor mode: counted, none dropped.
	ctl mode monitor >/dev/null
	verdict $? "mode monitor"
	snapshot
	ping_all "$S" "$NPINGS" 0.05 0.1 "${SRCS[@]}"
	settle_counters read_counters CTR ST SETS
	local i bad=0
	for i in "${!SRCS[@]}"; do
		((${CTR[cnf_rx/c$i]:-0} - ${C0[cnf_rx/c$i]:-0} == NPINGS)) || bad=1
	done
	verdict $bad "monitor mode: every source's pings delivered"
	((${ST[ipv4.matched]} - ${S0[ipv4.matched]} == 3 * NPINGS &&
	  ${ST[ipv6.matched]} - ${S0[ipv6.matched]} == 3 * NPINGS))
	verdict $? "monitor mode: matched counts the 3 + 3 listed sources"
	ctl mode drop >/dev/null
}

# repl_list FILE BASE4 BASE6 N: the prefixes every list of test_replace
# holds (covering the sources b1 covers) and N more addresses from BASE4
# and BASE6.
repl_list() {
	addr_list "$1" "$2" "$4" "$3" "$4" || return 1
	printf '%s\n' 10.0.2.0/25 fd02::/121 >>"$1"
}

test_replace() {
	local -A cover
	local s r rc=0
	start_sets
	repl_list "$TMP/l0" 192.0.2.0 2001:db8::1:0 "$NREPL" &&
		repl_list "$TMP/l1" 198.51.100.0 2001:db8::2:0 "$NREPL"
	verdict $? "two lists of $((2 * NREPL + 2)) prefixes, both covering b1's sources"
	for s in "${SRCS[@]}"; do cover[$s]=${SRC_SETS[$s]}; done
	snapshot
	flood_all
	for ((r = 0; r < ROUNDS; r++)); do
		ctl replace -s b1 "$TMP/l$((r % 2))" >/dev/null || rc=1
	done
	verdict $rc "$ROUNDS replaces of b1 under a flood from every source"
	kill_all PINGERS
	check_round "replace under a flood" cover
	ctl list -s b1 | sort >"$TMP/got" && sort "$TMP/l$(((ROUNDS - 1) % 2))" >"$TMP/want"
	local rc2=$?
	cmp -s "$TMP/got" "$TMP/want"
	verdict $((rc2 | $?)) "b1 holds exactly the last list ($(wc -l <"$TMP/want") prefixes)"
	ctl replace -s b1 - <<<"10.0.2.64/26" >/dev/null
	verdict $? "replace b1 from stdin"
	cover[10.0.2.10]="" cover[fd02::10]="" cover[fd02::50]="b2"
	cover[10.0.2.70]="b1 b2" cover[10.0.2.100]="b1 b2 a1" cover[fd02::70]="b2 a1"
	ping_round "b1 replaced by 10.0.2.64/26" cover
	ctl replace -s b1 /dev/null >/dev/null 2>&1
	(($? != 0))
	verdict $? "an empty replace is refused without --allow-empty"
	ctl replace --allow-empty -s b1 /dev/null >/dev/null
	verdict $? "replace --allow-empty empties b1"
	[[ -z $(ctl list -s b1) ]]
	verdict $? "b1 is empty"
}

test_replace_fails() {
	local -A cover
	local s used
	start_sets
	for s in "${SRCS[@]}"; do cover[$s]=${SRC_SETS[$s]}; done
	ctl list -s b1 | sort >"$TMP/before"
	printf '%s\n' 10.0.2.0/24 fd02::/64 10.0.2.300 >"$TMP/bad"
	ctl replace -s b1 "$TMP/bad" >/dev/null 2>&1
	(($? != 0))
	verdict $? "replace with a bad line fails"
	ctl list -s b1 | sort | cmp -s - "$TMP/before"
	verdict $? "b1 unchanged after the bad line"
	ping_round "after the failed replace (bad line)" cover
	# A limit just above what is in use: the new contents do not fit.
	used=$(mem_in_use ctl)
	ctl limit $((used + 4096)) >/dev/null
	verdict $? "memory limit $((used + 4096)) bytes"
	addr_list "$TMP/big" 192.0.2.0 "$NREPL" 2001:db8::1:0 "$NREPL"
	printf '%s\n' 10.0.2.0/24 fd02::/64 >>"$TMP/big"
	ctl replace -s b1 "$TMP/big" >/dev/null 2>&1
	(($? != 0))
	verdict $? "replace past the memory limit fails"
	ctl list -s b1 | sort | cmp -s - "$TMP/before"
	verdict $? "b1 unchanged after the limit"
	ping_round "after the failed replace (memory limit)" cover
}

test_swap() {
	local -A cover
	local s
	start_sets
	ctl create b3 >/dev/null && ctl add -s b3 10.0.2.128/25 fd02::80/121 >/dev/null
	verdict $? "set b3 (block): 10.0.2.128/25 fd02::80/121"
	ctl swap b1 b3 >/dev/null
	verdict $? "swap b1 b3"
	# b1 now holds b3's prefixes, b3 b1's.
	for s in "${SRCS[@]}"; do
		# The last byte: 10.0.2.X or fd02::X (fd02::1:1 is past ::ff).
		local sets=${SRC_SETS[$s]} last=${s##*[.:]} new=""
		sets=${sets//b1/b3}
		is_v6 "$s" && last=$((16#$last))
		[[ $s == fd02::1:1 ]] && last=0
		((last >= 128)) && new="b1 "
		cover[$s]="$new$sets"
	done
	ping_round "b1 and b3 swapped" cover
	ctl swap b1 a1 >/dev/null 2>&1
	(($? != 0))
	verdict $? "swap of a block and an allow set is refused"
}

test_destroy() {
	local -A cover
	local s
	start_sets
	# Through the destroy, every source but those b2 alone dropped keeps
	# its verdict.
	for s in "${SRCS[@]}"; do
		cover[$s]=${SRC_SETS[$s]}
		[[ ${cover[$s]} == b2 ]] && cover[$s]="?"
	done
	snapshot
	flood_all
	sleep 0.5
	ctl destroy b2 >/dev/null
	verdict $? "destroy b2 under a flood"
	sleep 0.5
	kill_all PINGERS
	check_sources "through the destroy" cover
	for s in "${SRCS[@]}"; do cover[$s]=${SRC_SETS[$s]//b2/}; done
	ping_round "b2 destroyed" cover
	ctl destroy a1 >/dev/null
	verdict $? "destroy a1"
	for s in "${SRCS[@]}"; do cover[$s]=${cover[$s]//a1/}; done
	ping_round "a1 destroyed" cover
	ctl destroy default >/dev/null 2>&1
	(($? != 0))
	verdict $? "the default set cannot be destroyed"
}

test_per_netns() {
	local -A sets
	netns_add "$R2"
	start_sets
	sets_read sets "$TMP/sets_o" "$R2"
	[[ ${sets[.names]} == "default " ]]
	verdict $? "another namespace lists only default (${sets[.names]})"
	nsx "$R2" cuckooctl create b1 allow >/dev/null
	verdict $? "a set of the same name in another namespace"
	nsx "$R2" cuckooctl add -s b1 10.0.2.0/24 >/dev/null
	verdict $? "add to it"
	ctl test -q -s b1 10.0.2.200
	(($? == 1))
	verdict $? "its entries are its own"
	sets_read sets "$TMP/sets_o" "$R2"
	[[ ${sets[.names]} == "default b1 " ]]
	verdict $? "it lists its own sets (${sets[.names]})"
	sets_read sets "$TMP/sets_r"
	[[ ${sets[.names]} == "default b1 b2 a1 " ]]
	verdict $? "the receiver's are unchanged (${sets[.names]})"
}
require_module
require_cmds nft
setup || ktap_bail "setup: namespaces, veth pair, counters"
defer kill_all PINGERS
defer nsx "$R" cuckooctl reset
run_tests
