#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-dkms (part of make check-kernels): the module as an operator
# gets it, on Debian 12's 6.1 and 6.12 cloud kernels and on the newest
# Debian kernel (sid's, 7.2 today).  As root.
#
#  1. make dkms-install: the sources (no build product) in
#     /usr/src/cuckoo-nf-VERSION, dkms add; per kernel, dkms build and
#     dkms install into /lib/modules/RELEASE/updates/dkms, its version and
#     vermagic checked, and its .BTF where the headers can make it
#     (6.12's); its signature by DKMS's key (/var/lib/dkms/mok.pub:
#     modinfo -F signer and sig_key); then a VM boots that kernel, the
#     DKMS-built module is put back in the same place there, and modprobe must load it from there
#     (selftests/vm/dkms-modprobe.sh).  A kernel upgrade: the module
#     removed from the newest of these kernels, then that kernel's
#     headers package installed again (apt runs DKMS's
#     /etc/kernel/header_postinst.d hook, as for a newly installed
#     kernel) must build and install it again (AUTOINSTALL).  make
#     dkms-uninstall must take it all away again.
#  2. make deb (lintian errors fail it) and both packages unpacked into a
#     scratch root: their control fields, maintainer scripts (sh -n),
#     man page (man --warnings), completion (bash -n), the unit
#     (systemd-analyze verify --root), and the packaged sources built by
#     DKMS inside the scratch root (--dkmstree/--sourcetree/--installtree,
#     nothing of the host's DKMS touched): the module's modinfo version
#     and the packaged cuckooctl's --version must both be VERSION.
#  3. The newest kernel, in the sid root that has its headers and sid's
#     own dkms (scripts/sid-root.sh): cuckoo-nf-dkms installed there with
#     dpkg -i, dkms autoinstall for that kernel, the module's version,
#     vermagic, .BTF and signature by that root's DKMS key checked, and a
#     VM booting that kernel loads it with modprobe; the package is
#     purged again, and must leave no module behind.
#
# Installs dkms, lintian (deps.sh --pkg), the 6.12 kernel and the sid
# root (--kernels).  Logs in build/check-dkms/.  The host is left as
# found: the DKMS tree of cuckoo-nf VERSION is removed at the start and
# at the end, and the sid root has no cuckoo-nf-dkms after.  The last
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

