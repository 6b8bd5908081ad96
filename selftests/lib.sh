# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers shared by the shell selftests (sourced, not run).
#
# Under TCG every process start counts: `ip netns exec` costs about 50 ms
# more than the command it runs (a mount namespace and a /sys remount), and
# jq takes 0.4 s to start.  Tests run such commands hundreds of times.

# Address lists for bulk loads (selftests/addrgen.c, built with the C tests).
# shellcheck disable=SC2034 # used by the scripts that source this file
ADDRGEN=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/addrgen

# nsx NS COMMAND...: COMMAND in network namespace NS, without the mount
# namespace of `ip netns exec`: for commands that do not read /sys/class/net.
# Not for a background job killed by its pid: that pid is a subshell running
# this function, and killing it leaves COMMAND running.
if command -v nsenter >/dev/null; then
	nsx() {
		local ns=$1
		shift
		nsenter --net="/run/netns/$ns" -- "$@"
	}
else
	nsx() { ip netns exec "$@"; }
fi

# stats_field JSON PATH: .mode, .mem_limit or .ipvN.KEY of the JSON that
# `cuckooctl stats -j` prints, without starting jq.
stats_field() {
	local re p=${2#.}
	case $2 in
	.mode) re='"mode":"([a-z]+)"' ;;
	.ipv[46].*) re="\"${p%%.*}\":\\{[^}]*\"${p#*.}\":([0-9.]+)" ;;
	*) re="\"$p\":([0-9.]+)" ;;
	esac
	[[ $1 =~ $re ]] && echo "${BASH_REMATCH[1]}"
}

# nft_counters NS [nft list arguments]: "TABLE NAME PACKETS" for each named
# counter that `nft list ...` (default: ruleset) shows in namespace NS, read
# by one nft and one awk.
nft_counters() {
	local ns=$1
	shift
	(($#)) || set -- ruleset
	nsx "$ns" nft list "$@" | awk '
		$1 == "table" { table = $3 }
		$1 == "counter" && $3 == "{" { name = $2 }
		name != "" && $1 == "packets" { print table, name, $2; name = "" }'
}
