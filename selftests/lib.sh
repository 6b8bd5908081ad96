# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2178 # namerefs to the caller's arrays
#
# Helpers shared by the shell selftests (sourced, not run).
#
# Under TCG every process start counts: `ip netns exec` costs about 50 ms
# more than the command it runs (a mount namespace and a /sys remount), and
# jq takes 0.4 s to start.  Tests run such commands hundreds of times.
# Even a subshell counts: $(...) forks bash, about 15 ms; the helpers here
# return what they read into variables the caller names (local -n
# namerefs: `ns_stats st "$NS" "$TMP/stats"` fills the caller's array st),
# and the scripts do the same, keeping $(...) for what runs rarely.

# Address lists for bulk loads (selftests/addrgen.c, built with the C tests).
# shellcheck disable=SC2034 # used by the scripts that source this file
ADDRGEN=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/addrgen

# addr_list FILE BASE N [BASE N]...: N consecutive addresses from each BASE
# (IPv4 or IPv6), one a line, into FILE: the bulk loads' lists.
addr_list() {
	local out=$1
	shift
	while (($# >= 2)); do
		"$ADDRGEN" "$1" "$2" || return
		shift 2
	done >"$out"
}

# ---- how much work ----
#
# make check runs each test at a size that finds what it looks for in
# seconds.  make check-kernels and check-rt set CNF_TEST_FULL=1 for the
# sizes that find rarer things: more rounds, larger loads, more
# namespaces.  make check-debug keeps the quick sizes (its kernel is ten
# times slower) but fuzzes and storms longer.  A test's own CNF_TEST_*
# knobs override all of these.
# scaled QUICK FULL: the size for this run.
scaled() {
	if [[ ${CNF_TEST_FULL:-0} == 1 ]]; then echo "$2"; else echo "$1"; fi
}

# ---- KTAP ----
#
# Every script speaks KTAP, as tools/testing/selftests/kselftest/ktap_helpers.sh
# does: a header and a plan, one "ok N NAME" / "not ok N NAME" / "ok N NAME
# # SKIP REASON" per test, diagnostics as "# ...", "# Totals: ..." at the
# end.  A multi-part script lists its test functions in ALL_TESTS (as
# tools/testing/selftests/net/lib.sh does); TESTS="a b" in the environment
# runs only those (CNF_TEST_TESTS from the host: selftests/vm/run passes
# CNF_TEST_* into the VM, for a run of one script).  Inside a test, checks
# report with
#   pass MSG          "# ok: MSG"
#   fail MSG          "# FAIL: MSG", and the test fails
#   note MSG          "# MSG"
#   verdict RC MSG    pass or fail as RC is 0 or not
#   skip_test REASON; return
#                     the test is skipped (a requirement of its own is
#                     missing: it was not run, so it did not pass)
# A requirement of the whole script missing (require_*) skips it all:
# "1..0 # SKIP REASON" and exit 4; a setup that fails is a failure
# (ktap_bail).  The exit status is 0 when no test failed and one passed, 4
# when every test was skipped, 1 otherwise.
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4
KTAP_TESTNO=0 KTAP_CNT_PASS=0 KTAP_CNT_FAIL=0 KTAP_CNT_SKIP=0
KTAP_HEADER=0
# The verdict of the test running: 0 pass, 1 fail; SKIP_REASON when skipped.
RET=0
SKIP_REASON=

ktap_header() {
	((KTAP_HEADER)) && return
	KTAP_HEADER=1
	echo "TAP version 13"
}

note() { echo "# $*"; }
pass() { echo "# ok: $*"; }
fail() {
	echo "# FAIL: $*"
	RET=1
}
skip_test() { SKIP_REASON=${*:-skipped}; }
# verdict RC MSG: pass MSG when RC is 0, else fail MSG.
verdict() {
	local rc=$1
	shift
	if ((rc == 0)); then pass "$@"; else fail "$@"; fi
}

# ktap_result RC NAME [REASON]: the result line of test NAME, RC 0 (pass),
# 4 (skip, for REASON) or anything else (fail).
ktap_result() {
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	case $1 in
	0)
		echo "ok $KTAP_TESTNO $2"
		KTAP_CNT_PASS=$((KTAP_CNT_PASS + 1)) ;;
	"$KSFT_SKIP")
		echo "ok $KTAP_TESTNO $2 # SKIP ${3:-}"
		KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1)) ;;
	*)
		echo "not ok $KTAP_TESTNO $2"
		KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1)) ;;
	esac
}

