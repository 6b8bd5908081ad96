#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-deb: the packages' install, upgrade, remove and purge round,
# as piuparts does it, in a scratch Debian 12 root (chroot), as root:
#
#   1. the previous version's packages are installed: those its tree
#      builds (CNF_PREV_REV, by default the commit before debian/changelog
#      last changed, built with that tree's own scripts/mkdeb.sh);
#   2. the state cuckoo_nf.service keeps, /var/lib/cuckoo_nf/default.list,
#      is written as the unit would;
#   3. this tree's packages (make deb) upgrade them, and the bouncer's is
#      installed beside them: cuckoo_nf.service is enabled (its
#      sysinit.target.wants link), the bouncer is registered through cscli
#      (a stand-in that answers as crowdsec 1.4's does and logs its calls),
#      its key is in the configuration's .local (mode 0600), its unit
#      enabled, its configuration a conffile of mode 0600; DKMS has the
#      module's sources added;
#   4. all three are removed: what is left beside the root as it was
#      before step 1 is the saved sets, the conffiles, the files the
#      bouncer's postinst wrote and the units' enablement state, and
#      nothing of DKMS;
#   5. all three are purged: the root is as it was before step 1, and the
#      bouncer's registration was deleted (cscli bouncers delete).
#
# Then piuparts (1.1.7) runs its own install and purge test of the three
# packages on the same root (its -b base tarball, gzipped), its verdict a
# step of its own; it asks the Debian mirror for the index (apt-get
# update in its chroot).
#
# No service starts in the root (policy-rc.d, and no systemd runs there).
# The root is made once by mmdebstrap (scripts/deps.sh --pkg) with what
# the packages depend on, and kept in build/cache/deb-root-HASH.tar, HASH
# that of the list, so that a root made before a dependency was added is
# made again.  Logs in
# build/check-deb/.  The last line is "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/check-deb
# The packages' dependencies, and what their scripts use (deb-systemd-helper).
ROOT_PKGS=init-system-helpers,dkms,kmod,libbpf1,libcurl4,libjson-c5,libyaml-0-2,libmicrohttpd12
TAR=$ROOT/build/cache/deb-root-$(sha256sum <<<"$ROOT_PKGS" | cut -c1-12).tar
R=$OUT/root
CONF=/etc/crowdsec/bouncers/cuckoo-crowdsec-bouncer.yaml
cd "$ROOT" || exit 1

# shellcheck source=tally.sh
source "$ROOT/scripts/tally.sh"


in_root() { chroot "$R" "$@"; }

# The root of ROOT_PKGS, made once.
make_tar() {
	[[ -f $TAR && -s $TAR ]] && return 0
	# --format: the .tmp name would make mmdebstrap write a directory.
	mmdebstrap --variant=apt --format=tar --include="$ROOT_PKGS" \
		bookworm "$TAR.tmp" && mv "$TAR.tmp" "$TAR"
}

piuparts_run() {
	local tgz=${TAR%.tar}.tgz
	if [[ ! -s $tgz || $tgz -ot $TAR ]]; then
		gzip -1 -c "$TAR" >"$tgz.tmp" && mv "$tgz.tmp" "$tgz" || return 1
	fi
	piuparts -b "$tgz" --no-upgrade-test -d bookworm -m http://deb.debian.org/debian \
		build/deb/cuckoo-nf-dkms_*_all.deb build/deb/cuckooctl_*_*.deb \
		build/deb/cuckoo-crowdsec-bouncer_*_*.deb
}

