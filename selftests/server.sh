#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's "On a server": its cuckooctl commands, read from the README
# (copied next to the tests as server-readme.md by their Makefile) and run
# as they are written there, without sudo, in a namespace of their own
# whose internet-facing interface is eth0:
#
#   sender ns: 203.0.113.1 (on the list), 10.0.11.1
#      s0 ------------------------------ eth0  the server's namespace
#                                              10.0.11.2
#
#  1. the list: create and replace give the set "drop" the list's three
#     prefixes (a Spamhaus DROP file, "PREFIX ; SBL..." lines);
#  2. the scope: the hooks line (hooks on --iif eth0) succeeds, and the
#     listed source is still judged on eth0; skipped when this cuckooctl
#     has no --iif (it says "unknown option");
#  3. what it drops: sets and stats succeed, sets names "drop" with 3
#     entries, and every echo request from the listed source is counted
#     dropped by stats, while the other source's are all answered.
# ALL_TESTS run in that order, each from the state the one before left.
set -uo pipefail

ALL_TESTS="test_list test_scope test_drops"

NPINGS=4
S=cnf-srv-snd-$$
R=cnf-srv-$$
LISTED=203.0.113.1
UNLISTED=10.0.11.1
DST4=10.0.11.2
DST6=fd11::2
HERE=$(dirname "$(realpath "$0")")
README=$HERE/server-readme.md
TMP=
BROKEN=

# shellcheck source=lib.sh
source "$HERE/lib.sh"

# readme_cmds: the README's cuckooctl commands of "On a server", one a
# line, without sudo and without their comments.
readme_cmds() {
	sed -n '/^## On a server$/,/^## /p' "$README" |
		sed -n 's/^    sudo \(cuckooctl .*\)$/\1/p' | sed 's/ *# .*$//'
}

# run VERB: every README command whose verb (cuckooctl's first word) is
# VERB, in the server's namespace, from TMP (where drop.txt is); its
# output in $TMP/VERB.out.  Returns the first failing status.
run() {
	local verb=$1 cmd argv rc
	: >"$TMP/$verb.out"
	while read -r cmd; do
		read -ra argv <<<"$cmd"
		[[ ${argv[1]} == "$verb" ]] || continue
		note "\$ $cmd"
		(cd "$TMP" && nsx "$R" "${argv[@]}") >>"$TMP/$verb.out" 2>&1
		rc=$?
		sed 's/^/#   /' "$TMP/$verb.out"
		((rc == 0)) || return "$rc"
	done < <(readme_cmds)
	grep -q . "$TMP/$verb.out" || [[ $verb != sets && $verb != stats ]]
}

dropped4() {
	nsx "$R" cuckooctl stats -j | jq -e '.ipv4.dropped'
}

# drops_reached N: stats counts N IPv4 packets dropped, or more.
drops_reached() {
	local n
	n=$(dropped4) && ((n >= $1))
}

setup() {
	require_file "$README" "selftests/Makefile copies README.md"
	tmpdir TMP || return 1
	[[ -n $(readme_cmds) ]] || { echo "# no cuckooctl command under '## On a server' in $README"; return 1; }
	printf '%s\n' "; Spamhaus DROP List 2026/01/01 - (c) 2026 The Spamhaus Project" \
		"203.0.113.0/24 ; SBL000001" "198.51.100.0/24 ; SBL000002" \
		"2001:db8:1::/48 ; SBL000003" >"$TMP/drop.txt"
	netns_add "$S" "$R" || return 1
	ip link add s0 netns "$S" address 02:cf:00:00:0b:01 type veth peer name eth0 \
		address 02:cf:00:00:0b:02 netns "$R" || return 1
	{
		echo "addr add $DST4/24 dev eth0"
		echo "addr add $DST6/64 dev eth0 nodad"
		echo "link set eth0 up"
		echo "neigh replace $UNLISTED lladdr 02:cf:00:00:0b:01 dev eth0 nud permanent"
		echo "neigh replace $LISTED lladdr 02:cf:00:00:0b:01 dev eth0 nud permanent"
		echo "route add 203.0.113.0/24 dev eth0"
	} | ip -n "$R" -batch - || return 1
	{
		echo "addr add $UNLISTED/24 dev s0"
		echo "addr add $LISTED/24 dev s0"
		echo "link set s0 up"
		echo "neigh replace $DST4 lladdr 02:cf:00:00:0b:02 dev s0 nud permanent"
	} | ip -n "$S" -batch - || return 1
}

test_list() {
	local out
	# Until it passes, the tests after it have no set to work on.
	BROKEN=test_list
	run create || { fail "cuckooctl create: exit $?"; return; }
	run replace || { fail "cuckooctl replace: exit $?"; return; }
	out=$(nsx "$R" cuckooctl -j sets)
	note "sets: $out"
	[[ $out == *'"name":"drop"'* ]] || { fail "no set drop"; return; }
	if nsx "$R" cuckooctl -s drop test -q 203.0.113.9 2001:db8:1::5 198.51.100.7; then
		pass "the list's prefixes are in drop"
		BROKEN=
	else
		fail "the list's prefixes are not all in drop"
	fi
}

test_scope() {
	local rc
	[[ -z $BROKEN ]] || { skip_test "$BROKEN failed"; return; }
	run hooks
	rc=$?
	if ((rc == 2)) && grep -q 'unknown option' "$TMP/hooks.out"; then
		skip_test "this cuckooctl's hooks has no --iif"
		return
	fi
	verdict "$rc" "the hooks line"
}

test_drops() {
	local before out argv
	[[ -z $BROKEN ]] || { skip_test "$BROKEN failed"; return; }
	before=$(dropped4) || { fail "stats -j: no ipv4.dropped"; return; }
	nsx_argv argv "$S" ping -4 -q -n -c "$NPINGS" -i 0.2 -W 1 -I "$LISTED" "$DST4"
	"${argv[@]}" >/dev/null 2>&1
	nsx_argv argv "$S" ping -4 -q -n -c "$NPINGS" -i 0.2 -W 10 -I "$UNLISTED" "$DST4"
	out=$("${argv[@]}" 2>&1)
	[[ $out == *" $NPINGS received"* ]] || fail "$UNLISTED's pings not all answered: $out"
	wait_for 5 drops_reached $((before + NPINGS))
	verdict $? "$LISTED's $NPINGS requests dropped (ipv4.dropped $before -> $(dropped4))"
	run sets || { fail "cuckooctl sets: exit $?"; return; }
	grep -qE '^drop +block +3 ' "$TMP/sets.out" || fail "sets does not show drop, block, 3 entries"
	run stats || fail "cuckooctl stats: exit $?"
}

require_root
require_module
require_cmds ip jq ping
setup || ktap_bail "setup failed"
run_tests
