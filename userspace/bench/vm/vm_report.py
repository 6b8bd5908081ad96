#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# vm_report.py [--pkt-log PKTLOG] LOG JSON [KEY=VALUE...]
#
# Turn the "CNF_BENCH {json}" samples that pktgen_bench.sh printed on the VM
# console (LOG) into one table on stdout and the same figures in JSON.
# With --pkt-log, the packet-path samples come from PKTLOG (bench-vm's boot
# under QEMU -icount) and the rest from LOG; cnf_bench.ko's samples from
# both, shown as time (LOG, plain TCG) and as instructions (PKTLOG).
# KEY=VALUE pairs (host load, date, ...) go into the JSON's "meta".
#
# Per-packet cost is paired: in every repetition each contender's ns/packet
# minus that repetition's "none" ns/packet (same case), then the median over
# repetitions; ratios to nftables' are paired the same way.  Every median
# comes with its min..max over repetitions, and a difference whose
# repetitions disagree on its sign (or a flatness within the spread) is
# flagged as noise.  Goals are printed as goal vs measured, never asserted.
#
# Samples with "set":"prefix" (prefix sets: cuckoo_nf, an nftables interval
# set, ipset hash:net) are reported apart, under "prefix" in the JSON, with
# their own goals; so are "prefix6" (the same in IPv6), "sets" (named
# sets), "place" (the hooks' scope, the xtables match and mark mode
# beside ipset and nft rules, each rule's drop over an unconditional
# drop at its place), "xdp" and "xdp6" (the XDP part, its derived
# figures paired per repetition, memory per address from cuckooctl stats
# and bpf_xdp's and xdp-filter's "xdp_load" samples); the others are the
# address sets.  The
# prefix and XDP parts take their loads from PKTLOG too (PKT_LOAD_SETS).
import json
import statistics
import sys

# The sets whose loads and memory come from PKTLOG, the packet path's boot
# (under -icount: guest instructions, where a load's fixed cost under
# plain TCG, tens of ms and every tool alike, does not drown the work of a
# 1K load); the others' come from LOG.  Said in the JSON's meta, for the
# tables of docs/benchmarks.md.
PKT_LOAD_SETS = ("prefix", "prefix6", "xdp", "xdp6")

TCG_NOTE = ("The VM is TCG-emulated (no KVM): absolute packets/s and ns mean "
            "little; the ratios between contenders measured in one run are "
            "the result.")
ICOUNT_NOTE = ("The packet path ran under QEMU -icount shift={shift} ({ns} ns "
               "of guest time per guest instruction executed): packets/s and "
               "ns/pkt below count instructions per packet (instructions = "
               "ns / {ns}), repeatable and free of host noise.  It is an "
               "instruction-count measure: caches, TLBs and memory latency "
               "are not modelled, so a large set's cache misses do not show.")
CONTENDERS = ["none", "unused", "cuckoo", "nft", "ipset"]
PFX_CONTENDERS = ["none", "cuckoo", "nft", "ipset"]
CASES = ["blocked", "pass"]
SETS_CONTENDERS = ["none", "base", "cuckoo", "sets"]
SETS_NOTE = ("Named sets (mkdata.py): cuckoo, all N addresses in the "
             "default set; sets, the same N addresses dealt into 4 block "
             "sets, and an allow set of N/4 other addresses, checked for "
             "every blocked packet{base}.  Sources as for the address "
             "sets.")
SETS_BASE = ("; base, the module of revision {rev} with the N addresses in "
             "its one list")
XDP_CONTENDERS = ["none", "xdp_drop", "xdp_pass", "cuckoo", "nft",
                  "cuckoo_xdp", "cuckoo_xdp_nohooks", "bpf_hash",
                  "xdp_filter"]
XDP_NAMES = {"none": "no filter", "xdp_drop": "XDP_DROP for all",
             "xdp_pass": "XDP_PASS for all",
             "cuckoo": "cuckoo_nf netfilter hook", "nft": "nftables set",
             "cuckoo_xdp": "cuckoo_nf at XDP",
             "cuckoo_xdp_nohooks": "cuckoo_nf at XDP, hooks off",
             "bpf_hash": "BPF hash map",
             "xdp_filter": "xdp-filter"}
XDP_NOTE = ("XDP (native, on the receiving veth): xdp_drop and xdp_pass "
            "return their verdict for every packet, the floors of a drop "
            "and of a pass at XDP here; cuckoo_xdp is cuckoo_nf's set "
            "looked up from XDP (cuckooctl xdp attach DEV native), with "
            "the namespace's netfilter hooks on (the default) and off "
            "(cuckoo_xdp_nohooks, cuckooctl hooks off); "
            "bpf_hash a BPF hash map of the addresses (key and value 4 "
            "bytes) looked up by a minimal program (bench_xdp.bpf.c); "
            "xdp_filter is xdp-tools' xdp-filter (-f ipv4, its addresses "
            "added one by one), at the sizes its map takes (10000 "
            "entries); cuckoo and nft as in the address sets.  Sources as "
            "for the address sets.  veth gives XDP a copy of every skb "
            "with less headroom than XDP_PACKET_HEADROOM (pktgen's), so "
            "the floors include a page allocation and copy per packet "
            "that netfilter's path does not pay.")
XDP6_NOTE = ("XDP in IPv6: the same contenders but nft and bpf_hash "
             "(xdp-filter with -f ipv6), N addresses in 2001:db8:a::/64; "
             "pktgen draws no random IPv6 source: every packet of a sample "
             "comes from 2001:db8:a::1 (blocked) or 2001:db8:b::1 (pass).")
PFX_NOTE = ("Prefix sets (mkdata.py): IPv4 prefixes of 25 lengths (/8 to "
            "/32, mostly /16 to /24, as in blocklists), none overlapping; "
            "nft: set of ipv4_addr with flags interval; ipset: hash:net.  "
            "pass: sources random in a /16 no prefix covers; blocked: in a "
            "/16 covered by prefixes of /17 to /32.")
PFX6_NOTE = ("IPv6 prefix sets (mkdata.py): prefixes of 35 lengths (/19 to "
             "/128, mostly /29 to /48, some /56, /64 and /128, as in "
             "country lists), none overlapping; nft: set of ipv6_addr with "
             "flags interval; ipset: hash:net family inet6.  pktgen draws "
             "no random IPv6 source: a sample's packets come from 4 "
             "sources, a quarter each; pass: 4 sources in /32s no prefix "
             "enters; "
             "blocked: 4 sources covered by a /48, /56, /64 and /128.")


def median(v):
    return statistics.median(v) if v else None


def fmt(v, spec="{:.0f}", none="-"):
    return none if v is None else spec.format(v)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def load_samples(path):
    samples = []
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "replace").strip()
            i = line.find("CNF_BENCH {")
            if i < 0:
                continue
            try:
                samples.append(json.loads(line[i + len("CNF_BENCH "):]))
            except json.JSONDecodeError:
                pass
    return samples


