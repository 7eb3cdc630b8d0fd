"""Offload benchmark on HF Llama (random init from a config, no download).

    bench.py table [ROUNDS|BIG,SMALL] [big|small|both]
    bench.py varlen [ROUNDS|BIG,SMALL] [big|small|both]
    bench.py exact [big|small|both]
    bench.py checkpointing [big|small|both]
    bench.py cost
    bench.py parts
    bench.py contention

table: the engines side by side on LlamaForCausalLM, bf16 autocast, AdamW,
15 steps each (the median step of steps 5-15, their peak
max_memory_allocated), in interleaved rounds: no offload (twice: the
run-to-run noise of the losses), TRL's engine through its
get_act_offloading_ctx_manager (the file named by $VRAMTRACE_TRL_REF,
loaded with importlib), save_on_cpu, vramtrace through its own
get_act_offloading_ctx_manager with defaults, a budget, max_memory with
room for every saved tensor (0.9 of the device: steps run idle, without
the hooks), max_memory at TRL's peak, recompute, and a curve over
max_memory.  Backward runs inside
the context, as TRL's trainers do.  Each row: ms/step (median over rounds,
and the rounds' range), peak GB, the copy floor (max(forward, bytes out /
d2h bandwidth) + max(backward, bytes in / h2d bandwidth) + the rest of the
step, from the row's compute baseline: no offload, or recompute without
offload for recompute rows) and how far above it (over: the medians'
ratio; paired: the median of each round's ratio to its own round's
baseline, which the machine's drift between rounds does not move), the
step of its baseline with only the row's copies beside it and how far
above that the row is (alone: the same bytes out and back on side
streams, with no hooks and no per-tensor work: what the copies cost a
CPU-bound step, which the floor counts as free; see CopiesAlone), bytes
each way, waits, and the largest difference of the 15 losses from no
offload's.

varlen: the table with batches of other lengths, drawn from half the
size's sequence to all of it (the same lengths every run), as a trainer
that pads each batch to its longest sequence gives them; one run without
offload first, not measured, so that no row pays for the kernels chosen
at each new shape.

exact: the same configurations once each with deterministic algorithms
(torch.use_deterministic_algorithms, CUBLAS_WORKSPACE_CONFIG=:4096:8) and
eager attention, where run-to-run noise is zero: each row's 15 losses
against the first no-offload run's, bit for bit (an engine that copies
saved tensors exactly, or recomputes them with the same kernels, must give
the same bits; a second no-offload run shows that the model is
deterministic).

checkpointing: no offload, TRL's engine, vramtrace's defaults and
max_memory at TRL's peak once each on the model with HF's gradient
checkpointing on (use_reentrant True, then False), as TRL's trainers run
activation offloading: ms/step, peak, GB copied out a step, learning
steps, and the largest difference of the 15 losses from no offload's.

cost [KIB]: the per-tensor cost of the hooks, in microseconds, for one
pack and one unpack: no hooks, identity hooks, TRL's, vramtrace's in
Python over ctypes and through the extension, and the extension with
every tensor kept (what describing a tensor and asking the engine cost,
without the copies and their events) (a chain of exp() on tensors of KIB
KiB, 16 by default: 2000 of them, fewer when larger, within 2 GiB).
Each side twice: until the device is done (sync), and the CPU's own time
until the call returns (cpu: what the hooks cost the CPU, which a large
tensor's copies hide in the first); learn: vramtrace's learning steps
among the five (they sample memory at every operation).

contention: what copies between the device and pinned host memory,
running on side streams, take from the CPU: microseconds per launch of a
tiny kernel, per matmul, multiply and transposed copy, and nanoseconds per
iteration of a Python loop, with no copy running, then while about 80
ms of copies run: 4 GiB to pinned host memory, from it, or both at once
(median of 5 rounds; the last column says in how many the copies
outlasted the three loops).  On a step bound by the CPU that launches
its kernels (the small model), any slowdown here is step time that the
copy floor does not count.

parts: where the pack and unpack hooks' time goes: each Python access
the extension makes on a saved tensor (a Linear's output under autocast,
as a transformer saves), timed alone in a loop, in microseconds, beside
one whole pack and unpack of a kept tensor.
"""

import contextlib
import copy
import gc
import importlib.util
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from vramtrace import torch as vt

GB = 1e9
WARM, STEPS = 4, 15         # measured: steps 5..15
SIZES = {
    # layers, hidden, intermediate, heads, batch, sequence
    "big": (8, 2048, 5632, 16, 8, 1024),
    "small": (4, 1024, 2816, 16, 4, 512),
}
VOCAB = 32000


