#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cuckoo_nf's hook re-entered from process context: an nftables rule before
# it (prerouting, priority -500) queues every echo request to nfqueue, and
# nfq_verdict accepts them from userspace.  nf_reinject() then runs the
# remaining hooks, cuckoo_nf's among them, from that process's context with
# bottom halves enabled.  Its per-CPU counters must stay exact there (and,
# on a DEBUG_PREEMPT kernel, no "using smp_processor_id() in preemptible"
# report): every listed packet dropped and counted once, every other one
# delivered, for IPv4 and IPv6.
#
#            10.0.1.1, .11 / fd01::1, ::11        10.0.1.2 / fd01::2
#   ns-s:  s1 ------------------------------------ r1  :ns-r
#
# "A" sources (.1, ::1) are listed, "B" sources (.11, ::11) are not.
set -uo pipefail

ALL_TESTS="test_reinject"
NPINGS=${CNF_NFQ_PINGS:-20}
QUEUE=3
S=ns-nfqs-$$
R=ns-nfqr-$$
DST4=10.0.1.2
DST6=fd01::2
SRCS=(10.0.1.1 fd01::1 10.0.1.11 fd01::11)
LISTED=(10.0.1.1 fd01::1)
TMP=
PIDS=()
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=lib.sh
source "$HERE/lib.sh"

# Kernel reports since the test began: none may be about cuckoo_nf's
# context (preemptible per-CPU use) or a warning at all.
kernel_reports() {
	dmesg | tail -n +"$((DMESG_LINES + 1))" |
		grep -E 'BUG:|WARNING:|preemptible|Call Trace' || true
}

setup() {
	tmpdir TMP || return 1
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" 10.0.1.1 10.0.1.11 fd01::1 \
		fd01::11 || return 1
	# Delivered requests per source, counted at input (after cuckoo_nf).
	counter_tables "$R" delivered:req:input || return 1
	nsx "$R" nft -f - <<-EOF || return 1
		table inet q {
			chain c {
				type filter hook prerouting priority -500; policy accept;
				icmp type echo-request queue num $QUEUE
				icmpv6 type echo-request queue num $QUEUE
			}
		}
	EOF
	nsx "$R" cuckooctl add "${LISTED[@]}" >/dev/null
}

# Is queue QUEUE of namespace R bound?  Its /proc/net lists bound queues
# (queue number first); 10 s at most.
queue_bound() {
	local n q _
	for ((n = 0; n < 100; n++)); do
		nsx "$R" cat /proc/net/netfilter/nfnetlink_queue >"$TMP/queues" 2>/dev/null
		while read -r q _; do
			[[ $q == "$QUEUE" ]] && return 0
		done <"$TMP/queues"
		sleep 0.1
	done
	return 1
}

# Every source pings NPINGS times; nfq_verdict gives every verdict.
send_all() {
	local argv
	nsx_argv argv "$R" "$HERE/nfq_verdict" "$QUEUE" $((NPINGS * ${#SRCS[@]})) 120
	"${argv[@]}" >"$TMP/verdicts" &
	PIDS=($!)
	# Until nfq_verdict has bound the queue, the queue drops.
	queue_bound || fail "nfq_verdict did not bind queue $QUEUE"
	ping_all "$S" "$NPINGS" 0.05 0.1 "${SRCS[@]}"
	wait "${PIDS[@]}"
	PIDS=()
}

declare -A DELIV
read_counters() {
	nft_read DELIV "$R" "$TMP/nft" table inet delivered
}

test_reinject() {
	local i s want what got verdicts=0 want_drop=$((NPINGS * ${#LISTED[@]})) dropped
	local listed=" ${LISTED[*]} " reports
	local -A st

	send_all
	read -r verdicts <"$TMP/verdicts"
	if ((verdicts == NPINGS * ${#SRCS[@]})); then
		pass "nfq_verdict accepted all $verdicts queued requests"
	else
		fail "nfq_verdict accepted $verdicts of $((NPINGS * ${#SRCS[@]}))"
	fi
	settle_counters read_counters DELIV
	for i in "${!SRCS[@]}"; do
		s=${SRCS[$i]} want=$NPINGS what=unlisted
		[[ $listed == *" $s "* ]] && want=0 what=listed
		got=${DELIV[delivered/c$i]:-none}
		if [[ $got == "$want" ]]; then
			pass "$what $s: $got of $NPINGS reinjected requests delivered"
		else
			fail "$what $s: $got of $NPINGS reinjected requests delivered, expected $want"
		fi
	done
	ns_stats st "$R" "$TMP/stats" || { fail "cuckooctl stats"; return; }
	dropped=$((${st[ipv4.dropped]} + ${st[ipv6.dropped]}))
	if ((dropped == want_drop)); then
		pass "dropped counter exact after reinjection: $dropped"
	else
		fail "dropped counter $dropped, expected $want_drop" \
			"(ipv4 ${st[ipv4.dropped]}, ipv6 ${st[ipv6.dropped]})"
	fi
	reports=$(kernel_reports)
	if [[ -z $reports ]]; then
		pass "no kernel report while the hook ran from process context"
	else
		fail "kernel reports:"
		while IFS= read -r s; do note "$s"; done <<<"$reports"
	fi
}

require_module
require_cmds nft ping ip dmesg
require_file "$HERE/nfq_verdict" "make -C selftests"
modprobe -q nfnetlink_queue 2>/dev/null
modprobe -q nft_queue 2>/dev/null
defer kill_all PIDS
DMESG_LINES=$(dmesg | wc -l)
setup || ktap_bail "setup"
run_tests
