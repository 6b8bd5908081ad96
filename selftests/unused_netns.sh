#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A network namespace where cuckoo_nf is never configured costs nothing:
# no filter, no counters, no hooks.  The script inserts and removes the
# module itself, from $CNF_KO, and leaves it loaded.
#
#  1. memory: after a round of NS_N namespaces that only warms the
#     caches up, rounds of NS_N namespaces each with the module out and in,
#     in the order ORDER (a: out, b: in; a drift that grows with the number
#     of namespaces cancels out).  Each round's kernel memory is taken by
#     where it is: each slab cache's objects in use, each vmalloc caller's
#     pages, the populated per-CPU pages (memsnap.c, which says why the
#     slab figures are exact where /proc/slabinfo alone is off by whole
#     slabs), taken once two in a row 1 s apart agree within 16 kB.  The
#     module's share of a namespace is, summed over those places, the
#     median of the rounds with it less the median of the rounds without,
#     per namespace; it must be at most BOUND bytes, give or take what
#     the rounds of a kind differ by among themselves (half of each
#     place's range over the rounds with the module, and over those
#     without, summed: the kernel's own threads and the per-CPU
#     allocator's page steps move a few tens of bytes a namespace from
#     one round to the next, and the module's share, a 64-byte slab
#     object, leaves no room below the bound for them).  Left out, and
#     printed: the vmalloc'd maps of the per-CPU allocator's chunks, which
#     come 4 MB at a time when the namespaces' per-CPU data (counted) needs
#     a new chunk, a step no round of a few hundred namespaces resolves;
#     and the stacks of threads (16 kB, 33 B a namespace in a round), which
#     the kernel starts and stops for its own work: the module has none.
#  2. one namespace, pinged from a source before and after each step:
#     never configured (passes, stats inactive after reading them), the
#     first add (the very next packet is dropped), emptied by del (passes,
#     still active, counted), reset (passes, inactive, counters gone), used
#     again (dropped, counters from 0), flush (passes, still active).
#     Verdicts come from nft counters at the receiver's ingress (arrived)
#     and input (delivered) and from the module's counters.
#  3. races, while listed sources flood: add and reset in a loop; namespaces
#     configured and deleted with traffic inside them; rmmod with a
#     namespace active.  After them, the filter still drops what it lists
#     and a reset namespace is inactive.  Kernel reports (WARN, KASAN,
#     lockdep) are the harness's to catch.
# ALL_TESTS: the three parts; TESTS="test_steps" runs one.  The first runs
# at full size only (CNF_TEST_FULL=1: make check-kernels) or when named.
set -uo pipefail

ALL_TESTS="test_memory test_steps test_races"
# Resolving 64 B a namespace over the per-CPU allocator's page steps takes
# rounds of 500 namespaces: a minute and more.
FULL_TESTS="test_memory"
# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

NS_N=${CNF_TEST_UNUSED_NS:-500}
BOUND=${CNF_TEST_UNUSED_BOUND:-64}
ORDER=${CNF_TEST_UNUSED_ORDER:-a b b a a b}
RACE_ITERS=${CNF_TEST_UNUSED_RACES:-$(scaled 4 10)}
CNF_KO=${CNF_KO:-/cnf/cuckoo_nf.ko}
NS_S=cnf-un-s-$$
NS_R=cnf-un-r-$$
MANY=cnf-un-m-$$-
DST4=10.0.9.2
DST6=fd00:9::2
SRC4=10.0.9.1
SRC6=fd00:9::1
SRCS=("$SRC4" "$SRC6")
INTERVAL=0.005
TMP=
# shellcheck disable=SC2034 # filled by flood, emptied by kill_all, by name
PIDS=()
MADE=0
MEMSNAP=$(dirname "$(realpath "$0")")/memsnap

# At exit (deferred): the namespaces of the memory rounds gone, and the
# module loaded, as the harness expects it.
un_cleanup() {
	local i
	for ((i = 0; i < MADE; i++)); do
		echo "netns del $MANY$i"
	done | ip -force -batch - 2>/dev/null
	[[ -n ${MS_PID:-} ]] && kill "$MS_PID" 2>/dev/null
	mod_loaded || insmod "$CNF_KO" || echo "# cannot insert $CNF_KO at exit"
}

check_requirements() {
	require_ko "$CNF_KO"
	require_cmds cuckooctl ip nft ping
	modprobe -q veth 2>/dev/null
	modprobe -q nf_tables 2>/dev/null
}

