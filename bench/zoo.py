#!/usr/bin/env python3
"""How well the leak detector does on the leak zoo (tests/data/zoo).

usage: bench/zoo.py [-v] [ZOO]     (run from a built tree; ZOO defaults to
                                    tests/data/zoo next to this script)

For each file that ZOO/EXPECT lists: a recorded run (.vtr.xz) is
decompressed and replayed into a database, a snapshot (.pickle.xz)
decompressed; then `vramtrace leaks --format json` says its verdict and
garbage, and tests/shape-fit (the shape model of src/leak-shape.c, built by
`make check`) says its verdict and shape from the same live bytes per
step.  Prints one row per file and, for each detector, the precision
and recall of LEAK (a LEAK on a file whose truth is not LEAK is a false
alarm; anything but LEAK on a leak is a miss; a CLEAN on a leak is also
counted as a false CLEAN, the worst error) and how many verdicts, shapes
and garbage findings match EXPECT exactly.  -v prints each model fit.
"""
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

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


def model(lk, fit):
    """The shape model on the live bytes per step of a leaks report."""
    if not os.access(fit, os.X_OK):
        return None
    series = "\n".join(str(p["live_bytes"]) for p in lk["per_step"])
    r = run([fit, "-w", str(lk.get("warmup", 1))], input=series)
    return json.loads(r.stdout)


def score(name, pairs):
    """Precision and recall of LEAK over (truth, verdict) pairs."""
    tp = sum(t == "LEAK" and v == "LEAK" for t, v in pairs)
    fp = sum(t != "LEAK" and v == "LEAK" for t, v in pairs)
    fn = sum(t == "LEAK" and v != "LEAK" for t, v in pairs)
    false_clean = sum(t == "LEAK" and v == "CLEAN" for t, v in pairs)
    exact = sum(t == v for t, v in pairs)
    p = "%.2f" % (tp / (tp + fp)) if tp + fp else "n/a"
    r = "%.2f" % (tp / (tp + fn)) if tp + fn else "n/a"
    print("%-22s precision %s  recall %s  (%d leaks found, %d false alarms,"
          " %d missed of which %d CLEAN)  exact verdicts %d/%d" % (
              name, p, r, tp, fp, fn, false_clean, exact, len(pairs)))


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    zoo = args[0] if args else os.path.join(TOP, "tests", "data", "zoo")
    fit = os.path.join(TOP, "tests", "shape-fit")
    work = tempfile.mkdtemp(prefix="vramtrace-bench-zoo-")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    leaks_pairs, model_pairs = [], []
    shapes = garbages = 0
    rows = expect(os.path.join(zoo, "EXPECT"))
    print("%-28s %-13s %-13s %-13s %-11s %-11s %s" % (
        "file", "expected", "leaks says", "model says", "shape", "want",
        "garbage (want)"))
    try:
        for name, verdict, shape, period, onset, want_g in rows:
            path = prepare(zoo, name, work)
            r = run([os.path.join(TOP, "vramtrace"), "leaks", path,
                     "--format", "json"], env=env)
            lk = json.loads(r.stdout)
            m = model(lk, fit)
            got_g = garbage(lk)
            leaks_pairs.append((verdict, lk["verdict"]))
            garbages += got_g == want_g
            if m is not None:
                model_pairs.append((verdict, m["verdict"]))
                got_shape = m["shape"]
                got = (m["shape"], str(m["period"]) if m["period"] else "-",
                       str(m["onset_step"]) if m["onset_step"] > 0 else "-")
                shapes += got == (shape, period, onset)
                if verbose:
                    print("  %s" % json.dumps(m))
            else:
                got_shape = "-"
            print("%-28s %-13s %-13s %-13s %-11s %-11s %s%s" % (
                name, verdict, lk["verdict"],
                m["verdict"] if m else "(not built)", got_shape, shape,
                got_g, "" if got_g == want_g else " (%s)" % want_g))
    finally:
        shutil.rmtree(work)
    print()
    score("vramtrace leaks:", leaks_pairs)
    if model_pairs:
        score("shape model:", model_pairs)
        print("%-22s shape, period and onset as EXPECT: %d/%d" % (
            "shape model:", shapes, len(model_pairs)))
    print("%-22s garbage as EXPECT: %d/%d" % ("vramtrace leaks:", garbages,
                                               len(rows)))


main()