# The synthetic transformer of the bench before HF Llama (8 layers, d=2048,
# 16 heads, batch 8, sequence 1024): tests/gpu/offload-check trains it
# (its sites are lines of this file) and may resize it through these
# names.
LAYERS, D, HEADS, BATCH, SEQ = 8, 2048, 16, 8, 1024


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


def load_trl():
    """TRL's engine from $VRAMTRACE_TRL_REF, or None (said on stderr: the
    TRL rows and the max_memory rows set at its peak are left out)."""
    path = os.environ.get("VRAMTRACE_TRL_REF")
    if not path or not os.path.exists(path):
        print("bench: TRL's engine not found at %s (set VRAMTRACE_TRL_REF):"
              " its rows, and those at its peak, are left out" % (
                  path or "(unset)"), file=sys.stderr)
        return None
    spec = importlib.util.spec_from_file_location("trl_activation_offloading",
                                                  path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_model(size, attn=None):
    """The size's Llama, initialized once on the host: each configuration
    trains a copy of it on the GPU (so that none sees another's weights);
    attn names the attention implementation (default: transformers')."""
    from transformers import LlamaConfig, LlamaForCausalLM
    layers, hidden, inter, heads, _, _ = SIZES[size]
    extra = {"attn_implementation": attn} if attn else {}
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=hidden,
                      intermediate_size=inter, num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=heads,
                      max_position_embeddings=4096, use_cache=False,
                      tie_word_embeddings=False, **extra)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    model.train()
    return model


def batches(size, varlen=False):
    """STEPS batches of the size's sequence length or, with varlen, of
    lengths drawn from half of it to all of it (the same every run)."""
    _, _, _, _, batch, seq = SIZES[size]
    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    lens = [seq] * STEPS
    if varlen:
        lens = torch.randint(seq // 2, seq + 1, (STEPS,),
                             generator=torch.Generator().manual_seed(3))
    return [torch.randint(0, VOCAB, (batch, int(n)), device="cuda",
                          generator=g) for n in lens]


class NoCtx(contextlib.nullcontext):
    def stats(self):
        return {}


ALONE = " (copies alone)"   # results' name of a row's CopiesAlone