# mod_in: the module loaded (inserted if it is not).
mod_in() {
	mod_loaded || insmod "$CNF_KO" || { fail "insmod $CNF_KO"; return 1; }
}

# ---- 1. memory ----

# mem_once: one snapshot from memsnap into SNAP (bytes by key, a caller's
# vmalloc areas summed) and its total, SNAP_T.
declare -A SNAP
mem_once() {
	local k v
	SNAP=()
	SNAP_T=0
	echo >&"${MS[1]}"
	while read -r k v <&"${MS[0]}"; do
		[[ $k == end ]] && return 0
		SNAP[$k]=$((${SNAP[$k]:-0} + v))
		SNAP_T=$((SNAP_T + v))
	done
	return 1
}

# mem_snap: a snapshot once RCU-deferred frees and namespace work are done:
# two in a row 1 s apart within 16 kB, at most 5 (SETTLED says which).
mem_snap() {
	local prev=-1 n
	for ((n = 0; n < 5; n++)); do
		mem_once || return 1
		((prev >= 0 && SNAP_T - prev <= 16384 && prev - SNAP_T <= 16384)) && break
		prev=$SNAP_T
		sleep 1
	done
	SETTLED=$((n < 5))
}

# round R MOD: NS_N more namespaces, by one ip; what each place gained,
# "R MOD KEY BYTES" lines, onto $TMP/mem.  The snapshot before is the last
# round's after, unless FRESH is 1 (the module went in or out).
declare -A S0
round() {
	local i k
	if ((FRESH)); then
		mem_snap || return 1
	fi
	S0=()
	for k in "${!SNAP[@]}"; do
		S0[$k]=${SNAP[$k]}
	done
	for ((i = MADE; i < MADE + NS_N; i++)); do
		echo "netns add $MANY$i"
	done | ip -batch - || { fail "cannot make $NS_N namespaces"; return 1; }
	MADE=$((MADE + NS_N))
	sleep 1
	mem_snap || return 1
	((SETTLED)) || note "round $1: memory still moving after 5 s"
	for k in "${!SNAP[@]}" "${!S0[@]}"; do
		echo "$1 $2 $k $((${SNAP[$k]:-0} - ${S0[$k]:-0}))"
	done | sort -u >>"$TMP/mem"
	FRESH=0
}

# The module's share per namespace from $TMP/mem: for each place, the
# median of the rounds with the module less that of the rounds without;
# prints "SHARE", the places that make it up, largest first, and what was
# left out.
share() {
	awk -v n="$NS_N" '
	function abs(x) { return x < 0 ? -x : x }
	function range(a, c,   i, lo, hi) {
		lo = hi = a[1]
		for (i = 2; i <= c; i++) {
			if (a[i] < lo)
				lo = a[i]
			if (a[i] > hi)
				hi = a[i]
		}
		return hi - lo
	}
	function median(a, c,   i, j, t) {
		for (i = 2; i <= c; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
	}
	{ rounds[$1] = $2; v[$1, $3] = $4; keys[$3] = 1 }
	END {
		for (k in keys) {
			ca = cb = 0
			for (r in rounds) {
				if (rounds[r] == "b")
					b[++cb] = v[r, k] + 0
				else
					a[++ca] = v[r, k] + 0
			}
			d = (median(b, cb) - median(a, ca)) / n
			if (k ~ /^vmalloc:pcpu_/) {
				chunks += d
				continue
			}
			if (k ~ /^vmalloc:(kernel_clone|copy_process|dup_task_struct)/) {
				stacks += d
				continue
			}
			total += d
			spread += (range(a, ca) + range(b, cb)) / 2 / n
			if (d >= 0.5 || d <= -0.5)
				part[k] = d
		}
		printf "%.1f %.1f", total, spread
		m = 0
		for (k in part) {
			s[++m] = k
		}
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && abs(part[s[j - 1]]) < abs(part[s[j]]); j--) {
				t = s[j]; s[j] = s[j - 1]; s[j - 1] = t
			}
		for (i = 1; i <= m && i <= 8; i++)
			printf " %s %+.1f", s[i], part[s[i]]
		printf "; left out: per-CPU chunk maps %+.1f, thread stacks %+.1f\n", chunks, stacks
	}' "$TMP/mem"
}