def spread(v):
    """(median, min, max, (max - min) / |median| in %) of a list."""
    if not v:
        return None, None, None, None
    m = median(v)
    return m, min(v), max(v), (100.0 * (max(v) - min(v)) / abs(m)
                               if m else None)


def set_of(s):
    """Which sets a sample measured: "addr" (older logs say nothing)."""
    return s.get("set", "addr")


def paired_ratio(case, per, added, other, other_added):
    """Per rep: pass, added / other's added (both costs); blocked,
    ns/pkt / other's.  None unless every rep gives one."""
    if case == "pass":
        rr = [added[r] / other_added[r] for r in added
              if r in other_added and other_added[r] > 0 and added[r] > 0]
        complete = len(rr) == len(added)
    else:
        rr = [per[r] / other[r] for r in per if r in other]
        complete = True
    return spread(rr) if complete and rr else (None,) * 4


def packet_path(samples, contenders=CONTENDERS):
    pps = [s for s in samples if s["kind"] == "pps"]
    sizes = sorted({s["size"] for s in pps})
    ns = {}
    for s in pps:
        key = (s["size"], s["contender"], s["case"])
        n = s["rx"] if s["rx"] > 0 else s["pkts"]
        ns.setdefault(key, {})[s["rep"]] = s["usec"] * 1000.0 / n
    rows = []
    for size in sizes:
        for case in CASES:
            base = ns.get((size, "none", case), {})
            nft = ns.get((size, "nft", case), {})
            nft_added = {r: nft[r] - base[r] for r in nft if r in base}
            ips = ns.get((size, "ipset", case), {})
            ips_added = {r: ips[r] - base[r] for r in ips if r in base}
            for c in contenders:
                per = ns.get((size, c, case), {})
                if not per:
                    continue
                p = sorted(1e9 / v for v in per.values())
                npk = spread(list(per.values()))
                added = {r: per[r] - base[r] for r in per if r in base}
                ad = spread(list(added.values())) if c != "none" else \
                    (0.0, None, None, None)
                # "unused" adds about 0: a spread relative to it is no
                # figure.
                if c == "unused":
                    ad = ad[:3] + (None,)
                vn = [per[r] - nft[r] for r in per if r in nft]
                vn = spread(vn) if c != "nft" else (None,) * 4
                # Ratios of added costs only mean something when both are
                # costs (pass case); the blocked case compares the whole
                # drop path, ns/pkt over nft's ns/pkt.
                cost = c not in ("none", "unused")
                rt = paired_ratio(case, per, added, nft, nft_added) \
                    if cost else (None,) * 4
                ri = paired_ratio(case, per, added, ips, ips_added) \
                    if cost and c != "ipset" else (None,) * 4
                rows.append({
                    "size": size, "case": case, "contender": c,
                    "reps": len(p),
                    "pps_median": median(p), "pps_min": p[0],
                    "pps_max": p[-1],
                    "spread_pct": 100.0 * (p[-1] - p[0]) / median(p),
                    "ns_per_pkt": npk[0], "ns_per_pkt_min": npk[1],
                    "ns_per_pkt_max": npk[2],
                    "added_ns": ad[0], "added_ns_min": ad[1],
                    "added_ns_max": ad[2], "added_spread_pct": ad[3],
                    "vs_nft_ns": vn[0], "vs_nft_ns_min": vn[1],
                    "vs_nft_ns_max": vn[2],
                    # pass: added / nft's added; blocked: ns/pkt / nft's.
                    "ratio_to_nft": rt[0], "ratio_to_nft_min": rt[1],
                    "ratio_to_nft_max": rt[2],
                    "ratio_to_ipset": ri[0], "ratio_to_ipset_min": ri[1],
                    "ratio_to_ipset_max": ri[2],
                    "ratio_of": ("added" if case == "pass"
                                 else "ns_per_pkt"),
                })
    return rows


def loads(samples):
    out = []
    for size in sorted({s["size"] for s in samples if s["kind"] == "load"}):
        for c in ["cuckoo", "nft", "ipset"]:
            ls = [s for s in samples
                  if s["kind"] == "load" and s["size"] == size and
                  s["contender"] == c]
            if not ls:
                continue
            first = ls[0]
            kern = [(s["slab_kb"] + s["vmalloc_kb"]) * 1024.0 for s in ls]
            # A load smaller than slab and vmalloc move by themselves (a
            # slab comes and goes whole) has a median growth of 0 or less:
            # not a measurement, and no goal may take it for one.
            resolved = median(kern) > 0
            kb = median(kern) if resolved else None
            out.append({
                "size": size, "contender": c, "samples": len(ls),
                "load_sec": median([s["sec"] for s in ls]),
                "load_sec_min": min(s["sec"] for s in ls),
                "load_sec_max": max(s["sec"] for s in ls),
                "user_sec": median([s["user"] for s in ls]),
                "sys_sec": median([s["sys"] for s in ls]),
                "kernel_resolved": resolved,
                "kernel_bytes": kb,
                "slab_bytes": median([s["slab_kb"] * 1024.0 for s in ls]),
                "vmalloc_bytes": median([s["vmalloc_kb"] * 1024.0
                                         for s in ls]),
                "memfree_drop_bytes": median([s["memfree_kb"] * 1024.0
                                              for s in ls]),
                "kernel_bytes_per_entry": kb and kb / size,
                "tool_bytes": first["tool_bytes"],
                "tool_bytes_per_entry": (first["tool_bytes"] / size
                                         if first["tool_bytes"] else None),
                # cuckoo_nf's lookup keys: a prefix expands into several.
                "keys": first.get("keys"),
            })
    return out


def sign_unresolved(r):
    """Repetitions of cuckoo - nft on both sides of zero: noise."""
    lo, hi = r["vs_nft_ns_min"], r["vs_nft_ns_max"]
    return lo is not None and lo <= 0 <= hi


