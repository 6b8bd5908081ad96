#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-install: make module, install and uninstall as an operator
# runs them, in a copy of the tree (build/check-install/src, so the
# tree's own build is left alone), against the VM's kernel's headers
# with CNF_XDP=n (no module BTF to prepare), into scratch DESTDIRs:
#
#   - a kernel without headers: make module stops, naming the headers
#     package and KVER=, and builds nothing;
#   - headers that cannot give the module BTF (Debian's 6.1 as given by
#     KDIR=): make module builds it all the same, without the kfuncs,
#     and says so in one line; with CNF_XDP=y that is an error;
#   - the VM booted with module.sig_enforce=1 refuses that (unsigned)
#     module with the message docs/install.md quotes;
#   - make install: says which kernel it installed for, that the module is
#     unsigned (Debian's headers have no signing key), and installs the
#     module and every file of the list below; make uninstall then leaves
#     no file but the ones that were there before install;
#   - a bouncer configuration changed after install is kept by uninstall;
#   - with a kernel build directory that has a module key (the headers
#     plus a key made here, as a kernel built from source has), make
#     install signs the module with it (modinfo -F signer);
#   - cuckoo_nf.service's start, on a kernel without the module, fails
#     with one line naming the kernel and its headers package.
#
# Needs what make needs (scripts/deps.sh) and openssl.  Logs in
# build/check-install/.  The last line is "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/check-install
SRC=$OUT/src
# Where make install puts libxt_cuckoo.so (the Makefile asks pkg-config too).
XTLIBDIR=$(pkg-config --variable=xtlibdir xtables 2>/dev/null)
cd "$ROOT" || exit 1

# shellcheck source=tally.sh
source "$ROOT/scripts/tally.sh"


# What make install puts under DESTDIR with PREFIX=/usr/local, the bouncer
# built.
expected() {
	cat <<-EOF
	/etc/crowdsec/bouncers/cuckoo-crowdsec-bouncer.yaml
	/etc/fail2ban/action.d/cuckoo_nf.conf
	/etc/fail2ban/action.d/cuckoo_nf-rules.conf
	/etc/systemd/system/cuckoo-crowdsec-bouncer.service
	/etc/systemd/system/cuckoo_nf-metrics.service
	/etc/systemd/system/cuckoo_nf-metrics.timer
	/etc/systemd/system/cuckoo_nf.service
	/lib/modules/$KVER/extra/cuckoo_nf.ko
	/usr/local/include/linux/cuckoo_nf.h
	/usr/local/lib/cuckoo_nf/cuckoo_tc.o
	/usr/local/lib/cuckoo_nf/cuckoo_xdp.o
	/usr/local/sbin/cuckoo-crowdsec-bouncer
	/usr/local/sbin/cuckooctl
	/usr/local/share/bash-completion/completions/cuckooctl
	/usr/local/share/man/man8/cuckoo-crowdsec-bouncer.8
	/usr/local/share/man/man8/cuckooctl.8
	/usr/local/share/man/man8/iptables-cuckoo.8
	EOF
	# The iptables extension, where iptables loads extensions from.
	[[ ! -f $ROOT/build/libxt_cuckoo.so || -z $XTLIBDIR ]] ||
		echo "$XTLIBDIR/libxt_cuckoo.so"
}

# files DIR: the files (not directories) under DIR, as absolute paths in it.
files() {
	(cd "$1" && find . ! -type d -printf '/%P\n' | sort)
}

mk() {
	make -C "$SRC" --no-print-directory CNF_XDP=n "$@"
}

no_headers() {
	local out rc
	out=$(mk module KVER=9.9.9-none 2>&1)
	rc=$?
	echo "$out"
	((rc != 0)) &&
		grep -qF 'apt install linux-headers-9.9.9-none' <<<"$out" &&
		grep -qF 'make KVER=RELEASE' <<<"$out" &&
		[[ ! -e $SRC/cuckoo_nf.ko ]]
}

