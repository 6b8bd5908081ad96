#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Circles of #include "..." among the module's files (make lint).

A file's quoted includes that name a file of module/ are its edges.  Two
graphs are walked:
  - files: a header that includes, through others, a file that includes it
    back is a circle whatever the files are;
  - units: x.c and x.h as one unit x (a .c's own header is no edge), so
    that x.c including y.h while y.h includes x.h is a circle too: x and
    y each need the other.
A circle of either kind that takes in a file of the filter core (those
userspace/Makefile builds for the host: CORE_SRCS and CORE_HDRS) fails:
in the core each .c has a header of its own for what it defines, so its
units can and do depend one way.  Circles outside the core are
reported, for their owners, and do not fail.

  include-cycles.py [ROOT]     exit 1 on a circle in the core
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def core_files(root):
    """The module files the host build of the core names."""
    with open(os.path.join(root, 'userspace', 'Makefile')) as f:
        text = f.read().replace('\\\n', ' ')
    names = set()
    for var in ('CORE_SRCS', 'CORE_HDRS'):
        m = re.search(r'^%s\s*:=(.*)$' % var, text, re.M)
        if not m:
            sys.exit('include-cycles: no %s in userspace/Makefile' % var)
        for group in re.findall(r'\$\(addprefix \$\(TOP\)/module/,([^)]*)\)',
                                m.group(1)):
            names.update(group.split())
    return names


def include_graph(moddir):
    """file -> the files of module/ it includes."""
    files = sorted(n for n in os.listdir(moddir)
                   if n.endswith(('.c', '.h')) and not n.endswith('.mod.c'))
    graph = {}
    for name in files:
        with open(os.path.join(moddir, name), errors='replace') as f:
            incs = INCLUDE.findall(f.read())
        graph[name] = sorted({i for i in incs if i in files})
    return graph


def unit(name):
    return os.path.splitext(name)[0]


def unit_graph(graph):
    units = {}
    for name, incs in graph.items():
        edges = units.setdefault(unit(name), set())
        edges.update(unit(i) for i in incs if unit(i) != unit(name))
    return {u: sorted(e) for u, e in units.items()}


def cycles(graph):
    """One circle through each strongly connected part (Tarjan)."""
    index, low, stack, on, parts = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                parts.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [circle(graph, part) for part in parts]


def circle(graph, part):
    """A path from the part's first node back to it, inside the part."""
    start, inside = part[0], set(part)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in graph.get(v, ()):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in inside and w not in prev:
                prev[w] = v
                queue.append(w)
    return part


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    moddir = os.path.join(root, 'module')
    core = {unit(n) for n in core_files(root)}
    graph = include_graph(moddir)
    status = 0
    found = [('file', c) for c in cycles(graph)]
    found += [('unit', c) for c in cycles(unit_graph(graph))]
    for kind, c in found:
        in_core = bool({unit(n) for n in c} & core)
        if in_core:
            print('include-cycles: %ss of the core include in a circle: %s'
                  % (kind, ' -> '.join(c)))
            status = 1
        else:
            print('include-cycles: %ss in a circle outside the core, '
                  'not failing: %s' % (kind, ' -> '.join(c)))
    return status


if __name__ == '__main__':
    sys.exit(main())
