"""The leak zoo: one small training loop per shape of memory over the steps.

usage: zoo.py SHAPE STEPS FACTS.json [--snapshot FILE [--no-history]
              [--max-entries N] [--stacks python|all]]

Each step: forward, loss, backward, then what SHAPE keeps (accum-*: four
times, MICRO), then optimizer.step() (where `vramtrace record
--torch-steps` and a snapshot's Optimizer.step annotations end the step)
and zero_grad; gan-* begin each iteration with a discriminator's own
optimizer.step(), so two steps end per iteration; amp steps through a
GradScaler.  After each optimizer.step() (amp: in its step post hook, since
GradScaler frees what it lent the optimizer after the step) it notes
torch.cuda.memory_allocated(), the number the analysis must agree with.
FACTS.json gets those numbers, what the shape does (the leaking line,
bytes kept, period, onset) and the true verdict.

--snapshot FILE: record the allocator's history from the start
(torch.cuda.memory._record_memory_history, the last --max-entries events,
default 200000, with --stacks, default python) and dump a snapshot at the
end; with --no-history, dump one without having recorded any history.

The model is a small transformer (2 layers, d 128, vocab 1024, batch 8,
64 tokens): its logits are 2 MiB, a slice of 8 tokens 256 KiB.  The
llama-* shapes use transformers' LlamaForCausalLM from a tiny config (lora:
with peft's adapters; trainer-*: trained by transformers' Trainer, its own
AdamW); the compiled ones and cudagraphs run the small transformer under
torch.compile (COMPILE_MODES).
"""
import argparse
import ctypes
import json
import os
import random
import sys

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

V, D, BATCH, SEQ = 1024, 128, 8, 64
# SHAPE: (what it does, the true verdict, the shape a correct analysis
# names).  The verdict is the truth about the program, not a prediction.
SHAPES = {
    "steady": ("keeps the logits (2 MiB) of every step", "LEAK", "steady"),
    "periodic": ("keeps the logits (2 MiB) of every 5th step", "LEAK",
                 "periodic"),
    "late": ("keeps the logits (2 MiB) of every step from the middle on",
             "LEAK", "late-onset"),
    "small": ("keeps 8 tokens of the logits (256 KiB) every step", "LEAK",
              "steady"),
    "bounded": ("caches the logits of every step and clears the cache "
                "every 5th step", "CLEAN", "bounded"),
    "warmup": ("caches the logits of the first 6 steps only", "CLEAN",
               "warm-up"),
    "spikes": ("holds the logits of every 7th step until the next step",
               "CLEAN", "bounded"),
    "varlen": ("batches of 32 to 128 tokens; the last batch's logits live "
               "across the step end", "CLEAN", None),
    "clean": ("plain training", "CLEAN", "flat"),
    "offload": ("plain training under vramtrace.torch.OffloadActivations "
                "(side streams)", "CLEAN", "flat"),
    "destroyed": ("at step 3 allocates 4 x 8 MiB on a stream it creates, "
                  "keeps them and destroys the stream", "CLEAN", None),
    "llama-clean": ("plain training of a tiny LlamaForCausalLM", "CLEAN",
                    "flat"),
    "llama-late": ("tiny LlamaForCausalLM keeping its logits every step "
                   "from the middle on", "LEAK", "late-onset"),
    "compiled": ("plain training of the model under torch.compile "
                 "(Inductor's kernels)", "CLEAN", "flat"),
    "compiled-steady": ("torch.compile, keeping the logits (2 MiB) of every "
                        "step", "LEAK", "steady"),
    "cudagraphs": ("plain training under torch.compile(mode="
                   "\"reduce-overhead\"): CUDA graphs replayed from a "
                   "private memory pool", "CLEAN", None),
    "graph": ("sums its losses without detaching them (total = total + "
              "loss), keeping every step's autograd graph", "LEAK", "steady"),
    "accum": ("gradient accumulation: 4 micro-batches per optimizer step",
              "CLEAN", "flat"),
    "accum-steady": ("gradient accumulation, keeping the logits (2 MiB) of "
                     "every micro-batch", "LEAK", "steady"),
    "gan": ("two models, two optimizers: a discriminator's step, then the "
            "generator's (two step ends per iteration)", "CLEAN", None),
    "gan-steady": ("the same, keeping the generator's logits (2 MiB) every "
                   "iteration", "LEAK", None),
    "varlen-small": ("batches of 32 to 128 tokens, keeping 8 tokens of the "
                     "logits (256 KiB) every step", "LEAK", "steady"),
    "hook": ("a forward hook on the first encoder layer that keeps a copy "
             "of its output (256 KiB) every step", "LEAK", "steady"),
    "amp": ("float16 autocast with a GradScaler (its scale and inf checks "
            "made at the first step)", "CLEAN", None),
    "ckpt": ("activation checkpointing of each encoder layer "
             "(torch.utils.checkpoint, use_reentrant=True)", "CLEAN",
             "flat"),
    "lora": ("LoRA adapters (peft) on a tiny LlamaForCausalLM: only the "
             "adapters train", "CLEAN", None),
    "trainer": ("transformers' Trainer training a tiny LlamaForCausalLM",
                "CLEAN", None),
    "trainer-steady": ("the same, its compute_loss keeping the logits "
                       "(2 MiB) of every step", "LEAK", "steady"),
}
TRAINER = ("trainer", "trainer-steady")
MICRO = {"accum": 4, "accum-steady": 4}
VARLEN = ("varlen", "varlen-small")
COMPILE_MODES = {"compiled": "default", "compiled-steady": "default",
                 "cudagraphs": "reduce-overhead"}


