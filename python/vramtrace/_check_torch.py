"""The offload check: any saved-tensor-hooks engine, unchanged.

Where it hooks.  Every engine built on saved-tensor hooks installs its
pack and unpack pair through torch._C._autograd.
_push_saved_tensors_default_hooks: torch.autograd.graph.saved_tensors_hooks
.__enter__ calls it, and so every subclass of it does (save_on_cpu, TRL's
and torchtune's OffloadActivations, ours, their no-op managers), while
engines that keep the hooks stack themselves (Megatron's offload handlers)
call it directly.  install() replaces that function, on torch._C._autograd
and wherever torch imported it by name, by one that pushes a wrapped
pair, and the pop next to it by one that counts the stack's depth.  Nesting needs nothing more:
each push is wrapped on its own, and only the innermost pair runs.  A
pair that is already ours (code that reads the top of the stack and
pushes it again) is pushed as it is.  torch.utils.checkpoint's own pairs
are left alone: their unpack recomputes, which is not an offload.

What it does.  At pack, before the engine's hook runs, the wrapper takes
a fingerprint of the tensor (_check.Meta and the checksums below) on the
current stream, the producer's, and the stack; the engine's handle goes
to autograd inside a _Packed.  At unpack, after the engine's hook
returned, it takes the same fingerprint of what came back on the current
stream, the consumer's: a copy the consumer did not wait for shows as a
difference.  Nothing waits for the GPU per tensor: the pairs are
compared in one batch when a step ends (flush: a few kernels, the result
copied to pinned memory behind an event) and the result is read once the
event has completed (harvest, at a later step end, or at the end).

Checksums.  The elements are read as integers of their size (bfloat16 as
int16, bool as uint8, complex as pairs of floats), gathered into 4-byte
words along the last dimension (two bfloat16 or four bytes to a word; a
copy only when that dimension is not dense in memory), and summed in the
words' own integer type, wrapping, along two directions of the logical
shape split in two at a dimension: one sum per row and one per column.
Integer sums do not depend on their order, and a wider type would cost a
full copy of the tensor (torch widens before it reduces).  Changing any
element changes its row's and its column's sum; moving elements within a
row changes column sums and within a column row sums.  Small tensors (at
most FLAT_COLS words) are kept whole instead.  The split depends on the
shape alone, so a contiguous copy of a strided view gets the same
checksums; when no dimension splits the shape into halves of at most
BALANCE_MAX, or the last dimension does not split into words, the tensor
is flattened into rows of FLAT_COLS words (a copy when it is not
contiguous).
"""
import math
import sys
import threading
import time

import torch

from vramtrace import _check, _steps

try:
    from torch.multiprocessing.reductions import StorageWeakRef
except ImportError:
    StorageWeakRef = None

__all__ = ["check_offload", "install", "uninstall"]

FLAT_COLS = 4096
BALANCE_MAX = 1 << 18
PENDING_MAX = 8192      # unpacked pairs that trigger a flush mid-step
_INTS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_MARK = "_vramtrace_check"
_SKIP_MODULES = ("torch.utils.checkpoint",)
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling",
                     lambda: False)
_current_node = getattr(torch._C, "_current_autograd_node", lambda: None)
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
    (lambda index: torch.cuda.current_stream(index).cuda_stream)


