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
# receiver's ICMP InEchos; a passing one must be answered, add to InEchos
# and leave "dropped" alone.
set -uo pipefail

KSFT_SKIP=4
NPINGS=3
S=ns-s-$$
R1=ns-r1-$$
R2=ns-r2-$$
ret=0
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
	for ns in "$S" "$R1" "$R2"; do
		ip netns del "$ns" 2>/dev/null
	done
}

skip_unless_ready() {
	if [[ ! -c /dev/cuckoo_nf ]]; then
		echo "SKIP: /dev/cuckoo_nf missing (module not loaded)"
		exit $KSFT_SKIP
	fi
	if ! command -v cuckooctl >/dev/null; then
		echo "SKIP: cuckooctl not found"
		exit $KSFT_SKIP
	fi
}

# link N: veth s$N (in $S) <-> r$N (in receiver namespace $2).  Addresses
# skip DAD and neighbours are static so that no NDP packet from a listed
# source reaches a filter: counters then count pings only.
setup_link() {
	local n=$1 rns=$2 smac rmac
	ip link add "s$n" netns "$S" type veth peer name "r$n" netns "$rns"
	ip -n "$S" addr add "10.0.$n.1/24" dev "s$n"
	ip -n "$S" addr add "10.0.$n.11/24" dev "s$n"
	ip -n "$S" addr add "fd0$n::1/64" dev "s$n" nodad
	ip -n "$S" addr add "fd0$n::11/64" dev "s$n" nodad
	ip -n "$rns" addr add "10.0.$n.2/24" dev "r$n"
	ip -n "$rns" addr add "fd0$n::2/64" dev "r$n" nodad
	ip -n "$S" link set "s$n" up
	ip -n "$rns" link set "r$n" up
	smac=$(ip -n "$S" -br link show "s$n" | awk '{ print $3 }')
	rmac=$(ip -n "$rns" -br link show "r$n" | awk '{ print $3 }')
	ip -n "$S" neigh replace "10.0.$n.2" lladdr "$rmac" dev "s$n" nud permanent
	ip -n "$S" neigh replace "fd0$n::2" lladdr "$rmac" dev "s$n" nud permanent
	for a in "10.0.$n.1" "10.0.$n.11" "fd0$n::1" "fd0$n::11"; do
		ip -n "$rns" neigh replace "$a" lladdr "$smac" dev "r$n" nud permanent
	done
}

# Runs in a subshell under set -e: the first failing step fails the setup.
setup() (
	set -e
	for ns in "$S" "$R1" "$R2"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	setup_link 1 "$R1"
	setup_link 2 "$R2"
)

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
	local json
	COUNTERS=
	json=$(nsx "$1" cuckooctl stats -j) || return 1
	COUNTERS="$(stats_field "$json" .ipv4.dropped) $(stats_field "$json" .ipv4.matched)"
	COUNTERS+=" $(stats_field "$json" .ipv6.dropped) $(stats_field "$json" .ipv6.matched)"
	[[ $COUNTERS =~ ^[0-9]+\ [0-9]+\ [0-9]+\ [0-9]+$ ]]
}

# in_echos NS FAMILY: ICMP echo requests the namespace's stack received.
in_echos() {
	if [[ $2 == ipv4 ]]; then
		nsx "$1" awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 }
			else print $c["InEchos"] }' /proc/net/snmp
	else
		nsx "$1" awk '$1 == "Icmp6InEchos" { print $2 }' /proc/net/snmp6
	fi
}

family_of() {
	[[ $1 == *:* ]] && echo ipv6 || echo ipv4
}

# expect VERDICT RNS SRC DST: ping DST from SRC in the sender namespace and
# check the receiver namespace RNS saw VERDICT ("pass", "drop" or
# "monitor": passes but is counted as matched).
expect() {
	local verdict=$1 rns=$2 src=$3 dst=$4 fam before after e0 e1 wait rc=0 ping_rc
	local d0 m0 d1 m1
	fam=$(family_of "$src")
	before=${LAST[$rns]:-}
	if [[ -z $before ]]; then
		read_counters "$rns" || { log_test 1 "$verdict $src -> $dst: read counters"; return; }
		before=$COUNTERS
	fi
	e0=$(in_echos "$rns" "$fam")
	# A blocked ping only needs a short wait: it is judged on counters.
	[[ $verdict == drop ]] && wait=0.2 || wait=10
	nsx "$S" ping -q -c "$NPINGS" -i 0.02 -W "$wait" -I "$src" "$dst" >/dev/null 2>&1
	ping_rc=$?
	read_counters "$rns" || { log_test 1 "$verdict $src -> $dst: read counters"; return; }
	after=$COUNTERS
	e1=$(in_echos "$rns" "$fam")
	LAST[$rns]=$after
	if [[ ! $e0 =~ ^[0-9]+$ || ! $e1 =~ ^[0-9]+$ ]]; then
		log_test 1 "$verdict $src -> $dst: read ICMP counters"
		return
	fi
	set -- $before
	[[ $fam == ipv4 ]] && d0=$1 m0=$2 || d0=$3 m0=$4
	set -- $after
	[[ $fam == ipv4 ]] && d1=$1 m1=$2 || d1=$3 m1=$4
	case $verdict in
	pass)
		((ping_rc == 0 && d1 == d0 && m1 == m0 && e1 - e0 == NPINGS)) || rc=1 ;;
	drop)
		((ping_rc != 0 && d1 - d0 == NPINGS && m1 - m0 == NPINGS && e1 == e0)) || rc=1 ;;
	monitor)
		((ping_rc == 0 && d1 == d0 && m1 - m0 == NPINGS && e1 - e0 == NPINGS)) || rc=1 ;;
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
	[[ $(stats_field "$(ctl "$R1" stats -j)" .mode) == monitor &&
	   $(stats_field "$(ctl "$R2" stats -j)" .mode) == drop ]]
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
