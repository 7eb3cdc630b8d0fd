"""vramtrace.torch: activation offload through libvramtrace's engine.

get_act_offloading_ctx_manager(model, ...) and OffloadActivations drop in
for TRL's functions of the same names (same arguments, same behaviour:
output heads stay on the GPU, wrapped and PEFT models are looked into,
update_model_params, backward inside or after the context): inside the
context, autograd's saved tensors go to pinned host memory during forward
and come back during backward.  Unlike the pure Python engines, the pinned
slab, the copy streams and their events, the stashes, the dedupe table and
the choice of what to offload live in C (libvramtrace.so, see
libvramtrace(3)), and so does the per-tensor work: the saved-tensor hooks
are vramtrace._offload.Hooks, a CPython extension (vramtrace._engine.PyHooks,
the same in Python over ctypes, where it was not built).

Memory.  At every enter the binding tells the engine how much is
allocated.  The engine learns one step (the first, and the first after
memory at enter moved, as when the optimizer's state appears; batches of
other lengths are planned at the scale of their tensors, not learned
again): every
candidate is offloaded and the memory allocated after every operation,
and the most it can have reached inside it (its temporaries), is sampled
(a TorchDispatchMode, for that step only).  Later steps need no
measurement: with max_memory (bytes, or a fraction of the device), the
engine offloads the fewest tensors, the earliest, so that the step's peak
stays within it, and everywhere it brings tensors back ahead as far as the
memory predicted for the rest of the step allows.  A step that would
offload everything (no max_memory, or one out of reach) keeps the last
tensors whose stay does not raise its predicted peak (the loss's
log-probabilities: backward needs them first).  At every enter the
binding also passes the step before's peak allocated bytes (PyTorch's,
read as that step's backward ended, so that an optimizer's temporaries or
the caller's reset_peak_memory_stats() between steps do not count) when
that step moved it: a step that went over max_memory (by what the learning
step's samples missed) makes the next plans keep that much, and the 1%
margin again, more below.

Idle steps.  A step whose plan under max_memory offloads nothing, with
room for every saved tensor and every cast of a parameter kept, runs
without the hooks at all: autograd keeps what it saves, as without the
context, and the step costs what it costs without offload.  Such a step
that goes over max_memory makes the next one learn again.

Recompute.  recompute=True wraps the model's repeated blocks (the layers
of the largest nn.ModuleList of one module type) in PyTorch's selective
activation checkpoint: the outputs of matrix products and attention are
saved, the cheap tensors (norms, casts, activations, rotary embeddings)
are recomputed in backward, and what is saved, the blocks' inputs and
those outputs, is offloaded by the engine like any saved tensor
(vramtrace._recompute).
"""

import logging

import torch
from torch import nn
from torch.autograd.graph import saved_tensors_hooks

from vramtrace import _engine
from vramtrace._check_torch import check_offload
from vramtrace._library import load_library  # noqa: F401 (public)

try:
    from torch.multiprocessing.reductions import StorageWeakRef
except ImportError:  # no weak storage references: no dedupe at all
    StorageWeakRef = None
try:
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # learning steps then measure at unpacks only
    TorchDispatchMode = None
try:
    from torch.distributed.tensor import DTensor
except ImportError:
    DTensor = None

__all__ = ["OffloadActivations", "NoOpManager",
           "get_act_offloading_ctx_manager", "load_library", "check_offload"]

logger = logging.getLogger(__name__)


def _hooks_class():
    """vramtrace._offload.Hooks, or the Python hooks when the extension is
    not built or VRAMTRACE_OFFLOAD_EXTENSION=0."""
    import os
    if os.environ.get("VRAMTRACE_OFFLOAD_EXTENSION", "1") != "0":
        try:
            from vramtrace import _offload
            return _offload.Hooks
        except ImportError:
            pass
    return _engine.PyHooks


def _storage_ptr(t):
    if DTensor is not None and isinstance(t, DTensor):
        t = t._local_tensor
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, AttributeError):  # no accessible storage
        return 0


