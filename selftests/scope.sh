#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the hooks judge packets (hooks on --iif), and mark mode.  Each
# sender is a namespace of its own, every one of its addresses listed:
#
#   S1: 10.0.11.1, fd11::1   s1 ---- r1   10.0.11.2, fd11::2 \
#   S2: 10.0.12.1, fd12::1   s2 ---- r2   10.0.12.2, fd12::2  > receiver R
#   S3: 10.0.13.1            s3 ---- r3   10.0.13.2          /  (r3 renamed,
#   S4: 10.0.14.1            s4 ---- vx4  10.0.14.2         /    vx4 later)
#   S6: 10.0.16.1, fd16::1   s6 ---- vy6  10.0.16.2, fd16::2    (made later)
#
# test_scope_one_of_two    hooks on --iif r1: a listed source is dropped
#                  through r1 and delivered through r2, in both families,
#                  and r2's packets are not even looked up
# test_scope_follows_devices  --iif vx+: a device made afterwards whose
#                  name matches (vx4) is covered; r3 renamed vx3 is, and
#                  renamed back is not any more
# test_scope_any_index  a covered device whose interface index is far past
#                  the namespace's others (2,000,000,000) is judged; a
#                  crowd of 300 covered devices, made and then deleted,
#                  leaves the first ones judged throughout
# test_scope_names_loopback  --iif lo judges loopback (127.0.0.1 listed:
#                  its ping dropped); hooks on alone spares it again
# test_scope_ingress_only  hooks on --iif r1 --iif vy+, watched by kprobes
#                  on the hook functions: r1's packets, both families,
#                  reach its ingress hook and no PRE_ROUTING one of ours;
#                  r2's reach no hook of ours at all; vy6, made
#                  afterwards, gets its hook; mark mode marks for an nft
#                  input chain; hooks on without a scope is PRE_ROUTING's
#                  again, and hooks off judges nothing
# test_scope_saved_restored  save-all and restore-all (after a reset) keep
#                  the scope, and r1 drops while r2 delivers again
# test_reset_forgets_scope  after reset the hooks judge every device
# test_mark_mode_nft   mode mark 0x10/0x10 and an nft rule on meta mark
#                  for r1 only: dropped through r1, delivered through r2,
#                  every listed packet counted as marked, none dropped by
#                  the hooks; an unlisted source is not marked
# test_scope_rmmod_under_traffic  rmmod while floods run through r1
#                  (covered) and r2, the hooks scoped: it succeeds, r1
#                  delivers without the module, and insmod brings it back
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_scope_one_of_two test_scope_follows_devices
	   test_scope_any_index test_scope_names_loopback
	   test_scope_ingress_only
	   test_scope_saved_restored test_reset_forgets_scope
	   test_mark_mode_nft test_scope_rmmod_under_traffic"
CNF_KO=${CNF_KO:-/cnf/cuckoo_nf.ko}
FLOODS=()
R=cnf-sc-r-$$
TMP=
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

# link N RDEV [INDEX]: namespace cnf-sc-sN-PID with sN (10.0.1N.1,
# fd1N::1) paired with RDEV in R (10.0.1N.2, fd1N::2, interface index
# INDEX when given), static neighbours both ways (no ARP or ND, whose
# listed packets would be dropped and counted too).
link() {
	local n=$1 rdev=$2 s=cnf-sc-s$1-$$
	local ms=02:cf:00:00:1$1:01 mr=02:cf:00:00:1$1:02
	local s4=10.0.1$n.1 s6=fd1$n::1 r4=10.0.1$n.2 r6=fd1$n::2
	ip netns add "$s" || return 1
	defer ip netns del "$s"
	if [[ -n ${3:-} ]]; then
		# Made in R: a peer's index is its namespace's choice.
		ip -n "$R" link add "$rdev" index "$3" address "$mr" type veth \
			peer name "s$n" address "$ms" netns "$s" || return 1
	else
		ip link add "s$n" netns "$s" address "$ms" type veth peer name "$rdev" \
			address "$mr" netns "$R" || return 1
	fi
	ip -n "$s" -batch - <<-EOF || return 1
	link set lo up
	addr add $s4/24 dev s$n
	addr add $s6/64 dev s$n nodad
	link set s$n up
	neigh replace $r4 lladdr $mr dev s$n nud permanent
	neigh replace $r6 lladdr $mr dev s$n nud permanent
	EOF
	ip -n "$R" -batch - <<-EOF || return 1
	addr add $r4/24 dev $rdev
	addr add $r6/64 dev $rdev nodad
	link set $rdev up
	neigh replace $s4 lladdr $ms dev $rdev nud permanent
	neigh replace $s6 lladdr $ms dev $rdev nud permanent
	EOF
}

