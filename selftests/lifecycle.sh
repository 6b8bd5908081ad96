#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lifecycle: load, unload and reload the module under traffic.
#
# The script inserts and removes the module itself, from $CNF_KO.  It works
# whether or not the module is loaded when it starts (the VM harness inserts
# it unless run with --no-insmod): a loaded module is removed first, and the
# module is left loaded at the end, with default parameters.
#
#  1. ITER times, with a ping flood from a blocked and an allowed source
#     (IPv4 and IPv6) running throughout (the blocked one stopped while
#     counters are read): insmod; the namespace's filter is empty and
#     traffic from a source listed before passes; add sources (and 1000
#     unrelated entries with timeouts of 1 to 4 s, some pending at the
#     rmmod), they are dropped, and the module's dropped counters are exactly the packets
#     from listed sources that arrived and were not delivered; rmmod under
#     the flood; traffic from a source listed until then passes with no
#     module.  No packet of the allowed flood is ever dropped.
#  2. rmmod while /dev/cuckoo_nf is open (a shell's fd, and a `cuckooctl
#     load` of a large file stopped inside its batches and running): it fails
#     with "in use" (EBUSY) and the load completes; rmmod succeeds after.
#  3. Network namespaces created and destroyed while the module is loaded
#     and traffic flows in them (pernet init/exit), with a device fd holding
#     a deleted namespace; then insmod/rmmod while namespaces come and go.
# Kernel WARN/oops/leak reports are caught by the harness's kernel log scan.
# Everything is asserted with counters and state, never timing.
# ALL_TESTS: the three parts; TESTS="test_netns" runs one.
set -uo pipefail

ALL_TESTS="test_reload_under_traffic test_rmmod_busy test_netns"
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

# Load/unload rounds (1): 3 at the quick size, each with entries timing
# out across the rmmod; 20 in make check-kernels and check-rt.
ITER=${CNF_TEST_LIFECYCLE_ITER:-$(scaled 3 20)}
NS_ITER=${CNF_TEST_LIFECYCLE_NS_ITER:-$(scaled 2 6)}	# namespace rounds (3)
NS_CHURN=${CNF_TEST_LIFECYCLE_NS_CHURN:-36}	# namespaces made during insmod/rmmod, at most
MOD_CYCLES=${CNF_TEST_LIFECYCLE_MOD_CYCLES:-$(scaled 2 6)}	# insmod/rmmod under namespace churn
BIG=${CNF_TEST_LIFECYCLE_BIG:-$(scaled 100000 500000)}		# addresses in the big load (2)
INTERVAL=${CNF_TEST_LIFECYCLE_INTERVAL:-0.01}	# flood ping -i
CNF_KO=${CNF_KO:-/cnf/cuckoo_nf.ko}


NS_S=cnf-lc-s-$$
NS_R=cnf-lc-r-$$
DST4=10.0.1.2
DST6=fd00:1::2
FLOOD_B4=10.0.1.11	# flooding, blocked after each insmod
FLOOD_A4=10.0.1.21	# flooding, never blocked
PASS4=10.0.1.31		# listed each cycle, pinged only while not listed
DROP4=10.0.1.41		# listed each cycle, pinged only while listed
FLOOD_B6=fd00:1::11
FLOOD_A6=fd00:1::21
PASS6=fd00:1::31
DROP6=fd00:1::41
SRCS=("$FLOOD_B4" "$FLOOD_A4" "$PASS4" "$DROP4" "$FLOOD_B6" "$FLOOD_A6" "$PASS6" "$DROP6")

TMP=
PIDS=()
BLOCKED_FLOODS=()	# the pids of the blocked floods, also in PIDS

# The modules cuckoo_nf needs are loaded once (check_requirements) and
# stay: each cycle removes and inserts cuckoo_nf alone.
load_deps() {
	local d
	for d in $(modinfo -F depends "$CNF_KO" 2>/dev/null | tr ',' ' '); do
		modprobe "$d" || return 1
	done
}

mod_insert() { insmod "$CNF_KO"; }

# At exit (deferred): the floods stopped, every namespace of ours gone,
# and the module as the harness expects it: loaded.
lc_cleanup() {
	stop_floods
	ip netns list | while read -r n _; do
		[[ $n == cnf-lc-*-$$* ]] && ip netns del "$n"
	done
	mod_loaded || mod_insert || echo "# cannot insert $CNF_KO at exit"
}

ctl() { local ns=$1; shift; nsx "$ns" cuckooctl "$@"; }