if TorchDispatchMode is not None:
    class _Sampler(TorchDispatchMode):
        """While the engine learns a step: for every operation, forward and
        backward, the most memory it can have had allocated while it ran
        (its temporaries, which the memory after it no longer shows: what
        was allocated before it plus all it allocated, or PyTorch's peak
        when that is less), then the memory allocated after it."""

        def __init__(self, engine, stats):
            super().__init__()
            self._sample, self._stats = engine.sample, stats

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            before = self._stats()
            now, total = before["current"], before["allocated"]
            out = func(*args, **(kwargs or {}))
            after = self._stats()
            self._sample(min(now + after["allocated"] - total,
                             after["peak"]))
            self._sample(after["current"])
            return out
else:
    _Sampler = None


class OffloadActivations(saved_tensors_hooks):
    """Offload activations saved for backward to host memory.

    Arguments are TRL's: use_pin_memory, use_streams, min_offload_size
    (bytes), max_fwd_stash_size (GPU sources kept alive until their copies
    are done, without budget or max_memory).  Ours: budget (bytes of saved
    activations to keep on the GPU: only the earliest tensors beyond it are
    offloaded), slab_bytes (pinned slab; None: sized after the first step,
    grown after a step that did not fit), prefetch (bytes that tensors
    brought back ahead may add to the step's predicted peak when there is
    no max_memory; default 0), model (its parameters' and buffers'
    storages stay on the GPU), breaks (test only: a comma list of
    invariants to switch off); keyword only: max_memory
    (the step's peak allocated: bytes, or a fraction of the device below
    1), recompute (recompute cheap saved tensors of model's blocks instead
    of copying them; needs model), extension (False: the Python hooks even
    where the extension is built).

    Parameters seen through views stay on the GPU; autocast's casts of
    parameters are made again from the parameter when backward needs them
    (neither kept nor copied).  A view that shows most of its storage (q,
    k and v split from one projection) offloads the whole storage once,
    shared by every view of it; a view that shows little of a large
    storage copies only what it shows.  What is saved while a backward
    runs (a reentrant checkpoint recomputing its layer) stays on the
    GPU.  A max_memory or a budget that every saved tensor fits in costs
    one learning step: the steps after it run without the hooks, until one
    goes past its predicted peak."""

    def __init__(self, use_pin_memory=True, use_streams=True,
                 min_offload_size=1024, max_fwd_stash_size=5, budget=None,
                 slab_bytes=None, prefetch=None, model=None, breaks=None, *,
                 max_memory=None, recompute=False, extension=True):
        if max_fwd_stash_size < 1:
            raise ValueError("max_fwd_stash_size should be at least 1")
        cfg = _engine.default_config()
        cfg.use_pin_memory = int(bool(use_pin_memory))
        cfg.use_streams = int(bool(use_streams))
        cfg.min_offload_size = int(min_offload_size)
        cfg.max_fwd_stash = int(max_fwd_stash_size)
        if budget is not None:
            cfg.budget = int(budget)
        if slab_bytes is not None:
            cfg.slab_bytes = int(slab_bytes)
        if prefetch is not None:
            cfg.prefetch = int(prefetch)
        if max_memory is not None:
            if 0 < max_memory <= 1 and isinstance(max_memory, float):
                cfg.max_memory, cfg.max_memory_fraction = 0, max_memory
            elif max_memory > 1:
                cfg.max_memory, cfg.max_memory_fraction = int(max_memory), 0
            else:
                raise ValueError("max_memory: bytes, or a fraction in "
                                 "(0, 1]")
        for name in (breaks or "").split(","):
            if name:
                cfg.breaks |= _engine.BREAKS[name]
        self._cfg = cfg
        self._engine = None
        self._hooks = None
        self._hooks_class = _hooks_class() if extension else \
            _engine.PyHooks
        self._keep = set()
        self._idle = False
        self._sampler = None
        self._base_peak = None
        self._step_peak = None
        self._device = None
        if model is not None:
            self.update_model_params(model)
            for b in model.buffers():
                self._keep.add(_storage_ptr(b))
        if recompute:
            if model is None:
                raise ValueError("recompute needs the model")
            from vramtrace import _recompute
            self.recomputed_blocks = _recompute.wrap(
                model, lambda: None if self._idle else self._hooks)
        super().__init__(self._pack_before_start, self._unpack_before_start)

    @staticmethod
    def _pack_before_start(t):
        return t

    @staticmethod
    def _unpack_before_start(t):
        return t

    @property
    def extension(self):
        """Whether the hooks are the CPython extension's."""
        return self._hooks_class is not _engine.PyHooks

    def update_model_params(self, model):
        """Keep the storages of model's parameters on the GPU (what TRL's
        method of the same name does, FSDP's DTensors included)."""
        self._keep.clear()
        for p in model.parameters():
            ptr = _storage_ptr(p)
            if ptr:
                self._keep.add(ptr)

    # The engine ---------------------------------------------------------

    def _start(self):
        self._device = torch.device("cuda", torch.cuda.current_device())
        self._cfg.device = self._device.index
        self._engine = _engine.Engine(self._cfg)
        torch_objs = (torch.Tensor, nn.Parameter, torch.strided, torch.empty,
                      torch.uint8, torch._C._cuda_getCurrentRawStream,
                      StorageWeakRef,
                      getattr(torch._C, "_current_graph_task_id", None))
        self._hooks = self._hooks_class(
            self._engine.api(), self._engine.ptr, self._device,
            self._device.index, self._keep, torch_objs, self._memory,
            self._on_backward)
        self.pack_hook, self.unpack_hook = self._hooks.pack, \
            self._hooks.unpack

    def _stats(self):
        """The device's allocated bytes: a dict of "current", "peak" (the
        most since the last reset_peak_memory_stats()) and "allocated" (all
        ever allocated).  Read from the allocator's stats directly: the flat
        dict of memory_allocated() is what costs at every operation of a
        learning step."""
        try:
            return torch._C._cuda_memoryStats(self._device.index)[
                "allocated_bytes"]["all"]
        except (AttributeError, KeyError, TypeError):
            s = torch.cuda.memory_stats(self._device)
            return {k: s["allocated_bytes.all." + k]
                    for k in ("current", "peak", "allocated")}

    def _memory(self):
        """Bytes allocated on the device now, for the engine."""
        return self._stats()["current"]

    def _report_peak(self):
        """Tell the engine the peak of the step before when the step moved
        it: a step over max_memory makes the next plans keep that much more
        below it (what the profile's samples cannot see).  The step's peak
        is read as its backward ended (_step_ended), so that what runs
        between steps (an optimizer's temporaries, the caller's
        reset_peak_memory_stats()) neither counts nor hides it; an idle
        step has no hook to tell its backward's end, and is read here.
        PyTorch's peak only grows until reset: a step below a peak reached
        between steps is not seen."""
        now = self._stats()["peak"]
        peak = now if self._step_peak is None else self._step_peak
        if self._base_peak is not None and peak != self._base_peak:
            self._engine.peak(peak)
        self._base_peak = now
        self._step_peak = None

    def _step_ended(self):
        """The step's forward, or its backward, just ended: note the peak
        so far (the larger of its readings)."""
        peak = self._stats()["peak"]
        if self._step_peak is None or peak > self._step_peak:
            self._step_peak = peak

    def _on_backward(self):
        """A backward began after the context ended: end it cleanly."""
        torch.autograd.Variable._execution_engine.queue_callback(
            self._backward_done)

    def _backward_done(self):
        self._engine.backward_done()
        self._hooks.service()
        self._step_ended()

    def __del__(self):
        if getattr(self, "_engine", None) is not None:
            self._engine.free()     # syncs the copy streams first
            self._engine = None
            if self._hooks is not None:
                self._hooks.held().clear()

    def stats(self):
        """The engine's counters as a dict (empty before the first step)."""
        return self._engine.stats() if self._engine is not None else {}

    def __enter__(self):
        if self._engine is None:
            self._start()
        self._report_peak()
        learning = self._engine.enter(self._memory())
        self._hooks.service()
        self._idle = self._engine.idle()
        self._hooks.begin(learning == 1)
        if learning == 1 and _Sampler is not None:
            self._sampler = _Sampler(self._engine, self._stats)
            self._sampler.__enter__()
        if not self._idle:
            super().__enter__()
        return self

    def __exit__(self, *exc):
        try:
            self._engine.exit()
            self._hooks.service()
            if not self._idle:
                self._step_ended()
        finally:
            self._hooks.leave()
            try:
                if self._sampler is not None:
                    self._sampler.__exit__(None, None, None)
            finally:
                self._sampler = None
                if not self._idle:
                    super().__exit__(*exc)


