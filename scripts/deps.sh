#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, linting and the VM test bench need, on Debian 12.
# Only missing packages are installed (after a single `apt-get update`), so a
# second run only asks dpkg and returns in well under a second.  Then extract
# the few files we use from Debian's kernel source tarball (kselftest headers,
# checkpatch) into build/cache/, once (scripts/kernel-source.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KSRC=$ROOT/scripts/kernel-source.sh

# The image and headers meta-packages must come from the same upload so the
# module we build loads in the kernel we boot: they are handled as a pair.
KERNEL_PKGS=(linux-image-cloud-amd64 linux-headers-cloud-amd64)
PKGS=(
	make gcc libc6-dev			# kbuild and the userspace tools
	kmod					# depmod/modprobe, host and VM
	qemu-system-x86 busybox-static cpio	# the VM and its initramfs
	"$("$KSRC" package)" xz-utils	# kselftest headers, checkpatch
	# module BTF (scripts/kernel-btf.sh): pahole; the 6.1 image's
	# decompressor; resolve_btfids's build
	pahole lz4 libelf-dev zlib1g-dev
	libbpf-dev				# the XDP programs (clang -target bpf), cuckooctl xdp
	sparse perl				# make lint: the kernel code
	shellcheck flake8			# make lint: the shell and Python scripts
	liburcu-dev clang libclang-rt-14-dev	# userspace build, fuzzing
	llvm					# mkdeb.sh: llvm-strip of the XDP program
	libcurl4-openssl-dev libjson-c-dev libyaml-dev zlib1g-dev pkgconf # cuckoo-crowdsec-bouncer
	libmicrohttpd-dev			# the bouncer's /metrics
	python3
	iproute2 iputils-ping nftables ipset iptables jq bash dash coreutils
	libxtables-dev				# libxt_cuckoo.so, the iptables extension
	ethtool					# xdp.sh: VLAN tags in the frame, not beside it
)

log() { echo "deps: $*" >&2; }

# --engines: fail2ban and crowdsec are test tools here (selftests run them
# in the VM, scripts/deps.sh only puts them on the host for the VM's
# initramfs), never services of the host.
ENGINE_PKGS=(fail2ban crowdsec)
ENGINES=0
SID_ROOT=0

# Print the packages (from the arguments) that are not fully installed; one
# dpkg-query call for all of them keeps a no-op run fast.
missing_pkgs() {
	local -A ok=()
	local name st
	while read -r name st; do
		[[ $st == ii* ]] && ok[$name]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "$@" 2>/dev/null || true)
	for name in "$@"; do
		[[ -n ${ok[$name]:-} ]] || echo "$name"
	done
}

pkg_version() {
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true
}

