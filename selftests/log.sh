#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The drop log and the tracepoints: a logging set's drops in the kernel
# log and in an NFLOG group, bounded by the namespace's rate limit, and
# cuckoo_nf:drop and cuckoo_nf:pass_allowed in tracefs.
#
#   sender ns S: 10.0.6.10, fd06::10 (in the logging set)      receiver ns R
#                10.0.6.20 (in a set that does not log)
#                10.0.6.30 (blocked, but in an allow set)
#      s1 ------------------------------------------------- r1  10.0.6.2, fd06::2
#
# test_syslog      `create NAME block log`: each drop a line with the set's
#                  prefix in the kernel log, counted in stats; no line for
#                  the set that does not log; `sets` and save show it, and
#                  restore brings it back; the byte counters, the hooks'
#                  and the set's, equal the bytes sent
# test_syslog_scoped  the same drops with hooks on --iif r1, judged at r1's
#                  ingress: the same lines, counts and bytes
# test_nflog       `set NAME log nflog 5`: each drop to the NFLOG group,
#                  read by a listener, and no more to the kernel log
# test_flood       pktgen's 10,000 packets a second from the logged source:
#                  no more lines than the limit lets through in the time
#                  it took, each drop logged or counted as suppressed
# test_tracepoint  cuckoo_nf:drop for each drop of the hooks, with the
#                  namespace's cookie, the path, the source and the set;
#                  cuckoo_nf:pass_allowed for each the allow set saved
set -uo pipefail
export LC_ALL=C

ALL_TESTS="test_syslog test_syslog_scoped test_nflog test_flood test_tracepoint"
N=3
S=cnf-log-s-$$
R=cnf-log-r-$$
# Read by lib.sh's ping_argv.
# shellcheck disable=SC2034
DST4=10.0.6.2 DST6=fd06::2
LOGGED4=10.0.6.10 LOGGED6=fd06::10 QUIET4=10.0.6.20 ALLOWED4=10.0.6.30
# The sets: their names carry the pid, so that the kernel log's lines of
# this run are told from any other's.
SET=lg$$
QUIET=qt$$
ALLOW=ok$$
GROUP=5
# The receiver's MAC (lib.sh's veth_pair), for pktgen's frames.
R_MAC=02:cf:00:00:01:02
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=lib.sh
source "$HERE/lib.sh"

ctl() { nsx "$R" cuckooctl "$@"; }

setup() {
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "$LOGGED4" "$QUIET4" \
		"$ALLOWED4" "$LOGGED6" &&
		ctl create "$SET" block log on >/dev/null &&
		ctl create "$QUIET" block >/dev/null &&
		ctl create "$ALLOW" allow >/dev/null &&
		ctl add -s "$SET" "$LOGGED4" "$LOGGED6" "$ALLOWED4" >/dev/null &&
		ctl add -s "$QUIET" "$QUIET4" >/dev/null &&
		ctl add -s "$ALLOW" "$ALLOWED4" >/dev/null
}

# pings SRC...: N pings from each, a second at most for their replies:
# the counters decide.
pings() {
	local s fam
	for s; do
		fam=-4
		is_v6 "$s" && fam=-6
		nsx "$S" ping "$fam" -q -n -c "$N" -i 0.1 -W 1 -I "$s" \
			"$(if is_v6 "$s"; then echo "$DST6"; else echo "$DST4"; fi)" \
			>/dev/null 2>&1
	done
}

