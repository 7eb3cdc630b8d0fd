"""A short PyTorch training run for `vramtrace record` from a pip install
(tests/gpu/pytest-plugin/run): 8 steps under vramtrace.torch's offload
engine, then the files of libcupti, the CUDA runtime and vramtrace's
libraries the process has mapped, and the engine's counters, as JSON.

    train.py OUT.json
"""
import json
import os
import sys

import torch

from vramtrace.torch import OffloadActivations

torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024))
    for _ in range(4)]).cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(2048, 1024, device="cuda")
ctx = OffloadActivations(model=model)
for _ in range(8):
    with ctx:
        loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
with open("/proc/self/maps") as f:
    mapped = {line.split()[-1] for line in f if "/" in line}
names = ("libcupti.so", "libcudart.so", "libvramtrace")
json.dump({"torch": torch.__version__, "cuda": torch.version.cuda,
           "mapped": sorted(p for p in mapped
                            if os.path.basename(p).startswith(names)),
           "stats": ctx.stats(), "extension": ctx.extension},
          open(sys.argv[1], "w"), indent=1)
