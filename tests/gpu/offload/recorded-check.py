"""Check a recorded offload run: `leaks` says CLEAN, the offload events in
the database add up to the bytes the engine says it copied, and to the
device-to-host copies CUPTI saw on the engine's copy stream.

usage: recorded-check.py RUN.db LEAKS.json STATS.json"""
import json
import sqlite3
import sys

db, leaks, stats = sys.argv[1:4]
c = sqlite3.connect(db)
lk = json.load(open(leaks))
st = json.load(open(stats))
ok = True


def report(good, what):
    global ok
    ok &= good
    print("%s recorded offload: %s" % ("PASS" if good else "FAIL", what))


report(lk["verdict"] == "CLEAN", "leaks says %s over %d steps, %+.0f B/step"
       % (lk["verdict"], lk["steps"], lk["growth_bytes_per_step"]))
ev = dict(c.execute("select kind, coalesce(sum(bytes), 0) from offload_events"
                    " group by kind").fetchall())
report(ev.get("offload", 0) == st["offloaded_bytes"] > 0,
       "offload events add up to %d B, the engine copied %d B"
       % (ev.get("offload", 0), st["offloaded_bytes"]))
d2h = c.execute(
    "select coalesce(sum(m.bytes), 0) from memcpys m join streams s"
    " on s.stream = m.stream and s.run_id = m.run_id where m.kind = 2 and"
    " s.handle in (select distinct stream from offload_events where"
    " kind = 'offload')").fetchone()[0]
report(d2h == st["offloaded_bytes"],
       "CUPTI saw %d B copied device to host on the engine's stream" % d2h)
print("offload events by kind:", ev)
sys.exit(0 if ok else 1)
