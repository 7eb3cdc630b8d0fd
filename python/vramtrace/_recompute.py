"""vramtrace._recompute: recompute cheap saved tensors instead of copying.

wrap(model, hooks) puts each of the model's repeated blocks (the modules of
its largest nn.ModuleList whose modules share one type: a transformer's
layers) under torch.utils.checkpoint with PyTorch's selective activation
checkpoint (create_selective_checkpoint_contexts): the outputs of matrix
products and attention are saved (MUST_SAVE), everything else, norms,
casts, activation functions, rotary embeddings, is recomputed in backward
(PREFER_RECOMPUTE).  A block then saves its input (through the saved-tensor
hooks, so the offload engine sees it) and those outputs, which selective
checkpointing keeps in a cache of its own; that cache is replaced by one
whose entries go through the same hooks: hooks().pack when stored in
forward, that same object's unpack when taken back in the recomputation.
Where hooks() is None (no offload context, before its first step, a step
that runs without the hooks) the cache holds the tensors as selective
checkpointing would.
"""

import torch
from torch import nn
from torch.utils.checkpoint import (CheckpointPolicy, checkpoint,
                                    create_selective_checkpoint_contexts)

_SAVED_OPS = ("mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "convolution",
              "_scaled_dot_product_flash_attention",
              "_scaled_dot_product_efficient_attention",
              "_scaled_dot_product_cudnn_attention",
              "_flash_attention_forward", "_efficient_attention_forward")


def _saved_ops():
    ops = set()
    for name in _SAVED_OPS:
        packet = getattr(torch.ops.aten, name, None)
        if packet is not None:
            ops.update(getattr(packet, o) for o in packet.overloads())
    return frozenset(ops)


SAVED = _saved_ops()


def policy(ctx, op, *args, **kwargs):
    """Save what is costly to compute again, recompute the rest."""
    del ctx, args, kwargs
    if op in SAVED:
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


class _Packed:
    """What the hooks returned for a tensor of the cache: a handle, or the
    tensor with its version when it stays on the GPU (unpacked all the
    same, so that every step makes the same calls and a write in place is
    caught), with the hooks that unpack it."""
    __slots__ = ("hooks", "handle")

    def __init__(self, hooks, handle):
        self.hooks, self.handle = hooks, handle

    def unpack(self):
        return self.hooks.unpack(self.handle)


def _stash(hooks, x):
    if isinstance(x, torch.Tensor):
        return _Packed(hooks, hooks.pack(x))
    if type(x) in (tuple, list):
        return type(x)(_stash(hooks, v) for v in x)
    if isinstance(getattr(x, "val", None), torch.Tensor):
        x.val = _stash(hooks, x.val)    # selective checkpoint's wrapper
    return x


def _unstash(x):
    if isinstance(x, _Packed):
        return x.unpack()
    if type(x) in (tuple, list):
        return type(x)(_unstash(v) for v in x)
    if isinstance(getattr(x, "val", None), _Packed):
        x.val = x.val.unpack()
    return x


class _Cache(list):
    """The cache of one operation's outputs, through the hooks."""

    def __init__(self, hooks):
        super().__init__()
        self._hooks = hooks

    def append(self, item):
        hooks = self._hooks()
        super().append(item if hooks is None else _stash(hooks, item))

    def pop(self, index=-1):
        return _unstash(super().pop(index))


class _Storage(dict):
    """Selective checkpoint's storage: operation -> its _Cache."""

    def __init__(self, hooks):
        super().__init__()
        self._hooks = hooks

    def __missing__(self, key):
        cache = self[key] = _Cache(self._hooks)
        return cache


def _blocks(model):
    """The modules of model's largest nn.ModuleList of one module type."""
    best, most = [], 0
    for m in model.modules():
        if not isinstance(m, nn.ModuleList) or len(m) < 2:
            continue
        if len({type(b) for b in m}) != 1:
            continue
        n = sum(p.numel() for p in m.parameters())
        if n > most:
            best, most = list(m), n
    return best


def wrap(model, hooks):
    """Recompute the cheap tensors of model's blocks; hooks() returns the
    offload hooks, or None.  Returns the number of blocks wrapped."""
    def context_fn():
        caching, cached = create_selective_checkpoint_contexts(policy)
        if hasattr(caching, "storage") and hasattr(cached, "storage"):
            caching.storage = cached.storage = _Storage(hooks)
        return caching, cached

    blocks = _blocks(model)
    for block in blocks:
        _wrap_block(block, context_fn)
    return len(blocks)


def _wrap_block(block, context_fn):
    if getattr(block, "_vramtrace_recompute", None) is not None:
        block._vramtrace_recompute = context_fn
        return
    inner = block.forward

    def forward(*args, **kwargs):
        if not torch.is_grad_enabled():
            return inner(*args, **kwargs)
        return checkpoint(inner, *args, use_reentrant=False,
                          context_fn=block._vramtrace_recompute, **kwargs)

    block._vramtrace_recompute = context_fn
    block.forward = forward