# ktap_skip_all REASON: the whole script is skipped.
ktap_skip_all() {
	ktap_header
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

# ktap_bail REASON: the script cannot go on (its setup failed): a
# failure, never a skip.
ktap_bail() {
	ktap_header
	echo "Bail out! $*"
	exit $KSFT_FAIL
}

# ktap_finished: the totals, and exit with the status they make.
ktap_finished() {
	echo "# Totals: pass:$KTAP_CNT_PASS fail:$KTAP_CNT_FAIL xfail:0 xpass:0 skip:$KTAP_CNT_SKIP error:0"
	if ((KTAP_CNT_FAIL)); then
		exit $KSFT_FAIL
	elif ((KTAP_CNT_PASS == 0 && KTAP_CNT_SKIP)); then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

# run_one NAME: the test function NAME, with its verdict reported.
run_one() {
	local t0=$SECONDS
	RET=0 SKIP_REASON=
	"$1"
	note "$1: $((SECONDS - t0)) s"
	if [[ -n $SKIP_REASON ]]; then
		ktap_result $KSFT_SKIP "$1" "$SKIP_REASON"
	else
		ktap_result "$RET" "$1"
	fi
}

# run_tests: every test of ALL_TESTS that TESTS names, in ALL_TESTS'
# order, then ktap_finished.  Without TESTS: all of them, but for those of
# FULL_TESTS when the run is not at full size (CNF_TEST_FULL): tests that
# need the full size to measure anything, left to the long suites.  A name
# in TESTS that is not a test is an error, not a silent pass.
run_tests() {
	local t sel=() all=" " want=" " only=${TESTS-${CNF_TEST_TESTS:-}}
	local dflt=$ALL_TESTS
	# Words, whatever the white space between them.
	for t in $ALL_TESTS; do all+="$t "; done
	if [[ ${CNF_TEST_FULL:-0} != 1 ]]; then
		dflt=
		for t in $ALL_TESTS; do
			[[ " ${FULL_TESTS:-} " == *" $t "* ]] || dflt+="$t "
		done
	fi
	for t in ${only:-$dflt}; do want+="$t "; done
	for t in $only; do
		[[ $all == *" $t "* ]] && continue
		ktap_header
		echo "1..0"
		echo "# no test $t here (ALL_TESTS:$all)"
		exit $KSFT_FAIL
	done
	for t in $ALL_TESTS; do
		[[ $want == *" $t "* ]] && sel+=("$t")
	done
	ktap_header
	echo "1..${#sel[@]}"
	for t in "${sel[@]}"; do
		run_one "$t"
	done
	ktap_finished
}

# ---- requirements: each skips the whole script when not met ----

require_cmds() {
	local c
	for c; do
		command -v "$c" >/dev/null || ktap_skip_all "$c not found"
	done
}
require_root() {
	[[ $EUID == 0 ]] || ktap_skip_all "must run as root"
}
# require_module: cuckoo_nf loaded, its device there and cuckooctl on PATH.
require_module() {
	[[ -c /dev/cuckoo_nf ]] || ktap_skip_all "/dev/cuckoo_nf missing (module not loaded)"
	require_cmds cuckooctl
}
# require_file PATH WHAT: PATH exists (a helper built with the suite).
require_file() {
	[[ -e $1 ]] || ktap_skip_all "$1 missing ($2)"
}
# require_ko KO: a module file the script inserts itself, and root.
require_ko() {
	require_root
	[[ -r $1 ]] || ktap_skip_all "no module at \$CNF_KO ($1)"
	require_cmds insmod rmmod
}

# ---- cleanup: one stack, run at exit ----
#
# defer COMMAND [ARG...]: run COMMAND when the script exits (stderr
# discarded: what it undoes may be gone already), the last deferred first.
# Background jobs (subshells) do not run it: bash resets the EXIT trap
# there.
DEFER=()
defer() {
	local c
	printf -v c '%q ' "$@"
	DEFER+=("$c")
}
run_deferred() {
	local i
	for ((i = ${#DEFER[@]} - 1; i >= 0; i--)); do
		eval "${DEFER[i]}" 2>/dev/null
	done
	DEFER=()
}
trap run_deferred EXIT

# tmpdir VAR: a temporary directory, removed at exit, in VAR.
tmpdir() {
	local -n _dir=$1
	_dir=$(mktemp -d) || return 1
	defer rm -rf "$_dir"
}

# reliability KEY=VALUE...: the figures of README's reliability table, as
# one diagnostic line ("# reliability: calls_fuzzed=20000 lost=0"), which
# scripts/reliability.py collects from the logs.  Measured, never written.
reliability() { echo "# reliability: $*"; }

# mod_loaded [NAME]: module NAME (default cuckoo_nf) is loaded.  Read in
# this shell: no grep to start.
# shellcheck disable=SC2120 # NAME is optional
mod_loaded() {
	local m _
	while read -r m _; do
		[[ $m == "${1:-cuckoo_nf}" ]] && return 0
	done </proc/modules
	return 1
}

# nsx NS COMMAND...: COMMAND in network namespace NS (a name of ip netns,
# or with nsenter a path such as /proc/PID/ns/net), without the mount
# namespace of `ip netns exec`: for commands that do not read /sys/class/net.
# Not for a background job killed by its pid: that pid is a subshell running
# this function, and killing it leaves COMMAND running.  For those,
# nsx_argv ARRAY NS COMMAND... sets ARRAY to the command line that nsx
# runs: `"${ARRAY[@]}" &` is a job whose pid is the command's own.
# busybox's nsenter (static) starts in a third of the time of util-linux's
# (~30 ms against ~85 ms in the VM), but busybox runs its own applet for a
# command of that name (ping, ip, sysctl, awk...): COMMAND goes to it by
# its path, resolved by bash's command hash (no subshell).
if [[ $'\n'$(busybox --list 2>/dev/null)$'\n' == *$'\n'nsenter$'\n'* ]]; then
	nsx_argv() {
		local -n _argv=$1
		local ns=$2 cmd=$3
		shift 3
		[[ $ns == /* ]] || ns=/run/netns/$ns
		if [[ $cmd != */* ]] && hash "$cmd" 2>/dev/null; then
			cmd=${BASH_CMDS[$cmd]}
		fi
		_argv=(busybox nsenter --net="$ns" -- "$cmd" "$@")
	}
elif command -v nsenter >/dev/null; then
	nsx_argv() {
		local -n _argv=$1
		local ns=$2
		shift 2
		[[ $ns == /* ]] || ns=/run/netns/$ns
		_argv=(nsenter --net="$ns" -- "$@")
	}
else
	nsx_argv() {
		local -n _argv=$1
		shift
		_argv=(ip netns exec "$@")
	}
fi
nsx() {
	local argv
	nsx_argv argv "$@"
	"${argv[@]}"
}

# stats_parse ARRAY JSON: into the associative ARRAY, from the JSON of
# `cuckooctl stats -j`: [mode], [mem_limit], [active] (true or false),
# [ipvN.KEY] for every key of each family, and [json], the JSON itself.
# In this shell (no subshell).  Fails when the JSON lacks the mode or a
# family.
stats_parse() {
	local -n _st=$1
	local j=$2 fam blk
	_st=([json]="$j")
	[[ $j =~ \"mode\":\"([a-z]+)\" ]] && _st["mode"]=${BASH_REMATCH[1]}
	[[ $j =~ \"mem_limit\":([0-9]+) ]] && _st["mem_limit"]=${BASH_REMATCH[1]}
	[[ $j =~ \"active\":(true|false) ]] && _st["active"]=${BASH_REMATCH[1]}
	[[ $j =~ \"hooks\":\"([a-z]+)\" ]] && _st["hooks"]=${BASH_REMATCH[1]}
	for fam in ipv4 ipv6; do
		[[ $j =~ \"$fam\":\{([^}]*)\} ]] || return 1
		blk=${BASH_REMATCH[1]},
		while [[ $blk =~ ^\"([a-z_]+)\":([0-9.]+), ]]; do
			_st[$fam.${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
			blk=${blk#"${BASH_REMATCH[0]}"}
		done
	done
	[[ -n ${_st["mode"]:-} ]]
}

# mem_in_use CTL...: the bytes the namespace's memory limit counts now,
# its tables and what the kernel holds for it beside them (sets, state,
# per-CPU counters): the lowest limit `CTL... limit` takes.  The limit is
# left at that.
mem_in_use() {
	local lo=1 hi=$((1 << 40)) mid
	while ((lo < hi)); do
		mid=$(((lo + hi) / 2))
		if "$@" limit "$mid" >/dev/null 2>&1; then
			hi=$mid
		else
			lo=$((mid + 1))
		fi
	done
	"$@" limit "$lo" >/dev/null 2>&1
	echo "$lo"
}

# stats_read ARRAY FILE CTL...: `CTL... stats -j` (its output goes
# through FILE) parsed into ARRAY by stats_parse (empty when it fails).
stats_read() {
	local -n _sr=$1
	local file=$2 j=
	shift 2
	_sr=()
	"$@" stats -j >"$file" || return 1
	read -r j <"$file"
	stats_parse "${!_sr}" "$j"
}

# ns_stats ARRAY NS FILE: stats_read of cuckooctl in namespace NS.
ns_stats() { stats_read "$1" "$3" nsx "$2" cuckooctl; }

# ping_parse TX RX FILE: TX and RX, the packets transmitted and the
# replies received, from ping's output in FILE (0 and 0 when it has none).
ping_parse() {
	local -n _tx=$1 _rx=$2
	local l
	_tx=0 _rx=0
	while read -r l; do
		if [[ $l =~ ^([0-9]+)\ packets\ transmitted,\ ([0-9]+)\ received ]]; then
			_tx=${BASH_REMATCH[1]} _rx=${BASH_REMATCH[2]}
		fi
	done <"$3"
}

# nft_read ARRAY NS FILE [nft list arguments]: ARRAY[TABLE/NAME]=PACKETS
# for each named counter that `nft list ...` (default: ruleset) shows in
# namespace NS, by one nft (its output goes through FILE) and no other
# process.
nft_read() {
	local -n _ctr=$1
	local ns=$2 file=$3 w1 w2 w3 w4 table='' name=''
	shift 3
	(($#)) || set -- ruleset
	_ctr=()
	nsx "$ns" nft list "$@" >"$file" || return 1
	# Lines split into words by read: a regular expression is compiled at
	# each [[ =~ ]], which under TCG made this loop cost half as much as
	# the nft it reads.
	while read -r w1 w2 w3 w4; do
		case $w1 in
		table) [[ $w4 == "{" ]] && table=$w3 ;;
		counter) [[ $w3 == "{" && -z $w4 ]] && name=$w2 ;;
		packets)
			[[ -n $name ]] && _ctr["$table/$name"]=$w2
			name='' ;;
		esac
	done <"$file"
}

is_v6() { [[ $1 == *:* ]]; }

# ping_argv ARRAY NS SRC [PING ARG...]: ARRAY = the command line of a
# quiet, numeric ping from SRC in namespace NS to the caller's DST4 or
# DST6, whichever is SRC's family.  Run as `"${ARRAY[@]}" &`, its $! is
# ping's own pid (see nsx_argv).
ping_argv() {
	local out=$1 ns=$2 src=$3 fam=-4 dst=$DST4
	shift 3
	if is_v6 "$src"; then
		fam=-6
		dst=$DST6
	fi
	nsx_argv "$out" "$ns" ping $fam -q -n "$@" -I "$src" "$dst"
}

# wait_for SECONDS COMMAND...: COMMAND succeeds within SECONDS (polled
# every 0.2 s).
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}

# set_exists SET, set_has SET ADDR, set_lacks SET ADDR: through the
# caller's ctl (cuckooctl where the script's sets are).
set_exists() { [[ $(ctl -j sets) == *"\"name\":\"$1\""* ]]; }
set_has() { ctl -s "$1" test -q "$2" >/dev/null 2>&1; }
set_lacks() { ! set_has "$@"; }

# ---- the topology: a sender and a receiver namespace over veth ----

# netns_add NS...: new namespaces with lo up, deleted at exit.
netns_add() {
	local ns
	for ns; do
		ip netns add "$ns" || return 1
		defer ip netns del "$ns"
		ip -n "$ns" link set lo up || return 1
	done
}

# veth_pair N S R R4 R6 SRC...: link N (0 to 9), the veth pair sN (in
# namespace S, MAC 02:cf:00:00:0N:01) - rN (in namespace R,
# 02:cf:00:00:0N:02), made by one ip with those of S and R that do not
# exist yet (deleted at exit).  sN gets every SRC (/24 or /64), rN R4/24 and R6/64.
# Static neighbours both ways: no ARP or ND, whose packets from a listed
# source would be dropped and counted too.  Then one ip -batch per
# namespace.  Returns 2 when the namespaces or the pair cannot be made, 1
# when they cannot be set up.
veth_pair() {
	local n=$1 s=$2 r=$3 r4=$4 r6=$5 a
	local mac_s=02:cf:00:00:0$1:01 mac_r=02:cf:00:00:0$1:02
	shift 5
	{
		for a in "$s" "$r"; do
			[[ -e /run/netns/$a ]] && continue
			echo "netns add $a"
			defer ip netns del "$a"
		done
		echo "link add s$n netns $s address $mac_s type veth peer name r$n address $mac_r netns $r"
	} | ip -batch - || return 2
	{
		echo "link set lo up"
		for a in "$@"; do
			if is_v6 "$a"; then
				echo "addr add $a/64 dev s$n nodad"
			else
				echo "addr add $a/24 dev s$n"
			fi
		done
		echo "link set s$n up"
		echo "neigh replace $r4 lladdr $mac_r dev s$n nud permanent"
		echo "neigh replace $r6 lladdr $mac_r dev s$n nud permanent"
	} | ip -n "$s" -batch - || return 1
	{
		echo "link set lo up"
		echo "addr add $r4/24 dev r$n"
		echo "addr add $r6/64 dev r$n nodad"
		echo "link set r$n up"
		for a in "$@"; do
			echo "neigh replace $a lladdr $mac_s dev r$n nud permanent"
		done
	} | ip -n "$r" -batch - || return 1
}

# counter_tables NS TABLE:DIR:HOOK...: in namespace NS, by one nft, a
# table TABLE per argument with a named counter cI for every source of the
# caller's SRCS (I its index there: IDX[SRC]=I) and a chain c counting into
# them at HOOK: input, output or prerouting (table inet), or a device's
# name (table netdev, that device's ingress).  DIR "req" counts the echo
# requests from the source to the caller's DST4 or DST6, "reply" the echo
# replies from there to the source.
declare -gA IDX
counter_tables() {
	local ns=$1 spec table dir hook s i
	shift
	IDX=()
	for i in "${!SRCS[@]}"; do
		IDX[${SRCS[$i]}]=$i
	done
	for spec in "$@"; do
		table=${spec%%:*} dir=${spec#*:} hook=${spec##*:}
		dir=${dir%%:*}
		case $hook in
		input | output | prerouting)
			echo "table inet $table {"
			hook="type filter hook $hook priority 0; policy accept;" ;;
		*)
			echo "table netdev $table {"
			hook="type filter hook ingress device $hook priority 0; policy accept;" ;;
		esac
		for i in "${!SRCS[@]}"; do
			echo "counter c$i { }"
		done
		echo "chain c { $hook"
		for i in "${!SRCS[@]}"; do
			s=${SRCS[$i]}
			if [[ $dir == reply ]] && is_v6 "$s"; then
				echo "ip6 saddr $DST6 ip6 daddr $s icmpv6 type echo-reply counter name c$i"
			elif [[ $dir == reply ]]; then
				echo "ip saddr $DST4 ip daddr $s icmp type echo-reply counter name c$i"
			elif is_v6 "$s"; then
				echo "ip6 saddr $s ip6 daddr $DST6 icmpv6 type echo-request counter name c$i"
			else
				echo "ip saddr $s ip daddr $DST4 icmp type echo-request counter name c$i"
			fi
		done
		echo "}"
		echo "}"
	done | nsx "$ns" nft -f -
}

# ping_all NS COUNT INTERVAL DEADLINE SRC...: COUNT pings from each SRC
# in namespace NS (INTERVAL apart, -W DEADLINE), all at once; returns when
# every one is done.  Their output goes nowhere: counters decide, so
# DEADLINE need not wait for replies (every request is sent whatever it
# is, and a request still queued at the receiver is counted by
# settle_counters): 0.1 s costs a round of 20 sources 1.3 s, 1 s 2.3 s.
ping_all() {
	local ns=$1 count=$2 interval=$3 deadline=$4 s argv pids=()
	shift 4
	for s; do
		ping_argv argv "$ns" "$s" -c "$count" -i "$interval" -W "$deadline"
		"${argv[@]}" >/dev/null 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# flood PIDS NS SRC INTERVAL [CPU]: a ping from SRC in namespace NS every
# INTERVAL seconds, in the background until killed (pinned on CPU when
# given and taskset is there); ping's own pid (see nsx_argv) is added to
# the array PIDS.  Its output goes nowhere: counters decide.
flood() {
	local -n _pids=$1
	local pin=() argv
	[[ -n ${5:-} ]] && command -v taskset >/dev/null && pin=(taskset -c "$5")
	ping_argv argv "$2" "$3" -i "$4" -c 100000000
	"${pin[@]}" "${argv[@]}" >/dev/null 2>&1 &
	_pids+=($!)
}

# kill_all PIDS: kill (and continue, if stopped) every process of the
# array PIDS, reap them and empty it.  `defer kill_all PIDS` kills the
# ones it holds at exit.
kill_all() {
	local -n _pids=$1
	local p
	for p in "${_pids[@]}"; do
		kill "$p" 2>/dev/null
		kill -CONT "$p" 2>/dev/null
	done
	((${#_pids[@]} == 0)) || wait "${_pids[@]}" 2>/dev/null
	_pids=()
}

# settle_counters READER ARRAY...: once the senders are gone, packets
# still queued (a softirq left to ksoftirqd) get counted.  Calls READER,
# which fills the associative ARRAYs with counters, until two readings of
# all of them agree (5 s at most: a debug kernel drains queues slowly).
settle_counters() {
	local reader=$1 n cur prev=
	shift
	for ((n = 0; n <= 50; n++)); do
		((n == 0)) || sleep 0.1
		"$reader"
		counters_line cur "$@"
		[[ $cur == "$prev" ]] && return
		prev=$cur
	done
}

# counters_line VAR ARRAY...: VAR = every KEY=VALUE of the associative
# ARRAYs, in one string.
counters_line() {
	local -n _line=$1
	local name k
	shift
	_line=
	for name in "$@"; do
		local -n _arr=$name
		for k in "${!_arr[@]}"; do _line+=" $name/$k=${_arr[$k]}"; done
		unset -n _arr
	done
}
