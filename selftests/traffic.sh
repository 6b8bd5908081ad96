#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Traffic through cuckoo_nf: sources are dropped exactly when listed, for
# IPv4 and IPv6, per network namespace, and only counted in monitor mode.
#
#            10.0.1.1, .11 / fd01::1, ::11        10.0.1.2 / fd01::2
#   ns-s:  s1 ------------------------------------ r1  :ns-r1
#          s2 ------------------------------------ r2  :ns-r2
#            10.0.2.1, .11 / fd02::1, ::11        10.0.2.2 / fd02::2
#
# The sender has two addresses per link ("A" = .1/::1, "B" = .11/::11) and
# pings with each as source; the filters act in the receivers' namespaces.
# Every verdict is checked on counters, never on timing: a blocked ping must
# add exactly its packets to the filter's "dropped" counter and none to the
# receiver's ICMP InEchos, and get no reply; a passing one must add to
# InEchos and leave "dropped" alone.  (Not ping's reply count: once it has
# had a reply, ping waits only max(2 RTT, interval) for the last one, which
# under TCG may come later.)
# Each test sets the sets it starts from: TESTS="test_monitor_mode" runs
# alone.
set -uo pipefail

ALL_TESTS="test_blocked_exactly test_netns_isolation test_pass_after_delete test_monitor_mode"
NPINGS=3
S=ns-s-$$
R1=ns-r1-$$
R2=ns-r2-$$
TMP=
# Per receiver namespace: a process living there, whose /proc/PID/net/snmp
# this shell reads without starting anything.
declare -A HELPER
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

# Link N: veth sN (in $S) - rN (in receiver namespace RN), by lib.sh's
# veth_pair.  Addresses skip DAD and neighbours are static so that no NDP
# packet from a listed source reaches a filter: counters then count pings
# only.
setup() {
	local ns n argv
	tmpdir TMP || return 1
	veth_pair 1 "$S" "$R1" 10.0.1.2 fd01::2 10.0.1.1 10.0.1.11 fd01::1 fd01::11 || return 1
	veth_pair 2 "$S" "$R2" 10.0.2.2 fd02::2 10.0.2.1 10.0.2.11 fd02::1 fd02::11 || return 1
	for ns in "$R1" "$R2"; do
		nsx_argv argv "$ns" sleep 100000
		"${argv[@]}" &
		HELPER[$ns]=$!
		defer kill "${HELPER[$ns]}"
	done
	# Its /proc/PID/net is the namespace's only once nsenter has entered.
	for ((n = 0; n < 100; n++)); do
		[[ /proc/${HELPER[$R1]}/ns/net -ef /run/netns/$R1 &&
			/proc/${HELPER[$R2]}/ns/net -ef /run/netns/$R2 ]] && return
		sleep 0.05
	done
	return 1
}

# Filter counters per receiver namespace, "v4dropped v4matched v6dropped
# v6matched", from the last reading: between two pings only the pings change
# them.  Any cuckooctl command in a namespace forgets its reading, in case it
# resets them.
declare -A LAST

ctl() {
	local ns=$1
	shift
	unset "LAST[$ns]"
	nsx "$ns" cuckooctl "$@"
}

# read_counters VAR NS: VAR = the namespace's filter counters.
read_counters() {
	local -n _c=$1
	local -A st
	_c=
	ns_stats st "$2" "$TMP/stats" || return 1
	_c="${st[ipv4.dropped]} ${st[ipv4.matched]} ${st[ipv6.dropped]} ${st[ipv6.matched]}"
	[[ $_c =~ ^[0-9]+\ [0-9]+\ [0-9]+\ [0-9]+$ ]]
}

# in_echos VAR NS FAMILY: VAR = the ICMP echo requests the namespace's
# stack received, read from its helper's /proc/PID/net (no process
# started).
in_echos() {
	local -n _e=$1
	local -a head=() val=()
	local line i
	shift
	_e=
	if [[ $2 == ipv4 ]]; then
		while read -r line; do
			if [[ $line == Icmp:* ]]; then
				if ((${#head[@]} == 0)); then
					read -ra head <<<"$line"
				else
					read -ra val <<<"$line"
					for i in "${!head[@]}"; do
						[[ ${head[i]} == InEchos ]] && _e=${val[i]}
					done
				fi
			fi
		done <"/proc/${HELPER[$1]}/net/snmp"
	else
		while read -r line; do
			if [[ $line =~ ^Icmp6InEchos[[:space:]]+([0-9]+)$ ]]; then
				_e=${BASH_REMATCH[1]}
				break
			fi
		done <"/proc/${HELPER[$1]}/net/snmp6"
	fi
	[[ $_e =~ ^[0-9]+$ ]]
}

# expect VERDICT RNS SRC DST: ping DST from SRC in the sender namespace and
# check the receiver namespace RNS saw VERDICT ("pass", "drop" or
# "monitor": passes but is counted as matched).
expect() {
	local verdict=$1 rns=$2 src=$3 dst=$4 fam=ipv4 before after e0 e1 wait rc=0 ping_rc
	local d0 m0 d1 m1 n
	[[ $src == *:* ]] && fam=ipv6
	before=${LAST[$rns]:-}
	if [[ -z $before ]]; then
		read_counters before "$rns" || { fail "$verdict $src -> $dst: read counters"; return; }
	fi
	in_echos e0 "$rns" "$fam" || { fail "$verdict $src -> $dst: read ICMP counters"; return; }
	# A blocked ping needs no wait for a reply: it is judged on counters
	# (and a veth delivers within the sender's send call).
	[[ $verdict == drop ]] && wait=0.01 || wait=10
	nsx "$S" ping -q -c "$NPINGS" -i 0.02 -W "$wait" -I "$src" "$dst" >/dev/null 2>&1
	ping_rc=$?
	# shellcheck disable=SC2086 # the counters, one a word, into $1...
	set -- $before
	[[ $fam == ipv4 ]] && d0=$1 m0=$2 || d0=$3 m0=$4
	# Each echo request is dropped or delivered once the receiver's stack
	# has got to it, mostly within the send call: read again (2 s at
	# most) until all of them are.
	for ((n = 0; ; n++)); do
		read_counters after "$rns" || { fail "$verdict $src -> $dst: read counters"; return; }
		in_echos e1 "$rns" "$fam" || { fail "$verdict $src -> $dst: read ICMP counters"; return; }
		# shellcheck disable=SC2086 # the counters, one a word, into $1...
		set -- $after
		[[ $fam == ipv4 ]] && d1=$1 m1=$2 || d1=$3 m1=$4
		((d1 - d0 + e1 - e0 >= NPINGS || n >= 20)) && break
		sleep 0.1
	done
	LAST[$rns]=$after
	case $verdict in
	pass)
		((d1 == d0 && m1 == m0 && e1 - e0 == NPINGS)) || rc=1 ;;
	drop)
		((ping_rc != 0 && d1 - d0 == NPINGS && m1 - m0 == NPINGS && e1 == e0)) || rc=1 ;;
	monitor)
		((d1 == d0 && m1 - m0 == NPINGS && e1 - e0 == NPINGS)) || rc=1 ;;
	esac
	((rc == 0)) || note "ping exit $ping_rc, dropped +$((d1 - d0)), matched +$((m1 - m0)), InEchos +$((e1 - e0))"
	verdict "$rc" "$verdict $src -> $dst ($rns)"
}

