"""The pytest plugin over recorded data, without a GPU (t-pytest-plugin.sh):
gpu_leaks_recorder is overridden by one that replays a snapshot of the
leak zoo (tests/data/zoo: real training runs, with what each must yield)
instead of recording, and logs how many steps it was asked to mark."""
import contextlib
import lzma
import os
import shutil

import pytest

ZOO = os.environ["VRAMTRACE_ZOO"]
STEPS_LOG = os.environ["VRAMTRACE_STEPS_LOG"]


class Replay:
    """A recorder whose recording is a zoo snapshot."""

    marker = r"^Optimizer\.step"    # how the zoo's snapshots end a step

    def __init__(self, shape, test):
        self.shape, self.test, self.steps = shape, test, 0

    def start(self):
        pass

    @contextlib.contextmanager
    def step(self):
        yield
        self.steps += 1

    def stop(self, path):
        with lzma.open(os.path.join(ZOO, self.shape + ".pickle.xz")) as f, \
                open(path, "wb") as out:
            shutil.copyfileobj(f, out)
        with open(STEPS_LOG, "a") as log:
            log.write("%s %d\n" % (self.test, self.steps))


def pytest_configure(config):
    config.addinivalue_line("markers", "zoo(shape): the zoo snapshot to "
                            "replay")


@pytest.fixture
def gpu_leaks_recorder(request):
    return Replay(request.node.get_closest_marker("zoo").args[0],
                  request.node.name)
