#!/bin/sh
# t-stacks.sh: the stacks of allocations, captured in the traced process
# (lib/stack*.c) without a GPU: the capture is loaded into python3 and into
# a C program (tests/libstack-probe.so), its events go through the spool
# file and replay, or through the collector of `vramtrace record`, and the
# stacks the database holds are compared with traceback.extract_stack().
. "${srcdir:-.}/tests/lib.sh"
: "${top_builddir:=.}"
PROBE=$top_builddir/tests/libstack-probe.so
HOST=$top_builddir/tests/stack-host
unset VRAMTRACE_SOCKET VRAMTRACE_OUTPUT

# stacks MODE DEPTH: run tests/stacks.py into a spool file, replay it into
# $TMP/MODE.db and print the checks' TAP lines (numbered from here).
stacks() {
	VRAMTRACE_OUTPUT=$TMP/$1.vtr "$PY" "$srcdir/tests/stacks.py" run \
	    "$PROBE" "$1" "$2" "$TMP/$1.json" 2>"$TMP/$1.err" &&
	    "$VRAMTRACE" replay "$TMP/$1.vtr" -o "$TMP/$1.db" >/dev/null ||
	    { echo "# $1: $(head -c 300 "$TMP/$1.err")"; return 1; }
	checks "$TMP/$1.db" "$TMP/$1.json" "$1" "$1 through the spool"
}

# checks DB JSON MODE WHAT: the stacks of DB against JSON, as TAP lines.
checks() {
	"$PY" "$srcdir/tests/stacks.py" check "$1" "$2" "$3" >"$TMP/check" ||
	    echo "# the checker failed"
	renumber "$4" <"$TMP/check"
}

# renumber WHAT: TAP lines without a plan on stdin, numbered from here.
renumber() {
	while IFS= read -r line; do
		case $line in
		"ok "*)	ok 0 "$1: ${line#ok * - }" ;;
		"not ok "*) ok 1 "$1: ${line#not ok * - }" ;;
		*)	echo "$line" ;;
		esac
	done
}

if ! "$PY" -c 'import ctypes, sqlite3' 2>/dev/null; then
	plan 1
	skip 1 "no python3 with ctypes and sqlite3"
	exit 0
fi
sanitize_python "$PROBE" || exit 99

for mode in python all native none; do
	stacks $mode 16 || ok 1 "$mode: the probe ran"
done

# The collector's path: a record of the same program (the injection
# library is not loaded by python3; any readable file satisfies record).
VRAMTRACE_INJECT_LIBRARY=$PROBE VRAMTRACE_STACK_DEPTH=16 \
    "$VRAMTRACE" record -o "$TMP/rec.db" -- "$PY" "$srcdir/tests/stacks.py" \
    run "$PROBE" python 16 "$TMP/rec.json" >/dev/null 2>"$TMP/rec.err"
ok $? "record of the probe"
checks "$TMP/rec.db" "$TMP/rec.json" python "python through record"

# A host that is not Python: no Python stack, nothing breaks; its native
# stacks name its functions.
q() { "$VRAMTRACE" sql "$1" "$2" --format csv | tail -n +2 | tr '\n' ' '; }
VRAMTRACE_OUTPUT=$TMP/host.vtr "$HOST" "$PROBE" python &&
    "$VRAMTRACE" replay "$TMP/host.vtr" -o "$TMP/host.db" >/dev/null
ok $? "a C host, python stacks: it runs"
[ "$(q "$TMP/host.db" "select count(*), count(site_id),
    sum(free_ns is null) from allocations")" = "2,0,1 " ]
ok $? "a C host, python stacks: both allocations, no stack"
VRAMTRACE_OUTPUT=$TMP/host2.vtr "$HOST" "$PROBE" native &&
    "$VRAMTRACE" replay "$TMP/host2.vtr" -o "$TMP/host2.db" >/dev/null
ok $? "a C host, native stacks: it runs"
[ "$(q "$TMP/host2.db" "select a.address, s.kind, f.name
    from allocations a join sites s on s.id = a.site_id
    join site_frames sf on sf.site_id = s.id join frames f on f.id =
    sf.frame_id where f.name like 'host_site_%' order by a.address")" = \
    "4096,native,host_site_a 8192,native,host_site_b " ]
ok $? "a C host, native stacks: each names its function"

# PyTorch's history (the caching allocator), with stand-ins for PyTorch.
"$PY" "$srcdir/tests/stacks.py" history "$srcdir/python" >"$TMP/hist" \
    2>"$TMP/hist.err" || echo "# $(head -c 300 "$TMP/hist.err")"
renumber "PyTorch's history" <"$TMP/hist"
[ -s "$TMP/hist" ]
ok $? "PyTorch's history: the checks ran"

# Record's sitecustomize over a stand-in torch: both switches install, and
# the history's blocks reach the database, with their stacks, at exit.
"$PY" "$srcdir/tests/stacks.py" fake-torch "$TMP/torch"
PYTHONPATH=$srcdir/python/vramtrace/_site:$srcdir/python:$TMP/torch \
    VRAMTRACE_TORCH_STEPS=1 VRAMTRACE_TORCH_HISTORY=100 \
    CUDA_INJECTION64_PATH=$PROBE VRAMTRACE_OUTPUT=$TMP/site.vtr \
    "$PY" "$srcdir/tests/stacks.py" site "$TMP/site.json" 2>"$TMP/site.err" &&
    "$VRAMTRACE" replay "$TMP/site.vtr" -o "$TMP/site.db" >/dev/null
ok $? "the sitecustomize over a stand-in torch: the program runs"
[ "$("$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
h = j["history"][0] if j["history"] else {}
print(j["step_hooks"], h.get("stacks"), h.get("max_entries"))' \
    "$TMP/site.json")" = "1 python 100" ]
ok $? "the sitecustomize: a step hook, and the history with Python stacks"
[ "$(q "$TMP/site.db" "select a.address, a.layer, a.free_ns is null,
    s.kind, s.label from allocations a join sites s on s.id = a.site_id
    order by a.address")" = \
    "65536,2,0,python,/m/model.py:12 forward 131072,2,1,python,/m/model.py:12 forward " ]
ok $? "the history's blocks at exit: block layer, freed or not, their stack"

# A database made before sites.kind and sites.name gets the columns when
# a run is added.
older_file "$TMP/python.db" "$TMP/old.db" sites.kind sites.name \
    2>/dev/null &&
    "$VRAMTRACE" replay --append "$TMP/python.vtr" -o "$TMP/old.db" \
    >/dev/null 2>&1 &&
    [ "$(q "$TMP/old.db" "select count(*) from sites where kind =
    'python'")" != "0 " ] &&
    [ "$(q "$TMP/old.db" "select count(name) from sites")" = "0 " ]
ok $? "an older database gets sites.kind and sites.name on --append (its sites keep no name)"

plan $tap_n
done_testing
