#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fail2ban drives cuckoo_nf: Debian's fail2ban-server with the actions
# userspace/fail2ban/action.d/cuckoo_nf.conf and cuckoo_nf-rules.conf
# (copied next to the tests by their Makefile as fail2ban-action.conf and
# fail2ban-rules-action.conf), in the receiver's namespace, on log files
# this script writes.  An engine test: it needs the VM's engines
# layer (make check-engines, or CNF_VM_LAYERS=engines selftests/vm/run
# selftests/vm/run_tests.sh fail2ban.sh) and skips without fail2ban.
#
#   sender ns: 10.0.7.1-.12, fd07::1, fd07::11,   receiver ns: 10.0.7.100,
#      fd07::21, fd07::22                           fd07::100; fail2ban-server,
#      s1 ----------------------------------- r1   TCP listeners on 22 and 80
#
# The jails (filter: "auth failure from <HOST>", maxretry 3, findtime 60 s):
#   web   bantime BANTIME s, set f2b-web
#   long  bantime 600 s, set f2b-long: bans that must not run out in a test
#   perm  bantime -1 (permanent), set f2b-perm
#   ssh   action cuckoo_nf-rules, port 22, tcp, ipv6_ban_prefix 64,
#         bantime 600 s: a --rules-only set f2b-ssh and a rule
#         `-p tcp -m multiport --dports 22 -m cuckoo --match-set f2b-ssh src
#         -j REJECT` in iptables' and ip6tables' INPUT
# A source is banned when its address is in the jail's set (`cuckooctl
# test`), and its traffic judged on counters: a banned source's pings are
# all added to the module's dropped counter and none reaches the
# receiver's ICMP InEchos; a source let through, the other way round.
#
#   test_ban             3 failures: banned, with the ban time as the
#                        entry's timeout; an unlisted source passes
#   test_below_maxretry  2 failures (fail2ban saw them): not banned
#   test_unbanip         fail2ban-client set web unbanip: passes again
#   test_bantime_expiry  the ban runs out: passes again
#   test_kernel_expiry   fail2ban frozen (SIGSTOP) once it banned: the
#                        kernel removes the entry when its timeout runs out
#                        and the source passes; thawed, fail2ban unbans it
#                        without error (del --exist)
#   test_ipv6            an IPv6 source banned, unbanip'ed
#   test_permanent       bantime -1: an entry with no timeout
#   test_repair          the set destroyed behind fail2ban's back: the next
#                        ban fails, actioncheck finds no set, actionrepair
#                        makes it again and the ban goes in
#   test_stop_jail       fail2ban-client stop web: f2b-web is gone, its
#                        bans pass; the other jails' sets, a set of the
#                        test's and the default set's entries stay, and
#                        still drop
#   test_restart         fail2ban killed (SIGKILL): its sets stay, bans
#                        still dropped; started again (its database was in
#                        memory: it remembers no ban), each jail's
#                        actionstart empties the set left behind
#   test_rules           the ssh jail: its rules are there; an offender's
#                        connections to port 22 refused (the REJECT's ICMP
#                        error), to port 80 still served, its pings passed
#                        (the hooks never consult a --rules-only set)
#   test_rules_ipv6      an IPv6 offender of the ssh jail: its /64 banned,
#                        another address of it refused on port 22, served
#                        on 80
#   test_rules_stop      fail2ban-client stop ssh: both rules and f2b-ssh
#                        gone, port 22 served again
# Each test uses sources of its own, so TESTS= may pick any of them;
# test_rules_stop, test_stop_jail and test_restart, which end jails, run
# last.
#
# CNF_TEST_F2B_BANTIME: the web jail's bantime (default 8 s: long enough
# to see the drop under TCG on a busy host, short enough to wait for).
set -uo pipefail

ALL_TESTS="test_ban test_below_maxretry test_unbanip test_bantime_expiry
	test_kernel_expiry test_ipv6 test_permanent test_repair test_rules
	test_rules_ipv6 test_rules_stop test_stop_jail test_restart"

