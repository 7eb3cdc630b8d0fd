#!/usr/bin/env python3
"""layout.py: check the layout rules of HACKING.md on built objects (nm).

    layout.py cycles OBJ...      print the files that call each other in a
                                 circle, one circle per line; exit 1 if a
                                 circle joins two files of one family
    layout.py inproc LIB.so...   exit 1 if a library that lives in the
                                 traced process can end it (exit, abort,
                                 ...) or reaches the program's helpers

A file's family is its name up to the first '-' (store.c, store-site.c:
store).  An object "calls" another when it calls a function the other
defines; a reference to data (a command table naming its entries, a
frame naming its views) is not a call.
"""
import os
import subprocess
import sys

# What a library loaded into someone else's process must never call.
FORBIDDEN = {"exit", "_exit", "_Exit", "abort", "quick_exit", "fatal",
             "xmalloc", "xcalloc", "xreallocarray", "xstrdup", "xasprintf"}


def nm(path, *flags):
    out = subprocess.run(["nm", "-P", *flags, path], capture_output=True,
                         text=True, check=True).stdout
    return [line.split()[:2] for line in out.splitlines() if line.strip()]


def source_name(obj):
    """src/libvtcore_a-store-site.o -> store-site: Automake names each
    object of a target with per-target flags TARGET-SOURCE.o."""
    return os.path.basename(obj)[:-2].split("-", 1)[-1]


def family(name):
    return name.split("-", 1)[0]


def components(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def cycles(objs):
    defines, uses = {}, {}
    for obj in objs:
        name = source_name(obj)
        for sym, kind in nm(obj):
            if kind == "U":
                uses.setdefault(name, set()).add(sym)
            elif kind == "T":
                defines[sym] = name
    edges = {}
    for name, syms in uses.items():
        for sym in syms:
            other = defines.get(sym)
            if other is not None and other != name:
                edges.setdefault(name, set()).add(other)
    bad = 0
    for comp in components(sorted(set(defines.values()) | set(uses)), edges):
        same = len({family(c) for c in comp}) < len(comp)
        bad += same
        print("%s %s" % ("family" if same else "across", " ".join(comp)))
    return 1 if bad else 0


def inproc(libs):
    status = 0
    for lib in libs:
        used = {sym.split("@")[0] for sym, kind in nm(lib, "-D", "-u")}
        for sym in sorted(used & FORBIDDEN):
            print("%s: calls %s" % (lib, sym))
            status = 1
    return status


def main(argv):
    if len(argv) < 3 or argv[1] not in ("cycles", "inproc"):
        sys.stderr.write(__doc__)
        return 2
    return cycles(argv[2:]) if argv[1] == "cycles" else inproc(argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
