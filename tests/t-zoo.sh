#!/bin/sh
# t-zoo.sh: the leak zoo (tests/data/zoo, see its README.md), real training
# loops recorded and snapshotted on a GPU.  For every file EXPECT lists: it
# is decompressed (a recording replayed into a database), `vramtrace leaks
# --format json` gives its live bytes per step, which must be what the
# program measured itself (torch.cuda.memory_allocated() after each
# optimizer.step(): the same bytes in a recording; in a snapshot the same
# up to one constant under 64 KiB (14,224 B less in these files, not yet
# explained); none in a snapshot without history), and the shape model
# (src/leak-shape.c, through tests/shape-fit) must give the verdict, shape,
# period and onset EXPECT says.  One Python process prints the TAP.
. "${srcdir:-.}/tests/lib.sh"
"$PY" - "$srcdir/tests/data/zoo" "$VRAMTRACE" \
    "${top_builddir:-.}/tests/shape-fit" "$TMP" <<'PY'
import json, lzma, os, shutil, subprocess, sys

zoo, vramtrace, fit, tmp = sys.argv[1:5]
rows = [l.split() for l in open(os.path.join(zoo, "EXPECT"))
        if l.strip() and not l.startswith("#")]
print("1..%d" % (2 * len(rows)))
n = failed = 0


def ok(cond, what, why=""):
    global n, failed
    n += 1
    failed += not cond
    print("%sok %d - %s" % ("" if cond else "not ", n, what))
    if not cond and why:
        print("# " + why)


for name, verdict, shape, period, onset, garbage in rows:
    base = os.path.join(tmp, name[:-3])
    with lzma.open(os.path.join(zoo, name)) as src, open(base, "wb") as dst:
        shutil.copyfileobj(src, dst)
    stem = name.split(".")[0]
    if name.endswith(".vtr.xz"):
        facts = json.load(open(os.path.join(zoo, stem + ".rec.json")))
        path = base + ".db"
        subprocess.run([vramtrace, "replay", base, "-o", path], check=True,
                       stdout=subprocess.DEVNULL)
    else:
        facts = json.load(open(os.path.join(zoo, stem + ".snap.json")))
        path = base
    r = subprocess.run([vramtrace, "leaks", path, "--format", "json"],
                       capture_output=True, text=True)
    live = [p["live_bytes"] for p in json.loads(r.stdout)["per_step"]]
    want = facts["allocated"]
    diff = set(g - w for g, w in zip(live, want))
    if facts["snapshot"] and not facts["history"]:
        good = live == []
    elif facts["snapshot"]:
        good = len(live) == len(want) and len(diff) == 1 and \
            abs(min(diff)) < 65536
    else:
        good = live == want
    ok(good, "%s: live bytes per step as the program measured them" % name,
       "steps %d/%d, differences %s" % (len(live), len(want),
                                        sorted(diff)[:5]))
    r = subprocess.run([fit], input="\n".join(map(str, live)),
                       capture_output=True, text=True)
    m = json.loads(r.stdout)
    got = (m["verdict"], m["shape"], str(m["period"]) if m["period"] else "-",
           str(m["onset_step"]) if m["onset_step"] > 0 else "-")
    ok(got == (verdict, shape, period, onset),
       "%s: %s %s, period %s, onset %s" % (name, verdict, shape, period,
                                           onset),
       "got %s: %s" % (" ".join(got), m["reason"]))
sys.exit(1 if failed else 0)
PY
rc=$?
[ $rc -eq 0 ] || tap_failed=1
exit $rc
