#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end tests of cuckooctl against the loaded cuckoo_nf module: every
# command, the JSON, a 100K-address load (1M with CNF_TEST_FULL; time
# printed), files with bad lines,
# prefixes (longest match, refusals, /0), blocklist formats (FireHOL,
# Spamhaus DROP, CRLF), list | load round trip, restore, timeouts, memory
# that follows the set's contents, the exit codes of
# the CLI contract and permission checks.  Runs as root, in the VM: selftests/vm/run
# selftests/cuckooctl.sh.  Leaves the set empty and mode/limit as found.
# Each test starts from an empty set in drop mode (TESTS="test_restore"
# runs one); every check inside it is a "# ok:" or "# FAIL:" line.
set -u

readonly DEV=/dev/cuckoo_nf
CTL=${CUCKOOCTL:-cuckooctl}
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
NBIG=${CNF_TEST_CTL_N:-$(scaled 100000 1000000)}

ALL_TESTS="test_add_del_test test_verdict test_stats test_mode_limit test_load_bad_lines
	test_prefixes test_blocklist_formats test_big_load test_round_trip_sorted test_restore test_batch_stops_at_limit
	test_usage test_missing_device test_permission test_version
	test_save_restore_all test_sets test_timeouts test_memory_follows_content"
TMP=
OLD_LIMIT=
DEV_MODE=

# Run a command, keeping its exit code in RC and its output in $OUT/$ERR.
run() {
	"$@" >"$OUT" 2>"$ERR"
	RC=$?
}

show_output() {
	sed -e 's/^/#   out: /' "$OUT" | head -n 5
	sed -e 's/^/#   err: /' "$ERR" | head -n 5
}

# expect_rc WANT DESCRIPTION COMMAND...
expect_rc() {
	local want=$1 desc=$2
	shift 2
	run "$@"
	if [[ $RC == "$want" ]]; then
		pass "$desc"
	else
		fail "$desc (exit $RC, want $want)"
		show_output
	fi
}

# check DESCRIPTION COMMAND...: a test that is a shell condition.
check() {
	local desc=$1
	shift
	if "$@"; then
		pass "$desc"
	else
		fail "$desc"
		show_output
	fi
}

# has_line LINE FILE, has_text TEXT FILE: grep -qxF and grep -qF, in this
# shell (under TCG a grep costs tens of milliseconds, and this test asks
# dozens of times).
has_line() {
	local l
	while IFS= read -r l || [[ -n $l ]]; do
		[[ $l == "$1" ]] && return 0
	done <"$2"
	return 1
}
has_text() {
	local t
	IFS= read -r -d '' t <"$2"
	[[ $t == *"$1"* ]]
}
not_has_text() { ! has_text "$@"; }

# ctl_stats ARRAY: ARRAY from `$CTL stats -j` (lib.sh's stats_read).
ctl_stats() { stats_read "$1" "$TMP/stats-j" "$CTL"; }

# entries VAR: VAR = the set's size (IPv4 + IPv6), from stats -j; when
# unreadable, a word equal to nothing else.  In a variable: $(...) forks.
entries() {
	local -n _n=$1
	local -A st
	_n=unreadable-$RANDOM
	ctl_stats st && _n=$((${st[ipv4.entries]} + ${st[ipv6.entries]}))
}

now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Address lists come from addrgen (lib.sh): under QEMU without KVM, a shell
# or awk loop takes tens of seconds for a million lines.
gen_v4() { "$ADDRGEN" 10.0.0.0 "$1"; }
gen_v6() { "$ADDRGEN" 2001:db8::1:1:1:0 "$1"; }

# N distinct addresses, one in ten IPv6.
gen_addrs() {
	gen_v4 $(($1 - $1 / 10))
	gen_v6 $(($1 / 10))
}

# restore_state MODE LIMIT: what the script found, put back at exit.
restore_state() {
	[[ -n $DEV_MODE ]] && chmod "$DEV_MODE" "$DEV"
	"$CTL" flush
	"$CTL" mode "$1"
	[[ -n $2 ]] && "$CTL" limit "$2"
}

setup() {
	local mode
	local -A st
	require_root
	[[ -c $DEV ]] || ktap_skip_all "$DEV missing (module not loaded)"
	require_cmds "$CTL" jq
	require_file "$ADDRGEN" "make -C selftests"
	tmpdir TMP
	OUT=$TMP/out
	ERR=$TMP/err
	mode=$("$CTL" mode) || ktap_bail "cannot read the mode"
	ctl_stats st
	OLD_LIMIT=${st[mem_limit]:-}
	defer restore_state "$mode" "$OLD_LIMIT"
	defer rmmod cnf_fake_abi
}

# Every test starts from an empty set in drop mode.
fresh() {
	{ "$CTL" flush >/dev/null && "$CTL" mode drop >/dev/null; } ||
		fail "flush and mode drop before the test"
}

test_add_del_test() {
	local n
	fresh
	expect_rc 0 "add IPv4 and IPv6" "$CTL" add 192.0.2.1 2001:db8::1
	expect_rc 0 "test: both present" "$CTL" test -s default 192.0.2.1 2001:db8::1
	check "test prints ADDR: present (ADDR)" \
		has_line "2001:db8::1: present (2001:db8::1)" "$OUT"
	expect_rc 1 "test: one absent exits 1" "$CTL" test -s default 192.0.2.1 192.0.2.2
	check "test prints ADDR: absent" has_line "192.0.2.2: absent" "$OUT"
	expect_rc 1 "add duplicate exits 1" "$CTL" add 192.0.2.1
	check "duplicate message" has_line "cuckooctl: add 192.0.2.1: already present" "$ERR"
	expect_rc 3 "add with a bad address exits 3" "$CTL" add 192.0.2.3 192.0.2.300
	check "bad address named" has_text "192.0.2.300" "$ERR"
	expect_rc 1 "nothing added on a bad argument" "$CTL" test -s default 192.0.2.3
	expect_rc 3 "prefix with host bits rejected" "$CTL" add 192.0.2.1/24
	check "host bits message suggests the network" \
		has_line "cuckooctl: add 192.0.2.1/24: host bits set; did you mean 192.0.2.0/24?" "$ERR"
	expect_rc 0 "del" "$CTL" del 2001:db8::1
	expect_rc 1 "del absent exits 1" "$CTL" del 2001:db8::1
	check "absent message" has_line "cuckooctl: del 2001:db8::1: not present" "$ERR"
	expect_rc 1 "deleted address is absent" "$CTL" test -s default 2001:db8::1
	run "$CTL" add 2001:DB8:0::00AB
	run "$CTL" list
	check "list shows the canonical form" has_line "2001:db8::ab" "$OUT"
	check "list holds exactly the set" [ "$(sort "$OUT" | tr '\n' ' ')" = "192.0.2.1 2001:db8::ab " ]
	run "$CTL" save
	check "save starts with its comment" [ "$(head -n 1 "$OUT")" = "# cuckoo_nf save" ]
	expect_rc 0 "flush" "$CTL" flush
	entries n
	check "flush empties the set" [ "$n" = 0 ]
}

