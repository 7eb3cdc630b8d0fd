#!/usr/bin/env python3
"""How well `vramtrace leaks` does on the leak zoo (tests/data/zoo).

usage: bench/zoo.py [ZOO]      (run from a built tree; ZOO defaults to
                                tests/data/zoo next to this script)

For each file that ZOO/EXPECT lists: a recorded run (.vtr.xz) is
decompressed and replayed into a database, a snapshot (.pickle.xz)
decompressed; then `vramtrace leaks --format json` says its verdict,
shape, period, onset and garbage.  Prints one row per file and the
precision and recall of LEAK (a LEAK on a file whose truth is not LEAK is
a false alarm; anything but LEAK on a leak is a miss; a CLEAN on a leak is
also counted as a false CLEAN, the worst error), how many verdicts, shapes
(with period and onset) and garbage findings match EXPECT exactly, and the
time `leaks` took on all of them.
"""
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expect(path):
    """EXPECT's rows: file, verdict, shape, period, onset, garbage."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                rows.append(line.split())
    return rows


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def prepare(zoo, name, work):
    """The file `leaks` reads for name: a database or a pickle."""
    base = os.path.join(work, name[:-3])
    with lzma.open(os.path.join(zoo, name)) as src, open(base, "wb") as dst:
        shutil.copyfileobj(src, dst)
    if not name.endswith(".vtr.xz"):
        return base
    db = base + ".db"
    r = run([os.path.join(TOP, "vramtrace"), "replay", base, "-o", db])
    if r.returncode != 0:
        raise RuntimeError("replay %s: %s" % (name, r.stderr.strip()))
    return db


def garbage(lk):
    """The garbage findings of a leaks report as EXPECT writes them."""
    g = ["%s:%d:%d" % (s["garbage"], s["garbage_bytes"], s["garbage_blocks"])
         for s in lk.get("streams", []) if s.get("garbage")]
    return " ".join(sorted(g)) or "-"


def shape(lk):
    """Shape, period and onset of a leaks report as EXPECT writes them."""
    return (lk.get("shape") or "none",
            str(lk["period"]) if lk.get("period") else "-",
            str(lk["onset"]) if lk.get("onset") is not None else "-")


def score(pairs):
    """Precision and recall of LEAK over (truth, verdict) pairs."""
    tp = sum(t == "LEAK" and v == "LEAK" for t, v in pairs)
    fp = sum(t != "LEAK" and v == "LEAK" for t, v in pairs)
    fn = sum(t == "LEAK" and v != "LEAK" for t, v in pairs)
    false_clean = sum(t == "LEAK" and v == "CLEAN" for t, v in pairs)
    exact = sum(t == v for t, v in pairs)
    p = "%.2f" % (tp / (tp + fp)) if tp + fp else "n/a"
    r = "%.2f" % (tp / (tp + fn)) if tp + fn else "n/a"
    print("vramtrace leaks: precision %s  recall %s  (%d leaks found, %d "
          "false alarms, %d missed of which %d CLEAN)  exact verdicts %d/%d"
          % (p, r, tp, fp, fn, false_clean, exact, len(pairs)))


def main():
    zoo = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(TOP, "tests", "data", "zoo")
    work = tempfile.mkdtemp(prefix="vramtrace-bench-zoo-")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    pairs = []
    shapes = garbages = 0
    spent = 0.0
    rows = expect(os.path.join(zoo, "EXPECT"))
    print("%-28s %-13s %-13s %-24s %-24s %s" % (
        "file", "expected", "leaks says", "shape period onset",
        "(want)", "garbage (want)"))
    try:
        for name, verdict, want_shape, period, onset, want_g in rows:
            path = prepare(zoo, name, work)
            t = time.perf_counter()
            r = run([os.path.join(TOP, "vramtrace"), "leaks", path,
                     "--format", "json"], env=env)
            spent += time.perf_counter() - t
            lk = json.loads(r.stdout)
            got_g = garbage(lk)
            got_s = shape(lk)
            pairs.append((verdict, lk["verdict"]))
            garbages += got_g == want_g
            shapes += got_s == (want_shape, period, onset)
            print("%-28s %-13s %-13s %-24s %-24s %s%s" % (
                name, verdict, lk["verdict"], " ".join(got_s),
                "" if got_s == (want_shape, period, onset) else
                "(%s %s %s)" % (want_shape, period, onset),
                got_g, "" if got_g == want_g else " (%s)" % want_g))
    finally:
        shutil.rmtree(work)
    print()
    score(pairs)
    print("vramtrace leaks: shape, period and onset as EXPECT: %d/%d" % (
        shapes, len(rows)))
    print("vramtrace leaks: garbage as EXPECT: %d/%d" % (garbages, len(rows)))
    print("vramtrace leaks: %.2f s for the %d files, snapshots imported on "
          "the way" % (spent, len(rows)))


main()
