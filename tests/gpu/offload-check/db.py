"""The offload check as the database holds it, against the ground truth.

    db.py header
    db.py ROW DB LOG LEAKS LEAKS_EXIT

ROW names the engine (train.py's name); DB is what `vramtrace record
--check-offload` wrote for `train.py one ROW N`, LOG that run's output
(its last "truth:" line: the engine's own log of stale dedupe hits plus
the oracle's corrupt copies, as [step, pack site, count], or null; and
the checker's line at exit), LEAKS and LEAKS_EXIT the output and exit
status of `vramtrace leaks DB`.  Counts everything by SQL on
offload_check_steps and offload_check_diffs and prints one row; exits 1
unless the rows are there (a step row per step), the differences are
exactly the truth (per step and pack site) for an engine that has one,
none for an engine without, leaks exits 3 exactly when some tensor came
back different, and its line is the one the process said at exit.
"""
import collections
import json
import sqlite3
import sys

FMT = "%-13s %5s %6s %7s %7s %7s %7s %7s %5s %-9s %s"
LINE = "offload check: "


def line_of(path, prefix):
    """The last line of the file that starts with prefix, less it."""
    found = None
    for line in open(path, errors="replace"):
        if line.startswith(prefix):
            found = line[len(prefix):].rstrip("\n")
    return found


def main():
    if sys.argv[1] == "header":
        print(FMT % ("engine", "steps", "rows", "packs", "checked",
                     "differ", "diffs", "truth", "leaks", "same line",
                     "verdict"))
        return 0
    name, path, log, out, leaks = sys.argv[1], sys.argv[2], sys.argv[3], \
        sys.argv[4], int(sys.argv[5])
    truth = json.loads(line_of(log, "truth: ") or "null")
    said = line_of(log, "vramtrace: " + LINE)
    same = said is not None and said == line_of(out, LINE)
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
        leaks == (3 if diffs else 0) and flagged == want and same
    print(FMT % (name, steps, rows, packs, checked, differ, diffs,
                 sum(want.values()) if truth is not None else "n/a",
                 leaks, "yes" if same else "no", "PASS" if good else "FAIL"))
    if not same:
        print("    at exit: %s\n    leaks:   %s" % (said, line_of(out, LINE)))
    if flagged != want:
        print("    in the database, not in truth: %s"
              % dict(list((flagged - want).items())[:4]))
        print("    in truth, not in the database: %s"
              % dict(list((want - flagged).items())[:4]))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
