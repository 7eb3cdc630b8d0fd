"""vramtrace._engine: libvramtrace's offload engine through ctypes (the
library and its structs come from vramtrace._library).

Engine wraps one C engine (create, enter, exit, stats: a few calls a
step).  The calls made for every tensor go through the saved-tensor hooks:
vramtrace._offload.Hooks, the CPython extension, when it was built, or
PyHooks below, the same hooks in Python over ctypes, when it was not (or
when VRAMTRACE_OFFLOAD_EXTENSION=0).  Both take the same arguments and
behave the same way; see lib/offload-python*.c for what they do.
"""

import ctypes

from vramtrace._library import (MAX_DIMS, STAT_NAMES, Config, Request,
                                Stats, Tensor, load_library)

BREAKS = {"dedupe-generation": 0x1, "exit-cleanup": 0x2,
          "stream-wait": 0x4, "slab": 0x8}
KEEP_FLAG, RECOMPUTE_FLAG = 0x1, 0x2
KEPT, STASHED, COPIED, DEDUPED, RECOMPUTE = 0, 1, 2, 3, 4
FROM_STASH, FROM_BUFFER, NEED_BUFFER = 1, 2, 3
REQ_DROP, REQ_ALLOC = 1, 2

# The functions the hooks call, in the order vramtrace._offload.Hooks
# takes their addresses.
HOOK_FUNCTIONS = ("vramtrace_offload_pack", "vramtrace_offload_unpack",
                  "vramtrace_offload_restore", "vramtrace_offload_reached",
                  "vramtrace_offload_next", "vramtrace_offload_alive",
                  "vramtrace_offload_error")


def default_config():
    """The engine's defaults with the environment applied (libvramtrace(3))."""
    cfg = Config()
    load_library().vramtrace_offload_config_init(ctypes.byref(cfg))
    return cfg


class Engine:
    """One C engine for cfg.device: the calls made once a step."""

    def __init__(self, cfg):
        self.lib = load_library()
        err = ctypes.create_string_buffer(256)
        e = self.lib.vramtrace_offload_create(ctypes.byref(cfg), err,
                                              len(err))
        if not e:
            raise RuntimeError("vramtrace offload: " + err.value.decode())
        self.ptr = e
        self._free = self.lib.vramtrace_offload_free

    def check(self, rc):
        if rc < 0:
            msg = self.lib.vramtrace_offload_error(self.ptr)
            raise RuntimeError("vramtrace offload: " + msg.decode())
        return rc

    def api(self):
        """The addresses of the hooks' functions (HOOK_FUNCTIONS)."""
        return tuple(ctypes.cast(getattr(self.lib, n), ctypes.c_void_p).value
                     for n in HOOK_FUNCTIONS)

    def enter(self, allocated):
        return self.check(self.lib.vramtrace_offload_enter(self.ptr,
                                                           allocated))

    def sample(self, allocated):
        self.lib.vramtrace_offload_sample(self.ptr, allocated)

    def peak(self, allocated):
        self.lib.vramtrace_offload_peak(self.ptr, allocated)

    def idle(self):
        """Whether the step entered may run without the hooks."""
        return self.lib.vramtrace_offload_idle(self.ptr) == 1

    def exit(self):
        self.check(self.lib.vramtrace_offload_exit(self.ptr))

    def backward_done(self):
        self.check(self.lib.vramtrace_offload_backward_done(self.ptr))

    def stats(self):
        s = Stats()
        self.lib.vramtrace_offload_stats(self.ptr, ctypes.byref(s))
        return {n: getattr(s, n) for n in STAT_NAMES}

    def free(self):
        if self.ptr:
            try:
                self._free(self.ptr)
            except Exception:  # interpreter shutdown
                pass
            self.ptr = None


# Autograd nodes of views: a tensor reached from a parameter's
# AccumulateGrad through these (and casts) alone is that parameter, seen
# another way.
_VIEW_NODES = frozenset((
    "TBackward0", "ViewBackward0", "TransposeBackward0",
    "PermuteBackward0", "ExpandBackward0", "AliasBackward0",
    "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1",
    "UnsafeViewBackward0", "ReshapeAliasBackward0"))
_CAST = "ToCopyBackward0"


