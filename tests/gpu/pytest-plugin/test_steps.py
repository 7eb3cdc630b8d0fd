"""The pytest plugin on a GPU, found through its pytest11 entry point
(tests/gpu/pytest-plugin/run): a small model trained by the marker and by
the fixture.  A step that keeps its output (2 MiB a step) must fail with
vramtrace's LEAK naming the line that keeps it; a plain step (AdamW's
state appears in the warm-up step) must pass.  check.py reads the
outcome from pytest's JUnit XML."""
import pytest
import torch

kept = []


@pytest.fixture
def model():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                            torch.nn.Linear(2048, 512)).cuda()
    return m, torch.optim.AdamW(m.parameters()), \
        torch.randn(1024, 512, device="cuda")


def train(m, opt, x, keep=False):
    out = m(x)
    out.float().pow(2).mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if keep:
        kept.append(out.detach().clone())  # the leak: 2 MiB a step


@pytest.mark.gpu_leaks(warmup=1, steps=5)
def test_marker_leak(model):
    train(*model, keep=True)


@pytest.mark.gpu_leaks(warmup=1, steps=5)
def test_marker_clean(model):
    train(*model)


def test_fixture_leak(gpu_leaks, model):
    gpu_leaks(lambda: train(*model, keep=True), warmup=1, steps=5)


def test_fixture_clean(gpu_leaks, model):
    assert gpu_leaks(lambda: train(*model), warmup=1, steps=5).verdict == \
        "CLEAN"