def goals(pp, ld, km, km_ic):
    g = []

    def row(size, c, case):
        for r in pp:
            if (r["size"], r["contender"], r["case"]) == (size, c, case):
                return r
        return None

    sizes = sorted({r["size"] for r in pp})
    for case in CASES:
        for size in sizes:
            r = row(size, "cuckoo", case)
            d = r and r["vs_nft_ns"]
            noise = bool(r) and sign_unresolved(r)
            g.append({"goal": f"ns/pkt below nft's ({case}, {size})",
                      "target": "cuckoo - nft < 0 ns",
                      "measured": d,
                      "measured_min": r and r["vs_nft_ns_min"],
                      "measured_max": r and r["vs_nft_ns_max"],
                      # Below in every repetition, not just the median.
                      "met": bool(r) and r["vs_nft_ns_max"] is not None and
                      r["vs_nft_ns_max"] < 0,
                      "within_noise": noise})
    # The module loaded but never configured in the namespace: no hook
    # there, so nothing added to any packet.
    for case in CASES:
        for size in sizes:
            r = row(size, "unused", case)
            if not r or r["added_ns"] is None:
                continue
            lo, hi = r["added_ns_min"], r["added_ns_max"]
            base = row(size, "none", case)
            tol = 0.01 * base["ns_per_pkt"] if base else 0
            g.append({"goal": f"module loaded, namespace unused: adds "
                              f"nothing ({case}, {size})",
                      "target": "unused - none = 0 ns (within the "
                                "reps' spread, or 1% of none)",
                      "measured": r["added_ns"],
                      "measured_min": lo, "measured_max": hi,
                      "met": (lo is not None and lo <= 0 <= hi) or
                      abs(r["added_ns"]) <= tol,
                      "within_noise": lo is not None and lo <= 0 <= hi})
    # Flat: the hook's cost on a miss (pass), the whole drop path (blocked).
    for case, key, what in [("pass", "added_ns", "added ns/pkt"),
                            ("blocked", "ns_per_pkt", "drop path ns/pkt")]:
        rs = [row(s, "cuckoo", case) for s in sizes]
        rs = [r for r in rs if r and r[key] is not None]
        if len(rs) > 1:
            vals = [r[key] for r in rs]
            lo = [r[key + "_min"] for r in rs]
            hi = [r[key + "_max"] for r in rs]
            # Not a cost when noise made one of them a saving.
            flat = max(vals) / min(vals) - 1 if min(vals) > 0 else None
            # Every size's repetitions overlap every other's: the sizes
            # cannot be told apart, whatever the medians say.
            noise = max(lo) <= min(hi)
            g.append({"goal": f"{what} flat {sizes[0]}..{sizes[-1]} "
                              f"({case})",
                      "target": "max/min - 1 <= 0.10", "measured": flat,
                      "values": vals,
                      "met": flat is not None and flat <= 0.10,
                      "within_noise": noise and flat is not None and
                      flat > 0})
    by = {(r["size"], r["contender"]): r for r in ld}
    if ld:
        big = max(r["size"] for r in ld)
        cu = by.get((big, "cuckoo"))
        for other, name in [("nft", "nft -f"), ("ipset", "ipset restore")]:
            o = by.get((big, other))
            r = ratio(o and o["load_sec"], cu and cu["load_sec"])
            g.append({"goal": f"load {big}: >= 10x faster than {name}",
                      "target": "speedup >= 10", "measured": r,
                      "met": r is not None and r >= 10})
        for other, k in [("ipset", 4), ("nft", 10)]:
            o = by.get((big, other))
            r = ratio(cu and cu["kernel_bytes_per_entry"],
                      o and o["kernel_bytes_per_entry"])
            g.append({"goal": f"kernel memory/entry {big} <= 1/{k} of "
                              f"{other}'s (slab+vmalloc)",
                      "target": f"ratio <= {1 / k:.3f}", "measured": r,
                      "met": r is not None and r <= 1 / k})
        o = by.get((big, "ipset"))
        r = ratio(cu and cu["tool_bytes_per_entry"],
                  o and o["tool_bytes_per_entry"])
        g.append({"goal": f"memory/entry {big} <= 1/4 of ipset's "
                          "(own size reports)",
                  "target": "ratio <= 0.250", "measured": r,
                  "met": r is not None and r <= 0.25})
    for measure, ks in [("TCG time", km), ("instructions", km_ic)]:
        for k in ks:
            if k["op"] in ("hit", "miss"):
                g.append({"goal": f"core {k['op']} {k['n']}: faster than "
                                  f"rhashtable ({measure})",
                          "target": "ratio < 1", "measured": k["ratio"],
                          "met": k["ratio"] < 1})
    return g


def prefix_goals(pp, ld, fam=""):
    """The prefix sets' goals: added pass cost of cuckoo at most half of
    nft's and of ipset's at every size and flat within 15%; load at least
    10x faster than nft -f; kernel memory at most 1/10 of nft's.  FAM
    ("IPv6 ") begins each goal's name."""
    g = []
    row = {(r["size"], r["contender"]): r for r in pp if r["case"] == "pass"}
    sizes = sorted({r["size"] for r in pp})
    for size in sizes:
        cu = row.get((size, "cuckoo"))
        for other in ("nft", "ipset"):
            r = cu and cu["ratio_to_" + other]
            g.append({"goal": f"{fam}added pass cost {size} <= 1/2 of "
                              f"{other}'s",
                      "target": "ratio <= 0.500", "measured": r,
                      "measured_min": cu and cu["ratio_to_" + other +
                                                "_min"],
                      "measured_max": cu and cu["ratio_to_" + other +
                                                "_max"],
                      "met": r is not None and
                      cu["ratio_to_" + other + "_max"] <= 0.5})
    vals = [row[(s, "cuckoo")]["added_ns"] for s in sizes
            if (s, "cuckoo") in row]
    if len(vals) > 1:
        flat = max(vals) / min(vals) - 1 if min(vals) > 0 else None
        g.append({"goal": f"{fam}added pass cost flat "
                          f"{sizes[0]}..{sizes[-1]}",
                  "target": "max/min - 1 <= 0.15", "measured": flat,
                  "values": vals,
                  "met": flat is not None and flat <= 0.15})
    by = {(r["size"], r["contender"]): r for r in ld}
    for size in sorted({r["size"] for r in ld}):
        cu, nf = by.get((size, "cuckoo")), by.get((size, "nft"))
        r = ratio(nf and nf["load_sec"], cu and cu["load_sec"])
        g.append({"goal": f"{fam}load {size}: >= 10x faster than nft -f",
                  "target": "speedup >= 10", "measured": r,
                  "met": r is not None and r >= 10})
        r = ratio(cu and cu["kernel_bytes"], nf and nf["kernel_bytes"])
        g.append({"goal": f"{fam}kernel memory {size} <= 1/10 of nft's "
                          "(slab+vmalloc)",
                  "target": "ratio <= 0.100", "measured": r,
                  "met": r is not None and r <= 0.1})
    return g


def sets_goals(pp):
    """The named sets' goals: with 4 block sets and an allow set, added
    pass cost and blocked ns/pkt at most 1.5x one set's; one set within 5%
    of the base revision's, when measured."""
    g = []
    row = {(r["size"], r["contender"], r["case"]): r for r in pp}
    for size in sorted({r["size"] for r in pp}):
        for c, other, bound in (("sets", "cuckoo", 1.5),
                                ("cuckoo", "base", 1.05)):
            for case, key in (("pass", "added_ns"),
                              ("blocked", "ns_per_pkt")):
                a = row.get((size, c, case))
                b = row.get((size, other, case))
                if not a or not b:
                    continue
                r = ratio(a[key], b[key])
                what = "added pass cost" if case == "pass" else \
                    "blocked ns/pkt"
                g.append({"goal": f"{what} {size}: {c} <= {bound}x {other}",
                          "target": f"ratio <= {bound:.3f}",
                          "measured": r,
                          "met": r is not None and r <= bound})
    return g


