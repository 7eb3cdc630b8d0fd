"""What t-pytest-plugin.sh runs through the plugin: which of these pass or
fail, and what they print, is what it checks.  Each test's steps are
replayed from the leak zoo (conftest.py); the verdicts are vramtrace's."""
import pytest

calls = []
made = []


def step():
    pass


@pytest.fixture
def model():
    made.append(1)
    return "model"


@pytest.mark.zoo("steady")
@pytest.mark.gpu_leaks(warmup=1, steps=5)
def test_marker_steady():
    pass


@pytest.mark.zoo("clean")
@pytest.mark.gpu_leaks(warmup=1, steps=5)
def test_marker_clean(model):
    calls.append(model)


def test_fixtures_made_once():
    assert (len(made), len(calls)) == (1, 6)


@pytest.mark.zoo("late")
@pytest.mark.gpu_leaks(warmup=1, steps=5)
def test_marker_late():
    pass


@pytest.mark.zoo("llama-late")
def test_fixture_llama_late(gpu_leaks):
    gpu_leaks(step)


@pytest.mark.zoo("bounded")
def test_fixture_bounded(gpu_leaks):
    verdict = gpu_leaks(step, warmup=1, steps=5)
    assert verdict.verdict == "CLEAN"


@pytest.mark.zoo("clean")
def test_fixture_inconclusive(gpu_leaks):
    verdict = gpu_leaks(step, warmup=38, steps=3)
    assert verdict.verdict == "INCONCLUSIVE"


@pytest.mark.zoo("steady-nohistory")
@pytest.mark.gpu_leaks(warmup=1, steps=5)
def test_no_steps():
    pass


@pytest.mark.zoo("clean")
@pytest.mark.gpu_leaks(warmup=1, steps=2)
def test_too_few_steps():
    pass


@pytest.mark.zoo("clean")
@pytest.mark.gpu_leaks(5)
def test_positional():
    pass
