#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Module BTF for cuckoo_nf.ko: its XDP kfuncs are found by BPF programs
# through the module's .BTF section, which kbuild writes (pahole, then
# resolve_btfids for the kfunc ID sets) only when the build directory has
# the kernel's `vmlinux` (the base the module's BTF is split from) and
# tools/bpf/resolve_btfids/resolve_btfids, and the kernel has
# CONFIG_DEBUG_INFO_BTF_MODULES.  The base must be that very kernel's BTF:
# another kernel's is rejected at load ("failed to validate module BTF").
# Debian's 6.12 headers ship both files; its 6.1 headers ship neither, so
# for those we build the module against build/cache/kdir-KVER, the headers
# seen through symlinks plus
#   vmlinux         the kernel's BTF: /sys/kernel/btf/vmlinux when KVER
#                   runs here, else the .BTF and .BTF_ids sections of the
#                   vmlinux in /boot/vmlinuz-KVER (the kernel source's
#                   scripts/extract-vmlinux), extracted again when the
#                   image changes
#   tools/bpf/resolve_btfids/resolve_btfids
#                   built once from Debian's 6.1 kernel source
#                   (scripts/kernel-source.sh extracts what it needs)
#
#   kernel-btf.sh kdir KVER      print the directory to build KVER's
#                                modules against (prepared when needed)
#   kernel-btf.sh relink KDIR KO...
#                                remove each KO that has no .BTF although
#                                KDIR can make one, or is older than
#                                KDIR's vmlinux: kbuild would not link it
#                                again (vmlinux is no prerequisite of an
#                                external module)
#   kernel-btf.sh check KDIR KO...
#                                each KO has a .BTF section, and its
#                                .BTF_ids resolved; if not, by CNF_XDP:
#                                auto (the default) one line noting that
#                                the kfuncs are left out and what would
#                                give them; y (XDP required) an error
#                                naming what KDIR lacks; n (XDP not
#                                wanted) a note
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=$ROOT/build/cache
KSRC=$ROOT/scripts/kernel-source.sh
RESOLVE=tools/bpf/resolve_btfids/resolve_btfids

log() { echo "kernel-btf: $*" >&2; }
die() { log "$*"; exit 1; }

# missing KDIR: print what KDIR lacks to give modules BTF; nothing when
# it has it all.
missing() {
	local kdir=$1 what=()
	grep -qx 'CONFIG_DEBUG_INFO_BTF_MODULES=y' "$kdir/.config" 2>/dev/null ||
		what+=("CONFIG_DEBUG_INFO_BTF_MODULES (the kernel cannot load module BTF)")
	[[ -f $kdir/vmlinux ]] || what+=("$kdir/vmlinux (the kernel's BTF)")
	[[ -x $kdir/$RESOLVE ]] || what+=("$kdir/$RESOLVE")
	command -v pahole >/dev/null || what+=("pahole (package pahole)")
	((${#what[@]} == 0)) || printf '%s\n' "${what[@]}"
}

# btf_state KO: of KO (cuckoo_nf.ko, or .ko.xz/.zst/.gz as DKMS installs
# it), "ok", "none" (no .BTF section) or "unresolved" (a .BTF_ids section
# all zeros: resolve_btfids did not fill the kfunc set in).
btf_state() {
	local ko=$1 tmp sections st=ok
	case $ko in
	*.xz | *.zst | *.gz)
		tmp=$(mktemp)
		case $ko in
		*.xz) xz -dc "$ko" ;;
		*.zst) zstd -dcq "$ko" ;;
		*.gz) gzip -dc "$ko" ;;
		esac >"$tmp" 2>/dev/null
		btf_state "$tmp"
		rm -f "$tmp"
		return
		;;
	esac
	sections=$(readelf -SW "$ko" 2>/dev/null)
	if [[ $sections != *" .BTF "* ]]; then
		st=none
	elif [[ $sections == *" .BTF_ids "* ]]; then
		tmp=$(mktemp)
		# The bytes that are not NUL (bash drops NULs anyway).
		if objcopy --dump-section .BTF_ids="$tmp" "$ko" "$tmp.o" 2>/dev/null &&
		   [[ -z $(tr -d '\0' <"$tmp") ]]; then
			st=unresolved
		fi
		rm -f "$tmp" "$tmp.o"
	fi
	echo "$st"
}