# One jq for all the JSON checks (jq takes 0.4 s to start under TCG): it
# prints one verdict per check, for stats -j and for the global -j.
test_stats() {
	local v_keys v_count v_range v_ratio v_global v_lookup
	fresh
	"$CTL" add 192.0.2.1 192.0.2.2 2001:db8::5 198.51.100.0/24 10.0.0.0/8
	expect_rc 0 "stats -j" "$CTL" stats -j
	cp "$OUT" "$TMP/stats.json"
	expect_rc 0 "global -j stats" "$CTL" -j stats
	cp "$OUT" "$TMP/stats-g.json"
	run jq -r -n '
		input as $s | input as $g |
		[($s | keys == ["active", "expiry", "hooks", "iif", "ipv4", "ipv6",
				"log", "mark", "mark_mask", "mem_limit", "mode",
				"sets"] and
			.active == true and
			(.log | keys == ["burst", "lines", "rate", "suppressed"]) and
			([.ipv4, .ipv6] | all(keys == ["bytes", "capacity", "checked",
				"checked_bytes", "dropped", "dropped_bytes", "entries",
				"grows", "keys", "lengths", "load_factor", "marked",
				"marked_bytes", "matched", "matched_bytes", "prefixes",
				"rule_checked", "rule_checked_bytes", "rule_matched",
				"rule_matched_bytes",
				"stashed", "tables", "tc_checked", "tc_checked_bytes",
				"tc_dropped", "tc_dropped_bytes", "tc_matched",
				"tc_matched_bytes", "xdp_checked", "xdp_checked_bytes",
				"xdp_dropped", "xdp_dropped_bytes", "xdp_matched",
				"xdp_matched_bytes"]))),
		 ($s | .ipv4.entries == 4 and .ipv6.entries == 1 and
			.ipv4.prefixes == 4 and .ipv6.prefixes == 1),
		 ($s | [.ipv4, .ipv6] | all(.load_factor |
			type == "number" and . >= 0 and . <= 1)),
		 ($s | [.ipv4, .ipv6] | all((.load_factor - .keys / .capacity) |
			. < 0.000001 and . > -0.000001)),
		 ($g | .mode | type == "string"),
		 ($s | .ipv4.lengths == 3 and .ipv6.lengths == 1 and
			([.ipv4, .ipv6] | all(.keys >= .prefixes and .tables >= 1)))] |
		map(tostring) | join(" ")' \
		"$TMP/stats.json" "$TMP/stats-g.json"
	read -r v_keys v_count v_range v_ratio v_global v_lookup <"$OUT"
	check "stats JSON parses" [ "$RC" = 0 ]
	check "JSON has the contract's keys" [ "$v_keys" = true ]
	check "JSON counts the prefixes" [ "$v_count" = true ]
	check "load_factor is a number in 0..1" [ "$v_range" = true ]
	check "load_factor is keys/capacity" [ "$v_ratio" = true ]
	check "global -j gives JSON" [ "$v_global" = true ]
	check "JSON: lengths, keys and tables" [ "$v_lookup" = true ]
	expect_rc 0 "stats text" "$CTL" stats
	check "text: mode" grep -q "^mode: *drop" "$OUT"
	check "text: prefixes" has_line "  prefixes:     4" "$OUT"
	check "text: distinct lengths" has_line "  lengths:      3 distinct" "$OUT"
	check "text: keys" grep -q "^  keys: *[0-9]* in the lookup tables$" "$OUT"
	check "text: tables per packet" grep -q "^  tables: *[1-9][0-9]* per packet at most$" "$OUT"
	check "text: load factor in %" grep -q "load factor: *[0-9.]*%" "$OUT"
	check "text: memory with units" grep -q "memory: *[0-9]* bytes (.*B)" "$OUT"
	check "text: packets" grep -q "packets: *checked [0-9]* matched [0-9]* dropped [0-9]*" "$OUT"
	check "text: xdp packets" grep -q "xdp packets: *checked [0-9]* matched [0-9]* dropped [0-9]*" "$OUT"
	check "text: tc packets" grep -q "tc packets: *checked [0-9]* matched [0-9]* dropped [0-9]*" "$OUT"
	"$CTL" flush
}

test_mode_limit() {
	local -A st
	fresh
	expect_rc 0 "mode monitor" "$CTL" mode monitor
	run "$CTL" mode
	check "mode prints monitor" has_line monitor "$OUT"
	ctl_stats st
	check "stats says monitor" [ "${st[mode]:-}" = monitor ]
	expect_rc 0 "mode drop" "$CTL" mode drop
	expect_rc 3 "mode garbage exits 3" "$CTL" mode dorp
	check "bad mode named" has_text dorp "$ERR"
	expect_rc 2 "mode with two words exits 2" "$CTL" mode drop monitor

	expect_rc 0 "limit 300M" "$CTL" limit 300M
	ctl_stats st
	check "limit applied" [ "${st[mem_limit]:-}" = $((300 << 20)) ]
	run "$CTL" limit
	check "limit prints bytes and units" has_line "314572800 (300.0 MiB)" "$OUT"
	expect_rc 0 "limit 1g" "$CTL" limit 1g
	ctl_stats st
	check "g is GiB" [ "${st[mem_limit]:-}" = $((1 << 30)) ]
	expect_rc 3 "limit garbage exits 3" "$CTL" limit 12Q
	check "bad size named" has_text 12Q "$ERR"
	expect_rc 3 "limit negative exits 3" "$CTL" limit -- -5
	expect_rc 1 "limit below use refused" "$CTL" limit 1
	check "below-use message" has_text "below the memory already in use" "$ERR"
	ctl_stats st
	check "refused limit changes nothing" [ "${st[mem_limit]:-}" = $((1 << 30)) ]
	"$CTL" limit "$OLD_LIMIT"
}

write_bad_file() {
	printf '%s\n' \
		'# blocklist' \
		'10.1.0.1' \
		'' \
		'not-an-address' \
		'   10.1.0.2   # trailing comment' \
		'	2001:db8::10	' \
		'10.1.0.1' \
		'# 10.9.9.9 commented out' \
		'10.1.0.300' \
		'10.1.0.3 10.1.0.4' >"$1"
	printf '10.1.0.5\r\n2001:db8::11#tight' >>"$1"
}