def _plan(shape, _cache={}):
    """How to sum a tensor of this shape: ("whole",), ("dims", rows dims,
    cols dims) or ("flat",)."""
    plan = _cache.get(shape)
    if plan is not None:
        return plan
    n = math.prod(shape)
    plan = ("whole",)
    if n > FLAT_COLS:
        best, k = None, 0
        for i in range(1, len(shape)):
            r = math.prod(shape[:i])
            m = max(r, n // r)
            if best is None or m < best:
                best, k = m, i
        plan = ("flat",)
        if best is not None and best <= BALANCE_MAX:
            plan = ("dims", tuple(range(k, len(shape))), tuple(range(k)))
    _cache[shape] = plan
    return plan


def _words(v):
    """v, an integer view of a tensor's elements, as 4- or 8-byte words in
    the same logical order: the same shape but for the last dimension,
    along which 1- and 2-byte elements go 4 or 2 to a word (a copy when
    that dimension is not dense).  None when it does not split evenly."""
    if v.element_size() >= 4:
        return v
    if v.dim() == 0 or v.shape[-1] % (4 // v.element_size()):
        return None
    try:
        return v.view(torch.int32)
    except RuntimeError:        # not dense along it, or misaligned
        return v.contiguous().view(torch.int32)


def _sums(t):
    """The checksums of t's elements: a list of int32 or int64 tensors on
    its device, queued on its current stream; None when the elements
    cannot be read (a subclass, another layout, a quantized tensor).
    Sums are taken in the words' own type (wrapping), never through a
    wider copy."""
    if (type(t) not in _PLAIN or t.layout != torch.strided
            or t.is_quantized or t.device.type == "meta"):
        return None
    if t.numel() == 0:
        return []
    v = t.detach()
    if v.is_complex():
        v = torch.view_as_real(v.resolve_conj())
    if v.is_neg():
        v = v.resolve_neg()
    v = v.view(_INTS[v.element_size()])
    w, out = _words(v), []
    if w is None:               # flattened: whole words, the rest alone
        f = v.reshape(-1)
        n = f.numel() - f.numel() % (4 // f.element_size())
        w = _words(f[:n])
        out.append(f[n:].clone())
    plan = _plan(tuple(w.shape))
    # Every checksum is a new tensor, never a view of the packed memory.
    if plan[0] == "whole":
        return [w.reshape(-1).clone()] + out
    if plan[0] == "dims":
        return [w.sum(plan[1], dtype=w.dtype),
                w.sum(plan[2], dtype=w.dtype)] + out
    f = w.reshape(-1)
    r = f.numel() // FLAT_COLS
    m = f[:r * FLAT_COLS].view(r, FLAT_COLS)
    return [m.sum(1, dtype=w.dtype), m.sum(0, dtype=w.dtype),
            f[r * FLAT_COLS:].clone()] + out


_dtype_names = {}
_cuda_names = {}


def fingerprint(t):
    """(Meta, checksums) of tensor t; see the module's docstring."""
    sums = _sums(t)
    name = _dtype_names.get(t.dtype)
    if name is None:
        name = _dtype_names[t.dtype] = str(t.dtype).replace("torch.", "")
    if t.is_cuda:
        device = _cuda_names.get(t.get_device())
        if device is None:
            device = _cuda_names[t.get_device()] = str(t.device)
    else:
        device = str(t.device)
    strides = t.stride() if t.layout == torch.strided else None
    meta = _check.Meta(t.shape, name, device, strides,
                       t.numel() * t.element_size(),
                       None if sums is None else
                       sum(s.numel() for s in sums))
    return meta, sums


class _Packed:
    """What autograd keeps for a checked saved tensor: the engine's own
    handle, the pack's Pair, and a weak reference to the packed storage
    (to tell whether what comes back is that same memory)."""
    __slots__ = ("handle", "pair", "ref", "ptr")


def _engine_name(frame, pack_hook):
    """The class of the engine pushing a pair: the `self` of the frame
    that called push (saved_tensors_hooks.__enter__ or an engine's own
    __enter__), else the hook's own class or name."""
    owner = frame.f_locals.get("self") if frame is not None else None
    if owner is None:
        owner = getattr(pack_hook, "__self__", None)
    if owner is not None:
        cls = type(owner)
        return "%s.%s" % (cls.__module__, cls.__qualname__)
    return "%s.%s" % (getattr(pack_hook, "__module__", "?"),
                      getattr(pack_hook, "__qualname__", "?"))


def _cat(pairs, back=False):
    """The checksums of pairs (of their unpack when back) end to end, as
    one int64 tensor."""
    return torch.cat([x.view(-1) for p in pairs
                      for x in (p.back_fp if back else p.fp)]).long()


class _Checker:
    """The process's checker: wraps pairs, keeps the pairs waiting to be
    compared and the comparisons in flight, and ends steps."""

    def __init__(self):
        self.ledger = _check.Ledger(_check.Emitter())
        self.step = 0
        self.index = 0
        self.marked = False         # vramtrace.step() was seen
        self.lock = threading.Lock()
        self.pending = []           # unpacked Pairs not yet flushed
        self.streams = set()        # (device index, stream) they used
        self.inflight = []          # (event, host counts, pairs, keep)
        self.local = threading.local()
        self.warned = False

    # The hooks ---------------------------------------------------------

    def wrap(self, pack, unpack, engine):
        def pack_hook(t):
            p = self.packed(t, engine)
            h = pack(t)
            if p is None:
                return h
            p.handle = h
            return p

        def unpack_hook(p):
            if type(p) is not _Packed:
                return unpack(p)
            u = unpack(p.handle)
            self.unpacked(p, u)
            return u

        setattr(pack_hook, _MARK, True)
        setattr(unpack_hook, _MARK, True)
        return pack_hook, unpack_hook

    def _failed(self, e):
        """Something of ours failed: say it once; the program goes on and
        what was being checked is not."""
        if not self.warned:
            self.warned = True
            sys.stderr.write("vramtrace: offload check: %s: %s (what was "
                             "being checked is not)\n"
                             % (type(e).__name__, e))

    def _stream(self, t):
        if t.is_cuda:
            key = (t.get_device(), _raw_stream(t.get_device()))
            with self.lock:
                self.streams.add(key)

    def packed(self, t, engine):
        try:
            if not isinstance(t, torch.Tensor) or _compiling():
                return None
            meta, fp = fingerprint(t)
            self._stream(t)
            device = t.get_device() if t.is_cuda else -1
            pair = _check.Pair(engine, self.step, self.index, meta, fp,
                               _check.capture(2), time.time_ns(), device)
            self.index += 1
            p = _Packed()
            p.pair = pair
            p.ptr = p.ref = None
            if fp is not None:
                storage = t.untyped_storage()
                p.ptr = storage.data_ptr()
                if StorageWeakRef is not None:
                    p.ref = StorageWeakRef(storage)
        except Exception as e:  # the traced program goes on unchecked
            self._failed(e)
            return None
        self.ledger.packed(pair)
        return p

    def unpacked(self, p, u):
        pair = p.pair
        try:
            pair.unpack_ns = time.time_ns()
            node = _current_node()
            pair.node = type(node).__name__ if node is not None else None
            pair.back_frames = _check.capture(2)
            moved = True
            if isinstance(u, torch.Tensor):
                pair.unpacked, pair.back_fp = fingerprint(u)
                self._stream(u)
                moved = not (p.ref is not None and not p.ref.expired() and
                             u.untyped_storage().data_ptr() == p.ptr)
            else:
                pair.returned = type(u).__name__
        except Exception as e:
            self._failed(e)
            return
        self.ledger.unpacked(pair, moved)
        with self.lock:
            self.pending.append(pair)
            full = len(self.pending) >= PENDING_MAX
        if full:
            try:
                self.flush()
            except Exception as e:
                self._failed(e)

    # Step ends ---------------------------------------------------------

    def pushed(self, depth):
        """An engine's pair was pushed at this depth of the thread's
        stack: at the top, without step markers and after a pack, a step
        ends."""
        if depth == 0 and not self.marked and self.index > 0:
            self.end_step()

    def marker(self):
        """vramtrace.step() was called."""
        self.marked = True
        self.end_step()

    def end_step(self):
        self.step += 1
        self.index = 0
        try:
            self.flush()
            self.harvest(block=False)
            self.ledger.send(before=self.step)
        except Exception as e:
            self._failed(e)

    def flush(self):
        """Queue the comparison of every unpacked pair; decide at once
        about those whose metadata differ or whose contents are on the
        host."""
        with self.lock:
            pairs, self.pending = self.pending, []
            streams, self.streams = self.streams, set()
        gpu = {}
        for pair in pairs:
            m, u = pair.meta, pair.unpacked
            bits = _check.differences(m, u)
            if not _check.comparable(bits, m, u):
                self.ledger.judge(pair, None)
            elif m.sums == 0:
                self.ledger.judge(pair, 0)
            elif pair.fp[0].device.type != "cuda":
                a, b = _cat([pair]), _cat([pair], back=True)
                self.ledger.judge(pair, int((a != b).sum()))
            else:
                gpu.setdefault(pair.fp[0].device, []).append(pair)
        for device, group in gpu.items():
            self._compare(device, group, streams)

    def _compare(self, device, pairs, streams):
        """Queue, on device's current stream, the count of differing
        checksums of every pair, copied to pinned memory."""
        with torch.cuda.device(device):
            cur = torch.cuda.current_stream()
            for index, ptr in streams:
                if index == device.index and ptr != cur.cuda_stream:
                    cur.wait_stream(torch.cuda.ExternalStream(ptr,
                                                              device=device))
            a, b = _cat(pairs), _cat(pairs, back=True)
            ends = [0]
            for p in pairs:
                ends.append(ends[-1] + p.meta.sums)
            at = torch.tensor(ends, dtype=torch.int64).pin_memory()
            c = torch.cat([torch.zeros(1, dtype=torch.int64, device=device),
                           (a != b).cumsum(0)])
            g = c[at.to(device, non_blocking=True)]
            counts = torch.empty(len(pairs), dtype=torch.int64,
                                 pin_memory=True)
            counts.copy_(g[1:] - g[:-1], non_blocking=True)
            done = torch.cuda.Event()
            done.record(cur)
        # The pairs keep their checksums, made on other streams maybe,
        # alive until the comparison is done.
        with self.lock:
            self.inflight.append((done, counts, pairs, at))

    def harvest(self, block):
        """Judge the pairs whose comparison has completed (all of them,
        waiting, when block)."""
        ready, waiting = [], []
        with self.lock:
            for f in self.inflight:
                (ready if block or f[0].query() else waiting).append(f)
            self.inflight = waiting
        for done, counts, pairs, _ in ready:
            done.synchronize()
            for p, n in zip(pairs, counts.tolist()):
                p.fp = p.back_fp = None
                self.ledger.judge(p, n)

    def finish(self):
        """Compare everything still waiting and send every tally."""
        try:
            self.flush()
            self.harvest(block=True)
        except Exception as e:
            self._failed(e)
        self.ledger.send()


_checker = None
_users = 0
_install_lock = threading.Lock()
_originals = {}


def _depth(delta):
    local = _checker.local if _checker is not None else None
    if local is None:
        return 0
    d = getattr(local, "depth", 0)
    local.depth = max(d + delta, 0)
    return d


def _push(pack_hook, unpack_hook):
    push = _originals["push"]
    c = _checker
    if c is None or getattr(pack_hook, _MARK, False):
        _depth(1)
        return push(pack_hook, unpack_hook)
    engine = _engine_name(sys._getframe(1), pack_hook)
    if engine.startswith(_SKIP_MODULES):
        _depth(1)
        return push(pack_hook, unpack_hook)
    c.pushed(_depth(1))
    return push(*c.wrap(pack_hook, unpack_hook, engine))


def _pop():
    _depth(-1)
    return _originals["pop"]()


def _holders():
    """The modules that may hold torch's push function: its own, and
    those that imported it by name."""
    return (torch._C._autograd, torch.autograd, torch.autograd.graph)


def install():
    """Check every saved-tensor-hooks pair pushed from now on (counted:
    as many uninstall() calls undo it).  Returns the process's checker."""
    global _checker, _users
    with _install_lock:
        _users += 1
        if _checker is not None:
            return _checker
        _checker = _Checker()
        ag = torch._C._autograd
        _originals["push"] = ag._push_saved_tensors_default_hooks
        _originals["pop"] = ag._pop_saved_tensors_default_hooks
        for mod in _holders():
            if getattr(mod, "_push_saved_tensors_default_hooks", None) is \
                    _originals["push"]:
                mod._push_saved_tensors_default_hooks = _push
                mod._pop_saved_tensors_default_hooks = _pop
        if torch.__path__[0] + "/" not in _check.SKIP_DIRS:
            _check.SKIP_DIRS.append(torch.__path__[0] + "/")
        _steps.listeners.append(_checker.marker)
        return _checker


def uninstall():
    """Undo one install(); the last one compares what is left, sends the
    tallies and puts torch's functions back."""
    global _checker, _users
    with _install_lock:
        if _users == 0:
            return
        _users -= 1
        if _users > 0:
            return
        c, _checker = _checker, None
        for mod in _holders():
            if getattr(mod, "_push_saved_tensors_default_hooks", None) is \
                    _push:
                mod._push_saved_tensors_default_hooks = _originals["push"]
                mod._pop_saved_tensors_default_hooks = _originals["pop"]
        _steps.listeners.remove(c.marker)
    c.finish()


class check_offload:
    """Check every activation offload engine used inside:

        with vramtrace.torch.check_offload() as chk:
            train()
        chk.diffs       # the saved tensors that came back different

    Tensors saved within count, whatever the engine (see the module's
    docstring); steps end at vramtrace.step() or, without it, whenever an
    engine's context is entered at the top.  Leaving compares what is
    left (waiting for the GPU once) and, when something came back
    different, says so in one line on stderr.  `vramtrace record
    --check-offload` does the same for a whole run, into the recording."""

    def __enter__(self):
        self._checker = install()
        self._first = len(self._checker.ledger.diffs)
        self._checked = self._checker.ledger.checked
        self._engines = dict(self._checker.ledger.engines)
        return self

    def __exit__(self, *exc):
        c = self._checker
        c.finish()
        uninstall()
        if self.diffs:
            sys.stderr.write("vramtrace: %s\n" % self.summary())
        return False

    @property
    def diffs(self):
        """The differences found so far (_check.Diff), first pack first."""
        return self._checker.ledger.diffs[self._first:]

    @property
    def engines(self):
        """How many tensors each engine (by class) packed so far."""
        before = self._engines
        return {k: n - before.get(k, 0) for k, n in
                self._checker.ledger.engines.items()
                if n > before.get(k, 0)}

    @property
    def checked(self):
        """How many saved tensors were compared so far."""
        return self._checker.ledger.checked - self._checked

    def summary(self):
        """The summary line ("offload check: N of M saved tensors ...")."""
        return self._checker.ledger.summary(self._first, self._checked)


def install_for_run():
    """The sitecustomize's way (`vramtrace record --check-offload`):
    install for the whole process and say the summary line at exit."""
    import atexit
    c = install()

    def report():
        c.finish()
        sys.stderr.write("vramtrace: %s\n" % c.ledger.summary())

    atexit.register(report)
