#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# reliability.py: the figures of docs/benchmarks.md's reliability table, as
# the tests measured them.  The tests print KTAP diagnostic lines
#   # reliability: FIGURE=N [KEY=N...] lost=N
# (ioctl_fuzz: calls_fuzzed, faults.sh: faults_injected,
# test_filter_interleave: interleavings_checked, userns_test:
# tenants_tried); a test that runs several cases prints one line per case,
# and the values of one log are summed.
#
#   reliability.py collect SOURCE [--where TEXT] LOG...
#
# adds what LOG... hold to build/bench/reliability.json, one entry per
# figure and SOURCE (the command that ran them: "make selftests", "make
# unit", "make check-debug"), replacing that entry's last figures, with the
# kernel the VM reported ("# kernel: RELEASE", run_tests.sh) or TEXT, and
# the date.  A log without such lines changes nothing.  scripts/
# bench-report.py renders the table from that file.
import datetime
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "build", "bench", "reliability.json")
LINE = re.compile(r"(?:^|# )reliability: ((?:[a-z_]+=[0-9]+\s*)+)$")
KERNEL = re.compile(r"^# kernel: (\S+)$")


def parse(paths):
    """{figure: {key: summed value, "cases": n}}, and the kernel seen."""
    figures, kernel = {}, None
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                m = KERNEL.match(line)
                if m and kernel is None:
                    kernel = m.group(1)
                m = LINE.search(line)
                if not m:
                    continue
                pairs = [p.split("=") for p in m.group(1).split()]
                fig = figures.setdefault(pairs[0][0], {"cases": 0})
                fig["cases"] += 1
                for k, v in pairs:
                    fig[k] = fig.get(k, 0) + int(v)
    return figures, kernel


def collect(source, where, paths):
    figures, kernel = parse(paths)
    if not figures:
        print(f"reliability: no figures in {' '.join(paths)}",
              file=sys.stderr)
        return 0
    data = {}
    if os.path.exists(OUT):
        with open(OUT) as f:
            data = json.load(f)
    now = datetime.datetime.now(datetime.timezone.utc)
    for name, fig in figures.items():
        value = fig.pop(name)
        lost = fig.pop("lost", None)
        data[f"{name} {source}"] = {
            "figure": name, "value": value, "lost": lost, "source": source,
            "where": where or (f"kernel {kernel}" if kernel else "?"),
            "date": now.strftime("%Y-%m-%d %H:%M UTC"), "details": fig}
        print(f"reliability: {name}={value} lost={lost} ({source})",
              file=sys.stderr)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, OUT)
    return 0


def main(argv):
    if len(argv) < 3 or argv[0] != "collect":
        sys.exit("usage: reliability.py collect SOURCE [--where TEXT] LOG...")
    source, rest, where = argv[1], argv[2:], None
    if rest[:1] == ["--where"]:
        where, rest = rest[1], rest[2:]
    return collect(source, where, [p for p in rest if os.path.exists(p)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
