#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Allocation failures: failslab and fail_page_alloc aimed at cuckooctl's
# calls into the module (task-filter + /proc/self/make-it-fail, set only
# inside ioctl() and the device's open() by the failioctl.so shim),
# while it adds single addresses and prefixes, batch-loads files of both
# that force the tables to grow, and flushes.  After every operation, checked against a model
# with an unfaulted `cuckooctl list`:
#   - success: the set is exactly what the operation makes of it;
#   - failure: a clean error (out of memory / memory limit reached), and
#     the set is unchanged -- for a batch load, exactly the entries before
#     the one that failed were added, as cuckooctl reports ("K added");
#   - `cuckooctl stats` counts what the dump lists.
# Every few rounds, and at the end, a sample of stored addresses sends
# packets over veth: the module's dropped counters go up by exactly the
# packets sent (stored entries still drop traffic), an unlisted source
# still gets replies.
# Needs a kernel with CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
# CONFIG_FAULT_INJECTION_DEBUG_FS (make check-debug); skips otherwise.
#
# CNF_TEST_FAULT_ROUNDS (default 30), CNF_TEST_FAULT_LOAD (addresses per
# load, default 1500).  It prints the "# reliability: faults_injected=..."
# line of the reliability table (docs/benchmarks.md).
set -uo pipefail
export LC_ALL=C
ALL_TESTS="test_faults"
FS=/sys/kernel/debug/failslab
FP=/sys/kernel/debug/fail_page_alloc
ROUNDS=${CNF_TEST_FAULT_ROUNDS:-30}
LOAD=${CNF_TEST_FAULT_LOAD:-1500}
NS=cnf-faults-$$
VA=cnf-fa$$
VB=cnf-fb$$
TMP=

# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

faults_off() {
	local d
	for d in $FS $FP; do
		echo 0 >"$d"/probability
	done
}

# Injected faults are counted down in `times`: start high, read back.
TIMES0=100000000
setup_faults() {
	local d
	for d in $FS $FP; do
		echo 0 >"$d"/probability
		echo 1 >"$d"/interval
		echo "$TIMES0" >"$d"/times
		echo 0 >"$d"/space
		echo 0 >"$d"/verbose
		echo Y >"$d"/task-filter
		echo N >"$d"/ignore-gfp-wait
	done
	echo N >"$FP"/ignore-gfp-highmem
	echo 0 >"$FP"/min-order
	echo N >"$FS"/cache-filter 2>/dev/null
}

# set_probability SLAB PAGE: percentages for failslab and fail_page_alloc.
set_probability() {
	echo "$1" >"$FS"/probability
	echo "$2" >"$FP"/probability
}

# injected VAR: VAR = the faults injected so far.
injected() {
	local -n _inj=$1
	local fs fp
	read -r fs <"$FS"/times
	read -r fp <"$FP"/times
	_inj=$(((TIMES0 - fs) + (TIMES0 - fp)))
}

# Run cuckooctl with faults injected into the kernel allocations of its
# calls into the module: failioctl.so marks the task (make-it-fail) only
# inside ioctl() and the device's open(), not in execve() or page faults.
SHIM=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/failioctl.so
faulty() {
	LD_PRELOAD=$SHIM cuckooctl "$@"
}

dump() {
	cuckooctl list | sort
}

# entries VAR: VAR = the set's size by cuckooctl stats (-1 when
# unreadable).
entries() {
	local -n _n=$1
	local -A st
	_n=-1
	stats_read st "$TMP/stats" cuckooctl && _n=$((${st[ipv4.entries]} + ${st[ipv6.entries]}))
}

