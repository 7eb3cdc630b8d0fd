"""GPU tests of the offload engine: each invariant with it on (must pass)
and switched off through the engine's test-only breaks (must fail);
gradients equal to no offload, through the extension and through the
Python hooks; TRL's drop-in on HF Llama (output head kept, PEFT), a
backward after the context, recompute, max_memory.  Prints a table; exit
status 0 when every row came out as expected."""

import copy
import sys
import traceback

import torch
import torch.nn.functional as F

from vramtrace.torch import (NoOpManager, OffloadActivations,
                             get_act_offloading_ctx_manager)

DEV = "cuda"


class Toy(torch.nn.Module):
    """Saves every kind of tensor the engine must handle: plain, views,
    transposes, a narrow slice of a wide storage, broadcast (stride 0),
    two views sharing one storage, the same tensor saved twice, small
    tensors and parameters."""

    def __init__(self, d=256):
        super().__init__()
        self.a = torch.nn.Linear(d, 2 * d)
        self.b = torch.nn.Linear(d, d)
        self.scale = torch.nn.Parameter(torch.randn(d))

    def forward(self, x):
        h = self.a(x)                          # saves x, weight (param)
        u, v = h.chunk(2, dim=-1)              # views sharing h's storage
        g = u * torch.sigmoid(v)               # saves u, v views
        t = g.transpose(0, 1)                  # non-contiguous
        m = torch.sin(t) * torch.cos(t)        # t saved twice: dedupe
        m = m.transpose(0, 1)
        s = (self.scale * 2).expand_as(m)      # broadcast, stride 0
        m = m * s                              # saves s (stride 0) and m
        narrow = h[:, :8]                      # span >> tensor: compact
        m = m + (narrow * narrow).sum(-1, keepdim=True)
        small = m[:2, :4] * m[:2, :4]          # small: kept
        y = self.b(m * m)                      # m saved twice
        return y.mean() + small.mean()         # sums overflow by step 3


def run_steps(model, ctx, steps=3, autocast=False, x_seed=0):
    grads = []
    for step in range(steps):
        torch.manual_seed(x_seed + step)
        x = torch.randn(512, 256, device=DEV)
        model.zero_grad(set_to_none=True)
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16,
                                enabled=autocast):
                loss = model(x)
            loss.backward()
        grads.append([p.grad.detach().clone() for p in model.parameters()])
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
    return grads


def same(ga, gb, rel):
    """Whether every gradient of ga matches gb's: equal (rel 0) or within
    rel in norm.  A NaN or infinity never matches (NaN != NaN made a
    model that overflowed look like an offload bug)."""
    for sa, sb in zip(ga, gb):
        for a, b in zip(sa, sb):
            assert a.isfinite().all() and b.isfinite().all(), \
                "gradients not finite"
            if rel == 0:
                if not torch.equal(a, b):
                    return False
            else:
                err = (a.float() - b.float()).norm() / b.float().norm()
                if err > rel:
                    return False
    return True


