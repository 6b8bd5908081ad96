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

NPINGS=${CNF_NFQ_PINGS:-20}
QUEUE=3
S=ns-nfqs-$$
R=ns-nfqr-$$
DST4=10.0.1.2
DST6=fd01::2
SRCS=(10.0.1.1 fd01::1 10.0.1.11 fd01::11)
LISTED=(10.0.1.1 fd01::1)
ret=0
TMP=
NFQ_PID=
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=lib.sh
source "$HERE/lib.sh"

cleanup() {
	[[ -n $NFQ_PID ]] && kill "$NFQ_PID" 2>/dev/null
	wait 2>/dev/null
	ip netns del "$S" 2>/dev/null
	ip netns del "$R" 2>/dev/null
	[[ -n $TMP ]] && rm -rf "$TMP"
}

# Kernel reports since the test began: none may be about cuckoo_nf's
# context (preemptible per-CPU use) or a warning at all.
kernel_reports() {
	dmesg | tail -n +"$((DMESG_LINES + 1))" |
		grep -E 'BUG:|WARNING:|preemptible|Call Trace' || true
}

setup() {
	TMP=$(mktemp -d) || return 1
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
	nsx_argv "$R" "$HERE/nfq_verdict" "$QUEUE" $((NPINGS * ${#SRCS[@]})) 120
	"${NSX[@]}" >"$TMP/verdicts" &
	NFQ_PID=$!
	# Until nfq_verdict has bound the queue, the queue drops.
	queue_bound || log_fail "nfq_verdict did not bind queue $QUEUE"
	ping_all "$S" "$NPINGS" 0.05 1 "${SRCS[@]}"
	wait "$NFQ_PID"
	NFQ_PID=
}

read_counters() {
	nft_read DELIV "$R" "$TMP/nft" table inet delivered
}

check() {
	local i s want what got verdicts=0 want_drop=$((NPINGS * ${#LISTED[@]})) dropped
	local listed=" ${LISTED[*]} "

	read -r verdicts <"$TMP/verdicts"
	if ((verdicts == NPINGS * ${#SRCS[@]})); then
		log_pass "nfq_verdict accepted all $verdicts queued requests"
	else
		log_fail "nfq_verdict accepted $verdicts of $((NPINGS * ${#SRCS[@]}))"
	fi
	declare -gA DELIV
	settle_counters read_counters DELIV
	for i in "${!SRCS[@]}"; do
		s=${SRCS[$i]} want=$NPINGS what=unlisted
		[[ $listed == *" $s "* ]] && want=0 what=listed
		got=${DELIV[delivered/c$i]:-none}
		if [[ $got == "$want" ]]; then
			log_pass "$what $s: $got of $NPINGS reinjected requests delivered"
		else
			log_fail "$what $s: $got of $NPINGS reinjected requests delivered, expected $want"
		fi
	done
	ns_stats "$R" "$TMP/stats" || { log_fail "cuckooctl stats"; return; }
	dropped=$((STAT[ipv4.dropped] + STAT[ipv6.dropped]))
	if ((dropped == want_drop)); then
		log_pass "dropped counter exact after reinjection: $dropped"
	else
		log_fail "dropped counter $dropped, expected $want_drop" \
			"(ipv4 ${STAT[ipv4.dropped]}, ipv6 ${STAT[ipv6.dropped]})"
	fi
	if [[ -z $(kernel_reports) ]]; then
		log_pass "no kernel report while the hook ran from process context"
	else
		log_fail "kernel reports:"
		kernel_reports
	fi
}

[[ -c /dev/cuckoo_nf ]] || skip "/dev/cuckoo_nf missing (module not loaded)"
require_cmds cuckooctl nft ping ip dmesg
[[ -x $HERE/nfq_verdict ]] || skip "nfq_verdict not built"
modprobe -q nfnetlink_queue 2>/dev/null
modprobe -q nft_queue 2>/dev/null
trap cleanup EXIT
DMESG_LINES=$(dmesg | wc -l)
setup || { log_fail "setup"; finish "nfqueue re-entry"; }
send_all
check
finish "nfqueue re-entry"
