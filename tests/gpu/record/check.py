"""Checks of recorded databases for tests/gpu/record/run.

usage: check.py pattern DB STDOUT | growth DB JSON | kill DB STEPSFILE KILL_NS |
       events DB SECONDS | leakline VRAMTRACE DB JSON LABEL | job WORK MASTER |
       libs BARE.txt RECORDED.txt
Prints "PASS|FAIL name: details" lines; exits 1 if any check failed.
"""
import json
import os
import sqlite3
import statistics
import subprocess
import sys

MiB = 1 << 20
failed = False


def report(ok, name, details):
    global failed
    failed |= not ok
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, details))


def pattern(db, stdout):
    handles = dict(w.split("=") for w in open(stdout).read().split())
    c = sqlite3.connect(db)
    rows = sorted(c.execute("select layer, bytes / %d, free_ns is not null "
                            "from allocations" % MiB))
    want = sorted([(0, 1, 1), (0, 3, 1), (1, 2, 1), (1, 4, 1), (1, 5, 0),
                   (3, 6, 1)])
    report(rows == want, "pattern allocations",
           "(layer, MiB, freed) %s" % rows)
    ids = {}
    for name in ("s1", "s2"):
        r = c.execute("select stream, destroyed_ns from streams where "
                      "handle = ?", (int(handles[name]),)).fetchall()
        report(len(r) >= 1, "pattern stream " + name, "rows %s" % r)
        if r:
            ids[name] = r[-1]
    if len(ids) == 2:
        pool = dict(c.execute("select bytes / %d, stream from allocations "
                              "where layer = 1" % MiB).fetchall())
        report(pool.get(2) == ids["s1"][0] and pool.get(4) == ids["s2"][0]
               and pool.get(5) == ids["s2"][0], "pattern alloc streams",
               "MiB->stream %s, s1=%s s2=%s" % (pool, ids["s1"][0],
                                                 ids["s2"][0]))
        name = {ids["s1"][0]: "s1", ids["s2"][0]: "s2"}
        cp = sorted((k, b // MiB, name.get(s, "other")) for k, b, s in
                    c.execute("select kind, bytes, stream from memcpys "
                              "where bytes >= ?", (MiB,)))
        want = sorted([(1, 1, "s1"), (2, 2, "s2"), (1, 3, "s2"),
                       (8, 3, "other"), (2, 4, "other")])
        report(cp == want, "pattern copies", "(kind, MiB, stream) %s, "
               "want %s" % (cp, want))
        live = c.execute("select a.alloc_ns < s.destroyed_ns from "
                         "allocations a, streams s where a.bytes = ? and "
                         "s.stream = a.stream and s.destroyed_ns is not "
                         "null", (5 * MiB,)).fetchall()
        report(live == [(1,)], "pattern destroyed stream",
               "5 MiB block live when s2 was destroyed: %s" % live)
    steps = c.execute("select count(*) from steps").fetchone()[0]
    report(steps == 3, "pattern steps", "%d steps" % steps)
    window = c.execute("select start_ns, end_ns from steps where step = "
                       "(select min(step) + 1 from steps)").fetchone()
    out = c.execute("select count(*) from memcpys where bytes >= ? and "
                    "(start_ns is null or start_ns < ? or start_ns > ?)",
                    (MiB,) + tuple(window or (0, 0))).fetchone()[0]
    report(window is not None and out == 0, "pattern copy times",
           "%d copies of step 2 start outside its range %s" % (out, window))


def growth(db, js):
    info = json.load(open(js))
    c = sqlite3.connect(db)
    side = c.execute("select stream from streams where handle = ?",
                     (info["side"],)).fetchone()
    ends = [r[0] for r in c.execute("select end_ns from steps order by step")]
    live = []
    for t in ends:
        q = ("select coalesce(sum(bytes), 0) from allocations where layer = 1"
             " and stream = ? and alloc_ns <= ? and (free_ns is null or "
             "free_ns > ?)")
        live.append(c.execute(q, (side[0] if side else -1, t, t)).fetchone()[0])
    rec = [b - a for a, b in zip(live[1:], live[2:])]
    alloc = info["allocated"]
    tor = [b - a for a, b in zip(alloc[1:], alloc[2:])]
    r = statistics.median(rec) if rec else 0
    t = statistics.median(tor) if tor else 0
    ok = (len(ends) == len(alloc) and
          (abs(r - t) <= 0.05 * max(abs(t), 1) if t else abs(r) < 65536))
    report(ok, "growth " + js.split("/")[-1],
           "steps %d/%d, side-stream growth/step recorded %d B, "
           "torch.cuda.memory_allocated delta %d B, leak %d B" %
           (len(ends), len(alloc), r, t, info["leak_bytes"]))
    return r, t


def kill(db, stepsfile, kill_ns):
    """Steps done 0.6 s (three flush periods) before the kill are stored."""
    c = sqlite3.connect(db)
    ok = c.execute("pragma integrity_check").fetchone()[0]
    times = [int(l.split()[1]) for l in open(stepsfile)]
    early = sum(t < int(kill_ns) - 600000000 for t in times)
    steps = c.execute("select count(*) from steps").fetchone()[0]
    allocs = c.execute("select count(*) from allocations").fetchone()[0]
    report(ok == "ok" and early <= steps <= len(times) and allocs > 0,
           "kill -9", "integrity %s, %d steps stored, %d finished, %d of "
           "them 0.6 s before the kill; %d allocations" %
           (ok, steps, len(times), early, allocs))


def events(db, seconds):
    c = sqlite3.connect(db)
    n = sum(c.execute("select count(*) from " + t).fetchone()[0] for t in
            ("allocations", "memcpys", "steps", "marks", "streams"))
    frees = c.execute("select count(*) from allocations where free_ns is "
                      "not null").fetchone()[0]
    drops = c.execute("select coalesce(sum(count), 0) from "
                      "dropped_records").fetchone()[0]
    n += frees
    print("EVENTS %d in %.1f s = %.0f/s, dropped %d" %
          (n, float(seconds), n / float(seconds), drops))


def leakline(vramtrace, db, js, label):
    """`vramtrace leaks` names the leaking line (leak.py) first."""
    info = json.load(open(js))
    want = "%s:%d %s" % (info["file"], info["line"], info["function"])
    r = subprocess.run([vramtrace, "leaks", db, "--format", "json"],
                       capture_output=True, text=True)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        report(False, "leak line " + label, "leaks said: %s %s" %
               (r.stdout[:200], r.stderr[:200]))
        return
    sus = rep.get("suspects") or []
    first = sus[0] if sus else {}
    c = sqlite3.connect(db)
    kind = None
    frames = []
    if first.get("site_id") is not None:
        kind = c.execute("select kind from sites where id = ?",
                         (first["site_id"],)).fetchone()[0]
        frames = ["%s:%d %s" % (f.split("/")[-1], l, n) for n, f, l in
                  c.execute("select f.name, f.filename, f.line from "
                            "site_frames sf join frames f on f.id = "
                            "sf.frame_id where sf.site_id = ? order by "
                            "sf.depth", (first["site_id"],))]
    side = c.execute("select stream from streams where handle = ?",
                     (info["side"],)).fetchone()
    ok = rep.get("verdict") == "LEAK" and first.get("site") == want
    report(ok, "leak line " + label,
           "%s %+.1f MiB/step layer %s; first suspect %s (%.1f MiB in %s "
           "blocks, stream %s%s, kind %s); want %s:%d" %
           (rep.get("verdict"), rep.get("growth_bytes_per_step", 0) / MiB,
            rep.get("layer"), first.get("site"),
            first.get("bytes", 0) / MiB, first.get("blocks"),
            first.get("stream"),
            " = the side stream" if side and side[0] == first.get("stream")
            else "", kind, info["file"].split("/")[-1], info["line"]))
    if label.startswith("side"):
        st = [s for s in rep.get("streams") or []
              if side and s.get("stream") == side[0]]
        got = st[0].get("handle") if st else None
        report(got == "0x%x" % info["side"], "stream handle " + label,
               "leaks JSON: stream %s, handle %s; torch cuda_stream 0x%x" %
               (side[0] if side else None, got, info["side"]))
    print("  stack of the first suspect: " + " <- ".join(frames[:6]))
    for layer, n, stacked in c.execute(
            "select layer, count(*), count(site_id) from allocations "
            "group by layer"):
        print("  layer %d: %d allocations, %d with a stack" %
              (layer, n, stacked))


def job(work, master):
    """torchrun's ranks name their job; two nodes' files merge into one."""
    c = sqlite3.connect(os.path.join(work, "job-standalone.db"))
    rows = c.execute("select rank, job from processes where rank is not "
                     "null order by rank").fetchall()
    jobs = set(j for _, j in rows)
    report(len(rows) == 2 and len(jobs) == 1 and
           str(rows[0][1]).startswith("rdzv_id="), "job standalone",
           "ranks and jobs %s" % rows)
    merged = os.path.join(work, "job-merged.db")
    if master.startswith(":"):
        return      # run said SKIP: no address but loopback
    if not os.path.exists(merged):
        report(False, "job nodes merged", "no merged file")
        return
    c = sqlite3.connect(merged)
    runs = c.execute("select count(*) from runs").fetchone()[0]
    rows = c.execute("select rank, job, run_id from processes where rank "
                     "is not null order by rank").fetchall()
    said = open(os.path.join(work, "job-merge.out")).read()
    report(runs == 1 and [r for r, _, _ in rows] == [0, 1] and
           all(j == "master=" + master for _, j, _ in rows) and
           "both name job master=" + master in said, "job nodes merged",
           "%d runs; ranks, jobs, runs %s; merge said %r" %
           (runs, rows, said.strip()))


def libs(bare, recorded):
    """Every library the bare run had mapped, the recorded run has too."""
    want = set(open(bare).read().split())
    got = set(open(recorded).read().split())
    missing = sorted(want - got)
    report(len(want) > 0 and not missing, "libs",
           "%d libraries mapped bare, %d recorded; missing when recorded: %s"
           % (len(want), len(got), ", ".join(missing) or "none"))


{"pattern": pattern, "growth": growth, "kill": kill,
 "events": events, "leakline": leakline,
 "job": job, "libs": libs}[sys.argv[1]](*sys.argv[2:])
sys.exit(1 if failed else 0)
