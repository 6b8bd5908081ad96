#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# mkdata.py DIR SIZE...: the address files pktgen_bench.sh loads, for each
# SIZE in DIR/SIZE/: "addrs" (cuckooctl load), "nft" (nft -f, 1000 elements
# per add element), "ipset" (ipset restore).  Written on the host because
# busybox awk takes minutes for 1M lines under TCG.
import os
import sys

BASE = 10 << 24  # 10.0.0.0: BLOCK_BASE in pktgen_bench.sh


def main():
    top = sys.argv[1]
    for n in map(int, sys.argv[2:]):
        d = os.path.join(top, str(n))
        os.makedirs(d, exist_ok=True)
        a = [f"{x >> 24}.{x >> 16 & 255}.{x >> 8 & 255}.{x & 255}"
             for x in range(BASE, BASE + n)]
        with open(os.path.join(d, "addrs"), "w") as f:
            f.write("\n".join(a) + "\n")
        with open(os.path.join(d, "nft"), "w") as f:
            for i in range(0, n, 1000):
                f.write("add element ip bench blocked { " +
                        ", ".join(a[i:i + 1000]) + " }\n")
        with open(os.path.join(d, "ipset"), "w") as f:
            f.write("create blocked hash:ip family inet maxelem "
                    f"{max(n, 65536)}\n")
            f.write("".join(f"add blocked {x}\n" for x in a))


if __name__ == "__main__":
    main()