class CopiesAlone:
    """A row's copies without an engine: inside inner (no offload, or
    recompute without offload), a side stream copies out bytes from the
    device to pinned host memory as forward reaches start, and another
    copies back bytes from the host once the first back bytes out are
    done;
    leaving waits for both, as the engine's exit does.  No saved-tensor
    hook, no per-tensor work: what the step costs with only the copies
    (their bandwidth, and what they take from the CPU that launches the
    kernels: `bench.py contention`) running beside it.
    The copies go in PIECE-byte pieces, queued as the module start (the
    first decoder layer) begins: before it, the model reads a value of
    the device (HF Llama's mask: is_nonzero), a copy to the host that
    copies queued earlier on the same copy engine would hold up, with the
    CPU waiting, which an engine's copies (made as tensors are saved,
    after it) do not.  The copies back wait only for the bytes that went
    out first."""

    PIECE = 64 << 20
    HOST = 1 << 30      # pieces cycle through it: far larger than a cache

    def __init__(self, inner, out, back, start):
        self.inner, self.out, self.back = inner, int(out), int(back)
        self.dev = torch.empty(self.PIECE, dtype=torch.uint8, device="cuda")
        self.host = torch.empty(self.HOST, dtype=torch.uint8,
                                pin_memory=True)
        self.d2h, self.h2d = torch.cuda.Stream(), torch.cuda.Stream()
        self.pending = False
        start.register_forward_pre_hook(self._start)

    def stats(self):
        return {}

    def _copies(self, stream, nbytes, out, mark=0):
        """Copy nbytes on stream; returns an event recorded there once
        the first mark bytes (at least) are copied."""
        pieces = self.HOST // self.PIECE
        event = None
        with torch.cuda.stream(stream):
            for i in range((nbytes + self.PIECE - 1) // self.PIECE):
                n = min(self.PIECE, nbytes - i * self.PIECE)
                at = (i % pieces) * self.PIECE
                host, dev = self.host[at:at + n], self.dev[:n]
                (host if out else dev).copy_(dev if out else host,
                                             non_blocking=True)
                if event is None and i * self.PIECE + n >= mark:
                    event = stream.record_event()
        return event

    def _start(self, *unused):
        if not self.pending:
            return
        self.pending = False
        self.d2h.wait_stream(torch.cuda.current_stream())
        # What comes back went out first (an engine keeps or copies last
        # what forward saves last): the copies back wait for those only.
        first = self._copies(self.d2h, self.out, True, self.back)
        if first is not None:
            self.h2d.wait_event(first)
        self._copies(self.h2d, self.back, False)

    def __enter__(self):
        self.inner.__enter__()
        self.pending = True
        return self

    def __exit__(self, *exc):
        try:
            self.d2h.synchronize()
            self.h2d.synchronize()
        finally:
            self.inner.__exit__(*exc)


_began = [0]   # bytes allocated when the configuration measured began


def limit(peak):
    """The max_memory that holds a configuration to peak, a peak of its
    own as measure() reports it: the engine's limit counts everything
    allocated, what the configuration before left included."""
    return int(peak) + _began[0]


def measure(template, make_ctx, data):
    """One configuration on a copy of the template model: STEPS steps;
    returns times, losses, peak and the engine's counters over the
    measured steps.  The peak is the configuration's own: less what was
    still allocated when it began (what the one before left alive after
    release(), said on stderr)."""
    left = _began[0] = torch.cuda.memory_allocated()
    if left:
        print("bench: %.0f MB still allocated before this configuration "
              "(left by the one before); its peak leaves them out" % (
                  left / 1e6), file=sys.stderr)
    model = copy.deepcopy(template).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ctx = make_ctx(model)
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    times, fwd, bwd, losses = [], [], [], []
    before = {}
    for i, ids in enumerate(data):
        if i == WARM:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = dict(ctx.stats()) if hasattr(ctx, "stats") else {}
        t0 = time.perf_counter()
        marks[0].record()
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids).loss
            marks[1].record()
            loss.backward()
            marks[2].record()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        torch.cuda.synchronize()
        if i >= WARM:
            times.append((time.perf_counter() - t0) * 1e3)
            fwd.append(marks[0].elapsed_time(marks[1]))
            bwd.append(marks[1].elapsed_time(marks[2]))
    peak = (torch.cuda.max_memory_allocated() - left) / GB
    after = ctx.stats() if hasattr(ctx, "stats") else {}
    n = len(times)
    st = {}
    if after:
        st = {k: (v - before.get(k, 0)) / n for k, v in after.items()}
        st["predicted_peak"] = after["predicted_peak"]
        st["max_memory"] = after["max_memory"]
        st["learned"] = after["learning_steps"] - before.get(
            "learning_steps", 0)
        st["idle"] = after["idle_steps"] - before.get("idle_steps", 0)
    del model, opt, ctx
    release()
    return dict(ms=statistics.median(times), fwd=statistics.median(fwd),
                bwd=statistics.median(bwd), peak=peak, st=st,
                losses=[float(x) for x in losses])


def release():
    """Give back what a configuration left: its engine's pinned slab (the
    context and the model refer to each other), PyTorch's cached pinned
    and device memory."""
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    if hasattr(torch._C, "_host_emptyCache"):
        torch._C._host_emptyCache()


def bandwidth():
    """Pinned copy bandwidth each way (GB/s), once the host pages exist (a
    fresh VM fills its memory at first touch: 38.9 GB/s device to host
    then, 55 once warm): the best of 5 trials of 5 copies, since the copy
    floor is a lower bound (one trial measured 37.1 GB/s host to device
    where the others measured 53-55)."""
    n = 1 << 30
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    host.fill_(1)
    out = []
    for dst, src in ((host, dev), (dev, host)):
        for _ in range(3):
            dst.copy_(src, non_blocking=True)
        best = 0.0
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(5):
                dst.copy_(src, non_blocking=True)
            torch.cuda.synchronize()
            best = max(best, 5 * n / (time.perf_counter() - t0) / GB)
        out.append(best)
    del dev, host
    return out


