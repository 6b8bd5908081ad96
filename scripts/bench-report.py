#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# bench-report.py: rewrite docs/benchmarks.md's tables from the JSON the
# benchmarks wrote (build/bench/core.json from `make bench`, vm.json from
# `make bench-vm`) and draw the plots in userspace/bench/plots/ with
# gnuplot.  The reliability table comes the same way from
# build/bench/reliability.json, which the tests fill
# (scripts/reliability.py).  `make bench-report` runs this: the figures
# shown are those of the run that last refreshed the document, in a
# commit of their own when a change moved them, not every run's.
#
# docs/benchmarks.md holds one region per benchmark between
#   <!-- bench-report NAME -->  and  <!-- end bench-report NAME -->
# which is replaced whole.  A benchmark without JSON gets the command that
# produces it instead of figures; a region whose part of the JSON a run
# left out (`make bench-vm` with CNF_TEST_BENCH_SKIP=addr or =prefix) is
# kept as it is.  `bench-report.py NAME...` rewrites only those regions
# (`bench-report.py reliability` after the tests).  When a run was made
# stays in its JSON and in the commit that brings its figures: the
# document says what was measured, how and on what.  Plots are linked
# relative to docs/.
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "build", "bench")
PLOTS = os.path.join(ROOT, "userspace", "bench", "plots")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")


def si(v):
    if v is None:
        return "-"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(v) >= div:
            return f"{v / div:.1f}{unit}"
    return f"{v:.0f}"


def size_name(n):
    for div, unit in ((1000000, "M"), (1000, "K")):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def load(name):
    path = os.path.join(BENCH, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def gnuplot(script, out):
    """Run a gnuplot script writing the SVG OUT; False without gnuplot."""
    if not shutil.which("gnuplot"):
        print("bench-report: gnuplot missing (scripts/deps.sh --bench): "
              f"{os.path.relpath(out, ROOT)} not redrawn", file=sys.stderr)
        return os.path.exists(out)
    os.makedirs(PLOTS, exist_ok=True)
    head = ("set terminal svg size 720,400 dynamic font 'sans,11'\n"
            f"set output '{out}'\nset key top left\nset grid ytics\n")
    subprocess.run(["gnuplot"], input=head + script, text=True, check=True)
    return True


def datafile(rows):
    f = tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False)
    for r in rows:
        f.write(" ".join(str(x) for x in r) + "\n")
    f.close()
    return f.name


def core_report():
    data = load("core.json")
    if data is None:
        return ("No figures yet: `make bench` (a few minutes) writes "
                "`build/bench/core.json` and this table.\n")
    res = data["results"]
    if not res:
        return None  # a run of the prefix sets only
    out = [f"Measured on {data['machine']} by `make bench`: "
           f"{data['note']}; K = 10^3, M = 10^6.  Baseline: `ref12.c`, "
           "the paper's filter as its reference implementation runs it, "
           "timed in the same run on the same keys.\n",
           "| entries | inserts/s reserved / growing | lookups/s hit / miss "
           "| batched hit / miss | baseline hit / miss | deletes/s "
           "| load before growth | bytes/entry |",
           "|---|---|---|---|---|---|---|---|"]
    for r in res:
        base = "-"
        if r["baseline_hits_per_s"]:
            base = (f"{si(r['baseline_hits_per_s'])} / "
                    f"{si(r['baseline_misses_per_s'])}")
        batched = "-"
        if r["batched_hits_per_s"]:
            batched = (f"{si(r['batched_hits_per_s'])} / "
                       f"{si(r['batched_misses_per_s'])}")
        out.append(
            f"| {r['family'].replace('ipv', 'IPv')} "
            f"{size_name(r['entries'])} "
            f"| {si(r['inserts_per_s_reserved'])} / "
            f"{si(r['inserts_per_s_growing'])} "
            f"| {si(r['hits_per_s'])} / {si(r['misses_per_s'])} "
            f"| {batched} | {base} | {si(r['deletes_per_s'])} "
            f"| {r['load_before_growth']:.3f} "
            f"| {r['bytes_per_entry']:.2f} |")
    v4 = [r for r in res if r["family"] == "ipv4"]
    rows = [(size_name(r["entries"]), r["hits_per_s"] / 1e6,
             r["misses_per_s"] / 1e6, r["batched_hits_per_s"] / 1e6,
             r["batched_misses_per_s"] / 1e6,
             r["baseline_hits_per_s"] / 1e6,
             r["baseline_misses_per_s"] / 1e6) for r in v4]
    svg = os.path.join(PLOTS, "core-lookups.svg")
    if rows:
        dat = datafile(rows)
        drawn = gnuplot(
            "set title 'IPv4 lookups/s, one core (make bench)'\n"
            "set ylabel 'million lookups/s'\nset xlabel 'entries'\n"
            "set style data histograms\nset style histogram clustered\n"
            "set style fill solid 0.8 border -1\nset yrange [0:*]\n"
            f"plot '{dat}' using 2:xtic(1) title 'hit', '' using 3 title "
            "'miss', '' using 4 title 'batched hit', '' using 5 title "
            "'batched miss', '' using 6 title 'baseline hit', '' using 7 "
            "title 'baseline miss'\n", svg)
        os.unlink(dat)
        if drawn:
            out.append("\n![IPv4 lookups/s of the filter core and the "
                       "baseline at each size]"
                       "(../userspace/bench/plots/core-lookups.svg)")
    return "\n".join(out) + "\n"


