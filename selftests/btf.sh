#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's BTF, which BPF programs find its kfuncs through: the
# kernel accepted it (/sys/kernel/btf/cuckoo_nf, with the module's own
# types and its kfuncs in it) and registered the kfuncs by the BTF IDs of
# its kfunc sets (an XDP program calling them loads), had nothing to say
# against it in its log ("failed to validate module [cuckoo_nf] BTF":
# split from another kernel's BTF; "missing module BTF": built without),
# and it comes and goes with the module.  Skipped on a kernel without BTF
# (the debug kernel's).
set -u

cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
# shellcheck source=lib.sh
source ./lib.sh
ALL_TESTS="test_btf_loaded test_btf_kfunc_call test_btf_reload"
BTF=/sys/kernel/btf/cuckoo_nf
CNF_KO=${CNF_KO:-/cnf/cuckoo_nf.ko}
# A type of the module's own (module/cnf.h) and its kfuncs (module/xdp.c),
# in its BTF's strings.
OWN_TYPE=cnf_net
KFUNCS="bpf_cnf_lookup4 bpf_cnf_lookup6 bpf_cnf_skb_lookup4 bpf_cnf_skb_lookup6"
# An XDP program calling them: cuckooctl's (userspace/xdp/cuckoo_xdp.bpf.c).
PROG=./cuckoo_xdp.o

# btf_ok WHEN: the module's BTF is there, holds OWN_TYPE, and the kernel
# log has no complaint about module BTF.
btf_ok() {
	local when=$1 size log name
	log=$(dmesg | grep -aE 'failed to validate module \[cuckoo_nf\] BTF|missing module BTF')
	if [[ ! -f $BTF ]]; then
		fail "$when: no $BTF: the kernel has no BTF of cuckoo_nf (${log:-built without .BTF? make module})"
		return 1
	fi
	size=$(stat -c %s "$BTF")
	for name in $OWN_TYPE $KFUNCS; do
		grep -qaF "$name" "$BTF" && continue
		fail "$when: $BTF ($size bytes) has no $name"
		return 1
	done
	if [[ -n $log ]]; then
		fail "$when: kernel log: $log"
	else
		pass "$when: $BTF, $size bytes, has $OWN_TYPE, $KFUNCS; no BTF complaint in the kernel log"
	fi
}

# The module loaded again for the tests after this one, whatever happened.
module_back() {
	mod_loaded || insmod "$CNF_KO" || echo "# cannot insert $CNF_KO at exit"
}

test_btf_loaded() {
	btf_ok "loaded"
}

xdp_off() {
	ip link set dev lo xdpgeneric off
}

# The verifier takes calls to kfuncs the module registered, by the BTF IDs
# of its kfunc set: unresolved IDs (no resolve_btfids) or no module BTF,
# and loading fails.
test_btf_kfunc_call() {
	local out
	if ! out=$(ip link set dev lo xdpgeneric obj "$PROG" sec xdp 2>&1); then
		fail "XDP program calling bpf_cnf_lookup4/6 refused: $(tail -n 5 <<<"$out" | tr '\n' ' ')"
		return
	fi
	out=$(ip link show dev lo)
	if [[ $out != *"prog/xdp id"* ]]; then
		fail "ip link set dev lo xdpgeneric obj $PROG: no program on lo: $out"
	else
		pass "an XDP program calling bpf_cnf_lookup4/6 loaded and attached to lo"
	fi
	xdp_off || fail "ip link set dev lo xdpgeneric off"
}

test_btf_reload() {
	if ! rmmod cuckoo_nf; then
		fail "rmmod cuckoo_nf"
		return
	fi
	if [[ -e $BTF ]]; then
		fail "$BTF still there after rmmod"
	else
		pass "$BTF gone with the module"
	fi
	if ! insmod "$CNF_KO"; then
		fail "insmod $CNF_KO"
		return
	fi
	btf_ok "inserted again"
}

require_root
require_module
require_ko "$CNF_KO"
[[ -f /sys/kernel/btf/vmlinux ]] ||
	ktap_skip_all "kernel $(uname -r) has no BTF (/sys/kernel/btf/vmlinux)"
[[ -f $PROG ]] || ktap_bail "$PROG not built (make -C selftests)"
require_cmds ip
defer module_back
defer xdp_off
run_tests