def configs(trl, trl_peak):
    """(name, make_ctx, baseline) for one size; make_ctx builds the
    context for a fresh model; trl_peak[0] (bytes, set once TRL's row ran:
    it comes second) sets max_memory rows; the baseline is the row whose
    compute the copy floor counts on."""
    vt_ctx = vt.get_act_offloading_ctx_manager
    rows = [("no offload", lambda m: NoCtx(), None)]
    if trl is not None:
        rows.append(("TRL get_act_offloading_ctx_manager",
                     lambda m: trl.get_act_offloading_ctx_manager(m), None))
    rows.append(("torch save_on_cpu(pin_memory=True)",
                 lambda m: torch.autograd.graph.save_on_cpu(
                     pin_memory=True), None))
    rows.append(("no offload, recompute only",
                 lambda m: vt_ctx(m, max_memory=1 << 50, recompute=True),
                 None))
    rows.append(("vramtrace defaults", lambda m: vt_ctx(m), "base"))
    rows.append(("vramtrace budget=3e9",
                 lambda m: vt_ctx(m, budget=int(3e9)), "base"))
    rows.append(("vramtrace max_memory=0.9 (room for all)",
                 lambda m: vt_ctx(m, max_memory=0.9), "base"))
    for f, plain in ((1.0, True), (1.1, True), (1.25, False)):
        if trl is None:
            break
        tag = "TRL's peak" if f == 1.0 else "%.2fx TRL's peak" % f
        if plain:
            rows.append(("vramtrace max_memory=%s" % tag,
                         lambda m, f=f: vt_ctx(
                             m, max_memory=limit(trl_peak[0] * f)), "base"))
        rows.append(("vramtrace max_memory=%s, recompute" % tag,
                     lambda m, f=f: vt_ctx(
                         m, max_memory=limit(trl_peak[0] * f),
                         recompute=True), "recompute"))
    rows.append(("no offload (again: noise)", lambda m: NoCtx(), None))
    return rows


def floor(r, base, bw):
    """The copy floor of row r over the compute of its baseline."""
    st = r["st"]
    if not st or base is None:
        return None
    out = st.get("offloaded_bytes", 0) / GB
    back = st.get("restored_bytes", 0) / GB
    rest = base["ms"] - base["fwd"] - base["bwd"]
    return (max(base["fwd"], 1e3 * out / bw[0]) +
            max(base["bwd"], 1e3 * back / bw[1]) + rest)


def paired(runs, bases, bw):
    """The median over rounds of each round's time over the floor from its
    own round's baseline, less 1: the machine's drift between rounds (2x
    on the lent GPU machines) cancels in the ratio, which the medians
    taken apart keep."""
    ratios = []
    for r, b in zip(runs, bases):
        fl = floor(r, b, bw) if "ms" in r and "ms" in b else None
        if fl:
            ratios.append(r["ms"] / fl)
    return statistics.median(ratios) - 1 if ratios else None


def dloss(runs, ref):
    """The largest difference of the losses of runs from ref's."""
    return max(abs(a - b) for r in runs for a, b in zip(r["losses"], ref))


