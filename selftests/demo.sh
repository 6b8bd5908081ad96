#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: cuckoo_nf at work, shown as the commands a user would type.
# ns-a (10.0.0.1, fd00::1) pings ns-b (10.0.0.2, fd00::2) over a veth pair;
# the filter acts in the namespace cuckooctl runs in, the receiver's here.
# Exits non-zero as soon as a step does not behave as announced.
set -uo pipefail

say() { printf '\n# %s\n' "$*"; }

# ok CMD: show and run CMD, which must succeed.
ok() {
	echo "\$ $*"
	eval "$*" && return 0
	echo "demo: FAILED: this should have worked" >&2
	exit 1
}

# fails CMD: show and run CMD, which must fail.
fails() {
	echo "\$ $*"
	eval "$*" || return 0
	echo "demo: FAILED: this should have failed" >&2
	exit 1
}

dropped() {
	ip netns exec ns-b cuckooctl stats -j | jq -e ".$1.dropped"
}

cleanup() {
	ip netns del ns-a 2>/dev/null
	ip netns del ns-b 2>/dev/null
}

if [[ ! -c /dev/cuckoo_nf ]] || ! command -v cuckooctl >/dev/null; then
	echo "demo: needs the cuckoo_nf module loaded and cuckooctl on PATH" >&2
	exit 1
fi
trap cleanup EXIT

say "Two network namespaces joined by a veth pair"
ok ip netns add ns-a
ok ip netns add ns-b
ok ip link add veth-a netns ns-a type veth peer name veth-b netns ns-b
ok ip -n ns-a addr add 10.0.0.1/24 dev veth-a
ok ip -n ns-a addr add fd00::1/64 dev veth-a nodad
ok ip -n ns-b addr add 10.0.0.2/24 dev veth-b
ok ip -n ns-b addr add fd00::2/64 dev veth-b nodad
ok ip -n ns-a link set veth-a up
ok ip -n ns-b link set veth-b up

say "Nothing is blocked: pings pass"
ok ip netns exec ns-a ping -c 2 -W 10 10.0.0.2
ok ip netns exec ns-a ping -c 2 -W 10 fd00::2

say "Block the sender's addresses in the receiver's namespace"
ok ip netns exec ns-b cuckooctl add 10.0.0.1 fd00::1
ok ip netns exec ns-b cuckooctl list

say "Pings from the blocked sender are dropped"
fails ip netns exec ns-a ping -c 3 -W 1 10.0.0.2
fails ip netns exec ns-a ping -c 3 -W 1 fd00::2
ok ip netns exec ns-b cuckooctl stats
v4=$(dropped ipv4) && v6=$(dropped ipv6) || exit 1
if ((v4 < 3 || v6 < 3)); then
	echo "demo: FAILED: expected at least 3 drops per family, counted $v4 and $v6" >&2
	exit 1
fi

say "Unblock them: pings pass again"
ok ip netns exec ns-b cuckooctl del 10.0.0.1 fd00::1
ok ip netns exec ns-a ping -c 2 -W 10 10.0.0.2
ok ip netns exec ns-a ping -c 2 -W 10 fd00::2

say "demo: every step behaved as expected"
