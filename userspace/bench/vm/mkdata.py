#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# mkdata.py DIR SIZE... [--prefixes SIZE...] [--sets SIZE...]: the files
# pktgen_bench.sh loads.  Written on the host because busybox awk takes
# minutes for 1M lines under TCG.
#
# Addresses, for each SIZE before --prefixes, in DIR/SIZE/: "addrs"
# (cuckooctl load), "nft" (nft -f, 1000 elements per add element), "ipset"
# (ipset restore, hash:ip): 10.0.0.0 + [0, SIZE).
#
# Sets, for each SIZE after --sets, in DIR/sets/SIZE/: the same SIZE
# addresses as above, dealt into "block0" to "block3" (address i into
# block i % 4), and "allow": SIZE / 4 addresses (at least 1) of ALLOW_BASE,
# which no benchmark source is.
#
# Prefixes, for each SIZE after --prefixes, in DIR/prefix/SIZE/:
# "prefixes" (cuckooctl load), "nft" (elements of an interval set),
# "ipset" (hash:net).  SIZE IPv4 prefixes shaped like published blocklists
# (FireHOL level1, country blocks): mostly /16 to /24, tails down to /8 and
# up to /32, 25 distinct lengths at every size.  None overlaps another (nft
# refuses overlapping intervals), none covers PASS_NET (the sources of the
# "pass" case), and BLOCK_NET (the sources of the "blocked" case) is
# covered whole by prefixes of /17 to /32.  Deterministic: the same SIZE
# always gives the same prefixes.
import os
import random
import sys

BASE = 10 << 24  # 10.0.0.0: BLOCK_BASE in pktgen_bench.sh
ALLOW_BASE = 172 << 24 | 16 << 16  # 172.16.0.0
BLOCK_SETS = 4
# pktgen_bench.sh's PFX_BLOCK_BASE and PFX_PASS_BASE, each a /16.
BLOCK_NET = (10 << 24, 16)             # 10.0.0.0/16
PASS_NET = (100 << 24 | 64 << 16, 16)  # 100.64.0.0/16
# Never listed: 0/8, 127/8, multicast and above, the benchmark's own
# networks (192.0.2.0/24 veth, 198.51.100.0/24 destination), PASS_NET,
# and BLOCK_NET's /8 (10/8, where BLOCK_NET's tiling goes).
RESERVED = [(0, 8), (10 << 24, 8), (127 << 24, 8), (224 << 24, 3),
            (192 << 24 | 2 << 8, 24), (198 << 24 | 51 << 16 | 100 << 8, 24),
            PASS_NET]
# Share of the prefixes at each length, per mille (lengths 13 to 32), as
# in blocklists: /24 the most common, then /19 to /22, /16 and /32.
SHARE = {13: 4, 14: 8, 15: 14, 16: 60, 17: 40, 18: 50, 19: 70, 20: 85,
         21: 90, 22: 110, 23: 80, 24: 250, 25: 10, 26: 10, 27: 10, 28: 10,
         29: 15, 30: 10, 31: 3, 32: 60}
# Lengths 8 to 12: a few, growing with the square root of the size (a list
# of 100K holds tens of them, not thousands: a /8 is 1/256 of the space).
FEW = {8: 0.1, 9: 0.15, 10: 0.3, 11: 0.5, 12: 1.0}


def dotted(x):
    return f"{x >> 24}.{x >> 16 & 255}.{x >> 8 & 255}.{x & 255}"


def write_set(d, entries, own, set_type):
    """ENTRIES as the three loaders read them: DIR/OWN for cuckooctl load,
    DIR/nft for nft -f (1000 elements per add element), DIR/ipset for
    ipset restore (a set of SET_TYPE)."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, own), "w") as f:
        f.write("\n".join(entries) + "\n")
    with open(os.path.join(d, "nft"), "w") as f:
        for i in range(0, len(entries), 1000):
            f.write("add element ip bench blocked { " +
                    ", ".join(entries[i:i + 1000]) + " }\n")
    with open(os.path.join(d, "ipset"), "w") as f:
        f.write(f"create blocked {set_type} family inet maxelem "
                f"{max(len(entries), 65536)}\n")
        f.write("".join(f"add blocked {x}\n" for x in entries))


def addresses(top, n):
    write_set(os.path.join(top, str(n)),
              [dotted(x) for x in range(BASE, BASE + n)], "addrs", "hash:ip")


def set_files(top, n):
    d = os.path.join(top, "sets", str(n))
    os.makedirs(d, exist_ok=True)
    for k in range(BLOCK_SETS):
        with open(os.path.join(d, f"block{k}"), "w") as f:
            f.write("".join(dotted(x) + "\n"
                            for x in range(BASE + k, BASE + n, BLOCK_SETS)))
    with open(os.path.join(d, "allow"), "w") as f:
        f.write("".join(dotted(x) + "\n"
                        for x in range(ALLOW_BASE,
                                       ALLOW_BASE + max(n // 4, 1))))


def counts(n, fixed):
    """Prefixes wanted at each length, n in all with FIXED given already."""
    c = {ln: max(1, round(k * (n / 1000) ** 0.5)) for ln, k in FEW.items()}
    rest = n - fixed - sum(c.values())
    total = sum(SHARE.values())
    for ln, k in SHARE.items():
        c[ln] = max(1, rest * k // total)
    c[24] += n - fixed - sum(c.values())
    return c


class Space:
    """Non-overlapping prefixes: each one's (net, len), and the nets of
    every length that some stored prefix lies inside (its ancestors)."""

    def __init__(self):
        self.stored = set()
        self.inner = set()

    def free(self, net, ln):
        if (net, ln) in self.inner:
            return False
        return not any((net >> (32 - a) << (32 - a) if a else 0, a)
                       in self.stored for a in range(ln + 1))

    def add(self, net, ln):
        self.stored.add((net, ln))
        for a in range(ln):
            self.inner.add((net >> (32 - a) << (32 - a) if a else 0, a))


def prefixes(n):
    rnd = random.Random(n)
    sp = Space()
    for net, ln in RESERVED:
        sp.add(net, ln)
    # BLOCK_NET tiled by /17, /18, ..., /32 and one more /32 (inside 10/8,
    # reserved: nothing else goes there).
    net, ln = BLOCK_NET
    out = []
    for t in range(ln + 1, 33):
        out.append((net, t))
        net += 1 << (32 - t)
    out.append((net, 32))
    want = counts(n, len(out))
    for ln in sorted(want):
        got = 0
        while got < want[ln]:
            net = rnd.getrandbits(ln) << (32 - ln)
            if sp.free(net, ln):
                sp.add(net, ln)
                out.append((net, ln))
                got += 1
    rnd.shuffle(out)
    return out


def prefix_files(top, n):
    write_set(os.path.join(top, "prefix", str(n)),
              [f"{dotted(net)}/{ln}" for net, ln in prefixes(n)],
              "prefixes", "hash:net")


def main():
    groups, kind = {"": [], "--prefixes": [], "--sets": []}, ""
    for a in sys.argv[2:]:
        if a in groups:
            kind = a
        else:
            groups[kind].append(int(a))
    for n in groups[""]:
        addresses(sys.argv[1], n)
    for n in groups["--prefixes"]:
        prefix_files(sys.argv[1], n)
    for n in groups["--sets"]:
        addresses(sys.argv[1], n)
        set_files(sys.argv[1], n)


if __name__ == "__main__":
    main()