def _of_parameter(t):
    """False, True, or the parameter when t is views of one cast of it."""
    fn, casts, last = t.grad_fn, 0, None
    for _ in range(8):
        if fn is None:
            return False
        name = type(fn).__name__
        if name == "AccumulateGrad":
            return fn.variable if casts == 1 and last == _CAST else True
        if (name not in _VIEW_NODES and name != _CAST) or \
                not fn.next_functions:
            return False
        casts += name == _CAST
        last = name
        fn = fn.next_functions[0][0]
    return False


def _written(saved, now):
    """The error of a saved tensor written in place since pack."""
    return RuntimeError(
        "vramtrace offload: a tensor saved for backward was written in "
        "place before backward used it (at version %s, saved at version %s): "
        "its gradient would be wrong; PyTorch refuses it the same way "
        "without saved-tensor hooks" % (now, saved))


def _cast_of(t, param, nbytes):
    """The handle of t, a cast of param that param.to(device, dtype) makes
    again (a whole, contiguous parameter on the GPU), or None."""
    if not (param.is_cuda and param.is_contiguous() and
            param.numel() * t.element_size() == nbytes):
        return None
    return (param, param._version, t.device, t.dtype, t.shape, t.stride(),
            t.storage_offset())


class PyHooks:
    """The saved-tensor hooks in Python over ctypes: the same arguments and
    behaviour as vramtrace._offload.Hooks (lib/offload-python.c)."""

    def __init__(self, api, engine, device, index, keep, torch_objs, memory,
                 on_backward):
        del api  # the C functions are called through the library
        self._lib = load_library()
        self._e = engine
        self._device, self._index, self._keep = device, index, keep
        (self._tensor, self._param, self._strided, self._empty,
         self._uint8, self._raw_stream, self._weakref,
         self._graph_task) = torch_objs
        self._memory, self._on_backward = memory, on_backward
        self._held, self._gens, self._watch, self._dtypes = {}, {}, [], {}
        self._versions, self._changed = {}, {}
        self._next_gen = 0
        self._learning = self._inside = self._backward = False
        self._desc, self._req = Tensor(), Request()
        self._id, self._n = ctypes.c_uint64(), ctypes.c_uint64()

    def _check(self, rc):
        if rc < 0:
            msg = self._lib.vramtrace_offload_error(self._e)
            raise RuntimeError("vramtrace offload: " + msg.decode())
        return rc

    def held(self):
        return self._held

    def begin(self, learning):
        self._learning = bool(learning)
        self._gens.clear()
        self._watch.clear()
        self._versions.clear()
        self._changed.clear()
        self._inside, self._backward = True, False

    def leave(self):
        self._inside = False

    def service(self, stream=None):
        lib, e, r = self._lib, self._e, self._req
        while lib.vramtrace_offload_next(e, ctypes.byref(r)):
            if r.kind == REQ_DROP:
                self._drop(r.id)
                continue
            if stream is None:
                stream = self._raw_stream(self._index)
            self._restore(r.id, r.bytes, stream)

    def _drop(self, tid):
        """Let go of what is held for tid, noting a source written in
        place since pack."""
        saved = self._versions.pop(tid, None)
        src = self._held.pop(tid, None)
        if saved is not None and src is not None and src._version != saved:
            self._changed[tid] = (saved, src._version)

    def _restore(self, tid, n, stream):
        buf = self._empty((n + 15) & ~15, dtype=self._uint8,
                          device=self._device)
        self._held[tid] = buf
        self._check(self._lib.vramtrace_offload_restore(
            self._e, tid, buf.data_ptr(), stream))

    def _generation(self, storage, ptr):
        cdata = storage._cdata
        seen = self._gens.get(ptr)
        if seen is not None and seen[1] == cdata:
            return seen[2]
        self._next_gen += 1
        if self._weakref is not None:
            self._gens[ptr] = (self._weakref(storage), cdata, self._next_gen)
        return self._next_gen

    def _alive(self, ptr, gen):
        seen = self._gens.get(ptr)
        return (seen is not None and seen[2] == gen and
                not seen[0].expired())

    def _in_backward(self):
        return self._graph_task is not None and self._graph_task() != -1

    def pack(self, t):
        if (self._in_backward() or type(t) not in (self._tensor, self._param)
                or not t.is_cuda or t.layout != self._strided or
                t.nbytes == 0):
            return t
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        es = t.element_size()
        shape, stride, off = t.shape, t.stride(), t.storage_offset()
        nbytes = t.nbytes
        span = (1 + sum((n - 1) * s for n, s in zip(shape, stride))) * es
        d = self._desc
        d.storage = ptr
        d.generation = self._generation(storage, ptr)
        version = t._version
        d.version = version & 0xffffffff
        d.offset, d.ndim, d.dtype = 0, 1, -1
        src, soff, boff = t, off, 0
        if storage.nbytes() <= 4 * nbytes:
            d.src, d.bytes = ptr, storage.nbytes()
            d.shape[0], d.stride[0] = d.bytes, 1
            boff = off
        else:
            d.offset, d.ndim = off, len(shape)
            for i in range(min(len(shape), MAX_DIMS)):
                d.shape[i], d.stride[i] = shape[i], stride[i]
            d.dtype = self._dtypes.setdefault(t.dtype, len(self._dtypes))
            if span > 2 * nbytes:
                src = t.clone()
                stride, soff = src.stride(), src.storage_offset()
                d.src, d.bytes = src.data_ptr(), nbytes
            else:
                d.src, d.bytes = ptr + off * es, span
        cast = None
        keep = (type(t) is self._param or (t.is_leaf and t.requires_grad)
                or ptr in self._keep or _of_parameter(t))
        if keep is not True and keep is not False:     # the parameter
            cast = _cast_of(t, keep, storage.nbytes())
            keep = True
        d.flags = KEEP_FLAG if keep else 0
        if cast is not None:
            d.flags |= RECOMPUTE_FLAG
            d.bytes = storage.nbytes()
        stream = self._raw_stream(self._index)
        rc = self._check(self._lib.vramtrace_offload_pack(
            self._e, ctypes.byref(d), stream, ctypes.byref(self._id)))
        if rc == KEPT:
            self.service(stream)
            return (t, version)
        if rc == RECOMPUTE:
            self.service(stream)
            return cast
        tid = self._id.value
        if rc == STASHED:
            self._held[tid] = src
            self._versions[tid] = src._version
        if rc != DEDUPED:
            self._watch.append((tid, d.storage, d.generation))
        self.service(stream)
        return (tid, t.dtype, shape, stride, soff, boff)

    def _reached(self, stream):
        mem = self._memory() if self._learning else -1
        self._check(self._lib.vramtrace_offload_reached(self._e, mem,
                                                        stream))
        self.service(stream)

    def _begin_backward(self):
        self._backward = True
        for tid, ptr, gen in self._watch:
            if tid not in self._held and self._alive(ptr, gen):
                self._check(self._lib.vramtrace_offload_alive(self._e, tid))
        self._watch.clear()
        if not self._inside:
            self._on_backward()

    def _unpack_cast(self, param, version, device, dtype, shape, stride,
                     off):
        if param._version != version:
            raise RuntimeError(
                "vramtrace offload: a parameter whose cast autograd saved "
                "was modified in place before backward: the cast cannot be "
                "made again")
        t = param.to(device, dtype).as_strided(shape, stride, off)
        self._reached(self._raw_stream(self._index))
        return t

    def unpack(self, h):
        lib, e = self._lib, self._e
        if not self._backward:
            self._begin_backward()
        if not isinstance(h, tuple) or len(h) == 2:
            if isinstance(h, tuple):
                h, saved = h
                if h._version != saved:
                    raise _written(saved, h._version)
            if h.is_cuda:
                self._reached(self._raw_stream(self._index))
            return h
        if len(h) == 7:
            return self._unpack_cast(*h)
        tid, dtype, shape, stride, soff, boff = h
        stream = self._raw_stream(self._index)
        n = self._n
        rc = self._check(lib.vramtrace_offload_unpack(e, tid, stream,
                                                      ctypes.byref(n)))
        if rc == NEED_BUFFER:
            self._restore(tid, n.value, stream)
            rc = self._check(lib.vramtrace_offload_unpack(e, tid, stream,
                                                          ctypes.byref(n)))
        t = self._held[tid]
        if tid in self._changed:
            raise _written(*self._changed[tid])
        if rc == FROM_STASH and tid in self._versions and \
                t._version != self._versions[tid]:
            raise _written(self._versions[tid], t._version)
        self.service(stream)
        self._reached(stream)
        if rc == FROM_STASH:
            return t.detach().as_strided(shape, stride, soff)
        return t.view(dtype).as_strided(shape, stride, boff)