test_memory() {
	local t0=$SECONDS r=0 mod d line wfd
	if [[ ! -d /sys/kernel/slab ]]; then
		skip_test "no /sys/kernel/slab (not SLUB): memory not measured"
		return
	fi
	[[ -x $MEMSNAP ]] || { fail "memsnap not built (make -C selftests)"; return; }
	if mod_loaded && ! rmmod cuckoo_nf; then
		fail "cuckoo_nf is loaded and cannot be removed"
		return
	fi
	coproc MS { "$MEMSNAP"; }
	FRESH=1
	round warm a || return
	: >"$TMP/mem"
	for mod in $ORDER; do
		r=$((r + 1))
		if [[ $mod == b ]] && ! mod_loaded; then
			insmod "$CNF_KO" || { fail "insmod"; return; }
			FRESH=1
		elif [[ $mod == a ]] && mod_loaded; then
			rmmod cuckoo_nf || { fail "rmmod with $MADE namespaces"; return; }
			FRESH=1
		fi
		round "$r" "$mod" || return
	done
	wfd=${MS[1]}
	exec {wfd}>&-
	wait "$MS_PID"
	MS_PID=
	line=$(share)
	read -r d spread line <<<"$line"
	note "module's share per namespace, by place (B): $line ($NS_N namespaces a round, rounds $ORDER, $((SECONDS - t0)) s)"
	awk -v d="$d" -v s="$spread" -v b="$BOUND" 'BEGIN { exit !(d - s <= b) }'
	verdict $? "an unused namespace costs $d B with the module loaded, give or take $spread (bound $BOUND)"
	mod_loaded || insmod "$CNF_KO" || fail "insmod"
}

# ---- 2. one namespace, step by step ----

declare -A CNT
snap() { nft_read CNT "$NS_R" "$TMP/nft"; }

# stats_r ARRAY: the receiver's stats in ARRAY (lib.sh's ns_stats).
stats_r() { ns_stats "$1" "$NS_R" "$TMP/stats" || fail "stats in $NS_R"; }

# net_up: the module in, the sender and the receiver over veth with the
# receiver's counters (once: the tests after the first reuse them).
net_up() {
	mod_in || return 1
	[[ -e /run/netns/$NS_R ]] && return 0
	veth_pair 0 "$NS_S" "$NS_R" "$DST4" "$DST6" "${SRCS[@]}" ||
		{ fail "cannot set up the veth pair"; return 1; }
	counter_tables "$NS_R" cnf_in:req:r0 cnf_rx:req:input ||
		{ fail "cannot set up the counters"; return 1; }
}

# step NAME N LISTED ACTIVE: N packets from each source, all sources at
# once; they must arrive, and be dropped by the module (LISTED 1) or
# delivered (0), with the module's counters following when the namespace
# is ACTIVE (1), or stats showing it inactive (0) and all zero.  Replies
# do not matter: counters decide.
step() {
	local name=$1 n=$2 listed=$3 active=$4 s fam ok=1
	local -A a0 d0 k0 c0 st
	snap
	stats_r st
	for s in "${SRCS[@]}"; do
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		a0[$s]=${CNT[cnf_in/c${IDX[$s]}]:-0}
		d0[$s]=${CNT[cnf_rx/c${IDX[$s]}]:-0}
		k0[$s]=${st[$fam.dropped]:-x}
		c0[$s]=${st[$fam.checked]:-x}
	done
	ping_all "$NS_S" "$n" 0.01 0.2 "${SRCS[@]}"
	settle_counters snap CNT
	stats_r st
	for s in "${SRCS[@]}"; do
		fam=ipv4
		is_v6 "$s" && fam=ipv6
		a0[$s]=$((${CNT[cnf_in/c${IDX[$s]}]:-0} - a0[$s]))
		d0[$s]=$((${CNT[cnf_rx/c${IDX[$s]}]:-0} - d0[$s]))
		k0[$s]=$((${st[$fam.dropped]:-0} - k0[$s]))
		c0[$s]=$((${st[$fam.checked]:-0} - c0[$s]))
		if ((a0[$s] != n || d0[$s] != (listed ? 0 : n))); then
			note "$name: $s: ${a0[$s]} of $n arrived, ${d0[$s]} delivered"
			ok=0
		fi
		if ((active)); then
			if [[ ${st[active]} != true ]] ||
				((k0[$s] != (listed ? n : 0) || c0[$s] < n)); then
				note "$name: $s: active=${st[active]}, module dropped ${k0[$s]} and checked ${c0[$s]} of $n"
				ok=0
			fi
		elif [[ ${st[active]} != false ]] || ((st[$fam.checked] || st[$fam.capacity])); then
			note "$name: $s: active=${st[active]}, checked ${st[$fam.checked]}, capacity ${st[$fam.capacity]}"
			ok=0
		fi
	done
	if ((ok)); then
		pass "$name"
	else
		fail "$name"
	fi
}

