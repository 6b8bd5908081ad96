#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The few files we use from Debian's kernel source package: kselftest
# headers (kselftest_harness.h for the C tests) and checkpatch.pl with its
# data files.  The package name is written here only; everything else asks.
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
extract() {
	local stamp want tmp
	[[ -f $TARBALL ]] || {
		echo "kernel-source: $TARBALL missing: install $NAME (scripts/deps.sh as root)" >&2
		exit 1
	}
	want=$(stat -c '%s %Y' "$TARBALL")
	stamp=$DIR/.cnf-stamp
	mkdir -p "$CACHE"
	# Several make rules may want it at once (make -j): one extracts.
	exec 9>"$CACHE/.$NAME.lock"
	flock 9
	if [[ ! -f $stamp || $(<"$stamp") != "$want" ]]; then
		echo "kernel-source: extracting kselftest headers and checkpatch from $TARBALL" >&2
		tmp=$(mktemp -d -p "$CACHE")
		tar -C "$tmp" -xJf "$TARBALL" --wildcards \
			"$NAME/tools/testing/selftests/kselftest*" \
			"$NAME/scripts/checkpatch.pl" \
			"$NAME/scripts/spelling.txt" \
			"$NAME/scripts/const_structs.checkpatch"
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