NPINGS=3
BANTIME=${CNF_TEST_F2B_BANTIME:-8}
S=f2b-s-$$
R=f2b-r-$$
DST4=10.0.7.100
DST6=fd07::100
SRCS=(10.0.7.1 10.0.7.2 10.0.7.3 10.0.7.4 10.0.7.5 10.0.7.6 10.0.7.7 10.0.7.8
	10.0.7.9 10.0.7.10 10.0.7.11 10.0.7.12 fd07::1 fd07::11 fd07::21 fd07::22)
JAILS=(web long perm ssh)
ACTION=$(dirname "$(realpath "$0")")/fail2ban-action.conf
RULES_ACTION=$(dirname "$(realpath "$0")")/fail2ban-rules-action.conf
RULE=(-p tcp -m multiport --dports 22 -m cuckoo --match-set f2b-ssh src -j REJECT)
TMP=
CONF=
F2B_PID=
# A process living in the receiver namespace, whose /proc/PID/net/snmp
# this shell reads without starting anything.
HELPER=

# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

ctl() { nsx "$R" cuckooctl "$@"; }
f2b() { fail2ban-client -c "$CONF" "$@"; }

# fail2ban's configuration directory: its own socket, pid and log files,
# an in-memory database, our filter, the action under test and the jails.
write_conf() {
	mkdir -p "$CONF/action.d" "$CONF/filter.d" || return 1
	cp "$ACTION" "$CONF/action.d/cuckoo_nf.conf" || return 1
	cp "$RULES_ACTION" "$CONF/action.d/cuckoo_nf-rules.conf" || return 1
	cat >"$CONF/fail2ban.conf" <<-EOF || return 1
	[Definition]
	loglevel = INFO
	logtarget = $TMP/fail2ban.log
	syslogsocket = auto
	socket = $TMP/fail2ban.sock
	pidfile = $TMP/fail2ban.pid
	dbfile = :memory:
	dbpurgeage = 1d
	EOF
	cat >"$CONF/filter.d/cnf-test.conf" <<-'EOF' || return 1
	[Definition]
	failregex = ^auth failure from <HOST>$
	datepattern = {NONE}
	EOF
	cat >"$CONF/jail.conf" <<-EOF
	[DEFAULT]
	backend = polling
	maxretry = 3
	findtime = 60
	action = cuckoo_nf[cuckooctl=$(command -v cuckooctl)]

	[web]
	enabled = true
	filter = cnf-test
	logpath = $TMP/web.log
	bantime = $BANTIME

	[long]
	enabled = true
	filter = cnf-test
	logpath = $TMP/long.log
	bantime = 600

	[perm]
	enabled = true
	filter = cnf-test
	logpath = $TMP/perm.log
	bantime = -1

	[ssh]
	enabled = true
	filter = cnf-test
	logpath = $TMP/ssh.log
	bantime = 600
	action = cuckoo_nf-rules[cuckooctl=$(command -v cuckooctl), port=22, protocol=tcp, ipv6_ban_prefix=64]
	EOF
}

# listen: a TCP server in the receiver's namespace on ports 22 and 80, both
# families, that takes each connection and closes it.
listen() {
	local argv
	nsx_argv argv "$R" python3 -c '
import selectors, socket
sel = selectors.DefaultSelector()
for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
    for port in (22, 80):
        s = socket.socket(fam, socket.SOCK_STREAM)
        if fam == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        s.listen(64)
        sel.register(s, selectors.EVENT_READ)
print("listening", flush=True)
while True:
    for key, _ in sel.select():
        key.fileobj.accept()[0].close()
'
	"${argv[@]}" >"$TMP/listen.out" 2>&1 &
	defer kill $!
	wait_for 10 grep -q listening "$TMP/listen.out"
}

# tcp_try SRC PORT: "connected", "refused" or "timeout" (5 s), a TCP
# connection from SRC to the receiver's PORT.
tcp_try() {
	local dst=$DST4
	is_v6 "$1" && dst=$DST6
	nsx "$S" python3 -c '
import socket, sys
src, dst, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    socket.create_connection((dst, port), timeout=5, source_address=(src, 0))
    print("connected")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")
except OSError as e:
    print(e)
' "$1" "$dst" "$2"
}

