#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cuckoo_nf.service's commands, run as systemd runs them: its ExecStop and
# ExecStart lines, read from the unit (userspace/systemd/cuckoo_nf.service,
# copied next to the tests by their Makefile), each command split into
# words and run without a shell, in order, an exit status other than 0 or
# SuccessExitStatus failing the job; the state directory made 0700 first
# (StateDirectory=).  The module goes under /lib/modules/$(uname -r)/updates
# so that the unit's modprobe finds it.
#
#   sender ns: 10.0.9.1 (listed), 10.0.9.11; fd09::1 (listed), fd09::11
#      s0 ----------------------------------- r0  the VM's own namespace
#
#  1. two listed addresses and the hooks scoped to r0 (and lo), ExecStop:
#     default.list holds both, whole, and hooks the scope;
#  2. rmmod: the module and its lists are gone;
#  3. ExecStart: the module is back with both addresses and the scope
#     before any packet is sent; then pings from every source: the listed sources' echo
#     requests are all dropped by the module (its counter equals what was
#     sent) and none reaches the input hook, the others' all do;
#  4. a save file cut short: ExecStart still succeeds (exit 3 is in
#     SuccessExitStatus), says why, keeps the file as default.list.bad,
#     loads the module with an empty set;
#  5. no save file: ExecStart succeeds, says so, empty set.
# ALL_TESTS run in that order, each from the state the one before left: a
# test whose predecessor failed is skipped, not run on a wrong state.
set -uo pipefail

ALL_TESTS="test_save test_start_restores test_corrupt_skipped"

NPINGS=4
S=cnf-boot-$$
LISTED=(10.0.9.1 fd09::1)
UNLISTED=(10.0.9.11 fd09::11)
SRCS=("${LISTED[@]}" "${UNLISTED[@]}")
DST4=10.0.9.2
DST6=fd09::2
UNIT=$(dirname "$(realpath "$0")")/cuckoo_nf.service
TMP=
# The last test that ran and did not pass, for the ones after it.
BROKEN=

# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

# At exit (deferred): the module as the harness expects it, loaded and
# empty.
module_back() {
	if mod_loaded; then
		cuckooctl reset >/dev/null
	else
		insmod "$CNF_KO" || echo "# cannot insert $CNF_KO at exit"
	fi
}

# unit_cmds CMDS OK KEY: the unit's KEY= lines (ExecStart, ExecStop) into
# the array CMDS, in order; SuccessExitStatus= into the array OK.
unit_cmds() {
	local -n _cmds=$1 _ok=$2
	local key=$3 line
	_cmds=()
	_ok=(0)
	while read -r line; do
		case $line in
		"$key"=*) _cmds+=("${line#*=}") ;;
		SuccessExitStatus=*) read -ra _ok <<<"0 ${line#*=}" ;;
		esac
	done <"$UNIT"
}