class NoCtx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_gradients(breaks, autocast, extension=True):
    torch.manual_seed(1)
    ref = Toy().to(DEV)
    off = copy.deepcopy(ref)
    ga = run_steps(ref, NoCtx(), autocast=autocast)
    ctx = OffloadActivations(min_offload_size=1024, max_fwd_stash_size=2,
                             breaks=breaks, extension=extension)
    assert ctx.extension == extension, "extension %s" % ctx.extension
    gb = run_steps(off, ctx, autocast=autocast)
    s = ctx.stats()
    assert same(gb, ga, 1e-2 if autocast else 0), "gradients differ"
    assert s["offloads"] > 0 and s["dedupe_hits"] > 0 and s["kept"] > 0, s
    # Autocast's weight casts are made again in backward, not kept.
    assert (s["recomputed"] > 0) == autocast, \
        "%d casts made again" % s["recomputed"]
    return "offloads %d dedupe %d kept %d casts made again %d" % (
        s["offloads"] // s["step"], s["dedupe_hits"] // s["step"],
        s["kept"] // s["step"], s["recomputed"] // s["step"])


def test_dedupe_generation(breaks):
    """Invariant 1: an address the allocator reuses is never taken for
    the dead tensor that had it (the offload is not skipped)."""
    n = 1 << 20
    torch.manual_seed(2)
    x = torch.randn(n, device=DEV, requires_grad=True)

    def body(ctx):
        x.grad = None
        reused = False
        with ctx:
            a = x * 2
            pa = a.data_ptr()
            ya = a.sin()                # pack a
            z = x * 3
            yz = z.cos()                # pack z: reaps a (stash 1)
            del a                       # a's storage goes back
            b = x * 4                   # the allocator reuses it
            reused = b.data_ptr() == pa
            yb = b.sin()                # same key as a, new generation
            del b
            (ya.sum() + yz.sum() + yb.sum()).backward()
        return x.grad.clone(), reused

    ref, _ = body(NoCtx())
    ctx = OffloadActivations(max_fwd_stash_size=1, breaks=breaks)
    got, reused = body(ctx)
    s = ctx.stats()
    assert reused, "the allocator did not reuse the address: inconclusive"
    assert s["offloads"] == 3, "offloads %d of 3" % s["offloads"]
    assert torch.equal(got, ref), "gradients differ"
    return "address reused; 3 of 3 offloaded"


def test_written_in_place(breaks):
    """A tensor written in place after autograd saved it: refused at unpack
    where what comes back would be the written bytes (kept on the GPU, or
    its source still held), as autograd refuses it without hooks; saved
    again after its copy was taken, a copy of its own and the gradient of
    what forward computed."""
    del breaks
    n = 1 << 20
    torch.manual_seed(4)
    x = torch.randn(n, device=DEV, requires_grad=True)
    refused = []
    for size in (16, n):
        ctx = OffloadActivations(min_offload_size=1024)
        try:
            with ctx:
                y = x[:size] * 2
                z = y.sin()             # saves y: kept, or its source held
                y.add_(1)
                z.sum().backward()
        except RuntimeError as exc:
            refused.append("written in place" in str(exc))
        else:
            refused.append(False)
    assert refused == [True, True], "refused (kept, held): %s" % refused
    x.grad = None
    ref = torch.autograd.grad((x * 2).sin().sum() + (x * 3).cos().sum() +
                              (x * 2 + 1).cos().sum(), x)[0]
    ctx = OffloadActivations(min_offload_size=1024, max_fwd_stash_size=1)
    with ctx:
        y = x * 2
        s1 = y.sin()                    # saves y
        s2 = (x * 3).cos()              # lets y go once its copy is done
        y.add_(1)
        s3 = y.cos()                    # y again: other bytes, same key
        (s1.sum() + s2.sum() + s3.sum()).backward()
    s = ctx.stats()
    assert torch.allclose(x.grad, ref, rtol=1e-5, atol=1e-6), \
        "gradient of the bytes before the write, largest error %.3g" % (
            (x.grad - ref).abs().max())
    assert s["offloads"] == 3 and s["dedupe_hits"] == 0, s
    return "kept and held: refused; saved again after the write: " \
        "%d copies, %d hits" % (s["offloads"], s["dedupe_hits"])


def test_exit_raise(breaks):
    """Invariant 2a: leaving the context empties every stash and syncs,
    even when the body raised; the hooks are gone afterwards."""
    torch.manual_seed(3)
    model = Toy().to(DEV)
    ctx = OffloadActivations(breaks=breaks)
    x = torch.randn(512, 256, device=DEV)
    try:
        with ctx:
            model(x)
            raise KeyError("boom")
    except KeyError:
        pass
    s = ctx.stats()
    # Copies that finished during forward may already have been reaped, so
    # empty stashes alone do not show that leaving ran: it must also have
    # synchronized the copy streams, once.
    assert s["exit_syncs"] == 1, "leaving synced %d times" % s["exit_syncs"]
    assert s["fwd_stash"] == 0 and s["bwd_stash"] == 0, \
        "stash not empty: fwd %d bwd %d" % (s["fwd_stash"], s["bwd_stash"])
    held = ctx._hooks.held()
    assert not held, "%d GPU tensors still held" % len(held)
    packs = s["packs"]
    model(x).backward()
    assert ctx.stats()["packs"] == packs, "hooks still installed"
    return "stashes empty, %d exit syncs" % s["exit_syncs"]


def test_enter_drops(breaks):
    """Invariant 2b: state left by a forward whose backward never ran is
    dropped on the next enter; memory does not grow."""
    torch.manual_seed(4)
    model = Toy().to(DEV)
    ctx = OffloadActivations(breaks=breaks)
    x = torch.randn(512, 256, device=DEV)
    mem = []
    for _ in range(4):
        with ctx:
            live = ctx.stats()["live_entries"]
            assert live == 0, "%d entries left from the last step" % live
            y = model(x)
        del y
        torch.cuda.synchronize()
        mem.append(torch.cuda.memory_allocated())
    assert mem[-1] <= mem[0], "GPU memory grew: %s" % mem
    return "0 entries at each enter; %d dropped" % \
        ctx.stats()["dropped_entries"]


def test_stream_wait(breaks):
    """Invariant 3: the copy stream waits for the compute stream (a
    tensor still being computed is not copied early), the compute stream
    waits for the copy back, and no stream ever waits on itself."""
    n = 1 << 22
    torch.manual_seed(5)
    x = torch.randn(n, device=DEV, requires_grad=True)

    def body(ctx):
        x.grad = None
        with ctx:
            junk = torch.full((n,), 7.0, device=DEV)
            del junk                    # a's block holds 7s
            torch.cuda._sleep(200_000_000)   # the compute stream is busy
            a = x * 2                   # reuses junk's block
            ya = a.sin()                # pack a while it is not yet written
            del a
            z = x * 3
            yz = z.cos()                # reaps a
            (ya.sum() + yz.sum()).backward()
        return x.grad.clone()

    ref = body(NoCtx())
    ctx = OffloadActivations(max_fwd_stash_size=1, breaks=breaks)
    got = body(ctx)
    torch.manual_seed(6)
    model = Toy().to(DEV)
    run_steps(model, ctx)
    s = ctx.stats()
    assert s["self_waits"] == 0, "%d waits of a stream on itself" % \
        s["self_waits"]
    assert torch.equal(got, ref), "gradients differ"
    return "0 self-waits over %d copies" % (s["offloads"] + s["prefetches"])


def test_slab(breaks):
    """Invariant 4: pinned memory is allocated once; no pinned allocation
    after the first step, with a set slab and with an auto-sized one."""
    torch.manual_seed(7)
    model = Toy().to(DEV)
    out = []
    for slab in (64 << 20, None):
        ctx = OffloadActivations(slab_bytes=slab, breaks=breaks)
        run_steps(model, ctx, steps=1)
        first = ctx.stats()["host_allocs"]
        run_steps(model, ctx, steps=4)
        s = ctx.stats()
        extra = s["host_allocs"] - first
        allowed = 0 if slab else 1      # auto: the slab, on step 2
        assert extra <= allowed, \
            "%d pinned allocations after step 1" % extra
        if slab:
            assert s["pool_fallbacks"] == 0, "slab fell back"
        out.append("%s: %d" % ("set" if slab else "auto", s["host_allocs"]))
    return "pinned allocations " + ", ".join(out)


def test_noop(breaks):
    """NoOpManager keeps a region on the GPU inside the context."""
    torch.manual_seed(8)
    model = Toy().to(DEV)
    ctx = OffloadActivations(breaks=breaks)
    x = torch.randn(512, 256, device=DEV)
    with ctx:
        with NoOpManager():
            loss = model(x)
        loss.backward()
    s = ctx.stats()
    assert s["packs"] == 0, "%d packs under NoOpManager" % s["packs"]
    return "0 packs"


def tiny_llama(layers=2, hidden=256, inter=512, seed=11):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=1000, hidden_size=hidden,
                      intermediate_size=inter, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=4,
                      max_position_embeddings=1024, use_cache=False,
                      tie_word_embeddings=False)
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg).to(DEV)