# snap: CNT[table/counter]=packets for every named nft counter of the
# receiver, from one listing.
declare -A CNT
snap() { nft_read CNT "$NS_R" "$TMP/nft"; }

# counts A D SRC: from the last snap, A and D = the echo requests from SRC
# that arrived (netdev ingress, before the module's hook) and that were
# delivered (inet input), counted by cN, N = IDX[SRC] (counter_tables).
counts() {
	local -n _a=$1 _d=$2
	_a=${CNT[cnf_in/c${IDX[$3]}]:-0}
	_d=${CNT[cnf_rx/c${IDX[$3]}]:-0}
}

# ping_count RX NS SRC COUNT [ARG...]: RX = the replies received.
ping_count() {
	local out=$1 ns=$2 src=$3 n=$4 argv tx
	shift 4
	ping_argv argv "$ns" "$src" -c "$n" -i 0.01 "$@"
	"${argv[@]}" >"$TMP/ping" 2>&1
	ping_parse tx "$out" "$TMP/ping"
}

check_requirements() {
	require_ko "$CNF_KO"
	require_file "$ADDRGEN" "make -C selftests"
	require_cmds cuckooctl ip nft ping modinfo
	modprobe -q veth 2>/dev/null
	modprobe -q nf_tables 2>/dev/null
	load_deps || ktap_skip_all "cannot load the modules $CNF_KO depends on"
}

# mod_remove WHAT: the module out, if it is in; fails (WHAT) if it stays.
mod_remove() {
	mod_loaded || return 0
	rmmod cuckoo_nf && return 0
	fail "$1: cuckoo_nf is loaded and cannot be removed"
	return 1
}

# make_pair S R: namespaces S and R joined by s0 (S) - r0 (R), every
# source of SRCS on s0, static neighbours (no ARP/ND from blocked sources).
make_pair() {
	veth_pair 0 "$1" "$2" "$DST4" "$DST6" 10.0.1.1 fd00:1::1 "${SRCS[@]}"
}

# floods NS: the four floods from namespace NS, every one's pid in PIDS,
# the blocked ones' also in BLOCKED_FLOODS.
floods() {
	flood BLOCKED_FLOODS "$1" "$FLOOD_B4" "$INTERVAL"
	flood BLOCKED_FLOODS "$1" "$FLOOD_B6" "$INTERVAL"
	PIDS+=("${BLOCKED_FLOODS[@]}")
	flood PIDS "$1" "$FLOOD_A4" "$INTERVAL"
	flood PIDS "$1" "$FLOOD_A6" "$INTERVAL"
}

# stop_floods: kills every process in PIDS (stopped ones too).
stop_floods() {
	kill_all PIDS
	BLOCKED_FLOODS=()
}

# ---- 1. load, verify, unload under traffic, ITER times ----

# ping_start COUNT SRC4 SRC6 [ARG...]: COUNT pings from SRC4 and from SRC6
# at once, in the background, while something else is done; ping_end
# waits for them: GOT[src], the replies each received, and TX[src], the
# echo requests sent from it over all calls.
declare -A GOT TX
PING_PIDS=()
PING_SRCS=()
ping_start() {
	local n=$1 s argv
	PING_SRCS=("$2" "$3")
	shift 3
	PING_PIDS=()
	for s in "${PING_SRCS[@]}"; do
		ping_argv argv "$NS_S" "$s" -c "$n" -i 0.01 "$@"
		"${argv[@]}" >"$TMP/ping.$s" 2>&1 &
		PING_PIDS+=($!)
	done
}

ping_end() {
	local s tx rx
	wait "${PING_PIDS[@]}"
	for s in "${PING_SRCS[@]}"; do
		ping_parse tx rx "$TMP/ping.$s"
		GOT[$s]=$rx
		TX[$s]=$((${TX[$s]:-0} + tx))
	done
}

# quiet_counters U4 U6: stops the blocked floods (kill -CONT them after)
# and reads the receiver's counters until every source but the unlisted
# floods stands still.  U4 and U6 = the echo requests from the sources
# listed each cycle that arrived and were not delivered, over all cycles
# so far.  Only
# the module drops them, so from a reading before an add to one after it
# they grow by exactly the module's dropped counters.
declare -A QUIET
# shellcheck disable=SC2034,SC2317 # called by settle_counters, which reads QUIET
snap_quiet() {
	local k
	snap
	QUIET=()
	for k in "${!CNT[@]}"; do
		[[ $k == */c${IDX[$FLOOD_A4]} || $k == */c${IDX[$FLOOD_A6]} ]] ||
			QUIET[$k]=${CNT[$k]}
	done
}

