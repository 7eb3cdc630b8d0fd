"""Check vramtrace's view of the 2-rank job: usage: check.py DB LEAKS.json

One run, two processes with ranks 0 and 1 on devices 0 and 1; the leak
report names rank 1 alone as leaking, at about 8 MiB per step, and the
skew points at rank 1.  Prints a short table; exits 1 on a failed check.
"""
import json
import sqlite3
import sys

db, report = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
fails = []


def check(ok, what):
    print("%-4s %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        fails.append(what)


runs = con.execute("select count(*) from runs").fetchone()[0]
check(runs == 1, "one run (%d)" % runs)
ranks = con.execute("select rank, (select group_concat(distinct device) from"
                    " allocations a where a.process_id = p.id and device"
                    " >= 0) from processes p where rank is not null"
                    " order by rank").fetchall()
check([r for r, _ in ranks] == [0, 1], "ranks 0 and 1: %s" % ranks)
check([d for _, d in ranks] == ["0", "1"], "rank r on device r: %s" % ranks)
r = json.load(open(report))
per = {x["rank"]: x for x in r.get("ranks", [])}
check(set(per) == {0, 1}, "leaks reports per rank: %s" % sorted(per))
if set(per) == {0, 1}:
    g1 = per[1]["growth_bytes_per_step"]
    check(per[1]["verdict"] == "LEAK" and abs(g1 - (8 << 20)) < (1 << 20),
          "rank 1 leaks about 8 MiB/step (%.0f)" % g1)
    check(per[0]["verdict"] != "LEAK",
          "rank 0 does not leak (%s)" % per[0]["verdict"])
    skew = r.get("rank_skew") or {}
    check(skew.get("worst_rank") == 1, "skew names rank 1: %s" % skew)
sys.exit(1 if fails else 0)
