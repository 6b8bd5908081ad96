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
#  1. two listed addresses, ExecStop: default.list holds both, whole;
#  2. rmmod: the module and its lists are gone;
#  3. ExecStart: the module is back with both addresses before any packet
#     is sent; then pings from every source: the listed sources' echo
#     requests are all dropped by the module (its counter equals what was
#     sent) and none reaches the input hook, the others' all do;
#  4. a save file cut short: ExecStart still succeeds (exit 3 is in
#     SuccessExitStatus), says why, keeps the file as default.list.bad,
#     loads the module with an empty set;
#  5. no save file: ExecStart succeeds, says so, empty set.
set -uo pipefail

NPINGS=4
S=cnf-boot-$$
LISTED=(10.0.9.1 fd09::1)
UNLISTED=(10.0.9.11 fd09::11)
SRCS=("${LISTED[@]}" "${UNLISTED[@]}")
DST4=10.0.9.2
DST6=fd09::2
UNIT=$(dirname "$(realpath "$0")")/cuckoo_nf.service
ret=0
TMP=
MODFILE=

# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

cleanup() {
	ip netns del "$S" 2>/dev/null
	ip link del r0 2>/dev/null
	nft delete table inet cnf_boot 2>/dev/null
	if [[ -n $MODFILE ]]; then
		rm -f "$MODFILE"
		depmod -a
	fi
	[[ -n $TMP ]] && rm -rf "$TMP"
	# Leave the module as the harness expects it: loaded, empty.
	if mod_loaded; then
		cuckooctl reset >/dev/null 2>&1
	else
		insmod "$CNF_KO" || echo "FAIL: cannot insert $CNF_KO at exit"
	fi
}

# unit_cmds KEY: the unit's KEY= lines (ExecStart, ExecStop) into CMDS, in
# order; SuccessExitStatus= into OK_STATUS.
unit_cmds() {
	local key=$1 line
	CMDS=()
	OK_STATUS=(0)
	while read -r line; do
		case $line in
		"$key"=*) CMDS+=("${line#*=}") ;;
		SuccessExitStatus=*) read -ra OK_STATUS <<<"0 ${line#*=}" ;;
		esac
	done <"$UNIT"
}