def report(rows, results, bw, trl_peak, size):
    """The table over the rounds measured so far."""
    ok = {n: [r for r in rs if "error" not in r] for n, rs in results.items()}
    med = {n: dict(rs[0], ms=statistics.median(r["ms"] for r in rs),
                   lo=min(r["ms"] for r in rs), hi=max(r["ms"] for r in rs),
                   peak=max(r["peak"] for r in rs), runs=rs)
           for n, rs in ok.items() if rs}
    base = med.get("no offload")
    rbase = med.get("no offload, recompute only")
    ref = base["runs"][0]["losses"] if base else None
    plain = [r for n in ("no offload", "no offload (again: noise)")
             for r in ok.get(n, [])]
    noise = dloss(plain, ref) if ref and len(plain) > 1 else float("nan")
    fmt = ("| %-44s | %7s | %13s | %7s | %7s | %6s | %6s | %7s | %6s |"
           " %5s | %5s | %9s | %5s | %10s | %9s |")
    print(fmt % ("engine", "ms/step", "rounds", "peak GB", "floor",
                 "over", "paired", "alone", "over", "out", "in",
                 "waits f/b", "casts", "learn/idle", "max dloss"))
    print(fmt % tuple(["---"] * 15))
    for name, _, kind in rows:
        if name not in med:
            err = results.get(name, [{}])[0].get("error", "not run")
            print("| %-44s | failed: %s |" % (name, err[:80]))
            continue
        r = med[name]
        fl = floor(r, rbase if kind == "recompute" else base, bw) \
            if kind else None
        pair = paired(results[name], results.get(
            "no offload, recompute only" if kind == "recompute" else
            "no offload", []), bw) if kind else None
        st = r["st"]
        alone = med.get(name + ALONE, {}).get("ms")
        print(fmt % (name, "%.1f" % r["ms"],
                     "%.1f-%.1f" % (r["lo"], r["hi"]),
                     "%.2f" % r["peak"],
                     "%.1f" % fl if fl else "-",
                     "%+.0f%%" % (100 * (r["ms"] / fl - 1)) if fl else "-",
                     "%+.0f%%" % (100 * pair) if pair is not None else "-",
                     "%.1f" % alone if alone else "-",
                     "%+.0f%%" % (100 * (r["ms"] / alone - 1)) if alone
                     else "-",
                     "%.2f" % (st.get("offloaded_bytes", 0) / GB)
                     if st else "-",
                     "%.2f" % (st.get("restored_bytes", 0) / GB)
                     if st else "-",
                     "%.1f/%.1f" % (st.get("fwd_waits", 0),
                                    st.get("bwd_waits", 0)) if st else "-",
                     "%.0f" % st.get("recomputed", 0) if st else "-",
                     "%d/%d" % (st.get("learned", 0), st.get("idle", 0))
                     if st else "-",
                     "%.2e" % dloss(r["runs"], ref) if ref else "-"))
    print("losses: %d steps; run-to-run noise (every no-offload run against "
          "the first): %.2e" % (STEPS, noise))
    print("peak: max_memory_allocated over steps %d-%d, the highest of the "
          "rounds; TRL's peak %.3f GB" % (WARM + 1, STEPS,
                                          (trl_peak or 0) / GB))
    print("alone: the step of the row's baseline with only its copies "
          "beside it (the same bytes out and back on side streams, no "
          "hooks: CopiesAlone), and how far above it the row is")
    print("out, in: GB copied each way a step; waits: forward waits on a "
          "copy, unpacks restored on demand, a step; casts: autocast casts "
          "of parameters made again in backward, a step; learn/idle: learning "
          "steps and steps run without the hooks among the measured ones "
          "(first round)")
    for name, _, _ in rows:
        if name in med and med[name]["st"].get("predicted_peak"):
            st = med[name]["st"]
            print("  %-44s predicted peak %.3f GB (measured %.3f), "
                  "max_memory %s" % (
                      name, st["predicted_peak"] / GB, med[name]["peak"],
                      "%.3f GB" % (st["max_memory"] / GB)
                      if st.get("max_memory") else "none"))
    trl = med.get("TRL get_act_offloading_ctx_manager")
    if trl:
        fits = [(r["ms"], n) for n, r in med.items()
                if n.startswith("vramtrace") and not n.endswith(ALONE) and
                r["peak"] <= trl["peak"]]
        if fits:
            ms, name = min(fits)
            print("at TRL's peak (%.3f GB, %.1f ms): fastest vramtrace row "
                  "at or under it: %s, %.1f ms = %.2fx TRL's time (goal: "
                  "%s)" % (trl["peak"], trl["ms"], name, ms, ms / trl["ms"],
                           "<= 0.67x" if size == "big" else "<= 1x"))
        else:
            print("at TRL's peak (%.3f GB): no vramtrace row at or under it"
                  % trl["peak"])


def measure_row(template, make, data, rnd, name, results):
    """One configuration's round into results[name], said as it ends."""
    t0 = time.time()
    try:
        r = measure(template, make, data)
    except Exception as exc:  # noqa: BLE001 - reported in the table
        import traceback
        traceback.print_exc()
        r = dict(error=repr(exc))
        release()
    results.setdefault(name, []).append(r)
    print("  round %d %-44s %s (%.0f s)" % (
        rnd + 1, name, "%.1f ms %.3f GB" % (r["ms"], r["peak"])
        if "ms" in r else "failed", time.time() - t0), flush=True)
    return r


def table(size, rounds, trl, bw, deadline, varlen=False):
    _, hidden, _, _, batch, seq = SIZES[size]
    data = batches(size, varlen)
    print("\n== %s: %d layers, hidden %d, batch %d, sequence %s ==" % (
        size, SIZES[size][0], hidden, batch,
        "lengths %s" % " ".join(str(d.shape[1]) for d in data) if varlen
        else seq), flush=True)
    template = make_model(size)
    if varlen:
        # cuDNN and cuBLAS choose their kernels at each new shape: the
        # first configuration to meet a length would pay for it.
        t0 = time.time()
        measure(template, lambda m: NoCtx(), data)
        print("  warm-up: every length once without offload (%.0f s)" % (
            time.time() - t0), flush=True)
    results = {}
    trl_peak = [0]
    rows = configs(trl, trl_peak)
    makes = {name: make for name, make, _ in rows}
    base = {"base": makes["no offload"],
            "recompute": makes["no offload, recompute only"]}
    for rnd in range(rounds):
        if rnd > 0 and time.time() > deadline:
            print("deadline: %d of %d rounds" % (rnd, rounds))
            break
        for name, make, _ in rows:
            r = measure_row(template, make, data, rnd, name, results)
            if name.startswith("TRL") and not trl_peak[0] and "ms" in r:
                trl_peak[0] = int(r["peak"] * GB)
        for name, _, kind in rows:
            st = results[name][-1].get("st") or {}
            out = st.get("offloaded_bytes", 0)
            back = st.get("restored_bytes", 0)
            if kind and (out or back):
                measure_row(template, lambda m, inner=base[kind], out=out,
                            back=back: CopiesAlone(
                                inner(m), out, back, m.model.layers[0]),
                            data, rnd, name + ALONE, results)
        print("-- %s, after round %d of %d:" % (size, rnd + 1, rounds))
        report(rows, results, bw, trl_peak[0], size)
    del template
    release()


