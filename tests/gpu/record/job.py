"""job.py: a rank of a torchrun job for tests/gpu/record/run (part job).

Each rank allocates 8 MiB on its local GPU (cuda:0 when the node has one),
synchronizes and lingers a second, so that the nodes' processes overlap in
time.  What matters is the environment torchrun gives it (RANK,
TORCHELASTIC_RUN_ID, MASTER_ADDR, MASTER_PORT), which the injection
library records as the job's identity.
"""
import os
import time

import torch

dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) %
                   torch.cuda.device_count())
x = torch.ones(2 << 20, device=dev)
torch.cuda.synchronize()
time.sleep(1)
print("rank", os.environ.get("RANK"), "job", os.environ.get(
    "TORCHELASTIC_RUN_ID"), os.environ.get("MASTER_ADDR"),
    os.environ.get("MASTER_PORT"), float(x.sum()))
