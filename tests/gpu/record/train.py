"""A small transformer training loop for the record test.

usage: train.py clean|leaky STEPS OUT.json

leaky: every step brings an activation back from the host on a side stream
into a list that is never cleared (a leaky offload).  After each
optimizer.step() (where --torch-steps marks the step) it notes
torch.cuda.memory_allocated(); OUT.json gets those numbers, the side
stream's handle and the pid.  It also appends each finished step and its time to
OUT.json.steps, for the kill test.
"""
import json
import os
import sys
import time

import torch

mode, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
torch.manual_seed(0)
dev = "cuda"
layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 4).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
side = torch.cuda.Stream()
leaked = []
allocated = []
with open(out + ".pid", "w") as f:
    f.write(str(os.getpid()))
for step in range(steps):
    x = torch.randn(8, 128, 256, device=dev)
    h = model(x)
    if mode == "leaky":
        host = h.detach().to("cpu")
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            back = host.to(dev, non_blocking=True)
        leaked.append(back)
    loss = h.pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    allocated.append(torch.cuda.memory_allocated())
    with open(out + ".steps", "a") as f:
        f.write("%d %d\n" % (step + 1, time.time_ns()))
with open(out, "w") as f:
    json.dump({"allocated": allocated, "side": side.cuda_stream,
               "leak_bytes": 8 * 128 * 256 * 4 if mode == "leaky" else 0},
              f)