def exact(size, trl):
    """Each configuration's losses bit for bit against no offload's, with
    deterministic algorithms (see the module's docstring)."""
    _, hidden, _, _, batch, seq = SIZES[size]
    data = batches(size)
    template = make_model(size, attn="eager")
    print("\n== %s, deterministic, %s attention: %d layers, hidden %d, "
          "batch %d, sequence %d ==" % (
              size, template.config._attn_implementation, SIZES[size][0],
              hidden, batch, seq), flush=True)
    trl_peak = [0]
    ref, same = None, 0
    rows = configs(trl, trl_peak)
    print("| %-48s | %-40s |" % ("engine", "losses of %d steps" % STEPS))
    print("| --- | --- |")
    for name, make, _ in rows:
        try:
            r = measure(template, make, data)
        except Exception as exc:  # noqa: BLE001 - reported in the table
            release()
            print("| %-48s | failed: %s |" % (name, repr(exc)[:80]))
            continue
        if name.startswith("TRL") and not trl_peak[0]:
            trl_peak[0] = int(r["peak"] * GB)
        if ref is None:
            ref = r["losses"]
            print("| %-48s | the reference |" % name, flush=True)
            continue
        bad = [i for i, (a, b) in enumerate(zip(r["losses"], ref))
               if a != b]
        same += not bad
        print("| %-48s | %-40s |" % (
            name, "bit-identical" if not bad else
            "differ from step %d, at most %.2e" % (
                bad[0] + 1, max(abs(a - b)
                                for a, b in zip(r["losses"], ref)))),
              flush=True)
    print("%s: %d of %d rows bit-identical to no offload's losses" % (
        size, same, len(rows) - 1))
    del template
    release()


def checkpointing(size, trl):
    """The engines under HF gradient checkpointing, reentrant and not (see
    the module's docstring)."""
    data = batches(size)
    vt_ctx = vt.get_act_offloading_ctx_manager
    for reentrant in (True, False):
        template = make_model(size)
        template.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs={"use_reentrant": reentrant})
        print("\n== %s, gradient checkpointing, use_reentrant=%s ==" % (
            size, reentrant))
        print("| %-36s | %7s | %7s | %8s | %6s | %9s |" % (
            "engine", "ms/step", "peak GB", "out GB", "learn", "max dloss"))
        print("| --- | --- | --- | --- | --- | --- |")
        rows = [("no offload", lambda m: NoCtx())]
        if trl is not None:
            rows.append(("TRL get_act_offloading_ctx_manager",
                         lambda m: trl.get_act_offloading_ctx_manager(m)))
        rows.append(("vramtrace defaults", lambda m: vt_ctx(m)))
        ref, peak = None, [0]
        if trl is not None:
            rows.append(("vramtrace max_memory=TRL's peak",
                         lambda m: vt_ctx(m, max_memory=limit(peak[0]))))
        for name, make in rows:
            r = measure(template, make, data)
            if name.startswith("TRL"):
                peak[0] = int(r["peak"] * GB)
            ref = ref or r["losses"]
            st = r["st"]
            print("| %-36s | %7.1f | %7.2f | %8s | %6s | %9.2e |" % (
                name, r["ms"], r["peak"],
                "%.2f" % (st["offloaded_bytes"] / GB) if st else "-",
                st.get("learned", "-"),
                max(abs(a - b) for a, b in zip(r["losses"], ref))),
                flush=True)
        del template
        release()