install_missing() {
	local -a wanted
	mapfile -t wanted < <(missing_pkgs "${PKGS[@]}")
	if [[ -n $(missing_pkgs "${KERNEL_PKGS[@]}") ||
	      $(pkg_version "${KERNEL_PKGS[0]}") != $(pkg_version "${KERNEL_PKGS[1]}") ]]; then
		wanted+=("${KERNEL_PKGS[@]}")
	fi
	((${#wanted[@]})) || return 0

	if ((EUID != 0)); then
		log "missing packages: ${wanted[*]}"
		log "run as root: apt-get update && apt-get install ${wanted[*]}"
		exit 1
	fi
	log "installing: ${wanted[*]}"
	export DEBIAN_FRONTEND=noninteractive
	((ENGINES)) && engines_before "${wanted[@]}"
	# Another install (a second make in another tree) waits, not fails.
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
		--no-install-recommends "${wanted[@]}" >&2
	((ENGINES)) && engines_after "${wanted[@]}"
	return 0
}

# engines_before PKG...: what installing the engines must not do.
# - Start services: a policy-rc.d refusing every start (deb-systemd-invoke
#   and invoke-rc.d ask it) while apt runs, unless one is there already.
# - Register crowdsec to its Central API over the network (its postinst
#   does when /etc/crowdsec/online_api_credentials.yaml is empty):
#   README.Debian's way to decline, that file holding a comment, written
#   before the first install.  The Local API is set up as usual.
POLICY_RC=/usr/sbin/policy-rc.d
OWN_POLICY=0
engines_before() {
	local capi=/etc/crowdsec/online_api_credentials.yaml
	if [[ ! -e $POLICY_RC ]]; then
		printf '#!/bin/sh\n# scripts/deps.sh --engines, while apt runs\nexit 101\n' >"$POLICY_RC"
		chmod 755 "$POLICY_RC"
		OWN_POLICY=1
		trap 'rm -f "$POLICY_RC"' EXIT
	fi
	if [[ " $* " == *" crowdsec "* && ! -s $capi ]]; then
		mkdir -p /etc/crowdsec
		echo "# no thanks: no Central API registration (cuckoo_nf scripts/deps.sh)" >"$capi"
	fi
}

# engines_after PKG...: the engines installed now are not enabled as
# services either (a host with systemd would start them at its next boot).
engines_after() {
	local p
	if ((OWN_POLICY)); then
		rm -f "$POLICY_RC"
		trap - EXIT
	fi
	command -v systemctl >/dev/null || return 0
	for p; do
		[[ " ${ENGINE_PKGS[*]} " == *" $p "* ]] || continue
		# Works on the unit files, with or without a running systemd.
		systemctl disable "$p.service" >/dev/null 2>&1 || true
	done
}

for opt in "$@"; do
	case $opt in
	# What building the debug kernel needs (make check-debug).
	--debug) PKGS+=(bc bison flex libssl-dev) ;;
	# The benchmarks' plots (make bench, bench-vm, bench-report), and
	# xdp-filter (xdp-tools), which bench-vm ships to the VM as a
	# contender of its XDP part.
	--bench) PKGS+=(gnuplot-nox xdp-tools) ;;
	# Debian 12's 6.12 kernels, cloud and PREEMPT_RT (make check-kernels).
	# Their headers depend on the image of the same release, so these
	# two pull in both, as pairs that match.  Not by default: a
	# developer's machine would boot 6.12 next, and it takes minutes
	# (5 min 23 s here for both, two initramfs builds included).
	# And the newest Debian kernel, sid's, in a sid root of its own with
	# the toolchain that built it (scripts/sid-root.sh, made below).
	--kernels) PKGS+=(linux-headers-6.12-cloud-amd64 linux-headers-6.12-rt-amd64 mmdebstrap)
		SID_ROOT=1 ;;
	# Packaging (make deb, make check-dkms, make check-deb): dkms builds
	# the module for each kernel, debhelper and dh-dkms (bookworm has
	# dh_dkms in a package of its own) build the packages from debian/,
	# lintian checks them, mmdebstrap makes the scratch root of
	# check-deb's install, upgrade and purge round, piuparts runs its own
	# there.  Not for make check: lintian alone brings some 130 Perl
	# packages.
	--pkg) PKGS+=(dkms lintian debhelper dh-dkms mmdebstrap piuparts) ;;
	# The engines of make check-engines (fail2ban and crowdsec, Debian's),
	# shipped to the VM in an initramfs layer of their own
	# (selftests/vm/mkinitramfs layer): installed, never started.
	--engines) PKGS+=("${ENGINE_PKGS[@]}"); ENGINES=1 ;;
	# The load beside make check-busy's rounds.
	--busy) PKGS+=(stress-ng) ;;
	*) log "unknown option $opt (--debug, --bench, --kernels, --pkg, --engines, --busy)"; exit 2 ;;
	esac
done
install_missing
"$KSRC" extract >/dev/null
if ((SID_ROOT)); then
	log "the sid root of the newest kernel (scripts/sid-root.sh)"
	"$ROOT/scripts/sid-root.sh" make >/dev/null
fi
# make unit checks stats --prometheus with Prometheus' own promtool.
"$ROOT/scripts/promtool.sh" fetch
# Fail here, not halfway through a boot, if there is no usable VM kernel.
"$ROOT/scripts/kver" >/dev/null
