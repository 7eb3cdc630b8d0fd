#!/usr/bin/env python3
"""offload-python.py: the offload binding's saved-tensor hooks without a
GPU or torch, as TAP.

Drives vramtrace._offload.Hooks (the CPython extension) and
vramtrace._engine.PyHooks (the same hooks in Python over ctypes) with fake
tensors over the engine built on a fake runtime (tests/libfake-offload.so,
loaded as VRAMTRACE_LIBRARY), through steps whose backward runs after the
context: a tensor saved twice, a parameter, a small tensor, a storage of
the model's, views that show most of a storage, a narrow view of a wide
one, a view of a cast of a parameter (made again at unpack, refused once
the parameter changed in place).  Both must give back the same views, ask for the same buffers, call
on_backward once a step, hold nothing at the end; the extension must leak
no reference over many steps.  A tensor written in place after it was
saved must be refused at unpack wherever the bytes given back could be
the written ones, and never taken for its earlier copy.

    offload-python.py EXTENSION.so PACKAGE_DIR
"""

import gc
import importlib.util
import sys
import weakref

ext_path, pkg = sys.argv[1], sys.argv[2]
sys.path.insert(0, pkg)
from vramtrace import _engine  # noqa: E402

spec = importlib.util.spec_from_file_location("vramtrace._offload", ext_path)
ext = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ext)

STRIDED = object()
_next_ptr = [1 << 32]


class Dtype:
    def __init__(self, name, size):
        self.name, self.size = name, size


F32, BF16, U8 = Dtype("f32", 4), Dtype("bf16", 2), Dtype("u8", 1)


class Storage:
    def __init__(self, n):
        self.ptr = _next_ptr[0]
        _next_ptr[0] += ((n + 4095) & ~4095) + 4096
        self.n = n
        self._cdata = self.ptr * 7
        self.version = 0        # autograd's counter, shared by views

    def data_ptr(self):
        return self.ptr

    def nbytes(self):
        return self.n


class WeakRef:
    def __init__(self, storage):
        self.r = weakref.ref(storage)

    def expired(self):
        return self.r() is None


class AccumulateGrad:
    """Autograd's nodes, by the names the hooks know them."""
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable


class ToCopyBackward0:
    def __init__(self, nxt):
        self.next_functions = ((nxt, 0),)


class TBackward0(ToCopyBackward0):
    pass


