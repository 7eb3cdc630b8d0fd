"""Offload benchmark: a transformer (8 layers, d=2048, 16 heads, batch 8,
seq 1024, bf16 autocast, AdamW).  Median step time over 20 steps after
warm-up and peak memory (max_memory_allocated) for: no offload,
save_on_cpu(pin_memory=True), the engine with defaults, and budget mode at
several budgets; plus pinned copy bandwidth each way."""

import statistics
import sys
import time

import torch
import torch.nn.functional as F

from vramtrace.torch import OffloadActivations

LAYERS, D, HEADS, BATCH, SEQ = 8, 2048, 16, 8, 1024
WARM, STEPS = 3, 20
GB = 1e9


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.ln2 = torch.nn.LayerNorm(D)
        self.up = torch.nn.Linear(D, 4 * D)
        self.down = torch.nn.Linear(4 * D, D)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (t.view(b, s, HEADS, D // HEADS).transpose(1, 2)
                   for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, D))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln = torch.nn.LayerNorm(D)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x).float().pow(2).mean()


class NoCtx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def measure(make_ctx):
    torch.manual_seed(0)
    model = Model().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, SEQ, D, device="cuda")
    ctx = make_ctx(model)
    times = []
    for step in range(WARM + STEPS):
        if step == WARM:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x)
            loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if step >= WARM:
            times.append(time.perf_counter() - t0)
    peak = torch.cuda.max_memory_allocated()
    stats = ctx.stats() if hasattr(ctx, "stats") else {}
    del model, opt, x, ctx
    torch.cuda.empty_cache()
    return statistics.median(times) * 1e3, peak / GB, stats


def bandwidth():
    n = 1 << 30
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    out = []
    for dst, src in ((host, dev), (dev, host)):
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(5):
            dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        out.append(5 * n / (time.perf_counter() - t0) / GB)
    return out


def main():
    print("device: %s, torch %s" % (torch.cuda.get_device_name(),
                                     torch.__version__))
    d2h, h2d = bandwidth()
    print("pinned copies: device-to-host %.1f GB/s, host-to-device %.1f GB/s"
          % (d2h, h2d))
    rows = []
    base_ms, base_gb, _ = measure(lambda m: NoCtx())
    rows.append(("no offload", base_ms, base_gb, ""))
    ms, gb, _ = measure(lambda m: torch.autograd.graph.save_on_cpu(
        pin_memory=True))
    rows.append(("save_on_cpu(pin_memory=True)", ms, gb, ""))
    ms, gb, st = measure(lambda m: OffloadActivations(model=m))
    per = st["step"] or 1
    total = (st["offloaded_bytes"] + st["kept_bytes"]) / per
    rows.append(("vramtrace engine (defaults)", ms, gb,
                 "%.2f GB offloaded/step, %d fallbacks, %d pinned allocs" % (
                     st["offloaded_bytes"] / per / GB, st["pool_fallbacks"],
                     st["host_allocs"])))
    for save in [float(a) for a in sys.argv[1:]] or (0.8, 1.2, 2.0):
        budget = int(total - save * GB)
        ms, gb, st = measure(lambda m: OffloadActivations(model=m,
                                                          budget=budget))
        per = st["step"] or 1
        rows.append(("budget %.2f GB (offload ~%.1f GB)" % (
            budget / GB, save), ms, gb,
            "%.2f GB offloaded/step" % (st["offloaded_bytes"] / per / GB)))
    print("%-36s %9s %8s %9s %9s  %s" % ("mode", "step ms", "peak GB",
                                         "vs base", "saved GB", "notes"))
    for name, ms, gb, note in rows:
        print("%-36s %9.1f %8.2f %8.0f%% %9.2f  %s" % (
            name, ms, gb, 100 * (ms / base_ms - 1), base_gb - gb, note))


if __name__ == "__main__":
    main()