test_load_bad_lines() {
	local n
	local f=$TMP/bad.txt before
	fresh

	write_bad_file "$f"
	entries before
	expect_rc 3 "load --strict with bad lines exits 3" "$CTL" load --strict "$f"
	check "strict: every bad line reported" [ "$(grep -c "^cuckooctl: load: $f:[0-9]*: " "$ERR")" = 3 ]
	entries n
	check "strict: nothing added" [ "$n" = "$before" ]

	expect_rc 1 "load with bad lines loads the good ones, exits 1" "$CTL" load "$f"
	check "summary: added, already present, bad lines" \
		has_line "5 added, 1 already present, 3 bad lines" "$OUT"
	check "bad line 4: file, number, value, reason" \
		has_line "cuckooctl: load: $f:4: not-an-address: not an IPv4 or IPv6 address or prefix" "$ERR"
	check "bad line 9: file, number, value, reason" \
		has_line "cuckooctl: load: $f:9: 10.1.0.300: not an IPv4 or IPv6 address or prefix" "$ERR"
	check "bad line 10: file, number, value, reason" \
		has_line "cuckooctl: load: $f:10: 10.1.0.3 10.1.0.4: more than one entry on the line (comments start with # or ;)" "$ERR"
	check "exactly three bad lines reported" [ "$(wc -l <"$ERR")" = 3 ]
	expect_rc 0 "good lines are in the set" "$CTL" test -s default 10.1.0.1 10.1.0.2 2001:db8::10 10.1.0.5 2001:db8::11
	expect_rc 1 "commented address is not" "$CTL" test -s default 10.9.9.9

	expect_rc 1 "load again from stdin" "$CTL" load - <"$f"
	check "stdin: all already present" has_line "0 added, 6 already present, 3 bad lines" "$OUT"
	check "stdin: bad lines named as from stdin" \
		has_line "cuckooctl: load: stdin:9: 10.1.0.300: not an IPv4 or IPv6 address or prefix" "$ERR"

	expect_rc 1 "del --file with bad lines exits 1" "$CTL" del --file "$f"
	check "del summary" has_line "5 deleted, 1 not present, 3 bad lines" "$OUT"
	entries n
	check "del --file emptied the set" [ "$n" = 0 ]
	expect_rc 1 "del --file - from stdin" "$CTL" del --file - <"$f"
	check "del from stdin: none present" has_line "0 deleted, 6 not present, 3 bad lines" "$OUT"
	expect_rc 2 "del --file with addresses exits 2" "$CTL" del --file "$f" 10.0.0.1
	expect_rc 1 "load of a missing file exits 1" "$CTL" load "$TMP/nonexistent"
	printf 'foo\nbar\n' >"$TMP/allbad"
	expect_rc 3 "load of only bad lines exits 3" "$CTL" load "$TMP/allbad"
	check "only bad lines: both reported" [ "$(grep -c "^cuckooctl: load: $TMP/allbad:[12]: " "$ERR")" = 2 ]
	printf '# nothing\n\n' >"$TMP/empty"
	expect_rc 0 "load of comments only is fine" "$CTL" load "$TMP/empty"
	check "comments only: nothing added" has_line "0 added, 0 already present" "$OUT"
}

# Prefixes: stored as given, longest match, exact delete, the refusals
# with their messages, /0 only with --all-addresses, list and save.
test_prefixes() {
	local bad n
	fresh
	expect_rc 0 "add prefixes and an address" \
		"$CTL" add 198.51.100.0/24 2001:db8::/48 10.0.0.5 192.0.2.7/32
	expect_rc 0 "test: covered addresses" \
		"$CTL" test -s default 198.51.100.77 2001:db8:0:ffff::1 10.0.0.5 192.0.2.7
	check "test names the covering prefix" \
		has_line "198.51.100.77: present (198.51.100.0/24)" "$OUT"
	check "test names the IPv6 prefix" \
		has_line "2001:db8:0:ffff::1: present (2001:db8::/48)" "$OUT"
	check "a single address is printed bare" has_line "10.0.0.5: present (10.0.0.5)" "$OUT"
	check "an address added as /32 is printed bare" \
		has_line "192.0.2.7: present (192.0.2.7)" "$OUT"
	expect_rc 1 "test: uncovered address exits 1" "$CTL" test -s default 198.51.101.1 10.0.0.6 2001:db8:1::1
	check "uncovered: absent" has_line "198.51.101.1: absent" "$OUT"
	check "next to a single address: absent" has_line "10.0.0.6: absent" "$OUT"
	check "outside the /48: absent" has_line "2001:db8:1::1: absent" "$OUT"
	expect_rc 0 "test of a covered prefix" "$CTL" test -s default 198.51.100.128/25
	check "covered prefix: its cover named" \
		has_line "198.51.100.128/25: present (198.51.100.0/24)" "$OUT"
	expect_rc 1 "test of a wider prefix than stored" "$CTL" test -s default 198.51.100.0/23

	expect_rc 0 "add an overlapping longer prefix" "$CTL" add 198.51.100.128/25
	expect_rc 0 "test: longest match" "$CTL" test -s default 198.51.100.200 198.51.100.1
	check "longest prefix named" has_line "198.51.100.200: present (198.51.100.128/25)" "$OUT"
	check "outside it, the shorter one" has_line "198.51.100.1: present (198.51.100.0/24)" "$OUT"
	expect_rc 1 "adding a stored prefix again exits 1" "$CTL" add 198.51.100.0/24
	check "already present, named as given" \
		has_line "cuckooctl: add 198.51.100.0/24: already present" "$ERR"

	run "$CTL" list
	check "list: prefixes as stored" has_line "198.51.100.0/24" "$OUT"
	check "list: IPv6 prefix" has_line "2001:db8::/48" "$OUT"
	check "list: /32 bare" has_line "192.0.2.7" "$OUT"
	check "list: exactly the set" \
		[ "$(sort "$OUT" | tr '\n' ' ')" = "10.0.0.5 192.0.2.7 198.51.100.0/24 198.51.100.128/25 2001:db8::/48 " ]
	entries n
	check "entries count prefixes" [ "$n" = 5 ]

	expect_rc 1 "del of a prefix not stored exits 1" "$CTL" del 198.51.100.0/25
	check "del names it not present" has_line "cuckooctl: del 198.51.100.0/25: not present" "$ERR"
	expect_rc 1 "del of an address inside a prefix exits 1" "$CTL" del 198.51.100.9
	expect_rc 0 "del removes exactly the prefix named" "$CTL" del 198.51.100.0/24
	expect_rc 1 "its addresses outside the /25 are absent" "$CTL" test -s default 198.51.100.1
	expect_rc 0 "the /25 still covers its own" "$CTL" test -s default 198.51.100.200

	expect_rc 3 "host bits refused" "$CTL" add 10.0.0.5/24
	check "host bits: the network suggested" \
		has_line "cuckooctl: add 10.0.0.5/24: host bits set; did you mean 10.0.0.0/24?" "$ERR"
	expect_rc 3 "IPv6 host bits refused" "$CTL" add 2001:db8::1/64
	check "IPv6 host bits: the network suggested" \
		has_line "cuckooctl: add 2001:db8::1/64: host bits set; did you mean 2001:db8::/64?" "$ERR"
	for bad in 10.0.0.0/33 2001:db8::/129 10.0.0.0/ 10.0.0.0/-1 10.0.0.0/08 \
		   10.0.0.0/24x "10.0.0.0/ 24" 10.0.0.0/255.255.255.0; do
		expect_rc 3 "add $bad refused" "$CTL" add "$bad"
		check "add $bad: value named" has_text "cuckooctl: add $bad: " "$ERR"
	done
	expect_rc 3 "IPv4-mapped prefix refused" "$CTL" add ::ffff:203.0.113.0/120
	check "IPv4-mapped: the IPv4 form suggested" \
		has_text "use the IPv4 form 203.0.113.0/24" "$ERR"
	expect_rc 3 "a bad argument among good ones: nothing added" \
		"$CTL" add 203.0.113.0/24 203.0.113.5/24
	expect_rc 1 "the good one was not added" "$CTL" test -s default 203.0.113.1

	# A /0 would drop the VM's loopback traffic too: count, drop nothing.
	"$CTL" mode monitor
	expect_rc 3 "/0 without --all-addresses refused" "$CTL" add 0.0.0.0/0
	check "/0: the option named" has_text "--all-addresses" "$ERR"
	expect_rc 0 "/0 with --all-addresses" "$CTL" add --all-addresses 0.0.0.0/0
	expect_rc 0 "/0 covers any IPv4 address" "$CTL" test -s default 203.0.113.1
	check "/0 named as the cover" has_line "203.0.113.1: present (0.0.0.0/0)" "$OUT"
	expect_rc 1 "IPv4 /0 does not cover IPv6" "$CTL" test -s default 2001:db9::1
	run "$CTL" list
	check "list shows the /0" has_line "0.0.0.0/0" "$OUT"
	expect_rc 3 "del of /0 needs the option too" "$CTL" del 0.0.0.0/0
	expect_rc 0 "del --all-addresses 0.0.0.0/0" "$CTL" del --all-addresses 0.0.0.0/0
	expect_rc 1 "gone" "$CTL" test -s default 203.0.113.1
	expect_rc 0 "IPv6 /0 with --all-addresses" "$CTL" add --all-addresses ::/0
	expect_rc 0 "IPv6 /0 covers any IPv6 address" "$CTL" test -s default 2001:db9::1
	check "::/0 named" has_line "2001:db9::1: present (::/0)" "$OUT"

	# save | restore: the same set, /0 included (with the option).
	"$CTL" add 203.0.113.64/26 2001:db8:ffff::/64 >/dev/null
	"$CTL" list | sort >"$TMP/pfx-before"
	"$CTL" save >"$TMP/pfx-saved"
	"$CTL" flush
	expect_rc 3 "restore of a saved /0 needs --all-addresses" "$CTL" restore "$TMP/pfx-saved"
	check "the /0 line named" has_text ": ::/0: /0 is every IPv6 address" "$ERR"
	entries n
	check "refused restore changed nothing" [ "$n" = 0 ]
	expect_rc 0 "restore --all-addresses" "$CTL" restore --all-addresses "$TMP/pfx-saved"
	"$CTL" list | sort >"$TMP/pfx-after"
	check "save | restore gives the same prefixes" cmp -s "$TMP/pfx-before" "$TMP/pfx-after"
	# save-all files are the kernel's own set: restore-all takes the /0.
	mkdir -p "$TMP/pfx-all"
	"$CTL" save-all "$TMP/pfx-all" >/dev/null
	"$CTL" flush
	expect_rc 0 "restore-all of prefixes and a /0" "$CTL" restore-all "$TMP/pfx-all"
	"$CTL" list | sort >"$TMP/pfx-after"
	check "save-all | restore-all gives the same prefixes" cmp -s "$TMP/pfx-before" "$TMP/pfx-after"
	"$CTL" del --all-addresses ::/0 >/dev/null
	"$CTL" list >"$TMP/pfx-list"
	"$CTL" flush
	expect_rc 0 "list | load of prefixes" "$CTL" load "$TMP/pfx-list"
	"$CTL" list | sort >"$TMP/pfx-after"
	sort "$TMP/pfx-list" >"$TMP/pfx-list.sorted"
	check "list | load gives the same prefixes" cmp -s "$TMP/pfx-list.sorted" "$TMP/pfx-after"
	"$CTL" flush
	"$CTL" mode drop
}