prev_debs() {
	local rev=${CNF_PREV_REV:-} d=$OUT/prev
	if [[ -z $rev ]]; then
		rev=$(git log -1 --format=%H -- debian/changelog)^ || return 1
	fi
	echo "previous version: $(git log -1 --format='%h %s' "$rev")"
	rm -rf "$d"
	mkdir -p "$d"
	git archive "$rev" | tar -x -C "$d" || return 1
	# Its mkdeb.sh reads the commit from git: this repository's, at REV.
	(cd "$d" && GIT_DIR=$ROOT/.git GIT_WORK_TREE=$d bash scripts/mkdeb.sh) || return 1
	ls "$d"/build/deb/*.deb
}

new_debs() {
	scripts/mkdeb.sh
}

# snapshot FILE: every path of the root but those that change by
# themselves (apt's and dpkg's own, logs, caches, /tmp), with type, mode
# and, for links, target.
snapshot() {
	(cd "$R" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run \
		-o -path ./tmp -o -path ./var/tmp -o -path ./var/log -o -path ./var/cache \
		-o -path ./var/lib/apt -o -path ./var/lib/dpkg \) -prune \
		-o -printf '%y %m %p %l\n' | LC_ALL=C sort) >"$1"
}

# DKMS wants /proc, and /dev/fd for bash's process substitution.
unmount() {
	if mountpoint -q "$R/proc"; then
		umount "$R/proc" || { echo "check-deb: $R/proc still mounted" >&2; exit 1; }
	fi
}

setup_root() {
	unmount
	rm -rf "$R"
	mkdir -p "$R"
	tar -C "$R" -xf "$TAR" || return 1
	mount -t proc proc "$R/proc" || return 1
	[[ -e $R/dev/fd ]] || ln -s /proc/self/fd "$R/dev/fd"
	printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	# cscli as crowdsec 1.4.6's answers: bouncers add NAME prints the key
	# (-oraw), bouncers delete NAME; every call logged in /tmp.
	mkdir -p "$R/etc/crowdsec"
	echo "# crowdsec's configuration (its presence is what postinst looks for)" \
		>"$R/etc/crowdsec/config.yaml"
	cat >"$R/usr/bin/cscli" <<-'EOF'
	#!/bin/sh
	echo "$*" >>/tmp/cscli.calls
	case "$*" in
	*"bouncers add "*) echo 0123456789abcdef0123456789abcdef ;;
	*"bouncers delete "*) ;;
	*) echo "cscli stand-in: $*: not known" >&2; exit 1 ;;
	esac
	EOF
	chmod 755 "$R/usr/bin/cscli"
	mkdir -p "$R/tmp/debs/prev" "$R/tmp/debs/new"
	cp "$OUT"/prev/build/deb/*.deb "$R/tmp/debs/prev/" &&
		cp build/deb/cuckoo-nf-dkms_*.deb build/deb/cuckooctl_*.deb \
			build/deb/cuckoo-crowdsec-bouncer_*.deb "$R/tmp/debs/new/" || return 1
	rm -f "$R"/tmp/debs/*/*-dbgsym_*.deb
	snapshot "$OUT/before.list"
}

install_prev() {
	in_root sh -c 'dpkg -i /tmp/debs/prev/*.deb' || return 1
	in_root dpkg-query -W cuckoo-nf-dkms cuckooctl
	# What cuckoo_nf.service's StateDirectory and save-all leave.
	install -d -m 700 "$R/var/lib/cuckoo_nf"
	echo "# cuckoo_nf end 0 entries" >"$R/var/lib/cuckoo_nf/default.list"
}

version_is() {
	local v
	# shellcheck disable=SC2016 # dpkg-query's fields
	v=$(in_root dpkg-query -W -f='${Version} ${db:Status-Abbrev}' "$1") || return 1
	echo "$1: $v"
	[[ $v == "$2 ii " ]]
}

