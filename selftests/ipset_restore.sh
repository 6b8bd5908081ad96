#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An ipset user's way over: what `ipset save` prints of real sets is
# restored with `cuckooctl restore --from-ipset`, and the habits of ipset's
# command line (ranges, -exist, durations) work.
#
# test_ipset_save_restored  three real ipset sets (hash:ip with timeouts,
#                  hash:net inet6 with comments and a nomatch entry,
#                  bitmap:ip with counters) saved by ipset and restored:
#                  every entry found in its set, the timeouts kept (no
#                  more than ipset had left), the nomatch entry in an allow
#                  set
# test_ranges_and_durations  add of a range stores the fewest prefixes and
#                  del of it removes them; a duration is its seconds;
#                  create -exist of the same set is no error
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_ipset_save_restored test_ranges_and_durations"
NS=cnf-ipset-$$
TMP=
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

ctl() { nsx "$NS" cuckooctl "$@"; }

setup() {
	tmpdir TMP || return 1
	netns_add "$NS" || return 1
}

# has SET ADDR...: each ADDR is covered by SET.
has() {
	local set=$1 a bad=0
	shift
	for a; do
		set_has "$set" "$a" && continue
		fail "$a not found in set $set"
		bad=1
	done
	((bad)) || pass "set $set holds $*"
	return "$bad"
}

# timeout_of SET PREFIX: the seconds PREFIX has left in SET, from list.
timeout_of() {
	ctl -s "$1" list | awk -v p="$2" '$1 == p && $2 == "timeout" { print $3 }'
}

# set_line SET LINE: save -s SET starts the set with LINE (kind, timeout).
set_line() {
	if ctl save -s "$1" | grep -qxF -- "$2"; then
		pass "set $1: $2"
		return 0
	fi
	fail "set $1: no \"$2\" in: $(ctl save -s "$1" | head -3 | tr '\n' '|')"
	return 1
}

# timeout_within WHAT GOT MAX: 1 <= GOT <= MAX (guest clock; the save and
# the restore take well under the seconds the entries have).
timeout_within() {
	if [[ $2 =~ ^[0-9]+$ ]] && (($2 >= 1 && $2 <= $3)); then
		pass "$1: timeout $2 s left, at most $3"
		return 0
	fi
	fail "$1: timeout '$2', not 1 to $3"
	return 1
}

test_ipset_save_restored() {
	local rc=0 t
	if ! nsx "$NS" ipset restore 2>"$TMP/ipset.err" <<-IPSET; then
	create f2b-sshd hash:ip timeout 600
	add f2b-sshd 203.0.113.9 timeout 500
	add f2b-sshd 198.51.100.7
	add f2b-sshd 192.0.2.77 timeout 0
	create v6nets hash:net family inet6 comment
	add v6nets 2001:db8:1::/48 comment "office uplink"
	add v6nets 2001:db8:1:5::/64 nomatch
	add v6nets 2001:db8:2::1
	create lan bitmap:ip range 192.168.0.0/24 counters
	add lan 192.168.0.7
	add lan 192.168.0.9
	IPSET
		cat "$TMP/ipset.err"
		# A kernel built without one of the three types (the debug
		# kernel's own configuration, say) has nothing to save.
		if grep -q "set type not supported" "$TMP/ipset.err"; then
			skip_test "this kernel lacks an ipset type: $(cat "$TMP/ipset.err")"
			return 0
		fi
		fail "ipset could not make the sets"
		return 1
	fi
	nsx "$NS" ipset save >"$TMP/ipset.save" || return 1
	ctl reset >/dev/null || return 1
	if ! ctl restore --from-ipset "$TMP/ipset.save" >"$TMP/out" 2>"$TMP/err"; then
		fail "restore --from-ipset: $(tr '\n' '|' <"$TMP/err")"
		return 1
	fi
	pass "restore --from-ipset of: $(tr '\n' '|' <"$TMP/ipset.save")"
	if grep -q "note: comments are not kept" "$TMP/err" &&
		grep -q "note: counters are not kept" "$TMP/err" &&
		grep -q "note: nomatch entries go to an allow set" "$TMP/err"; then
		pass "notes on comments, counters and nomatch"
	else
		fail "notes: $(tr '\n' '|' <"$TMP/err")"
		rc=1
	fi
	has f2b-sshd 203.0.113.9 198.51.100.7 192.0.2.77 || rc=1
	has v6nets 2001:db8:1::1 2001:db8:1:ffff::9 2001:db8:2::1 || rc=1
	has lan 192.168.0.7 192.168.0.9 || rc=1
	has v6nets-nomatch 2001:db8:1:5::1 || rc=1
	if set_has lan 192.168.0.8; then
		fail "192.168.0.8 in set lan, which ipset did not hold"
		rc=1
	fi
	set_line v6nets-nomatch "# cuckoo_nf set v6nets-nomatch allow" || rc=1
	timeout_within "203.0.113.9" "$(timeout_of f2b-sshd 203.0.113.9)" 500 || rc=1
	timeout_within "198.51.100.7 (the set's default)" \
		"$(timeout_of f2b-sshd 198.51.100.7)" 600 || rc=1
	t=$(ctl -s f2b-sshd list | grep -c '^192.0.2.77$')
	if [[ $t != 1 ]]; then
		fail "192.0.2.77 (timeout 0) not permanent: $(ctl -s f2b-sshd list | tr '\n' '|')"
		rc=1
	fi
	set_line f2b-sshd "# cuckoo_nf set f2b-sshd block timeout 600" || rc=1
	return "$rc"
}

test_ranges_and_durations() {
	local rc=0 got
	ctl reset >/dev/null || return 1
	ctl add 10.9.0.1-10.9.0.6 timeout 1h >/dev/null || return 1
	# list prints in the tables' order: sorted here.
	got=$(ctl list | awk '{ print $1 }' | sort | tr '\n' ' ')
	if [[ $got != "10.9.0.1 10.9.0.2/31 10.9.0.4/31 10.9.0.6 " ]]; then
		fail "add of 10.9.0.1-10.9.0.6 stored: $got"
		rc=1
	else
		pass "add of 10.9.0.1-10.9.0.6 stored $got"
	fi
	timeout_within "1h" "$(timeout_of default 10.9.0.2/31)" 3600 || rc=1
	ctl del 10.9.0.1-10.9.0.6 >/dev/null || rc=1
	got=$(ctl list | tr '\n' ' ')
	if [[ -z $got ]]; then
		pass "del of the range removed them"
	else
		fail "del of the range left: $got"
		rc=1
	fi
	ctl create web block timeout 10m >/dev/null || rc=1
	if ctl create -exist web block timeout 600 >/dev/null 2>"$TMP/err"; then
		pass "create -exist of the same set: no error"
	else
		fail "create -exist: $(cat "$TMP/err")"
		rc=1
	fi
	return "$rc"
}

require_root
require_module
require_cmds ip ipset awk
ktap_header
setup || ktap_bail "cannot set up the namespace"
run_tests
