#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-dkms (part of make check-kernels): the module as an operator
# gets it, on Debian 12's 6.1 and 6.12 cloud kernels.  As root.
#
#  1. make dkms-install: the sources (no build product) in
#     /usr/src/cuckoo-nf-VERSION, dkms add; per kernel, dkms build and
#     dkms install into /lib/modules/RELEASE/updates/dkms, its version and
#     vermagic checked, and its .BTF where the headers can make it
#     (6.12's); its signature by DKMS's key (/var/lib/dkms/mok.pub:
#     modinfo -F signer and sig_key); then a VM boots that kernel, the
#     DKMS-built module is put back in the same place there, and modprobe must load it from there
#     (selftests/vm/dkms-modprobe.sh); make dkms-uninstall must take it
#     away again.
#  2. make deb (lintian errors fail it) and both packages unpacked into a
#     scratch root: their control fields, maintainer scripts (sh -n),
#     man page (man --warnings), completion (bash -n), the unit
#     (systemd-analyze verify --root), and the packaged sources built by
#     DKMS inside the scratch root (--dkmstree/--sourcetree/--installtree,
#     nothing of the host's DKMS touched): the module's modinfo version
#     and the packaged cuckooctl's --version must both be VERSION.
#
# Installs dkms, lintian (deps.sh --pkg) and the 6.12 kernel (--kernels).
# Logs in build/check-dkms/.  The host is left as found: the DKMS tree
# of cuckoo-nf VERSION is removed at the start and at the end.  The last
# line is "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOGS=$ROOT/build/check-dkms
KERNELS=(6.1 6.12)
cd "$ROOT" || exit 1

# shellcheck source=tally.sh
source "$ROOT/scripts/tally.sh"

# step NAME LOG COMMAND...: pass or fail NAME by COMMAND's status; its
# output goes to LOG (shown when it fails).
step() {
	local name=$1 log=$LOGS/$2
	shift 2
	if "$@" >"$log" 2>&1; then
		pass "$name" ok
		return 0
	fi
	tail -n 20 "$log" | sed 's/^/  | /'
	fail "$name" "FAILED (build/check-dkms/${log##*/})"
	return 1
}

# The host's DKMS state of this version, gone.
dkms_clean() {
	make -s --no-print-directory dkms-uninstall
	! dkms status -m cuckoo-nf -v "$VERSION" | grep -q .
}

# dkms_source_clean: the copy in /usr/src has sources only.
dkms_source_clean() {
	local src=/usr/src/cuckoo-nf-$VERSION
	[[ -f $src/dkms.conf && -f $src/Kbuild && -f $src/module/main.c ]] &&
		! find "$src" -name '*.o' -o -name '*.ko*' -o -name '.*.cmd' | grep .
}

# dkms_kernel RELEASE: build and install for RELEASE; KO is the result.
dkms_kernel() {
	local rel=$1 v vm f log
	dkms build -m cuckoo-nf -v "$VERSION" -k "$rel" &&
		dkms install -m cuckoo-nf -v "$VERSION" -k "$rel" || return 1
	KO=
	for f in /lib/modules/"$rel"/updates/dkms/cuckoo_nf.ko*; do
		[[ -f $f ]] && KO=$f
	done
	[[ -n $KO ]] || { echo "no module in /lib/modules/$rel/updates/dkms"; return 1; }
	v=$(modinfo -F version "$KO")
	vm=$(modinfo -F vermagic "$KO")
	echo "$KO: version $v, vermagic $vm"
	[[ $v == "$VERSION" && ${vm%% *} == "$rel" ]] || return 1
	# Headers that can give it module BTF (6.12's), and it has it.
	if [[ -f /lib/modules/$rel/build/vmlinux ]]; then
		CNF_XDP=y bash scripts/kernel-btf.sh check "/lib/modules/$rel/build" "$KO" &&
			echo "$KO: has .BTF (XDP kfuncs)"
	else
		# Built all the same, and DKMS's make.log says in one line
		# what was left out.
		log=/var/lib/dkms/cuckoo-nf/$VERSION/$rel/$(uname -m)/log/make.log
		echo "$KO: no .BTF expected: the headers have no vmlinux"
		grep -F 'built without its XDP/tc kfuncs' "$log" ||
			{ echo "$log: no note of the kfuncs left out"; return 1; }
	fi
}

# dkms_signed: KO carries a signature by DKMS's key (Debian's dkms signs
# every module it builds with /var/lib/dkms/mok.key, made at its first
# build): modinfo's signer is the certificate's subject CN, its sig_key
# the certificate's serial.
dkms_signed() {
	local cert=/var/lib/dkms/mok.pub cn serial signer key
	[[ -f $cert ]] || { echo "no $cert: DKMS made no key"; return 1; }
	cn=$(openssl x509 -inform DER -in "$cert" -noout -subject -nameopt RFC2253 |
		sed -n 's/^subject=.*CN=\([^,]*\).*/\1/p')
	serial=$(openssl x509 -inform DER -in "$cert" -noout -serial | sed 's/^serial=//')
	signer=$(modinfo -F signer "$KO")
	key=$(modinfo -F sig_key "$KO" | tr -d ':')
	echo "$KO: signer '$signer', sig_key $key; $cert: CN '$cn', serial $serial"
	[[ -n $cn && $signer == "$cn" && ${key^^} == "${serial^^}" ]]
}

dkms_vm() {
	local rel=$1
	KVER=$rel CNF_KO=$KO CNF_VM_LOG=$LOGS/vm-$rel.console \
		selftests/vm/run --no-insmod selftests/vm/dkms-modprobe.sh \
		"$VERSION" "${KO##*/}"
}

