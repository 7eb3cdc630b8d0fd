"""Train a small transformer for STEPS steps with OffloadActivations, under
`vramtrace record --torch-steps`; write the engine's counters to OUT.json.

usage: recorded.py STEPS OUT.json"""
import json
import sys

import torch

from vramtrace.torch import OffloadActivations

steps, out = int(sys.argv[1]), sys.argv[2]
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
model = model.cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(8, 256, 512, device="cuda")
ctx = OffloadActivations(slab_bytes=1 << 30)
for _ in range(steps):
    with ctx:
        loss = model(x).pow(2).mean()
        loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
with open(out, "w") as f:
    json.dump(ctx.stats(), f)