# Unique entries: v4 addresses in 10.64.0.0/10, v6 in 2001:db8:f::/48,
# and among them v4 prefixes, each once while SEQ stays below 2^16: a /12
# (in the /16 map) every 256, in 32.0.0.0/3, and a /22 (4 keys of the /24
# tier) every 16, in 100.64.0.0/10.
SEQ=0
new_addrs() {
	local n=$1 i k
	for ((i = 0; i < n; i++)); do
		SEQ=$((SEQ + 1))
		if ((SEQ % 256 == 1)); then
			k=$((SEQ >> 8))
			echo "$((32 + (k >> 4) % 32)).$(((k & 15) << 4)).0.0/12"
		elif ((SEQ % 16 == 1)); then
			k=$((SEQ >> 4))
			echo "100.$((64 + (k >> 6) % 64)).$(((k & 63) << 2)).0/22"
		elif ((SEQ % 3)); then
			echo "10.$((64 + (SEQ >> 16) % 64)).$(((SEQ >> 8) & 255)).$((SEQ & 255))"
		else
			# as cuckooctl list prints it (never a 0 group before the last)
			printf '2001:db8:f::%x:%x\n' $(((SEQ >> 16) + 1)) $((SEQ & 0xffff))
		fi
	done
}

# Lines of file A not in file B.
minus() {
	awk 'NR == FNR { b[$0]; next } !($0 in b)' "$2" "$1"
}

clean_error() {
	grep -qE 'out of memory|memory limit reached|Cannot allocate memory' "$1"
}

# ---- traffic: sampled stored sources still dropped ----

setup_net() {
	ip netns add "$NS" || return 1
	defer ip netns del "$NS"
	ip link add "$VA" type veth peer name "$VB" || return 1
	defer ip link del "$VA"
	ip link set "$VB" netns "$NS"
	ip addr add 192.168.77.1/24 dev "$VA"
	ip addr add fd77::1/64 dev "$VA" nodad
	ip link set "$VA" up
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add 192.168.77.2/24 dev "$VB"
	ip -n "$NS" addr add fd77::2/64 dev "$VB" nodad
	ip -n "$NS" link set "$VB" up
	# Resolved once: a blocked source must not need neighbour discovery.
	local mac
	mac=$(cat /sys/class/net/"$VA"/address)
	ip -n "$NS" neigh replace 192.168.77.1 lladdr "$mac" dev "$VB" nud permanent
	ip -n "$NS" -6 neigh replace fd77::1 lladdr "$mac" dev "$VB" nud permanent
	ip netns exec "$NS" ping -c1 -W5 192.168.77.1 >/dev/null
}

# dropped V4 V6: V4 and V6 = the dropped counters (-1 when unreadable).
dropped() {
	local -n _d4=$1 _d6=$2
	local -A st
	_d4=-1 _d6=-1
	stats_read st "$TMP/stats" cuckooctl && _d4=${st[ipv4.dropped]} _d6=${st[ipv6.dropped]}
}

