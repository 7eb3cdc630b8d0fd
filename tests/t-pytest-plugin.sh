#!/bin/sh
# t-pytest-plugin.sh: the pytest plugin (vramtrace.pytest_plugin) over
# recorded data, without a GPU: pytest runs tests/pytest-plugin/, whose
# recorder replays snapshots of the leak zoo; the marker and the fixture
# must fail the leaking steps with vramtrace's verdict, sites and stacks,
# pass the clean ones, warn on INCONCLUSIVE, and refuse what cannot be
# judged.  The replayed snapshots have 40 steps, whatever the test ran.  Skips where configure found no Python with pytest.
. "${srcdir:-.}/tests/lib.sh"
b=${top_builddir:-.}
plan 16
if [ -z "$PYTEST_PYTHON" ]; then
	skip 16 "no Python with pytest (Debian: python3-pytest)"
	exit 0
fi
cp -R "$srcdir/tests/pytest-plugin" "$TMP/t"
run env PYTHONPATH="$srcdir/python" PATH="$(cd "$b" && pwd):$PATH" \
	PYTHONDONTWRITEBYTECODE=1 VRAMTRACE_ZOO="$srcdir/tests/data/zoo" \
	VRAMTRACE_STEPS_LOG="$TMP/steps" \
	"$PYTEST_PYTHON" -m pytest -p vramtrace.pytest_plugin \
	-p no:cacheprovider -v -rA --rootdir="$TMP/t" "$TMP/t/test_zoo.py"
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
grep -q "zoo.py:161 main" "$TMP/steady" &&
	grep -Eq "^ +main \(.*/zoo\.py:161\)$" "$TMP/steady" &&
	grep -Eq "^ +<module> \(.*/zoo\.py:219\)$" "$TMP/steady"
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
grep -q "gpu_leaks(warmup=1, steps=5, threshold=None)" "$TMP/out" ||
	env PYTHONPATH="$srcdir/python" "$PYTEST_PYTHON" -m pytest \
	-p vramtrace.pytest_plugin -p no:cacheprovider --markers |
	grep -q "@pytest.mark.gpu_leaks(warmup=1, steps=5, threshold=None)"
ok $? "the marker is registered"
[ $tap_failed -eq 0 ] || sed 's/^/# /' "$TMP/out" | tail -80
done_testing
