"""The offload check on bench/offload's transformer made small (4 layers,
d=512, batch 4, seq 256; bf16 autocast, AdamW), STEPS steps per engine, a
fresh random batch each step and a 30 ms GPU sleep before each forward,
so that compute runs behind the host as in real training.  The pack
sites are lines of bench/offload/bench.py.

    train.py table TRL.py     every engine of engines.py, save_on_cpu,
                              vramtrace's and TRL's (the reference file
                              TRL.py), each inside check_offload(): prints
                              a row per engine, exits 1 unless the correct
                              ones are never flagged and the seeded ones
                              are flagged exactly where the ground truth
                              says (same steps, same pack sites)
    train.py one ENGINE N [TRL.py]
                              N steps of one engine, no checker of its own
                              (for `vramtrace record`, with or without
                              --check-offload); its last line is the
                              ground truth: "truth: " and a JSON list of
                              [step, pack site, count], or "truth: null"
                              for an engine without one (db.py reads it)
"""
import json
import collections
import gc
import os
import sys
import time

import torch

import vramtrace
import vramtrace.torch as vt
import engines
from engines import bench

bench.LAYERS, bench.D, bench.HEADS, bench.BATCH, bench.SEQ = 4, 512, 8, 4, 256
STEPS = 24
SLEEP_MS = 30


def make(name, trl=None):
    if name == "save_on_cpu":
        return torch.autograd.graph.save_on_cpu(pin_memory=True)
    if name == "vramtrace":
        return vt.OffloadActivations()
    if name == "trl":
        return engines.trl_engine(trl)
    if name == "hand-written":
        return engines.Engine()
    return engines.Engine(name, oracle=name == "wrong-stream")


def train(ctx, steps):
    """steps steps under ctx; returns the oracle's corrupt (step, site)
    counts when ctx has an oracle, and the median step time (ms)."""
    torch.manual_seed(0)
    model = bench.Model().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    cycles = int(SLEEP_MS * 1e-3 * 1.4e9)
    corrupt = collections.Counter()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        x = torch.randn(bench.BATCH, bench.SEQ, bench.D, device="cuda")
        torch.cuda._sleep(cycles)
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        vramtrace.step()
        if getattr(ctx, "oracle", False):
            corrupt += ctx.corrupt()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    times.sort()
    return corrupt, times[len(times) // 2] * 1e3


def short(site):
    return site.replace(os.path.dirname(engines.MODEL_FILE) + "/", "")


EXPECT = {"save_on_cpu": "clean", "vramtrace": "clean", "trl": "clean",
          "hand-written": "clean", "pageable": "clean",
          "no-clear": "clean (leaks: see record)",
          "stale-key": "flagged", "wrong-stream": "flagged"}


def table(trl):
    fmt = "%-13s %-44s %5s %7s %7s %7s %-9s %-24s %7s %s"
    print(fmt % ("engine", "class the checker saw", "steps", "packs",
                 "checked", "flagged", "truth", "first flagged site",
                 "ms/step", "verdict"))
    ok = True
    for name in EXPECT:
        ctx = make(name, trl)
        with vt.check_offload() as chk:
            corrupt, ms = train(ctx, STEPS)
        flagged = collections.Counter((d.step, d.site) for d in chk.diffs)
        truth = getattr(ctx, "stale", collections.Counter()) + corrupt
        known = hasattr(ctx, "stale")
        if EXPECT[name] == "flagged":
            good = bool(flagged) and flagged == truth
        else:
            good = not flagged and (not known or not truth) and \
                chk.checked > 0
        ok &= good
        first = short(min(chk.diffs, key=lambda d: (d.step, d.index)).site) \
            if chk.diffs else "-"
        print(fmt % (name, ",".join(chk.engines) or "-", STEPS,
                     sum(chk.engines.values()), chk.checked,
                     sum(flagged.values()),
                     sum(truth.values()) if known else "n/a", first,
                     "%.1f" % ms, "PASS" if good else "FAIL"))
        if chk.diffs:
            d = chk.diffs[0]
            print("    e.g. step %d #%d %s %s: %s; unpacked by %s"
                  % (d.step, d.index, d.shape, d.dtype, d.detail,
                     d.unpack_site.split("\t", 1)[0] or "?"))
        if flagged != truth and known:
            print("    flagged but not in truth: %s"
                  % dict(flagged - truth))
            print("    in truth but not flagged: %s"
                  % dict(truth - flagged))
        del ctx
        gc.collect()
        torch.cuda.empty_cache()
    return ok


def main():
    print("device: %s, torch %s" % (torch.cuda.get_device_name(),
                                     torch.__version__))
    if sys.argv[1] == "table":
        sys.exit(0 if table(sys.argv[2]) else 1)
    name, steps = sys.argv[2], int(sys.argv[3])
    ctx = make(name, sys.argv[4] if len(sys.argv) > 4 else None)
    corrupt, ms = train(ctx, steps)
    print("%s: %d steps, median %.1f ms" % (name, steps, ms))
    truth = None
    if hasattr(ctx, "stale"):
        truth = [[step, site, n] for (step, site), n
                 in sorted((ctx.stale + corrupt).items())]
    print("truth: %s" % json.dumps(truth))


if __name__ == "__main__":
    main()
