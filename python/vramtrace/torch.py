"""vramtrace.torch: activation offload through libvramtrace's engine.

OffloadActivations is a drop-in for TRL's context manager of the same name
(same arguments): inside it, autograd's saved tensors go to pinned host
memory during forward and come back during backward.  Unlike the pure
Python engines, the pinned slab, the copy streams and their events, the
forward and backward stashes and the dedupe table live in C
(libvramtrace.so, see libvramtrace(3)); this module only describes tensors,
allocates GPU buffers when the engine asks, and holds the GPU tensors the
engine tells it to hold (in self._held, keyed by the engine's ids, until a
DROP request).

Allocation generations.  The engine deduplicates a tensor saved twice by a
key of storage address, offset, dtype, shape and stride, plus a generation
that must change when the caching allocator gives the address to a new
storage.  The generation comes from _Generations: for each address it
keeps a StorageWeakRef to the storage seen there (a c10 weak reference,
which pins the StorageImpl's own memory, so no other storage can get the
same _cdata while it is held) with that storage's _cdata and a number.  A
storage at a known address whose _cdata differs is a new allocation and
gets a new number.  The map is emptied at every enter, like the dedupe
table it feeds.

Waste.  The same weak references tell, when backward begins, which
offloaded tensors' storages are still alive though their sources were let
go: something else holds them (the input batch, a tensor saved outside the
hooks too), so their copies lowered no peak.  The engine hears of each
(vramtrace_offload_alive) and keeps them on the GPU in later steps.
"""

import ctypes
import ctypes.util
import os

import torch
from torch.autograd.graph import saved_tensors_hooks

from vramtrace._check_torch import check_offload

try:
    from torch.multiprocessing.reductions import StorageWeakRef
except ImportError:  # no weak storage references: no dedupe at all
    StorageWeakRef = None

__all__ = ["OffloadActivations", "NoOpManager", "load_library",
           "check_offload"]

MAX_DIMS = 8
_BREAKS = {"dedupe-generation": 0x1, "exit-cleanup": 0x2,
           "stream-wait": 0x4, "slab": 0x8}
_KEEP_FLAG = 0x1
_KEPT, _STASHED, _COPIED, _DEDUPED = 0, 1, 2, 3
_FROM_STASH, _FROM_BUFFER, _NEED_BUFFER = 1, 2, 3
_REQ_DROP, _REQ_ALLOC = 1, 2


class _Config(ctypes.Structure):
    _fields_ = [("slab_bytes", ctypes.c_uint64),
                ("min_offload_size", ctypes.c_uint64),
                ("budget", ctypes.c_int64),
                ("prefetch", ctypes.c_uint64),
                ("max_fwd_stash", ctypes.c_uint32),
                ("breaks", ctypes.c_uint32),
                ("use_streams", ctypes.c_int32),
                ("use_pin_memory", ctypes.c_int32),
                ("device", ctypes.c_int32)]


class _Tensor(ctypes.Structure):
    _fields_ = [("storage", ctypes.c_uint64),
                ("generation", ctypes.c_uint64),
                ("src", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64),
                ("offset", ctypes.c_int64),
                ("shape", ctypes.c_int64 * MAX_DIMS),
                ("stride", ctypes.c_int64 * MAX_DIMS),
                ("ndim", ctypes.c_int32),
                ("dtype", ctypes.c_int32),
                ("flags", ctypes.c_uint32),
                ("pad", ctypes.c_uint32)]


class _Request(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64),
                ("kind", ctypes.c_uint32),
                ("pad", ctypes.c_uint32)]


_STAT_NAMES = ("step packs offloads offloaded_bytes kept kept_bytes "
               "dedupe_hits dedupe_releases reaps unpacks prefetches "
               "pool_fallbacks host_allocs self_waits exit_syncs "
               "dropped_entries live_entries fwd_stash bwd_stash slab_bytes "
               "slab_used dedupe_keys events budget_cutoff restored_bytes "
               "fwd_waits bwd_waits").split()


class _Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in _STAT_NAMES]


_lib = None


