"""The offload check as the database holds it, against the ground truth.

    db.py header
    db.py ROW DB LOG LEAKS_EXIT

ROW names the engine (train.py's name); DB is what `vramtrace record
--check-offload` wrote for `train.py one ROW N`, LOG that run's output
(its last "truth:" line: the engine's own log of stale dedupe hits plus
the oracle's corrupt copies, as [step, pack site, count], or null), and
LEAKS_EXIT the exit status of `vramtrace leaks DB`.  Counts everything by
SQL on offload_check_steps and offload_check_diffs and prints one row;
exits 1 unless the rows are there (a step row per step), the differences
are exactly the truth (per step and pack site) for an engine that has
one, none for an engine without, and leaks exits 3 exactly when some
tensor came back different.
"""
import collections
import json
import sqlite3
import sys

FMT = "%-13s %5s %6s %7s %7s %7s %7s %7s %5s %s"


def main():
    if sys.argv[1] == "header":
        print(FMT % ("engine", "steps", "rows", "packs", "checked",
                     "differ", "diffs", "truth", "leaks", "verdict"))
        return 0
    name, path, log, leaks = sys.argv[1], sys.argv[2], sys.argv[3], \
        int(sys.argv[4])
    truth = None
    for line in open(log, errors="replace"):
        if line.startswith("truth: "):
            truth = json.loads(line[len("truth: "):])
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    steps, rows, packs, checked, differ = db.execute(
        "SELECT count(DISTINCT step), count(*), coalesce(sum(packs), 0),"
        " coalesce(sum(checked), 0), coalesce(sum(differ), 0)"
        " FROM offload_check_steps").fetchone()
    flagged = collections.Counter(
        {(s, w): n for s, w, n in db.execute(
            "SELECT step, pack_where, count(*) FROM offload_check_diffs"
            " GROUP BY step, pack_where")})
    diffs = sum(flagged.values())
    want = collections.Counter({(s, w): n for s, w, n in truth or []})
    good = steps > 0 and checked > 0 and differ == diffs and \
        leaks == (3 if diffs else 0) and flagged == want
    print(FMT % (name, steps, rows, packs, checked, differ, diffs,
                 sum(want.values()) if truth is not None else "n/a",
                 leaks, "PASS" if good else "FAIL"))
    if flagged != want:
        print("    in the database, not in truth: %s"
              % dict(list((flagged - want).items())[:4]))
        print("    in truth, not in the database: %s"
              % dict(list((want - flagged).items())[:4]))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