class Tiny(torch.nn.Module):
    def __init__(self, checkpointed=False):
        super().__init__()
        self.checkpointed = checkpointed
        self.emb = torch.nn.Embedding(V, D)
        layer = torch.nn.TransformerEncoderLayer(D, 4, 4 * D,
                                                 batch_first=True)
        self.body = torch.nn.TransformerEncoder(layer, 2,
                                                enable_nested_tensor=False)
        self.head = torch.nn.Linear(D, V)

    def forward(self, x):
        if not self.checkpointed:
            return self.head(self.body(self.emb(x)))
        # Reentrant: PyTorch 2.11's _record_memory_history() with stacks
        # fails the non-reentrant recomputation of an encoder layer
        # (SystemError in layer_norm), so no snapshot could be made of it.
        h = self.emb(x)
        for layer in self.body.layers:
            h = torch.utils.checkpoint.checkpoint(layer, h,
                                                  use_reentrant=True)
        return self.head(h)


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=V, hidden_size=D, intermediate_size=4 * D,
                      num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=4, max_position_embeddings=256)
    return LlamaForCausalLM(cfg)


def leak_line(tag):
    """This file's line holding the comment "# LEAK: tag": the line that
    allocates the memory the shape is about."""
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if "# LEAK: " + tag in line:
                return "zoo.py:%d" % i
    raise RuntimeError("no leak line " + tag)


def destroyed_stream(keep):
    """Allocate 4 x 8 MiB on a stream created through cudart, keep the
    tensors (for ever: their references are never dropped, so that no free
    reaches the destroyed stream) and destroy the stream."""
    cudart = torch.cuda.cudart()
    handle = ctypes.c_void_p()
    err = cudart.cudaStreamCreate(ctypes.addressof(handle))
    if int(err) != 0:
        raise RuntimeError("cudaStreamCreate: %d" % int(err))
    stream = torch.cuda.ExternalStream(handle.value)
    with torch.cuda.stream(stream):
        for _ in range(4):
            t = torch.ones(2 * 1024 * 1024, device="cuda")  # LEAK: destroyed
            keep.append(t)
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(t))
    stream.synchronize()
    err = cudart.cudaStreamDestroy(handle.value)
    if int(err) != 0:
        raise RuntimeError("cudaStreamDestroy: %d" % int(err))
    return handle.value


