#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A blocklist as published lists the bogons: 127.0.0.0/8 and 10.0.0.0/8
# among them.  Loaded as it is, it must not cut the host off from itself:
# what arrives on a loopback device is never judged, and every prefix that
# covers an address of the namespace's own is named when it is stored.
#
#   sender ns: 10.0.9.1, fd09::1   s1 ---------- r1   10.0.9.2, fd09::2: receiver ns
#
# test_bogons_spare_loopback  a FireHOL-level1-shaped list with IPv6 bogons
#                  beside it, loaded in the receiver: ping and TCP over
#                  loopback keep working in both families and are not even
#                  looked up (the hooks' checked counters do not move),
#                  while the sender, inside 10.0.0.0/8, is dropped
# test_warns_own_addresses    load, add, replace and restore name each
#                  covered address of the namespace and its device; -q and
#                  an allow set say nothing; the entries are stored
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_bogons_spare_loopback test_warns_own_addresses"
S=cnf-lo-s-$$
R=cnf-lo-r-$$
# Read by lib.sh's counter_tables and ping_argv.
# shellcheck disable=SC2034
DST4=10.0.9.2 DST6=fd09::2
SRCS=(10.0.9.1 fd09::1)
TMP=
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

setup() {
	tmpdir TMP || return 1
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "${SRCS[@]}" || return 1
	# The sender's link-local chatter (router solicitations, MLD) stops
	# at r1's ingress, before the hooks: their counters then count only
	# what the tests send.
	nsx "$R" nft -f - <<-NFT || return 1
	table netdev cnf_lo_quiet {
		chain in {
			type filter hook ingress device r1 priority 0;
			ip6 saddr fe80::/10 drop
		}
	}
	NFT
	# FireHOL level1's bogons (it lists more: the rest are public), and
	# the IPv6 ones a list of its kind would hold.
	cat >"$TMP/bogons" <<-LIST
	0.0.0.0/8
	10.0.0.0/8
	100.64.0.0/10
	127.0.0.0/8
	169.254.0.0/16
	172.16.0.0/12
	192.0.2.0/24
	192.168.0.0/16
	198.18.0.0/15
	224.0.0.0/3
	::1/128
	fc00::/7
	LIST
}

ctl() { nsx "$R" cuckooctl "$@"; }

# checked ARRAY: the receiver's packets looked up, per family.
checked() {
	local -n _c=$1
	local -A st
	ns_stats st "$R" "$TMP/stats" || return 1
	_c=([4]=${st[ipv4.checked]:-x} [6]=${st[ipv6.checked]:-x})
	[[ ${_c[4]} != x && ${_c[6]} != x ]]
}

# tcp_answered ADDR: a TCP connection to a closed port of ADDR is refused
# (the SYN got there and the RST came back) rather than left unanswered;
# 30 s is far more than a refusal takes, and far less than connect()'s
# own give-up.
tcp_answered() {
	local rc
	nsx "$R" timeout 30 bash -c "exec 3<>/dev/tcp/$1/9" 2>/dev/null
	rc=$?
	((rc != 124 && rc != 0))
}

test_bogons_spare_loopback() {
	local -A before after
	local a rc=0 tx rx
	ctl reset >/dev/null || return 1
	ctl load -q "$TMP/bogons" >/dev/null || return 1
	checked before || { fail "stats"; return 1; }
	for a in 127.0.0.1 ::1; do
		if nsx "$R" ping -q -n -c 2 -i 0.2 -W 5 "$a" >/dev/null 2>&1; then
			pass "ping $a over loopback answered"
		else
			fail "ping $a over loopback: no answer"
			rc=1
		fi
		if tcp_answered "$a"; then
			pass "TCP to $a over loopback answered"
		else
			fail "TCP to $a over loopback: no answer"
			rc=1
		fi
	done
	checked after || { fail "stats"; return 1; }
	if ((after[4] != before[4] || after[6] != before[6])); then
		fail "loopback packets looked up: ipv4 ${before[4]} -> ${after[4]}, ipv6 ${before[6]} -> ${after[6]}"
		rc=1
	else
		pass "loopback packets not looked up"
	fi
	# The list is in force on the veth: the sender is inside 10.0.0.0/8.
	nsx "$S" ping -q -n -c 2 -i 0.2 -W 2 -I "${SRCS[0]}" "$DST4" >"$TMP/ping" 2>&1
	ping_parse tx rx "$TMP/ping"
	checked after || { fail "stats"; return 1; }
	if ((tx == 0 || rx != 0 || after[4] < before[4] + tx)); then
		fail "the sender in 10.0.0.0/8: $rx of $tx answered, ${after[4]} looked up"
		rc=1
	else
		pass "the sender in 10.0.0.0/8 dropped on r1 ($tx of $tx)"
	fi
	return $rc
}

# warned WHAT FILE LINE...: FILE has each LINE.
warned() {
	local what=$1 file=$2 l bad=0
	shift 2
	for l; do
		grep -qxF -- "$l" "$file" && continue
		fail "$what: no \"$l\" in: $(tr '\n' '|' <"$file")"
		bad=1
	done
	((bad)) || pass "$what: named $*"
	return $bad
}

test_warns_own_addresses() {
	local rc=0
	ctl reset >/dev/null || return 1
	ctl load "$TMP/bogons" >/dev/null 2>"$TMP/err" || rc=1
	warned "load" "$TMP/err" \
		"cuckooctl: load: 10.0.0.0/8 covers 10.0.9.2, an address of r1 here" \
		"cuckooctl: load: 127.0.0.0/8 covers 127.0.0.1, an address of lo here" \
		"cuckooctl: load: ::1 covers ::1, an address of lo here" \
		"cuckooctl: load: fc00::/7 covers fd09::2, an address of r1 here" || rc=1
	if [[ $(ctl list | grep -c .) != 12 ]]; then
		fail "load: the list not stored whole: $(ctl list | tr '\n' ' ')"
		rc=1
	fi
	ctl add 10.0.9.0/24 2>"$TMP/err" >/dev/null || rc=1
	warned "add" "$TMP/err" \
		"cuckooctl: add: 10.0.9.0/24 covers 10.0.9.2, an address of r1 here" || rc=1
	ctl replace "$TMP/bogons" >/dev/null 2>"$TMP/err" || rc=1
	warned "replace" "$TMP/err" \
		"cuckooctl: replace: 10.0.0.0/8 covers 10.0.9.2, an address of r1 here" || rc=1
	ctl save >"$TMP/saved" || rc=1
	ctl restore "$TMP/saved" >/dev/null 2>"$TMP/err" || rc=1
	warned "restore" "$TMP/err" \
		"cuckooctl: restore: 10.0.0.0/8 covers 10.0.9.2, an address of r1 here" || rc=1
	ctl add -q 10.0.9.2 2>"$TMP/err" >/dev/null || rc=1
	ctl create office allow >/dev/null &&
		ctl load -s office "$TMP/bogons" >/dev/null 2>>"$TMP/err" || rc=1
	if [[ -s $TMP/err ]]; then
		fail "-q and an allow set: $(tr '\n' '|' <"$TMP/err")"
		rc=1
	else
		pass "-q and an allow set: nothing said"
	fi
	return $rc
}

require_root
require_module
require_cmds ip nft ping timeout
ktap_header
setup || ktap_bail "cannot set up the namespaces"
run_tests