# Send one packet from each of up to 8+8 stored addresses; all dropped.
check_traffic() {
	local set=$1 what=$2 a n4 n6 d4 d6 e4 e6 pids=()
	local -a s4 s6
	# (No process substitution: the VM has no /dev/fd.)
	mapfile -t s4 < <(grep -v -e : -e / "$set" | shuf -n 8)
	mapfile -t s6 < <(grep : "$set" | grep -v / | shuf -n 8)
	for a in "${s4[@]}"; do ip -n "$NS" addr add "$a/32" dev "$VB"; done
	for a in "${s6[@]}"; do ip -n "$NS" addr add "$a/128" dev "$VB" nodad; done
	dropped d4 d6
	for a in "${s4[@]}"; do
		ip netns exec "$NS" ping -q -c1 -W1 -I "$a" 192.168.77.1 >/dev/null 2>&1 &
		pids+=($!)
	done
	for a in "${s6[@]}"; do
		ip netns exec "$NS" ping -6 -q -c1 -W1 -I "$a" fd77::1 >/dev/null 2>&1 &
		pids+=($!)
	done
	for a in "${pids[@]}"; do
		wait "$a" && fail "$what: a blocked source got a reply"
	done
	dropped e4 e6
	n4=${#s4[@]} n6=${#s6[@]}
	if ((e4 - d4 != n4 || e6 - d6 != n6)); then
		fail "$what: sent from $n4+$n6 stored sources, dropped $((e4 - d4))+$((e6 - d6))"
	fi
	TRAFFIC_SENT=$((TRAFFIC_SENT + n4 + n6))
	for a in "${s4[@]}"; do ip -n "$NS" addr del "$a/32" dev "$VB"; done
	for a in "${s6[@]}"; do ip -n "$NS" addr del "$a/128" dev "$VB"; done
	ip netns exec "$NS" ping -q -c1 -W5 192.168.77.1 >/dev/null ||
		fail "$what: an unlisted source lost its reply"
	ip netns exec "$NS" ping -6 -q -c1 -W5 fd77::1 >/dev/null ||
		fail "$what: an unlisted IPv6 source lost its reply"
}

# ---- one operation under faults, checked ----

# check_result NAME RC ERRFILE BEFORE AFTER WANT: WANT is the set the
# operation makes when it succeeds.
OPS=0 FAILED_OPS=0 NOT_REACHED=0 LOST=0
check_result() {
	local name=$1 rc=$2 err=$3 before=$4 after=$5 want=$6 n k e
	OPS=$((OPS + 1))
	if [[ $name == load* ]]; then
		# A batch goes in order and stops at its first failure: whatever
		# happened, the set is before + the first n lines of the file.
		minus "$before" "$after" >"$TMP/lost"
		if [[ -s $TMP/lost ]]; then
			LOST=$((LOST + $(wc -l <"$TMP/lost")))
			fail "$name lost entries that were stored: $(head -n3 "$TMP/lost" | tr '\n' ' ')"
		fi
		minus "$after" "$before" >"$TMP/added"
		n=$(wc -l <"$TMP/added")
		head -n "$n" "$TMP/file" | sort | cmp -s - "$TMP/added" ||
			fail "$name: what was added is not the first $n lines of the file"
	fi
	if ((rc == 0)); then
		cmp -s "$want" "$after" || fail "$name succeeded but the set is not what it should be"
	elif ((rc == 1)); then
		FAILED_OPS=$((FAILED_OPS + 1))
		clean_error "$err" || fail "$name failed without a clean ENOMEM/ENOSPC: $(head -c 300 "$err")"
		if [[ $name == load* ]]; then
			k=$(sed -nE 's/.*; ([0-9]+) added.*/\1/p' "$err" | tail -n1)
			[[ -z $k || $k == "$n" ]] ||
				fail "$name: cuckooctl says $k added, the set has $n more"
		else
			cmp -s "$before" "$after" || fail "$name failed but changed the set"
		fi
	else
		# Did not get to the module or did not report (exec failed,
		# killed): for add/flush, before or after, nothing in between.
		NOT_REACHED=$((NOT_REACHED + 1))
		[[ $name == load* ]] || cmp -s "$before" "$after" || cmp -s "$want" "$after" ||
			fail "$name (exit $rc) left a set that is neither before nor after"
	fi
	entries e
	((e == $(wc -l <"$after"))) || fail "$name: stats say $e entries, the dump lists $(wc -l <"$after")"
}

test_faults() {
	local r op rc p a slab page inj fs fp
	setup_faults
	defer faults_off
	cuckooctl flush >/dev/null || { fail "flush"; return; }
	defer cuckooctl flush
	cuckooctl mode drop >/dev/null
	setup_net || { fail "network setup"; return; }
	TRAFFIC_SENT=0
	new_addrs 300 >"$TMP/base"
	cuckooctl load "$TMP/base" >/dev/null || { fail "base load"; return; }
	dump >"$TMP/before"
	check_traffic "$TMP/before" "base set"

	for ((r = 1; r <= ROUNDS; r++)); do
		# Low rates get past the first allocation into growth and its
		# fallbacks; high ones fail early.
		P=(2 5 1 10 3 20 2 40 5 80)
		p=${P[r % ${#P[@]}]}
		# Every other round fails page allocations only: kvzalloc
		# tries the slab first, so with both on, a table bigger than
		# kmalloc's largest cache (a grown one) rarely reaches
		# alloc_pages or vmalloc's pages.
		if ((r % 2)); then
			slab=0 page=$((p * 3 > 90 ? 90 : p * 3))
		else
			slab=$p page=$p
		fi
		case $((r % 7)) in
		0) op=flush ;;
		1 | 3 | 5) op=add ;;
		*) op=load ;;
		esac
		dump >"$TMP/before"
		case $op in
		add)
			new_addrs 1 >"$TMP/one"	# not in a subshell: SEQ moves on
			a=$(<"$TMP/one")
			{ cat "$TMP/before"; echo "$a"; } | sort >"$TMP/want"
			set_probability "$slab" "$page"
			faulty add "$a" >/dev/null 2>"$TMP/err"
			rc=$?
			;;
		load)
			new_addrs "$LOAD" >"$TMP/file"
			sort -u "$TMP/file" "$TMP/before" >"$TMP/want"
			set_probability "$slab" "$page"
			faulty load "$TMP/file" >/dev/null 2>"$TMP/err"
			rc=$?
			;;
		flush)
			: >"$TMP/want"
			set_probability "$slab" "$page"
			faulty flush >/dev/null 2>"$TMP/err"
			rc=$?
			;;
		esac
		set_probability 0 0
		dump >"$TMP/after"
		check_result "$op (round $r, slab ${slab}%, page ${page}%)" "$rc" "$TMP/err" "$TMP/before" "$TMP/after" "$TMP/want"
		injected inj
		note "round $r: $op at slab ${slab}%, page ${page}%: exit $rc, $(wc -l <"$TMP/after") entries, $inj faults injected so far${rc:+ $(tr '\n' ' ' <"$TMP/err" | cut -c1-100)}"
		# After a flush, a base set again (no faults), so loads keep growing it.
		if [[ $op == flush && $rc == 0 ]]; then
			new_addrs 300 >"$TMP/base"
			cuckooctl load "$TMP/base" >/dev/null || fail "reload after flush"
			dump >"$TMP/after"
		fi
		((r % 6 == 0)) && check_traffic "$TMP/after" "round $r"
		((RET)) && break
	done
	dump >"$TMP/after"
	check_traffic "$TMP/after" "the end"
	injected inj
	read -r fs <"$FS"/times
	read -r fp <"$FP"/times
	note "faults: $OPS operations, $FAILED_OPS failed cleanly, $NOT_REACHED did not reach the module, $inj faults injected (failslab $((TIMES0 - fs)), fail_page_alloc $((TIMES0 - fp))), $TRAFFIC_SENT packets from stored sources all dropped, $(wc -l <"$TMP/after") entries at the end"
	((inj == 0)) && fail "no fault was injected: the test proved nothing"
	((TIMES0 - fp == 0)) &&
		fail "fail_page_alloc never fired: growth's page allocations were not reached"
	((FAILED_OPS == 0)) &&
		fail "no operation failed under faults: the error paths were not reached"
	# lost: stored entries a load under faults took away; any other
	# difference from the model fails the test too.
	reliability "faults_injected=$inj operations=$OPS failed_cleanly=$FAILED_OPS lost=$LOST"
	((RET == 0)) && pass "every failure clean, nothing lost or corrupted"
}

if [[ ! -d $FS || ! -d $FP ]]; then
	ktap_skip_all "no $FS or $FP (a kernel with fault injection: make check-debug)"
fi
[[ -f $(dirname "${BASH_SOURCE[0]}")/failioctl.so ]] ||
	ktap_bail "failioctl.so not built (make -C selftests)"
require_module
require_cmds ip ping shuf awk
tmpdir TMP || ktap_bail "mktemp"
run_tests