# run_unit KEY: run the unit's KEY commands as systemd would, the state
# directory being $STATE; stop at the first failing one.  RC is its status
# (0 when all succeeded), its output is in $TMP/out and $TMP/err.
run_unit() {
	local cmd argv i ok s cmds ok_status
	unit_cmds cmds ok_status "$1"
	((${#cmds[@]})) || { fail "$UNIT has no $1= line"; RC=99; return; }
	[[ -d $STATE ]] || mkdir -m 0700 "$STATE"
	: >"$TMP/out"
	: >"$TMP/err"
	for cmd in "${cmds[@]}"; do
		read -ra argv <<<"$cmd"
		# The VM's tools are on PATH, not where a Debian system has them.
		argv[0]=$(command -v "${argv[0]##*/}") ||
			{ fail "$1: ${cmd%% *} not found"; RC=99; return; }
		for i in "${!argv[@]}"; do
			[[ ${argv[i]} == /var/lib/cuckoo_nf ]] && argv[i]=$STATE
		done
		"${argv[@]}" >>"$TMP/out" 2>>"$TMP/err"
		RC=$?
		ok=0
		for s in "${ok_status[@]}"; do
			[[ $RC == "$s" ]] && ok=1
		done
		((ok)) || return
	done
	RC=0
}

show() {
	sed -e 's/^/#   out: /' "$TMP/out"
	sed -e 's/^/#   err: /' "$TMP/err"
}

# The sender namespace and its veth to the VM's own namespace, where the
# unit's commands act (lib.sh's veth_pair joins two named namespaces).
setup() {
	local kdir a modfile
	tmpdir TMP || return 1
	STATE=$TMP/cuckoo_nf
	kdir=/lib/modules/$(uname -r)/updates
	mkdir -p "$kdir" || return 1
	modfile=$kdir/cuckoo_nf.ko
	defer depmod -a
	defer rm -f "$modfile"
	cp "$CNF_KO" "$modfile" && depmod -a || return 1
	defer ip netns del "$S"
	defer ip link del r0
	{
		echo "netns add $S"
		echo "link add r0 address 02:cf:00:00:09:02 type veth peer name s0 address 02:cf:00:00:09:01 netns $S"
		echo "addr add $DST4/24 dev r0"
		echo "addr add $DST6/64 dev r0 nodad"
		echo "link set r0 up"
		for a in "${SRCS[@]}"; do
			echo "neigh replace $a lladdr 02:cf:00:00:09:01 dev r0 nud permanent"
		done
	} | ip -batch - || return 1
	{
		echo "link set lo up"
		for a in "${SRCS[@]}"; do
			if is_v6 "$a"; then
				echo "addr add $a/64 dev s0 nodad"
			else
				echo "addr add $a/24 dev s0"
			fi
		done
		echo "link set s0 up"
		echo "neigh replace $DST4 lladdr 02:cf:00:00:09:02 dev s0 nud permanent"
		echo "neigh replace $DST6 lladdr 02:cf:00:00:09:02 dev s0 nud permanent"
	} | ip -n "$S" -batch - || return 1
	# Echo requests that got past the module, per source (c0, c1...).
	defer nft delete table inet cnf_boot
	counter_tables /proc/self/ns/net cnf_boot:req:input
}

declare -A CTR ST
read_counters() {
	nft_read CTR /proc/self/ns/net "$TMP/nft" table inet cnf_boot
	stats_read ST "$TMP/stats" cuckooctl
}

# after_ok: the test before this one passed; else this one is skipped.
after_ok() {
	[[ -z $BROKEN ]] && return 0
	skip_test "$BROKEN did not pass: no state to start from"
	return 1
}

test_save() {
	local first last n
	BROKEN=test_save
	cuckooctl add "${LISTED[@]}" >/dev/null || { fail "add"; return 1; }
	cuckooctl hooks on --iif r0 --iif lo || { fail "hooks on --iif"; return 1; }
	run_unit ExecStop
	if [[ $RC != 0 ]]; then
		fail "ExecStop exited $RC"
		show
		return 1
	fi
	n=$(grep -c -v '^#' "$STATE/default.list")
	read -r first <"$STATE/default.list"
	last=$(tail -n1 "$STATE/default.list")
	if [[ $n == 2 && $first == "# cuckoo_nf save" &&
	      $last == "# cuckoo_nf end 2 entries" ]] &&
	   grep -qx 10.0.9.1 "$STATE/default.list" && grep -qx fd09::1 "$STATE/default.list"; then
		pass "ExecStop saved both addresses in default.list, whole"
	else
		fail "ExecStop: default.list is not the set"
		sed -e 's/^/#   /' "$STATE/default.list"
		return 1
	fi
	rmmod cuckoo_nf || { fail "rmmod"; return 1; }
	if [[ -e /dev/cuckoo_nf ]] || mod_loaded; then
		fail "rmmod: module still there"
		return 1
	fi
	pass "rmmod: module and lists gone"
	BROKEN=
}

test_start_restores() {
	local s i sent
	after_ok || return
	BROKEN=test_start_restores
	run_unit ExecStart
	if [[ $RC != 0 ]]; then
		fail "ExecStart exited $RC"
		show
		return 1
	fi
	cuckooctl test -s default "${UNLISTED[@]}" >"$TMP/test" 2>&1
	if ! mod_loaded || ! cuckooctl test -s default "${LISTED[@]}" >/dev/null ||
	   [[ $(grep -c ': absent$' "$TMP/test") != "${#UNLISTED[@]}" ]]; then
		fail "ExecStart: module not back with exactly the saved set"
		show
		return 1
	fi
	pass "ExecStart: module loaded, both addresses restored"
	if [[ $(cuckooctl hooks) != "on --iif r0 --iif lo" ]]; then
		fail "ExecStart: hooks '$(cuckooctl hooks)', not the scope saved"
		return 1
	fi
	pass "ExecStart: the hooks' scope restored (on --iif r0 --iif lo)"
	# Only now does any packet leave the sender.
	ping_all "$S" "$NPINGS" 0.2 0.1 "${SRCS[@]}"
	settle_counters read_counters CTR ST
	sent=$((2 * NPINGS))
	for s in "${LISTED[@]}"; do
		i=${IDX[$s]}
		if [[ ${CTR[cnf_boot/c$i]:-x} != 0 ]]; then
			fail "$s listed: ${CTR[cnf_boot/c$i]:-?} echo requests delivered"
		fi
	done
	for s in "${UNLISTED[@]}"; do
		i=${IDX[$s]}
		if [[ ${CTR[cnf_boot/c$i]:-x} != "$NPINGS" ]]; then
			fail "$s not listed: ${CTR[cnf_boot/c$i]:-?} of $NPINGS echo requests delivered"
		fi
	done
	if [[ $((${ST[ipv4.dropped]:-0} + ${ST[ipv6.dropped]:-0})) != "$sent" ]]; then
		fail "module dropped ${ST[ipv4.dropped]:-?} + ${ST[ipv6.dropped]:-?}, want $sent"
	fi
	((RET == 0)) || return
	pass "listed sources dropped from the first packet ($sent of $sent), others delivered"
	BROKEN=
}

# The module is loaded, the set saved: stop, cut the file, start.
test_corrupt_skipped() {
	local -A st
	after_ok || return
	BROKEN=test_corrupt_skipped
	# The default scope, saved: restoring it configures nothing.
	cuckooctl hooks on || { fail "hooks on"; return 1; }
	run_unit ExecStop
	[[ $RC == 0 ]] || { fail "ExecStop exited $RC"; show; return 1; }
	rmmod cuckoo_nf || { fail "rmmod"; return 1; }
	head -n 2 "$STATE/default.list" >"$STATE/cut" && mv "$STATE/cut" "$STATE/default.list"
	run_unit ExecStart
	stats_read st "$TMP/stats" cuckooctl
	if [[ $RC == 0 ]] && mod_loaded && [[ ${st[active]:-} == false ]] &&
	   grep -q "default.list: not a complete save" "$TMP/err" &&
	   [[ -f $STATE/default.list.bad && ! -e $STATE/default.list ]]; then
		pass "cut-short save: reported, kept as default.list.bad, skipped; module loaded"
	else
		fail "cut-short save (ExecStart $RC, active ${st[active]:-?})"
		show
		# shellcheck disable=SC2012 # a listing for the log, not parsed
	ls -l "$STATE" | sed -e 's/^/#   /'
		return 1
	fi
	rmmod cuckoo_nf || { fail "rmmod"; return 1; }
	rm -f "$STATE"/*
	run_unit ExecStart
	stats_read st "$TMP/stats" cuckooctl
	if [[ $RC == 0 ]] && mod_loaded && [[ ${st[active]:-} == false ]] &&
	   grep -q "no saved set" "$TMP/err"; then
		pass "no save file: reported, module loaded with an empty set"
	else
		fail "no save file (ExecStart $RC)"
		show
		return 1
	fi
}

require_module
[[ -f $UNIT ]] || ktap_skip_all "$UNIT missing (make selftests-build)"
require_cmds nft ping modprobe rmmod depmod insmod
defer module_back
setup || ktap_bail "setup"
run_tests