# run_unit KEY: run the unit's KEY commands as systemd would, the state
# directory being $STATE; stop at the first failing one.  RC is its status
# (0 when all succeeded), its output is in $TMP/out and $TMP/err.
run_unit() {
	local cmd argv i ok s
	unit_cmds "$1"
	((${#CMDS[@]})) || { log_fail "$UNIT has no $1= line"; RC=99; return; }
	[[ -d $STATE ]] || mkdir -m 0700 "$STATE"
	: >"$TMP/out"
	: >"$TMP/err"
	for cmd in "${CMDS[@]}"; do
		read -ra argv <<<"$cmd"
		# The VM's tools are on PATH, not where a Debian system has them.
		argv[0]=$(command -v "${argv[0]##*/}") ||
			{ log_fail "$1: ${cmd%% *} not found"; RC=99; return; }
		for i in "${!argv[@]}"; do
			[[ ${argv[i]} == /var/lib/cuckoo_nf ]] && argv[i]=$STATE
		done
		"${argv[@]}" >>"$TMP/out" 2>>"$TMP/err"
		RC=$?
		ok=0
		for s in "${OK_STATUS[@]}"; do
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

setup() {
	local kdir a
	TMP=$(mktemp -d) || return 1
	STATE=$TMP/cuckoo_nf
	kdir=/lib/modules/$(uname -r)/updates
	mkdir -p "$kdir" || return 1
	MODFILE=$kdir/cuckoo_nf.ko
	cp "$CNF_KO" "$MODFILE" && depmod -a || return 1
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
	counter_tables /proc/self/ns/net cnf_boot:req:input
}

declare -A CTR
read_counters() {
	nft_read CTR /proc/self/ns/net "$TMP/nft" table inet cnf_boot
	stats_read "$TMP/stats" cuckooctl
}

test_save() {
	local first last n
	cuckooctl add "${LISTED[@]}" >/dev/null || { log_fail "add"; return 1; }
	run_unit ExecStop
	if [[ $RC != 0 ]]; then
		log_fail "ExecStop exited $RC"
		show
		return 1
	fi
	n=$(grep -c -v '^#' "$STATE/default.list")
	read -r first <"$STATE/default.list"
	last=$(tail -n1 "$STATE/default.list")
	if [[ $n == 2 && $first == "# cuckoo_nf save" &&
	      $last == "# cuckoo_nf end 2 entries" ]] &&
	   grep -qx 10.0.9.1 "$STATE/default.list" && grep -qx fd09::1 "$STATE/default.list"; then
		log_pass "ExecStop saved both addresses in default.list, whole"
	else
		log_fail "ExecStop: default.list is not the set"
		sed -e 's/^/#   /' "$STATE/default.list"
		return 1
	fi
	rmmod cuckoo_nf || { log_fail "rmmod"; return 1; }
	if [[ -e /dev/cuckoo_nf ]] || mod_loaded; then
		log_fail "rmmod: module still there"
		return 1
	fi
	log_pass "rmmod: module and lists gone"
}

test_start_restores() {
	local s i sent
	run_unit ExecStart
	if [[ $RC != 0 ]]; then
		log_fail "ExecStart exited $RC"
		show
		return 1
	fi
	cuckooctl test "${UNLISTED[@]}" >"$TMP/test" 2>&1
	if ! mod_loaded || ! cuckooctl test "${LISTED[@]}" >/dev/null ||
	   [[ $(grep -c ': absent$' "$TMP/test") != "${#UNLISTED[@]}" ]]; then
		log_fail "ExecStart: module not back with exactly the saved set"
		show
		return 1
	fi
	log_pass "ExecStart: module loaded, both addresses restored"
	# Only now does any packet leave the sender.
	ping_all "$S" "$NPINGS" 0.2 2 "${SRCS[@]}"
	settle_counters read_counters CTR STAT
	sent=$((2 * NPINGS))
	for s in "${LISTED[@]}"; do
		i=${IDX[$s]}
		if [[ ${CTR[cnf_boot/c$i]:-x} != 0 ]]; then
			log_fail "$s listed: ${CTR[cnf_boot/c$i]:-?} echo requests delivered"
			ret=1
		fi
	done
	for s in "${UNLISTED[@]}"; do
		i=${IDX[$s]}
		if [[ ${CTR[cnf_boot/c$i]:-x} != "$NPINGS" ]]; then
			log_fail "$s not listed: ${CTR[cnf_boot/c$i]:-?} of $NPINGS echo requests delivered"
			ret=1
		fi
	done
	if [[ $((${STAT[ipv4.dropped]:-0} + ${STAT[ipv6.dropped]:-0})) != "$sent" ]]; then
		log_fail "module dropped ${STAT[ipv4.dropped]:-?} + ${STAT[ipv6.dropped]:-?}, want $sent"
		ret=1
	fi
	((ret == 0)) && log_pass "listed sources dropped from the first packet ($sent of $sent), others delivered"
}

# The module is loaded, the set saved: stop, cut the file, start.
test_corrupt_skipped() {
	run_unit ExecStop
	[[ $RC == 0 ]] || { log_fail "ExecStop exited $RC"; show; return 1; }
	rmmod cuckoo_nf || { log_fail "rmmod"; return 1; }
	head -n 2 "$STATE/default.list" >"$STATE/cut" && mv "$STATE/cut" "$STATE/default.list"
	run_unit ExecStart
	stats_read "$TMP/stats" cuckooctl
	if [[ $RC == 0 ]] && mod_loaded && [[ ${STAT[active]:-} == false ]] &&
	   grep -q "default.list: not a complete save" "$TMP/err" &&
	   [[ -f $STATE/default.list.bad && ! -e $STATE/default.list ]]; then
		log_pass "cut-short save: reported, kept as default.list.bad, skipped; module loaded"
	else
		log_fail "cut-short save (ExecStart $RC, active ${STAT[active]:-?})"
		show
		ls -l "$STATE" | sed -e 's/^/#   /'
		return 1
	fi
	rmmod cuckoo_nf || { log_fail "rmmod"; return 1; }
	rm -f "$STATE"/*
	run_unit ExecStart
	stats_read "$TMP/stats" cuckooctl
	if [[ $RC == 0 ]] && mod_loaded && [[ ${STAT[active]:-} == false ]] &&
	   grep -q "no saved set" "$TMP/err"; then
		log_pass "no save file: reported, module loaded with an empty set"
	else
		log_fail "no save file (ExecStart $RC)"
		show
		return 1
	fi
}

trap cleanup EXIT
[[ -c /dev/cuckoo_nf ]] || skip "/dev/cuckoo_nf missing (module not loaded)"
[[ -f $UNIT ]] || skip "$UNIT missing (make selftests-build)"
require_cmds cuckooctl nft ping modprobe rmmod depmod insmod
setup || { log_fail "setup"; exit 1; }
test_save && test_start_restores && test_corrupt_skipped
finish "cuckoo_nf.service: save, reload, restore before traffic, bad or missing files skipped"