def llama_steps(model, ctx, steps=3, autocast=False, outside=False,
                batch=4, seq=128, lr=1e-3, each=None, keep=True):
    """steps steps of batches of seq tokens (a list: step i's length is
    seq[i]); backward inside the context, or after it (outside); returns
    the trainable parameters' gradients of each step (with keep; without,
    nothing is held from one step to the next, as in a training loop, and
    the list is empty)."""
    params = [p for p in model.parameters() if p.requires_grad]
    grads = []
    for step in range(steps):
        torch.manual_seed(100 + step)
        n = seq[step] if isinstance(seq, list) else seq
        ids = torch.randint(0, model.config.vocab_size, (batch, n),
                            device=DEV)
        model.zero_grad(set_to_none=True)
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16,
                                enabled=autocast):
                loss = model(input_ids=ids, labels=ids).loss
            if not outside:
                loss.backward()
        if outside:
            loss.backward()
        if keep:
            grads.append([p.grad.detach().clone() for p in params])
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
        if each is not None:
            each(step)
    return grads


def close(ga, gb):
    """fp32 gradients: bit-identical, or within 1e-5 where a kernel of the
    model (attention, embedding backward) is not deterministic; returns
    how they matched, or None."""
    if same(gb, ga, 0):
        return "bit-identical"
    return "within 1e-5" if same(gb, ga, 1e-5) else None


