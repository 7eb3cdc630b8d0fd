#!/bin/sh
# t-report-html.sh: the HTML report's data (the JSON its page carries),
# without a browser: every number against the database (report-oracle.py
# recomputes the buckets, peaks and holders in Python), the verdict and
# the step-end peak against `leaks` and `report --format json`, a walk in
# small windows equal to one in memory, lanes per rank with their copies
# and offload decisions, hostile names kept inside the data, long runs cut
# to size, pinned host memory (its peak, its verdict beside the device's),
# and a run without allocations.  tests/t-report-browser.sh looks
# at the pages in Chromium.
. "${srcdir:-.}/tests/lib.sh"
NTESTS=23
plan $NTESTS
if [ -z "$PYTHON3" ]; then
	skip $NTESTS "no python3"
	exit 0
fi
ORACLE="$srcdir/tests/report-oracle.py"
# data PAGE: the page's data as JSON, in PAGE.json.
data() {
	"$PY" - "$1" <<'PY'
import json, re, sys
t = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="vramtrace-data">\n'
              r'(.*?)</script>', t, re.S)
json.dump(json.loads(m.group(1)), open(sys.argv[1] + ".json", "w"))
PY
}

# The bundled snapshots, imported into databases of their own.
for f in clean garbage_stream; do
	"$VRAMTRACE" import "$srcdir/examples/$f.pickle" -o "$TMP/$f.db" \
	    >/dev/null 2>&1 && page "$TMP/$f.db" "$TMP/$f.html" &&
	    data "$TMP/$f.html" || exit 99
done
for f in clean garbage_stream; do
	"$PY" "$ORACLE" "$VRAMTRACE" "$TMP/$f.html" "$TMP/$f.db" >"$TMP/o.txt"
	ok $? "$f: buckets, peaks and holders agree with the database"
	sed 's/^/# /' "$TMP/o.txt" | head -5
done
G="$TMP/garbage_stream.html.json"
C="$TMP/clean.html.json"
jq_py "$G" 'd["format"] == "vramtrace-report" and d["version"] == 1 and d["layer"] == "block"'
ok $? "the data names its format and version"
jq_py "$G" 'd["peak"] == {"bytes": 1081816576, "t": 441958000, "step": 5}'
ok $? "garbage_stream: the true peak is 1.0 GiB in step 5, above the 950.6 MiB of a step end"
"$VRAMTRACE" report "$TMP/garbage_stream.db" --format json >"$TMP/rep.json" &&
    "$VRAMTRACE" leaks "$TMP/garbage_stream.db" --format json >"$TMP/leaks.json"
"$PY" - "$G" "$TMP/rep.json" "$TMP/leaks.json" <<'PY'
import json, sys
d, rep, lk = (json.load(open(p)) for p in sys.argv[1:])
v = d["verdict"]
assert v["peak_step_end"]["bytes"] == rep["peak_step_end_bytes"], v["peak_step_end"]
assert d["peak"]["bytes"] == rep["peak_bytes"], (d["peak"], rep["peak_bytes"])
assert v["verdict"] == lk["verdict"] == "LEAK", v["verdict"]
assert abs(v["growth_bytes_per_step"] - lk["growth_bytes_per_step"]) < 1
assert [b[2] for b in v["bars"]] == [p["delta_bytes"] for p in lk["per_step"]] \
    and min(b[2] for b in v["bars"][1:]) > 111 * 2**20, v["bars"]
assert [v[k] for k in ("shape", "period", "onset", "projection")] == \
    [lk[k] for k in ("shape", "period", "onset", "projection")], v