# expect_tcp VERDICT SRC PORT: tcp_try says VERDICT.
expect_tcp() {
	local got
	got=$(tcp_try "$2" "$3")
	[[ $got == "$1" ]]
	verdict $? "$2 to port $3: $1 ($got)"
}

# listed SET LINE: a line of `cuckooctl -s SET list` starts with LINE.
listed() { ctl -s "$1" list | grep -q "^$2"; }

# rule_in IPTABLES: the ssh jail's rule is in IPTABLES' INPUT.
rule_in() { nsx "$R" "$1" -w -C INPUT "${RULE[@]}" 2>/dev/null; }

# rule_pkts IPTABLES: the packets the ssh jail's rule matched.
rule_pkts() {
	nsx "$R" "$1" -w -L INPUT -v -x -n | awk '/cuckoo/ && /REJECT/ { print $1; exit }'
}

set_empty() { [[ -z $(ctl -s "$1" list) ]]; }

setup() {
	local argv
	tmpdir TMP || return 1
	CONF=$TMP/conf
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "${SRCS[@]}" || return 1
	nsx_argv argv "$R" sleep 100000
	"${argv[@]}" &
	HELPER=$!
	defer kill "$HELPER"
	wait_for 5 test /proc/$HELPER/ns/net -ef "/run/netns/$R" || return 1
	ctl mode drop >/dev/null || return 1
	write_conf || return 1
	for j in "${JAILS[@]}"; do
		: >"$TMP/$j.log"
	done
	listen || return 1
	defer kill_server
	start_server
}

# start_server: fail2ban-server forks into the background, in the
# receiver's namespace: the action's cuckooctl acts on that namespace's
# filter.  Its jails are up when their sets are (actionstart).
start_server() {
	local j
	rm -f "$TMP/fail2ban.pid"
	nsx "$R" fail2ban-server -c "$CONF" -b -x >"$TMP/server.out" 2>&1 || {
		sed 's/^/# /' "$TMP/server.out"
		return 1
	}
	wait_for 10 test -s "$TMP/fail2ban.pid" || return 1
	F2B_PID=$(<"$TMP/fail2ban.pid")
	for j in "${JAILS[@]}"; do
		wait_for 60 set_exists "f2b-$j" && continue
		note "fail2ban's set f2b-$j did not appear:"
		sed 's/^/# /' "$TMP/fail2ban.log"
		return 1
	done
}

# At exit: fail2ban stopped (it destroys its sets), thawed first in case a
# test left it frozen, killed if it does not stop.
kill_server() {
	[[ -n $F2B_PID ]] || return
	kill -CONT "$F2B_PID"
	timeout 30 fail2ban-client -c "$CONF" stop >/dev/null
	kill -9 "$F2B_PID"
}

# fails LOG SRC N: N authentication failures of SRC in jail log LOG.
fails() {
	local i
	for ((i = 0; i < $3; i++)); do
		echo "auth failure from $2"
	done >>"$TMP/$1.log"
}