class Tensor:
    is_cuda = True
    layout = STRIDED
    grad_fn = None
    is_leaf = False
    requires_grad = False
    device = "cuda:0"

    @property
    def _version(self):
        return self._s.version

    @_version.setter
    def _version(self, v):
        self._s.version = v

    def __init__(self, storage, shape, stride, offset=0, dtype=F32):
        self._s, self.shape, self._stride = storage, tuple(shape), \
            tuple(stride)
        self._off, self.dtype = offset, dtype

    @property
    def nbytes(self):
        n = self.dtype.size
        for d in self.shape:
            n *= d
        return n

    def untyped_storage(self):
        return self._s

    def element_size(self):
        return self.dtype.size

    def stride(self):
        return self._stride

    def storage_offset(self):
        return self._off

    def data_ptr(self):
        return self._s.ptr + self._off * self.dtype.size

    def clone(self):
        stride, step = [], 1
        for d in reversed(self.shape):
            stride.insert(0, step)
            step *= d
        return Tensor(Storage(self.nbytes), self.shape, stride, 0,
                      self.dtype)

    def detach(self):
        return Tensor(self._s, self.shape, self._stride, self._off,
                      self.dtype)

    def as_strided(self, shape, stride, offset):
        return Tensor(self._s, shape, stride, offset, self.dtype)

    def view(self, dtype):
        return Tensor(self._s, (self._s.n // dtype.size,), (1,), 0, dtype)

    def numel(self):
        return self.nbytes // self.dtype.size

    def is_contiguous(self):
        return True

    def to(self, device, dtype):
        return Tensor(Storage(self.numel() * dtype.size), self.shape,
                      self._stride, 0, dtype)

    def describe(self):
        return (self._s.n, self.shape, self._stride, self._off,
                self.dtype.name)


class Parameter(Tensor):
    is_leaf = True
    requires_grad = True


def run(hooks_class, steps, measure):
    """steps steps of one little model; returns what each step's
    backward got back, the buffers asked for, on_backward's calls and the
    engine's counters."""
    cfg = _engine.default_config()
    cfg.device, cfg.min_offload_size, cfg.prefetch = 0, 1024, 1 << 30
    eng = _engine.Engine(cfg)
    buffers, backs = [], []

    def empty(n, dtype, device):
        buffers.append(n)
        return Tensor(Storage(n), (n,), (1,), 0, U8)

    weights = Tensor(Storage(1 << 16), (128, 128), (128, 1))
    keep = {weights.untyped_storage().data_ptr()}
    torch_objs = (Tensor, Parameter, STRIDED, empty, U8, lambda i: 7,
                  WeakRef, lambda: -1)
    hooks = hooks_class(eng.api(), eng.ptr, "cuda:0", 0, keep, torch_objs,
                        lambda: 1 << 20, lambda: backs.append(1))
    param = Parameter(Storage(4096), (1024,), (1,))
    weight = Parameter(Storage(64 * 128 * 4), (64, 128), (128, 1))
    out = []
    for _ in range(steps):
        learning = eng.enter(1 << 20 if measure else -1)
        hooks.service()
        hooks.begin(learning == 1)
        x = Tensor(Storage(1 << 20), (256, 1024), (1024, 1))
        qkv = Storage(3 * (1 << 18))
        q = Tensor(qkv, (512, 256), (768, 1), 0, BF16)
        k = Tensor(qkv, (512, 256), (768, 1), 256, BF16)
        wide = Tensor(Storage(1 << 22), (64, 8), (1024, 1), 3)
        cast = Tensor(Storage(64 * 128 * 2), (128, 64), (1, 128), 0, BF16)
        cast.grad_fn = TBackward0(ToCopyBackward0(AccumulateGrad(weight)))
        # A narrow view of the same cast (a dense copy if offloaded): made
        # again whole, viewed where it was.
        narrow = Tensor(cast.untyped_storage(), (16, 32), (128, 1), 130,
                        BF16)
        narrow.grad_fn = cast.grad_fn
        saved = [x, x, param, Tensor(Storage(64), (16,), (1,)), weights,
                 q, k, wide.as_strided((64, 8), (1024, 1), 3), cast, narrow]
        handles = [hooks.pack(t) for t in saved]
        kinds = tuple(h is t or (isinstance(h, tuple) and len(h) == 2 and
                                 h[0] is t) for h, t in zip(handles, saved))
        # Autograd alone keeps what was saved.
        del saved, x, qkv, q, k, wide, cast, narrow
        eng.exit()
        hooks.service()
        hooks.leave()
        back = [hooks.unpack(h) for h in reversed(handles)]
        eng.backward_done()
        hooks.service()
        out.append((kinds, [b.describe() for b in back], len(hooks.held())))
    stats = eng.stats()
    eng.free()
    return out, buffers, backs, stats


def changed_cast(hooks_class):
    """Pack a cast of a parameter, change the parameter in place, unpack:
    returns the error unpack raised, or None."""
    cfg = _engine.default_config()
    cfg.device = 0
    eng = _engine.Engine(cfg)
    torch_objs = (Tensor, Parameter, STRIDED, None, U8, lambda i: 7, WeakRef,
                  None)
    hooks = hooks_class(eng.api(), eng.ptr, "cuda:0", 0, set(), torch_objs,
                        lambda: 1 << 20, lambda: None)
    weight = Parameter(Storage(1 << 16), (128, 128), (128, 1))
    cast = Tensor(Storage(1 << 15), (128, 128), (128, 1), 0, BF16)
    cast.grad_fn = ToCopyBackward0(AccumulateGrad(weight))
    eng.enter(-1)
    hooks.begin(False)
    handle = hooks.pack(cast)
    weight._version += 1
    err = None
    try:
        hooks.unpack(handle)
    except RuntimeError as exc:
        err = str(exc)
    eng.exit()
    hooks.service()
    hooks.leave()
    eng.free()
    return err


def written(hooks_class, case):
    """Save large tensors a and b or a small one, write a (or the small
    one) in place where case says, unpack in backward's order: returns the
    error unpack raised (or None), the engine's copies and dedupe hits.
    kept: the small one, kept on the GPU; held: a, while its source is
    held (b's pack lets it go); source: a, given back from its source
    (backward inside the context); after: a, once b's pack let it go, then
    saved again."""
    cfg = _engine.default_config()
    cfg.device, cfg.min_offload_size = 0, 1024
    eng = _engine.Engine(cfg)
    torch_objs = (Tensor, Parameter, STRIDED,
                  lambda n, dtype, device: Tensor(Storage(n), (n,), (1,), 0,
                                                  U8),
                  U8, lambda i: 7, WeakRef, lambda: -1)
    hooks = hooks_class(eng.api(), eng.ptr, "cuda:0", 0, set(), torch_objs,
                        lambda: 1 << 20, lambda: None)
    a, b = (Tensor(Storage(1 << 20), (256, 1024), (1024, 1))
            for _ in range(2))
    small = Tensor(Storage(64), (16,), (1,))
    eng.enter(-1)
    hooks.begin(False)
    if case == "kept":
        handles = [hooks.pack(small)]
        small._version += 1
    else:
        handles = [hooks.pack(a)]
        if case == "held":
            a._version += 1
        if case != "source":
            handles.append(hooks.pack(b))
        if case == "after":
            a._version += 1
            handles.append(hooks.pack(a))
        if case == "source":
            a._version += 1
    err = None
    try:
        if case != "source":
            eng.exit()
            hooks.service()
            hooks.leave()
        for h in reversed(handles):
            hooks.unpack(h)
    except RuntimeError as exc:
        err = str(exc)
    if case == "source":
        eng.exit()
        hooks.service()
        hooks.leave()
    eng.backward_done()
    hooks.service()
    st = eng.stats()
    eng.free()
    return err, st["offloads"], st["dedupe_hits"]


def in_backward(hooks_class):
    """Pack a large tensor while autograd's graph task id says a backward
    runs (a reentrant checkpoint's recompute), then once outside: returns
    what each pack returned and the engine's packs after each."""
    cfg = _engine.default_config()
    cfg.device = 0
    eng = _engine.Engine(cfg)
    task = [-1]
    torch_objs = (Tensor, Parameter, STRIDED,
                  lambda n, dtype, device: Tensor(Storage(n), (n,), (1,), 0,
                                                  U8),
                  U8, lambda i: 7, WeakRef, lambda: task[0])
    hooks = hooks_class(eng.api(), eng.ptr, "cuda:0", 0, set(), torch_objs,
                        lambda: 1 << 20, lambda: None)
    t = Tensor(Storage(1 << 20), (256, 1024), (1024, 1))
    eng.enter(-1)
    hooks.begin(False)
    task[0] = 3
    during = hooks.pack(t)
    packs = [eng.stats()["packs"]]
    task[0] = -1
    after = hooks.pack(t)
    packs.append(eng.stats()["packs"])
    eng.exit()
    hooks.service()
    hooks.leave()
    hooks.unpack(after)
    eng.backward_done()
    hooks.service()
    eng.free()
    return during is t, after is t, packs


def main():
    tests = []

    def ok(cond, what):
        tests.append((bool(cond), what))

    for measure in (False, True):
        c_out, c_buf, c_back, c_st = run(ext.Hooks, 3, measure)
        p_out, p_buf, p_back, p_st = run(_engine.PyHooks, 3, measure)
        tag = "measured" if measure else "unmeasured"
        ok(c_out == p_out, "%s: extension and Python hooks give back the "
           "same views" % tag)
        ok(c_buf == p_buf and len(c_buf) > 0,
           "%s: both ask for the same buffers (%d)" % (tag, len(c_buf)))
        ok(c_back == [1, 1, 1] and p_back == c_back,
           "%s: on_backward once a step, backward after the context" % tag)
        ok(all(held == 0 for _, _, held in c_out + p_out),
           "%s: nothing held after backward" % tag)
        same = {k: (c_st[k], p_st[k]) for k in c_st if c_st[k] != p_st[k]}
        ok(not same, "%s: same engine counters %s" % (tag, same or ""))
        kinds, back, _ = c_out[0]
        ok(kinds == (False, False, True, True, True, False, False, False,
                     False, False),
           "%s: parameter, small tensor and model storage stay; the rest "
           "is offloaded or made again" % tag)
        ok(back[-1] == (1 << 20, (256, 1024), (1024, 1), 0, "f32") and
           back[3] == (3 << 18, (512, 256), (768, 1), 256, "bf16") and
           back[2] == (2048, (64, 8), (8, 1), 0, "f32"),
           "%s: views rebuilt: dense, a view of a whole storage, a compact "
           "copy" % tag)
        ok(back[1] == (64 * 128 * 2, (128, 64), (1, 128), 0, "bf16") and
           back[0] == (64 * 128 * 2, (16, 32), (128, 1), 130, "bf16") and
           c_st["recomputed"] == 6 and
           c_st["recomputed_bytes"] == 6 * 64 * 128 * 2 and
           c_st["kept_bytes"] == 3 * (4096 + 64 + (1 << 16)),
           "%s: a cast of a parameter is made again and viewed as it was, "
           "never kept (%d made again)" % (tag, c_st["recomputed"]))
        if measure:
            ok(c_st["learning_steps"] == 1 and c_st["profile_hooks"] > 0,
               "measured: one learning step, then the profile")
        else:
            ok(c_st["prefetches"] == 9 and c_st["bwd_waits"] == 0 and
               c_st["dedupe_hits"] == 6,
               "unmeasured: after the context, the first unpack (the cast "
               "made again) brings back ahead all the others; two dedupe "
               "hits a step (%d on demand)" % c_st["bwd_waits"])

    for name, hooks_class in (("extension", ext.Hooks),
                              ("Python hooks", _engine.PyHooks)):
        err = changed_cast(hooks_class)
        ok(err is not None and "modified in place" in err,
           "%s: a parameter changed in place: its cast is refused (%s)" % (
               name, err))

    for name, hooks_class in (("extension", ext.Hooks),
                              ("Python hooks", _engine.PyHooks)):
        for case, what in (("kept", "kept on the GPU"),
                           ("held", "while its source was held"),
                           ("source", "given back from its source")):
            err, _, _ = written(hooks_class, case)
            ok(err is not None and "written in place" in err and
               "at version 1, saved at version 0" in err,
               "%s: a tensor written in place after it was saved, %s: "
               "unpack refuses it (%s)" % (name, what, err))
        err, copies, hits = written(hooks_class, "after")
        ok(err is None and copies == 3 and hits == 0,
           "%s: written after its copy was done and let go: comes back "
           "from the copy, and saved again it is a copy of its own (%s, "
           "%d copies, %d hits)" % (name, err, copies, hits))

    for name, hooks_class in (("extension", ext.Hooks),
                              ("Python hooks", _engine.PyHooks)):
        during, after, packs = in_backward(hooks_class)
        ok(during and not after and packs == [0, 1],
           "%s: a tensor saved while a backward runs stays, without the "
           "engine; the same outside is offloaded (packs %s)" % (name,
                                                                 packs))

    # A reference leaked a step would keep its objects: compare 5 steps
    # with 105.
    run(ext.Hooks, 5, True)
    gc.collect()
    objects = len(gc.get_objects())
    run(ext.Hooks, 105, True)
    gc.collect()
    grown = len(gc.get_objects()) - objects
    ok(grown < 50, "extension: 100 more steps leak nothing (%d objects "
       "more)" % grown)

    print("1..%d" % len(tests))
    for i, (good, what) in enumerate(tests, 1):
        print("%s %d - %s" % ("ok" if good else "not ok", i, what))
    return 0 if all(g for g, _ in tests) else 1


if __name__ == "__main__":
    sys.exit(main())
