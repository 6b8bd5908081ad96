#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# promtool, Prometheus' checker of the text exposition format, for the
# unit test of `cuckooctl stats --prometheus`:
#
#   promtool.sh fetch   get it once into build/cache/ (scripts/deps.sh)
#   promtool.sh path    print its path, or nothing and exit 1 when absent
#
# It comes out of Debian's prometheus package, downloaded and unpacked
# here rather than installed: installing it would also start a Prometheus
# server on the host, and only this one 48 MB binary is used.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$ROOT/build/cache/promtool
BIN=$DIR/usr/bin/promtool

case ${1:-} in
path)
	[[ -x $BIN ]] || exit 1
	echo "$BIN"
	;;
fetch)
	[[ -x $BIN ]] && exit 0
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# Run as root, apt fetches as _apt, which must be able to write there.
	chmod 777 "$tmp"
	# apt-get download fetches into the current directory, as any user.
	(cd "$tmp" && apt-get download -qq prometheus) >&2
	mkdir -p "$DIR"
	dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb |
		tar -x -C "$DIR" ./usr/bin/promtool
	"$BIN" --version >/dev/null
	;;
*)
	echo "usage: $0 fetch|path" >&2
	exit 2
	;;
esac