assert v["shape"] == "steady" and v["projection"]["steps"] == 100000, v
PY
ok $? "the verdict, growth, peak and step-end peak are those of leaks and report"
jq_py "$G" '[(s["stream"], s["garbage"]) for l in d["lanes"] for k in l["tracks"] if k["layer"] == "block" for s in k["series"]] == [(0, None), (1031036896, "growing")]'
ok $? "garbage_stream: the side stream is there, marked growing"
jq_py "$C" '[(s["stream"], s["garbage"]) for l in d["lanes"] for k in l["tracks"] for s in k["series"]] == [(0, None), (0, None)] and d["verdict"]["verdict"] == "CLEAN"'
ok $? "clean: one stream in each layer, no garbage, CLEAN"
jq_py "$G" 'all((s["id"] == 0) == (s["label"] is None) == (s["frames"] == []) for s in d["holders"]["sites"]) and any([d["holders"]["frames"][f][:2] for f in s["frames"]][0::4] == [["<module>", "train.py"], ["_init_group", "site-packages/torch/optim/adam.py"]] for s in d["holders"]["sites"])'
ok $? "the holders' sites have their stacks, outermost first"

# Small windows: the same data as one walk in memory.
VRAMTRACE_REPORT_WINDOW=7 "$VRAMTRACE" report "$TMP/garbage_stream.db" \
    --html "$TMP/w7.html" && data "$TMP/w7.html"
cmp -s "$TMP/w7.html.json" "$G"
ok $? "a walk in windows of 7 events gives the same data as one in memory"

# Two ranks, copies and offload decisions, and a hostile stack.
bad=$(printf 'x\377y.py')
cat >"$TMP/ranks.txt" <<EOF
process-start 1000 pid=100 rank=0 local_rank=0 host="n1"
stream-create 1000 stream=7 device=0 flags=3
alloc 1100 address=0x1000 bytes=104857600 stream=7 device=0 site="forward@model.py:10|main@train.py:5"
step-end 2000
step-end 3000
step-end 4000
step-end 5000
process-start 1001 pid=101 rank=1 local_rank=1 host="n1"
stream-create 1001 stream=7 device=1 flags=3
stream-create 1001 stream=13 device=1
alloc 1101 address=0x1000 bytes=104857600 stream=7 device=1 site="forward@model.py:10|main@train.py:5"
alloc 1500 address=0x100000 bytes=20971520 stream=7 device=1 site="act@model.py:20|forward@model.py:10|main@train.py:5"
memcpy 1600 bytes=8388608 stream=13 end=1650 kind=2 src=1 dst=-1
offload 1610 kind=offload tensor=1 storage=0x100000 bytes=8388608 stream=13 device=1
offload 1620 kind=stash tensor=1 storage=0x100000 bytes=8388608 stream=13 device=1
alloc 1700 address=0x10000000 bytes=8388608 stream=13 device=1 site="stash@offload.py:42|pack@offload.py:30|main@train.py:5"
free 1800 address=0x100000 bytes=20971520 stream=7 device=1
memcpy 2600 bytes=4194304 stream=13 end=2650 kind=1 src=-1 dst=1
offload 2610 kind=prefetch tensor=1 storage=0x100000 bytes=4194304 stream=13 device=1
offload 2620 kind=reap tensor=1 storage=0x100000 bytes=8388608 stream=13 device=1
alloc 2700 address=0x10100000 bytes=8388608 stream=13 device=1 site="stash@offload.py:42|pack@offload.py:30|main@train.py:5"
alloc 3700 address=0x10200000 bytes=8388608 stream=13 device=1 site="bad</script><script>document.title='pwned'</script>@$bad:1|main@train.py:5"
alloc 4700 address=0x10300000 bytes=8388608 stream=13 device=1
EOF
spool ranks && page "$TMP/ranks.db" "$TMP/ranks.html" &&
    data "$TMP/ranks.html" || exit 99