# dkms_signed [ROOT]: KO carries a signature by DKMS's key (Debian's dkms
# signs every module it builds with ROOT/var/lib/dkms/mok.key, made at
# its first build): modinfo's signer is the certificate's subject CN, its
# sig_key the certificate's serial.
dkms_signed() {
	local cert=${1:-}/var/lib/dkms/mok.pub cn serial signer key
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

# dkms_upgrade RELEASE: as if RELEASE were newly installed: the module
# taken off it, then its headers package installed again, whose
# postinst runs DKMS's header_postinst.d hook; AUTOINSTALL must bring the
# module back, built for RELEASE.
dkms_upgrade() {
	local rel=$1 pkg f
	pkg=$(dpkg -S "/lib/modules/$rel/build" 2>/dev/null | sed -n '1s/:.*//p')
	[[ -n $pkg ]] || { echo "no package owns /lib/modules/$rel/build"; return 1; }
	dkms remove -m cuckoo-nf -v "$VERSION" -k "$rel" || return 1
	for f in /lib/modules/"$rel"/updates/dkms/cuckoo_nf.ko*; do
		[[ -e $f ]] && { echo "$f still there after dkms remove"; return 1; }
	done
	echo "== apt-get install --reinstall $pkg"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall "$pkg" || return 1
	dkms status -m cuckoo-nf -v "$VERSION" -k "$rel"
	dkms status -m cuckoo-nf -v "$VERSION" -k "$rel" | grep -q ': installed' || return 1
	for f in /lib/modules/"$rel"/updates/dkms/cuckoo_nf.ko*; do
		[[ -f $f ]] || continue
		echo "$f: vermagic $(modinfo -F vermagic "$f")"
		[[ $(modinfo -F vermagic "$f") == "$rel "* ]] && return 0
	done
	echo "no module for $rel after its headers were installed"
	return 1
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

# ---- the newest kernel, in the sid root ----

# sid_in ARGS...: ARGS run in the sid root.
sid_in() {
	scripts/sid-root.sh run "$@"
}

# sid_deb RELEASE: the cuckoo-nf-dkms package on a system running sid's
# RELEASE: installed with dpkg -i (dh_dkms's postinst adds it to DKMS),
# then dkms autoinstall for RELEASE.  KO is the module installed, its
# path outside the root.
sid_deb() {
	local rel=$1 deb="" f
	for f in build/deb/cuckoo-nf-dkms_"$VERSION"-*_all.deb; do
		[[ -f $f ]] && deb=$f
	done
	[[ -n $deb ]] || { echo "no cuckoo-nf-dkms $VERSION package in build/deb"; return 1; }
	sid_in dpkg --purge cuckoo-nf-dkms >/dev/null 2>&1
	sid_in env DEBIAN_FRONTEND=noninteractive dpkg -i "$ROOT/$deb" &&
		sid_in dkms autoinstall -k "$rel" &&
		sid_in dkms status -m cuckoo-nf -v "$VERSION" -k "$rel" || return 1
	KO=
	for f in "$SID"/lib/modules/"$rel"/updates/dkms/cuckoo_nf.ko*; do
		[[ -f $f ]] && KO=$f
	done
	[[ -n $KO ]] || { echo "no module in the root's /lib/modules/$rel/updates/dkms"; return 1; }
	echo "$KO: version $(modinfo -F version "$KO"), vermagic $(modinfo -F vermagic "$KO")"
	[[ $(modinfo -F version "$KO") == "$VERSION" &&
	   $(modinfo -F vermagic "$KO") == "$rel "* ]] || return 1
	# sid's headers have vmlinux: the kfuncs are built in.
	CNF_XDP=y bash scripts/kernel-btf.sh check "$SID/lib/modules/$rel/build" "$KO" &&
		echo "$KO: has .BTF (XDP kfuncs)"
}

# sid_purge: the package purged from the root leaves no module there.
sid_purge() {
	local rel=$1 f
	sid_in dpkg --purge cuckoo-nf-dkms || return 1
	for f in "$SID"/lib/modules/"$rel"/updates/dkms/cuckoo_nf.ko* \
		 "$SID"/usr/src/cuckoo-nf-"$VERSION"; do
		[[ -e $f ]] && { echo "$f left behind by dpkg --purge"; return 1; }
	done
	echo "purged: no module, no sources left in the root"
}

# newest: step 3, when the sid root is there (deps.sh --kernels makes it).
newest() {
	local rel
	if ! SID=$(scripts/sid-root.sh path) || ! rel=$(scripts/sid-root.sh release) ||
	   [[ -z $rel ]]; then
		fail "sid root" "not made (scripts/sid-root.sh make)"
		return
	fi
	step "deb dkms $rel (sid root)" "sid-$rel.log" sid_deb "$rel" &&
		step "dkms signed $rel" "signed-$rel.log" dkms_signed "$SID" &&
		step "modprobe $rel" "vm-$rel.log" dkms_vm "$rel"
	step "deb purge $rel (sid root)" "sid-purge.log" sid_purge "$rel"
}

main() {
	local k rel
	mkdir -p "$LOGS"
	step deps deps.log scripts/deps.sh --pkg --kernels || { summary; exit 1; }
	# The VMs' cuckooctl (selftests/vm/run ships build/cuckooctl): a
	# fresh checkout has none yet.
	step "cuckooctl" userspace.log make --no-print-directory userspace ||
		{ summary; exit 1; }
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
		rel=${RELS[-1]}
		step "dkms autoinstall $rel" "upgrade-$rel.log" dkms_upgrade "$rel"
	fi
	step "dkms-uninstall" dkms-uninstall.log dkms_clean && step "dkms gone" gone.log dkms_gone
	if step "make deb" deb.log make --no-print-directory deb &&
	   step "deb unpack" deb-unpack.log deb_unpack; then
		step "deb files" deb-files.log deb_files
		step "deb dkms ${RELS[0]}" deb-build.log deb_build "${RELS[0]}"
		newest
	fi
	summary
	((FAIL == 0))
}

main "$@"