def xdp_part(pps, samples, set_name="xdp", label=""):
    """The XDP part: the packet path of its contenders, the derived
    figures (each paired per repetition: median and min..max), memory per
    address, and the goals."""
    pp = packet_path(pps, XDP_CONTENDERS)
    ns = {}
    for s in pps:
        n = s["rx"] if s["rx"] > 0 else s["pkts"]
        ns.setdefault((s["size"], s["contender"], s["case"]),
                      {})[s["rep"]] = s["usec"] * 1000.0 / n

    def paired(a, b, f):
        x, y = ns.get(a, {}), ns.get(b, {})
        v = [f(x[r], y[r]) for r in x if r in y]
        m, lo, hi, _ = spread(v)
        return {"median": m, "min": lo, "max": hi, "reps": len(v)} \
            if v else None

    sizes = sorted({s["size"] for s in pps})
    loads_ = [s for s in samples if s["kind"] == "load" and
              set_of(s) == set_name and s.get("tool_bytes")]
    xl = [s for s in samples if s["kind"] == "xdp_load" and
          set_of(s) == set_name]
    derived, memory = [], []
    for size in sizes:
        d = {"size": size}

        def key(c, case, size=size):
            return (size, c, case)
        d["drop_vs_floor"] = paired(key("cuckoo_xdp", "blocked"),
                                    key("xdp_drop", "blocked"),
                                    lambda a, b: a / b - 1)
        for c in ("cuckoo", "nft"):
            d["saved_ns_vs_" + c] = paired(key(c, "blocked"),
                                           key("cuckoo_xdp", "blocked"),
                                           lambda a, b: a - b)
        # What XDP costs veth here before any program runs: it copies
        # every skb of less than XDP_PACKET_HEADROOM headroom (pktgen's)
        # into a page of its own, and polls in NAPI.
        d["veth_xdp_overhead_ns"] = paired(key("xdp_pass", "pass"),
                                           key("none", "pass"),
                                           lambda a, b: a - b)
        for c in ("cuckoo_xdp", "cuckoo_xdp_nohooks", "bpf_hash",
                  "xdp_filter"):
            d["added_pass_ns_" + c] = paired(key(c, "pass"),
                                             key("xdp_pass", "pass"),
                                             lambda a, b: a - b)
            d["drop_ns_" + c] = paired(key(c, "blocked"),
                                       key("xdp_drop", "blocked"),
                                       lambda a, b: a - b)
        derived.append(d)
        m = {"size": size}
        cu = [s["tool_bytes"] for s in loads_ if s["size"] == size]
        m["cuckoo_bytes"] = median(cu)
        for c in ("bpf_hash", "xdp_filter"):
            v = [s["info"] for s in xl
                 if s["size"] == size and s["contender"] == c]
            if not v:
                continue
            m[c + "_kernel_bytes"] = median([i["kernel_bytes"] for i in v])
            m[c + "_fill_sec"] = median([i["fill_sec"] for i in v])
            mm = [i.get("memlock") or (i.get("map") or {}).get("memlock")
                  for i in v]
            mm = [x for x in mm if x is not None]
            m[c + "_memlock"] = median(mm)
            mx = [i.get("max_entries") or (i.get("map") or {}).get(
                "max_entries") for i in v]
            mx = [x for x in mx if x is not None]
            m[c + "_max_entries"] = median(mx)
        for k in list(m):
            if k.endswith("_bytes") or k.endswith("_memlock"):
                m[k + "_per_addr"] = (m[k] / size if m[k] is not None
                                      else None)
        memory.append(m)
    return {"note": XDP_NOTE, "packet_path": pp, "derived": derived,
            "memory": memory, "goals": xdp_goals(derived, memory, label)}


def xdp_goals(derived, memory, label=""):
    """cuckoo_nf at XDP: its drop within 10% of the XDP_DROP floor, its
    added pass cost below xdp-filter's, flat within 10% over the sizes;
    memory per address at the largest size at most 1/20 of a BPF hash
    map's."""
    g = []
    for d in derived:
        r = d["drop_vs_floor"]
        if r:
            g.append({"goal": f"XDP{label} drop {d['size']}: within 10% "
                              "of the "
                              "XDP_DROP floor",
                      "target": "ratio - 1 <= 0.100",
                      "measured": r["median"], "measured_min": r["min"],
                      "measured_max": r["max"],
                      "met": r["max"] <= 0.10})
        xf = d["added_pass_ns_xdp_filter"]
        for k, what in (("cuckoo_xdp", ""),
                        ("cuckoo_xdp_nohooks", ", hooks off")):
            cu = d["added_pass_ns_" + k]
            if cu and xf:
                g.append({"goal": f"XDP{label} added pass cost {d['size']}"
                                  f"{what}: below xdp-filter's",
                          "target": "ratio < 1",
                          "measured": ratio(cu["median"], xf["median"]),
                          "met": cu["max"] < xf["min"]})
    for k, what in (("cuckoo_xdp", ""), ("cuckoo_xdp_nohooks", ", hooks off")):
        vals = [d["added_pass_ns_" + k]["median"] for d in derived
                if d["added_pass_ns_" + k]]
        if len(vals) > 1:
            flat = max(vals) / min(vals) - 1 if min(vals) > 0 else None
            g.append({"goal": f"XDP{label} added pass cost{what} flat "
                              f"{derived[0]['size']}.."
                              f"{derived[-1]['size']}",
                      "target": "max/min - 1 <= 0.10", "measured": flat,
                      "values": vals,
                      "met": flat is not None and flat <= 0.10})
    if memory and memory[-1].get("bpf_hash_kernel_bytes"):
        m = memory[-1]
        r = ratio(m.get("cuckoo_bytes"), m.get("bpf_hash_kernel_bytes"))
        g.append({"goal": f"memory/address {m['size']} <= 1/20 of a BPF "
                          "hash map's (slab+vmalloc)",
                  "target": "ratio <= 0.050", "measured": r,
                  "met": r is not None and r <= 0.05})
    return g


PLACE_CONTENDERS = ["none", "hook", "hook_iif", "hook_other", "mark",
                    "place_base", "xt_raw", "xtnft_raw", "ipset_raw",
                    "ipnet_raw", "nft_raw", "floor_raw", "floor_xtnft_raw",
                    "floor_nft_raw", "xt_in", "xtnft_in", "ipset_in",
                    "ipnet_in", "nft_in", "floor_in", "floor_xtnft_in",
                    "floor_nft_in", "empty_raw", "empty_xtnft_raw",
                    "empty_nft_raw", "empty_in", "empty_xtnft_in",
                    "empty_nft_in"]