# The blocklist formats load takes, as published: FireHOL netsets (comment
# header, bare entries), Spamhaus DROP (';' comments, trailing references,
# CRLF), and a bad line among them.
test_blocklist_formats() {
	local f=$TMP/firehol.netset d=$TMP/drop.txt m=$TMP/mixed.txt before n

	fresh
	printf '%s\n' '#' '# firehol_level1' '#' '# ipv4 hash:net ipset' '#' \
		'# Maintainer      : FireHOL' '#' \
		'0.0.0.0/8' '1.10.16.0/20' '1.19.0.0/16' '2.56.192.17' >"$f"
	expect_rc 0 "load a FireHOL netset" "$CTL" load "$f"
	check "netset: all added" has_line "4 added, 0 already present" "$OUT"
	check "netset: nothing on stderr" [ ! -s "$ERR" ]
	expect_rc 0 "netset entries cover their addresses" \
		"$CTL" test -s default 0.1.2.3 1.10.31.255 1.19.200.1 2.56.192.17

	printf '%s\r\n' '; Spamhaus DROP List 2026/11/23 - (c) 2026 The Spamhaus Project SLU' \
		'; https://www.spamhaus.org/drop/drop.txt' \
		'; Last-Modified: Mon, 23 Nov 2026 10:00:00 GMT' \
		'1.10.16.0/20 ; SBL256894' '5.134.128.0/19 ; SBL270738' \
		'' '2001:db8:4000::/34 ; SBL999999' >"$d"
	expect_rc 0 "load a Spamhaus DROP list with CRLF" "$CTL" load --strict "$d"
	check "DROP: new ones added, the shared one present" \
		has_line "2 added, 1 already present" "$OUT"
	expect_rc 0 "DROP entries cover their addresses" "$CTL" test -s default 5.134.159.1 2001:db8:7fff::1
	check "DROP: the covering prefix" has_line "5.134.159.1: present (5.134.128.0/19)" "$OUT"

	printf '%s\n' '203.0.113.0/24 # x' '  198.51.100.0/25  ' '10.9.0.5/16 ; typo' \
		'192.0.2.0/24 extra' >"$m"
	entries before
	expect_rc 3 "load --strict with a host-bits line exits 3" "$CTL" load --strict "$m"
	check "strict: the host bits line named with the network" \
		has_line "cuckooctl: load: $m:3: 10.9.0.5/16: host bits set; did you mean 10.9.0.0/16?" "$ERR"
	check "strict: the line with extra text named" has_text "$m:4: 192.0.2.0/24 extra: " "$ERR"
	entries n
	check "strict: nothing added" [ "$n" = "$before" ]
	expect_rc 1 "load with bad lines exits 1" "$CTL" load "$m"
	check "good lines added" has_line "2 added, 0 already present, 2 bad lines" "$OUT"
	expect_rc 1 "the bad lines' prefixes are not in" "$CTL" test -s default 10.9.0.0/16 192.0.2.1
	"$CTL" flush
}

# At 1M, sorting under QEMU costs minutes; the set equality is shown by
# the kernel instead.  The load adds N distinct addresses and the set then
# holds N entries: the set is the file.  The list prints N lines, and
# del --file of the list (load's parser) finds each one present and
# empties the set: the lines are N distinct members, so the whole set, and
# list output is valid input.  (list | load round trip: test_round_trip_sorted.)
test_big_load() {
	local n
	local src=$TMP/big.txt t0 t1
	fresh

	gen_addrs "$NBIG" >"$src"
	t0=$(now)
	run "$CTL" load "$src"
	t1=$(now)
	note "load of $NBIG addresses: $(elapsed "$t0" "$t1") s"
	check "load of $NBIG addresses" [ "$RC" = 0 ]
	check "load summary counts them all" has_line "$NBIG added, 0 already present" "$OUT"
	check "no progress bar when stderr is not a terminal" [ ! -s "$ERR" ]
	entries n
	check "stats counts $NBIG entries" [ "$n" = "$NBIG" ]
	"$CTL" stats | sed -e 's/^/# /'

	t0=$(now)
	run "$CTL" list
	t1=$(now)
	note "list of $NBIG addresses: $(elapsed "$t0" "$t1") s"
	mv "$OUT" "$TMP/list1"
	check "list prints $NBIG lines" [ "$(wc -l <"$TMP/list1")" = "$NBIG" ]
	t0=$(now)
	run "$CTL" del --file "$TMP/list1"
	t1=$(now)
	note "del --file of $NBIG addresses: $(elapsed "$t0" "$t1") s"
	check "listed set equals the loaded one" has_line "$NBIG deleted, 0 not present" "$OUT"
	entries n
	check "del --file of all leaves the set empty" [ "$n" = 0 ]
}

