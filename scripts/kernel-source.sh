#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The few files we use from Debian's kernel source package: kselftest
# headers (kselftest_harness.h for the C tests), checkpatch.pl with its
# data files, and what module BTF needs on 6.1 (scripts/kernel-btf.sh):
# scripts/extract-vmlinux, and resolve_btfids's sources with the libbpf,
# libsubcmd and build files it is built from.  The package name is written
# here only; everything else asks.
#
#   kernel-source.sh [extract]  extract them into build/cache/ (once per
#                               tarball); print the directory
#   kernel-source.sh dir        print that directory
#   kernel-source.sh package    print the package name (deps.sh installs it)
#   kernel-source.sh tarball    print the tarball path
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=linux-source-6.1
TARBALL=/usr/src/$NAME.tar.xz
CACHE=$ROOT/build/cache
DIR=$CACHE/$NAME

# Only what we use: the whole tarball is 130 MB and takes minutes.
FILES=(
	'tools/testing/selftests/kselftest*'
	scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
	scripts/extract-vmlinux
	# resolve_btfids; bpf_doc.py writes libbpf's bpf_helper_defs.h
	tools/bpf/resolve_btfids tools/lib/bpf tools/lib/subcmd 'tools/lib/*.c'
	tools/include tools/arch/x86/include tools/build tools/scripts
	scripts/bpf_doc.py
)

extract() {
	local stamp want tmp f
	local -a members=()
	[[ -f $TARBALL ]] || {
		echo "kernel-source: $TARBALL missing: install $NAME (scripts/deps.sh as root)" >&2
		exit 1
	}
	# Extracted again when the tarball or the list changes.
	want="$(stat -c '%s %Y' "$TARBALL") ${FILES[*]}"
	stamp=$DIR/.cnf-stamp
	mkdir -p "$CACHE"
	# Several make rules may want it at once (make -j): one extracts.
	exec 9>"$CACHE/.$NAME.lock"
	flock 9
	if [[ ! -f $stamp || $(<"$stamp") != "$want" ]]; then
		echo "kernel-source: extracting kselftest headers, checkpatch and the BTF tools' sources from $TARBALL" >&2
		for f in "${FILES[@]}"; do
			members+=("$NAME/$f")
		done
		tmp=$(mktemp -d -p "$CACHE")
		tar -C "$tmp" -xJf "$TARBALL" --wildcards "${members[@]}"
		echo "$want" >"$tmp/$NAME/.cnf-stamp"
		rm -rf "$DIR"
		mv "$tmp/$NAME" "$DIR"
		rmdir "$tmp"
	fi
	echo "$DIR"
}

case ${1:-extract} in
extract) extract ;;
dir) echo "$DIR" ;;
package) echo "$NAME" ;;
tarball) echo "$TARBALL" ;;
*) echo "usage: kernel-source.sh [extract|dir|package|tarball]" >&2; exit 2 ;;
esac