setup() {
	tmpdir TMP || return 1
	ip netns add "$R" || return 1
	defer ip netns del "$R"
	ip -n "$R" link set lo up || return 1
	link 1 r1 && link 2 r2 && link 3 r3
}

ctl() { nsx "$R" cuckooctl "$@"; }

# list_all: every sender's addresses listed, from a fresh namespace state.
list_all() {
	ctl reset >/dev/null &&
		ctl add -q 10.0.11.1 fd11::1 10.0.12.1 fd12::1 10.0.13.1 \
			10.0.14.1 >/dev/null
}

# answered N [6]: whether a ping from sender N to its peer in R, IPv4 (or
# IPv6 with 6), is answered; 2 s of waiting for an answer that does not
# come is far more than the veth takes.
answered() {
	local n=$1 tx rx dst=10.0.1$1.2 fam=-4
	[[ ${2:-} == 6 ]] && dst=fd1$n::2 fam=-6
	nsx "cnf-sc-s$n-$$" ping "$fam" -q -n -c 2 -i 0.2 -W 2 "$dst" \
		>"$TMP/ping" 2>&1
	ping_parse tx rx "$TMP/ping"
	((tx > 0 && rx == tx))
}

# expect WHAT dropped|delivered N [6]: the verdict on sender N's pings.
expect() {
	local what=$1 want=$2 got=dropped
	shift 2
	answered "$@" && got=delivered
	if [[ $got == "$want" ]]; then
		pass "$what: $got"
		return 0
	fi
	fail "$what: $got, not $want"
	return 1
}

# checked4: the hooks' IPv4 packets looked up, into CHECKED.
checked4() {
	local -A st
	ns_stats st "$R" "$TMP/stats" || return 1
	CHECKED=${st[ipv4.checked]:-x}
	[[ $CHECKED != x ]]
}

test_scope_one_of_two() {
	local rc=0 before
	list_all || return 1
	ctl hooks on --iif r1 || return 1
	if [[ $(ctl hooks) != "on --iif r1" ]]; then
		fail "hooks prints '$(ctl hooks)', not 'on --iif r1'"
		rc=1
	fi
	expect "listed source through r1" dropped 1 || rc=1
	expect "listed source through r1, IPv6" dropped 1 6 || rc=1
	checked4 || return 1
	before=$CHECKED
	expect "listed source through r2 (outside the scope)" delivered 2 || rc=1
	expect "listed source through r2, IPv6" delivered 2 6 || rc=1
	checked4 || return 1
	if ((CHECKED != before)); then
		fail "r2's packets looked up: ipv4 checked $before -> $CHECKED"
		rc=1
	else
		pass "r2's packets not looked up"
	fi
	ctl test --iif r2 10.0.12.1 >"$TMP/test"
	if ! grep -qx "10.0.12.1: passes: not judged on r2: outside the hooks' scope (r1)" "$TMP/test"; then
		fail "test --iif r2: $(cat "$TMP/test")"
		rc=1
	fi
	return "$rc"
}

test_scope_follows_devices() {
	local rc=0
	list_all || return 1
	ctl hooks on --iif vx+ || return 1
	expect "r3 outside vx+" delivered 3 || rc=1
	# Made after the scope: registered with a matching name.
	link 4 vx4 || { fail "making vx4"; return 1; }
	expect "vx4, made after the scope" dropped 4 || rc=1
	# Renamed in and out.
	rename r3 vx3 3 || { fail "renaming r3"; return 1; }
	expect "r3 renamed vx3" dropped 3 || rc=1
	rename vx3 r3 3 || { fail "renaming vx3"; return 1; }
	expect "vx3 renamed r3 again" delivered 3 || rc=1
	expect "r1 outside vx+" delivered 1 || rc=1
	return "$rc"
}

