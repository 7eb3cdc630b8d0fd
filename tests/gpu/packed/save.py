"""save.py OUTDIR: train a small model for 12 steps, keeping 256 KiB of
activations a step, with the allocation history recorded; save the
snapshot the ways people keep one: _dump_snapshot (snapshot.pickle),
torch.save (snapshot.pt), and both compressed with gzip and xz
(snapshot.pickle.gz, snapshot.pt.xz).  Prints the bytes the leak kept per
step, as memory_allocated() saw it.  save.py -: the snapshot pickled to
standard output instead (the bytes kept go to standard error)."""
import gzip
import lzma
import os
import pickle
import shutil
import sys

import torch

out = sys.argv[1]
torch.cuda.memory._record_memory_history(max_entries=100000)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 512)).cuda()
opt = torch.optim.AdamW(model.parameters())
kept, seen = [], []
for step in range(12):
    with torch.profiler.record_function("ProfilerStep#%d" % step):
        x = torch.randn(128, 512, device="cuda")
        y = model(x)
        y.square().mean().backward()
        opt.step()
        opt.zero_grad()
        kept.append(y.detach()[:, :128].clone())    # 128 x 128 x 4 = 64 KiB
        kept.append(torch.empty(48 * 1024, device="cuda"))  # 192 KiB
    torch.cuda.synchronize()
    seen.append(torch.cuda.memory_allocated())
if out == "-":
    pickle.dump(torch.cuda.memory._snapshot(), sys.stdout.buffer)
    sys.stdout.flush()
    print("kept per step (memory_allocated):",
          sorted({b - a for a, b in zip(seen[1:], seen[2:])}),
          file=sys.stderr)
    sys.exit(0)
torch.cuda.memory._dump_snapshot(os.path.join(out, "snapshot.pickle"))
torch.save(torch.cuda.memory._snapshot(), os.path.join(out, "snapshot.pt"))
torch.cuda.memory._record_memory_history(enabled=None)
for name, opener in (("snapshot.pickle.gz", gzip.open),
                     ("snapshot.pt.xz", lzma.open)):
    src = os.path.join(out, name.rsplit(".", 1)[0])
    with open(src, "rb") as f, opener(os.path.join(out, name), "wb") as g:
        shutil.copyfileobj(f, g)
print("kept per step (memory_allocated):",
      sorted({b - a for a, b in zip(seen[1:], seen[2:])}))