def test_trl_dropin(breaks):
    """get_act_offloading_ctx_manager on HF Llama: the output head's
    saved tensors stay (no pack while it runs), the rest is offloaded,
    gradients are those of no offload."""
    ref = tiny_llama()
    off = copy.deepcopy(ref)
    ga = llama_steps(ref, NoCtx())
    ctx = get_act_offloading_ctx_manager(off, breaks=breaks)
    assert ctx.output_head is off.lm_head, "head %r" % ctx.output_head
    inside = []
    off.lm_head.register_forward_pre_hook(
        lambda *a: inside.append(ctx.stats().get("packs", 0)))
    off.lm_head.register_forward_hook(
        lambda *a: inside.append(ctx.stats().get("packs", 0)))
    gb = llama_steps(off, ctx)
    s = ctx.stats()
    head_packs = sum(b - a for a, b in zip(inside[::2], inside[1::2]))
    assert head_packs == 0, "%d packs inside lm_head" % head_packs
    assert s["offloads"] > 0, s
    how = close(ga, gb)
    assert how, "gradients differ"
    return "0 packs in lm_head, %d offloads a step, %s" % (
        s["offloads"] // s["step"], how)


def test_peft(breaks):
    """A PEFT (LoRA) model: the head is found through base_model; the
    adapters' gradients are those of no offload."""
    from peft import LoraConfig, get_peft_model

    def make():
        m = tiny_llama()
        torch.manual_seed(12)
        return get_peft_model(m, LoraConfig(r=8, lora_alpha=16,
                                            target_modules=["q_proj",
                                                            "v_proj"]))
    ref, off = make(), make()
    ga = llama_steps(ref, NoCtx())
    ctx = get_act_offloading_ctx_manager(off, breaks=breaks)
    head = off.base_model.model.lm_head
    assert ctx.output_head is head, "head %r" % ctx.output_head
    gb = llama_steps(off, ctx)
    assert ctx.stats()["offloads"] > 0
    how = close(ga, gb)
    assert how, "gradients differ"
    return "head found, %d trainable tensors %s" % (len(ga[0]), how)


def test_backward_outside(breaks, extension=True):
    """Backward after the context (TRL's documented use): gradients of no
    offload, tensors brought back ahead (prefetches beyond the ones
    unpacked on demand), nothing held once backward ended."""
    ref = tiny_llama()
    off = copy.deepcopy(ref)
    ga = llama_steps(ref, NoCtx(), outside=True)
    ctx = get_act_offloading_ctx_manager(off, breaks=breaks,
                                         extension=extension)
    held = []
    gb = llama_steps(off, ctx, steps=4, outside=True,
                     each=lambda step: held.append(len(ctx._hooks.held())))
    s = ctx.stats()
    how = close(ga, gb[:3])
    assert how, "gradients differ"
    assert s["prefetches"] > s["bwd_waits"], s
    assert max(held) == 0, "held after backward: %s" % held
    return "%s; %d prefetches, %d on demand, nothing held" % (
        how, s["prefetches"], s["bwd_waits"])


def test_recompute(breaks):
    """recompute=True: selective checkpointing of the layers, its saved
    tensors offloaded; gradients of no offload, fewer bytes copied."""
    ref = tiny_llama()
    off = copy.deepcopy(ref)
    plain = copy.deepcopy(ref)
    ga = llama_steps(ref, NoCtx())
    ctx0 = get_act_offloading_ctx_manager(plain)
    llama_steps(plain, ctx0)
    ctx = get_act_offloading_ctx_manager(off, recompute=True, breaks=breaks)
    assert ctx.recomputed_blocks == 2, ctx.recomputed_blocks
    gb = llama_steps(off, ctx)
    s, s0 = ctx.stats(), ctx0.stats()
    how = close(ga, gb)
    assert how, "gradients differ"
    assert 0 < s["offloaded_bytes"] < s0["offloaded_bytes"], (s, s0)
    return "%s; %.1f MB copied out a step against %.1f" % (
        how,
        s["offloaded_bytes"] / s["step"] / 1e6,
        s0["offloaded_bytes"] / s0["step"] / 1e6)


def test_max_memory(breaks):
    """max_memory halfway between the peak offloading everything and the
    peak of no offload: the steady steps stay under it and copy less
    than offloading everything.  The loop keeps no gradients: memory at
    enter stays the same from step to step, as in training (kept, it grew
    by the gradients' 57 MB a step).  A spike over max_memory between
    steps (an optimizer's temporaries) is not the steps' and does not
    lower the plan (by an eighth of max_memory, had it counted; it may
    leave it higher: a spike above the steps' peaks hides them)."""
    def peak(ctx, steps=6, spike=0):
        """The steady steps' peak (from step 3; the caller's reset of the
        peak after each step hides nothing from the binding), each step's,
        and the bytes copied out a steady step."""
        m = tiny_llama(layers=4, hidden=512, inter=1408)
        marks, peaks = [], []
        stats = getattr(ctx, "stats", dict)

        def each(step):
            torch.cuda.synchronize()
            peaks.append(torch.cuda.max_memory_allocated())
            torch.cuda.reset_peak_memory_stats()
            if step == 2:
                marks.append(stats().get("offloaded_bytes", 0))
            if spike:
                torch.empty(spike, dtype=torch.uint8, device=DEV)
        llama_steps(m, ctx, steps=steps, autocast=True, batch=8, seq=512,
                    each=each, keep=False)
        out = stats().get("offloaded_bytes", 0) - marks[0]
        return max(peaks[3:]), peaks, out / (steps - 3)

    none, _, _ = peak(NoCtx())
    every, _, out_all = peak(OffloadActivations(breaks=breaks))
    limit = (none + every) // 2
    ctx = OffloadActivations(max_memory=limit, breaks=breaks)
    got, steps, out = peak(ctx)
    s = ctx.stats()
    over = " ".join("%+.1f" % ((p - limit) / 1e6) for p in steps)
    assert got <= limit, "peak %.3f GB over %.3f GB (MB over, each step: " \
        "%s)" % (got / 1e9, limit / 1e9, over)
    assert 0 < out < out_all, "copied %.0f of %.0f" % (out, out_all)
    assert s["idle_steps"] == 0, "%d idle steps" % s["idle_steps"]
    spiked = OffloadActivations(max_memory=limit, breaks=breaks)
    peak(spiked, spike=limit)
    moved = s["predicted_peak"] - spiked.stats()["predicted_peak"]
    assert moved < limit // 16, \
        "a spike between steps moved the plan by %.0f MB" % (moved / 1e6)
    return ("limit %.3f GB: peak %.3f (predicted %.3f, %.0f MB lower with "
            "spikes; MB over, each step: %s; %d learning), %.0f of %.0f MB "
            "out" % (
                limit / 1e9, got / 1e9, s["predicted_peak"] / 1e9,
                moved / 1e6, over, s["learning_steps"], out / 1e6,
                out_all / 1e6))


def test_idle(breaks, recompute=False):
    """max_memory with room for everything (90% of the device): after the
    learning step, steps run without the hooks (no pack at all), bf16
    autocast and backward after the context included; gradients are those
    of no offload."""
    ref = tiny_llama()
    off = copy.deepcopy(ref)
    ga = llama_steps(ref, NoCtx(), steps=5, autocast=True, outside=True)
    ctx = get_act_offloading_ctx_manager(off, breaks=breaks, max_memory=0.9,
                                         recompute=recompute)
    packs = []
    gb = llama_steps(off, ctx, steps=5, autocast=True, outside=True,
                     each=lambda step: packs.append(ctx.stats()["packs"]))
    s = ctx.stats()
    how = close(ga, gb) or ("within 1e-2" if same(gb, ga, 1e-2) else None)
    assert how, "gradients differ"
    assert s["learning_steps"] == 1 and s["idle_steps"] == 4, s
    assert packs[0] > 0 and packs[-1] == packs[0], \
        "packs after each step: %s" % packs
    return "%s; %d packs in the learning step, none in the %d idle ones" % (
        how, packs[0], s["idle_steps"])


def test_varlen(breaks):
    """Batches of other lengths, as a trainer that pads each batch to its
    longest sequence gives them: one learning step only, the pinned slab
    grown once the longest batch came (no pinned allocation after that
    step's next enter), and gradients of no offload."""
    lens = [64, 128, 96, 128, 64, 112]
    ref = tiny_llama()
    off = copy.deepcopy(ref)
    ga = [[g.cpu() for g in step]
          for step in llama_steps(ref, NoCtx(), steps=len(lens), seq=lens)]
    ctx = get_act_offloading_ctx_manager(off, breaks=breaks)
    allocs, gb = [], []

    def each(step):
        # Gradients kept on the host: kept on the GPU, they would move
        # memory at enter past the tolerance and make a step learn.
        gb.append([p.grad.cpu() for p in off.parameters()])
        allocs.append(ctx.stats()["host_allocs"])
    llama_steps(off, ctx, steps=len(lens), seq=lens, each=each, keep=False)
    s = ctx.stats()
    how = close(ga, gb)
    assert how, "gradients differ"
    assert s["learning_steps"] == 1, "%d learning steps" % \
        s["learning_steps"]
    assert allocs[2] == allocs[-1], "pinned allocations after each step: " \
        "%s" % allocs
    return "%s; 1 learning step, pinned allocations %s" % (how, allocs)


def test_checkpointing(breaks, reentrant):
    """HF gradient checkpointing under the engine, as TRL's trainers run
    activation offloading (with gradient_checkpointing on): reentrant, the
    checkpoint saves each layer's input (packed, offloaded) and backward
    recomputes the layer with the hooks on, saving tensors for the
    backward at hand: those stay, without the engine, which sees the same
    packs as when backward runs after the context (no hooks then); not
    reentrant, the checkpoint's own hooks take the layers' tensors.
    Gradients are those of no offload with the same checkpointing; one
    learning step."""
    def model():
        m = tiny_llama()
        m.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs={"use_reentrant": reentrant})
        return m

    def run(outside):
        off = model()
        ctx = get_act_offloading_ctx_manager(off, breaks=breaks)
        grads = []

        def each(step):
            grads.append([p.grad.cpu() for p in off.parameters()])
        llama_steps(off, ctx, steps=4, autocast=True, keep=False,
                    outside=outside, each=each)
        return grads, ctx.stats()

    ga = [[g.cpu() for g in step]
          for step in llama_steps(model(), NoCtx(), steps=4, autocast=True)]
    gb, s = run(False)
    _, after = run(True)
    how = close(ga, gb) or ("within 1e-2" if same(gb, ga, 1e-2) else None)
    assert how, "gradients differ"
    assert s["offloads"] > 0, "nothing offloaded"
    assert s["learning_steps"] == 1, "%d learning steps" % \
        s["learning_steps"]
    assert s["packs"] == after["packs"], \
        "%d packs, %d with backward after the context" % (s["packs"],
                                                          after["packs"])
    return "%s; %d packs, %d offloads over 4 steps" % (how, s["packs"],
                                                     s["offloads"])