# shellcheck disable=SC2031 # counts sets a and d by name, in this shell
quiet_counters() {
	local -n _u4=$1 _u6=$2
	local s a d
	kill -STOP "${BLOCKED_FLOODS[@]}"
	settle_counters snap_quiet QUIET
	_u4=0 _u6=0
	for s in $FLOOD_B4 $PASS4 $DROP4; do
		counts a d "$s"
		_u4=$((_u4 + a - d))
	done
	for s in $FLOOD_B6 $PASS6 $DROP6; do
		counts a d "$s"
		_u6=$((_u6 + a - d))
	done
}

# timed_entries FILE: 1000 entries of 10.77.0.0/16 with timeouts of 1 to
# 4 s, written once.
timed_entries() {
	local i
	[[ -s $1 ]] && return
	for ((i = 0; i < 1000; i++)); do
		echo "10.77.$((i / 256)).$((i % 256)) timeout $((1 + i % 4))"
	done >"$1"
}

# One cycle.  Every cycle lists PASS and DROP (v4 and v6): PASS is pinged
# only while it is not listed, with the fresh module before the add (the
# last cycle's module listed it) and with no module (it was listed until
# the rmmod); DROP only while listed.  ping may exit with its last echo
# request still on its way: the counters are settled before the add and
# before the rmmod, so that no echo request from PASS meets the filter
# that lists it and none from DROP comes after the module.  The counters,
# once for all cycles, tell: every echo request from PASS arrived and was
# delivered, every one from DROP arrived and none was delivered.  A late
# reply is no failure there: ping, once it has had a reply, waits only
# max(2 RTT, interval) for the last one, so under TCG a reply count would
# be a coin toss, not a verdict; only no reply at all for DROP is asked
# here.  DROP's pings need no wait for a reply.
one_cycle() {
	local k=$1 got u4 u6 v4 v6
	local -A st
	if ! mod_insert; then
		fail "cycle $k: insmod failed"
		return 1
	fi
	if [[ ! -c /dev/cuckoo_nf ]]; then
		fail "cycle $k: no /dev/cuckoo_nf after insmod"
		return 1
	fi
	# Nothing listed yet, so nothing dropped: the filter's state is read
	# while the first pings fly.
	ping_start 5 "$PASS4" "$PASS6"
	if ns_stats st "$NS_R" "$TMP/stats" &&
		[[ "${st[ipv4.entries]} ${st[ipv6.entries]} ${st[ipv4.dropped]}" == "0 0 0" &&
			"${st[ipv6.dropped]} ${st[mode]}" == "0 drop" ]]; then
		pass "cycle $k: fresh module, the namespace's filter is empty"
	else
		fail "cycle $k: state after reload: ${st[json]:-}"
	fi
	ping_end
	got="${GOT[$PASS4]}+${GOT[$PASS6]}"
	quiet_counters u4 u6
	kill -CONT "${BLOCKED_FLOODS[@]}"
	if ! ctl "$NS_R" add "$PASS4" "$PASS6" "$DROP4" "$DROP6" "$FLOOD_B4" "$FLOOD_B6" >/dev/null; then
		fail "cycle $k: cuckooctl add failed"
	fi
	# Timed entries no source uses: some run out before the rmmod, the
	# rest are pending at it.
	timed_entries "$TMP/timed"
	if ! ctl "$NS_R" load "$TMP/timed" >/dev/null; then
		fail "cycle $k: cuckooctl load of timed entries failed"
	fi
	ping_start 5 "$DROP4" "$DROP6" -W 0.01
	ping_end
	if ((${GOT[$DROP4]} + ${GOT[$DROP6]} == 0)); then
		pass "cycle $k: no reply to the listed sources"
	else
		fail "cycle $k: listed sources answered: ${GOT[$DROP4]}+${GOT[$DROP6]} replies"
	fi
	quiet_counters v4 v6
	u4=$((v4 - u4)) u6=$((v6 - u6))
	if ns_stats st "$NS_R" "$TMP/stats" &&
		[[ "${st[ipv4.dropped]} ${st[ipv6.dropped]}" == "$u4 $u6" ]]; then
		pass "cycle $k: dropped counted exactly (v4 $u4, v6 $u6: the listed sources' echo requests that arrived and were not delivered)"
	else
		fail "cycle $k: dropped v4 ${st[ipv4.dropped]:-?}, v6 ${st[ipv6.dropped]:-?}; the listed sources' echo requests that arrived and were not delivered: v4 $u4, v6 $u6"
	fi
	kill -CONT "${BLOCKED_FLOODS[@]}"

	if rmmod cuckoo_nf; then
		pass "cycle $k: rmmod under the flood"
	else
		fail "cycle $k: rmmod under the flood failed"
		return 1
	fi
	if mod_loaded || [[ -e /dev/cuckoo_nf ]]; then
		fail "cycle $k: module or device still there after rmmod"
		return 1
	fi
	ping_start 3 "$PASS4" "$PASS6"
	ping_end
	note "cycle $k: replies to PASS v4+v6: $got of 5+5 before the add, ${GOT[$PASS4]}+${GOT[$PASS6]} of 3+3 with no module"
	return 0
}