PLACE_NAMES = {
    "none": "no filter (hooks off)",
    "hook": "hooks, unscoped",
    "hook_iif": "hooks --iif r0 (receiving device)",
    "hook_other": "hooks --iif d0 (packet out of scope)",
    "mark": "mode mark + nft meta mark drop",
    "place_base": "hooks, base revision",
    "xt_raw": "-m cuckoo, raw PREROUTING",
    "xtnft_raw": "-m cuckoo (iptables-nft), raw PREROUTING",
    "ipset_raw": "-m set hash:ip, raw PREROUTING",
    "ipnet_raw": "-m set hash:net, raw PREROUTING",
    "nft_raw": "nft ip saddr @set, prerouting raw",
    "floor_raw": "-j DROP alone, raw PREROUTING",
    "floor_xtnft_raw": "-j DROP alone (iptables-nft), raw PREROUTING",
    "floor_nft_raw": "nft drop alone, prerouting raw",
    "xt_in": "-m cuckoo, filter INPUT",
    "xtnft_in": "-m cuckoo (iptables-nft), filter INPUT",
    "ipset_in": "-m set hash:ip, filter INPUT",
    "ipnet_in": "-m set hash:net, filter INPUT",
    "nft_in": "nft ip saddr @set, input filter",
    "floor_in": "-j DROP alone, filter INPUT",
    "floor_xtnft_in": "-j DROP alone (iptables-nft), filter INPUT",
    "floor_nft_in": "nft drop alone, input filter",
    "empty_raw": "raw table, no rule",
    "empty_xtnft_raw": "raw table (iptables-nft), no rule",
    "empty_nft_raw": "nft prerouting raw chain, no rule",
    "empty_in": "filter table, no rule",
    "empty_xtnft_in": "filter table (iptables-nft), no rule",
    "empty_nft_in": "nft input filter chain, no rule",
}
# What a rule alone costs is measured over its framework's floor at its
# place: the empty chain (pass), the unconditional drop (blocked).
PLACE_FW = {"xt": "", "ipset": "", "ipnet": "", "xtnft": "_xtnft",
            "nft": "_nft"}
PLACE_NOTE = (
    "Placement (pktgen_bench.sh's place part): N addresses, the address "
    "sets' sources, sent to an address of the receiver's (delivered: "
    "filter INPUT sees them).  cuckoo_nf inserted the whole part, the "
    "addresses in its default set and in a rules-only set; the baseline "
    "has its hooks off (no hook registered).  hook: hooks on, unscoped "
    "(loopback tested and spared); hook_iif: hooks on --iif of the "
    "receiving device; hook_other: hooks on --iif of another device only, "
    "every packet out of scope.  Rules drop (-j DROP, nft drop) after "
    "their match: -m cuckoo on the rules-only set, -m set on ipset "
    "hash:ip and hash:net (the addresses as /32s), nft ip saddr @set, in "
    "raw PREROUTING (nft: prerouting priority raw) and filter INPUT (nft: "
    "input priority filter), iptables legacy unless said.  Added: pass "
    "ns/pkt - the same repetition's baseline's.  Rule alone: pass, "
    "ns/pkt - the same repetition's empty chain of the same framework "
    "at the same place (the table there, no rule: the rule's own cost); "
    "blocked, ns/pkt - its unconditional drop there (the match's cost on "
    "a hit).  Ratios are paired per repetition: median (min..max).{base}")
PLACE_BASE = ("  place_base: the module of revision {rev}, hooks on, the "
              "addresses in its one list.")


def place_part(pps, base=None):
    """The placement part: its packet path, each contender's added cost
    (pass: over the baseline; blocked: over its floor), and the ratios
    the goals are on, paired per repetition."""
    pp = packet_path(pps, PLACE_CONTENDERS)
    ns = {}
    for s in pps:
        n = s["rx"] if s["rx"] > 0 else s["pkts"]
        ns.setdefault((s["size"], s["contender"], s["case"]),
                      {})[s["rep"]] = s["usec"] * 1000.0 / n
    sizes = sorted({s["size"] for s in pps})
    ratios, goals_, own = [], [], []
    for size in sizes:
        def over(c, case, base="none", bcase=None, size=size):
            """{rep: ns/pkt of c - ns/pkt of base}, paired per rep."""
            a = ns.get((size, c, case), {})
            b = ns.get((size, base, bcase or case), {})
            return {r: a[r] - b[r] for r in a if r in b}

        def floor_of(c, case):
            """The floor a rule alone is measured over in @case."""
            fw, _, pos = c.rpartition("_")
            if fw not in PLACE_FW:
                return None
            kind = "empty" if case == "pass" else "floor"
            return kind + PLACE_FW[fw] + "_" + pos

        def alone(c, case):
            f = floor_of(c, case)
            return over(c, case, f) if f else {}

        for c in PLACE_CONTENDERS:
            for case in CASES:
                d = alone(c, case)
                if d:
                    m, lo, hi, _ = spread(list(d.values()))
                    own.append({"size": size, "contender": c, "case": case,
                                "floor": floor_of(c, case), "ns": m,
                                "ns_min": lo, "ns_max": hi,
                                "reps": len(d)})

        def add(name, a, b, bound=None, goal=None):
            if not a or not b:
                return
            rr = [a[r] / b[r] for r in a if r in b and b[r] > 0]
            if len(rr) != len(a):
                rr = []
            m, lo, hi, _ = spread(rr)
            x = {"size": size, "ratio": name, "median": m, "min": lo,
                 "max": hi, "reps": len(rr),
                 "numerator_ns": median(list(a.values())),
                 "denominator_ns": median(list(b.values()))}
            if bound is not None:
                # In every repetition, not just the median.
                x.update({"goal": f"{goal} ({size})", "bound": bound,
                          "met": hi is not None and hi <= bound})
                goals_.append({"goal": x["goal"],
                               "target": f"ratio <= {bound:.3f}",
                               "measured": m, "measured_min": lo,
                               "measured_max": hi, "met": x["met"]})
            ratios.append(x)

        look = over("hook", "pass")
        add("scoped/unscoped, added pass", over("hook_iif", "pass"), look,
            1.05, "hooks --iif (receiving device): pass cost <= 1.05x "
            "unscoped")
        add("scoped/unscoped, blocked ns/pkt",
            ns.get((size, "hook_iif", "blocked"), {}),
            ns.get((size, "hook", "blocked"), {}))
        add("unscoped/base revision, added pass", look,
            over("place_base", "pass"), 1.05,
            "hooks unscoped: pass cost <= 1.05x the base revision's")
        add("out of scope/lookup, added pass", over("hook_other", "pass"),
            look, 0.10, "out-of-scope packet <= 0.10x a lookup's added cost")
        add("out of scope (listed source)/lookup, added",
            over("hook_other", "blocked"), look, 0.10,
            "out-of-scope listed source <= 0.10x a lookup's added cost")
        add("mark mode + nft/hook drop, blocked ns/pkt",
            ns.get((size, "mark", "blocked"), {}),
            ns.get((size, "hook", "blocked"), {}))
        add("mark mode/hook, added pass", over("mark", "pass"), look)
        for pos, where in (("raw", "raw PREROUTING"),
                           ("in", "filter INPUT")):
            for x, xn in (("xt", "-m cuckoo"),
                          ("xtnft", "-m cuckoo (iptables-nft)")):
                for o, on in (("ipset", "-m set hash:ip"),
                              ("ipnet", "-m set hash:net"),
                              ("nft", "nft @set")):
                    a, b = f"{x}_{pos}", f"{o}_{pos}"
                    add(f"{a}/{b}, added pass (over no filter)",
                        over(a, "pass"), over(b, "pass"))
                    for case in CASES:
                        what = "pass" if case == "pass" else "drop"
                        add(f"{a}/{b}, rule alone, {what}",
                            alone(a, case), alone(b, case), 0.5,
                            f"{xn} <= 1/2 of {on}, {where}, {what}")
    note = PLACE_NOTE.format(base=PLACE_BASE.format(rev=base) if base
                             else "")
    return {"note": note, "packet_path": pp, "rule_alone": own,
            "ratios": ratios, "goals": goals_}


