set -u
. tests/gpu/build.sh
W=/tmp/diag; mkdir -p $W
$V record --torch-steps -o $W/l.db -- python3 tests/gpu/record/train.py leaky 12 $W/l.json > $W/l.log 2>&1; echo "rec rc=$?"
tail -3 $W/l.log
python3 - $W/l.db $W/l.json <<'PY'
import sqlite3, sys, json
c = sqlite3.connect(sys.argv[1]); info = json.load(open(sys.argv[2]))
print("side handle", info["side"], hex(info["side"]))
print("streams", c.execute("select stream, handle, device, flags, created_ns is not null, destroyed_ns is not null from streams").fetchall())
print("allocs", c.execute("select layer, stream, count(*), sum(bytes), sum(free_ns is null) from allocations group by 1,2").fetchall())
print("procs", c.execute("select id, pid, allocator from processes").fetchall())
print("runs", c.execute("select allocator, complete, step_source from runs").fetchall())
print("steps", c.execute("select count(*) from steps").fetchall())
PY
$V leaks $W/l.db | head -12
cp $W/l.db $OUT/