def load_library():
    """Load libvramtrace.so once: $VRAMTRACE_LIB, next to this package,
    the build tree (.libs), or the linker's search path."""
    global _lib
    if _lib is not None:
        return _lib
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    names = [os.environ.get("VRAMTRACE_LIB"),
             os.path.join(here, "libvramtrace.so"),
             os.path.join(top, ".libs", "libvramtrace.so"),
             os.path.join(top, "libvramtrace.so"),
             ctypes.util.find_library("vramtrace")]
    for name in names:
        if name and (os.path.sep not in name or os.path.exists(name)):
            lib = ctypes.CDLL(name)
            break
    else:
        raise OSError("libvramtrace.so not found: set VRAMTRACE_LIB")
    P, U64, I = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int
    sigs = {
        "vramtrace_offload_config_init": (I, [ctypes.POINTER(_Config)]),
        "vramtrace_offload_create": (P, [ctypes.POINTER(_Config),
                                         ctypes.c_char_p, ctypes.c_size_t]),
        "vramtrace_offload_free": (None, [P]),
        "vramtrace_offload_error": (ctypes.c_char_p, [P]),
        "vramtrace_offload_enter": (I, [P]),
        "vramtrace_offload_exit": (I, [P]),
        "vramtrace_offload_pack": (I, [P, ctypes.POINTER(_Tensor), U64,
                                       ctypes.POINTER(U64)]),
        "vramtrace_offload_reached": (I, [P, ctypes.c_int64, U64]),
        "vramtrace_offload_alive": (I, [P, U64]),
        "vramtrace_offload_unpack": (I, [P, U64, U64, ctypes.POINTER(U64)]),
        "vramtrace_offload_restore": (I, [P, U64, U64, U64]),
        "vramtrace_offload_next": (I, [P, ctypes.POINTER(_Request)]),
        "vramtrace_offload_stats": (None, [P, ctypes.POINTER(_Stats)]),
    }
    for fn, (res, args) in sigs.items():
        f = getattr(lib, fn)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


class _Handle:
    """What autograd keeps for an offloaded tensor: the engine's id and
    how to view the bytes that come back: shape and stride, the storage
    offset in the held source's storage (soff) and in the restored buffer,
    which starts at the first byte copied (boff)."""
    __slots__ = ("id", "dtype", "shape", "stride", "soff", "boff", "device")

    def __init__(self, id_, dtype, shape, stride, soff, boff, device):
        self.id, self.dtype, self.device = id_, dtype, device
        self.shape, self.stride, self.soff, self.boff = \
            shape, stride, soff, boff


class _Generations:
    """Allocation generations of storage addresses (see the module's
    docstring)."""

    def __init__(self):
        self._seen = {}
        self._next = 0

    def clear(self):
        self._seen.clear()

    def of(self, storage):
        ptr, cdata = storage.data_ptr(), storage._cdata
        seen = self._seen.get(ptr)
        if seen is not None and seen[1] == cdata:
            return seen[2]
        self._next += 1
        if StorageWeakRef is not None:
            self._seen[ptr] = (StorageWeakRef(storage), cdata, self._next)
        return self._next

    def alive(self, ptr, generation):
        """Whether the storage given generation at ptr is still alive."""
        seen = self._seen.get(ptr)
        return (seen is not None and seen[2] == generation and
                not seen[0].expired())


# Autograd nodes of views and casts: a tensor reached from a parameter's
# AccumulateGrad through these alone is that parameter, seen another way.
_VIEW_NODES = frozenset((
    "ToCopyBackward0", "TBackward0", "ViewBackward0", "TransposeBackward0",
    "PermuteBackward0", "ExpandBackward0", "AliasBackward0",
    "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1",
    "UnsafeViewBackward0", "ReshapeAliasBackward0"))


def _of_parameter(t):
    """Whether t is a parameter through views and casts, like autocast's
    cached weight casts: they stay alive for the whole forward whatever
    happens to the saved tensor, so offloading them lowers no peak."""
    fn = t.grad_fn
    for _ in range(8):
        if fn is None:
            return False
        name = type(fn).__name__
        if name == "AccumulateGrad":
            return True
        if name not in _VIEW_NODES or not fn.next_functions:
            return False
        fn = fn.next_functions[0][0]
    return False


