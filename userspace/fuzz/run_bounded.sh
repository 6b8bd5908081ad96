#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A bounded libFuzzer run: run_bounded.sh FUZZER RUNS SEED MAX_LEN OUT_DIR
# [SEED_CORPUS...].  New inputs go to OUT_DIR, crashers next to the fuzzer.
# Prints libFuzzer's final figures and a kselftest Totals line; exit 0 only
# if the run completed without a finding.
fuzzer=$1 runs=$2 seed=$3 max_len=$4 out=$5
shift 5
mkdir -p "$out"
log=$(dirname "$fuzzer")/last_run.log
echo "# libFuzzer: $runs runs, seed $seed, max_len $max_len, corpus $out $*"
# The time cap only guards against a stalled machine; runs bound the work.
"$fuzzer" -runs="$runs" -seed="$seed" -max_len="$max_len" \
	-max_total_time=120 -print_final_stats=1 \
	-artifact_prefix="$(dirname "$fuzzer")/" "$out" "$@" >"$log" 2>&1
rc=$?
grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ +DONE)' "$log" |
	sed 's/^/# /'
if [ "$rc" -ne 0 ] || ! grep -q '^Done' "$log"; then
	tail -n 40 "$log" | sed 's/^/# /'
	echo "# fuzzer failed (exit $rc), full log: $log"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
fi
echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0"