# log_counts LINES SUPPRESSED DROPPED: the drop log's figures and the
# hooks' IPv4 drops, from `stats -j`.
log_counts() {
	local -n _l=$1 _s=$2 _d=$3
	local -A st
	_l=x _s=x _d=x
	ns_stats st "$R" "$TMP/stats" || return 1
	_d=${st[ipv4.dropped]}
	[[ ${st[json]} =~ \"log\":\{\"lines\":([0-9]+),\"suppressed\":([0-9]+) ]] || return 1
	_l=${BASH_REMATCH[1]} _s=${BASH_REMATCH[2]}
}

# klog_count VAR PATTERN: the kernel log's lines matching PATTERN.
klog_count() {
	local -n _n=$1
	_n=$(dmesg | grep -c -- "$2")
}

# set_bytes VAR NAME: set NAME's matched_bytes, from `sets -j`.
set_bytes() {
	local -n _b=$1
	_b=x
	[[ $(ctl -j sets) =~ \"name\":\"$2\"[^}]*\"matched_bytes\":([0-9]+) ]] &&
		_b=${BASH_REMATCH[1]}
}

test_syslog() {
	local l0 s0 d0 l1 s1 d1 n4 n6 nq saved b0 b1 want4 want6 got4 got6
	local -A st0 st1
	log_counts l0 s0 d0
	verdict $? "stats reports the drop log: $l0 lines, $s0 suppressed"
	ns_stats st0 "$R" "$TMP/stats"
	set_bytes b0 "$SET"
	pings "$LOGGED4" "$LOGGED6" "$QUIET4"
	ns_stats st1 "$R" "$TMP/stats"
	set_bytes b1 "$SET"
	# ping's 56 bytes, its ICMP header and the IP header the hooks see.
	want4=$((2 * N * (56 + 8 + 20))) want6=$((N * (56 + 8 + 40)))
	got4=$((${st1[ipv4.dropped_bytes]:-0} - ${st0[ipv4.dropped_bytes]:-0}))
	got6=$((${st1[ipv6.dropped_bytes]:-0} - ${st0[ipv6.dropped_bytes]:-0}))
	((got4 == want4 && got6 == want6))
	verdict $? "the hooks' dropped bytes: IPv4 $got4 (want $want4), IPv6 $got6 (want $want6)"
	got4=$((${st1[ipv4.checked_bytes]:-0} - ${st0[ipv4.checked_bytes]:-0}))
	got6=$((${st1[ipv4.matched_bytes]:-0} - ${st0[ipv4.matched_bytes]:-0}))
	((got4 == want4 && got6 == want4))
	verdict $? "and checked and matched: $got4 and $got6 (want $want4)"
	((b1 - b0 == want4 / 2 + want6))
	verdict $? "set $SET's matched bytes: $((b1 - b0)), want $((want4 / 2 + want6))"
	log_counts l1 s1 d1
	klog_count n4 "cuckoo_nf $SET: IN=r1 .*SRC=$LOGGED4 DST=$DST4"
	klog_count n6 "cuckoo_nf $SET: IN=r1 .*SRC=fd06:0000:0000:0000:0000:0000:0000:0010 "
	klog_count nq "cuckoo_nf $QUIET: "
	((n4 == N && n6 == N))
	verdict $? "the kernel log has each drop of set $SET with its prefix: IPv4 $n4, IPv6 $n6, want $N each"
	((nq == 0))
	verdict $? "and none for set $QUIET, which does not log ($nq)"
	((l1 - l0 == 2 * N && s1 == s0))
	verdict $? "stats counts $((l1 - l0)) lines, want $((2 * N)); suppressed $((s1 - s0))"
	[[ $(ctl -j sets) == *"\"name\":\"$SET\""*"\"log\":\"on\""*"\"name\":\"$QUIET\""*"\"log\":\"off\""* ]]
	verdict $? "sets -j says which set logs"
	saved=$(ctl save --all)
	[[ $saved == *"# cuckoo_nf set $SET block log on"* ]]
	verdict $? "save writes the set's logging on its set line"
	ctl set "$SET" log nflog 9 >/dev/null &&
		ctl restore - <<<"$saved" >/dev/null
	verdict $? "restore of the save, the logging changed meanwhile"
	[[ $(ctl -j sets) == *"\"name\":\"$SET\""*"\"log\":\"on\",\"log_group\":0"* ]]
	verdict $? "restore put the set's logging back as saved"
	! ctl set "$ALLOW" log on 2>"$TMP/err" &&
		grep -q "an allow set drops nothing" "$TMP/err"
	verdict $? "an allow set refuses to log: $(<"$TMP/err")"
}

# At r1's ingress: the lines name r1 and the sources as at PRE_ROUTING,
# the bytes are the IP datagrams' (the frames' padding not counted).
test_syslog_scoped() {
	local l0 s0 d0 l1 s1 d1 a4 a6 b4 b6 want4 want6 got4 got6
	local -A st0 st1
	ctl hooks on --iif r1 || { fail "hooks on --iif r1"; return; }
	log_counts l0 s0 d0
	ns_stats st0 "$R" "$TMP/stats"
	klog_count a4 "cuckoo_nf $SET: IN=r1 .*SRC=$LOGGED4 DST=$DST4"
	klog_count a6 "cuckoo_nf $SET: IN=r1 .*SRC=fd06:0000:0000:0000:0000:0000:0000:0010 "
	pings "$LOGGED4" "$LOGGED6" "$QUIET4"
	ns_stats st1 "$R" "$TMP/stats"
	log_counts l1 s1 d1
	klog_count b4 "cuckoo_nf $SET: IN=r1 .*SRC=$LOGGED4 DST=$DST4"
	klog_count b6 "cuckoo_nf $SET: IN=r1 .*SRC=fd06:0000:0000:0000:0000:0000:0000:0010 "
	ctl hooks on || fail "hooks on"
	want4=$((2 * N * (56 + 8 + 20))) want6=$((N * (56 + 8 + 40)))
	got4=$((${st1[ipv4.dropped_bytes]:-0} - ${st0[ipv4.dropped_bytes]:-0}))
	got6=$((${st1[ipv6.dropped_bytes]:-0} - ${st0[ipv6.dropped_bytes]:-0}))
	((got4 == want4 && got6 == want6))
	verdict $? "scoped: dropped bytes: IPv4 $got4 (want $want4), IPv6 $got6 (want $want6)"
	((b4 - a4 == N && b6 - a6 == N))
	verdict $? "scoped: the kernel log has each drop of set $SET: IPv4 $((b4 - a4)), IPv6 $((b6 - a6)), want $N each"
	((l1 - l0 == 2 * N && s1 == s0 && d1 - d0 == 2 * N))
	verdict $? "scoped: stats counts $((l1 - l0)) lines and $((d1 - d0)) IPv4 drops, want $((2 * N)) each; suppressed $((s1 - s0))"
}

test_nflog() {
	local argv n0 n1 out want
	ctl set "$SET" log nflog "$GROUP" >/dev/null
	verdict $? "set $SET log nflog $GROUP"
	klog_count n0 "cuckoo_nf $SET: "
	nsx_argv argv "$R" "$HERE/nflog_listen" "$GROUP" $((2 * N)) 30
	"${argv[@]}" >"$TMP/nflog" 2>"$TMP/nflog.err" &
	wait_for 10 grep -q bound "$TMP/nflog.err"
	verdict $? "a listener bound NFLOG group $GROUP"
	pings "$LOGGED4" "$LOGGED6" "$QUIET4"
	wait
	out=$(sort "$TMP/nflog" | uniq -c | tr -s ' ')
	want=" $N cuckoo_nf $SET: |$LOGGED4
 $N cuckoo_nf $SET: |$LOGGED6"
	[[ $out == "$want" ]]
	verdict $? "the listener read each drop of set $SET with its prefix: $out"
	klog_count n1 "cuckoo_nf $SET: "
	((n1 == n0))
	verdict $? "and the kernel log no more ($((n1 - n0)) new lines)"
	ctl set "$SET" log on >/dev/null
}

# pktgen_flood COUNT DELAY: COUNT UDP packets from the logged source to
# the receiver, one every DELAY ns, from S's pktgen; returns when sent.
pktgen_flood() {
	local pg=/proc/net/pktgen
	# shellcheck disable=SC2016 # expanded by the namespace's bash
	nsx "$S" bash -c '
		pg=$1 count=$2 delay=$3 src=$4 dst=$5 mac=$6
		echo rem_device_all >"$pg/kpktgend_0" &&
			echo "add_device s1" >"$pg/kpktgend_0" || exit 1
		for c in "count $count" "delay $delay" "pkt_size 60" \
			"dst $dst" "src_min $src" "src_max $src" \
			"dst_mac $mac"; do
			echo "$c" >"$pg/s1" || exit 1
		done
		echo start >"$pg/pgctrl"' _ "$pg" "$1" "$2" "$LOGGED4" "$DST4" "$R_MAC"
}

test_flood() {
	local l0 s0 d0 l1 s1 d1 k0 k1 t0 t1 ns lines drops rate=10 burst=20
	modprobe pktgen 2>/dev/null
	[[ -e /proc/net/pktgen/pgctrl ]] || { skip_test "no pktgen"; return; }
	ctl log-limit "$rate" "$burst" >/dev/null &&
		[[ $(ctl log-limit) == "$rate $burst" ]]
	verdict $? "log-limit $rate $burst, read back"
	# A quiet spell: the bucket full again, whatever the other tests took.
	sleep $(((burst + rate - 1) / rate))
	log_counts l0 s0 d0
	klog_count k0 "cuckoo_nf $SET: "
	t0=$(date +%s%N)
	pktgen_flood 10000 100000
	verdict $? "pktgen sent 10000 packets from $LOGGED4 at 10,000 a second"
	t1=$(date +%s%N)
	settle_counters read_flood FLOOD
	log_counts l1 s1 d1
	klog_count k1 "cuckoo_nf $SET: "
	ns=$((t1 - t0)) lines=$((l1 - l0)) drops=$((d1 - d0))
	note "flood: $drops drops in $((ns / 1000000)) ms, $lines logged, $((s1 - s0)) suppressed"
	((drops > 0 && lines + s1 - s0 == drops))
	verdict $? "every drop logged or suppressed: $lines + $((s1 - s0)) = $drops"
	# The bucket held a burst, and fills at the rate while the flood lasts.
	((lines * 1000000000 <= burst * 1000000000 + rate * ns))
	verdict $? "at most $burst + $rate/s x $((ns / 1000000)) ms lines: $lines"
	((lines >= burst && s1 > s0))
	verdict $? "the burst went through, the rest was suppressed"
	((k1 - k0 == lines))
	verdict $? "the kernel log has exactly the $lines lines counted ($((k1 - k0)))"
}

# settle_counters' reader: FLOOD, the drop log's figures.
declare -A FLOOD
read_flood() {
	local l s d
	log_counts l s d
	# shellcheck disable=SC2034 # read through settle_counters' nameref
	FLOOD=([l]=$l [s]=$s [d]=$d)
}

# trace_events ON: cuckoo_nf's events on (the buffer emptied first) or off.
trace_events() {
	local e
	(($1)) && : >"$TRACING/trace"
	for e in drop pass_allowed; do
		echo "$1" >"$TRACING/events/cuckoo_nf/$e/enable" || return 1
	done
}

test_tracepoint() {
	local d a c
	TRACING=/sys/kernel/tracing
	[[ -d $TRACING/events ]] || mount -t tracefs nodev "$TRACING" 2>/dev/null
	[[ -d $TRACING/events/cuckoo_nf/drop ]] || { skip_test "no tracefs or no cuckoo_nf events"; return; }
	defer trace_events 0
	trace_events 1
	verdict $? "cuckoo_nf:drop and cuckoo_nf:pass_allowed enabled"
	pings "$LOGGED4" "$LOGGED6" "$ALLOWED4"
	trace_events 0
	cat "$TRACING/trace" >"$TMP/trace"
	d=$(grep -c "drop: netns=[1-9][0-9]* path=hook family=ipv4 saddr=::ffff:$LOGGED4 set=$SET\$" "$TMP/trace")
	((d == N))
	verdict $? "cuckoo_nf:drop for each IPv4 drop of the hooks: $d, want $N"
	d=$(grep -c "drop: netns=[1-9][0-9]* path=hook family=ipv6 saddr=$LOGGED6 set=$SET\$" "$TMP/trace")
	((d == N))
	verdict $? "and each IPv6 one: $d, want $N"
	a=$(grep -c "pass_allowed: netns=[1-9][0-9]* path=hook family=ipv4 saddr=::ffff:$ALLOWED4 set=$ALLOW\$" "$TMP/trace")
	((a == N))
	verdict $? "cuckoo_nf:pass_allowed for each packet set $ALLOW saved: $a, want $N"
	c=$(grep -o "netns=[0-9]*" "$TMP/trace" | sort -u | wc -l)
	((c == 1))
	verdict $? "one namespace cookie in all of them ($c)"
	((RET == 0)) || sed 's/^/# trace: /' "$TMP/trace" | head -20
}

require_module
require_root
require_cmds ping dmesg sysctl modprobe
require_file "$HERE/nflog_listen" "nflog_listen (built with the selftests)"
tmpdir TMP || ktap_bail "tmpdir"
# The kernel log's lines of a namespace but the first need the sysctl.
OLD_ALL_NETNS=$(sysctl -n net.netfilter.nf_log_all_netns 2>/dev/null) ||
	ktap_skip_all "no net.netfilter.nf_log_all_netns"
defer sysctl -qw net.netfilter.nf_log_all_netns="$OLD_ALL_NETNS"
sysctl -qw net.netfilter.nf_log_all_netns=1
setup || ktap_bail "setup: namespaces, veth pair, the sets"
run_tests
