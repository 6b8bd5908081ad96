#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the two Debian packages, into build/deb/, with dpkg-deb (no
# debian/ directory, no debhelper), then lintian on both when installed
# (scripts/deps.sh --pkg):
#
#   cuckoo-nf-dkms_VERSION-1_all.deb   the module's sources in
#       /usr/src/cuckoo-nf-VERSION (make dkms-install DESTDIR=), built and
#       installed for the kernels with headers by DKMS in postinst
#       (/usr/lib/dkms/common.postinst, as dh_dkms does), removed from
#       every kernel in prerm.
#   cuckooctl_VERSION-1_amd64.deb      /usr/sbin/cuckooctl (built with
#       dpkg-buildflags' hardening flags, stripped), cuckooctl(8), bash
#       completion, /lib/systemd/system/cuckoo_nf.service (not enabled:
#       `systemctl enable --now cuckoo_nf`), fail2ban's action
#       /etc/fail2ban/action.d/cuckoo_nf.conf (a conffile), the XDP program
#       /usr/lib/cuckoo_nf/cuckoo_xdp.o (for ip-link; cuckooctl embeds it)
#       and the tc program /usr/lib/cuckoo_nf/cuckoo_tc.o (for tc).
#
# VERSION is dkms.conf's PACKAGE_VERSION.  The maintainer is $DEBFULLNAME
# <$DEBEMAIL> when set, else the author of the last commit; every date is
# the last commit's (SOURCE_DATE_EPOCH), so the same commit gives the same
# packages.  Exits non-zero when a build fails or lintian reports an error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/deb
cd "$ROOT"

die() { echo "mkdeb: $*" >&2; exit 1; }

VERSION=$(make -s --no-print-directory version)
[[ -n $VERSION ]] || die "no version in dkms.conf"
DEBVER=$VERSION-1
ARCH=$(dpkg --print-architecture)
MAINT="${DEBFULLNAME:-$(git log -1 --format=%an)} <${DEBEMAIL:-$(git log -1 --format=%ae)}>"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH
DATE=$(date -u -R -d "@$SOURCE_DATE_EPOCH")

rm -rf "$OUT"
mkdir -p "$OUT"
STAGE=$OUT/stage

# doc PACKAGE: copyright and changelog, as Debian policy wants them.
doc() {
	local pkg=$1 d=$STAGE/$1/usr/share/doc/$1
	install -d "$d"
	cat >"$d/copyright" <<-EOF
	Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
	Upstream-Name: cuckoo_nf

	Files: *
	Copyright: $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) cuckoo_nf developers
	License: GPL-2
	 This program is free software; you can redistribute it and/or modify it
	 under the terms of the GNU General Public License version 2 as published
	 by the Free Software Foundation.
	 .
	 On Debian systems, the complete text of the GNU General Public License
	 version 2 can be found in /usr/share/common-licenses/GPL-2.
	EOF
	cat <<-EOF | gzip -9n >"$d/changelog.Debian.gz"
	$pkg ($DEBVER) unstable; urgency=medium

	  * Built from commit $(git rev-parse --short HEAD) by make deb.

	 -- $MAINT  $DATE
	EOF
}

# control PACKAGE ARCH FIELDS...: DEBIAN/control (the size computed here)
# and DEBIAN/md5sums (of every file but the conffiles, as dh_md5sums: dpkg
# keeps theirs itself).
control() {
	local pkg=$1 arch=$2 dir=$STAGE/$1
	shift 2
	install -d "$dir/DEBIAN"
	{
		echo "Package: $pkg"
		echo "Version: $DEBVER"
		echo "Architecture: $arch"
		echo "Maintainer: $MAINT"
		echo "Installed-Size: $(du -sk --exclude=DEBIAN "$dir" | cut -f1)"
		printf '%s\n' "$@"
	} >"$dir/DEBIAN/control"
	[[ -f $dir/DEBIAN/conffiles ]] || : >"$dir/DEBIAN/conffiles"
	(cd "$dir" && find . -path ./DEBIAN -prune -o -type f -printf '/%P\n' |
		{ grep -vxF -f DEBIAN/conffiles || true; } |
		sed 's,^/,,' | sort | tr '\n' '\0' | xargs -0 md5sum) >"$dir/DEBIAN/md5sums"
	[[ -s $dir/DEBIAN/conffiles ]] || rm "$dir/DEBIAN/conffiles"
}

# script PACKAGE NAME: a maintainer script from stdin.
script() {
	install -m 755 /dev/stdin "$STAGE/$1/DEBIAN/$2"
}

build() {
	dpkg-deb --root-owner-group -Zxz --build "$STAGE/$1" "$OUT" >&2
}

