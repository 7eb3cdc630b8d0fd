"""Two ranks under torchrun, each on its own GPU; rank 1 leaks.

usage: torchrun --nproc_per_node=2 train.py STEPS

Every rank runs the same small model for STEPS steps; rank 1 also keeps
an 8 MiB tensor per step in a list that is never cleared.  Steps are
marked at every optimizer step (vramtrace record --torch-steps).
"""
import os
import sys

import torch

steps = int(sys.argv[1])
rank = int(os.environ["RANK"])
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
torch.manual_seed(rank)
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
kept = []
for step in range(steps):
    x = torch.randn(256, 1024, device="cuda")
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if rank == 1:
        kept.append(torch.empty(8 << 20, dtype=torch.uint8, device="cuda"))
    torch.cuda.synchronize()