def print_place(p, place, reps):
    p("")
    p(place["note"])
    p(f"{reps} repetitions, interleaved.")
    own = {(d["size"], d["contender"], d["case"]): d
           for d in place["rule_alone"]}
    p(f"{'size':>7} {'contender':<44} {'case':<7} {'ns/pkt':>6} "
      f"{'added':>5} {'(min..max)':<11} {'alone':>5} {'(min..max)'}")
    for r in place["packet_path"]:
        lo = hi = ad = None
        if r["case"] == "pass" and r["contender"] != "none":
            ad, lo, hi = r["added_ns"], r["added_ns_min"], r["added_ns_max"]
        d = own.get((r["size"], r["contender"], r["case"])) or {}
        p(f"{r['size']:>7} {PLACE_NAMES[r['contender']]:<44} "
          f"{r['case']:<7} {r['ns_per_pkt']:>6.0f} {fmt(ad):>5} "
          f"{rng(lo, hi, '{:.0f}'):<11} {fmt(d.get('ns')):>5} "
          f"{rng(d.get('ns_min'), d.get('ns_max'), '{:.0f}')}".rstrip())
    p("")
    p("Ratios, paired per repetition: median (min..max)")
    for x in place["ratios"]:
        p(f"{x['size']:>7} {x['ratio']:<46} "
          f"{fmt(x['median'], '{:.3f}'):>6} "
          f"{rng(x['min'], x['max'], '{:.3f}')}")
    print_goals(p, "Placement goals, printed not asserted:",
                place["goals"])


def print_xdp(p, xdp):
    p("")
    p(xdp["note"])
    p(f"{'size':>8} {'contender':<26} {'case':<8} {'ns/pkt':>7} "
      f"{'(min..max)':<15}")
    for r in xdp["packet_path"]:
        p(f"{r['size']:>8} {XDP_NAMES[r['contender']]:<26} "
          f"{r['case']:<8} {r['ns_per_pkt']:>7.0f} "
          f"{rng(r['ns_per_pkt_min'], r['ns_per_pkt_max'], '{:.0f}')}")
    p("")
    p("Paired per repetition, median (min..max): cuckoo_nf's XDP drop over "
      "the floor; netfilter drop - XDP drop;\nadded pass = ns/pkt - "
      "XDP_PASS floor's.")

    def f(x, spec="{:.0f}"):
        if not x:
            return "-"
        return (spec.format(x["median"]) + " " +
                rng(x["min"], x["max"], spec))
    for d in xdp["derived"]:
        p(f"{d['size']:>8} drop/floor-1 {f(d['drop_vs_floor'], '{:.3f}')}"
          f"  saved vs hook {f(d['saved_ns_vs_cuckoo'])}"
          f"  vs nft {f(d['saved_ns_vs_nft'])}")
        p(f"{'':>8} veth's XDP overhead (XDP_PASS floor - no filter, "
          f"pass) {f(d['veth_xdp_overhead_ns'])}")
        p(f"{'':>8} added pass: cuckoo_xdp "
          f"{f(d['added_pass_ns_cuckoo_xdp'])} (hooks off "
          f"{f(d['added_pass_ns_cuckoo_xdp_nohooks'])})  bpf_hash "
          f"{f(d['added_pass_ns_bpf_hash'])}  xdp-filter "
          f"{f(d['added_pass_ns_xdp_filter'])}")
    for m in xdp["memory"]:
        p(f"{m['size']:>8} bytes/address: cuckoo_nf "
          f"{fmt(m.get('cuckoo_bytes_per_addr'), '{:.2f}')}, BPF hash "
          f"{fmt(m.get('bpf_hash_kernel_bytes_per_addr'), '{:.1f}')} "
          f"(memlock {fmt(m.get('bpf_hash_memlock_per_addr'), '{:.1f}')}), "
          f"xdp-filter "
          f"{fmt(m.get('xdp_filter_kernel_bytes_per_addr'), '{:.1f}')} "
          f"(its load {fmt(m.get('xdp_filter_fill_sec'), '{:.1f}')} s)")
    print_goals(p, "XDP goals, printed not asserted:", xdp["goals"])


def rng(lo, hi, spec):
    if lo is None:
        return ""
    return "(" + spec.format(lo) + ".." + spec.format(hi) + ")"


def noise(r):
    """' = nft: noise' when the reps disagree on the sign of r - nft."""
    return " = nft: noise" if sign_unresolved(r) else ""