test_reload_under_traffic() {
	local k s A D
	mod_remove reload || return
	if ! make_pair "$NS_S" "$NS_R" ||
		! counter_tables "$NS_R" cnf_in:req:r0 cnf_rx:req:input; then
		fail "reload: setup"
		return
	fi
	floods "$NS_S"
	for ((k = 1; k <= ITER; k++)); do
		one_cycle "$k" || break
	done
	stop_floods
	settle_counters snap CNT
	for s in $PASS4 $PASS6; do
		counts A D "$s"
		if ((A > 0 && A == ${TX[$s]:-0} && D == A)); then
			pass "reload: $s, pinged while not listed: all $A echo requests arrived and were delivered"
		else
			fail "reload: $s, pinged while not listed: ${TX[$s]:-0} sent, $A arrived, $D delivered"
		fi
	done
	for s in $DROP4 $DROP6; do
		counts A D "$s"
		if ((A > 0 && A == ${TX[$s]:-0} && D == 0)); then
			pass "reload: $s, pinged while listed: all $A echo requests arrived, none delivered"
		else
			fail "reload: $s, pinged while listed: ${TX[$s]:-0} sent, $A arrived, $D delivered"
		fi
	done
	for s in $FLOOD_A4 $FLOOD_A6; do
		counts A D "$s"
		if ((A > 0 && A == D)); then
			pass "reload: allowed flood from $s: all $A packets delivered across $ITER reloads"
		else
			fail "reload: allowed flood from $s: $A arrived, $D delivered"
		fi
	done
	for s in $FLOOD_B4 $FLOOD_B6; do
		counts A D "$s"
		note "reload: flood from $s (blocked while loaded): $A arrived, $D delivered"
	done
	ip netns del "$NS_S"
	ip netns del "$NS_R"
}

# ---- 2. rmmod while the device is open ----

# rmmod_busy WHAT: rmmod must fail with "in use" and leave the module.
rmmod_busy() {
	local out
	if out=$(rmmod cuckoo_nf 2>&1); then
		fail "$1: rmmod succeeded while the device was open"
		return 1
	fi
	if [[ $out == *"in use"* ]] && mod_loaded; then
		pass "$1: rmmod refused: ${out#*: }"
	else
		fail "$1: rmmod failed oddly: $out"
	fi
}

