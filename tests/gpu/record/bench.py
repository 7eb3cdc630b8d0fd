"""Median step time of two loops, for the overhead test.

usage: bench.py big|small OUT.json [STEPS]

big: an 8-layer d=2048 transformer, batch 8, sequence 1024, bf16.  small:
an allocation-heavy loop of many small tensors.  5 warm-up steps, then
STEPS (default 20) timed steps; OUT.json gets the median step time in
seconds, the median CPU time of the stepping thread in a step (seconds: what the program's own
thread spends, without the time another process took its core) and the
timed window (ns since the Unix epoch, the clock of recorded events).
"""
import ctypes
import json
import statistics
import sys
import time

import torch

kind, out = sys.argv[1], sys.argv[2]
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 20
dev = "cuda"
torch.manual_seed(0)
if kind == "big":
    layer = torch.nn.TransformerEncoderLayer(2048, 16, 8192, batch_first=True,
                                             dtype=torch.bfloat16)
    model = torch.nn.TransformerEncoder(layer, 8, enable_nested_tensor=False)
    model = model.to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    x = torch.randn(8, 1024, 2048, device=dev, dtype=torch.bfloat16)

    def step():
        model(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
else:
    w = torch.randn(64, 64, device=dev, requires_grad=True)
    opt = torch.optim.SGD([w], lr=1e-3)

    def step():
        acc = torch.zeros(64, 64, device=dev)
        for i in range(200):
            t = torch.randn(64, 64, device=dev) @ w
            acc = acc + t.relu() * 0.01
        acc.sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

try:    # bench/record/sampler.c, when preloaded: sample the timed steps only
    sampler_reset = ctypes.CDLL(None).vramtrace_sampler_reset
except AttributeError:
    def sampler_reset():
        pass
times, cpu = [], []
for i in range(5 + steps):
    torch.cuda.synchronize()
    if i == 5:
        window = [time.time_ns()]
        sampler_reset()
    t0, c0 = time.perf_counter(), time.thread_time()
    step()
    torch.cuda.synchronize()
    if i >= 5:
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
window.append(time.time_ns())
with open(out, "w") as f:
    json.dump({"median": statistics.median(times), "times": times,
               "cpu_median": statistics.median(cpu),
               "window": window}, f)