test_round_trip_sorted() {
	local src=$TMP/rt.txt
	fresh

	"$CTL" flush
	gen_addrs 50000 >"$src"
	"$CTL" load "$src" >/dev/null
	"$CTL" list >"$TMP/rt1"
	"$CTL" flush
	run "$CTL" load "$TMP/rt1"
	check "list | load: all added" has_line "50000 added, 0 already present" "$OUT"
	"$CTL" list | sort >"$TMP/rt2.sorted"
	sort "$TMP/rt1" >"$TMP/rt1.sorted"
	check "list | load round trip gives the same set" cmp -s "$TMP/rt1.sorted" "$TMP/rt2.sorted"
	sort "$src" >"$TMP/rt.sorted"
	check "and the set that was loaded" cmp -s "$TMP/rt.sorted" "$TMP/rt2.sorted"
	"$CTL" flush
}

test_restore() {
	local saved=$TMP/saved before
	fresh

	"$CTL" add 198.51.100.1 198.51.100.2 2001:db8::77
	"$CTL" save >"$saved"
	"$CTL" del 198.51.100.2
	"$CTL" add 203.0.113.9 203.0.113.10
	expect_rc 0 "restore" "$CTL" restore "$saved"
	check "restore says it replaced the set" has_line "replaced the set: 3 entries (was 4)" "$OUT"
	check "restored set equals the saved one" \
		[ "$("$CTL" list | sort | tr '\n' ' ')" = "198.51.100.1 198.51.100.2 2001:db8::77 " ]

	printf '198.51.100.50\nbogus\n' >"$TMP/badrestore"
	before=$("$CTL" list | sort | tr '\n' ' ')
	expect_rc 3 "restore with a bad line exits 3" "$CTL" restore "$TMP/badrestore"
	check "restore bad line reported" \
		has_line "cuckooctl: restore: $TMP/badrestore:2: bogus: not an IPv4 or IPv6 address or prefix" "$ERR"
	check "failed restore changes nothing" [ "$("$CTL" list | sort | tr '\n' ' ')" = "$before" ]
	expect_rc 0 "restore from stdin" "$CTL" restore - <"$saved"
	expect_rc 2 "restore without a file exits 2" "$CTL" restore
	"$CTL" flush
}

# A batch stopped by the memory limit says where, and that much is in.
test_batch_stops_at_limit() {
	local n
	local f=$TMP/limit.txt line added
	fresh

	"$CTL" flush
	gen_v4 150000 >"$f"
	# 64 kB more than the empty set and the state use.
	"$CTL" limit $(($(mem_in_use "$CTL") + 65536))
	expect_rc 1 "load past the memory limit exits 1" "$CTL" load "$f"
	check "message says where and why" \
		grep -qE '^cuckooctl: load: stopped at line [0-9]+ \([0-9.]+\): memory limit reached; [0-9]+ added$' "$ERR"
	line=$(sed -nE 's/.*stopped at line ([0-9]+) .*/\1/p' "$ERR")
	added=$(sed -nE 's/.*; ([0-9]+) added$/\1/p' "$ERR")
	check "stopped line is the first one not added" [ "${line:-0}" = $((${added:--1} + 1)) ]
	entries n
	check "the set holds what was reported added" [ "$n" = "${added:-x}" ]
	check "the address named is the one on that line" \
		has_text "($(sed -n "${line:-1}p" "$f"))" "$ERR"
	"$CTL" flush
	"$CTL" limit "$OLD_LIMIT"
}

test_usage() {
	fresh
	expect_rc 2 "no command exits 2" "$CTL"
	expect_rc 2 "unknown command exits 2" "$CTL" frobnicate
	expect_rc 2 "unknown option exits 2" "$CTL" add --bogus 10.0.0.1
	expect_rc 2 "add without address exits 2" "$CTL" add
	expect_rc 0 "--help" "$CTL" --help
	check "help lists the commands" grep -q "restore" "$OUT"
	expect_rc 0 "help add" "$CTL" help add
	check "help add shows its usage" has_line "Usage: cuckooctl add [OPTION...] PREFIX [timeout SECONDS]..." "$OUT"
	expect_rc 0 "add --help" "$CTL" add --help
	check "add --help same as help add" has_line "Usage: cuckooctl add [OPTION...] PREFIX [timeout SECONDS]..." "$OUT"
	expect_rc 0 "load -h" "$CTL" load -h
	check "load -h mentions --strict" grep -q -- --strict "$OUT"
}

test_missing_device() {
	fresh
	expect_rc 6 "missing device exits 6 (-d)" "$CTL" -d /dev/cuckoo_nf_nonexistent list
	check "message says to load the module" has_text "load the module" "$ERR"
	if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
		expect_rc 6 "device hidden by a mount namespace exits 6" \
			unshare -m bash -c "mount -t tmpfs none /dev && exec $CTL list"
		check "hidden device: module message" \
			has_line "cuckooctl: /dev/cuckoo_nf not found: load the module (modprobe cuckoo_nf / insmod cuckoo_nf.ko)" "$ERR"
	else
		note "unshare -m unavailable, hidden-device case not run"
	fi
	expect_rc 3 "bad address exits 3 before the device is needed" \
		"$CTL" -d /dev/cuckoo_nf_nonexistent add 10.0.0.999
}

test_permission() {
	local n
	fresh
	if ! command -v setpriv >/dev/null; then
		skip_test "setpriv unavailable"
		return
	fi
	expect_rc 5 "non-root cannot open the device: exit 5" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" list
	check "permission message" has_text "permission denied" "$ERR"
	# With the node world-writable the open works and the ioctl's
	# CAP_NET_ADMIN check is what refuses.
	DEV_MODE=$(stat -c %a "$DEV")
	chmod 0666 "$DEV"
	expect_rc 5 "non-root ioctl without CAP_NET_ADMIN: exit 5" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" add 10.0.0.1
	check "CAP_NET_ADMIN named" has_text "need CAP_NET_ADMIN" "$ERR"
	expect_rc 5 "non-root load: exit 5" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" load - <<<"10.0.0.1"
	chmod "$DEV_MODE" "$DEV"
	DEV_MODE=
	expect_rc 5 "root without CAP_NET_ADMIN: exit 5" \
		setpriv --inh-caps=-net_admin --bounding-set=-net_admin "$CTL" stats
	entries n
	check "nothing was added by the refused calls" [ "$n" = 0 ]
}