def lora(model):
    """model with peft's LoRA adapters on its attention projections."""
    from peft import LoraConfig, get_peft_model
    return get_peft_model(model, LoraConfig(
        r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"]))


def keep_output(kept):
    """A forward hook that keeps a copy of its module's output."""
    def hook(module, args, output):
        kept.append(output.detach().clone())  # LEAK: hook
    return hook


def trainer_run(model, shape, steps, kept):
    """Train model for `steps` optimizer steps with transformers' Trainer
    on random tokens (batches of BATCH x SEQ); trainer-steady's
    compute_loss keeps each step's logits."""
    import tempfile
    from transformers import Trainer, TrainingArguments

    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return BATCH * steps

        def __getitem__(self, i):
            x = torch.randint(0, V, (SEQ,),
                              generator=torch.Generator().manual_seed(i))
            return {"input_ids": x, "labels": x}

    class Keeping(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, **kw):
            loss, out = super().compute_loss(model, inputs, True, **kw)
            if shape == "trainer-steady":
                kept.append(out.logits.detach().clone())  # LEAK: trainer
            return (loss, out) if return_outputs else loss

    args = TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=steps,
                             per_device_train_batch_size=BATCH,
                             logging_steps=10, save_strategy="no",
                             report_to=[], dataloader_num_workers=0, seed=0)
    Keeping(model=model, args=args, train_dataset=Tokens()).train()


def evaluation_loss(model, x):
    """An evaluation's loss computed without torch.no_grad(): kept, it
    holds its forward's graph and saved tensors."""
    return F.cross_entropy(model(x).view(-1, V), x.view(-1))  # LEAK: graph


def discriminator_step(gen, disc, opt_d, x):
    """One step of a GAN's discriminator: real one-hot tokens against the
    generator's softmax, the generator run without a graph.  Returns
    memory_allocated() after its optimizer.step(), where the step ends."""
    with torch.no_grad():
        fake = gen(x).softmax(-1)
    real = F.one_hot(x, V).float()
    loss = F.softplus(disc(fake)).mean() + F.softplus(-disc(real)).mean()
    opt_d.zero_grad(set_to_none=True)
    loss.backward()
    opt_d.step()
    allocated = memory_allocated()
    opt_d.zero_grad(set_to_none=True)
    return allocated


def memory_allocated():
    """torch.cuda.memory_allocated(), or None where the backend has none."""
    try:
        return torch.cuda.memory_allocated()
    except RuntimeError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("steps", type=int)
    ap.add_argument("facts")
    ap.add_argument("--snapshot")
    ap.add_argument("--no-history", action="store_true")
    ap.add_argument("--max-entries", type=int, default=200000)
    ap.add_argument("--stacks", choices=("python", "all"), default="python")
    a = ap.parse_args()
    shape, steps = a.shape, a.steps
    torch.manual_seed(0)
    rng = random.Random(0)
    if a.snapshot and not a.no_history:
        torch.cuda.memory._record_memory_history(max_entries=a.max_entries,
                                                 stacks=a.stacks)
    if shape.startswith("llama") or shape in ("lora",) + TRAINER:
        model = llama()
    else:
        model = Tiny(checkpointed=shape == "ckpt")
    model = (lora(model) if shape == "lora" else model).cuda()
    if shape in COMPILE_MODES:
        model = torch.compile(model, mode=COMPILE_MODES[shape])
    opt = torch.optim.AdamW([p for p in model.parameters()
                             if p.requires_grad], lr=1e-4, fused=True)
    ctx = None
    if shape == "offload":
        from vramtrace.torch import OffloadActivations
        ctx = OffloadActivations(slab_bytes=64 << 20)
    disc = opt_d = None
    if shape.startswith("gan"):
        disc = torch.nn.Sequential(torch.nn.Linear(V, 256), torch.nn.ReLU(),
                                   torch.nn.Linear(256, 1)).cuda()
        opt_d = torch.optim.Adam(disc.parameters(), lr=1e-4)
    kept, cache, hold, facts, val = [], [], None, {}, []
    allocated = []
    if shape == "hook":
        model.body.layers[0].register_forward_hook(keep_output(kept))
    scaler = torch.amp.GradScaler("cuda") if shape == "amp" else None
    if scaler is not None:
        # The step ends inside optimizer.step(): GradScaler.step() frees
        # the tensors it lent the fused optimizer only after it returns.
        opt.register_step_post_hook(
            lambda o, args, kwargs: allocated.append(memory_allocated()))
    if shape in TRAINER:
        # The Trainer makes its own optimizer, and steps it itself.
        from torch.optim.optimizer import register_optimizer_step_post_hook
        register_optimizer_step_post_hook(
            lambda o, args, kwargs: allocated.append(memory_allocated()))
        trainer_run(model, shape, steps, kept)
    onset = steps // 2 + 1
    # Every other shape runs this loop; the Trainer ran its own.
    own_steps = () if shape in TRAINER else range(1, steps + 1)
    for step in own_steps:
        seq = rng.choice((32, 64, 96, 128)) if shape in VARLEN else SEQ
        x = torch.randint(0, V, (BATCH, seq), device="cuda")
        if disc is not None:
            allocated.append(discriminator_step(model, disc, opt_d, x))
        for _ in range(MICRO.get(shape, 1)):
            if shape == "cudagraphs":
                torch.compiler.cudagraph_mark_step_begin()
            if ctx is not None:
                ctx.__enter__()
            with torch.autocast("cuda", torch.float16,
                                enabled=scaler is not None):
                if shape.startswith("llama") or shape == "lora":
                    logits = model(input_ids=x).logits
                else:
                    logits = model(x)
                if disc is not None:
                    loss = F.softplus(-disc(logits.softmax(-1))).mean()
                else:
                    loss = F.cross_entropy(logits.view(-1, V).float(),
                                           x.view(-1))
            if scaler is not None:
                loss = scaler.scale(loss)
            loss.backward()
            if ctx is not None:
                ctx.__exit__(None, None, None)
            out = logits.detach()
            if shape in ("steady", "compiled-steady", "accum-steady",
                         "gan-steady"):
                kept.append(out.clone())  # LEAK: steady
            elif shape == "periodic" and step % 5 == 0:
                kept.append(out.clone())  # LEAK: periodic
            elif shape in ("late", "llama-late") and step >= onset:
                kept.append(out.clone())  # LEAK: late
            elif shape in ("small", "varlen-small"):
                kept.append(out[:, :8].clone())  # LEAK: small
            elif shape == "bounded":
                cache.append(out.clone())  # LEAK: bounded
                if step % 5 == 0:
                    cache.clear()
            elif shape == "warmup" and step <= 6:
                cache.append(out.clone())  # LEAK: warmup
            elif shape == "spikes":
                hold = out.clone() if step % 7 == 0 else None  # LEAK: spikes
            elif shape == "destroyed" and step == 3:
                facts["stream"] = destroyed_stream(kept)
            elif shape == "graph":
                val.append(evaluation_loss(model, x))
            del out
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
            allocated.append(memory_allocated())
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    backend = torch.cuda.get_allocator_backend()
    blocks = []
    if backend == "native":
        blocks = [b for s in torch.cuda.memory_snapshot()
                  for b in s["blocks"] if b["state"] == "active_allocated"]
    if a.snapshot:
        torch.cuda.memory._dump_snapshot(a.snapshot)
    what, verdict, named = SHAPES[shape]
    tag = {"llama-late": "late", "compiled-steady": "steady",
           "accum-steady": "steady", "gan-steady": "steady",
           "varlen-small": "small", "trainer-steady": "trainer"}.get(shape,
                                                                 shape)
    facts.update({
        "shape": shape, "what": what, "verdict": verdict, "named": named,
        "steps": steps, "allocated": allocated,
        "line": leak_line(tag) if verdict == "LEAK" or named not in
        (None, "flat") or shape == "destroyed" else None,
        "kept_bytes": sum(t.numel() * t.element_size() for t in kept),
        "kept_tensors": len(kept), "kept_graphs": len(val),
        "cached_at_end": len(cache),
        "held_at_end": hold is not None,
        "onset": onset if shape in ("late", "llama-late") else None,
        "period": {"periodic": 5, "bounded": 5, "spikes": 7}.get(shape),
        "live_blocks_at_end": len(blocks) if backend == "native" else None,
        "live_bytes_at_end": sum(b["size"] for b in blocks)
        if backend == "native" else None,
        "allocated_at_end": memory_allocated(),
        "device_bytes": torch.cuda.get_device_properties(0).total_memory,
        "allocator": backend,
        "compile": COMPILE_MODES.get(shape),
        "torch": torch.__version__,
        "snapshot": a.snapshot is not None,
        "history": a.snapshot is not None and not a.no_history,
        "max_entries": a.max_entries if a.snapshot else None,
        "stacks": a.stacks if a.snapshot else None,
        "pid": os.getpid(),
    })
    with open(a.facts, "w") as f:
        json.dump(facts, f, indent=1)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