# The pid of a process other than us with /dev/cuckoo_nf open.
dev_holder() {
	local f p
	for f in /proc/[0-9]*/fd/*; do
		[[ $f -ef /dev/cuckoo_nf ]] || continue
		p=${f#/proc/}
		p=${p%%/*}
		[[ $p == "$$" || $p == "$BASHPID" ]] && continue
		echo "$p"
		return 0
	done
	return 1
}

# stopped_holding PID: PID is stopped (SIGSTOP delivered) with
# /dev/cuckoo_nf still open.  A holder caught just as it closes the device
# and exits is neither, and proves nothing about rmmod.
stopped_holding() {
	local f n state=
	for ((n = 0; n < 100; n++)); do
		state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
		[[ $state == T ]] && break
		sleep 0.01
	done
	[[ $state == T ]] || return 1
	for f in "/proc/$1/fd/"*; do
		[[ $f -ef /dev/cuckoo_nf ]] && return 0
	done
	return 1
}

# Wait (bounded by checks) until the background job PID, or a process it
# started, has the device open; print the holder's pid.  1 if the job
# exited first.
catch_open() {
	local pid=$1 n rc
	for ((n = 0; n < 1000000; n++)); do
		read -r rc </sys/module/cuckoo_nf/refcnt
		((rc > 0)) && dev_holder && return 0
		kill -0 "$pid" 2>/dev/null || return 1
	done
	return 1
}

test_rmmod_busy() {
	local pid rc out n busy ok tries caught holder
	local -A st
	mod_loaded || mod_insert || {
		fail "busy: insmod failed"
		return
	}
	ip netns add "$NS_R"

	# A plain open fd.
	exec 3<>/dev/cuckoo_nf
	rmmod_busy "busy: fd open in this shell"
	exec 3>&-
	if rmmod cuckoo_nf; then
		pass "busy: rmmod once the fd is closed"
	else
		fail "busy: rmmod after the fd was closed"
	fi
	mod_insert || {
		fail "busy: insmod failed"
		return
	}

	# One address in four is IPv6.
	addr_list "$TMP/big" 172.16.0.0 $((BIG - BIG / 4)) fd00:300:: $((BIG / 4))
	# A load caught inside its batches and stopped there.
	caught=0
	for ((tries = 0; tries < 3 && !caught; tries++)); do
		ctl "$NS_R" flush >/dev/null
		ctl "$NS_R" load "$TMP/big" >"$TMP/load.out" 2>&1 &
		pid=$!
		PIDS+=("$pid")
		if holder=$(catch_open "$pid"); then
			kill -STOP "$holder" 2>/dev/null
			if stopped_holding "$holder"; then
				caught=1
				rmmod_busy "busy: cuckooctl load stopped mid-batches"
			fi
			kill -CONT "$holder" 2>/dev/null
		fi
		wait "$pid"
		rc=$?
		PIDS=()
	done
	if ((!caught)); then
		fail "busy: never caught cuckooctl load with the device open (3 tries, $BIG addresses)"
	fi
	out=$(tr '\r' '\n' <"$TMP/load.out" | tail -n 1)
	n=-1
	ns_stats st "$NS_R" "$TMP/stats" && n=$((${st[ipv4.entries]} + ${st[ipv6.entries]}))
	if ((rc == 0 && n == BIG)) && [[ $out == "$BIG added, 0 already present" ]]; then
		pass "busy: the load completed: $out, $n entries"
	else
		fail "busy: load exit $rc, '$out', $n entries (want $BIG)"
	fi

	# A load (here a delete of the same file) running, hammered by rmmod.
	ctl "$NS_R" del --file "$TMP/big" >"$TMP/load.out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	busy=0
	ok=0
	if catch_open "$pid" >/dev/null; then
		while kill -0 "$pid" 2>/dev/null; do
			if out=$(rmmod cuckoo_nf 2>&1); then
				ok=1
				break
			fi
			if [[ $out != *"in use"* ]]; then
				fail "busy: rmmod during del --file failed oddly: $out"
				break
			fi
			busy=$((busy + 1))
		done
	else
		fail "busy: never caught cuckooctl del --file with the device open"
	fi
	wait "$pid"
	rc=$?
	PIDS=()
	out=$(tr '\r' '\n' <"$TMP/load.out" | tail -n 1)
	if ((rc == 0)) && [[ $out == "$BIG deleted, 0 not present" ]]; then
		pass "busy: del --file completed under $busy refused rmmod calls: $out"
	else
		fail "busy: del --file exit $rc, '$out' ($busy refused rmmod calls)"
	fi
	if ((ok)); then
		note "busy: one rmmod succeeded after the file was closed, before the process exited"
	elif rmmod cuckoo_nf; then
		pass "busy: rmmod after the load finished"
	else
		fail "busy: rmmod after the load finished"
	fi
	ip netns del "$NS_R"
}

# ---- 3. namespaces coming and going ----

test_netns() {
	local k s r hold back ok n last argv rx
	local -A st
	mod_loaded || mod_insert || {
		fail "netns: insmod failed"
		return
	}
	ok=0
	for ((k = 1; k <= NS_ITER; k++)); do
		s=cnf-lc-ns$k-s-$$
		r=cnf-lc-ns$k-r-$$
		if ! make_pair "$s" "$r"; then
			fail "netns $k: setup"
			break
		fi
		if ! ns_stats st "$r" "$TMP/stats" ||
			[[ "${st[ipv4.entries]} ${st[ipv6.entries]}" != "0 0" ]]; then
			fail "netns $k: a new namespace's filter is not empty: ${st[json]:-}"
		fi
		ctl "$r" add "$FLOOD_B4" "$FLOOD_B6" "$DROP4" >/dev/null ||
			fail "netns $k: cuckooctl add failed"
		floods "$s"
		# The flood from FLOOD_B4 alone makes "dropped" grow: the verdict
		# is that no reply comes (an RTT here is a few ms).
		ping_count rx "$s" "$DROP4" 3 -W 0.2
		if ns_stats st "$r" "$TMP/stats" && ((rx == 0 && ${st[ipv4.dropped]} >= 3)); then
			ok=$((ok + 1))
		else
			fail "netns $k: $DROP4: $rx answered, dropped ${st[ipv4.dropped]:-?}"
		fi
		# Every other round, a device fd opened in the receiver and
		# held from outside it is all that keeps the receiver alive
		# once deleted: it goes when the fd is closed, under the flood.
		hold=
		if ((k % 2)) && command -v nsenter >/dev/null; then
			# In the receiver, open the device; back in the initial
			# namespace, wait for the fifo.  One pid all along.
			nsx_argv argv /proc/1/ns/net bash -c 'read -r _'
			printf -v back '%q ' "${argv[@]}"
			nsx_argv argv "$r" bash -c "exec 3<>/dev/cuckoo_nf; exec $back"
			"${argv[@]}" <"$TMP/fifo" &
			hold=$!
			exec 4>"$TMP/fifo"
			if ! catch_open "$hold" >/dev/null; then
				fail "netns $k: the holder did not open the device"
			fi
		fi
		# The receiver goes while the sender floods it.
		ip netns del "$r"
		if [[ -n $hold ]]; then
			rmmod_busy "netns $k: fd held in a deleted namespace"
			exec 4>&-
			wait "$hold"
		fi
		ping_count rx "$s" "$DROP4" 1 -W 0.01
		stop_floods
		ip netns del "$s"
	done
	if ((ok == NS_ITER)); then
		pass "netns: $NS_ITER namespace pairs made, filtered under floods, deleted"
	fi
	if ip netns list | grep -q "cnf-lc-ns.*-$$"; then
		fail "netns: namespaces left behind"
	fi

	# insmod/rmmod while namespaces are made and deleted: pernet
	# registration racing namespace creation and cleanup.  The churn goes
	# on until the module cycles are done (NS_CHURN namespaces at most);
	# its first namespace exists before they start, and goes during them.
	rm -f "$TMP/churn.stop" "$TMP/churn.n" "$TMP/churn.bad"
	ip netns add cnf-lc-churn-$$-0 || fail "netns churn: ip netns add"
	(
		ip netns del cnf-lc-churn-$$-0 || echo "del 0" >>"$TMP/churn.bad"
		last=0
		for ((k = 1; k < NS_CHURN && !last; k++)); do
			[[ -e $TMP/churn.stop ]] && last=1
			ip netns add "cnf-lc-churn-$$-$k" &&
				ip -n "cnf-lc-churn-$$-$k" link set lo up &&
				ip netns del "cnf-lc-churn-$$-$k" || echo "namespace $k" >>"$TMP/churn.bad"
		done
		echo "$k" >"$TMP/churn.n"
	) &
	s=$!
	ok=0
	for ((k = 1; k <= MOD_CYCLES; k++)); do
		if ! mod_loaded && ! mod_insert; then
			fail "netns churn: insmod $k failed"
			break
		fi
		if ! rmmod cuckoo_nf; then
			fail "netns churn: rmmod $k failed"
			break
		fi
		ok=$k
	done
	touch "$TMP/churn.stop"
	wait "$s"
	read -r n <"$TMP/churn.n"
	[[ -s $TMP/churn.bad ]] && fail "netns churn: failed: $(head -n 3 "$TMP/churn.bad" | tr '\n' ' ')"
	((ok == MOD_CYCLES)) &&
		pass "netns churn: $MOD_CYCLES insmod/rmmod cycles while ${n:-?} namespaces came and went"
	if mod_insert && ip netns add "$NS_R" &&
		ns_stats st "$NS_R" "$TMP/stats" && [[ ${st[ipv4.entries]} == 0 ]]; then
		pass "netns churn: module works after it"
	else
		fail "netns churn: module does not work after it"
	fi
	ip netns del "$NS_R" 2>/dev/null
}

check_requirements
tmpdir TMP || ktap_bail "mktemp"
mkfifo "$TMP/fifo" || ktap_bail "mkfifo"
defer lc_cleanup
run_tests
