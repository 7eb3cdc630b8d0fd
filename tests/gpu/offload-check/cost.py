"""What the offload check costs on bench/offload's transformer (8 layers,
d=2048, batch 8, seq 1024, bf16 autocast, AdamW): for each engine, PAIRS
pairs of STEPS steps without and with check_offload(), alternately, after
a warm-up; the median step time of each half, the cost of each pair, and
their median ("checked" and "flagged" are the last pair's).  Without the
check nothing of it is installed: torch's own push function is in place
(checked here too).  One more row for vramtrace's engine takes the
checksums out (the hooks, stacks and bookkeeping alone), to tell the
checker's host time from its GPU time.

    cost.py TRL.py [PAIRS [STEPS]]
"""
import statistics
import sys
import time

import torch

import engines
import vramtrace
import vramtrace.torch as vt
from engines import bench
from vramtrace import _check_torch

PUSH = torch._C._autograd._push_saved_tensors_default_hooks


def steps(step, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def measure(name, make, pairs, n):
    torch.manual_seed(0)
    model = bench.Model().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(bench.BATCH, bench.SEQ, bench.D, device="cuda")
    ctx = make(model)

    def step():
        opt.zero_grad(set_to_none=True)
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x)
            loss.backward()
        opt.step()
        vramtrace.step()

    steps(step, 3)
    with vt.check_offload():
        steps(step, 2)
    off, on, cost = [], [], []
    for _ in range(pairs):
        assert torch._C._autograd._push_saved_tensors_default_hooks is PUSH
        off.append(steps(step, n))
        with vt.check_offload() as chk:
            on.append(steps(step, n))
        cost.append(on[-1] / off[-1] - 1)
    print("%-28s %8.1f %8.1f %+7.1f%% %+7.1f%% %+7.1f%% %8d %7d" % (
        name, statistics.median(off), statistics.median(on),
        statistics.median(cost) * 100, min(cost) * 100, max(cost) * 100,
        chk.checked, len(chk.diffs)))
    del model, opt, x, ctx
    torch.cuda.empty_cache()


def main():
    trl = sys.argv[1]
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    print("device: %s; %d pairs of %d steps" % (torch.cuda.get_device_name(),
                                               pairs, n))
    print("%-28s %8s %8s %8s %8s %8s %8s %7s" % (
        "engine (8 layers, d=2048)", "off ms", "on ms", "cost", "min",
        "max", "checked", "flagged"))
    measure("vramtrace (defaults)", lambda m: vt.OffloadActivations(model=m),
            pairs, n)
    sums, _check_torch._sums = _check_torch._sums, lambda t: None
    measure("  same, no checksums", lambda m: vt.OffloadActivations(model=m),
            pairs, n)
    _check_torch._sums = sums
    measure("trl OffloadActivations", lambda m: engines.trl_engine(trl),
            pairs, n)
    measure("save_on_cpu(pin_memory)",
            lambda m: torch.autograd.graph.save_on_cpu(pin_memory=True),
            pairs, n)


if __name__ == "__main__":
    main()