"$PY" "$ORACLE" "$VRAMTRACE" "$TMP/ranks.html" "$TMP/ranks.db" >"$TMP/o.txt"
ok $? "two ranks: buckets, peaks and holders agree with the database"
sed 's/^/# /' "$TMP/o.txt" | head -5
R="$TMP/ranks.html.json"
jq_py "$R" '[(l["rank"], l["device"], l["label"]) for l in d["lanes"]] == [(0, 0, "pid 100 rank 0 on n1, device 0"), (1, 1, "pid 101 rank 1 on n1, device 1")] and [k["rank"] for k in d["verdict"]["ranks"]] == [0, 1]'
ok $? "one lane per rank, in rank order, with the ranks' verdicts"
jq_py "$R" 'd["lanes"][0]["copies"] is None and d["lanes"][0]["offload"] is None and [sum(d["lanes"][1]["copies"][k]) for k in ("out", "in")] == [8388608, 4194304] and [sum(d["lanes"][1]["offload"][k]) for k in ("offloaded", "prefetched")] == [8388608, 4194304] and max(d["lanes"][1]["offload"]["stash"]) == 8388608 and d["lanes"][1]["offload"]["stash"][-1] == 0'
ok $? "copies out and in, offloaded and prefetched bytes and the stash held, on rank 1's lane only"
grep -q '</script><script>document' "$TMP/ranks.html"
st=$?
jq_py "$R" 'any(s["label"] == "x\ufffdy.py:1 bad</script><script>document.title=\x27pwned\x27</script>" for s in d["holders"]["sites"])' &&
    [ $st -ne 0 ]
ok $? "a stack with </script> and a bad byte stays inside the data, escaped"
! grep -Eiq '(src|href) *=' "$TMP/ranks.html" &&
    [ "$(grep -Eio 'https?://[^"'"'"' ]*' "$TMP/ranks.html" | sort -u)" = \
    "http://www.w3.org/2000/svg" ]
ok $? "the page links to nothing (the SVG namespace aside)"

# A long run: 3000 steps become at most 2000 marks and 1000 bars.
{
	echo 'process-start 1000 pid=1'
	i=1
	while [ $i -le 3000 ]; do
		echo "alloc $((i * 1000)) address=$((4096 * i)) bytes=1024 stream=0 device=0"
		echo "step-end $((i * 1000 + 500))"
		i=$((i + 1))
	done
} >"$TMP/long.txt"
spool long && page "$TMP/long.db" "$TMP/long.html" &&
    data "$TMP/long.html" || exit 99
jq_py "$TMP/long.html.json" 'd["step_every"] == 2 and len(d["steps"]) == 1501 and d["steps"][-1][0] == 3000 and len(d["verdict"]["bars"]) == 1000 and d["verdict"]["bars"][0][:2] == [1, 3] and all(b[2] == 3072 for b in d["verdict"]["bars"][1:]) and d["verdict"]["bars"][-1][3] == 3072000'
ok $? "3000 steps: every other step marked, bars of 3 steps with their change"

# Pinned host memory (lib.sh's pinned_run: 64 MiB kept every step) in
# the host layer: the run's peak is its 768 MiB, over the host lane.
pinned_run pinned all &&
    "$VRAMTRACE" report "$TMP/pinned.db" --layer host --html "$TMP/host.html" &&
    data "$TMP/host.html" || exit 99
"$PY" "$ORACLE" "$VRAMTRACE" "$TMP/host.html" "$TMP/pinned.db" >"$TMP/o.txt" &&
    jq_py "$TMP/host.html.json" 'd["layer"] == "host" and (d["peak"]["bytes"], d["peak"]["step"]) == (768 << 20, 12) and sum(s["bytes"][0] for s in d["holders"]["sites"]) == 768 << 20 and d["pinned"] is None'
ok $? "--layer host: the peak is the pinned memory's 768 MiB, held by its site, as the database says; no pinned verdict beside it"
sed 's/^/# /' "$TMP/o.txt" | head -5

# ...and beside the device's layer, its verdict as leaks gives it, under
# "pinned" (null on a page of a run without pinned memory).
page "$TMP/pinned.db" "$TMP/pinned.html" && data "$TMP/pinned.html" &&
    "$VRAMTRACE" leaks "$TMP/pinned.db" --format json >"$TMP/pl.json" &&
    "$PY" - "$TMP/pinned.html.json" "$TMP/pl.json" "$G" <<'PY'
