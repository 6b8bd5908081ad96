#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel of `make check-debug`.
#
#   debug-kernel.sh build    build (or reuse) the kernel; print its build dir
#   debug-kernel.sh check [TEST...]
#                            build it, build cuckoo_nf.ko, cuckooctl and the
#                            selftests against it, run the whole suite in the
#                            VM under it, then a kmemleak scan; any kernel
#                            report (WARN, KASAN, UBSAN, lockdep, leak...)
#                            fails the run
#
# The kernel is Debian's kernel source (scripts/kernel-source.sh) configured from x86_64 defconfig
# plus scripts/debug-kernel.config (KASAN, UBSAN, kmemleak, lockdep, fault
# injection...; everything the VM needs built in, so no /lib/modules tree is
# needed: the VM gets an almost empty module tree).  It is built out of tree, niced, in
#   ${XDG_CACHE_HOME:-~/.cache}/cuckoo_nf/kernel-<hash of config + source + gcc>
# so a rerun reuses it (about 40 minutes on 2 busy cores the first time).
#
# Environment: CNF_DEBUG_JOBS (make -j, default: number of CPUs),
# CNF_FUZZ_CALLS (ioctl_fuzz calls, default 1000000), CNF_TEST_EXPIRY_UNIT
# (expiry.sh's unit of time, default 4 here: pings under KASAN are slow),
# and everything selftests/vm/run takes (CNF_VM_SMP, CNF_VM_TIMEOUT...).
#
# lifecycle.sh's floods are slowed to one ping per 50 ms per source: at the
# stock kernel's 10 ms, packet processing under KASAN and TCG cannot keep
# up, both vCPUs stay in softirq, the insmod patching the netfilter static
# keys never runs again, and every packet traps on its int3 (a soft lockup
# of the emulated machine, seen at cycle 9).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FRAGMENT=$ROOT/scripts/debug-kernel.config
SRC_PKG=$("$ROOT/scripts/kernel-source.sh" package)
SRC_TARBALL=$("$ROOT/scripts/kernel-source.sh" tarball)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cuckoo_nf
JOBS=${CNF_DEBUG_JOBS:-$(nproc)}
# Bump when the way the kernel is configured or built changes.
RECIPE=1
# shellcheck source=tally.sh
source "$ROOT/scripts/tally.sh"

