"""A training loop that leaks at a known line, for the stack checks.

usage: leak.py main|side|backward STEPS OUT.json

Every step trains a small transformer and keeps 4 MiB more, made at the
line marked LEAK of its mode: main keeps a tensor made on the compute
stream, side one made on a side stream, backward one made by a gradient
hook while autograd runs backward (on its own thread).  Run it under
vramtrace record --torch-steps; OUT.json gets the file, the line and the
function `vramtrace leaks` must name first.
"""
import json
import sys

import torch

mode, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
torch.manual_seed(0)
dev = "cuda"
layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 2).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
side = torch.cuda.Stream()
kept = []
LEAK = 1 << 20          # floats: 4 MiB


def keep_main(h):
    kept.append(torch.full((LEAK,), 1.0, device=dev) + h.mean())  # LEAK main


def keep_side(h):
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        kept.append(torch.ones(LEAK, device=dev))  # LEAK side


def keep_grad(g):
    kept.append(g.new_ones(LEAK))  # LEAK backward


for step in range(steps):
    x = torch.randn(8, 128, 256, device=dev, requires_grad=True)
    h = model(x)
    if mode == "main":
        keep_main(h.detach())
    elif mode == "side":
        keep_side(h.detach())
    else:
        h.register_hook(keep_grad)
    h.pow(2).mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
marker = "# LEAK " + mode
with open(__file__) as f:
    line = next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(
        marker))
func = {"main": "keep_main", "side": "keep_side", "backward": "keep_grad"}
with open(out, "w") as f:
    json.dump({"file": __file__, "line": line, "function": func[mode],
               "bytes_per_step": LEAK * 4,
               "side": side.cuda_stream}, f)
