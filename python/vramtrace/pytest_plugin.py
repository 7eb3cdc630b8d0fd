"""vramtrace's pytest plugin: fail a test whose training step leaks GPU
memory, with vramtrace's verdict, the sites that hold what grew and their
stacks (the GPU counterpart of pytest-memray's limit_leaks).

pip install registers it (the pytest11 entry point); elsewhere load it
with `pytest -p vramtrace.pytest_plugin`.  Two ways to use it:

    @pytest.mark.gpu_leaks(warmup=1, steps=5)
    def test_train_step(model, optimizer, batch):
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

runs the test function warmup + steps times as training steps (its
fixtures are made once), and

    def test_loop(gpu_leaks):
        gpu_leaks(train_step, warmup=1, steps=5)

does the same for any callable and returns the verdict.  LEAK fails the
test with vramtrace's report; INCONCLUSIVE passes it with a
GpuLeaksWarning that says why; CLEAN passes.  threshold= (bytes per step)
is given to `vramtrace leaks --threshold`.  The steps are recorded by the
gpu_leaks_recorder fixture (a PyTorch memory snapshot,
vramtrace._leaks.TorchRecorder), which a conftest.py may override.
"""

import warnings

import pytest

from vramtrace import _leaks

_OPTIONS = ("warmup", "steps", "threshold")


class GpuLeaksWarning(UserWarning):
    """vramtrace could not tell (INCONCLUSIVE): more steps may."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu_leaks(warmup=1, steps=5, threshold=None): run the "
        "test function warmup + steps times as training steps and fail it "
        "when vramtrace finds GPU memory growing (LEAK)")


@pytest.fixture
def gpu_leaks_recorder():
    """What records the steps for vramtrace: a PyTorch memory snapshot."""
    return _leaks.TorchRecorder()


def _check(step, recorder, warmup=1, steps=5, threshold=None):
    """vramtrace's verdict on step(): LEAK fails the test, INCONCLUSIVE
    warns."""
    try:
        verdict, error = _leaks.check(step, warmup, steps, recorder,
                                      threshold), None
    except (ValueError, _leaks.ToolError) as e:
        verdict, error = None, str(e)
    if error is not None:
        pytest.fail(error, pytrace=False)
    if verdict.verdict == "LEAK":
        pytest.fail(verdict.report(), pytrace=False)
    if verdict.verdict != "CLEAN":
        warnings.warn(GpuLeaksWarning(verdict.headline()))
    return verdict


@pytest.fixture
def gpu_leaks(gpu_leaks_recorder):
    """check(step, warmup=1, steps=5, threshold=None): run step() as
    training steps; fail the test on a LEAK; return vramtrace's verdict
    (vramtrace._leaks.Verdict)."""
    def check(step, warmup=1, steps=5, threshold=None):
        return _check(step, gpu_leaks_recorder, warmup, steps, threshold)
    return check


def pytest_collection_modifyitems(items):
    for item in items:
        if (item.get_closest_marker("gpu_leaks") is not None and
                "gpu_leaks_recorder" not in item.fixturenames):
            item.fixturenames.append("gpu_leaks_recorder")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    marker = pyfuncitem.get_closest_marker("gpu_leaks")
    if marker is None:
        return None
    unknown = set(marker.kwargs) - set(_OPTIONS)
    if marker.args or unknown:
        pytest.fail("gpu_leaks: options are %s, by name (got %s)" % (
            ", ".join(_OPTIONS), ", ".join(sorted(unknown)) or
            "positional arguments"), pytrace=False)
    args = {name: pyfuncitem.funcargs[name]
            for name in pyfuncitem._fixtureinfo.argnames}
    _check(lambda: pyfuncitem.obj(**args),
           pyfuncitem.funcargs["gpu_leaks_recorder"], **marker.kwargs)
    return True