# --version: the tool's and the module's, which must be what modinfo and
# sysfs say; an unknown ABI refused, a module without the call accepted.
test_version() {
	local want fake=modules/cnf_fake_abi.ko
	fresh
	want=$(modinfo -F version "$CNF_KO")
	expect_rc 0 "--version" "$CTL" --version
	check "--version: cuckooctl $want (ABI 1)" has_line "cuckooctl $want (ABI 1)" "$OUT"
	check "--version: module $want = modinfo -F version" has_line "module: $want (ABI 1)" "$OUT"
	check "modinfo and sysfs agree" [ "$want" = "$(cat /sys/module/cuckoo_nf/version)" ]
	expect_rc 0 "--version without the module" "$CTL" -d /dev/cuckoo_nf_nonexistent --version
	check "--version: module not loaded" has_line "module: not loaded" "$OUT"
	if [[ ! -f $fake ]]; then
		fail "$fake not built (make test-modules)"
		return
	fi
	if ! insmod "$fake" abi=2; then
		fail "insmod $fake abi=2"
		return
	fi
	expect_rc 7 "module ABI 2: --version exits 7" "$CTL" -d /dev/cnf_fake_abi --version
	check "--version names the module's ABI" has_line "module: 0.0-fake (ABI 2)" "$OUT"
	expect_rc 7 "module ABI 2: list refused, exit 7" "$CTL" -d /dev/cnf_fake_abi list
	check "refusal says which ABIs" has_text "speaks ABI 2; this cuckooctl" "$ERR"
	rmmod cnf_fake_abi
	if ! insmod "$fake" abi=0; then
		fail "insmod $fake abi=0"
		return
	fi
	expect_rc 0 "module without CNF_IOC_VERSION: --version exits 0" \
		"$CTL" -d /dev/cnf_fake_abi --version
	check "--version: an older module" has_text "module: older than" "$OUT"
	expect_rc 1 "older module: its calls are made (ENOTTY here)" \
		"$CTL" -d /dev/cnf_fake_abi stats
	check "older module: no ABI refusal" not_has_text "speaks ABI" "$ERR"
	rmmod cnf_fake_abi
}

