#!/bin/sh
# t-alloc-steps.sh: the allocation_steps summary (store-alloc-steps.c) on
# real runs: the leak zoo's recordings replayed and its snapshots imported
# (tests/data/zoo), the shared PyTorch snapshots, a merge and an append.
# For every run: (1) its rows are what the raw allocations say each step
# allocated and freed (so the live bytes at every step end, their running
# sum, are the allocations'); (2) `vramtrace leaks` (JSON with three
# warm-ups, and text) is the same as on a copy without the table, which a
# file written before it existed is (the full scan of allocation_groups,
# the walk of every allocation for the peak);
# (3) a summary changed by hand changes the report, so leaks reads it.
# One Python process checks, a line per check ("0 what", or "1 what" and
# a "# why" line), which lib.sh's ok turns into TAP.
. "${srcdir:-.}/tests/lib.sh"
"$PY" - "$srcdir/tests/data/zoo" "${SHARED_DATA:-$srcdir/../shared/data}" \
    "$VRAMTRACE" "$TMP" >"$TMP/checks" <<'PY'
import json, lzma, os, shutil, sqlite3, subprocess, sys

zoo, shared, vramtrace, tmp = sys.argv[1:5]


def ok(cond, what, why=""):
    print("%d %s" % (0 if cond else 1, what))
    if not cond and why:
        print("# " + why.replace("\n", " "))


def vt(*args):
    subprocess.run([vramtrace] + list(args), check=True,
                   stdout=subprocess.DEVNULL)


def unxz(name):
    out = os.path.join(tmp, name[:-3])
    with lzma.open(os.path.join(zoo, name)) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def leaks(db, *extra, form="json"):
    r = subprocess.run([vramtrace, "leaks", db, "--format", form] +
                       list(extra), capture_output=True, text=True)
    return r.returncode, r.stdout.replace(db, "DB")


RAW = """SELECT run_id, process_id, layer, device, stream, step, sum(ab),
  sum(an), sum(fb), sum(fn) FROM (
  SELECT run_id, process_id, layer, device, stream, alloc_step AS step,
    bytes AS ab, 1 AS an, 0 AS fb, 0 AS fn FROM allocations
  UNION ALL SELECT run_id, process_id, layer, device, stream, free_step,
    0, 0, bytes, 1 FROM allocations WHERE free_step IS NOT NULL)
  WHERE run_id = ?1 GROUP BY 1, 2, 3, 4, 5, 6"""
SUMMARY = """SELECT run_id, process_id, layer, device, stream, step,
  alloc_bytes, alloc_blocks, freed_bytes, freed_blocks FROM allocation_steps
  WHERE run_id = ?1"""


def key(r):
    return tuple((0, -1) if v is None else (1, v) for v in r)


def old_copy(db):
    """A copy of db as a vramtrace without allocation_steps wrote it."""
    old = db + ".old.db"
    shutil.copyfile(db, old)
    c = sqlite3.connect(old)
    c.executescript("DROP TABLE allocation_steps;"
                    " DROP INDEX IF EXISTS allocation_groups_alloc;"
                    " DROP INDEX IF EXISTS allocation_groups_free;")
    c.close()
    return old


def check(label, db, nruns=1, unsummed=()):
    c = sqlite3.connect(db)
    runs = [r[0] for r in c.execute(
        "SELECT id FROM runs WHERE complete ORDER BY id")]
    good, why = len(runs) == nruns, "runs %s" % runs
    for run in runs:
        if run in unsummed:
            continue
        raw = sorted(c.execute(RAW, (run,)), key=key)
        got = sorted(c.execute(SUMMARY, (run,)), key=key)
        if raw != got or not got:
            good, why = False, "run %d: %d rows, raw %d rows; first" \
                " difference %s" % (run, len(got), len(raw), next(
                    ((a, b) for a, b in zip(got, raw) if a != b), None))
    c.close()
    ok(good, "%s: allocation_steps is what the allocations say" % label,
       why)
    old = old_copy(db)
    same, why = True, ""
    for run in runs:
        for w in ("0", "1", "3"):
            a = leaks(db, "--run", str(run), "--warmup", w)
            b = leaks(old, "--run", str(run), "--warmup", w)
            if a != b or not a[1]:
                same = False
                why = "run %d warm-up %s: %s vs %s" % (
                    run, w, a[1][:200], b[1][:200])
        a = leaks(db, "--run", str(run), form="text")
        b = leaks(old, "--run", str(run), form="text")
        if a != b or not a[1]:
            same, why = False, "run %d text: %s vs %s" % (run, a, b)
    ok(same, "%s: leaks reads the same as from a file without it" % label,
       why)
    os.unlink(old)


recs = ["steady", "periodic", "destroyed", "offload", "late"]
snaps = ["steady", "late", "bounded", "steady-nohistory"]
dbs = {}
for stem in recs:
    db = os.path.join(tmp, stem + ".rec.db")
    vt("replay", unxz(stem + ".vtr.xz"), "-o", db)
    dbs[stem + " recording"] = db
for stem in snaps:
    db = os.path.join(tmp, stem + ".snap.db")
    vt("import", unxz(stem + ".pickle.xz"), "-o", db)
    dbs[stem + " snapshot"] = db
for f in ("fixture_garbage_stream", "fixture_large"):
    p = os.path.join(shared, "snapshots", f + ".pickle")
    if os.path.exists(p):
        db = os.path.join(tmp, f + ".db")
        vt("import", p, "-o", db)
        dbs[f] = db
for label, db in dbs.items():
    check(label, db)

# A merge of a file with the table and one without: every run summed.
merged = os.path.join(tmp, "merged.db")
old = old_copy(dbs["periodic recording"])
vt("merge", dbs["steady recording"], old, dbs["late snapshot"],
   "--output", merged)
check("merge, one input without the table", merged, 3)

# An older file gets a run appended: its old run reads the old way.
app = old_copy(dbs["destroyed recording"])
before = leaks(app)
vt("replay", os.path.join(tmp, "offload.vtr"), "-o", app, "--append")
c = sqlite3.connect(app)
old_rows = c.execute("SELECT count(*) FROM allocation_steps WHERE"
                     " run_id = 1").fetchone()[0]
c.close()
ok(old_rows == 0 and leaks(app, "--run", "1") == before,
   "append to an older file: its run has no summary and reads as before")
check("append to an older file", app, 2, unsummed=(1,))

# A wrong summary gives a wrong report: leaks reads it.
db = dbs["steady recording"]
a = json.loads(leaks(db)[1])
c = sqlite3.connect(db)
c.execute("UPDATE allocation_steps SET alloc_bytes = alloc_bytes + 1048576"
          " WHERE rowid = (SELECT rowid FROM allocation_steps WHERE step ="
          " 3 AND layer = (SELECT max(layer) FROM allocation_steps WHERE"
          " layer IN (1, 2)) LIMIT 1)")
c.commit()
c.close()
b = json.loads(leaks(db)[1])
ok([p["live_bytes"] + 1048576 * (p["step"] >= 3) for p in a["per_step"]] ==
   [p["live_bytes"] for p in b["per_step"]],
   "leaks takes the series from allocation_steps")

PY
py=$?
plan "$(($(grep -c '^[01] ' "$TMP/checks") + 1))"
while read -r status what; do
	case $status in
	'#') echo "# $what" ;;
	*) ok "$status" "$what" ;;
	esac
done <"$TMP/checks"
ok "$py" "every check ran"
done_testing