# rename OLD NEW N: device OLD of R, sender N's peer, renamed NEW (a
# device is renamed down), up again with its neighbour.
rename() {
	ip -n "$R" link set "$1" down || return 1
	ip -n "$R" link set "$1" name "$2" || return 1
	ip -n "$R" link set "$2" up || return 1
	ip -n "$R" neigh replace "10.0.1$3.1" lladdr "02:cf:00:00:1$3:01" dev "$2" \
		nud permanent
}

# Interface indexes only grow while a namespace lives: a device whose
# index is far past the others' is covered as any other; and a crowd of
# covered devices (dummies named vxd*), more than the scope's first table
# holds, makes it grow, then leaves gone slots behind, while vx5 stays
# judged throughout.
test_scope_any_index() {
	local rc=0 i
	list_all || return 1
	ctl add -q 10.0.15.1 || return 1
	ctl hooks on --iif vx+ || return 1
	link 5 vx5 2000000000 || { fail "making vx5 with index 2000000000"; return 1; }
	expect "vx5, index $(ip -n "$R" -o link show vx5 | cut -d: -f1)" dropped 5 || rc=1
	for ((i = 0; i < 300; i++)); do
		echo "link add vxd$i type dummy"
	done | ip -n "$R" -batch - || { fail "making 300 dummies vxd*"; return 1; }
	expect "vx5 beside 300 more covered devices" dropped 5 || rc=1
	for ((i = 0; i < 300; i++)); do
		echo "link del vxd$i"
	done | ip -n "$R" -batch - || { fail "deleting the dummies"; return 1; }
	expect "vx5, the 300 gone" dropped 5 || rc=1
	rename vx5 r5 5 || { fail "renaming vx5"; return 1; }
	expect "vx5 renamed r5, outside vx+" delivered 5 || rc=1
	return "$rc"
}

TR=/sys/kernel/tracing
PROBES="cnf_hook_ipv4 cnf_hook_ipv6 cnf_hook_ingress"

# probes_on: a kprobe on each of the module's hook functions (group
# cnf_sc), enabled; one the module lacks is noted, and counts no call.
# probes_off takes them away.
probes_on() {
	local f n=0
	[[ -d $TR/events ]] || mount -t tracefs nodev "$TR" 2>/dev/null
	[[ -w $TR/kprobe_events ]] || return 1
	for f in $PROBES; do
		if echo "p:cnf_sc/$f cuckoo_nf:$f" >>"$TR/kprobe_events" 2>/dev/null; then
			n=$((n + 1))
		else
			note "no kprobe on cuckoo_nf:$f"
		fi
	done
	((n > 0)) && echo 1 >"$TR/events/cnf_sc/enable"
}

probes_off() {
	local f
	echo 0 >"$TR/events/cnf_sc/enable"
	for f in $PROBES; do
		echo "-:cnf_sc/$f" >>"$TR/kprobe_events"
	done
}