import json, sys
d, lk, g = (json.load(open(a)) for a in sys.argv[1:])
p, q = d["pinned"], lk["pinned"]
assert d["verdict"]["verdict"] == lk["verdict"] == "CLEAN", d["verdict"]
assert p["verdict"] == q["verdict"] == "LEAK" and p["layer"] == "host", p
assert p["growth_bytes_per_step"] == q["growth_bytes_per_step"] == 64 << 20
assert p["steps_analysed"] == 11 and p["grew_fraction"] == 1, p
assert [p[k] for k in ("shape", "period", "onset", "projection")] == \
    [q[k] for k in ("shape", "period", "onset", "projection")], p
assert g["pinned"] is None
PY
ok $? "a pinned leak beside a flat device: \"pinned\" is leaks' pinned verdict; null without pinned memory"

# No allocations at all.
printf 'process-start 1000 pid=1\nstep-end 2000\n' >"$TMP/empty.txt"
spool empty && page "$TMP/empty.db" "$TMP/empty.html" &&
    data "$TMP/empty.html"
jq_py "$TMP/empty.html.json" 'd["lanes"] == [] and d["peak"]["t"] is None and d["holders"]["sites"] == []'
ok $? "a run without allocations: a page with no lanes"

# A recording: each stream with its cudaStream_t handle, as leaks says it
# (the zoo's destroyed stream, 0x1d2b49c0, beside the default's 0x0).
xz -dc "$srcdir/tests/data/zoo/destroyed.vtr.xz" >"$TMP/destroyed.vtr" &&
    "$VRAMTRACE" replay "$TMP/destroyed.vtr" -o "$TMP/destroyed.db" >/dev/null &&
    page "$TMP/destroyed.db" "$TMP/destroyed.html" &&
    data "$TMP/destroyed.html" &&
    "$VRAMTRACE" leaks "$TMP/destroyed.db" --format json >"$TMP/dl.json" &&
    "$PY" - "$TMP/destroyed.html.json" "$TMP/dl.json" <<'PY'
import json, sys
d, lk = (json.load(open(a)) for a in sys.argv[1:])
want = {(s["stream"], s["handle"]) for s in lk["streams"]}
got = {(s["stream"], s["handle"]) for s in d["verdict"]["streams"]}
series = {(s["stream"], s["handle"]) for l in d["lanes"] for k in l["tracks"]
          for s in k["series"]}
print("# streams %s" % sorted(got, key=str))
sys.exit(0 if got == want and series <= want and
         (143, "0x1d2b49c0") in got else 1)
PY
ok $? "a recording: every stream with the handle leaks gives it"

# The command: a pickle directly, bad uses, a file it cannot write.
page "$srcdir/examples/garbage_stream.pickle" "$TMP/p.html" &&
    data "$TMP/p.html" &&
    "$PY" - "$TMP/p.html.json" "$G" <<'PY'
import json, sys
p, g = (json.load(open(a)) for a in sys.argv[1:])
for d in (p, g):
    d["run"].pop("input")
sys.exit(0 if p == g else 1)
PY
ok $? "report PICKLE --html: the data of its imported database"
run "$VRAMTRACE" report "$TMP/clean.db" --html "$TMP/x.html" --format json
expect 2 '--html and --format do not mix' "--html with --format: usage, exit 2"
run "$VRAMTRACE" report "$TMP/clean.db" --html "$TMP/no/such/dir/x.html"
expect 7 "$TMP/no/such/dir/x.html: cannot create" "a page it cannot create: exit 7 naming it"
mkdir "$TMP/d.html"
run "$VRAMTRACE" report "$TMP/clean.db" --html "$TMP/d.html"
[ $rc -eq 7 ] && grep -q "d.html: cannot rename" "$TMP/err" &&
    [ -z "$(ls "$TMP" | grep 'd.html.tmp')" ] && [ -d "$TMP/d.html" ]
ok $? "a page it cannot put in place: exit 7, no temporary file left"
done_testing