class NoOpManager(saved_tensors_hooks):
    """Inside it, saved tensors stay on the GPU even within an
    OffloadActivations context (only the innermost hooks are active)."""

    def __init__(self):
        super().__init__(lambda t: t, lambda t: t)


def _output_head(model):
    """The module whose saved tensors should stay on the GPU (the output
    head), looked for where TRL looks: output (or output.linear), lm_head,
    decoder.output, decoder.lm_head, final_layer_norm or ln_f, head."""
    if hasattr(model, "output"):
        if isinstance(model.output, nn.Module):
            return model.output
        linear = getattr(model.output, "linear", None)
        return linear if isinstance(linear, nn.Module) else None
    if hasattr(model, "lm_head"):
        return model.lm_head
    if hasattr(model, "decoder"):
        decoder = model.decoder
        if hasattr(decoder, "output"):
            return decoder.output
        return getattr(decoder, "lm_head", None)
    if hasattr(model, "final_layer_norm") or hasattr(model, "ln_f"):
        return getattr(model, "final_layer_norm", None) or model.ln_f
    head = getattr(model, "head", None)
    return head if isinstance(head, nn.Module) else None


def _keep_on_gpu(module, noop):
    module.register_forward_pre_hook(lambda *args: noop.__enter__())
    module.register_forward_hook(lambda *args: noop.__exit__(),
                                 always_call=True)


