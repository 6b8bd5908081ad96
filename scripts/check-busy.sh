#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-busy: make check on a busy machine, ROUNDS times in a row
# (CNF_BUSY_ROUNDS, default 3), with `stress-ng --cpu N` (CNF_BUSY_CPUS,
# default: one worker per CPU) running beside it all along.  No verdict of
# the suite may depend on the host's load: a round that fails here and
# passes on a quiet machine is a test to mend, not a slow machine.  Each
# round's output is in build/check-busy/round-K.log; the last line counts
# the rounds: "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOGS=$ROOT/build/check-busy
ROUNDS=${CNF_BUSY_ROUNDS:-3}
CPUS=${CNF_BUSY_CPUS:-$(nproc)}
MAKE=${MAKE:-make}
cd "$ROOT" || exit 1
mkdir -p "$LOGS"

"$ROOT/scripts/deps.sh" --busy || exit 1

stress-ng --cpu "$CPUS" --timeout 0 --quiet &
stress=$!
trap 'kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null' EXIT

# shellcheck source=tally.sh
source "$ROOT/scripts/tally.sh"
for ((k = 1; k <= ROUNDS; k++)); do
	t0=$SECONDS
	"$MAKE" -s check >"$LOGS/round-$k.log" 2>&1
	rc=$?
	what="exit $rc after $((SECONDS - t0)) s, $(tail -n 1 "$LOGS/round-$k.log") (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "check-busy: round $k of $ROUNDS: $what"
	if ((rc == 0)); then
		pass "round $k" "$what"
	else
		fail "round $k" "$what"
		grep -E '^(not ok|# # not ok|.*# not ok)' "$LOGS/round-$k.log" | head -n 20
	fi
done
summary
((FAIL == 0))
