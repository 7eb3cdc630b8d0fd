#!/bin/sh
# t-report-browser.sh: the HTML report in a real browser, headless
# Chromium driven through the DevTools protocol (tests/browser.py): the
# page draws without an error and fetches nothing; the leak fixture's page
# shows its growing side stream and the clean one's does not; the peaks
# shown are the data's and report --format json's; the screenshot is not
# blank; clicking a frame lists its blocks, the tabs and the grouping
# switch; the sites holding what grew are listed as `leaks` names them;
# one lane per rank; a hostile stack stays text; pinned host memory's
# verdict shows beside the device's when it was judged; a run without
# steps names no step.  Skips when
# Chromium is not installed (CI installs it: .ci/deps).  The draw times
# are printed, never judged.
. "${srcdir:-.}/tests/lib.sh"
NTESTS=16
if [ -z "$PYTHON3" ]; then
	echo "1..0 # SKIP no python3"
	exit 0
fi
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
if [ -z "$CHROMIUM" ]; then
	echo "1..0 # SKIP chromium not found"
	exit 0
fi
export CHROMIUM
plan $NTESTS

# browse PAGE NAME ARGS...: browser.py's answer in $TMP/NAME.json.
browse() {
	page=$1 name=$2
	shift 2
	"$PY" "$srcdir/tests/browser.py" --shot "$TMP/$name.png" "$page" \
	    "$@" >"$TMP/$name.json" 2>"$TMP/err" ||
	    echo "# browser.py: $(cat "$TMP/err")"
	jq_py "$TMP/$name.json" 'print("# %s: drawn in %.0f ms (script %.0f ms)" % (sys.argv[1].rsplit("/", 1)[-1][:-5], d["draw_ms"], d["script_ms"])) or True' 2>/dev/null
}
for f in clean garbage_stream; do
	"$VRAMTRACE" import "$srcdir/examples/$f.pickle" -o "$TMP/$f.db" \
	    >/dev/null 2>&1 && page "$TMP/$f.db" "$TMP/$f.html" &&
	    "$VRAMTRACE" report "$TMP/$f.db" --format json >"$TMP/$f.rep" ||
	    exit 99
done
GARBAGE='#lanes li.series.garbage[data-garbage="growing"]'
STREAM="$GARBAGE[data-stream=\"1031036896\"]"
attr() { echo "document.querySelector('$1').getAttribute('$2')"; }

browse "$TMP/garbage_stream.html" leak \
    --eval "document.querySelectorAll('$STREAM').length" \
    --eval "$(attr '#verdict' data-verdict)" \
    --eval "$(attr '#peak' data-bytes)" \
    --eval "$(attr '#peak-step-end' data-bytes)" \
    --eval "$(attr '#lanes .lane-peak' data-bytes)" \
    --click '#icicle .frame[data-key^="/"]' \
    --eval "$(attr '#icicle .frame[data-key^="/"]' title).split('\\n')[0]" \
    --eval "document.querySelectorAll('#blocks tr.block').length" \
    --eval "document.querySelector('#blocks h3').textContent" \
    --click '#holder-tabs button[data-at="1"]' \
    --eval "$(attr '#holder-tabs button.on' data-at)" \
    --eval "$(attr '#icicle .frame' data-bytes)" \
    --click 'input[name=group][value=layer]' \
    --eval "Array.prototype.map.call(document.querySelectorAll('#lanes li.series'), function (e) { return e.getAttribute('data-layer'); }).join(' ')" \
    --eval "Array.prototype.map.call(document.querySelectorAll('#suspects tr.suspect'), function (e) { return e.lastChild.textContent; }).join('|')"