# make module with the headers as given (KDIR=): Debian's 6.1 headers
# have neither vmlinux nor resolve_btfids.
xdp_auto() {
	local kdir=/lib/modules/$KVER/build out rc notes
	[[ ! -f $kdir/vmlinux ]] || { echo "$kdir has vmlinux: not a kernel this step is about"; return 1; }
	out=$(make -C "$SRC" --no-print-directory module KVER="$KVER" KDIR="$kdir" CNF_XDP=y 2>&1)
	rc=$?
	echo "CNF_XDP=y: exit $rc"
	if ((rc == 0)) || ! grep -qF 'error: cuckoo_nf.ko has no .BTF section' <<<"$out"; then
		echo "$out"
		return 1
	fi
	out=$(make -C "$SRC" --no-print-directory module KVER="$KVER" KDIR="$kdir" 2>&1)
	rc=$?
	echo "$out" | tail -n 3
	notes=$(grep -c 'kernel-btf:' <<<"$out")
	((rc == 0 && notes == 1)) && [[ -f $SRC/cuckoo_nf.ko ]] &&
		grep -qF 'note: cuckoo_nf.ko built without its XDP/tc kfuncs: vmlinux, resolve_btfids missing' <<<"$out"
}

# insmod of the unsigned module in the VM booted with
# module.sig_enforce=1 (as Secure Boot's lockdown enforces): refused,
# with the message the docs quote, and the kernel saying why.
sig_enforce() {
	local out
	[[ -f $SRC/cuckoo_nf.ko ]] || { echo "no module built"; return 1; }
	out=$(CNF_KO=$SRC/cuckoo_nf.ko CNF_VM_APPEND=module.sig_enforce=1 CNF_VM_TIMEOUT=300 \
		CNF_VM_LOG=$OUT/sig_enforce.log selftests/vm/run --no-insmod -- \
		bash -c 'cat /sys/module/module/parameters/sig_enforce; if insmod /cnf/cuckoo_nf.ko; then echo LOADED; fi; dmesg | grep -i "cuckoo_nf\|unsigned module"' 2>&1)
	echo "$out" | grep -v '^vm: ' | tail -n 5
	grep -qx 'Y' <<<"$out" && ! grep -q '^LOADED' <<<"$out" &&
		grep -qF 'Key was rejected by service' <<<"$out"
}

