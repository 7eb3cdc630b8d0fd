"""NVTX from PyTorch under vramtrace record: three ranges named "step" and
one mark; OUT gets the environment the process saw.

usage: nvtx.py OUT.json"""
import json
import os
import sys

import torch

x = torch.zeros(1 << 20, device="cuda")
for i in range(3):
    torch.cuda.nvtx.range_push("step")
    x += 1
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.mark("hello")
torch.cuda.synchronize()
with open(sys.argv[1], "w") as f:
    json.dump({"NVTX_INJECTION64_PATH":
               os.environ.get("NVTX_INJECTION64_PATH")}, f)
