# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers shared by the shell selftests (sourced, not run).
#
# Under TCG every process start counts: `ip netns exec` costs about 50 ms
# more than the command it runs (a mount namespace and a /sys remount), and
# jq takes 0.4 s to start.  Tests run such commands hundreds of times.
# Even a subshell counts: $(...) forks bash, about 15 ms; the helpers here
# return what they read in variables instead.

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

# Results, in the style of tools/testing/selftests/net: "PASS: ...",
# "FAIL: ..." (which sets the caller's ret to 1), "INFO: ..."; skip
# prints "SKIP: ..." and exits with kselftest's skip status.
KSFT_SKIP=4
log_pass() { echo "PASS: $*"; }
log_fail() { echo "FAIL: $*"; ret=1; }
log_info() { echo "INFO: $*"; }
skip() {
	echo "SKIP: $*"
	exit $KSFT_SKIP
}

# require_cmds CMD...: skip unless every CMD is there.
require_cmds() {
	local c
	for c; do
		command -v "$c" >/dev/null || skip "$c not found"
	done
}

# finish NAME: "PASS: NAME" or "FAIL: NAME" as the caller's ret says, and
# exit with it.
finish() {
	if ((ret == 0)); then
		log_pass "$1"
	else
		log_fail "$1"
	fi
	exit "$ret"
}

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
# nsx_argv NS COMMAND... sets the array NSX to the command line that nsx
# runs: `"${NSX[@]}" &` is a job whose pid is the command's own.
# busybox's nsenter (static) starts in a third of the time of util-linux's
# (~30 ms against ~85 ms in the VM), but busybox runs its own applet for a
# command of that name (ping, ip, sysctl, awk...): COMMAND goes to it by
# its path, resolved by bash's command hash (no subshell).
if [[ $'\n'$(busybox --list 2>/dev/null)$'\n' == *$'\n'nsenter$'\n'* ]]; then
	nsx_argv() {
		local ns=$1 cmd=$2
		shift 2
		[[ $ns == /* ]] || ns=/run/netns/$ns
		if [[ $cmd != */* ]] && hash "$cmd" 2>/dev/null; then
			cmd=${BASH_CMDS[$cmd]}
		fi
		NSX=(busybox nsenter --net="$ns" -- "$cmd" "$@")
	}
