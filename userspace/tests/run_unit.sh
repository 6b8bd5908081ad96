#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs each unit test binary given as an argument and sums the kselftest
# "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N" lines.  A binary
# that exits non-zero without reporting a failure (crash, sanitizer abort,
# no Totals line) counts as one failed test.  Last line: "N passed, N failed",
# with ", N skipped" when any was skipped (counted in neither).
pass=0 fail=0 skip=0

# The count after " NAME:" in $totals (a space before it: not xpass/xfail).
field() {
	sed -n "s/.*[ ]$1:\([0-9]*\).*/\1/p" <<<" $totals"
}

# All of it is also kept in $CNF_UNIT_LOG when set.
log=${CNF_UNIT_LOG:-/dev/null}
: >"$log"
for t in "$@"; do
	echo "== ${t##*/}"
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	printf '== %s\n%s\n' "${t##*/}" "$out" >>"$log"
	totals=$(printf '%s\n' "$out" | sed -n 's/^# Totals: //p' | tail -n 1)
	p=$(field pass) f=$(field fail) e=$(field error) s=$(field skip)
	p=${p:-0} f=$(( ${f:-0} + ${e:-0} )) s=${s:-0}
	if [ -z "$totals" ]; then
		echo "# ${t##*/}: no Totals line (exit status $rc)"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "# ${t##*/}: exit status $rc without a reported failure"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
if [ "$skip" -eq 0 ]; then
	echo "$pass passed, $fail failed"
else
	echo "$pass passed, $fail failed, $skip skipped"
fi
[ "$fail" -eq 0 ]