# save-all and restore-all on files; the unit's use of them is boot_unit.sh's.
test_save_restore_all() {
	local d=$TMP/state f ino n
	fresh
	f=$d/default.list
	"$CTL" flush >/dev/null
	"$CTL" add 10.1.0.1 10.1.0.2 2001:db8:1::1 >/dev/null
	expect_rc 0 "save-all" "$CTL" save-all "$d"
	check "save-all made its directory 0700" [ "$(stat -c %a "$d")" = 700 ]
	check "save-all: default.list and hooks in it" \
		[ "$(find "$d" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" = "default.list hooks " ]
	check "hooks file: the setting between header and end" \
		[ "$(tr '\n' '|' <"$d/hooks")" = "# cuckoo_nf hooks|on|# cuckoo_nf end|" ]
	check "save file: header first" [ "$(head -n1 "$f")" = "# cuckoo_nf save" ]
	check "save file: end line with the count" [ "$(tail -n1 "$f")" = "# cuckoo_nf end 3 entries" ]
	check "save file: the three addresses" [ "$(grep -c -v '^#' "$f")" = 3 ]
	"$CTL" flush >/dev/null
	expect_rc 0 "restore-all" "$CTL" restore-all "$d"
	entries n
	check "restore-all: 3 entries back" [ "$n" = 3 ]
	expect_rc 0 "restored addresses present" "$CTL" test -s default 10.1.0.1 10.1.0.2 2001:db8:1::1
	ino=$(stat -c %i "$f")
	"$CTL" del 10.1.0.2 >/dev/null
	expect_rc 0 "save-all again" "$CTL" save-all "$d"
	check "a new file renamed over the old one, not rewritten" [ "$(stat -c %i "$f")" != "$ino" ]
	check "save-all again: 2 entries" [ "$(tail -n1 "$f")" = "# cuckoo_nf end 2 entries" ]
	# Cut short: no end line.
	head -n 2 "$f" >"$d/cut" && mv "$d/cut" "$f"
	expect_rc 3 "restore-all of a cut-short file exits 3" "$CTL" restore-all "$d"
	check "cut-short file: reported" has_text "not a complete save" "$ERR"
	check "cut-short file: kept as default.list.bad" [ -f "$f.bad" -a ! -e "$f" ]
	entries n
	check "cut-short file: set left as it was" [ "$n" = 2 ]
	# A count that does not match.
	printf '# cuckoo_nf save\n10.1.0.9\n# cuckoo_nf end 2 entries\n' >"$f"
	expect_rc 3 "restore-all: wrong count exits 3" "$CTL" restore-all "$d"
	check "wrong count: reported" has_text "count is not the number" "$ERR"
	# A bad line.
	printf '# cuckoo_nf save\n10.1.0.999\n# cuckoo_nf end 1 entries\n' >"$f"
	expect_rc 3 "restore-all: bad line exits 3" "$CTL" restore-all "$d"
	rm -f "$d"/*
	expect_rc 0 "restore-all with no file exits 0" "$CTL" restore-all "$d"
	check "no file: reported" has_text "no saved set" "$ERR"
	expect_rc 2 "save-all takes one directory" "$CTL" save-all "$d" "$d"
	expect_rc 1 "save-all into a file fails" "$CTL" save-all /dev/null
	"$CTL" flush >/dev/null
}

# by_set FILE: each line of a save after the name of its set, sorted.
by_set() { awk '/^# cuckoo_nf set /{ s = $4 } { print s, $0 }' "$1" | sort; }

# Sets through the CLI: create, -s, test's exit codes, replace in one
# step, swap, save --all | restore, the messages naming the set.
test_sets() {
	fresh
	"$CTL" destroy ctl-web >/dev/null 2>&1
	"$CTL" destroy ctl-new >/dev/null 2>&1
	"$CTL" destroy ctl-ok >/dev/null 2>&1
	expect_rc 0 "create a block set" "$CTL" create ctl-web
	expect_rc 0 "create an allow set" "$CTL" create ctl-ok allow
	expect_rc 1 "create it again exits 1" "$CTL" create ctl-web
	check "exists: named" has_line "cuckooctl: create ctl-web: a set named ctl-web exists already" "$ERR"
	expect_rc 3 "bad name exits 3" "$CTL" create 'a/b'
	expect_rc 0 "add -s, option last" "$CTL" add 192.0.2.10 198.51.100.0/24 -s ctl-web
	expect_rc 0 "add --exist of a present one" "$CTL" add -s ctl-web 192.0.2.10 --exist
	expect_rc 0 "test -s: present" "$CTL" test -s ctl-web 198.51.100.7
	expect_rc 1 "test of the default set: absent" "$CTL" test -s default 198.51.100.7
	expect_rc 8 "test -s of no set: 8" "$CTL" test -s ctl-none 198.51.100.7
	check "no set: named" has_line "cuckooctl: test 198.51.100.7: no set named ctl-none" "$ERR"
	expect_rc 0 "sets -j" "$CTL" sets -j
	check "sets -j: ctl-web with 2 entries" \
		[ "$(jq -r '.[] | select(.name == "ctl-web") | "\(.kind) \(.entries)"' "$OUT")" = "block 2" ]
	check "sets -j: default first" [ "$(jq -r '.[0].name' "$OUT")" = default ]
	printf '203.0.113.1\n203.0.113.2\n203.0.113.1\n' >"$TMP/web"
	expect_rc 0 "replace -s" "$CTL" replace -s ctl-web "$TMP/web"
	check "replace: says what it did" has_line "replaced set ctl-web: 2 entries (was 2), 1 duplicate line skipped" "$OUT"
	expect_rc 0 "list -s after replace" "$CTL" list -s ctl-web
	check "replace: exactly the file" [ "$(sort "$OUT" | tr '\n' ' ')" = "203.0.113.1 203.0.113.2 " ]
	printf '203.0.113.9\nbogus\n' >"$TMP/bad"
	expect_rc 3 "replace with a bad line exits 3" "$CTL" replace -s ctl-web "$TMP/bad"
	check "bad line: old contents serve" has_text "the old contents still serve" "$ERR"
	expect_rc 3 "replace of nothing exits 3" "$CTL" replace -s ctl-web /dev/null
	expect_rc 0 "test: old contents kept" "$CTL" test -q -s ctl-web 203.0.113.1
	"$CTL" add 10.9.9.9 >/dev/null
	expect_rc 0 "swap default ctl-web" "$CTL" swap default ctl-web
	expect_rc 0 "swapped: the default set has ctl-web's" "$CTL" test -q -s default 203.0.113.2
	expect_rc 1 "swap of different kinds exits 1" "$CTL" swap ctl-web ctl-ok
	expect_rc 0 "swap back" "$CTL" swap ctl-web default
	expect_rc 0 "save --all" "$CTL" save --all
	cp "$OUT" "$TMP/all"
	check "save --all: set lines with kinds" has_line "# cuckoo_nf set ctl-ok allow" "$TMP/all"
	expect_rc 0 "destroy ctl-web" "$CTL" destroy ctl-web
	expect_rc 0 "destroy ctl-ok" "$CTL" destroy ctl-ok
	expect_rc 1 "destroy default exits 1" "$CTL" destroy default
	check "destroy default: said" has_line "cuckooctl: destroy default: the default set cannot be destroyed" "$ERR"
	expect_rc 1 "add -s of a destroyed set exits 1" "$CTL" add -s ctl-web 10.0.0.1
	check "no set: named" has_line "cuckooctl: add 10.0.0.1: no set named ctl-web" "$ERR"
	expect_rc 0 "restore of save --all" "$CTL" restore "$TMP/all"
	expect_rc 0 "save --all after restore" "$CTL" save --all
	# A set's prefixes come in table order, which a rebuild changes.
	by_set "$TMP/all" >"$TMP/all.sorted"
	by_set "$OUT" >"$TMP/restored.sorted"
	check "restore: the same sets and prefixes" cmp -s "$TMP/all.sorted" "$TMP/restored.sorted"
	expect_rc 0 "stats with sets" "$CTL" stats
	check "stats: sets listed" has_text "sets:" "$OUT"
	"$CTL" destroy ctl-web >/dev/null
	"$CTL" destroy ctl-ok >/dev/null
	"$CTL" flush >/dev/null
}

# test without -s: the namespace's verdict and why, across block and allow
# sets, monitor mode, hooks off and a loopback device; exit 0 only when
# dropped.
test_verdict() {
	fresh
	expect_rc 0 "create a block set" "$CTL" create ctl-feed
	expect_rc 0 "create an allow set" "$CTL" create ctl-office allow
	expect_rc 0 "add to both block sets" "$CTL" add -s ctl-feed 10.0.0.0/8 203.0.113.0/24
	expect_rc 0 "add to the default set" "$CTL" add 203.0.113.9 2001:db8::/32
	expect_rc 0 "add to the allow set" "$CTL" add -s ctl-office 10.20.0.0/16
	expect_rc 0 "test: dropped" "$CTL" test 203.0.113.9 2001:db8::1
	check "dropped: every covering set named" \
		has_line "203.0.113.9: dropped: default (203.0.113.9), ctl-feed (203.0.113.0/24)" "$OUT"
	check "dropped: IPv6" has_line "2001:db8::1: dropped: default (2001:db8::/32)" "$OUT"
	expect_rc 1 "test: allowed passes, exit 1" "$CTL" test 10.20.1.1 203.0.113.9
	check "allowed: the allow set named" \
		has_line "10.20.1.1: passes: ctl-feed (10.0.0.0/8) allowed by ctl-office (10.20.0.0/16)" "$OUT"
	expect_rc 1 "test: in no set" "$CTL" test 192.0.2.1
	check "in no set: said" has_line "192.0.2.1: passes: in no set" "$OUT"
	expect_rc 0 "test -j" "$CTL" test -j 203.0.113.9
	check "test -j: verdict and sets" \
		[ "$(jq -r '.[0] | "\(.verdict) \(.block | map(.set) | join(","))"' "$OUT")" = "dropped default,ctl-feed" ]
	expect_rc 0 "monitor mode" "$CTL" mode monitor
	expect_rc 1 "test in monitor mode: passes" "$CTL" test 203.0.113.9
	check "monitor mode: said" \
		has_line "203.0.113.9: passes: monitor mode, listed by default (203.0.113.9), ctl-feed (203.0.113.0/24)" "$OUT"
	expect_rc 0 "drop mode" "$CTL" mode drop
	expect_rc 0 "hooks off" "$CTL" hooks off
	expect_rc 0 "test with hooks off: dropped" "$CTL" test 2001:db8::1
	check "hooks off: said" \
		has_line "2001:db8::1: dropped by XDP and tc programs only (hooks off): default (2001:db8::/32)" "$OUT"
	expect_rc 0 "hooks on" "$CTL" hooks on
	expect_rc 1 "test --iif lo: passes" "$CTL" test --iif lo 203.0.113.9
	check "--iif lo: never judged" \
		has_line "203.0.113.9: passes: arrives on lo, a loopback device, never judged" "$OUT"
	expect_rc 3 "test --iif of no device exits 3" "$CTL" test --iif cnf-nosuch0 203.0.113.9
	expect_rc 0 "test -s default: the set's answer" "$CTL" test -s default 203.0.113.9
	check "test -s: present" has_line "203.0.113.9: present (203.0.113.9)" "$OUT"
	"$CTL" destroy ctl-feed >/dev/null
	"$CTL" destroy ctl-office >/dev/null
	"$CTL" flush >/dev/null
}

# seconds_left PREFIX FILE: the N of "PREFIX timeout N" in FILE, or nothing.
seconds_left() {
	local p t n
	while read -r p t n; do
		[[ $p == "$1" && $t == timeout ]] && { echo "$n"; return; }
	done <"$2"
}

# Timeouts end to end: kept, counted down, shown, saved, restored and
# expired by the module.  Skipped when the module takes a timeout but
# keeps none (the calls without its expiry).
# gone_from SET ADDR: ADDR is not in SET.
gone_from() { ! "$CTL" test -q -s "$1" "$2" >/dev/null 2>&1; }

test_timeouts() {
	local left
	fresh
	"$CTL" destroy ctl-bans >/dev/null 2>&1
	expect_rc 0 "add with a timeout" "$CTL" add 192.0.2.20 timeout 100 192.0.2.21
	expect_rc 0 "list" "$CTL" list
	left=$(seconds_left 192.0.2.20 "$OUT")
	if [[ -z $left ]]; then
		skip_test "the module takes timeouts but keeps none"
		"$CTL" flush >/dev/null
		return
	fi
	check "list: seconds left, 1 to 100 ($left)" [ "$left" -ge 1 -a "$left" -le 100 ]
	check "list: a permanent entry bare" has_line "192.0.2.21" "$OUT"
	expect_rc 0 "test of a timed entry" "$CTL" test -s default 192.0.2.20
	check "test: the seconds left" has_text "192.0.2.20: present (192.0.2.20 timeout " "$OUT"
	expect_rc 3 "a bad timeout exits 3" "$CTL" add 192.0.2.22 timeout 1h30
	check "bad timeout: named" has_line "cuckooctl: add 1h30: not a timeout: seconds from 0 (none) to 4294967295, or a duration such as 90s, 15m, 1h30m, 7d" "$ERR"
	expect_rc 1 "test: nothing added" "$CTL" test -s default -q 192.0.2.22
	expect_rc 0 "create with a default timeout" "$CTL" create ctl-bans timeout 600
	expect_rc 0 "add: the default, and none" "$CTL" add -s ctl-bans \
		198.51.100.1 198.51.100.2 timeout 0
	expect_rc 0 "sets -j" "$CTL" sets -j
	check "sets -j: default timeout 600, 1 timed" \
		[ "$(jq -r '.[] | select(.name == "ctl-bans") | "\(.timeout) \(.timed)"' "$OUT")" = "600 1" ]
	# Added after the count: a loaded host may take a second between
	# two commands, and the entry may be gone by the next.
	expect_rc 0 "add: 1 s" "$CTL" add -s ctl-bans 198.51.100.3 timeout 1
	expect_rc 0 "save -s of a set with a default" "$CTL" save -s ctl-bans
	cp "$OUT" "$TMP/bans"
	check "save: the set line has the default" has_line "# cuckoo_nf set ctl-bans block timeout 600" "$TMP/bans"
	check "save: a permanent entry as timeout 0" has_line "198.51.100.2 timeout 0" "$TMP/bans"
	left=$(seconds_left 198.51.100.1 "$TMP/bans")
	check "save: the default's seconds left (${left:-none})" [ "${left:-0}" -ge 590 -a "${left:-0}" -le 600 ]
	# Removed within a second of running out (ioctl_test's precision test
	# holds the kernel to that): polled for here, 10 s at most, as a
	# loaded host runs the VM's timers late.
	wait_for 10 gone_from ctl-bans 198.51.100.3
	expect_rc 1 "a 1 s entry is gone within 10 s" "$CTL" test -q -s ctl-bans 198.51.100.3
	expect_rc 0 "add --exist sets a timeout anew" "$CTL" add -s ctl-bans --exist 198.51.100.2 timeout 50
	expect_rc 0 "list -s" "$CTL" list -s ctl-bans
	left=$(seconds_left 198.51.100.2 "$OUT")
	check "add --exist: the new timeout (${left:-none})" [ "${left:-0}" -ge 1 -a "${left:-0}" -le 50 ]
	expect_rc 0 "stats -j" "$CTL" stats -j
	cp "$OUT" "$TMP/expiry.json"
	run jq -r '.expiry | "\(.entries) \(.expired >= 1) \(.bytes > 0)"' "$TMP/expiry.json"
	check "stats -j: 3 timed, one expired, bytes counted" [ "$(<"$OUT")" = "3 true true" ]
	expect_rc 0 "stats" "$CTL" stats
	check "stats: expiry figures" has_text "expiry:" "$OUT"
	expect_rc 0 "destroy" "$CTL" destroy ctl-bans
	expect_rc 0 "restore of the save" "$CTL" restore "$TMP/bans"
	expect_rc 0 "sets -j after restore" "$CTL" sets -j
	check "restore: created with its default" \
		[ "$(jq -r '.[] | select(.name == "ctl-bans") | .timeout' "$OUT")" = 600 ]
	expect_rc 0 "list -s after restore" "$CTL" list -s ctl-bans
	check "restore: the permanent entry stays permanent" has_line "198.51.100.2" "$OUT"
	left=$(seconds_left 198.51.100.1 "$OUT")
	check "restore: the entry's own seconds (${left:-none})" [ "${left:-0}" -ge 580 -a "${left:-0}" -le 600 ]
	"$CTL" destroy ctl-bans >/dev/null
	"$CTL" flush >/dev/null
}

# bytes VAR: VAR = the memory of the set's tables (IPv4 + IPv6), from
# stats -j; when unreadable, a word that no test -le takes.
bytes() {
	local -n _b=$1
	local -A st
	_b=unreadable
	ctl_stats st && _b=$((${st[ipv4.bytes]} + ${st[ipv6.bytes]}))
}

# all_expired: the set holds nothing.
all_expired() {
	local n
	entries n
	[[ $n == 0 ]]
}

# A set's memory follows what it holds.  A batch of copies of one address
# (from a pipe: one batch) costs what adding it once does, not tables sized
# for every copy; a list given many times over in one batch costs what
# loading it once does.  A set that held NBIG entries (1M at full size)
# and lost them all, to deletes or to expiry, gives the memory back:
# within twice a fresh set's.
test_memory_follows_content() {
	local fresh_b one dup list_b copies full left
	local src=$TMP/big.txt timed=$TMP/timed.txt
	# The copies in one batch: 2M at full size, a tenth at the quick size
	# (a batch sized for its copies was already hundreds of times the
	# one entry's memory at 200K); the set emptied: NBIG entries.
	local ndup nbig=$NBIG
	ndup=$(scaled 200000 2000000)
	fresh

	bytes fresh_b
	note "a fresh set: $fresh_b bytes"
	"$CTL" add 2001:db8::d0 >/dev/null
	bytes one
	"$CTL" flush >/dev/null
	yes 2001:db8::d0 | head -n "$ndup" >"$TMP/dups.txt"
	run "$CTL" load - <"$TMP/dups.txt"
	check "$ndup copies of one address load from a pipe" has_line "1 added, $((ndup - 1)) already present" "$OUT"
	bytes dup
	check "and take no more memory than adding it once ($dup <= $one bytes)" \
		[ "$dup" -le "$one" ]

	"$CTL" flush >/dev/null
	gen_v6 2000 >"$TMP/list.txt"
	"$CTL" load - <"$TMP/list.txt" >/dev/null
	bytes list_b
	"$CTL" flush >/dev/null
	yes "$(<"$TMP/list.txt")" | head -n "$ndup" >"$TMP/dups.txt"
	run "$CTL" load - <"$TMP/dups.txt"
	check "2,000 addresses $((ndup / 2000)) times over load from a pipe" has_line "2000 added, $((ndup - 2000)) already present" "$OUT"
	bytes copies
	check "and take no more memory than loading them once ($copies <= $list_b bytes)" \
		[ "$copies" -le "$list_b" ]
	rm -f "$TMP/dups.txt" "$TMP/list.txt"

	"$CTL" flush >/dev/null
	gen_addrs "$nbig" >"$src"
	run "$CTL" load "$src"
	check "$nbig addresses loaded" has_line "$nbig added, 0 already present" "$OUT"
	bytes full
	run "$CTL" del --file "$src"
	check "and all deleted" has_line "$nbig deleted, 0 not present" "$OUT"
	bytes left
	check "deletes give the memory back: $full bytes full, $left emptied, within 2x of $fresh_b" \
		[ "$left" -le $((2 * fresh_b)) ]

	"$CTL" flush >/dev/null
	sed -e 's/$/ timeout 1/' "$src" >"$timed"
	run "$CTL" load "$timed"
	check "$nbig addresses loaded with a timeout of 1 s" has_line "$nbig added, 0 already present" "$OUT"
	wait_for 120 all_expired
	check "all expired within 2 minutes" all_expired
	bytes left
	check "expiry gives the memory back: $left bytes emptied, within 2x of $fresh_b" \
		[ "$left" -le $((2 * fresh_b)) ]
	rm -f "$src" "$timed"
	"$CTL" flush >/dev/null
}

setup
run_tests