upgrade() {
	local v
	v=$(dpkg-deb -f build/deb/cuckooctl_*_*.deb Version)
	# As the README installs them (apt, local files), the bouncer's too;
	# no Recommends (crowdsec), which would need the network.
	in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/debs/new/*.deb' ||
		return 1
	version_is cuckoo-nf-dkms "$v" && version_is cuckooctl "$v" &&
		version_is cuckoo-crowdsec-bouncer "$v" || return 1
	[[ -L $R/etc/systemd/system/sysinit.target.wants/cuckoo_nf.service ]] ||
		{ echo "cuckoo_nf.service not enabled"; return 1; }
	[[ -L $R/etc/systemd/system/multi-user.target.wants/cuckoo-crowdsec-bouncer.service ]] ||
		{ echo "cuckoo-crowdsec-bouncer.service not enabled"; return 1; }
	grep -q -- '-oraw bouncers add cuckoo-bouncer-' "$R/tmp/cscli.calls" ||
		{ echo "no cscli bouncers add"; return 1; }
	grep -qx 'api_key: 0123456789abcdef0123456789abcdef' "$R$CONF.local" ||
		{ echo "no key in $CONF.local"; return 1; }
	[[ $(stat -c %a "$R$CONF.local") == 600 && $(stat -c %a "$R$CONF") == 600 ]] ||
		{ echo "$CONF or its .local not mode 0600"; return 1; }
	# shellcheck disable=SC2016 # dpkg-query's fields
	in_root dpkg-query -W -f='${Conffiles}\n' cuckoo-crowdsec-bouncer | grep -q " $CONF " ||
		{ echo "$CONF not a conffile"; return 1; }
	in_root dkms status -m cuckoo-nf | grep '^cuckoo-nf/'
}

# leftovers FILE: the paths the root has beyond before.list.
leftovers() {
	snapshot "$OUT/now.list"
	LC_ALL=C comm -13 "$OUT/before.list" "$OUT/now.list" | cut -d' ' -f3 >"$1"
	LC_ALL=C comm -23 "$OUT/before.list" "$OUT/now.list" | sed 's/^/gone: /'
}

remove() {
	in_root dpkg -r cuckoo-crowdsec-bouncer cuckooctl cuckoo-nf-dkms || return 1
	leftovers "$OUT/removed.list" | grep . && return 1
	cat "$OUT/removed.list"
	# What Debian keeps on remove: conffiles, the state in /var/lib, the
	# files postinst wrote beside the conffile, the units' enablement.
	grep -vxE '\./var/lib/cuckoo_nf(/default\.list)?|\./etc/fail2ban/action\.d/cuckoo_nf(-rules)?\.conf|\./etc/crowdsec/bouncers(/cuckoo-crowdsec-bouncer\.yaml(\.local|\.id)?)?|\./etc/fail2ban(/action\.d)?|\./etc/systemd/system/(sysinit|multi-user)\.target\.wants(/(cuckoo_nf|cuckoo-crowdsec-bouncer)\.service)?|\./var/lib/systemd/deb-systemd-helper-enabled/.*(cuckoo_nf|cuckoo-crowdsec-bouncer).*|\./var/lib/systemd(/deb-systemd-helper-enabled(/[a-z.-]+\.wants)?)?' \
		"$OUT/removed.list" | sed 's/^/not expected after remove: /' | grep . && return 1
	[[ -f $R/var/lib/cuckoo_nf/default.list ]] || { echo "/var/lib/cuckoo_nf gone on remove"; return 1; }
	! in_root dkms status -m cuckoo-nf | grep .
}

purge() {
	in_root dpkg -P cuckoo-crowdsec-bouncer cuckooctl cuckoo-nf-dkms || return 1
	leftovers "$OUT/purged.list" | grep . && return 1
	sed 's/^/left after purge: /' "$OUT/purged.list" | grep . && return 1
	grep -q -- "bouncers delete cuckoo-bouncer-" "$R/tmp/cscli.calls" ||
		{ echo "registration not deleted:"; cat "$R/tmp/cscli.calls"; return 1; }
}

main() {
	unmount
	rm -rf "$OUT"
	mkdir -p "$OUT"
	trap unmount EXIT
	tally_step deps scripts/deps.sh --pkg || { summary; exit 1; }
	if tally_step "scratch root (mmdebstrap, once)" make_tar &&
	   tally_step "previous version's packages" prev_debs &&
	   tally_step "make deb" new_debs; then
		tally_step "root set up" setup_root &&
		tally_step "install the previous version" install_prev &&
		tally_step "upgrade: enabled, registered, conffiles" upgrade &&
		tally_step "remove: state and conffiles only" remove &&
		tally_step "purge: nothing left" purge
		unmount
		tally_step "piuparts: install and purge" piuparts_run
	fi
	summary
	((FAIL == 0))
}

main "$@"
