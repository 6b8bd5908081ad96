#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# mkdata.py DIR SIZE... [--prefixes SIZE...] [--prefixes6 SIZE...]
#           [--sets SIZE...]: the files
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
#
# IPv6 prefixes, for each SIZE after --prefixes6, in DIR/prefix6/SIZE/: the
# same three files (nft: table ip6 bench; ipset: family inet6).  SIZE
# prefixes shaped like country and allocation lists summarised from
# ranges: 35 lengths, /19 to /128, mostly /29 to /48 (RIR allocations and
# assignments), some /56, /64 (one network) and /128 (one host), random in
# 2000::/3, none overlapping.  None covers 2001:db8::/32 (the benchmark's
# own IPv6 networks) but for BLOCK6: prefixes of /48, /56, /64 and /128 in
# it that cover pktgen_bench.sh's PFX6_BLOCK_SRCS (the "blocked" case);
# its PFX6_PASS_SRCS are in PASS6, four /32s of 3fff::/20 (documentation,
# RFC 9637), which none covers or enters, as none enters the IPv4
# PASS_NET.
import ipaddress
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


# IPv6: share per mille of each length, 35 lengths.  /48 (an end site's
# assignment) and /32 (an ISP's allocation) the most common, then /29 and
# the /33 to /47 of summarised ranges, /64 and /128 entries of abuse
# lists; a few shorter than /29 (large allocations), growing slower.
SHARE6 = {29: 70, 30: 20, 31: 20, 32: 150, 33: 15, 34: 15, 35: 15, 36: 25,
          37: 10, 38: 10, 39: 10, 40: 30, 41: 8, 42: 10, 43: 10, 44: 30,
          45: 10, 46: 15, 47: 20, 48: 260, 52: 5, 56: 40, 60: 5, 64: 90,
          128: 80}
FEW6 = {19: 0.05, 20: 0.1, 21: 0.15, 22: 0.2, 23: 0.3, 24: 0.5, 25: 0.6,
        26: 0.8, 27: 1.0, 28: 1.5}
DOC6 = (0x20010db8 << 96, 32)          # 2001:db8::/32, never listed
PASS6 = (0x3fff << 112, 30)             # 3fff::/30, never listed
GLOBAL6 = (1 << 125, 3)                 # 2000::/3, where prefixes go
BLOCK6 = [(0x20010db8000a << 80, 48), (0x20010db8000b << 80, 56),
          (0x20010db8000c << 80, 64), (0x20010db8000d << 80 | 1, 128)]


def dotted(x):
    return f"{x >> 24}.{x >> 16 & 255}.{x >> 8 & 255}.{x & 255}"


def write_set(d, entries, own, set_type, v6=False):
    """ENTRIES as the three loaders read them: DIR/OWN for cuckooctl load,
    DIR/nft for nft -f (1000 elements per add element), DIR/ipset for
    ipset restore (a set of SET_TYPE); in table ip6 and family inet6 if
    V6."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, own), "w") as f:
        f.write("\n".join(entries) + "\n")
    with open(os.path.join(d, "nft"), "w") as f:
        for i in range(0, len(entries), 1000):
            f.write(f"add element {'ip6' if v6 else 'ip'} bench blocked {{ " +
                    ", ".join(entries[i:i + 1000]) + " }\n")
    with open(os.path.join(d, "ipset"), "w") as f:
        f.write(f"create blocked {set_type} family "
                f"{'inet6' if v6 else 'inet'} maxelem "
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


def counts(n, fixed, few=None, share=None, top=24):
    """Prefixes wanted at each length, n in all with FIXED given already:
    FEW's grow with the square root of n, SHARE's are per mille of the
    rest, TOP takes what rounding left."""
    few, share = few or FEW, share or SHARE
    c = {ln: max(1, round(k * (n / 1000) ** 0.5)) for ln, k in few.items()}
    rest = n - fixed - sum(c.values())
    total = sum(share.values())
    for ln, k in share.items():
        c[ln] = max(1, rest * k // total)
    c[top] += n - fixed - sum(c.values())
    return c


class Space:
    """Non-overlapping prefixes of BITS-bit addresses: each one's (net,
    len), the lengths stored, and the nets of every length that some
    stored prefix lies inside (its ancestors)."""

    def __init__(self, bits=32):
        self.bits = bits
        self.stored = set()
        self.lengths = set()
        self.inner = set()

    def cut(self, net, a):
        return net >> (self.bits - a) << (self.bits - a) if a else 0

    def free(self, net, ln):
        if (net, ln) in self.inner:
            return False
        return not any((self.cut(net, a), a) in self.stored
                       for a in self.lengths if a <= ln)

    def add(self, net, ln):
        self.stored.add((net, ln))
        self.lengths.add(ln)
        for a in range(ln):
            self.inner.add((self.cut(net, a), a))


def fill(sp, want, draw, out):
    """Append want[ln] prefixes of each length ln, drawn by draw(ln) and
    kept only where sp has room: none overlaps another."""
    for ln in sorted(want):
        got = 0
        while got < want[ln]:
            net = draw(ln)
            if sp.free(net, ln):
                sp.add(net, ln)
                out.append((net, ln))
                got += 1


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
    fill(sp, counts(n, len(out)), lambda ln: rnd.getrandbits(ln) << (32 - ln),
         out)
    rnd.shuffle(out)
    return out


def prefix_files(top, n):
    write_set(os.path.join(top, "prefix", str(n)),
              [f"{dotted(net)}/{ln}" for net, ln in prefixes(n)],
              "prefixes", "hash:net")


def prefixes6(n):
    rnd = random.Random(n + 6)
    sp = Space(128)
    sp.add(*DOC6)
    sp.add(*PASS6)
    out = list(BLOCK6)
    gnet, glen = GLOBAL6
    fill(sp, counts(n, len(out), FEW6, SHARE6, 48),
         lambda ln: gnet | rnd.getrandbits(ln - glen) << (128 - ln), out)
    rnd.shuffle(out)
    return out


def prefix6_files(top, n):
    write_set(os.path.join(top, "prefix6", str(n)),
              [f"{ipaddress.IPv6Address(net)}/{ln}"
               for net, ln in prefixes6(n)],
              "prefixes", "hash:net", v6=True)


def main():
    groups, kind = {"": [], "--prefixes": [], "--prefixes6": [],
                    "--sets": []}, ""
    for a in sys.argv[2:]:
        if a in groups:
            kind = a
        else:
            groups[kind].append(int(a))
    for n in groups[""]:
        addresses(sys.argv[1], n)
    for n in groups["--prefixes"]:
        prefix_files(sys.argv[1], n)
    for n in groups["--prefixes6"]:
        prefix6_files(sys.argv[1], n)
    for n in groups["--sets"]:
        addresses(sys.argv[1], n)
        set_files(sys.argv[1], n)


if __name__ == "__main__":
    main()