TESTS = [
    ("gradients fp32, 3 steps (bit-identical)", None,
     lambda b: test_gradients(b, False)),
    ("gradients bf16 autocast, 3 steps (1e-2)", None,
     lambda b: test_gradients(b, True)),
    ("gradients fp32, Python hooks (bit-identical)", None,
     lambda b: test_gradients(b, False, extension=False)),
    ("TRL drop-in on HF Llama: head stays", None, test_trl_dropin),
    ("TRL drop-in on a PEFT model", None, test_peft),
    ("backward after the context, prefetch", None, test_backward_outside),
    ("  the same through the Python hooks", None,
     lambda b: test_backward_outside(b, extension=False)),
    ("recompute: fewer bytes, same gradients", None, test_recompute),
    ("max_memory: steady peak within it", None, test_max_memory),
    ("batches of other lengths: learnt once", None, test_varlen),
    ("checkpointing, reentrant: layer inputs out", None,
     lambda b: test_checkpointing(b, True)),
    ("checkpointing, not reentrant", None,
     lambda b: test_checkpointing(b, False)),
    ("max_memory with room: idle steps, no hook", None, test_idle),
    ("  the same with recompute", None,
     lambda b: test_idle(b, recompute=True)),
    ("1 reused address never skips an offload", "dedupe-generation",
     test_dedupe_generation),
    ("2 exit empties stashes when body raised", "exit-cleanup",
     test_exit_raise),
    ("2 enter drops a forward without backward", "exit-cleanup",
     test_enter_drops),
    ("3 copies ordered, no self-wait", "stream-wait", test_stream_wait),
    ("4 no pinned allocation after step 1", "slab", test_slab),
    ("NoOpManager keeps a region on the GPU", None, test_noop),
    ("written in place after it was saved", None, test_written_in_place),
]


def attempt(fn, breaks):
    try:
        return True, fn(breaks)
    except Exception as exc:   # noqa: BLE001 - the table reports it
        if not isinstance(exc, AssertionError):
            traceback.print_exc()
        return False, "%s: %s" % (type(exc).__name__, exc)
    finally:
        torch.cuda.synchronize()


def main(only):
    """Every test, or those whose names contain one of only."""
    print("device: %s, torch %s" % (torch.cuda.get_device_name(),
                                     torch.__version__))
    fmt = "%-44s %-6s %-6s %s"
    print(fmt % ("test", "on", "off", "details (on / off)"))
    bad = 0
    for name, brk, fn in TESTS:
        if only and not any(o in name for o in only):
            continue
        ok_on, why_on = attempt(fn, None)
        off = "-"
        why_off = ""
        if brk is not None:
            ok_off, why_off = attempt(fn, brk)
            off = "FAIL" if not ok_off else "pass"
            bad += ok_off
        bad += not ok_on
        print(fmt % (name, "pass" if ok_on else "FAIL", off,
                     why_on + (" / " + why_off if why_off else "")))
    print("%s: %d unexpected" % ("ok" if bad == 0 else "not ok", bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