def get_act_offloading_ctx_manager(model, use_pin_memory=True,
                                   use_streams=True, min_offload_size=1024,
                                   max_fwd_stash_size=5, warn_if_no_head=True,
                                   **kwargs):
    """TRL's function of the same name over this engine: an
    OffloadActivations for model whose parameters (and buffers) stay on the
    GPU, with the output head and any module named "liger" kept out of
    offloading (a NoOpManager around them).  A wrapped model (.module) and
    a PEFT model (.base_model) are looked into.  kwargs go to
    OffloadActivations (max_memory, budget, recompute, ...)."""
    ctx = OffloadActivations(use_pin_memory=use_pin_memory,
                             use_streams=use_streams,
                             min_offload_size=min_offload_size,
                             max_fwd_stash_size=max_fwd_stash_size,
                             model=model, **kwargs)
    noop = NoOpManager()
    inner = getattr(model, "module", model)
    if hasattr(inner, "base_model") and hasattr(inner, "peft_config"):
        inner = inner.base_model
    head = _output_head(inner)
    if head is not None:
        _keep_on_gpu(head, noop)
    elif warn_if_no_head:
        logger.warning(
            "During activation offloading, no output head was detected. If "
            "your model has an output head, it will be offloaded. This "
            "usually greatly slows training, given the large vocabulary "
            "size. To change this behavior, set your output head as "
            "model.output and make it an nn.Module. You can disable this "
            "warning by passing `warn_if_no_head=False`.")
    for name, module in inner.named_modules():
        if "liger" in name.lower():
            _keep_on_gpu(module, noop)
    ctx.output_head = head
    return ctx

