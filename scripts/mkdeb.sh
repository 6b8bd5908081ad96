#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the source package and its three binary packages, built from
# debian/ by dpkg-buildpackage -us -uc (debhelper 13, dh_dkms,
# dh_installsystemd), into build/deb/; then lintian on them (the .changes:
# source and binaries), whose errors and warnings fail it:
#
#   cuckoo-nf-dkms_VERSION-REV_all.deb      the module's sources, built by DKMS
#   cuckooctl_VERSION-REV_ARCH.deb          cuckooctl, cuckoo_nf.service, the
#                                           fail2ban action, XDP/tc objects
#   cuckoo-crowdsec-bouncer_VERSION-REV_ARCH.deb
#   cuckoo-nf_VERSION-REV.dsc, .debian.tar.xz, cuckoo-nf_VERSION.orig.tar.xz
#
# VERSION is dkms.conf's PACKAGE_VERSION; debian/changelog's first entry
# must be VERSION-REV (an error says how to add one).  The tree as it is,
# tracked and untracked files but not what .gitignore leaves out (the
# build), is copied to build/deb/src/cuckoo-nf-VERSION and built there: the
# tree's own build is untouched.  Dates are the last commit's
# (SOURCE_DATE_EPOCH), so the same tree gives the same packages.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/deb
cd "$ROOT"

die() { echo "mkdeb: $*" >&2; exit 1; }

VERSION=$(make -s --no-print-directory version)
[[ -n $VERSION ]] || die "no version in dkms.conf"
DEBVER=$(dpkg-parsechangelog -l debian/changelog -S Version)
[[ $DEBVER == "$VERSION"-* ]] ||
	die "debian/changelog's version $DEBVER is not dkms.conf's $VERSION-REV: add an entry (dch -v $VERSION-1)"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || dpkg-parsechangelog -S Timestamp)}
export SOURCE_DATE_EPOCH

rm -rf "$OUT"
SRC=$OUT/src/cuckoo-nf-$VERSION
mkdir -p "$SRC"
git ls-files -co --exclude-standard -z | cpio -0pdm --quiet "$SRC"

# The upstream tarball: the tree without debian/.
tar -C "$OUT/src" --sort=name --owner=0 --group=0 --numeric-owner \
	--mtime="@$SOURCE_DATE_EPOCH" --exclude="cuckoo-nf-$VERSION/debian" \
	-cJf "$OUT/src/cuckoo-nf_$VERSION.orig.tar.xz" "cuckoo-nf-$VERSION"

(cd "$SRC" && dpkg-buildpackage -us -uc) >"$OUT/build.log" 2>&1 || {
	tail -n 40 "$OUT/build.log" >&2
	die "dpkg-buildpackage failed (build/deb/build.log)"
}
mv "$OUT"/src/*.deb "$OUT"/src/*.dsc "$OUT"/src/*.tar.xz "$OUT"/src/*.changes \
	"$OUT"/src/*.buildinfo "$OUT/"
rm -rf "$OUT/src"
ls -l "$OUT"/*.deb

if command -v lintian >/dev/null; then
	lintian --info --display-info --fail-on error,warning "$OUT"/*.changes
else
	echo "mkdeb: lintian not installed (scripts/deps.sh --pkg), not run" >&2
fi