def core_prefix_report():
    data = load("core.json")
    if data is None:
        return ("No figures yet: `make bench` writes `build/bench/core.json` "
                "and this table.\n")
    res = data.get("prefix_results")
    if not res:
        return None  # a run of the address sets only
    out = [f"Measured on {data['machine']} by `make bench`: "
           f"{data['note']}; {data['prefix_note']}.  Probes: lookup tables "
           "holding keys, the most a lookup reads (an IPv6 lookup reads "
           "only the long tiers that the directory names for its /32); "
           "keys: what the prefixes expand into; bytes: "
           "the filter's own count.\n",
           "| prefix set | lengths | loaded prefixes/s | lookups/s hit / "
           "miss | ns hit / miss | probes | lookup keys | bytes/prefix "
           "| wrong answers |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in res:
        out.append(
            f"| {r['family'].replace('ipv', 'IPv')} "
            f"{size_name(r['prefixes'])} | {r['lengths']} "
            f"| {si(r['load_prefixes_per_s'])} "
            f"| {si(r['hits_per_s'])} / {si(r['misses_per_s'])} "
            f"| {r['ns_per_hit']:.1f} / {r['ns_per_miss']:.1f} "
            f"| {r['tables']} | {si(r['keys'])} "
            f"| {r['bytes_per_prefix']:.1f} | {r['wrong_answers']} |")
    flat = []
    for fam in ("ipv4", "ipv6"):
        by = {r["prefixes"]: r for r in res if r["family"] == fam}
        sizes = sorted(by)
        if len(sizes) < 2:
            continue
        a, b = by[sizes[0]], by[sizes[-1]]
        flat.append(f"{fam.replace('ipv', 'IPv')} hit "
                    f"{b['ns_per_hit'] / a['ns_per_hit']:.2f}x, miss "
                    f"{b['ns_per_miss'] / a['ns_per_miss']:.2f}x "
                    f"({size_name(sizes[-1])} / {size_name(sizes[0])})")
    if flat:
        out.append("\nFlatness, lookup time at the largest set over the "
                   "smallest (CPU time: a larger set's cache misses count, "
                   "unlike in bench-vm's instruction counts): " +
                   "; ".join(flat) + ".")
    return "\n".join(out) + "\n"


def vm_measured(data, what="", set_name="addr", reps=None):
    """The "Measured ..." line of a vm.json, for the part of @set_name
    (@reps: its repetitions, where they are not the others')."""
    meta = data["meta"]
    how = ("under QEMU -icount (ns are guest instructions)"
           if meta.get("pkt_icount") not in (None, "") else "under plain TCG")
    reps = reps or meta.get("pkt_reps", meta.get("reps", "?"))
    pkts = meta.get("pkt_pkts", meta.get("pkts", "?"))
    # vm_report.py names the sets whose loads come from the packet path's
    # boot (a vm.json that names none: XDP's); the others' come from the
    # boot the report was made from, the -icount one when it ran alone
    # (CNF_TEST_BENCH_SKIP=load).
    pkt_sets = meta.get("pkt_load_sets", ["xdp", "xdp6"])
    icount = meta.get("pkt_icount" if set_name in pkt_sets else "icount")
    loads = ("load times under -icount too (guest instructions)"
             if icount not in (None, "") else
             "load times under plain TCG (host time)")
    return (f"Measured on {meta.get('host', '?')} by `make bench-vm`"
            f"{what}, kernel {meta.get('kernel', '?')}: packet path {how}, "
            f"{pkts} packets a sample, median of {reps} repetitions with "
            f"min..max; {loads}.\n")


def added_cost_table(pp, sizes, names, ratios):
    """Rows of the pass case's added cost per packet, a column per size:
    median (min..max), then for a contender its ratio to each contender
    ratios[contender] names."""
    out = ["| added cost per packet, pass case | " +
           " | ".join(size_name(s) for s in sizes) + " |",
           "|---" * (len(sizes) + 1) + "|"]
    for c in ("cuckoo", "nft", "ipset"):
        cells = []
        for s in sizes:
            r = next((x for x in pp if x["size"] == s and
                      x["contender"] == c), None)
            if r is None or r["added_ns"] is None:
                cells.append("-")
                continue
            cell = (f"{r['added_ns']:.0f} ({r['added_ns_min']:.0f}.."
                    f"{r['added_ns_max']:.0f})")
            for other in ratios.get(c, ()):
                if r.get(f"ratio_to_{other}") is not None:
                    cell += f", {r[f'ratio_to_{other}']:.2f}x {other}"
            cells.append(cell)
        out.append(f"| {names[c]} | " + " | ".join(cells) + " |")
    return out


def vm_report():
    data = load("vm.json")
    if data is None:
        return ("No figures yet: `make bench-vm` (two VM boots, over 20 "
                "minutes on an idle 2-core machine) writes "
                "`build/bench/vm.json` and these tables.\n")
    if not (data["packet_path"] or data["load_memory"]):
        return None  # a run of the prefix sets only
    out = [vm_measured(data)]
    pp = [r for r in data["packet_path"] if r["case"] == "pass"]
    sizes = sorted({r["size"] for r in pp})
    names = {"cuckoo": "cuckoo_nf", "nft": "nftables set",
             "ipset": "ipset hash:ip"}
    if pp:
        out += added_cost_table(pp, sizes, names,
                                {"cuckoo": ("nft",), "ipset": ("nft",)})
        rows = []
        for s in sizes:
            row = [s]
            for c in ("cuckoo", "nft", "ipset"):
                r = next((x for x in pp if x["size"] == s and
                          x["contender"] == c), None)
                row.append(r["added_ns"] if r and r["added_ns"] is not None
                           else "NaN")
            rows.append(row)
        dat = datafile(rows)
        svg = os.path.join(PLOTS, "vm-added-cost.svg")
        if gnuplot("set title 'Added cost per packet, no source listed "
                   "(make bench-vm)'\nset logscale x\n"
                   "set xlabel 'set size'\nset ylabel 'ns/packet over no "
                   "filter'\nset yrange [0:*]\n"
                   f"plot '{dat}' using 1:2 with linespoints title "
                   "'cuckoo_nf', '' using 1:3 with linespoints title "
                   "'nftables', '' using 1:4 with linespoints title "
                   "'ipset'\n", svg):
            out.append("\n![Added cost per packet against set size]"
                       "(../userspace/bench/plots/vm-added-cost.svg)\n")
        os.unlink(dat)
    ld = data.get("load_memory", [])
    if ld:
        out.append("")
        out.append("| load and memory | entries | load, s | kernel bytes "
                   "per entry |")
        out.append("|---|---|---|---|")
        for r in ld:
            out.append(f"| {names.get(r['contender'], r['contender'])} "
                       f"| {size_name(r['size'])} "
                       f"| {r['load_sec']:.2f} "
                       f"| {memory_cell(r, 'kernel_bytes_per_entry')} |")
        out += unresolved_note(ld, names)
    km = data.get("core_vs_rhashtable", [])
    if km:
        out.append("\nFilter core against rhashtable in kernel context "
                   "(`userspace/bench/kmod/cnf_bench.c`, plain TCG):\n")
        out.append("| entries | op | cuckoo_nf ns | rhashtable ns | ratio |")
        out.append("|---|---|---|---|---|")
        keys = sorted({(k["n"], k["op"]) for k in km})
        for n, op in keys:
            v = [k for k in km if k["n"] == n and k["op"] == op]
            cu = statistics.median(k["cuckoo_ns"] for k in v)
            rh = statistics.median(k["rht_ns"] for k in v)
            out.append(f"| {size_name(n)} | {op} | {cu:.1f} | {rh:.1f} "
                       f"| {cu / rh:.2f} |")
    return "\n".join(out) + "\n"


def memory_cell(r, key, show="{:.1f}".format):
    """A load's kernel memory figure @key, as a table cell: vm_report.py
    leaves it out where the load was below what slabs resolve."""
    if r.get(key) is not None:
        return show(r[key])
    return "below resolution" if r.get("kernel_resolved") is False else "-"


def unresolved_note(ld, names):
    """The lines under a load table that say why a load's memory reads
    "below resolution", and what the tool counted instead; none if no
    load does."""
    rows = [r for r in ld if r.get("kernel_resolved") is False]
    if not rows:
        return []
    told = [f"{names.get(r['contender'], r['contender'])} "
            f"{size_name(r['size'])}: {r['tool_bytes_per_entry']:.1f}"
            for r in rows if r.get("tool_bytes_per_entry")]
    return ["", "Below resolution: over the load, slab and vmalloc grew by "
            "no more than they moved by themselves (a slab comes and goes "
            "whole, 4 to 32 KB), in the median of the repetitions." +
            (" Bytes per entry the tool reports (`cuckooctl stats`, "
             "ipset's `Size in memory`): " + "; ".join(told) + "."
             if told else "")]


def goal_text(g):
    m = "-" if g["measured"] is None else f"{g['measured']:.3f}"
    return f"{g['goal']}: {m}, {'met' if g['met'] else 'missed'}"


def prefix_tables(pfx, names):
    """The added-cost, load and memory tables and goals of one family's
    prefix sets (vm.json's "prefix" or "prefix6")."""
    out = []
    pp = [r for r in pfx["packet_path"] if r["case"] == "pass"]
    sizes = sorted({r["size"] for r in pp})
    if pp:
        out += added_cost_table(pp, sizes, names,
                                {"cuckoo": ("nft", "ipset")})
    ld = pfx["load_memory"]
    if ld:
        out.append("")
        out.append("| load and memory | prefixes | load, s | kernel bytes "
                   "| per prefix | reported | lookup keys |")
        out.append("|---|---|---|---|---|---|---|")
        for r in ld:
            out.append(f"| {names[r['contender']]} "
                       f"| {size_name(r['size'])} | {r['load_sec']:.4f} "
                       f"| {memory_cell(r, 'kernel_bytes', si)} "
                       f"| {memory_cell(r, 'kernel_bytes_per_entry')} "
                       f"| {si(r.get('tool_bytes'))} "
                       f"| {si(r.get('keys'))} |")
        out += unresolved_note(ld, names)
    if pfx["goals"]:
        out.append("\nGoals, as ratios measured in this run: " +
                   "; ".join(goal_text(g) for g in pfx["goals"]) + ".")
    return out


def vm_prefix_report():
    data = load("vm.json")
    if data is None:
        return ("No figures yet: `make bench-vm` (or, for these alone, "
                "`CNF_TEST_BENCH_SKIP='addr sets xdp mod' make bench-vm`) "
                "writes `build/bench/vm.json` and these tables.\n")
    pfx, pfx6 = data.get("prefix"), data.get("prefix6")
    have = [x for x in (pfx, pfx6)
            if x and (x["packet_path"] or x["load_memory"])]
    if not have:
        return None  # a run without the prefix sets
    out = [vm_measured(data, " (prefix sets)", "prefix").rstrip("\n")]
    if pfx in have:
        out += ["\nIPv4 prefixes of 25 lengths, /8 to /32, mostly /16 to "
                "/24 as in blocklists, none overlapping "
                "(`userspace/bench/vm/mkdata.py`); pass: sources random in "
                "a /16 no prefix covers.  nftables: a set of `ipv4_addr` "
                "with `flags interval`; ipset: `hash:net`.  Kernel bytes: "
                "what slab and vmalloc grew by over the load, which the "
                "goals take (coarse at 1K: slabs with room take small "
                "allocations without growing); reported: what the tool "
                "says the set takes (`cuckooctl stats`: the whole filter, "
                "with what it had before the load; ipset's `Size in "
                "memory`; nft reports none).\n"]
        out += prefix_tables(pfx, {"cuckoo": "cuckoo_nf",
                                   "nft": "nftables interval set",
                                   "ipset": "ipset hash:net"})
    if pfx6 in have:
        out += ["\nIPv6 prefixes of 35 lengths, /19 to /128, mostly /29 "
                "to /48 with some /56, /64 and /128 as in country lists, "
                "none overlapping; pass: a quarter of a sample's packets "
                "from each of 4 sources in /32s no prefix enters (pktgen "
                "draws no random IPv6 source).  nftables: a set of "
                "`ipv6_addr` with "
                "`flags interval`; ipset: `hash:net family inet6`.\n"]
        out += prefix_tables(pfx6, {"cuckoo": "cuckoo_nf",
                                    "nft": "nftables interval set",
                                    "ipset": "ipset hash:net inet6"})
    return "\n".join(out) + "\n"


def vm_sets_report():
    data = load("vm.json")
    if data is None:
        return ("No figures yet: `CNF_TEST_BENCH_SKIP='addr prefix' make "
                "bench-vm` writes `build/bench/vm.json` and this table.\n")
    sets = data.get("sets")
    if not sets or not sets["packet_path"]:
        return None  # a run without the named sets
    out = [vm_measured(data, " (named sets)", "sets") + "\n" +
           sets["note"] + "\n",
           "| contender | entries | pass: added ns/packet | blocked: "
           "ns/packet |", "|---|---|---|---|"]
    names = {"none": "no filter", "base": "one list, base revision",
             "cuckoo": "one block set", "sets": "4 block sets + 1 allow"}
    pp = sets["packet_path"]
    for size in sorted({r["size"] for r in pp}):
        for c in ("none", "base", "cuckoo", "sets"):
            row = {r["case"]: r for r in pp
                   if r["size"] == size and r["contender"] == c}
            if not row:
                continue
            ps, bl = row.get("pass"), row.get("blocked")
            added = "-" if c == "none" or not ps else (
                f"{ps['added_ns']:.0f} ({ps['added_ns_min']:.0f}.."
                f"{ps['added_ns_max']:.0f})")
            blocked = "-" if not bl else (
                f"{bl['ns_per_pkt']:.0f} ({bl['ns_per_pkt_min']:.0f}.."
                f"{bl['ns_per_pkt_max']:.0f})")
            out.append(f"| {names[c]} | {size_name(size)} | {added} "
                       f"| {blocked} |")
    if sets["goals"]:
        out.append("\nGoals, as ratios measured in this run: " +
                   "; ".join(goal_text(g) for g in sets["goals"]) + ".")
    return "\n".join(out) + "\n"


# The placement part's contenders, in the order of its table.
PLACE_NAMES = {
    "none": "no filter (hooks off)",
    "hook": "hooks, unscoped (loopback spared)",
    "place_base": "hooks, base revision",
    "hook_iif": "hooks `--iif` the receiving device",
    "hook_other": "hooks `--iif` another device (out of scope)",
    "mark": "`mode mark` + nft `meta mark` drop",
    "xt_raw": "`-m cuckoo`, raw PREROUTING",
    "xtnft_raw": "`-m cuckoo` (iptables-nft), raw PREROUTING",
    "ipset_raw": "`-m set` hash:ip, raw PREROUTING",
    "ipnet_raw": "`-m set` hash:net, raw PREROUTING",
    "nft_raw": "nft `ip saddr @set`, prerouting raw",
    "floor_raw": "`-j DROP` alone, raw PREROUTING",
    "floor_xtnft_raw": "`-j DROP` alone (iptables-nft), raw PREROUTING",
    "floor_nft_raw": "nft `drop` alone, prerouting raw",
    "empty_raw": "raw table, no rule",
    "empty_xtnft_raw": "raw table (iptables-nft), no rule",
    "empty_nft_raw": "nft prerouting raw chain, no rule",
    "xt_in": "`-m cuckoo`, filter INPUT",
    "xtnft_in": "`-m cuckoo` (iptables-nft), filter INPUT",
    "ipset_in": "`-m set` hash:ip, filter INPUT",
    "ipnet_in": "`-m set` hash:net, filter INPUT",
    "nft_in": "nft `ip saddr @set`, input filter",
    "floor_in": "`-j DROP` alone, filter INPUT",
    "floor_xtnft_in": "`-j DROP` alone (iptables-nft), filter INPUT",
    "floor_nft_in": "nft `drop` alone, input filter",
    "empty_in": "filter table, no rule",
    "empty_xtnft_in": "filter table (iptables-nft), no rule",
    "empty_nft_in": "nft input filter chain, no rule",
}


def vm_place_report():
    data = load("vm.json")
    if data is None:
        return ("No figures yet: `CNF_TEST_BENCH_SKIP='addr prefix sets xdp "
                "mod load' make bench-vm` writes `build/bench/vm.json` and "
                "these tables.\n")
    place = data.get("place")
    if not place or not place["packet_path"]:
        return None  # a run without the placement part

    def cell(m, lo, hi, spec="{:.0f}"):
        if m is None:
            return "-"
        return (spec.format(m) + " (" + spec.format(lo) + ".." +
                spec.format(hi) + ")")

    own = {(d["size"], d["contender"], d["case"]): d
           for d in place["rule_alone"]}
    out = [vm_measured(data, " (placement)", "place",
                       data["meta"].get("pkt_place_reps")),
           "| contender | entries | pass: added ns/packet | pass: rule "
           "alone, over its empty chain | blocked: ns/packet | drop: rule "
           "alone, over its unconditional drop |",
           "|---|---|---|---|---|---|"]
    pp = place["packet_path"]
    for size in sorted({r["size"] for r in pp}):
        for c in PLACE_NAMES:
            row = {r["case"]: r for r in pp
                   if r["size"] == size and r["contender"] == c}
            if not row:
                continue
            ps, bl = row.get("pass"), row.get("blocked")
            added = "-" if c == "none" or not ps else cell(
                ps["added_ns"], ps["added_ns_min"], ps["added_ns_max"])
            blocked = "-" if not bl else cell(
                bl["ns_per_pkt"], bl["ns_per_pkt_min"], bl["ns_per_pkt_max"])
            alone = []
            for case in ("pass", "blocked"):
                d = own.get((size, c, case))
                alone.append("-" if not d else
                             cell(d["ns"], d["ns_min"], d["ns_max"]))
            out.append(f"| {PLACE_NAMES[c]} | {size_name(size)} | {added} "
                       f"| {alone[0]} | {blocked} | {alone[1]} |")
    out += ["", "| ratio, paired per repetition | entries | median "
            "(min..max) | goal | met |", "|---|---|---|---|---|"]
    for x in place["ratios"]:
        b = x.get("bound")
        out.append(f"| {x['ratio']} | {size_name(x['size'])} "
                   f"| {cell(x['median'], x['min'], x['max'], '{:.3f}')} "
                   f"| {'-' if b is None else f'<= {b:.2f}'} "
                   f"| {'-' if b is None else 'yes' if x['met'] else 'no'} |")
    return "\n".join(out) + "\n"


def vm_xdp_report():
    data = load("vm.json")
    if data is None:
        return ("No figures yet: `CNF_TEST_BENCH_SKIP='addr prefix sets mod "
                "load' make bench-vm` writes `build/bench/vm.json` and this "
                "table.\n")
    xdp = data.get("xdp")
    if not xdp or not xdp["packet_path"]:
        return None  # a run without the XDP part
    # A column per size, IPv4, then the IPv6 run's.
    cols = []
    for part, fam in ((xdp, ""), (data.get("xdp6"), " IPv6")):
        if not part or not part["packet_path"]:
            continue
        rows = {(r["size"], r["contender"], r["case"]): r
                for r in part["packet_path"]}
        mem = {m["size"]: m for m in part["memory"]}
        for d in part["derived"]:
            cols.append((size_name(d["size"]) + fam, rows, d,
                         mem.get(d["size"], {})))

    def cell(x, spec="{:.0f}"):
        if not x or x.get("median") is None:
            return "-"
        return (spec.format(x["median"]) + " (" + spec.format(x["min"]) +
                ".." + spec.format(x["max"]) + ")")

    def measured(c, case):
        out = []
        for _, rows, d, _ in cols:
            r = rows.get((d["size"], c, case))
            out.append(cell(r and {"median": r["ns_per_pkt"],
                                   "min": r["ns_per_pkt_min"],
                                   "max": r["ns_per_pkt_max"]}))
        return out

    def derived(k, spec="{:.0f}"):
        return [cell(d.get(k), spec) for _, _, d, _ in cols]

    def per_addr(k, spec):
        return [fmt_or_dash(m.get(k), spec) for _, _, _, m in cols]

    table = [
        ("drop: XDP_DROP for every packet (the floor)",
         measured("xdp_drop", "blocked")),
        ("drop: cuckoo_nf at XDP", measured("cuckoo_xdp", "blocked")),
        ("drop: cuckoo_nf at XDP over the floor, ratio - 1",
         derived("drop_vs_floor", "{:.3f}")),
        ("drop: BPF hash map at XDP", measured("bpf_hash", "blocked")),
        ("drop: xdp-filter", measured("xdp_filter", "blocked")),
        ("drop: cuckoo_nf's netfilter hook", measured("cuckoo", "blocked")),
        ("drop: nftables set", measured("nft", "blocked")),
        ("receive side saved: netfilter hook's drop - XDP drop",
         derived("saved_ns_vs_cuckoo")),
        ("pass: XDP_PASS for every packet (the floor)",
         measured("xdp_pass", "pass")),
        ("pass: no filter", measured("none", "pass")),
        ("veth's XDP overhead: XDP_PASS floor - no filter",
         derived("veth_xdp_overhead_ns")),
        ("added pass cost over the floor: cuckoo_nf at XDP (program, and "
         "the hook's check of its mark)", derived("added_pass_ns_cuckoo_xdp")),
        ("added pass cost over the floor: cuckoo_nf at XDP, netfilter hooks "
         "off (`cuckooctl hooks off`)",
         derived("added_pass_ns_cuckoo_xdp_nohooks")),
        ("added pass cost over the floor: BPF hash map",
         derived("added_pass_ns_bpf_hash")),
        ("added pass cost over the floor: xdp-filter",
         derived("added_pass_ns_xdp_filter")),
        ("bytes per address: cuckoo_nf (`cuckooctl stats`)",
         per_addr("cuckoo_bytes_per_addr", "{:.2f}")),
        ("bytes per address: BPF hash map (slab+vmalloc; memlock)",
         [f"{fmt_or_dash(m.get('bpf_hash_kernel_bytes_per_addr'), '{:.1f}')}"
          f"; {fmt_or_dash(m.get('bpf_hash_memlock_per_addr'), '{:.1f}')}"
          for _, _, _, m in cols]),
        ("bytes per address: xdp-filter (slab+vmalloc)",
         per_addr("xdp_filter_kernel_bytes_per_addr", "{:.1f}")),
        ("load, s: xdp-filter, one `xdp-filter ip` per address",
         per_addr("xdp_filter_fill_sec", "{:.2f}")),
    ]
    shift = data["meta"].get("pkt_icount")
    unit = ("ns" if shift in (None, "") else "instructions" if shift == "0"
            else f"ns, {2 ** int(shift)} per instruction")
    out = [vm_measured(data, " (XDP)", "xdp"),
           f"| per packet ({unit}), median (min..max) | " +
           " | ".join(c[0] for c in cols) + " |",
           "|---" * (len(cols) + 1) + "|"]
    for name, cells in table:
        if all(c.strip("-; ") == "" for c in cells):
            continue
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    gl = xdp["goals"] + (data.get("xdp6") or {}).get("goals", [])
    if gl:
        out.append("\nGoals, as measured in this run: " +
                   "; ".join(goal_text(g) for g in gl) + ".")
    return "\n".join(out) + "\n"


def fmt_or_dash(v, spec):
    return "-" if v is None else spec.format(v)


# The reliability figures: what each counts, the test that measures it,
# what "nothing lost" was checked against, and the runs that measure it.
RELIABILITY = [
    ("calls_fuzzed", "ioctl calls fuzzed",
     "`selftests/ioctl_fuzz.sh` (`ioctl_fuzz.c`)",
     "each worker's reference set in its own namespace, compared with a "
     "dump after every round whose calls were all refused (restored after "
     "the others); lost = workers that found it changed, or died",
     "`make check` (20K calls), `make check-debug` (1M)"),
    ("faults_injected", "allocation faults injected",
     "`selftests/faults.sh` (failslab, fail_page_alloc)",
     "a model of the set after every add, load and flush, an unfaulted "
     "dump, the stats' count, and packets from stored sources, all "
     "dropped; lost = stored entries gone after a load under faults",
     "`make check-debug` (needs its fault injection kernel)"),
    ("interleavings_checked", "reader interleavings checked",
     "`userspace/tests/test_filter_interleave.c`",
     "the keys present before and after each writer operation, looked up "
     "by a reader at every store and split across two states; lost = "
     "wrong answers",
     "`make unit`"),
    ("tenants_tried", "delegated tenants tried",
     "`selftests/userns_test.c`",
     "the initial namespace's set dumped before and after every test, and "
     "the other tenant's set; lost = entries of the initial set gone",
     "`make check`"),
]


def reliability_report():
    data = load("reliability.json")
    data = data or {}
    out = []
    if data:
        out.append("Measured by the tests named, on the kernels named.\n")
    out += ["| figure | value | lost | checked against | measured by "
            "| where |", "|---|---|---|---|---|---|"]
    for fig, what, test, against, run in RELIABILITY:
        rows = sorted((e for e in data.values() if e["figure"] == fig),
                      key=lambda e: e["source"])
        if not rows:
            out.append(f"| {what} | not measured yet: {run} | - "
                       f"| {against} | {test} | - |")
            continue
        for e in rows:
            lost = "-" if e["lost"] is None else f"{e['lost']:,}"
            out.append(f"| {what} | {e['value']:,} | {lost} | {against} "
                       f"| {test}, `{e['source']}` | {e['where']} |")
    return "\n".join(out) + "\n"


def replace_region(text, name, body):
    pat = re.compile(r"(<!-- bench-report %s -->\n).*?"
                     r"(<!-- end bench-report %s -->)" % (name, name),
                     re.S)
    if not pat.search(text):
        sys.exit(f"bench-report: docs/benchmarks.md has no '{name}' region")
    return pat.sub(lambda m: m.group(1) + body + m.group(2), text)


REPORTS = {"core": core_report, "core-prefix": core_prefix_report,
           "vm": vm_report,
           "vm-prefix": vm_prefix_report, "vm-sets": vm_sets_report,
           "vm-place": vm_place_report, "vm-xdp": vm_xdp_report,
           "reliability": reliability_report}


def main(names):
    """Rewrite the regions NAMES (default: all of them)."""
    for name in names:
        if name not in REPORTS:
            sys.exit(f"bench-report: no region '{name}' "
                     f"(regions: {' '.join(REPORTS)})")
    with open(DOC) as f:
        text = f.read()
    new = text
    for name in names or REPORTS:
        body = REPORTS[name]()
        if body is not None:
            new = replace_region(new, name, body)
    if new != text:
        with open(DOC, "w") as f:
            f.write(new)
        print("bench-report: docs/benchmarks.md rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
