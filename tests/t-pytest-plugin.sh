#!/bin/sh
# t-pytest-plugin.sh: the pytest plugin (vramtrace.pytest_plugin) over
# recorded data, without a GPU: pytest runs tests/pytest-plugin/, whose
# recorder replays snapshots of the leak zoo; the marker and the fixture
# must fail the leaking steps with vramtrace's verdict, sites and stacks,
# pass the clean ones, warn on INCONCLUSIVE, and refuse what cannot be
# judged.  The replayed snapshots have 40 steps, whatever the test ran.
# Skips where configure found no Python with pytest.
#
# The package and the program come from the source and build trees, the
# plugin from -p; with VRAMTRACE_TEST_PYTHON (.ci/run sets it to a
# virtual environment that pip installed vramtrace into), from what is
# installed there: that python3, the plugin found through its pytest11
# entry point, the program the package holds.
. "${srcdir:-.}/tests/lib.sh"
src=$(cd "$srcdir" && pwd)
b=$(cd "${top_builddir:-.}" && pwd)
plan 17
if [ -n "${VRAMTRACE_TEST_PYTHON:-}" ]; then
	py=$VRAMTRACE_TEST_PYTHON
	set -- env -u PYTHONPATH
	plugin=
else
	py=$PYTEST_PYTHON
	set -- env PYTHONPATH="$src/python" PATH="$b:$PATH"
	plugin="-p vramtrace.pytest_plugin"
fi
if [ -z "$py" ]; then
	skip 17 "no Python with pytest (Debian: python3-pytest)"
	exit 0
fi
cp -R "$src/tests/pytest-plugin" "$TMP/t"
# From $TMP: python3 -m puts the current directory on sys.path.
# shellcheck disable=SC2086 # $plugin: no word, or two
(cd "$TMP" && run "$@" PYTHONDONTWRITEBYTECODE=1 \
	VRAMTRACE_ZOO="$src/tests/data/zoo" \
	VRAMTRACE_STEPS_LOG="$TMP/steps" \
	"$py" -m pytest $plugin -p no:cacheprovider -v -rA \
	--rootdir="$TMP/t" "$TMP/t/test_zoo.py"; echo "$rc" >"$TMP/rc")
rc=$(cat "$TMP/rc")
[ "$rc" -eq 1 ]
ok $? "pytest fails the run (status $rc)"
result() {	# result TEST PASSED|FAILED
	grep -q "test_zoo.py::$1 $2" "$TMP/out"
}
# The failure report of test $1.
report() {
	sed -n "/^_* $1 _*\$/,/^_* test_/p" "$TMP/out"
}
result test_marker_steady FAILED
ok $? "the marker fails a step that leaks"
report test_marker_steady >"$TMP/steady"
grep -q "^vramtrace: LEAK, +2.0 MiB per step, 100% of 39 steps grew.* (the step ran 6 times)" \
	"$TMP/steady"
ok $? "with vramtrace's verdict and how often the step ran"
# The leaking line, as the program that made the snapshot measured it.
line=$(sed -n 's/^ *"line": "zoo\.py:\([0-9]*\)",$/\1/p' \
	"$src/tests/data/zoo/steady.snap.json")
[ -n "$line" ] && grep -q "zoo.py:$line main" "$TMP/steady" &&
	grep -Eq "^ +main \(.*/zoo\.py:$line\)$" "$TMP/steady" &&
	grep -Eq "^ +<module> \(.*/zoo\.py:[0-9]+\)$" "$TMP/steady"
ok $? "the site holding the memory and its stack"
result test_marker_clean PASSED
ok $? "the marker passes a clean step"
result test_fixtures_made_once PASSED
ok $? "the marked function ran 6 times over fixtures made once"
grep -qx "test_marker_steady 6" "$TMP/steps" &&
	grep -qx "test_marker_clean 6" "$TMP/steps"
ok $? "each step inside one of the recorder's marks (warm-up 1 + 5)"
result test_marker_late FAILED && report test_marker_late |
	grep -q "^vramtrace: LEAK"
ok $? "a late-onset leak fails"
result test_fixture_llama_late FAILED && report test_fixture_llama_late |
	grep -q "^vramtrace: LEAK"
ok $? "the fixture fails a leak (LlamaForCausalLM, from step 21)"
result test_fixture_bounded PASSED
ok $? "the fixture passes a bounded cache (CLEAN) and returns the verdict"
result test_fixture_inconclusive PASSED &&
	grep -q "GpuLeaksWarning: vramtrace: INCONCLUSIVE (fewer than 3 steps after the warm-up) (the step ran 41 times)" "$TMP/out"
ok $? "INCONCLUSIVE passes with a warning that says why"
result test_no_steps FAILED && report test_no_steps |
	grep -q "has no step marked"
ok $? "a snapshot without step marks: an error, not a verdict"
result test_too_few_steps FAILED && report test_too_few_steps |
	grep -q "steps 3 or more"
ok $? "fewer than 3 steps: refused"
result test_positional FAILED && report test_positional |
	grep -q "options are warmup, steps, threshold, by name"
ok $? "positional options: refused"
grep -q "^FAILED test_zoo.py::test_marker_clean" "$TMP/out"
[ $? -ne 0 ]
ok $? "no clean step failed"
# shellcheck disable=SC2086
(cd "$TMP" && "$@" "$py" -m pytest $plugin -p no:cacheprovider --markers) |
	grep -q "@pytest.mark.gpu_leaks(warmup=1, steps=5, threshold=None)"
ok $? "the marker is registered"
# shellcheck disable=SC2086
(cd "$TMP" && "$@" "$py" -c 'import vramtrace._leaks as l, vramtrace.pytest_plugin as p
print(p.__file__); print(l.program())') >"$TMP/where" 2>&1
if [ -n "${VRAMTRACE_TEST_PYTHON:-}" ]; then
	pkg=$(sed -n 1p "$TMP/where") && pkg=${pkg%/pytest_plugin.py} &&
		[ "$(sed -n 2p "$TMP/where")" = "$pkg/vramtrace" ] &&
		case $pkg in "$src"/*) false ;; esac
else
	[ "$(sed -n 1p "$TMP/where")" = "$src/python/vramtrace/pytest_plugin.py" ]
fi
ok $? "the plugin and the program: $(tr '\n' ' ' <"$TMP/where")"
[ $tap_failed -eq 0 ] || sed 's/^/# /' "$TMP/out" | tail -80
done_testing