dkms_gone() {
	local k
	for k in "${RELS[@]}"; do
		if ls /lib/modules/"$k"/updates/dkms/cuckoo_nf.ko* 2>/dev/null; then
			return 1
		fi
	done
	[[ ! -e /usr/src/cuckoo-nf-$VERSION ]]
}

# ---- packages in a scratch root ----

deb_unpack() {
	local d
	rm -rf "$SCRATCH"
	mkdir -p "$SCRATCH"
	for d in build/deb/cuckoo-nf-dkms_"$VERSION"-*_all.deb \
		 build/deb/cuckooctl_"$VERSION"-*_*.deb \
		 build/deb/cuckoo-crowdsec-bouncer_"$VERSION"-*_*.deb; do
		[[ -f $d ]] || { echo "$d missing"; return 1; }
		echo "== $d"
		dpkg-deb -f "$d" Package Version Architecture Depends
		[[ $(dpkg-deb -f "$d" Version) == "$VERSION"-* ]] || return 1
		dpkg-deb -x "$d" "$SCRATCH" || return 1
		dpkg-deb -e "$d" "$SCRATCH/DEBIAN.${d##*/}" || return 1
	done
	for d in "$SCRATCH"/DEBIAN.*/{postinst,prerm}; do
		[[ -f $d ]] || continue
		sh -n "$d" || { echo "$d: syntax"; return 1; }
	done
	[[ -f $SCRATCH/usr/src/cuckoo-nf-$VERSION/dkms.conf && -x $SCRATCH/usr/sbin/cuckooctl &&
	   -f $SCRATCH/usr/share/man/man8/cuckooctl.8.gz &&
	   -f $SCRATCH/usr/share/bash-completion/completions/cuckooctl &&
	   -f $SCRATCH/lib/systemd/system/cuckoo_nf.service &&
	   -f $SCRATCH/etc/fail2ban/action.d/cuckoo_nf.conf ]]
}

deb_files() {
	local w
	w=$(MANWIDTH=80 man --warnings -l "$SCRATCH/usr/share/man/man8/cuckooctl.8.gz" 2>&1 >/dev/null)
	[[ -z $w ]] || { echo "man: $w"; return 1; }
	bash -n "$SCRATCH/usr/share/bash-completion/completions/cuckooctl" || return 1
	# The root has every file the unit names but modprobe and the shell:
	# the host's.
	mkdir -p "$SCRATCH/sbin" "$SCRATCH/bin" && cp /sbin/modprobe "$SCRATCH/sbin/" &&
		cp /bin/sh "$SCRATCH/bin/" &&
		MANPATH=$SCRATCH/usr/share/man systemd-analyze verify --root="$SCRATCH" \
			/lib/systemd/system/cuckoo_nf.service 2>&1 | tee "$LOGS/verify.out"
	[[ ${PIPESTATUS[0]} == 0 && ! -s $LOGS/verify.out ]]
}

# The packaged sources, built by DKMS in the scratch root.
deb_build() {
	local rel=$1 t=$SCRATCH/var/lib/dkms ko v out
	local -a tree=(--dkmstree "$t" --sourcetree "$SCRATCH/usr/src" --installtree "$SCRATCH/lib/modules")
	mkdir -p "$t"
	dkms add -m cuckoo-nf -v "$VERSION" "${tree[@]}" &&
		dkms build -m cuckoo-nf -v "$VERSION" -k "$rel" "${tree[@]}" || return 1
	for ko in "$t/cuckoo-nf/$VERSION/$rel/x86_64/module/"cuckoo_nf.ko*; do
		[[ -f $ko ]] && break
	done
	v=$(modinfo -F version "$ko")
	out=$("$SCRATCH/usr/sbin/cuckooctl" --version | head -n1)
	echo "$ko: version $v; packaged cuckooctl: $out"
	[[ $v == "$VERSION" && $out == "cuckooctl $VERSION (ABI 1)" ]]
}

main() {
	local k rel
	mkdir -p "$LOGS"
	step deps deps.log scripts/deps.sh --pkg --kernels || { summary; exit 1; }
	VERSION=$(make -s --no-print-directory version)
	SCRATCH=$ROOT/build/check-dkms/root
	RELS=()
	for k in "${KERNELS[@]}"; do
		RELS+=("$(KVER=$k scripts/kver)") || { fail "$k" "not installed"; summary; exit 1; }
	done
	trap 'make -s --no-print-directory dkms-uninstall >/dev/null 2>&1' EXIT
	step "dkms clean start" clean.log dkms_clean
	if step "dkms-install" dkms-install.log make --no-print-directory dkms-install &&
	   step "dkms source clean" source.log dkms_source_clean; then
		for rel in "${RELS[@]}"; do
			step "dkms $rel" "dkms-$rel.log" dkms_kernel "$rel" &&
				step "dkms signed $rel" "signed-$rel.log" dkms_signed &&
				step "modprobe $rel" "vm-$rel.log" dkms_vm "$rel"
		done
	fi
	step "dkms-uninstall" dkms-uninstall.log dkms_clean && step "dkms gone" gone.log dkms_gone
	if step "make deb" deb.log make --no-print-directory deb &&
	   step "deb unpack" deb-unpack.log deb_unpack; then
		step "deb files" deb-files.log deb_files
		step "deb dkms ${RELS[0]}" deb-build.log deb_build "${RELS[0]}"
	fi
	summary
	((FAIL == 0))
}

main "$@"