log() { echo "debug-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

src_version() {
	dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null ||
		stat -c '%s-%Y' "$SRC_TARBALL"
}

# Extract the whole source once per linux-source version (shared by every
# configuration).
extract_source() {
	local ver=$1 dir=$CACHE/src-$1 tmp
	if [[ -f $dir/.cnf-extracted ]]; then
		echo "$dir"
		return
	fi
	log "extracting $SRC_TARBALL into $dir"
	mkdir -p "$CACHE"
	tmp=$(mktemp -d -p "$CACHE")
	nice -n 19 tar -C "$tmp" -xJf "$SRC_TARBALL"
	rm -rf "$dir"
	mv "$tmp/$SRC_PKG" "$dir"
	rmdir "$tmp"
	touch "$dir/.cnf-extracted"
	echo "$dir"
}

# Every =y/=n/value line of the fragment must have survived olddefconfig;
# a debugging option silently dropped would make the run prove nothing.
verify_config() {
	local cfg=$1 line opt bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$cfg" || { log "config: wanted $line, got: $(grep -E "^(# )?${line%%=*}[= ]" "$cfg" || echo unset)"; bad=1; }
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			grep -qE "^$opt=" "$cfg" && { log "config: wanted $opt off, got $(grep -E "^$opt=" "$cfg")"; bad=1; }
			;;
		esac
	done <"$FRAGMENT"
	return $bad
}

build_kernel() {
	local ver src key out
	[[ -f $SRC_TARBALL ]] || die "$SRC_TARBALL missing (run scripts/deps.sh --debug as root)"
	ver=$(src_version)
	key=$( {
		echo "recipe $RECIPE"
		echo "source $ver"
		gcc --version | head -n1
		cat "$FRAGMENT"
	} | sha256sum | cut -c1-16)
	out=$CACHE/kernel-$key
	if [[ -f $out/.cnf-built && -f $out/arch/x86/boot/bzImage ]]; then
		log "reusing $out"
		echo "$out"
		return
	fi
	src=$(extract_source "$ver")
	mkdir -p "$out"
	exec 9>"$out/.lock"
	flock 9
	if [[ -f $out/.cnf-built ]]; then
		echo "$out"
		return
	fi
	log "configuring $out (x86_64 defconfig + $(basename "$FRAGMENT"))"
	make -s -C "$src" O="$out" x86_64_defconfig >&2
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$FRAGMENT" >/dev/null
	make -s -C "$src" O="$out" olddefconfig >&2
	verify_config "$out/.config" || die "the configuration lost options (see above)"
	log "building with nice -n 19, -j$JOBS (log: $out/build.log)"
	if ! nice -n 19 make -C "$src" O="$out" -j"$JOBS" all >"$out/build.log" 2>&1; then
		tail -n 40 "$out/build.log" >&2
		die "kernel build failed (log: $out/build.log)"
	fi
	# The VM's initramfs takes its modules from a module tree: this one
	# holds only modules.builtin and friends (and defconfig's few =m).
	rm -rf "$out/modroot"
	nice -n 19 make -s -C "$src" O="$out" INSTALL_MOD_PATH="$out/modroot" \
		modules_install >>"$out/build.log" 2>&1 || die "modules_install failed"
	touch "$out/.cnf-built"
	log "built $(cat "$out/include/config/kernel.release") in $out"
	echo "$out"
}

# The suite in the VM, then a kmemleak scan (run by debug-suite.sh inside).
# Everything is built in a snapshot of the tree (build/debug/tree), so the
# shared tree's cuckoo_nf.ko and test modules, built for the VM's usual
# kernel, stay as they are.
check() {
	local kdir kver rc snap=$ROOT/build/debug/tree
	kdir=$(build_kernel)
	kver=$(cat "$kdir/include/config/kernel.release")
	rm -rf "$snap"
	mkdir -p "$snap/build"
	tar -C "$ROOT" --exclude=./build --exclude=./.git --exclude='*.o' \
		--exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude=Module.symvers --exclude=modules.order \
		-cf - . | tar -C "$snap" -xf -
	# Shared with the tree's own builds: made here on a fresh clone.
	mkdir -p "$ROOT/build/cache"
	ln -s "$ROOT/build/cache" "$snap/build/cache"
	# CNF_XDP=n: this kernel (defconfig + debug-kernel.config) has no
	# BPF syscall and no BTF: no XDP program, no module BTF.
	make -C "$snap" --no-print-directory module test-modules KDIR="$kdir" CNF_XDP=n
	make -C "$snap" --no-print-directory userspace selftests-build
	log "running the selftests under $kver"
	KVER=$kver KERNEL=$kdir/arch/x86/boot/bzImage CNF_VM_MODDIR=$kdir/modroot/lib/modules/$kver \
		CNF_VM_APPEND="kmemleak=on no_timer_check ${CNF_VM_APPEND:-}" \
		CNF_VM_TIMEOUT=${CNF_VM_TIMEOUT:-7200} CNF_VM_MEM=${CNF_VM_MEM:-2048M} \
		CNF_TEST_FUZZ_CALLS=${CNF_FUZZ_CALLS:-1000000} \
		CNF_TEST_EXPIRY_UNIT=${CNF_TEST_EXPIRY_UNIT:-4} \
		CNF_TEST_STORM_ITERS=${CNF_TEST_STORM_ITERS:-40} \
		CNF_TEST_LIFECYCLE_INTERVAL=${CNF_TEST_LIFECYCLE_INTERVAL:-0.05} \
		CNF_TEST_TIMEOUT=${CNF_TEST_TIMEOUT:-3600} \
		"$snap/selftests/vm/run" "$snap/selftests/vm/debug-suite.sh" "$@" 2>&1 |
		tee "$ROOT/build/check-debug.log"
	rc=${PIPESTATUS[0]}
	summarize "$ROOT/build/check-debug.log" "$rc"
}

# KTAP totals of the log (run_tests.sh's "# Totals:" line, which counts each
# test's own results), like selftests/vm/selftests.sh; a VM failure (kernel
# report, kmemleak, panic, timeout) is a failure even when every test
# passed.  The tests' reliability figures go to build/bench/reliability.json.
summarize() {
	local log=$1 rc=$2 totals
	totals=$(grep -aE '^# Totals: pass:[0-9]+ fail:[0-9]+ ' "$log" | tail -n1 || true)
	python3 "$ROOT/scripts/reliability.py" collect "make check-debug" "$log" || true
	sed -nE 's/^# cuckoo_nf: (failed|skipped): /check-debug: \1: /p' "$log"
	# A failed VM run (status $rc) with every test passed is a failure.
	tally_totals "${totals#\# Totals: }" "$rc" check-debug "the suite (build/check-debug.log)"
	summary
	((FAIL == 0))
}

case ${1:-} in
build) build_kernel ;;
check) shift; check "$@" ;;
*) die "usage: debug-kernel.sh build | check [TEST...]" ;;
esac