L="$TMP/leak.json"
jq_py "$L" 'd["ready"] and d["errors"] == [] and d["requests"] == []'
ok $? "the leak fixture's page draws without an error and fetches nothing"
jq_py "$L" 'd["evals"][0:2] == [1, "LEAK"]'
ok $? "it shows the growing side stream 1031036896 and LEAK"
pk=$(jq_py "$TMP/garbage_stream.rep" 'print(d["peak_step_end_bytes"]) or True')
jq_py "$L" 'd["evals"][2:5] == ["1081816576", "'"$pk"'", "1081816576"]'
ok $? "the true peak shown is 1.0 GiB, the step-end peak report --format json's ($pk)"
jq_py "$L" 'd["shot"]["canvases"][0] > 0.05 and d["shot"]["inked"] > 0.03'
ok $? "the screenshot is not blank: the timeline is drawn"
jq_py "$L" '0 < d["evals"][6] <= 16 * 9 and d["evals"][7].startswith(d["evals"][5].split(" (")[0] + ": ")'
ok $? "clicking a frame lists its blocks under its name"
"$PY" - "$TMP/garbage_stream.html" "$L" <<'PY'
import json, re, sys
t = open(sys.argv[1], encoding="utf-8").read()
h = json.loads(re.search(r'id="vramtrace-data">\n(.*?)</script>', t,
                         re.S).group(1))["holders"]
d = json.load(open(sys.argv[2]))
end = sum(s["bytes"][1] for s in h["sites"]) + h["other_bytes"][1]
sys.exit(0 if d["evals"][8:10] == ["1", str(end)] else 1)
PY
ok $? "the end tab shows what is held at the end"
jq_py "$L" 'd["evals"][10] == "segment block"'
ok $? "grouped by layer: one series per layer"
"$VRAMTRACE" leaks "$TMP/garbage_stream.db" >"$TMP/leaks.txt"
"$PY" - "$TMP/leaks.txt" "$L" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read().split("live at the last step:\n", 1)[1]
names = [m.group(1) for m in re.finditer(
    r"^ +\S+ \S+ +\d+ +\S+ +(.*)$", t, re.M)]
got = json.load(open(sys.argv[2]))["evals"][11]
sys.exit(0 if names and got == "|".join(names) else 1)
PY
ok $? "the sites holding what grew, named as leaks names them"

browse "$TMP/clean.html" clean \
    --eval "document.querySelectorAll('$GARBAGE').length" \
    --eval "document.querySelectorAll('#lanes li.series').length" \
    --eval "$(attr '#verdict' data-verdict)" \
    --eval "$(attr '#peak-step-end' data-bytes)" \
    --eval "document.querySelector('#pinned').hidden && document.querySelector('#pinned').offsetHeight"
C="$TMP/clean.json"
pk=$(jq_py "$TMP/clean.rep" 'print(d["peak_step_end_bytes"]) or True')
jq_py "$C" 'd["errors"] == [] and d["requests"] == [] and d["evals"] == [0, 1, "CLEAN", "'"$pk"'", 0]'
ok $? "the clean fixture's page: one stream, no garbage, CLEAN, report's peak, no pinned verdict"
jq_py "$C" 'd["shot"]["canvases"][0] > 0.05'
ok $? "...and its screenshot is not blank"

# Pinned host memory that leaks under a flat device (lib.sh's
# pinned_run): its verdict in a box of its own beside the device's, in
# the words of leaks' pinned line.
pinned_run pinned all && page "$TMP/pinned.db" "$TMP/pinned.html" &&
    "$VRAMTRACE" leaks "$TMP/pinned.db" >"$TMP/pinned.txt" || exit 99
browse "$TMP/pinned.html" pinned \
    --eval "$(attr '#verdict' data-verdict)" \
    --eval "$(attr '#pinned' data-verdict)" \
    --eval "document.querySelector('#pinned').offsetHeight > 0" \
    --eval "document.querySelector('#pinned strong').textContent" \
    --eval "document.querySelector('#pinned-shape').textContent"
"$PY" - "$TMP/pinned.txt" "$TMP/pinned.json" <<'PY'
import json, re, sys
line = re.search(r"^pinned: +(.*), layer host$", open(sys.argv[1]).read(),
                 re.M).group(1)