ctl_r() { nsx "$NS_R" cuckooctl "$@" >/dev/null || fail "cuckooctl $*"; }

test_steps() {
	local -A st
	net_up || return
	step "never configured: passes, reads create nothing" 3 0 0
	nsx "$NS_R" cuckooctl test "$SRC4" >/dev/null
	(($? == 1)) || fail "cuckooctl test of an unlisted source in a fresh namespace"
	ctl_r list
	step "after test and list: still inactive" 2 0 0
	ctl_r add "${SRCS[@]}"
	step "first add: the next packet is dropped" 1 1 1
	step "listed: dropped" 3 1 1
	ctl_r del "${SRCS[@]}"
	step "emptied by del: passes, still active" 3 0 1
	ctl_r reset
	step "reset: passes, inactive, counters gone" 3 0 0
	ctl_r add "${SRCS[@]}"
	step "used again: dropped, counted from 0" 3 1 1
	stats_r st
	[[ ${st[ipv4.dropped]:-} == 3 && ${st[ipv6.dropped]:-} == 3 ]] ||
		fail "after the reset the counters did not start from 0 (${st[ipv4.dropped]:-?}, ${st[ipv6.dropped]:-?})"
	ctl_r flush
	step "flush: passes, still active" 2 0 1
	ctl_r reset
}

# ---- 3. races ----

# delivered VAR SRC: VAR = the packets from SRC delivered so far.
delivered() {
	local -n _dv=$1
	snap
	_dv=${CNT[cnf_rx/c${IDX[$2]}]:-0}
}

# churn N: N namespaces in turn configured, flooding themselves through
# lo from a listed address, and deleted while the flood runs.
churn() {
	local i ns p argv
	for ((i = 0; i < $1; i++)); do
		ns=cnf-un-c-$$-$i
		ip netns add "$ns" || { echo "churn: netns add $ns"; return 1; }
		ip -n "$ns" link set lo up
		nsx "$ns" cuckooctl add 127.0.0.1 >/dev/null ||
			{ echo "churn: add in $ns"; return 1; }
		nsx_argv argv "$ns" ping -q -n -i "$INTERVAL" 127.0.0.1
		"${argv[@]}" >/dev/null 2>&1 &
		p=$!
		sleep 0.05
		ip netns del "$ns" || { echo "churn: netns del $ns"; return 1; }
		kill "$p"
		wait "$p" 2>/dev/null
	done
	return 0
}

test_races() {
	local i d0 d rc=0 cpid
	local -A st
	net_up || return
	for i in "${SRCS[@]}"; do
		flood PIDS "$NS_S" "$i" "$INTERVAL"
	done
	churn "$RACE_ITERS" &
	cpid=$!
	for ((i = 0; i < RACE_ITERS; i++)); do
		nsx "$NS_R" cuckooctl add "${SRCS[@]}" >/dev/null ||
			{ echo "add, cycle $i"; rc=1; }
		nsx "$NS_R" cuckooctl reset || { echo "reset, cycle $i"; rc=1; }
	done
	wait "$cpid" || rc=1
	((rc == 0)) || fail "add/reset or namespace churn failed under floods"
	# Still exact after the churn: listed, nothing more is delivered.
	ctl_r add "${SRCS[@]}"
	delivered d0 "$SRC4"
	sleep 1
	delivered d "$SRC4"
	stats_r st
	if ((d == d0 && ${st[ipv4.dropped]:-0} > 0)); then
		pass "after $RACE_ITERS add/reset cycles and deletions under floods, listed sources are dropped"
	else
		fail "after the races: $((d - d0)) delivered from $SRC4 while listed, ${st[ipv4.dropped]:-?} dropped"
	fi
	# rmmod with this namespace active, under the floods; then a fresh
	# module gives it nothing until configured again.
	if ! rmmod cuckoo_nf; then
		fail "rmmod with an active namespace under floods"
		kill_all PIDS
		return
	fi
	insmod "$CNF_KO" || { fail "insmod after rmmod"; kill_all PIDS; return; }
	delivered d0 "$SRC4"
	sleep 0.5
	delivered d "$SRC4"
	stats_r st
	if ((d > d0)) && [[ ${st[active]:-} == false ]]; then
		pass "rmmod under floods with an active namespace; reloaded, it is inactive and passes"
	else
		fail "after rmmod and insmod: $((d - d0)) delivered, active=${st[active]:-?}"
	fi
	kill_all PIDS
}

check_requirements
tmpdir TMP || ktap_bail "mktemp"
defer un_cleanup
defer kill_all PIDS
run_tests