install_all() {
	local d=$OUT/destdir out
	rm -rf "$d"
	# Files of others, there before: uninstall must leave them.
	install -D /dev/null "$d/usr/local/sbin/other-tool"
	install -D /dev/null "$d/etc/systemd/system/other.service"
	install -D /dev/null "$d/lib/modules/$KVER/extra/other.ko"
	out=$(mk install KVER="$KVER" DESTDIR="$d" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -qxF "install: $d/lib/modules/$KVER/extra/cuckoo_nf.ko, for kernel $KVER" <<<"$out" &&
		grep -q '^install: unsigned (.*Secure Boot.*Key was rejected by service' <<<"$out" || return 1
	diff -u <({ expected; printf '%s\n' /usr/local/sbin/other-tool \
		/etc/systemd/system/other.service "/lib/modules/$KVER/extra/other.ko"; } | sort) \
		<(files "$d") || return 1
	[[ $(stat -c %a "$d/etc/crowdsec/bouncers/cuckoo-crowdsec-bouncer.yaml") == 600 ]] &&
		[[ $(modinfo -F vermagic "$d/lib/modules/$KVER/extra/cuckoo_nf.ko") == "$KVER "* ]] &&
		grep -q '^ExecStart=/usr/local/sbin/cuckooctl ' "$d/etc/systemd/system/cuckoo_nf.service"
}

uninstall_all() {
	local d=$OUT/destdir
	mk uninstall KVER="$KVER" DESTDIR="$d" || return 1
	diff -u <(printf '%s\n' /usr/local/sbin/other-tool /etc/systemd/system/other.service \
		"/lib/modules/$KVER/extra/other.ko" | sort) <(files "$d")
}

# A set-up bouncer configuration survives uninstall, and is named.
uninstall_keeps_conf() {
	local d=$OUT/destdir2 conf out
	rm -rf "$d"
	mk install KVER="$KVER" DESTDIR="$d" || return 1
	conf=$d/etc/crowdsec/bouncers/cuckoo-crowdsec-bouncer.yaml
	echo "# set up" >>"$conf"
	out=$(mk uninstall KVER="$KVER" DESTDIR="$d" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -qF "uninstall: $conf kept" <<<"$out" &&
		diff -u <(echo /etc/crowdsec/bouncers/cuckoo-crowdsec-bouncer.yaml) <(files "$d")
}

# A build directory with a module key: Debian's headers seen through
# symlinks, plus the key CONFIG_MODULE_SIG_KEY names and its certificate.
signed_install() {
	local b=/lib/modules/$KVER/build k=$OUT/kdir-signed d=$OUT/destdir-signed out f key
	rm -rf "$k" "$d"
	mkdir -p "$k/certs"
	for f in "$b"/* "$b"/.config "$b"/.kernelvariables; do
		[[ -e $f ]] && ln -s "$(readlink -f "$f")" "$k/${f##*/}"
	done
	key=$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$/\1/p' "$b/.config")
	[[ -n $key && $key != /* ]] || { echo "$b/.config: CONFIG_MODULE_SIG_KEY=$key"; return 1; }
	mkdir -p "$(dirname "$k/$key")"
	openssl req -new -nodes -utf8 -sha256 -days 1 -batch -x509 \
		-subj "/CN=cuckoo_nf check-install key/" -outform PEM \
		-keyout "$k/$key" -out "$k/$key.crt" 2>&1 || return 1
	cat "$k/$key.crt" >>"$k/$key"
	openssl x509 -in "$k/$key.crt" -outform DER -out "$k/certs/signing_key.x509" || return 1
	out=$(mk install KVER="$KVER" KDIR="$k" DESTDIR="$d" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -qxF "install: signed with the kernel's module key (cuckoo_nf check-install key)" <<<"$out" &&
		[[ $(modinfo -F signer "$d/lib/modules/$KVER/extra/cuckoo_nf.ko") == "cuckoo_nf check-install key" ]]
}

# cuckoo_nf.service's start on a kernel without the module (one a
# release no module directory has, through a uname that says so): it
# fails with one line naming the kernel and its headers package.
unit_no_module() {
	local unit=userspace/systemd/cuckoo_nf.service cmd bin=$OUT/bin out rc
	cmd=$(sed -n "s/^ExecStartPre=\/bin\/sh -c '\(.*\)'\$/\1/p" "$unit" | sed 's/\$\$/$/g')
	[[ -n $cmd ]] || { echo "$unit: no ExecStartPre=/bin/sh -c '...'"; return 1; }
	mkdir -p "$bin"
	printf '#!/bin/sh\necho 9.9.9-none\n' >"$bin/uname"
	chmod 755 "$bin/uname"
	out=$(PATH=$bin:$PATH sh -c "$cmd" 2>&1)
	rc=$?
	echo "exit $rc: $out"
	((rc != 0)) && [[ $(wc -l <<<"$out") == 1 ]] &&
		grep -qF 'running kernel 9.9.9-none' <<<"$out" &&
		grep -qF 'apt install linux-headers-9.9.9-none' <<<"$out"
}

main() {
	rm -rf "$OUT"
	mkdir -p "$SRC"
	KVER=$(scripts/kver) || exit 1
	# The tree as it is now, without what it built.
	git ls-files -co --exclude-standard -z | cpio -0pdm --quiet "$SRC" || exit 1
	tally_step "no headers: an error naming the package" no_headers
	tally_step "headers without BTF: built without kfuncs, one line" xdp_auto &&
		tally_step "module.sig_enforce=1: the unsigned module refused" sig_enforce
	tally_step "install: kernel $KVER, every file" install_all &&
		tally_step "uninstall: nothing of it left" uninstall_all
	tally_step "uninstall: a set-up configuration kept" uninstall_keeps_conf
	tally_step "install: signed with the kernel's key" signed_install
	tally_step "cuckoo_nf.service: no module, one line" unit_no_module
	summary
	((FAIL == 0))
}

main "$@"
