"""Offload engines for the offload check's GPU test.

Engine is a small stream engine in the style of TRL's and torchtitan's:
every CUDA tensor of at least MIN bytes (not a parameter) is copied to a
pinned host buffer on a side stream during forward; its source stays in a
forward stash (at most `stash` of them) until compute has waited for that
copy; backward copies it back on the side stream into a new GPU tensor,
kept in a backward stash until the context is left.  Pinned buffers come
from a pool by size and are reused from one step to the next.  A tensor
whose key (storage address, offset, dtype, shape, strides) matches a
source still in the forward stash shares that copy (dedupe); the key is
released when the source leaves the stash.  Correct as it is; each bug
below removes one piece:

  stale-key      keys are never released: once the allocator gives a freed
                 source's address to a new tensor of the same shape, the
                 new tensor is taken for the old one and backward gets the
                 old one's contents (TRL #6241);
  wrong-stream   the compute stream is read inside the side stream's
                 context, so the side stream waits on itself and copies
                 tensors before compute has written them (torchtitan
                 #2581), into pinned buffers reused across steps;
  no-clear       leaving the context does not empty the backward stash:
                 every step's restored tensors stay on the side stream
                 (TRL #5700);
  pageable       host buffers are not pinned, copies still non_blocking.

Ground truth, for the test to hold the checker to: `stale` lists the
(step, site) of every dedupe hit whose first tensor was already dead; with
oracle=True every offloaded tensor is also cloned on the compute stream at
pack and compared bit for bit with what unpack returns (`corrupt`, read
at step ends).  A site is FILE:LINE of the innermost frame of the model's
file (bench/offload/bench.py, imported from here as `bench`).
"""
import collections
import os
import sys

import torch
from torch.autograd.graph import saved_tensors_hooks
from torch.multiprocessing.reductions import StorageWeakRef

sys.path.insert(0, os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "../../../bench/offload")))
import bench  # noqa: E402  (the model)

MIN = 1 << 16
MODEL_FILE = bench.__file__
_INTS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def model_site():
    """FILE:LINE of the innermost frame in the model's file."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename == MODEL_FILE:
            return "%s:%d" % (MODEL_FILE, f.f_lineno)
        f = f.f_back
    return "unknown"


def bits(t):
    """t's elements as integers of their size (a view)."""
    return t.view(_INTS[t.element_size()])


class _Entry:
    """One offloaded copy: its host buffer and how to view it back."""
    __slots__ = ("host", "nbytes", "dtype", "shape", "key")


class _Handle:
    """What autograd keeps: an entry, shared by dedupe hits."""
    __slots__ = ("entry", "site", "clone")

    def __init__(self, entry, site, clone):
        self.entry, self.site, self.clone = entry, site, clone


class Engine(saved_tensors_hooks):
    def __init__(self, bug=None, stash=2, oracle=False):
        assert bug in (None, "stale-key", "wrong-stream", "no-clear",
                       "pageable")
        self.bug, self.max_stash, self.oracle = bug, stash, oracle
        self.s1 = torch.cuda.Stream()
        self.pool = collections.defaultdict(list)
        self.used = []
        self.fwd = collections.OrderedDict()   # entry -> (source, event)
        self.keys = {}                         # key -> (entry, weak ref)
        self.bwd = []
        self.step = 0
        self.stale = collections.Counter()
        self.checks = []                       # (step, site, GPU bool)
        super().__init__(self._pack, self._unpack)

    # Step -------------------------------------------------------------

    def __enter__(self):
        self.s1.synchronize()
        for buf in self.used:
            self.pool[buf.numel()].append(buf)
        self.used = []
        self.fwd.clear()
        self.keys.clear()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            self.s1.synchronize()
            self.fwd.clear()
            self.keys.clear()
            if self.bug != "no-clear":
                self.bwd.clear()
            self.step += 1
        finally:
            super().__exit__(*exc)

    def corrupt(self):
        """The (step, site) of every tensor the oracle saw come back
        different (waits for the GPU)."""
        out = collections.Counter((s, site) for s, site, bad in self.checks
                                  if bool(bad))
        self.checks = []
        return out

    # Hooks ------------------------------------------------------------

    def _take(self, nbytes):
        free = self.pool[nbytes]
        buf = free.pop() if free else torch.empty(
            nbytes, dtype=torch.uint8, pin_memory=self.bug != "pageable")
        self.used.append(buf)
        return buf

    def _release(self, entry):
        hit = self.keys.get(entry.key)
        if hit is not None and hit[0] is entry:
            del self.keys[entry.key]

    def _reap(self):
        while len(self.fwd) > self.max_stash:
            entry, (_, ev) = self.fwd.popitem(last=False)
            torch.cuda.current_stream().wait_event(ev)
            if self.bug != "stale-key":
                self._release(entry)

    def _pack(self, t):
        nbytes = t.numel() * t.element_size()
        if (not t.is_cuda or nbytes < MIN or isinstance(t, torch.nn.Parameter)
                or (t.is_leaf and t.requires_grad)):
            return t
        site = model_site()
        clone = bits(t).clone() if self.oracle else None
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), t.dtype,
               tuple(t.shape), t.stride())
        hit = self.keys.get(key)
        if hit is not None:
            if hit[1].expired():
                self.stale[(self.step, site)] += 1
            return _Handle(hit[0], site, clone)
        src = t if t.is_contiguous() else t.contiguous()
        compute = torch.cuda.current_stream()
        host = self._take(nbytes)
        with torch.cuda.stream(self.s1):
            if self.bug == "wrong-stream":
                compute = torch.cuda.current_stream()   # the side stream
            self.s1.wait_stream(compute)
            host.copy_(src.reshape(-1).view(torch.uint8), non_blocking=True)
            ev = self.s1.record_event()
        e = _Entry()
        e.host, e.nbytes, e.dtype, e.shape, e.key = host, nbytes, t.dtype, \
            tuple(t.shape), key
        self.fwd[e] = (src, ev)
        self.keys[key] = (e, StorageWeakRef(t.untyped_storage()))
        self._reap()
        return _Handle(e, site, clone)

    def _unpack(self, h):
        if isinstance(h, torch.Tensor):
            return h
        e = h.entry
        if e in self.fwd:
            out = self.fwd[e][0]
        else:
            compute = torch.cuda.current_stream()
            with torch.cuda.stream(self.s1):
                self.s1.wait_stream(compute)
                dev = torch.empty(e.nbytes, dtype=torch.uint8, device="cuda")
                dev.copy_(e.host, non_blocking=True)
            compute.wait_stream(self.s1)
            dev.record_stream(compute)
            self.bwd.append(dev)
            out = dev.view(e.dtype).view(e.shape)
        if h.clone is not None:
            self.checks.append((self.step, h.site,
                                (bits(out) != h.clone).any()))
        return out


def trl_engine(path):
    """TRL's OffloadActivations (the reference file at path), defaults."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("trl_activation_offloading",
                                                  path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.OffloadActivations()