def print_packet_path(p, meta, pp):
    icount = meta.get("pkt_icount")
    if icount not in (None, ""):
        sh = int(icount)
        p(ICOUNT_NOTE.format(shift=sh, ns=2 ** sh))
    else:
        p("The packet path ran under plain TCG: guest time is host time, "
          "every host process is noise in it.")
    p("Packet path: pktgen UDP over veth, random sources in a range of N, "
      "{} pkts/sample, {} reps ({} at >= 1M), interleaved.".format(
          meta.get("pkt_pkts", "?"), meta.get("pkt_reps", "?"),
          meta.get("pkt_reps_big", "?")))
    p("Medians over reps, (min..max) over reps; spread = (max - min) / "
      "median, of pps and of the added cost;")
    p("'= nft: noise' where the reps disagree on the sign of the "
      "difference to nft.")
    for case, title in [
            ("pass", "pass (no source listed: the cost of a miss); added = "
                     "ns/pkt - same rep's 'none';\n  /nft = added / nft's "
                     "added, paired per rep"),
            ("blocked", "blocked (every source listed: the drop path); "
                        "/nft = ns/pkt / nft's ns/pkt, paired;\n  "
                        "vs none is negative: dropping early saves the "
                        "forwarding")]:
        rows = [r for r in pp if r["case"] == case]
        if not rows:
            continue
        p("")
        p(title)
        added = "added ns" if case == "pass" else "vs none"
        p(f"{'size':>8} {'contender':<9} {'pps med':>8} {'spread':>7} "
          f"{'ns/pkt':>7} {added:>8} {'(min..max)':<15} {'spread':>7} "
          f"{'/nft':>5} {'(min..max)'}")
        for r in rows:
            ad = ("-" if r["contender"] == "none" else
                  fmt(r["added_ns"], "{:.0f}"))
            asp = r["added_spread_pct"]
            rn = rng(r['ratio_to_nft_min'], r['ratio_to_nft_max'], '{:.2f}')
            p(f"{r['size']:>8} {r['contender']:<9} "
              f"{r['pps_median']:>8.0f} {r['spread_pct']:>6.2f}% "
              f"{r['ns_per_pkt']:>7.0f} {ad:>8} "
              f"{rng(r['added_ns_min'], r['added_ns_max'], '{:.0f}'):<15} "
              f"{fmt(asp, '{:6.2f}%', '-'):>7} "
              f"{fmt(r['ratio_to_nft'], '{:.2f}'):>5} "
              f"{rn:<13}"
              f"{noise(r)}".rstrip())


def print_core(p, title, unit, km):
    p("")
    p(title)
    p(f"{'n':>9} {'op':<8} {'cuckoo':>9} {'rhashtable':>10} {'ratio':>6}"
      f"   ({unit})")
    for k in km:
        p(f"{k['n']:>9} {k['op']:<8} {k['cuckoo_ns']:>9.1f} "
          f"{k['rht_ns']:>10.1f} {k['ratio']:>6.2f}")


def print_table(meta, pp, ld, km, km_ic, kmem, gl, pfx, pfx6, sets, xdp,
                xdp6, place):
    p = print
    p("=" * 78)
    p("cuckoo_nf benchmark in the VM (make bench-vm)")
    p(TCG_NOTE)
    p("Kernel {kernel}, {vcpus} vCPU, {mem_mb} MB; "
      "ipset via {iptables}".format(
          **{k: meta.get(k, "?") for k in
             ["kernel", "vcpus", "mem_mb", "iptables"]}))
    p("Host: {}, load average {} (start) / {} (end), {}".format(
        meta.get("host", "?"), meta.get("host_load_start", "?"),
        meta.get("host_load_end", "?"), meta.get("date", "?")))
    p("")
    if meta.get("icount") not in (None, ""):
        p("Load times ran under -icount too: guest seconds of "
          "instructions, not host time.")
    if pp or pfx["packet_path"] or pfx6["packet_path"] or \
            place["packet_path"]:
        print_packet_path(p, meta, pp)
    if ld:
        p("")
        p("Load N addresses (cuckooctl load / nft -f / ipset restore) and "
          "kernel memory")
        p("(slab+vmalloc delta from /proc/meminfo; tool = cuckooctl stats "
          "bytes, ipset list -t).")
        p(f"{'size':>8} {'contender':<9} {'load s':>8} {'user':>6} "
          f"{'sys':>6} {'kern B/ent':>10} {'tool B/ent':>10} {'n':>3}")
    for r in ld:
        p(f"{r['size']:>8} {r['contender']:<9} {r['load_sec']:>8.2f} "
          f"{r['user_sec']:>6.2f} {r['sys_sec']:>6.2f} "
          f"{fmt(r['kernel_bytes_per_entry'], '{:.1f}'):>10} "
          f"{fmt(r['tool_bytes_per_entry'], '{:.1f}'):>10} "
          f"{r['samples']:>3}")
    for x, what in ((pfx, ""), (pfx6, "IPv6 ")):
        if x["packet_path"] or x["load_memory"]:
            print_prefix(p, x, what)
    if sets["packet_path"]:
        print_sets(p, sets)
    if place["packet_path"]:
        print_place(p, place, meta.get("pkt_place_reps", "?"))
    if xdp["packet_path"]:
        print_xdp(p, xdp)
    if xdp6["packet_path"]:
        print_xdp(p, xdp6)
    if km:
        print_core(p, "Filter core vs rhashtable in kernel context "
                   "(cnf_bench.ko), plain TCG; ratio = cuckoo/rht",
                   "ns per op", km)
        for k in kmem:
            p(f"{k['n']:>9} memory   {k['cuckoo_bytes'] / k['n']:>7.2f} B "
              f"{k['rht_bytes'] / k['n']:>8.2f} B per entry")
    if km_ic:
        print_core(p, "Filter core vs rhashtable under -icount "
                   "(instructions per op: TCG's cost of a\nmemory access "
                   "and the caches are left out)", "instructions per op",
                   km_ic)
    print_goals(p, "Goals, printed not asserted:", gl)
    p(TCG_NOTE)
    p("=" * 78)


def print_sets(p, sets):
    p("")
    p(sets["note"])
    p(f"{'size':>8} {'contender':<9} {'case':<8} {'ns/pkt':>7} "
      f"{'added ns':>8} {'(min..max)':<15}")
    for r in sets["packet_path"]:
        ad = "-" if r["contender"] == "none" else fmt(r["added_ns"])
        p(f"{r['size']:>8} {r['contender']:<9} {r['case']:<8} "
          f"{r['ns_per_pkt']:>7.0f} {ad:>8} "
          f"{rng(r['added_ns_min'], r['added_ns_max'], '{:.0f}'):<15}"
          .rstrip())
    print_goals(p, "Named sets goals, printed not asserted:", sets["goals"])