# listed NS ADDR...: exactly these addresses are in the namespace's set.
expect_listed() {
	local ns=$1 want got
	shift
	want=$(printf '%s\n' "$@" | sort)
	got=$(ctl "$ns" list | sort)
	[[ $got == "$want" ]]
	verdict $? "set of $ns is {${want//$'\n'/ }}"
}

# sets R1SET R2SET: the receivers' sets are exactly these (space
# separated lists), both in drop mode.
sets() {
	local ns list
	for ns in "$R1" "$R2"; do
		list=$1
		shift
		# shellcheck disable=SC2086 # $list: addresses, one argument each
		{ ctl "$ns" flush >/dev/null && ctl "$ns" mode drop &&
			{ [[ -z $list ]] || ctl "$ns" add $list; }; } ||
			fail "$ns: set {$list} in drop mode"
	done
}

test_blocked_exactly() {
	note "IPv4 and IPv6: only listed sources are dropped"
	sets "" ""
	expect pass "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" fd01::1 fd01::2
	ctl "$R1" add 10.0.1.1 fd01::1
	verdict $? "add 10.0.1.1 fd01::1 in $R1"
	expect drop "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" 10.0.1.11 10.0.1.2
	expect drop "$R1" fd01::1 fd01::2
	expect pass "$R1" fd01::11 fd01::2
}

test_netns_isolation() {
	note "two receiver namespaces with different sets"
	sets "10.0.1.1 fd01::1" ""
	ctl "$R2" add 10.0.2.11 fd02::11
	verdict $? "add 10.0.2.11 fd02::11 in $R2"
	expect_listed "$R1" 10.0.1.1 fd01::1
	expect_listed "$R2" 10.0.2.11 fd02::11
	[[ -z $(cuckooctl list) ]]
	verdict $? "set of the initial namespace is still empty"
	expect pass "$R2" 10.0.2.1 10.0.2.2
	expect drop "$R2" 10.0.2.11 10.0.2.2
	expect pass "$R2" fd02::1 fd02::2
	expect drop "$R2" fd02::11 fd02::2
	expect drop "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" 10.0.1.11 10.0.1.2
}

test_pass_after_delete() {
	note "deleted sources pass again"
	sets "10.0.1.1 fd01::1" "10.0.2.11 fd02::11"
	ctl "$R1" del 10.0.1.1 fd01::1
	verdict $? "del 10.0.1.1 fd01::1 in $R1"
	expect_listed "$R1"
	expect pass "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" fd01::1 fd01::2
	expect drop "$R2" 10.0.2.11 10.0.2.2
}

test_monitor_mode() {
	local -A st
	local m1='' m2=''
	note "monitor mode counts matches and drops nothing, in its namespace only"
	sets "" "10.0.2.11 fd02::11"
	ctl "$R1" add 10.0.1.1 fd01::1 && ctl "$R1" mode monitor
	verdict $? "add 10.0.1.1 fd01::1, mode monitor in $R1"
	ns_stats st "$R1" "$TMP/stats" && m1=${st[mode]}
	ns_stats st "$R2" "$TMP/stats" && m2=${st[mode]}
	[[ $m1 == monitor && $m2 == drop ]]
	verdict $? "$R1 is in monitor mode, $R2 still in drop mode"
	expect monitor "$R1" 10.0.1.1 10.0.1.2
	expect monitor "$R1" fd01::1 fd01::2
	expect pass "$R1" 10.0.1.11 10.0.1.2
	expect drop "$R2" 10.0.2.11 10.0.2.2
	ctl "$R1" mode drop
	verdict $? "mode drop in $R1"
	expect drop "$R1" 10.0.1.1 10.0.1.2
	expect drop "$R1" fd01::1 fd01::2
}

require_module
setup || ktap_bail "setup: namespaces, veth pairs and helpers"
run_tests