has_btf() {
	[[ $(btf_state "$1") == ok ]]
}

# resolve_btfids_6_1: build resolve_btfids from the 6.1 source; print it.
resolve_btfids_6_1() {
	local src out
	src=$("$KSRC" extract) || return 1
	out=$src/$RESOLVE
	exec 8>"$src/.resolve_btfids.lock"
	flock 8
	if [[ ! -x $out ]]; then
		log "building resolve_btfids from $(basename "$src")"
		make -s -C "$src/tools/bpf/resolve_btfids" >&2 ||
			{ log "resolve_btfids build failed (libelf-dev, zlib1g-dev: scripts/deps.sh)"; return 1; }
	fi
	exec 8>&-
	echo "$out"
}

# vmlinux_btf KVER OUT: OUT holds KVER's BTF, from its boot image.
vmlinux_btf() {
	local kver=$1 out=$2 image=/boot/vmlinuz-$1 stamp want src tmp
	[[ -r $image ]] || { log "cannot read $image"; return 1; }
	want="$image $(stat -c '%s %Y' "$image")"
	stamp=$out.stamp
	if [[ -f $out && -f $stamp && $(<"$stamp") == "$want" ]]; then
		return 0
	fi
	src=$("$KSRC" extract) || return 1
	log "extracting the BTF of $image"
	tmp=$(mktemp -p "$(dirname "$out")")
	if ! sh "$src/scripts/extract-vmlinux" "$image" >"$tmp"; then
		rm -f "$tmp"
		log "scripts/extract-vmlinux: no vmlinux in $image (a decompressor missing? scripts/deps.sh)"
		return 1
	fi
	# The BTF alone, as Debian's 6.12 headers ship it: 4 MB, not 50.
	if ! objcopy --only-section=.BTF --only-section=.BTF_ids "$tmp" "$tmp.btf" 2>/dev/null ||
	   ! has_btf "$tmp.btf"; then
		rm -f "$tmp" "$tmp.btf"
		log "$image: its vmlinux has no .BTF"
		return 1
	fi
	rm -f "$tmp"
	mv "$tmp.btf" "$out"
	echo "$want" >"$stamp"
}

# kdir KVER: see the top.
kdir() {
	local kver=$1 headers=/lib/modules/$1/build dir f rb
	[[ -d $headers ]] || die "no headers for $kver ($headers)"
	if [[ $XDP == n || -z $(missing "$headers") ]] ||
	   ! grep -qx 'CONFIG_DEBUG_INFO_BTF_MODULES=y' "$headers/.config"; then
		echo "$headers"
		return
	fi
	dir=$CACHE/kdir-$kver
	mkdir -p "$dir"
	exec 9>"$dir.lock"
	flock 9
	# The headers, seen through symlinks (tools/ and vmlinux our own).
	for f in "$headers"/* "$headers"/.[!.]*; do
		[[ -e $f ]] || continue
		case ${f##*/} in
		tools | vmlinux) ;;
		*) ln -sfn "$f" "$dir/${f##*/}" ;;
		esac
	done
	mkdir -p "$dir/tools/bpf/resolve_btfids"
	for f in "$headers"/tools/*; do
		[[ -e $f && ${f##*/} != bpf ]] && ln -sfn "$f" "$dir/tools/${f##*/}"
	done
	if [[ -x $headers/$RESOLVE ]]; then
		rb=$headers/$RESOLVE
	elif [[ $kver == 6.1.* ]]; then
		rb=$(resolve_btfids_6_1) || rb=
	else
		log "$kver: no resolve_btfids in its headers and no source for it here"
		rb=
	fi
	if [[ -z $rb ]]; then
		# Without resolve_btfids kbuild's BTF step fails the link when
		# it finds vmlinux, and skips itself when it does not: no
		# vmlinux then, and the check says what is missing.
		rm -f "$dir/$RESOLVE" "$dir/vmlinux"
		echo "$dir"
		return
	fi
	ln -sfn "$rb" "$dir/$RESOLVE"
	if [[ -f $headers/vmlinux ]]; then
		ln -sfn "$headers/vmlinux" "$dir/vmlinux"
	elif [[ $(uname -r) == "$kver" && -r /sys/kernel/btf/vmlinux ]]; then
		# pahole and resolve_btfids read raw BTF as well as ELF.
		ln -sfn /sys/kernel/btf/vmlinux "$dir/vmlinux"
	else
		[[ -L $dir/vmlinux ]] && rm -f "$dir/vmlinux"
		vmlinux_btf "$kver" "$dir/vmlinux" || rm -f "$dir/vmlinux"
	fi
	echo "$dir"
}