# ---- cuckoo-nf-dkms ----
P=cuckoo-nf-dkms
make -s --no-print-directory dkms-install DESTDIR="$STAGE/$P"
doc $P
control $P all \
	"Depends: dkms (>= 2.1.0.0)" \
	"Recommends: cuckooctl (= $DEBVER)" \
	"Section: kernel" \
	"Priority: optional" \
	"Description: cuckoo_nf source address filter kernel module (DKMS)" \
	" cuckoo_nf drops packets from listed IPv4 and IPv6 source addresses in" \
	" a netfilter hook at PRE_ROUTING, the list held in an exact cuckoo" \
	" filter per network namespace.  This package has the module's sources;" \
	" DKMS builds and installs cuckoo_nf.ko for each installed kernel that" \
	" has its headers, and again at every kernel update.  The list is" \
	" managed with cuckooctl, from the package of that name."
script $P postinst <<EOF
#!/bin/sh
# Add, build and install the module for the kernels with headers.
set -e
if [ "\$1" = configure ]; then
	/usr/lib/dkms/common.postinst cuckoo-nf $VERSION /usr/share/$P "" "\$2"
fi
EOF
script $P prerm <<EOF
#!/bin/sh
# Remove the module from every kernel DKMS built it for.
set -e
case "\$1" in
remove|upgrade|deconfigure)
	if [ -n "\$(dkms status -m cuckoo-nf -v $VERSION)" ]; then
		dkms remove -m cuckoo-nf -v $VERSION --all
	fi
	;;
esac
EOF
build $P

# ---- cuckooctl ----
P=cuckooctl
D=$STAGE/$P
# The hardening flags Debian builds with, all of them; a build of its own.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)" \
LDFLAGS=$(dpkg-buildflags --get LDFLAGS) \
	make -s --no-print-directory -C userspace B="$OUT/build" "$OUT/build/cuckooctl" \
	"$OUT/build/cuckoo_tc.o"
install -D -m 755 "$OUT/build/cuckooctl" "$D/usr/sbin/cuckooctl"
# As dh_strip does.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$D/usr/sbin/cuckooctl"
# The XDP program for ip-link(8) (cuckooctl has its own copy) and the tc
# program for tc(8): their BTF stays, the DWARF goes, as dh_strip does for
# objects.
for o in cuckoo_xdp.o cuckoo_tc.o; do
	install -D -m 644 "$OUT/build/$o" "$D/usr/lib/cuckoo_nf/$o"
	llvm-strip --strip-debug "$D/usr/lib/cuckoo_nf/$o"
done
# ELFs of the BPF machine in an amd64 package: what they are meant to be.
install -d "$D/usr/share/lintian/overrides"
printf '%s\n' "# BPF programs, loaded into the kernel (cuckooctl xdp, ip link ... xdp obj, tc ... bpf obj)" \
	"$P: binary-from-other-architecture [usr/lib/cuckoo_nf/cuckoo_xdp.o]" \
	"$P: binary-from-other-architecture [usr/lib/cuckoo_nf/cuckoo_tc.o]" \
	>"$D/usr/share/lintian/overrides/$P"
install -d "$D/usr/share/man/man8"
gzip -9n <userspace/cuckooctl.8 >"$D/usr/share/man/man8/cuckooctl.8.gz"
install -D -m 644 userspace/cuckooctl.bash-completion \
	"$D/usr/share/bash-completion/completions/cuckooctl"
install -D -m 644 userspace/systemd/cuckoo_nf.service \
	"$D/lib/systemd/system/cuckoo_nf.service"
# cuckooctl is in /usr/sbin here, the action's default path.
install -D -m 644 userspace/fail2ban/action.d/cuckoo_nf.conf \
	"$D/etc/fail2ban/action.d/cuckoo_nf.conf"
install -d "$D/DEBIAN"
echo /etc/fail2ban/action.d/cuckoo_nf.conf >"$D/DEBIAN/conffiles"
doc $P
LIBC=$(dpkg-query -W -f='${Version}' libc6 | sed 's/-.*//')
# libbpf1 by hand: cuckooctl opens it at run time (dlopen), for xdp.
LIBBPF=$(dpkg-query -W -f='${Version}' libbpf1 | sed 's/-.*//')
control $P "$ARCH" \
	"Depends: libc6 (>= $LIBC), libbpf1 (>= $LIBBPF), kmod" \
	"Recommends: cuckoo-nf-dkms (= $DEBVER)" \
	"Enhances: fail2ban" \
	"Section: admin" \
	"Priority: optional" \
	"Description: control tool of the cuckoo_nf source address filter" \
	" cuckooctl adds, deletes, lists, saves and restores the source addresses" \
	" the cuckoo_nf kernel module drops, and shows its counters, through" \
	" /dev/cuckoo_nf.  The package also has cuckoo_nf.service, which loads" \
	" the module and restores the saved sets before the network comes up" \
	" and saves them when stopped (not enabled by the package), an action" \
	" for fail2ban, cuckoo_nf, banning into a set per jail, and the XDP" \
	" program (cuckooctl xdp attach) that drops listed sources in the driver."
build $P
rm -rf "$STAGE" "$OUT/build"

ls -l "$OUT"/*.deb
if command -v lintian >/dev/null; then
	# Errors fail the build; the remaining warnings and notes are shown.
	lintian --info --display-info --fail-on error "$OUT"/*.deb
else
	echo "mkdeb: lintian not installed (scripts/deps.sh --pkg), not run" >&2
fi