class OffloadActivations(saved_tensors_hooks):
    """Offload activations saved for backward to host memory.

    Arguments are TRL's: use_pin_memory, use_streams, min_offload_size
    (bytes), max_fwd_stash_size (GPU sources kept alive until their copies
    are done; in budget mode the budget bounds them instead).  Ours: budget
    (bytes of saved activations to keep on the GPU; only the earliest
    tensors beyond it are offloaded, learned over one step), slab_bytes
    (pinned slab; None: sized after the first step), prefetch (bytes that
    tensors brought back ahead may add to what the engine leaves free for
    backward's own peak; default 0), model (its
    parameters' and buffers' storages stay on the GPU), breaks (test only:
    a comma list of invariants to switch off).

    Parameters seen through views and casts (autocast's weight casts) stay
    on the GPU.  A view that shows most of its storage (q, k and v split
    from one projection) offloads the whole storage once, shared by every
    view of it; a view that shows little of a large storage copies only
    what it shows."""

    def __init__(self, use_pin_memory=True, use_streams=True,
                 min_offload_size=1024, max_fwd_stash_size=5, budget=None,
                 slab_bytes=None, prefetch=None, model=None, breaks=None):
        if max_fwd_stash_size < 1:
            raise ValueError("max_fwd_stash_size should be at least 1")
        self._lib = load_library()
        cfg = _Config()
        self._lib.vramtrace_offload_config_init(ctypes.byref(cfg))
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
        for name in (breaks or "").split(","):
            if name:
                cfg.breaks |= _BREAKS[name]
        self._cfg = cfg
        self._engine = None
        self._held = {}
        self._gens = _Generations()
        self._dtypes = {}
        self._ceiling = None
        self._desc = _Tensor()
        self._req = _Request()
        self._id = ctypes.c_uint64()
        self._watch = []
        self._keep_storages = set()
        if model is not None:
            for t in list(model.parameters()) + list(model.buffers()):
                self._keep_storages.add(t.untyped_storage().data_ptr())
        super().__init__(self._pack, self._unpack)

    # The engine ---------------------------------------------------------

    def _check(self, rc):
        if rc < 0:
            msg = self._lib.vramtrace_offload_error(self._engine)
            raise RuntimeError("vramtrace offload: " + msg.decode())
        return rc

    def _start(self):
        self._cfg.device = torch.cuda.current_device()
        err = ctypes.create_string_buffer(256)
        e = self._lib.vramtrace_offload_create(ctypes.byref(self._cfg), err,
                                               len(err))
        if not e:
            raise RuntimeError("vramtrace offload: " + err.value.decode())
        self._engine = e
        self._free = self._lib.vramtrace_offload_free

    def __del__(self):
        if getattr(self, "_engine", None):
            self._held.clear()
            try:
                self._free(self._engine)
            except Exception:  # interpreter shutdown
                pass
            self._engine = None

    def _service(self, stream=None):
        """Do what the engine asked: let tensors go, allocate and restore
        the ones it brings back ahead."""
        lib, e, r = self._lib, self._engine, self._req
        while lib.vramtrace_offload_next(e, ctypes.byref(r)):
            if r.kind == _REQ_DROP:
                self._held.pop(r.id, None)
                continue
            if stream is None:
                stream = torch.cuda.current_stream().cuda_stream
            buf = self._buffer(r.bytes,
                               torch.device("cuda", self._cfg.device))
            self._held[r.id] = buf
            self._check(lib.vramtrace_offload_restore(e, r.id,
                                                      buf.data_ptr(), stream))

    @staticmethod
    def _buffer(n, device):
        """A GPU buffer for n bytes brought back, rounded up so that any
        dtype can view it."""
        return torch.empty((n + 15) & ~15, dtype=torch.uint8, device=device)

    def stats(self):
        """The engine's counters as a dict (empty before the first step)."""
        if not self._engine:
            return {}
        s = _Stats()
        self._lib.vramtrace_offload_stats(self._engine, ctypes.byref(s))
        return {n: getattr(s, n) for n in _STAT_NAMES}

    def __enter__(self):
        if not self._engine:
            self._start()
        self._check(self._lib.vramtrace_offload_enter(self._engine))
        self._service()
        self._gens.clear()
        self._watch.clear()
        self._ceiling = None
        super().__enter__()
        return self

    def __exit__(self, *exc):
        try:
            self._check(self._lib.vramtrace_offload_exit(self._engine))
            self._service()
        finally:
            super().__exit__(*exc)

    # The hooks ----------------------------------------------------------

    def _pack(self, t):
        if (not t.is_cuda or t.layout != torch.strided or t.numel() == 0
                or type(t) not in (torch.Tensor, torch.nn.Parameter)):
            return t
        storage = t.untyped_storage()
        es = t.element_size()
        shape, stride, off = tuple(t.shape), t.stride(), t.storage_offset()
        nbytes = t.numel() * es
        span = (1 + sum((n - 1) * s for n, s in zip(shape, stride))) * es
        d = self._desc
        d.storage = storage.data_ptr()
        d.generation = self._gens.of(storage)
        src, soff, boff = t, off, 0
        if storage.nbytes() <= 4 * nbytes:
            # Most of the storage: copy all of it, once for every view.
            d.src, d.bytes, d.offset = d.storage, storage.nbytes(), 0
            d.ndim, d.dtype = 1, -1
            d.shape[0], d.stride[0] = d.bytes, 1
            boff = off
        else:
            if span > 2 * nbytes:
                # Little of a large storage: copy only what it shows,
                # dense in the same order of dimensions (the same matmul
                # kernels read it back).
                src = t.clone()
                stride, span = src.stride(), nbytes
                soff = src.storage_offset()
                d.src = src.data_ptr()
            else:
                d.src = d.storage + off * es
            d.bytes, d.offset = span, off
            d.ndim = len(shape)
            for i in range(min(len(shape), MAX_DIMS)):
                d.shape[i], d.stride[i] = shape[i], t.stride()[i]
            d.dtype = self._dtypes.setdefault(t.dtype, len(self._dtypes))
        keep = (isinstance(t, torch.nn.Parameter) or
                (t.is_leaf and t.requires_grad) or
                d.storage in self._keep_storages or _of_parameter(t))
        d.flags = _KEEP_FLAG if keep else 0
        stream = torch.cuda.current_stream(t.device).cuda_stream
        rc = self._check(self._lib.vramtrace_offload_pack(
            self._engine, ctypes.byref(d), stream, ctypes.byref(self._id)))
        if rc == _KEPT:
            self._service(stream)
            return t
        tid = self._id.value
        if rc == _STASHED:
            self._held[tid] = src
        if rc != _DEDUPED:
            self._watch.append((tid, d.storage, d.generation))
        self._service(stream)
        return _Handle(tid, t.dtype, shape, stride, soff, boff, t.device)

    def _prefetch(self, device, stream=None):
        """Let the engine bring back what backward needs next, on the
        memory backward freed since it began."""
        used = torch.cuda.memory_allocated(device)
        if self._ceiling is None:
            self._ceiling = used
        if stream is None:
            stream = torch.cuda.current_stream(device).cuda_stream
        self._check(self._lib.vramtrace_offload_reached(
            self._engine, self._ceiling - used, stream))
        self._service(stream)

    def _report_alive(self):
        """Backward begins (nothing unpacked yet): tell the engine which
        offloaded tensors' storages something else keeps alive (not the
        sources still held)."""
        for tid, ptr, gen in self._watch:
            if tid not in self._held and self._gens.alive(ptr, gen):
                self._check(self._lib.vramtrace_offload_alive(self._engine,
                                                              tid))
        self._watch.clear()

    def _unpack(self, h):
        lib, e = self._lib, self._engine
        if self._watch:
            self._report_alive()
        if isinstance(h, torch.Tensor):
            if h.is_cuda:
                self._prefetch(h.device)
            return h
        stream = torch.cuda.current_stream(h.device).cuda_stream
        n = ctypes.c_uint64()
        rc = self._check(lib.vramtrace_offload_unpack(e, h.id, stream,
                                                      ctypes.byref(n)))
        if rc == _NEED_BUFFER:
            buf = self._buffer(n.value, h.device)
            self._held[h.id] = buf
            self._check(lib.vramtrace_offload_restore(e, h.id,
                                                      buf.data_ptr(), stream))
            rc = self._check(lib.vramtrace_offload_unpack(e, h.id, stream,
                                                          ctypes.byref(n)))
        t = self._held[h.id]
        self._service(stream)
        self._prefetch(h.device, stream)
        if rc == _FROM_STASH:
            return torch.empty(0, dtype=h.dtype, device=h.device).set_(
                t.untyped_storage(), h.soff, h.shape, h.stride)
        return t.view(h.dtype).as_strided(h.shape, h.stride, h.boff)


class NoOpManager(saved_tensors_hooks):
    """Inside it, saved tensors stay on the GPU even within an
    OffloadActivations context (only the innermost hooks are active)."""

    def __init__(self):
        super().__init__(lambda t: t, lambda t: t)