d = json.load(open(sys.argv[2]))
print("# leaks: pinned: %s; the page: %s" % (line, d["evals"][3]))
sys.exit(0 if d["errors"] == [] and d["evals"][:3] == ["CLEAN", "LEAK", True]
         and d["evals"][3] == "pinned: " + line and
         line.startswith("LEAK, +64.0 MiB per step") and
         d["evals"][4].startswith("shape: steady") else 1)
PY
ok $? "a pinned leak: LEAK beside the device's CLEAN, in leaks' words"

# Two ranks with copies and offload decisions, and a hostile stack.
bad=$(printf 'x\377y.py')
cat >"$TMP/ranks.txt" <<EOF
process-start 1000 pid=100 rank=0 local_rank=0
alloc 1100 address=0x1000 bytes=104857600 stream=7 device=0 site="forward@model.py:10|main@train.py:5"
step-end 2000
step-end 3000
process-start 1001 pid=101 rank=1 local_rank=1
alloc 1101 address=0x1000 bytes=104857600 stream=7 device=1 site="forward@model.py:10|main@train.py:5"
memcpy 1600 bytes=8388608 stream=13 end=1650 kind=2 src=1 dst=-1
offload 1620 kind=stash tensor=1 storage=0x100000 bytes=8388608 stream=13 device=1
alloc 1700 address=0x10000000 bytes=8388608 stream=13 device=1 site="bad</script><script>document.title='pwned'</script>@$bad:1"
offload 2620 kind=reap tensor=1 storage=0x100000 bytes=8388608 stream=13 device=1
EOF
spool ranks && page "$TMP/ranks.db" "$TMP/ranks.html" || exit 99
browse "$TMP/ranks.html" ranks \
    --eval "Array.prototype.map.call(document.querySelectorAll('#lanes .lane'), function (e) { return e.getAttribute('data-rank'); }).join(' ')" \
    --eval "document.querySelectorAll('#lanes canvas.offload').length" \
    --eval "document.querySelectorAll('script').length + ' ' + document.title" \
    --click '#icicle .frame[title^="bad"]' \
    --eval "document.querySelector('#blocks tr.block td:last-child').textContent"
R="$TMP/ranks.json"
jq_py "$R" 'd["errors"] == [] and d["evals"][0:2] == ["0 1", 1]'
ok $? "two ranks: a lane each, in rank order; the offload strip on rank 1's"
jq_py "$R" 'd["evals"][2].startswith("2 vramtrace: ") and d["evals"][2].endswith("/ranks.vtr")'
ok $? "a stack holding </script><script> runs nothing"
jq_py "$R" 'd["evals"][3] == "x\ufffdy.py:1 bad</script><script>document.title=\x27pwned\x27</script>"'
ok $? "...and is shown as text when its frame is clicked"
jq_py "$R" 'len(d["shot"]["canvases"]) == 3 and min(d["shot"]["canvases"][:2]) > 0.05'
ok $? "both lanes are drawn"

# A snapshot imported without steps: its instants name no step, its
# verdict no warm-up.
"$VRAMTRACE" import "$srcdir/examples/garbage_stream.pickle" --step-marker \
    '^nothing$' -o "$TMP/stepless.db" >/dev/null 2>&1 &&
    page "$TMP/stepless.db" "$TMP/stepless.html" || exit 99
browse "$TMP/stepless.html" stepless \
    --eval "document.getElementById('peak').textContent" \
    --eval "document.querySelector('.lane-peak').textContent" \
    --eval "document.querySelector('#verdict span').textContent"
jq_py "$TMP/stepless.json" 'd["errors"] == [] and len(d["evals"]) == 3 and all(x and "n/a" not in x and "step" not in x for x in d["evals"])'
ok $? "a run without steps: no step beside its peaks, no warm-up"
done_testing
