"""host.py SHAPE STEPS: a small training loop, recorded by `vramtrace record
--torch-steps`, whose pinned host memory does what SHAPE says:

  stash     keeps a pinned CPU copy of an activation every step (2 MiB):
            pinned memory that grows at every step, a leak
  loader    a DataLoader with pin_memory=True over batches of 32 to 128
            rows: PyTorch's caching host allocator fills its pool, then
            reuses it
  saveoncpu torch.autograd.graph.save_on_cpu(pin_memory=True): every
            saved tensor copied to pinned memory and let go in backward

The device's memory is flat in every shape.  Prints the pinned bytes the
program itself kept per step (stash) and the steps run."""
import sys

import torch

shape, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1024)).cuda()
opt = torch.optim.AdamW(model.parameters())


class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return steps

    def __getitem__(self, i):
        return torch.randn(32 + (i * 37) % 97, 1024)


def batches():
    if shape == "loader":
        yield from torch.utils.data.DataLoader(
            Rows(), batch_size=None, pin_memory=True)
    else:
        for _ in range(steps):
            yield torch.randn(512, 1024)


kept = []
for x in batches():
    x = x.cuda(non_blocking=True)
    if shape == "saveoncpu":
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            y = model(x)
    else:
        y = model(x)
    if shape == "stash":
        h = torch.empty(y.shape, dtype=y.dtype, pin_memory=True)
        kept.append(h.copy_(y.detach()))   # 512 x 1024 x 4 = 2 MiB
    y.square().mean().backward()
    opt.step()
    opt.zero_grad()
torch.cuda.synchronize()
print("%s: %d steps, %d pinned bytes kept per step" % (
    shape, steps, kept[0].numel() * kept[0].element_size() if kept else 0))