relink() {
	local kdir=$1 ko
	shift
	[[ $XDP != n && -z $(missing "$kdir") ]] || return 0
	for ko; do
		# Nor when the kernel's BTF changed (a new image, same release).
		if [[ -f $ko ]] && { ! has_btf "$ko" || [[ $ko -ot $kdir/vmlinux ]]; }; then
			rm -f "$ko"
		fi
	done
}

# no_btf_line KO KDIR: the one line of CNF_XDP=auto for a KO built without
# BTF: what is left out, what KDIR lacks, how to get it.
no_btf_line() {
	local lacks
	lacks=$(missing "$2" | sed 's/ (.*//; s|.*/||' | paste -sd, - | sed 's/,/, /g')
	log "note: ${1##*/} built without its XDP/tc kfuncs: ${lacks:-its build lacked module BTF} missing (docs/install.md, Module BTF; CNF_XDP=y makes this an error)"
}

check() {
	local kdir=$1 ko why bad=0
	shift
	for ko; do
		[[ -f $ko ]] || die "$ko: not built"
		case $(btf_state "$ko") in
		ok) continue ;;
		unresolved)
			if [[ $XDP == n ]]; then
				log "note: ${ko##*/}: .BTF_ids all zeros: its XDP kfuncs are not available (CNF_XDP=n)"
				continue
			fi
			# A mis-built module, whatever CNF_XDP: BPF programs would
			# find kfuncs the kernel then refuses to call.
			log "error: ${ko##*/} has .BTF but its .BTF_ids are all zeros: the kernel would refuse calls to its XDP kfuncs."
			log "$kdir/$RESOLVE did not resolve them: make clean, then build again."
			bad=1
			continue
			;;
		esac
		if [[ $XDP == n ]]; then
			log "note: ${ko##*/} has no .BTF section: its XDP kfuncs are not available (CNF_XDP=n)"
			continue
		fi
		why=$(missing "$kdir" | sed 's/^/kernel-btf:   /')
		if [[ -z $why ]]; then
			log "error: ${ko##*/} has no .BTF section although $kdir can make it: it was linked before; make clean, then build again"
			bad=1
			continue
		fi
		if [[ $XDP == auto ]]; then
			no_btf_line "$ko" "$kdir"
			continue
		fi
		log "error: ${ko##*/} has no .BTF section: BPF programs cannot find its XDP kfuncs."
		log "$kdir lacks:"
		echo "$why" >&2
		[[ $why == *CONFIG_DEBUG_INFO_BTF_MODULES* ]] || {
			log "without KDIR=, make module builds against build/cache/kdir-KVER, which has them"
			log "when /boot/vmlinuz-KVER and Debian's linux-source-6.1 are there (scripts/deps.sh);"
		}
		log "without CNF_XDP=y, make builds without them (no XDP)."
		bad=1
	done
	return $bad
}

XDP=${CNF_XDP:-auto}
case $XDP in
auto | y | n) ;;
*) die "CNF_XDP=$CNF_XDP: not auto (XDP where the build can have it, the default), y (XDP required) or n (no XDP)" ;;
esac

case ${1:-} in
kdir) (($# == 2)) || die "usage: kernel-btf.sh kdir KVER"; kdir "$2" ;;
relink) (($# >= 2)) || die "usage: kernel-btf.sh relink KDIR KO..."; shift; relink "$@" ;;
check) (($# >= 3)) || die "usage: kernel-btf.sh check KDIR KO..."; shift; check "$@" ;;
*) die "usage: kernel-btf.sh kdir KVER | relink KDIR KO... | check KDIR KO..." ;;
esac
