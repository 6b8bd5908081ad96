#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the VM, under the debug kernel (scripts/debug-kernel.sh check):
# the whole selftest suite (or the TESTs given), then the module unloaded and a kmemleak scan.
# Any leak report fails the run; so does anything the harness finds in the
# kernel log (WARN, KASAN, UBSAN, lockdep...; panic_on_warn=1 stops the VM
# at the first WARN).
KL=/sys/kernel/debug/kmemleak

cd /cnf/selftests || exit 1
if [[ ! -w $KL ]]; then
	echo "CNF_VM: kmemleak: $KL missing (kernel without CONFIG_DEBUG_KMEMLEAK, or kmemleak=off)"
	exit 1
fi
# What boot left unreferenced is not ours to report.
echo scan >$KL
echo clear >$KL

bash vm/run_tests.sh "$@"
rc=$?

if grep -q '^cuckoo_nf ' /proc/modules && ! rmmod cuckoo_nf; then
	echo "CNF_VM: rmmod cuckoo_nf failed"
	rc=1
fi
# Objects younger than 5 s are never reported: scan, wait, scan again.
echo scan >$KL
sleep 6
echo scan >$KL
report=$(cat $KL)
if [[ -n $report ]]; then
	echo "CNF_VM: kmemleak reports:"
	echo "$report"
	rc=1
else
	echo "# kmemleak: no leak reported"
fi
exit $rc
