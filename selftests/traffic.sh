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
set -uo pipefail

NPINGS=3
S=ns-s-$$
R1=ns-r1-$$
R2=ns-r2-$$
ret=0
TMP=
# Per receiver namespace: a process living there, whose /proc/PID/net/snmp
# this shell reads without starting anything.
declare -A HELPER
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

log_test() {
	local rc=$1 msg=$2
	if ((rc == 0)); then
		printf 'TEST: %-60s [ OK ]\n' "$msg"
	else
		printf 'TEST: %-60s [FAIL]\n' "$msg"
		ret=1
	fi
}

cleanup() {
	local ns
	for ns in "${!HELPER[@]}"; do
		kill "${HELPER[$ns]}" 2>/dev/null
	done
	wait 2>/dev/null
	for ns in "$S" "$R1" "$R2"; do
		ip netns del "$ns" 2>/dev/null
	done
	[[ -n $TMP ]] && rm -rf "$TMP"
}

skip_unless_ready() {
	[[ -c /dev/cuckoo_nf ]] || skip "/dev/cuckoo_nf missing (module not loaded)"
	command -v cuckooctl >/dev/null || skip "cuckooctl not found"
}

# Link N: veth sN (in $S) - rN (in receiver namespace RN), by lib.sh's
# veth_pair.  Addresses skip DAD and neighbours are static so that no NDP
# packet from a listed source reaches a filter: counters then count pings
# only.
setup() {
	local ns n
	TMP=$(mktemp -d) || return 1
	veth_pair 1 "$S" "$R1" 10.0.1.2 fd01::2 10.0.1.1 10.0.1.11 fd01::1 fd01::11 || return 1
	veth_pair 2 "$S" "$R2" 10.0.2.2 fd02::2 10.0.2.1 10.0.2.11 fd02::1 fd02::11 || return 1
	for ns in "$R1" "$R2"; do
		nsx_argv "$ns" sleep 100000
		"${NSX[@]}" &
		HELPER[$ns]=$!
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

# read_counters NS: set COUNTERS to the namespace's filter counters.
read_counters() {
	COUNTERS=
	ns_stats "$1" "$TMP/stats" || return 1
	COUNTERS="${STAT[ipv4.dropped]} ${STAT[ipv4.matched]} ${STAT[ipv6.dropped]} ${STAT[ipv6.matched]}"
	[[ $COUNTERS =~ ^[0-9]+\ [0-9]+\ [0-9]+\ [0-9]+$ ]]
}

# in_echos NS FAMILY: ECHOS, the ICMP echo requests the namespace's stack
# received, read from its helper's /proc/PID/net (no process started).
in_echos() {
	local -a head=() val=()
	local line i
	ECHOS=
	if [[ $2 == ipv4 ]]; then
		while read -r line; do
			if [[ $line == Icmp:* ]]; then
				if ((${#head[@]} == 0)); then
					read -ra head <<<"$line"
				else
					read -ra val <<<"$line"
					for i in "${!head[@]}"; do
						[[ ${head[i]} == InEchos ]] && ECHOS=${val[i]}
					done
				fi
			fi
		done <"/proc/${HELPER[$1]}/net/snmp"
	else
		while read -r line; do
			if [[ $line =~ ^Icmp6InEchos[[:space:]]+([0-9]+)$ ]]; then
				ECHOS=${BASH_REMATCH[1]}
				break
			fi
		done <"/proc/${HELPER[$1]}/net/snmp6"
	fi
	[[ $ECHOS =~ ^[0-9]+$ ]]
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
		read_counters "$rns" || { log_test 1 "$verdict $src -> $dst: read counters"; return; }
		before=$COUNTERS
	fi
	in_echos "$rns" "$fam" || { log_test 1 "$verdict $src -> $dst: read ICMP counters"; return; }
	e0=$ECHOS
	# A blocked ping needs no wait for a reply: it is judged on counters
	# (and a veth delivers within the sender's send call).
	[[ $verdict == drop ]] && wait=0.01 || wait=10
	nsx "$S" ping -q -c "$NPINGS" -i 0.02 -W "$wait" -I "$src" "$dst" >/dev/null 2>&1
	ping_rc=$?
	set -- $before
	[[ $fam == ipv4 ]] && d0=$1 m0=$2 || d0=$3 m0=$4
	# Each echo request is dropped or delivered once the receiver's stack
	# has got to it, mostly within the send call: read again (2 s at
	# most) until all of them are.
	for ((n = 0; ; n++)); do
		read_counters "$rns" || { log_test 1 "$verdict $src -> $dst: read counters"; return; }
		after=$COUNTERS
		in_echos "$rns" "$fam" || { log_test 1 "$verdict $src -> $dst: read ICMP counters"; return; }
		e1=$ECHOS
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
	((rc == 0)) || echo "    ping exit $ping_rc, dropped +$((d1 - d0)), matched +$((m1 - m0)), InEchos +$((e1 - e0))"
	log_test $rc "$(printf '%-7s %-9s -> %-9s (%s)' "$verdict" "$src" "$dst" "$rns")"
}

# listed NS ADDR...: exactly these addresses are in the namespace's set.
expect_listed() {
	local ns=$1 want got
	shift
	want=$(printf '%s\n' "$@" | sort)
	got=$(ctl "$ns" list | sort)
	[[ $got == "$want" ]]
	log_test $? "set of $ns is {$(echo $want)}"
}

test_blocked_exactly() {
	echo "# IPv4 and IPv6: only listed sources are dropped"
	expect pass "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" fd01::1 fd01::2
	ctl "$R1" add 10.0.1.1 fd01::1
	log_test $? "add 10.0.1.1 fd01::1 in $R1"
	expect drop "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" 10.0.1.11 10.0.1.2
	expect drop "$R1" fd01::1 fd01::2
	expect pass "$R1" fd01::11 fd01::2
}

test_netns_isolation() {
	echo "# two receiver namespaces with different sets"
	ctl "$R2" add 10.0.2.11 fd02::11
	log_test $? "add 10.0.2.11 fd02::11 in $R2"
	expect_listed "$R1" 10.0.1.1 fd01::1
	expect_listed "$R2" 10.0.2.11 fd02::11
	[[ -z $(cuckooctl list) ]]
	log_test $? "set of the initial namespace is still empty"
	expect pass "$R2" 10.0.2.1 10.0.2.2
	expect drop "$R2" 10.0.2.11 10.0.2.2
	expect pass "$R2" fd02::1 fd02::2
	expect drop "$R2" fd02::11 fd02::2
	expect drop "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" 10.0.1.11 10.0.1.2
}

test_pass_after_delete() {
	echo "# deleted sources pass again"
	ctl "$R1" del 10.0.1.1 fd01::1
	log_test $? "del 10.0.1.1 fd01::1 in $R1"
	expect_listed "$R1"
	expect pass "$R1" 10.0.1.1 10.0.1.2
	expect pass "$R1" fd01::1 fd01::2
	expect drop "$R2" 10.0.2.11 10.0.2.2
}

test_monitor_mode() {
	echo "# monitor mode counts matches and drops nothing, in its namespace only"
	ctl "$R1" add 10.0.1.1 fd01::1 && ctl "$R1" mode monitor
	log_test $? "add 10.0.1.1 fd01::1, mode monitor in $R1"
	local m1 m2
	ns_stats "$R1" "$TMP/stats" && m1=${STAT[mode]}
	ns_stats "$R2" "$TMP/stats" && m2=${STAT[mode]}
	[[ ${m1:-} == monitor && ${m2:-} == drop ]]
	log_test $? "$R1 is in monitor mode, $R2 still in drop mode"
	expect monitor "$R1" 10.0.1.1 10.0.1.2
	expect monitor "$R1" fd01::1 fd01::2
	expect pass "$R1" 10.0.1.11 10.0.1.2
	expect drop "$R2" 10.0.2.11 10.0.2.2
	ctl "$R1" mode drop
	log_test $? "mode drop in $R1"
	expect drop "$R1" 10.0.1.1 10.0.1.2
	expect drop "$R1" fd01::1 fd01::2
}

skip_unless_ready
trap cleanup EXIT
if ! setup; then
	echo "FAIL: setup"
	exit 1
fi
test_blocked_exactly
test_netns_isolation
test_pass_after_delete
test_monitor_mode
exit $ret