def cost(kib=16):
    """Per-tensor cost of the hooks (see the module's docstring)."""
    elems = kib * 256
    n = max(10, min(2000, (2 << 30) // (elems * 4)))
    trl = load_trl()
    x0 = torch.randn(elems, device="cuda", requires_grad=True)

    def chain():
        y = x0
        for _ in range(n):
            y = torch.exp(y * 1e-6)     # mul saves a scalar; exp its output
        return y.sum()

    def timed(make):
        """Best of 5: forward and backward, synced, then CPU only; and
        the learning steps among the 5 (vramtrace's)."""
        best = [float("inf")] * 4
        ctx = make()
        learnt = getattr(ctx, "stats", dict)().get("learning_steps", 0)
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with ctx:
                loss = chain()
                t1 = time.perf_counter()
                torch.cuda.synchronize()
                t2 = time.perf_counter()
                loss.backward()
                t3 = time.perf_counter()
            torch.cuda.synchronize()
            t4 = time.perf_counter()
            best = [min(b, t) for b, t in zip(best, (t2 - t0, t4 - t2,
                                                     t1 - t0, t3 - t2))]
        stats = getattr(ctx, "stats", None)
        learnt = stats()["learning_steps"] - learnt if stats else "-"
        del ctx
        release()
        return best, learnt

    rows = [("no hooks", contextlib.nullcontext),
            ("identity hooks (Python)", lambda: torch.autograd.graph.
             saved_tensors_hooks(lambda t: t, lambda t: t))]
    if trl is not None:
        rows.append(("TRL OffloadActivations", trl.OffloadActivations))
    rows.append(("vramtrace, Python hooks over ctypes",
                 lambda: vt.OffloadActivations(extension=False)))
    rows.append(("vramtrace, extension", vt.OffloadActivations))
    # Where the cost goes: describing the tensor and asking the engine,
    # without the copies (every tensor kept: below min_offload_size).
    rows.append(("vramtrace, extension, nothing copied",
                 lambda: vt.OffloadActivations(min_offload_size=1 << 40)))
    base = None
    print("per-tensor cost: a chain of %d exp() on %d KiB tensors; best of "
          "5; us per saved tensor over no hooks (cpu: until the call "
          "returned, no sync)" % (n, kib))
    print("| %-36s | %9s | %9s | %9s | %9s | %9s | %9s | %5s |" % (
        "hooks", "fwd ms", "bwd ms", "pack us", "unpack us", "pack cpu",
        "unpk cpu", "learn"))
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, make in rows:
        t, learnt = timed(make)
        if base is None:
            base = t
        print("| %-36s | %9.2f | %9.2f | %9.1f | %9.1f | %9.1f | %9.1f | "
              "%5s |" % ((name, t[0] * 1e3, t[1] * 1e3) +
                         tuple((t[i] - base[i]) / n * 1e6 for i in range(4))
                         + (learnt,)))


def parts():
    """Per-call cost of what the hooks read of a tensor (see the module's
    docstring)."""
    import timeit
    from torch.multiprocessing.reductions import StorageWeakRef
    lin = torch.nn.Linear(1024, 1024, device="cuda")
    x = torch.randn(8, 1024, device="cuda", requires_grad=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        t = lin(x)
    st = t.untyped_storage()
    fn = t.grad_fn
    index = torch.cuda.current_device()
    raw = torch._C._cuda_getCurrentRawStream
    stats = torch._C._cuda_memoryStats
    ctx = vt.OffloadActivations(min_offload_size=1 << 40)
    for _ in range(3):      # past the learning steps
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                y = lin(x)
            y.float().sum().backward()
    print("learning steps: %s" % ctx.stats().get("learning_steps"))
    weak = []

    def pack_unpack():
        ctx._hooks.unpack(ctx._hooks.pack(t))

    calls = [
        ("t.is_cuda", lambda: t.is_cuda),
        ("t.layout", lambda: t.layout),
        ("t.nbytes", lambda: t.nbytes),
        ("t.untyped_storage()", lambda: t.untyped_storage()),
        ("storage.data_ptr()", lambda: st.data_ptr()),
        ("storage.nbytes()", lambda: st.nbytes()),
        ("storage._cdata", lambda: st._cdata),
        ("t.element_size()", lambda: t.element_size()),
        ("t.storage_offset()", lambda: t.storage_offset()),
        ("t.shape", lambda: t.shape),
        ("t.stride()", lambda: t.stride()),
        ("t.dtype", lambda: t.dtype),
        ("t.is_leaf", lambda: t.is_leaf),
        ("t.requires_grad", lambda: t.requires_grad),
        ("t.grad_fn", lambda: t.grad_fn),
        ("grad_fn.next_functions", lambda: fn.next_functions),
        ("t.data_ptr()", lambda: t.data_ptr()),
        ("raw stream", lambda: raw(index)),
        ("memory stats", lambda: stats(index)),
        ("StorageWeakRef(storage) and its end",
         lambda: StorageWeakRef(st)),
        ("storage._weak_ref() and its end",
         lambda: weak.append(st._weak_ref()) or
         torch.UntypedStorage._free_weak_ref(weak.pop())),
        ("pack + unpack of a kept tensor", pack_unpack),
    ]
    print("what the hooks read of a tensor: us per call, best of 5 loops "
          "of 20000")
    print("| %-36s | %8s |" % ("call", "us"))
    print("| --- | --- |")
    for name, f in calls:
        with ctx if f is pack_unpack else contextlib.nullcontext():
            best = min(timeit.repeat(f, number=20000, repeat=5)) / 20000
        print("| %-36s | %8.3f |" % (name, best * 1e6))


def contention():
    """The CPU's time while copies run beside it (see the module's
    docstring)."""
    n = 1 << 30
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    host.fill_(1)
    out, back = torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.zeros(16, device="cuda")
    y = torch.zeros(1024, 1024, device="cuda", dtype=torch.bfloat16)

    def per_call(f, calls):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        return (time.perf_counter() - t0) / calls

    def python():
        s, d = 0, {}
        for i in range(1000):
            s += i
            d[i & 127] = s

    def ops():
        (y @ y * 2).t().contiguous()

    def load(kind):
        for _ in range(4):
            for stream, dst, src, k in ((out, host, dev, "d2h"),
                                        (back, dev, host, "h2d")):
                if kind in (k, "both"):
                    with torch.cuda.stream(stream):
                        dst.copy_(src, non_blocking=True)

    kinds = ("none", "d2h", "h2d", "both")
    res = {k: [] for k in kinds}
    for _ in range(5):
        for kind in kinds:
            torch.cuda.synchronize()
            load(kind)
            r = (per_call(lambda: x.add_(1), 2000) * 1e6,
                 per_call(ops, 200) * 1e6,
                 per_call(python, 200) * 1e6)
            running = not (out.query() and back.query())
            torch.cuda.synchronize()
            res[kind].append(r + (running,))
    print("CPU time while 4 GiB copies run on side streams (median of 5 "
          "rounds; pinned host memory)")
    print("| %-5s | %9s | %9s | %9s | %s |" % (
        "copy", "launch us", "ops us", "py ns/it", "copies outlasted it"))
    print("| --- | --- | --- | --- | --- |")
    for kind in kinds:
        rs = res[kind]
        print("| %-5s | %9.2f | %9.2f | %9.1f | %s |" % (
            kind, statistics.median(r[0] for r in rs),
            statistics.median(r[1] for r in rs),
            statistics.median(r[2] for r in rs),
            "-" if kind == "none" else "%d of 5" % sum(r[3] for r in rs)))


def main():
    print("device: %s, torch %s" % (torch.cuda.get_device_name(),
                                     torch.__version__))
    mode = sys.argv[1] if len(sys.argv) > 1 else "table"
    if mode == "contention":
        contention()
        return
    if mode == "cost":
        cost(int(sys.argv[2]) if len(sys.argv) > 2 else 16)
        return
    if mode == "parts":
        parts()
        return
    if mode == "checkpointing":
        trl = load_trl()
        which = sys.argv[2] if len(sys.argv) > 2 else "both"
        for size in ("small", "big") if which == "both" else (which,):
            checkpointing(size, trl)
        return
    if mode == "exact":
        # cuBLAS reads it when it makes its first handle, after this.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        trl = load_trl()
        which = sys.argv[2] if len(sys.argv) > 2 else "both"
        for size in ("small", "big") if which == "both" else (which,):
            exact(size, trl)
        return
    rounds = sys.argv[2] if len(sys.argv) > 2 else "3"
    which = sys.argv[3] if len(sys.argv) > 3 else "both"
    # Rounds per size: one number, or BIG,SMALL; no round starts after
    # $VRAMTRACE_BENCH_DEADLINE seconds (beyond the first).
    big, _, small = rounds.partition(",")
    nrounds = {"big": int(big), "small": int(small or big)}
    deadline = time.time() + float(os.environ.get(
        "VRAMTRACE_BENCH_DEADLINE", "1e9"))
    trl = load_trl()
    if trl is None:
        print("TRL's engine not found: set VRAMTRACE_TRL_REF")
    bw = bandwidth()
    print("pinned copies: device-to-host %.1f GB/s, host-to-device %.1f "
          "GB/s" % tuple(bw))
    for size in ("small", "big") if which == "both" else (which,):
        table(size, nrounds[size], trl, bw, deadline, mode == "varlen")


if __name__ == "__main__":
    main()