def print_prefix(p, pfx, what):
    pp, ld, gl = pfx["packet_path"], pfx["load_memory"], pfx["goals"]
    p("")
    p(pfx["note"])
    for case, how in [("pass", "added = ns/pkt - same rep's 'none'; "
                               "/nft, /ipset = added / theirs, paired"),
                      ("blocked", "vs none; /nft, /ipset = ns/pkt / "
                                  "theirs, paired")]:
        rows = [r for r in pp if r["case"] == case]
        if not rows:
            continue
        p("")
        p(f"{what}prefixes, {case}: {how}")
        added = "added ns" if case == "pass" else "vs none"
        p(f"{'size':>8} {'contender':<9} {'ns/pkt':>7} {added:>8} "
          f"{'(min..max)':<15} {'/nft':>5} {'/ipset':>6}")
        for r in rows:
            ad = ("-" if r["contender"] == "none" else
                  fmt(r["added_ns"], "{:.0f}"))
            p(f"{r['size']:>8} {r['contender']:<9} {r['ns_per_pkt']:>7.0f} "
              f"{ad:>8} "
              f"{rng(r['added_ns_min'], r['added_ns_max'], '{:.0f}'):<15} "
              f"{fmt(r['ratio_to_nft'], '{:.2f}'):>5} "
              f"{fmt(r['ratio_to_ipset'], '{:.2f}'):>6}".rstrip())
    if ld:
        p("")
        p(f"Load N {what}prefixes (cuckooctl load / nft -f / ipset "
          "restore), "
          "kernel memory (slab+vmalloc delta), in the packet path's boot")
        p(f"{'size':>8} {'contender':<9} {'load s':>8} {'kern bytes':>11} "
          f"{'B/prefix':>9} {'keys':>8} {'n':>3}")
        for r in ld:
            p(f"{r['size']:>8} {r['contender']:<9} {r['load_sec']:>8.4f} "
              f"{fmt(r['kernel_bytes']):>11} "
              f"{fmt(r['kernel_bytes_per_entry'], '{:.1f}'):>9} "
              f"{fmt(r.get('keys'), '{:.0f}'):>8} {r['samples']:>3}")
    print_goals(p, f"{what or 'IPv4 '}prefix goals, printed not asserted:",
                gl)


def print_goals(p, title, gl):
    if not gl:
        return
    p("")
    p(title)
    for x in gl:
        m = x["measured"]
        spec = "{:.0f}" if m is not None and abs(m) >= 100 else "{:.3f}"
        extra = ""
        if x.get("measured_min") is not None:
            # A ratio's range with its digits, a cost's in whole ns.
            rs = "{:.3f}" if x["target"].startswith("ratio") else "{:.0f}"
            extra = " " + rng(x["measured_min"], x["measured_max"], rs)
        if x.get("values"):
            extra = " (" + " / ".join(f"{v:.0f}" for v in x["values"]) + ")"
        if x.get("within_noise"):
            extra += (" - reps disagree on the sign: noise"
                      if "measured_min" in x else
                      " - sizes overlap: within noise")
        p(f"  {'MET ' if x['met'] else 'MISS'}  {x['goal']:<58} "
          f"{x['target']:<22} measured {fmt(m, spec)}{extra}")


def read_meta(samples):
    meta = {}
    for s in samples:
        if s["kind"] == "meta":
            meta.update({k: v for k, v in s.items() if k != "kind"})
    return meta


def main():
    args = sys.argv[1:]
    pkt_path = None
    if args[:1] == ["--pkt-log"] and len(args) > 1:
        pkt_path = args[1]
        args = args[2:]
    if len(args) < 2:
        sys.exit("usage: vm_report.py [--pkt-log PKTLOG] LOG JSON "
                 "[KEY=VALUE...]")
    samples = load_samples(args[0])
    pkt_samples = load_samples(pkt_path) if pkt_path else samples
    meta = read_meta(samples)
    pmeta = read_meta(pkt_samples)
    for k in ["icount", "pkts", "reps", "reps_big", "place_reps"]:
        meta["pkt_" + k] = pmeta.get(k)
    for kv in args[2:]:
        k, _, v = kv.partition("=")
        meta[k] = v
    meta["complete"] = all(any(s["kind"] == "end" for s in x)
                           for x in (samples, pkt_samples))
    meta["note"] = TCG_NOTE
    meta["pkt_load_sets"] = list(PKT_LOAD_SETS)
    if meta["pkt_icount"] not in (None, ""):
        sh = int(meta["pkt_icount"])
        meta["packet_path_note"] = ICOUNT_NOTE.format(shift=sh, ns=2 ** sh)
    pps = [s for s in pkt_samples if s["kind"] == "pps"]

    def loads_of(name):
        src = pkt_samples if name in PKT_LOAD_SETS else samples
        return loads([s for s in src if set_of(s) == name])

    pp = packet_path([s for s in pps if set_of(s) == "addr"])
    ld = loads_of("addr")
    ppp = packet_path([s for s in pps if set_of(s) == "prefix"],
                      PFX_CONTENDERS)
    pld = loads_of("prefix")
    pfx = {"note": PFX_NOTE, "packet_path": ppp, "load_memory": pld,
           "goals": prefix_goals(ppp, pld)}
    ppp6 = packet_path([s for s in pps if set_of(s) == "prefix6"],
                       PFX_CONTENDERS)
    pld6 = loads_of("prefix6")
    pfx6 = {"note": PFX6_NOTE, "packet_path": ppp6, "load_memory": pld6,
            "goals": prefix_goals(ppp6, pld6, "IPv6 ")}
    spp = packet_path([s for s in pps if set_of(s) == "sets"],
                      SETS_CONTENDERS)
    base = SETS_BASE.format(rev=meta["base"]) if meta.get("base") else ""
    sets = {"note": SETS_NOTE.format(base=base),
            "packet_path": spp, "goals": sets_goals(spp)}
    # cnf_bench.ko ran under plain TCG (LOG) and, with --pkt-log, under
    # -icount (PKTLOG); a single boot under -icount counts instructions.
    km = [s for s in samples if s["kind"] == "kmod"]
    km_ic = []
    if pkt_path:
        km_ic = [s for s in pkt_samples if s["kind"] == "kmod"]
    elif meta.get("icount") not in (None, ""):
        km, km_ic = [], km
    kmem = [s for s in samples if s["kind"] == "kmem"]
    xdp = xdp_part([s for s in pps if set_of(s) == "xdp"], pkt_samples)
    xdp6 = xdp_part([s for s in pps if set_of(s) == "xdp6"], pkt_samples,
                    "xdp6", " IPv6")
    xdp6["note"] = XDP6_NOTE
    place = place_part([s for s in pps if set_of(s) == "place"],
                       meta.get("base"))
    gl = goals(pp, ld, km, km_ic)
    print_table(meta, pp, ld, km, km_ic, kmem, gl, pfx, pfx6, sets, xdp,
                xdp6, place)
    raw = pps + [s for s in samples if s["kind"] == "load" and
                 not (pkt_path and set_of(s) in PKT_LOAD_SETS)]
    if pkt_path:
        raw += [s for s in pkt_samples if s["kind"] == "load" and
                set_of(s) in PKT_LOAD_SETS]
    raw += [s for s in pkt_samples if s["kind"] == "xdp_load"]
    with open(args[1], "w") as f:
        json.dump({"meta": meta, "packet_path": pp, "load_memory": ld,
                   "core_vs_rhashtable": km,
                   "core_vs_rhashtable_icount": km_ic, "core_memory": kmem,
                   "goals": gl, "prefix": pfx, "prefix6": pfx6,
                   "sets": sets, "place": place, "xdp": xdp,
                   "xdp6": xdp6,
                   "samples": raw}, f,
                  indent=1)
        f.write("\n")
    if not meta["complete"]:
        print("bench-vm: the run did not complete; figures are partial",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
