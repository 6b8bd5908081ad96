#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cuckooctl stats --prometheus, on the fake device (tests/ctl_fake_dev.c):
#   promtool    Prometheus' promtool takes it without a problem, and
#               refuses a broken copy (so the check can fail)
#   same        its numbers are those of stats -j, metric by metric
#   alone       -j and --prometheus together are a usage error
# KTAP out, "# Totals:" at the end (tests/run_unit.sh sums it).
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$TOP/build/tests
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=0 PASS=0 FAIL=0 SKIP=0

result() {
	N=$((N + 1))
	case $2 in
	0) echo "ok $N $1"; PASS=$((PASS + 1)) ;;
	skip) echo "ok $N $1 # SKIP $3"; SKIP=$((SKIP + 1)) ;;
	*) echo "not ok $N $1"; FAIL=$((FAIL + 1)) ;;
	esac
}

ctl() {
	CNF_FAKE_KERNEL=new CNF_FAKE_LOG=$T/log LD_PRELOAD=$B/ctl_fake_dev.so \
		"$B/cuckooctl" -d /dev/null "$@"
}

echo "TAP version 13"
echo "1..3"
ctl stats --prometheus >"$T/prom" 2>"$T/err"
ctl stats -j >"$T/json"

if ! PROMTOOL=$("$TOP/scripts/promtool.sh" path); then
	result promtool skip "no promtool (scripts/promtool.sh fetch)"
elif ! "$PROMTOOL" check metrics <"$T/prom" >"$T/check" 2>&1; then
	echo "# promtool: $(tr '\n' '|' <"$T/check")"
	result promtool 1
elif sed 's/^\(cuckoo_nf_expired\)_total /\1 /' "$T/prom" |
	"$PROMTOOL" check metrics >"$T/check2" 2>&1; then
	echo "# promtool took a counter without _total: $(tr '\n' '|' <"$T/check2")"
	result promtool 1
else
	result promtool 0
fi

# metric PROM_LINE_PREFIX JSON_KEY: the sample's value is the number after
# "JSON_KEY": in stats -j (the first such key after the section's start).
rc=0
check() {
	local sample=$1 json=$2 section=${3:-} got want
	got=$(awk -v s="$sample" '$1 == s { print $2 }' "$T/prom")
	want=$(sed "s/.*${section}[^}]*\"$json\":\([0-9]*\).*/\1/" "$T/json")
	if [[ -z $got || $got != "$want" ]]; then
		echo "# $sample: $got, stats -j $json: $want"
		rc=1
	fi
}
check 'cuckoo_nf_packets_checked_total{family="ipv4",path="xdp"}' xdp_checked '"ipv4":{'
check 'cuckoo_nf_packets_checked_total{family="ipv6",path="tc"}' tc_checked '"ipv6":{'
check 'cuckoo_nf_packets_matched_total{family="ipv4",path="xdp"}' xdp_matched '"ipv4":{'
check 'cuckoo_nf_packets_dropped_total{family="ipv4",path="tc"}' tc_dropped '"ipv4":{'
check 'cuckoo_nf_entries{family="ipv4"}' entries '"ipv4":{'
check 'cuckoo_nf_memory_bytes{family="ipv6"}' bytes '"ipv6":{'
check 'cuckoo_nf_memory_limit_bytes' mem_limit
check 'cuckoo_nf_expired_total' expired '"expiry":{'
check 'cuckoo_nf_expired_late_total' late '"expiry":{'
check 'cuckoo_nf_set_entries{set="default",kind="block",family="ipv4"}' v4_entries '"name":"default"'
check 'cuckoo_nf_set_memory_bytes{set="default",kind="block"}' bytes '"name":"default"'
check 'cuckoo_nf_bytes_checked_total{family="ipv4",path="hook"}' checked_bytes '"ipv4":{'
check 'cuckoo_nf_bytes_dropped_total{family="ipv6",path="xdp"}' xdp_dropped_bytes '"ipv6":{'
check 'cuckoo_nf_bytes_matched_total{family="ipv4",path="tc"}' tc_matched_bytes '"ipv4":{'
check 'cuckoo_nf_packets_checked_total{family="ipv6",path="rule"}' rule_checked '"ipv6":{'
check 'cuckoo_nf_packets_matched_total{family="ipv4",path="rule"}' rule_matched '"ipv4":{'
check 'cuckoo_nf_bytes_checked_total{family="ipv4",path="rule"}' rule_checked_bytes '"ipv4":{'
check 'cuckoo_nf_bytes_matched_total{family="ipv6",path="rule"}' rule_matched_bytes '"ipv6":{'
check 'cuckoo_nf_packets_marked_total{family="ipv4"}' marked '"ipv4":{'
check 'cuckoo_nf_bytes_marked_total{family="ipv6"}' marked_bytes '"ipv6":{'
check 'cuckoo_nf_set_bytes_matched_total{set="default",kind="block"}' matched_bytes '"name":"default"'
check 'cuckoo_nf_log_lines_total' lines '"log":{'
check 'cuckoo_nf_log_suppressed_total' suppressed '"log":{'
result same "$rc"

ctl stats -j --prometheus >/dev/null 2>"$T/err"
st=$?
if ((st == 2)) && grep -q "do not mix" "$T/err"; then
	result alone 0
else
	echo "# exit $st: $(cat "$T/err")"
	result alone 1
fi
echo "# Totals: pass:$PASS fail:$FAIL xfail:0 xpass:0 skip:$SKIP error:0"
((FAIL == 0))