# in_echos VAR FAMILY: VAR = the echo requests the receiver's stack got.
in_echos() {
	local -n _e=$1
	local -a head=() val=()
	local line i
	_e=
	if [[ $2 == ipv4 ]]; then
		while read -r line; do
			[[ $line == Icmp:* ]] || continue
			if ((${#head[@]} == 0)); then
				read -ra head <<<"$line"
			else
				read -ra val <<<"$line"
				for i in "${!head[@]}"; do
					[[ ${head[i]} == InEchos ]] && _e=${val[i]}
				done
			fi
		done <"/proc/$HELPER/net/snmp"
	else
		while read -r line; do
			if [[ $line =~ ^Icmp6InEchos[[:space:]]+([0-9]+)$ ]]; then
				_e=${BASH_REMATCH[1]}
				break
			fi
		done <"/proc/$HELPER/net/snmp6"
	fi
	[[ $_e =~ ^[0-9]+$ ]]
}

# expect VERDICT SRC: NPINGS pings from SRC are all dropped by the module
# ("drop") or all reach the receiver ("pass").
expect() {
	local verdict=$1 src=$2 fam=ipv4 dst=$DST4 e0 e1 d0 d1 n wait rc=0
	local -A st
	if is_v6 "$src"; then
		fam=ipv6 dst=$DST6
	fi
	ns_stats st "$R" "$TMP/stats" || { fail "$verdict $src: read stats"; return; }
	d0=${st[$fam.dropped]}
	in_echos e0 "$fam" || { fail "$verdict $src: read ICMP counters"; return; }
	[[ $verdict == drop ]] && wait=0.01 || wait=10
	nsx "$S" ping -q -c "$NPINGS" -i 0.05 -W "$wait" -I "$src" "$dst" >/dev/null 2>&1
	# Each request is dropped or delivered once the receiver's stack got
	# to it: read again (2 s at most) until all are.
	for ((n = 0; ; n++)); do
		ns_stats st "$R" "$TMP/stats" || { fail "$verdict $src: read stats"; return; }
		d1=${st[$fam.dropped]}
		in_echos e1 "$fam" || { fail "$verdict $src: read ICMP counters"; return; }
		((d1 - d0 + e1 - e0 >= NPINGS || n >= 20)) && break
		sleep 0.1
	done
	case $verdict in
	pass) ((d1 == d0 && e1 - e0 == NPINGS)) || rc=1 ;;
	drop) ((d1 - d0 == NPINGS && e1 == e0)) || rc=1 ;;
	esac
	((rc == 0)) || note "dropped +$((d1 - d0)), InEchos +$((e1 - e0))"
	verdict "$rc" "$src: $verdict"
}

# ban LOG SET SRC: 3 failures of SRC, then SRC in SET within 30 s.
ban() {
	fails "$1" "$3" 3
	wait_for 30 set_has "$2" "$3"
	verdict $? "3 failures of $3: in $2"
}

# entry_timeout VAR SET ADDR: VAR = the seconds ADDR's entry in SET has
# left by `cuckooctl list` ("ADDR timeout N"), "none" without a timeout,
# empty when it is not listed.
entry_timeout() {
	local -n _t=$1
	local a w n
	_t=
	while read -r a w n; do
		[[ $a == "$3" ]] || continue
		if [[ $w == timeout ]]; then _t=$n; else _t=none; fi
	done < <(ctl -s "$2" list)
}

# jail_total_failed JAIL: fail2ban's count of failures it read in JAIL.
jail_total_failed() {
	f2b status "$1" 2>/dev/null | sed -n 's/.*Total failed:[[:space:]]*\([0-9]*\).*/\1/p'
}

test_ban() {
	local t
	note "3 failures: banned for bantime ($BANTIME s) in the kernel too"
	ban web f2b-web 10.0.7.1
	entry_timeout t f2b-web 10.0.7.1
	[[ $t =~ ^[0-9]+$ ]] && ((t > 0 && t <= BANTIME))
	verdict $? "10.0.7.1 has a timeout of at most $BANTIME s ($t)"
	expect drop 10.0.7.1
	expect pass 10.0.7.9
}

test_below_maxretry() {
	local before
	note "2 failures, below maxretry: not banned"
	before=$(jail_total_failed web)
	[[ -n $before ]] || { fail "fail2ban-client status web"; return; }
	fails web 10.0.7.2 2
	# Banned or not, fail2ban acts once it has read them.
	# shellcheck disable=SC2016 # expanded by eval, at each try
	wait_for 30 eval '(( $(jail_total_failed web) >= before + 2 ))'
	verdict $? "fail2ban read the 2 failures"
	sleep 1
	set_lacks f2b-web 10.0.7.2
	verdict $? "10.0.7.2 not in f2b-web"
	expect pass 10.0.7.2
}

test_unbanip() {
	note "fail2ban-client set JAIL unbanip: passes again"
	ban long f2b-long 10.0.7.3
	expect drop 10.0.7.3
	f2b set long unbanip 10.0.7.3 >/dev/null
	verdict $? "fail2ban-client set long unbanip 10.0.7.3"
	set_lacks f2b-long 10.0.7.3
	verdict $? "10.0.7.3 no longer in f2b-long"
	expect pass 10.0.7.3
}

test_bantime_expiry() {
	local t0
	note "the ban runs out after bantime ($BANTIME s): passes again"
	ban web f2b-web 10.0.7.4
	t0=$SECONDS
	expect drop 10.0.7.4
	wait_for $((BANTIME + 10)) set_lacks f2b-web 10.0.7.4
	verdict $? "10.0.7.4 out of f2b-web after $((SECONDS - t0)) s"
	expect pass 10.0.7.4
}

# The server frozen: only the kernel can remove the entry.
frozen() { [[ $(</proc/"$F2B_PID"/stat) =~ ^[0-9]+\ \(.*\)\ T ]]; }

test_kernel_expiry() {
	local t t0
	note "fail2ban frozen once it banned: the kernel's timeout ends the ban"
	ban web f2b-web 10.0.7.5
	kill -STOP "$F2B_PID"
	wait_for 5 frozen
	verdict $? "fail2ban-server (pid $F2B_PID) stopped"
	t0=$SECONDS
	entry_timeout t f2b-web 10.0.7.5
	[[ $t =~ ^[0-9]+$ ]] && ((t > 0))
	verdict $? "10.0.7.5 has a timeout ($t s left)"
	expect drop 10.0.7.5
	wait_for $((BANTIME + 5)) set_lacks f2b-web 10.0.7.5
	verdict $? "the kernel removed 10.0.7.5 after $((SECONDS - t0)) s"
	frozen
	verdict $? "fail2ban-server still stopped"
	expect pass 10.0.7.5
	kill -CONT "$F2B_PID"
	# Thawed, fail2ban ends the ban itself: its unban finds no entry.
	wait_for 30 eval '! f2b get web banned 10.0.7.5 | grep -q 1'
	verdict $? "fail2ban unbanned 10.0.7.5"
	! grep -E 'ERROR.*(10\.0\.7\.5|unban)' "$TMP/fail2ban.log"
	verdict $? "no error in fail2ban's log"
}

test_ipv6() {
	note "an IPv6 source: banned, unbanned"
	ban long f2b-long fd07::1
	expect drop fd07::1
	expect pass fd07::11
	f2b set long unbanip fd07::1 >/dev/null
	verdict $? "fail2ban-client set long unbanip fd07::1"
	set_lacks f2b-long fd07::1
	verdict $? "fd07::1 no longer in f2b-long"
	expect pass fd07::1
}

test_permanent() {
	local t
	note "bantime -1: an entry without a timeout"
	ban perm f2b-perm 10.0.7.6
	entry_timeout t f2b-perm 10.0.7.6
	[[ $t == none ]]
	verdict $? "10.0.7.6 has no timeout ($t)"
	expect drop 10.0.7.6
}

test_repair() {
	note "a set destroyed under fail2ban: made again at the next ban"
	ctl destroy f2b-long >/dev/null
	verdict $? "cuckooctl destroy f2b-long"
	ban long f2b-long 10.0.7.10
	grep -q 'Invariant check failed' "$TMP/fail2ban.log"
	verdict $? "fail2ban's log: invariant check failed, repaired"
	expect drop 10.0.7.10
}

test_stop_jail() {
	local d0 p0
	note "stopping a jail removes its set, nothing else"
	ctl create keep block >/dev/null && ctl -s keep add 10.0.7.7 >/dev/null &&
		ctl add --exist 10.0.7.8 >/dev/null
	verdict $? "set keep {10.0.7.7}, default set {10.0.7.8}"
	defer ctl destroy keep
	defer ctl del --exist 10.0.7.8
	d0=$(ctl list)
	# perm's set holds a ban: its own, or one made here.
	set_has f2b-perm 10.0.7.6 || ban perm f2b-perm 10.0.7.6
	p0=$(ctl -s f2b-perm list)
	ban web f2b-web 10.0.7.9
	f2b stop web >/dev/null
	verdict $? "fail2ban-client stop web"
	! set_exists f2b-web
	verdict $? "f2b-web destroyed"
	set_exists keep && [[ $(ctl -s keep list) == 10.0.7.7 ]]
	verdict $? "set keep still {10.0.7.7}"
	[[ $(ctl list) == "$d0" ]]
	verdict $? "the default set as it was"
	[[ $(ctl -s f2b-perm list) == "$p0" ]]
	verdict $? "f2b-perm as it was"
	set_exists f2b-long
	verdict $? "f2b-long still there"
	expect pass 10.0.7.9
	expect drop 10.0.7.7
	expect drop 10.0.7.8
	expect drop 10.0.7.6
}

test_rules() {
	local p
	note "cuckoo_nf-rules: port 22 refused to an offender, port 80 served"
	[[ $(ctl -j sets) == *'"name":"f2b-ssh",'*'"rules_only":true'* ]]
	verdict $? "f2b-ssh is --rules-only"
	rule_in iptables && rule_in ip6tables
	verdict $? "iptables and ip6tables: -A INPUT ${RULE[*]}"
	expect_tcp connected 10.0.7.12 22
	ban ssh f2b-ssh 10.0.7.12
	expect_tcp refused 10.0.7.12 22
	p=$(rule_pkts iptables)
	[[ $p =~ ^[0-9]+$ ]] && ((p > 0))
	verdict $? "the rule matched its packets ($p)"
	expect_tcp connected 10.0.7.12 80
	expect pass 10.0.7.12
}

test_rules_ipv6() {
	local l rc
	note "cuckoo_nf-rules, ipv6_ban_prefix 64: an IPv6 offender's /64"
	ban ssh f2b-ssh fd07::21
	# The network goes in just after the address.
	wait_for 10 listed f2b-ssh "fd07::/64 timeout"
	rc=$?
	l=$(ctl -s f2b-ssh list)
	verdict "$rc" "f2b-ssh holds fd07::/64 (${l//$'\n'/, })"
	expect_tcp refused fd07::22 22
	expect_tcp connected fd07::22 80
}

test_rules_stop() {
	note "stopping the ssh jail removes its rules and its set"
	if ! set_has f2b-ssh 10.0.7.12; then
		ban ssh f2b-ssh 10.0.7.12
	fi
	f2b stop ssh >/dev/null
	verdict $? "fail2ban-client stop ssh"
	! rule_in iptables && ! rule_in ip6tables
	verdict $? "the rules are gone from iptables and ip6tables"
	! nsx "$R" iptables -w -S | grep -q cuckoo
	verdict $? "no rule of iptables names a set"
	! set_exists f2b-ssh
	verdict $? "f2b-ssh destroyed"
	expect_tcp connected 10.0.7.12 22
}

test_restart() {
	local j
	note "fail2ban killed, started again: the sets it left are emptied"
	ban long f2b-long 10.0.7.11
	kill -9 "$F2B_PID"
	wait_for 10 test ! -e "/proc/$F2B_PID"
	verdict $? "fail2ban-server (pid $F2B_PID) killed"
	set_has f2b-long 10.0.7.11
	verdict $? "f2b-long still holds 10.0.7.11"
	expect drop 10.0.7.11
	start_server
	verdict $? "fail2ban-server started again (pid $F2B_PID)"
	# The sets were there before: each is emptied when its jail's
	# actions start, a little after the server is up.
	for j in "${JAILS[@]}"; do
		wait_for 30 set_empty "f2b-$j"
		verdict $? "f2b-$j empty"
	done
	expect pass 10.0.7.11
}

require_root
require_module
require_cmds fail2ban-server fail2ban-client python3 iptables ip6tables
require_file "$ACTION" "the action, copied by the selftests' Makefile"
require_file "$RULES_ACTION" "the rules action, copied by the selftests' Makefile"
iptables -m cuckoo -h >/dev/null 2>&1 ||
	ktap_skip_all "iptables has no match cuckoo (build/libxt_cuckoo.so not built)"
setup || ktap_bail "setup: namespaces, veth or fail2ban-server"
run_tests
