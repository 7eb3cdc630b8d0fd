"""Offload benchmark: a transformer (8 layers, d=2048, 16 heads, batch 8,
seq 1024, bf16 autocast, AdamW).  Median step time over 20 steps after
warm-up, forward and backward times (CUDA events), peak memory
(max_memory_allocated), bytes copied and the copies' rate (bytes over
their device time in a profiled step) for: no offload,
save_on_cpu(pin_memory=True), the engine with defaults, and budget mode at
several sizes (GB to offload, the arguments); plus pinned copy bandwidth
each way and, for each engine row, the bound max(forward, bytes out /
bandwidth) + max(backward, bytes in / bandwidth) + the rest of the step.

With --ab SAVE PAIRS: no offload and budget mode offloading about SAVE GB,
measured alternately PAIRS times, and the median cost and saving."""

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


def copy_busy(step):
    """Device time of one step's device-to-host and host-to-device copies
    (ms), from a profiler trace of that step."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    busy = {"DtoH": 0.0, "HtoD": 0.0}
    for ev in prof.events():
        for way in busy:
            if ev.name.startswith("Memcpy " + way):
                t = getattr(ev, "device_time", None)
                if t is None:
                    t = ev.cuda_time
                busy[way] += t / 1e3
    return busy["DtoH"], busy["HtoD"]


def measure(make_ctx):
    """Median step, forward and backward times (ms, from CUDA events on
    the compute stream), peak GB, the engine's stats and the copies'
    device time in one step."""
    torch.manual_seed(0)
    model = Model().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, SEQ, D, device="cuda")
    ctx = make_ctx(model)
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(3)]

    def step():
        marks[0].record()
        opt.zero_grad(set_to_none=True)
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x)
            marks[1].record()
            loss.backward()
            marks[2].record()
        opt.step()

    times, fwd, bwd = [], [], []
    for i in range(WARM + STEPS):
        if i == WARM:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        if i >= WARM:
            times.append(time.perf_counter() - t0)
            fwd.append(marks[0].elapsed_time(marks[1]))
            bwd.append(marks[1].elapsed_time(marks[2]))
    peak = torch.cuda.max_memory_allocated()
    before = ctx.stats() if hasattr(ctx, "stats") else {}
    busy = copy_busy(step)
    # The profiled step's own counters: a steady step, not the first.
    st = {k: v - before[k] for k, v in ctx.stats().items()} if before else {}
    del model, opt, x, ctx
    torch.cuda.empty_cache()
    return dict(ms=statistics.median(times) * 1e3, gb=peak / GB,
                fwd=statistics.median(fwd), bwd=statistics.median(bwd),
                st=st, busy=busy)


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


def ab(save, pairs):
    """Goal (b) without drift: no offload and budget mode offloading about
    save GB, measured alternately pairs times; prints each pair and the
    median cost and saving."""
    r = measure(lambda m: OffloadActivations(model=m))
    total = r["st"]["offloaded_bytes"] + r["st"]["kept_bytes"]
    budget = int(total - save * GB)
    cost, saved = [], []
    print("pair  no offload ms  budget ms   cost  saved GB")
    for i in range(pairs):
        base = measure(lambda m: NoCtx())
        b = measure(lambda m: OffloadActivations(model=m, budget=budget))
        cost.append(b["ms"] / base["ms"] - 1)
        saved.append(base["gb"] - b["gb"])
        print("%4d  %13.1f  %9.1f  %+5.1f%%  %8.2f" % (
            i + 1, base["ms"], b["ms"], cost[-1] * 100, saved[-1]))
    print("budget, offload ~%.1f GB: median of %d pairs %+.1f%% (range "
          "%+.1f%% .. %+.1f%%), %.2f GB saved" % (
              save, pairs, statistics.median(cost) * 100, min(cost) * 100,
              max(cost) * 100, statistics.median(saved)))


def main():
    print("device: %s, torch %s" % (torch.cuda.get_device_name(),
                                     torch.__version__))
    if sys.argv[1:2] == ["--ab"]:
        ab(float(sys.argv[2]), int(sys.argv[3]))
        return
    d2h, h2d = bandwidth()
    print("pinned copies: device-to-host %.1f GB/s, host-to-device %.1f GB/s"
          % (d2h, h2d))
    rows = []
    base = measure(lambda m: NoCtx())
    rows.append(("no offload", base))
    rows.append(("save_on_cpu(pin_memory=True)", measure(
        lambda m: torch.autograd.graph.save_on_cpu(pin_memory=True))))
    r = measure(lambda m: OffloadActivations(model=m))
    rows.append(("engine (defaults)", r))
    total = r["st"]["offloaded_bytes"] + r["st"]["kept_bytes"]
    for save in [float(a) for a in sys.argv[1:]] or (0.8, 0.9, 1.5, 2.2, 2.8, 3.0):
        budget = int(total - save * GB)
        rows.append(("budget, offload ~%.1f GB" % save, measure(
            lambda m: OffloadActivations(model=m, budget=budget))))
    head = ("mode", "ms", "peak GB", "saved", "fwd", "bwd", "out GB",
            "in GB", "d2h GB/s", "h2d GB/s", "bound ms", "waits f/b")
    fmt = "%-28s %6s %7s %6s %5s %5s %6s %6s %8s %8s %8s %9s"
    print(fmt % head)
    opt_ms = base["ms"] - base["fwd"] - base["bwd"]
    for name, r in rows:
        st, busy = r["st"], r["busy"]
        out = st.get("offloaded_bytes", 0) / GB
        back = st.get("restored_bytes", 0) / GB
        bound = waits = "-"
        if st:
            # max(forward, copies out) + max(backward, copies in) + rest
            bound = "%.1f" % (max(base["fwd"], 1e3 * out / d2h) +
                              max(base["bwd"], 1e3 * back / h2d) + opt_ms)
            waits = "%d/%d" % (st["fwd_waits"], st["bwd_waits"])
        rate = ["%.1f" % (n / (b / 1e3)) if st and b > 0 else "-"
                for n, b in zip((out, back), busy)]
        print(fmt % (name, "%.1f" % r["ms"], "%.2f" % r["gb"],
                     "%.2f" % (base["gb"] - r["gb"]), "%.1f" % r["fwd"],
                     "%.1f" % r["bwd"], "%.2f" % out, "%.2f" % back,
                     rate[0], rate[1], bound, waits))


if __name__ == "__main__":
    main()