elif command -v nsenter >/dev/null; then
	nsx_argv() {
		local ns=$1
		shift
		[[ $ns == /* ]] || ns=/run/netns/$ns
		NSX=(nsenter --net="$ns" -- "$@")
	}
else
	nsx_argv() { NSX=(ip netns exec "$@"); }
fi
nsx() {
	nsx_argv "$@"
	"${NSX[@]}"
}

# stats_parse JSON: STAT[mode], STAT[mem_limit], STAT[active] (true or
# false) and STAT[ipvN.KEY] for
# every key of the JSON of `cuckooctl stats -j`, in this shell (no
# subshell).  Fails when the JSON lacks the mode or a family.
declare -gA STAT
stats_parse() {
	local j=$1 fam blk
	STAT=()
	[[ $j =~ \"mode\":\"([a-z]+)\" ]] && STAT[mode]=${BASH_REMATCH[1]}
	[[ $j =~ \"mem_limit\":([0-9]+) ]] && STAT[mem_limit]=${BASH_REMATCH[1]}
	[[ $j =~ \"active\":(true|false) ]] && STAT[active]=${BASH_REMATCH[1]}
	for fam in ipv4 ipv6; do
		[[ $j =~ \"$fam\":\{([^}]*)\} ]] || return 1
		blk=${BASH_REMATCH[1]},
		while [[ $blk =~ ^\"([a-z_]+)\":([0-9.]+), ]]; do
			STAT[$fam.${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
			blk=${blk#"${BASH_REMATCH[0]}"}
		done
	done
	[[ -n ${STAT[mode]:-} ]]
}

# stats_read FILE CTL...: `CTL... stats -j` (its output goes through
# FILE), kept in STATS_JSON and parsed into STAT (both empty when it
# fails).
STATS_JSON=
stats_read() {
	local file=$1
	shift
	STATS_JSON=
	STAT=()
	"$@" stats -j >"$file" || return 1
	read -r STATS_JSON <"$file"
	stats_parse "$STATS_JSON"
}

# ns_stats NS FILE: stats_read of cuckooctl in namespace NS.
ns_stats() { stats_read "$2" nsx "$1" cuckooctl; }

# ping_parse FILE: PING_TX and PING_RX, the packets transmitted and the
# replies received, from ping's output in FILE (0 and 0 when it has none).
ping_parse() {
	local line
	PING_TX=0 PING_RX=0
	while read -r line; do
		if [[ $line =~ ^([0-9]+)\ packets\ transmitted,\ ([0-9]+)\ received ]]; then
			PING_TX=${BASH_REMATCH[1]} PING_RX=${BASH_REMATCH[2]}
		fi
	done <"$1"
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

# ping_argv NS SRC [PING ARG...]: NSX = the command line of a quiet,
# numeric ping from SRC in namespace NS to the caller's DST4 or DST6,
# whichever is SRC's family.  Run as `"${NSX[@]}" &`, its $! is ping's
# own pid (see nsx_argv).
ping_argv() {
	local ns=$1 src=$2 fam=-4 dst=$DST4
	shift 2
	if is_v6 "$src"; then
		fam=-6
		dst=$DST6
	fi
	nsx_argv "$ns" ping $fam -q -n "$@" -I "$src" "$dst"
}

# veth_pair N S R R4 R6 SRC...: link N (0 to 9), the veth pair sN (in
# namespace S, MAC 02:cf:00:00:0N:01) - rN (in namespace R,
# 02:cf:00:00:0N:02), made by one ip with those of S and R that do not
# exist yet.  sN gets every SRC (/24 or /64), rN R4/24 and R6/64.
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
			[[ -e /run/netns/$a ]] || echo "netns add $a"
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
# every one is done.  Their output goes nowhere: counters decide.
ping_all() {
	local ns=$1 count=$2 interval=$3 deadline=$4 s pids=()
	shift 4
	for s; do
		ping_argv "$ns" "$s" -c "$count" -i "$interval" -W "$deadline"
		"${NSX[@]}" >/dev/null 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# flood NS SRC INTERVAL [CPU]: a ping from SRC in namespace NS every
# INTERVAL seconds, in the background until killed (pinned on CPU when
# given and taskset is there); FLOOD_PID is ping's own pid (see nsx_argv).
# Its output goes nowhere: counters decide.
flood() {
	local pin=()
	[[ -n ${4:-} ]] && command -v taskset >/dev/null && pin=(taskset -c "$4")
	ping_argv "$1" "$2" -i "$3" -c 100000000
	"${pin[@]}" "${NSX[@]}" >/dev/null 2>&1 &
	FLOOD_PID=$!
}

# settle_counters READER ARRAY...: once the senders are gone, packets
# still queued (a softirq left to ksoftirqd) get counted.  Calls READER,
# which fills the associative ARRAYs with counters, until two readings of
# all of them agree (5 s at most: a debug kernel drains queues slowly).
settle_counters() {
	local reader=$1 n line prev=
	shift
	for ((n = 0; n <= 50; n++)); do
		((n == 0)) || sleep 0.1
		"$reader"
		counters_line "$@"
		[[ $line == "$prev" ]] && return
		prev=$line
	done
}

# counters_line ARRAY...: the caller's variable line = every KEY=VALUE of
# the associative ARRAYs, in one string.
counters_line() {
	local name k
	line=
	for name in "$@"; do
		local -n _arr=$name
		for k in "${!_arr[@]}"; do line+=" $name/$k=${_arr[$k]}"; done
		unset -n _arr
	done
}
