#!/bin/sh
# t-zoo.sh: the leak zoo (tests/data/zoo, see its README.md), real training
# loops recorded and snapshotted on a GPU.  For every file EXPECT lists: it
# is decompressed (a recording replayed into a database), and `vramtrace
# leaks --format json` must give (1) live bytes per step that are what the
# program measured itself (torch.cuda.memory_allocated() after each
# optimizer.step(): the same bytes, in a snapshot from the first step that
# ends after its trace begins when PyTorch kept only the last events; none
# in a snapshot without history), (2) the verdict, shape,
# period, onset and garbage EXPECT says, and (3) under --fail-on-leak, a
# failure exactly when the verdict is LEAK or garbage fails (destroyed,
# growing), with the same report; (4) the first suspect of a LEAK is named
# (its origin or the origin's caller) by the line the program leaks at,
# where the file has stacks; (5) the SQL view garbage_stream_blocks
# holds the same destroyed and stranded blocks as the report (and none on
# no stream: a clean run's synchronous cudaMalloc segments); a snapshot
# without history says so, with the fix, and its streams and sites still
# hold its live blocks.  One Python process prints the TAP.
. "${srcdir:-.}/tests/lib.sh"
"$PY" - "$srcdir/tests/data/zoo" "$VRAMTRACE" "$TMP" <<'PY'
import json, lzma, os, shutil, subprocess, sys

zoo, vramtrace, tmp = sys.argv[1:4]
rows = [l.split() for l in open(os.path.join(zoo, "EXPECT"))
        if l.strip() and not l.startswith("#")]
print("1..%d" % (4 * len(rows) + sum(r[0].endswith("-nohistory.pickle.xz")
                                     for r in rows) +
                 sum(r[1] == "LEAK" for r in rows)))
n = failed = 0


def ok(cond, what, why=""):
    global n, failed
    n += 1
    failed += not cond
    print("%sok %d - %s" % ("" if cond else "not ", n, what))
    if not cond and why:
        print("# " + why)


def file_line(label):
    """"zoo.py:161" of a label "/any/dir/zoo.py:161 main"; None for None."""
    return os.path.basename(label.rsplit(" ", 1)[0]) if label else None


def leaks(path, *extra):
    r = subprocess.run([vramtrace, "leaks", path, "--format", "json"] +
                       list(extra), capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout) if r.stdout else None


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
    rc, lk = leaks(path)
    # A snapshot whose trace begins after its first steps: from the first
    # step that ends after it (history_from) on.
    start = (lk["history_from"] or 1) - 1
    live = [p["live_bytes"] for p in lk["per_step"]][start:]
    want = facts["allocated"][start:]
    diff = set(g - w for g, w in zip(live, want))
    if facts["snapshot"] and not facts["history"]:
        good = live == []
    else:
        good = live == want
    ok(rc == 0 and good,
       "%s: live bytes per step as the program measured them" % name,
       "steps %d/%d, differences %s" % (len(live), len(want),
                                        sorted(diff)[:5]))
    if facts["snapshot"] and not facts["history"]:
        held = [tuple(sum(x[k] for x in lk[key]) for k in keys)
                for key, keys in (("streams", ("live_bytes", "live_blocks")),
                                  ("suspects", ("bytes", "blocks")))]
        want = (facts["live_bytes_at_end"], facts["live_blocks_at_end"])
        ok("_record_memory_history()" in lk["reason"] and
           'enabled="all"' in lk["reason"] and held == [want, want],
           "%s: no history said with the fix (enabled=\"all\"); streams "
           "and sites hold the "
           "%d B in %d blocks live at the dump" % ((name,) + want),
           "%s %s" % (lk["reason"], held))
    g = " ".join(sorted("%s:%d:%d" % (s["garbage"], s["garbage_bytes"],
                                      s["garbage_blocks"])
                        for s in lk["streams"] if s["garbage"])) or "-"
    got = (lk["verdict"], lk["shape"] or "none",
           str(lk["period"]) if lk["period"] else "-",
           str(lk["onset"]) if lk["onset"] is not None else "-", g)
    ok(got == (verdict, shape, period, onset, garbage),
       "leaks %s: %s %s, period %s, onset %s, garbage %s" % (
           name, verdict, shape, period, onset, garbage),
       "got %s: %s" % (" ".join(got), lk["reason"]))
    if verdict == "LEAK" and lk["suspects"][0]["site"] is None:
        n += 1
        print("ok %d - %s: the first suspect is named by the leaking line"
              " # SKIP recorded without stacks" % (n, name))
    elif verdict == "LEAK":
        first = lk["suspects"][0]
        ok(facts["line"] in (file_line(first["origin"]),
                             file_line(first["caller"])),
           "%s: the first suspect is named by the leaking line, %s" % (
               name, facts["line"]), "named %s < %s" % (first["origin"],
                                                      first["caller"]))
    fails = verdict == "LEAK" or garbage.split(":")[0] in ("destroyed",
                                                           "growing")
    frc, flk = leaks(path, "--fail-on-leak")
    ok(flk == lk and (frc != 0) == fails,
       "leaks %s --fail-on-leak: %s" % (name, "fails" if fails else
                                        "exit 0"), "exit %d" % frc)
    r = subprocess.run([vramtrace, "sql", path, "--format", "json",
                        "SELECT kind, stream, sum(bytes) AS bytes, count(*)"
                        " AS blocks FROM garbage_stream_blocks GROUP BY"
                        " kind, stream"], capture_output=True, text=True)
    view = sorted((v["kind"], v["stream"], v["bytes"], v["blocks"])
                  for v in json.loads(r.stdout or "[]"))
    facts = sorted((s["garbage"], s["stream"], s["garbage_bytes"],
                    s["garbage_blocks"]) for s in lk["streams"]
                   if s["garbage"] in ("destroyed", "stranded"))
    ok(r.returncode == 0 and view == facts,
       "%s: garbage_stream_blocks holds the report's destroyed and "
       "stranded blocks" % name, "view %s, report %s" % (view, facts))
sys.exit(1 if failed else 0)
PY
rc=$?
[ $rc -eq 0 ] || tap_failed=1
exit $rc