# hits CMD...: run CMD with the trace cleared, then count the calls of
# each hook function meanwhile in H[ipv4], H[ipv6], H[ingress]; CMD's
# status.
declare -A H
hits() {
	local f rc
	: >"$TR/trace"
	"$@"
	rc=$?
	for f in $PROBES; do
		H[${f#cnf_hook_}]=$(grep -c " $f: (" "$TR/trace")
	done
	return "$rc"
}

# want_hits WHAT COND: COND, arithmetic on H's counts, true, or a failure
# naming WHAT.
want_hits() {
	local got="ipv4 ${H[ipv4]}, ipv6 ${H[ipv6]}, ingress ${H[ingress]}"
	# shellcheck disable=SC2034 # read by $2's arithmetic
	local ipv4=${H[ipv4]} ipv6=${H[ipv6]} ingress=${H[ingress]}
	if (($2)); then
		pass "$1: hook calls $got"
		return 0
	fi
	fail "$1: hook calls $got, want $2"
	return 1
}

# Each ping of expect sends 2 echo requests: r1's reach its ingress hook
# (with whatever else arrives there) and nothing at PRE_ROUTING; r2's no
# hook of ours at all.
test_scope_ingress_only() {
	local rc=0 n
	local -A st ctr
	list_all || return 1
	ctl add -q 10.0.16.1 fd16::1 || return 1
	probes_on || { skip_test "no kprobe events"; return; }
	defer probes_off
	ctl hooks on --iif r1 --iif vy+ || return 1
	hits expect "scoped, r1" dropped 1 || rc=1
	want_hits "r1" "ipv4 + ipv6 == 0 && ingress >= 2" || rc=1
	hits expect "scoped, r1, IPv6" dropped 1 6 || rc=1
	want_hits "r1, IPv6" "ipv4 + ipv6 == 0 && ingress >= 2" || rc=1
	hits expect "scoped, r2 outside" delivered 2 || rc=1
	want_hits "r2" "ipv4 + ipv6 + ingress == 0" || rc=1
	hits expect "scoped, r2 outside, IPv6" delivered 2 6 || rc=1
	want_hits "r2, IPv6" "ipv4 + ipv6 + ingress == 0" || rc=1
	link 6 vy6 || { fail "making vy6"; return 1; }
	hits expect "vy6, made after the scope" dropped 6 || rc=1
	want_hits "vy6" "ipv4 + ipv6 == 0 && ingress >= 2" || rc=1
	# The mark set at ingress is on the packet when input sees it.
	ctl mode mark 0x10/0x10 || return 1
	nsx "$R" nft -f - <<-NFT || { fail "nft"; return 1; }
	table inet cnf_sc {
		counter hit { }
		chain in {
			type filter hook input priority 0;
			meta mark & 0x10 == 0x10 counter name hit drop
		}
	}
	NFT
	expect "mark mode, r1: marked, dropped by nft" dropped 1 || rc=1
	expect "mark mode, r2: unmarked" delivered 2 || rc=1
	ns_stats st "$R" "$TMP/stats" || return 1
	nft_read ctr "$R" "$TMP/nft" table inet cnf_sc || return 1
	nsx "$R" nft delete table inet cnf_sc
	n=$((${st[ipv4.marked]:-0}))
	if ((n != 2 || ${ctr[cnf_sc/hit]:-0} != 2)); then
		fail "marked $n, nft dropped ${ctr[cnf_sc/hit]:-?}, want 2 and 2"
		rc=1
	else
		pass "r1's 2 marked at ingress, dropped by the nft rule"
	fi
	ctl mode drop || return 1
	# Unscoped: PRE_ROUTING's hooks judge r2.
	ctl hooks on || return 1
	hits expect "unscoped, r2" dropped 2 || rc=1
	want_hits "unscoped, r2" "ipv4 >= 2" || rc=1
	ctl hooks on --iif r1 || return 1
	expect "scoped again, r2" delivered 2 || rc=1
	expect "scoped again, r1" dropped 1 || rc=1
	ctl hooks off || return 1
	expect "hooks off, r1" delivered 1 || rc=1
	return "$rc"
}

test_scope_saved_restored() {
	local rc=0 dir
	list_all || return 1
	ctl hooks on --iif r1 --iif vx+ || return 1
	dir=$TMP/state
	ctl save-all "$dir" >/dev/null || { fail "save-all"; return 1; }
	ctl reset || return 1
	ctl restore-all "$dir" >/dev/null || { fail "restore-all"; return 1; }
	if [[ $(ctl hooks) != "on --iif r1 --iif vx+" ]]; then
		fail "restored hooks: '$(ctl hooks)'"
		rc=1
	else
		pass "restored hooks: on --iif r1 --iif vx+"
	fi
	expect "restored: r1" dropped 1 || rc=1
	expect "restored: r2" delivered 2 || rc=1
	return "$rc"
}

# lo_answers: whether R answers a ping to 127.0.0.1 over loopback.
lo_answers() {
	nsx "$R" ping -q -n -c 1 -W 2 127.0.0.1 >/dev/null 2>&1
}

# Loopback is judged when the scope names it, and only then.
test_scope_names_loopback() {
	local rc=0
	list_all || return 1
	ctl add -q 127.0.0.1 >/dev/null 2>&1 || return 1
	ctl hooks on --iif lo || return 1
	if lo_answers; then
		fail "--iif lo, 127.0.0.1 listed: loopback's ping answered"
		rc=1
	else
		pass "--iif lo, 127.0.0.1 listed: loopback's ping dropped"
	fi
	expect "--iif lo: r1" delivered 1 || rc=1
	ctl hooks on || return 1
	if lo_answers; then
		pass "hooks on, no scope: loopback not judged, ping answered"
	else
		fail "hooks on, no scope: loopback's ping dropped"
		rc=1
	fi
	return "$rc"
}

test_reset_forgets_scope() {
	local rc=0
	list_all || return 1
	ctl hooks on --iif r1 || return 1
	list_all || return 1
	if [[ $(ctl hooks) != on ]]; then
		fail "after reset, hooks: '$(ctl hooks)'"
		rc=1
	fi
	expect "after reset, r1" dropped 1 || rc=1
	expect "after reset, r2" dropped 2 || rc=1
	return "$rc"
}

test_mark_mode_nft() {
	local rc=0 n
	local -A st ctr
	list_all || return 1
	ctl del -q 10.0.13.1 >/dev/null || return 1
	ctl mode mark 0x10/0x10 || return 1
	nsx "$R" nft -f - <<-NFT || { fail "nft"; return 1; }
	table inet cnf_mark {
		counter hit { }
		chain in {
			type filter hook input priority 0;
			meta mark & 0x10 == 0x10 iifname "r1" counter name hit drop
		}
	}
	NFT
	expect "marked, through r1 (the rule's device)" dropped 1 || rc=1
	expect "marked, through r2" delivered 2 || rc=1
	expect "unlisted, through r3" delivered 3 || rc=1
	ns_stats st "$R" "$TMP/stats" || return 1
	nft_read ctr "$R" "$TMP/nft" table inet cnf_mark || return 1
	n=$((${st[ipv4.marked]:-0}))
	if ((n != 4 || ${st[ipv4.dropped]:-1} != 0)); then
		fail "marked $n (want 4: two pings each through r1 and r2), dropped ${st[ipv4.dropped]:-?}"
		rc=1
	else
		pass "4 packets marked, none dropped by the hooks"
	fi
	if [[ ${ctr[cnf_mark/hit]:-x} != 2 ]]; then
		fail "the rule dropped ${ctr[cnf_mark/hit]:-?} packets, not 2"
		rc=1
	else
		pass "the nft rule dropped r1's 2"
	fi
	nsx "$R" nft delete table inet cnf_mark
	ctl test 10.0.11.1 >"$TMP/test"
	if ! grep -qx "10.0.11.1: marked 0x10/0x10, nft decides: listed by default (10.0.11.1)" "$TMP/test"; then
		fail "test: $(cat "$TMP/test")"
		rc=1
	fi
	return "$rc"
}

# A flood of echo requests from sender N to its peer, its ping's pid in
# FLOODS.
flood_from() {
	local argv
	nsx_argv argv "cnf-sc-s$1-$$" ping -q -n -i 0.002 -c 100000000 "10.0.1$1.2"
	"${argv[@]}" >/dev/null 2>&1 &
	FLOODS+=($!)
}

# The ingress hooks go with the module under traffic (the harness's
# kernel log scan catches a WARN or a leak).
test_scope_rmmod_under_traffic() {
	local rc=0 p alive=0
	list_all || return 1
	ctl hooks on --iif r1 || return 1
	defer kill_all FLOODS
	flood_from 1
	flood_from 2
	expect "flooded, r1" dropped 1 || rc=1
	rmmod cuckoo_nf
	verdict $? "rmmod under the floods through r1 and r2" || rc=1
	for p in "${FLOODS[@]}"; do
		kill -0 "$p" 2>/dev/null && alive=$((alive + 1))
	done
	((alive == 2))
	verdict $? "both floods ran through the rmmod ($alive of 2 alive)" || rc=1
	expect "no module: r1" delivered 1 || rc=1
	kill_all FLOODS
	mod_loaded || insmod "$CNF_KO"
	verdict $? "insmod again" || rc=1
	return "$rc"
}

require_root
require_module
require_cmds ip nft ping
ktap_header
setup || ktap_bail "cannot set up the namespaces"
run_tests
