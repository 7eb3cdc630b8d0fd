"""The offload check's bookkeeping, without torch.

vramtrace._check_torch wraps the pack and unpack hooks of every engine
built on saved-tensor hooks; for each saved tensor it takes a fingerprint
of what pack received and of what unpack returned.  This module holds
what needs no torch, so that plain python3 can test it
(tests/check-compare.py): what "came back the same" means and how a
difference is put in words, the pack and unpack sites, what each engine
did in each step, the differences found and the summary line, and the way
all of it reaches a recording (libvramtrace.so through ctypes).

The same tensor.  What unpack returns is the same as what pack received
when it has the same shape, dtype and device, and the same elements bit
for bit in the logical (row-major) order of the shape.  Strides and the
storage offset are not compared: an engine may give back a contiguous
copy of a strided view, an expanded tensor materialized, or a view into a
larger buffer, and autograd's formulas read values, not layouts.  A
different layout is named in the words of a difference that has another
cause.  Elements are compared through exact integer sums of their bits
(Meta.sums: how many there are; see _check_torch.fingerprint), never
through float arithmetic.

Steps.  A step ends at every vramtrace.step() (what `vramtrace record
--torch-steps` calls after each optimizer step); a process that never
calls it ends a step whenever an engine's context is entered at the top
of the hooks stack (one forward and backward per context, TRL's way).
A saved tensor belongs to the step of its pack.
"""
import ctypes
import os
import sys
import threading

from vramtrace import _library

__all__ = ["SHAPE", "DTYPE", "DEVICE", "CONTENTS", "NOT_TENSOR", "STRIDES",
           "Meta", "Pair", "Ledger", "Emitter", "after_import", "capture",
           "differences"]

# What differs; the same bits as libvramtrace.h's VRAMTRACE_CHECK_*.
SHAPE, DTYPE, DEVICE, CONTENTS, NOT_TENSOR, STRIDES = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20)
_INCOMPARABLE = SHAPE | DTYPE | DEVICE | NOT_TENSOR
_NAMES = ((SHAPE, "shape"), (DTYPE, "dtype"), (DEVICE, "device"),
          (CONTENTS, "contents"), (NOT_TENSOR, "not a tensor"),
          (STRIDES, "strides"))

STACK_DEPTH = 12        # frames kept of a pack or unpack site

# Directories whose frames are never a site's FILE:LINE (torch's own code,
# ours); _check_torch adds torch's at install.
SKIP_DIRS = [os.path.dirname(os.path.abspath(__file__)) + os.sep]


class Meta:
    """What the checker knows of a tensor on the host: shape, dtype name,
    device ("cuda:0", "cpu"), strides (None when not strided), bytes of
    its elements, and how many checksums its fingerprint has (None when
    its contents cannot be read: a tensor subclass, a sparse layout)."""
    __slots__ = ("shape", "dtype", "device", "strides", "nbytes", "sums")

    def __init__(self, shape, dtype, device, strides, nbytes, sums):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        self.strides, self.nbytes, self.sums = strides, nbytes, sums


def differences(packed, unpacked):
    """The bits of what differs between two Metas, contents aside;
    unpacked is None when unpack returned no tensor."""
    if unpacked is None:
        return NOT_TENSOR
    bits = 0
    if packed.shape != unpacked.shape:
        bits |= SHAPE
    if packed.dtype != unpacked.dtype:
        bits |= DTYPE
    if packed.device != unpacked.device:
        bits |= DEVICE
    if packed.strides != unpacked.strides:
        bits |= STRIDES
    return bits


def comparable(bits, packed, unpacked):
    """Whether the contents of two tensors can be compared: same shape,
    dtype and device, and both fingerprinted."""
    return (not bits & _INCOMPARABLE and packed.sums is not None
            and unpacked.sums is not None)


def shape_text(shape):
    """8x1024x2048; "scalar" for no dimension."""
    return "x".join(str(n) for n in shape) if shape else "scalar"


def describe(packed, unpacked, bits, differing, returned=None):
    """What differs, in words, for a human: "contents: 37 of 16384
    checksums differ", "dtype float32 -> bfloat16", ...; returned is the
    type name of what unpack gave when it was no tensor."""
    words = []
    if bits & NOT_TENSOR:
        words.append("unpack returned %s, not a tensor" % returned)
    if bits & SHAPE:
        words.append("shape %s -> %s" % (shape_text(packed.shape),
                                           shape_text(unpacked.shape)))
    if bits & DTYPE:
        words.append("dtype %s -> %s" % (packed.dtype, unpacked.dtype))
    if bits & DEVICE:
        words.append("device %s -> %s" % (packed.device, unpacked.device))
    if bits & CONTENTS:
        words.append("contents: %d of %d checksums differ"
                     % (differing, packed.sums))
    if bits & STRIDES and words:
        words.append("returned with strides %s for %s"
                     % (unpacked.strides, packed.strides))
    return "; ".join(words)


def capture(skip=1):
    """The caller's stack less its skip innermost frames, as (code, line)
    pairs, innermost first (empty on a thread that Python did not start,
    like autograd's): cheap enough for every pack."""
    frames = []
    f = sys._getframe(1)
    while f is not None and skip > 0:
        f, skip = f.f_back, skip - 1
    while f is not None and len(frames) < STACK_DEPTH:
        frames.append((f.f_code, f.f_lineno))
        f = f.f_back
    return frames


def site_text(frames, node=None):
    """A stack the way the recording stores one: a line per frame,
    "function<TAB>file<TAB>line", innermost first; node (an autograd
    node's name) comes first as a frame of file "<autograd>"."""
    lines = ["%s\t<autograd>\t0" % node] if node else []
    lines += ["%s\t%s\t%d" % (c.co_name, c.co_filename, n)
              for c, n in frames]
    return "".join(line + "\n" for line in lines)


def site_line(frames, node=None):
    """FILE:LINE of the innermost frame outside torch and vramtrace (the
    user's code that made the tensor), else of the innermost frame; the
    node's name when there is no frame at all."""
    for c, n in frames:
        if not c.co_filename.startswith(tuple(SKIP_DIRS)):
            return "%s:%d" % (c.co_filename, n)
    if frames:
        return "%s:%d" % (frames[0][0].co_filename, frames[0][1])
    return node or "unknown"


class Pair:
    """One saved tensor: its pack (engine, step, number in the step, Meta,
    fingerprint, stack, time) and, once unpacked, the same of what came
    back (unpacked is None when it was no tensor: returned names its
    type).  fp and back_fp are opaque to this module."""
    __slots__ = ("engine", "step", "index", "meta", "fp", "frames",
                 "pack_ns", "unpacked", "back_fp", "node", "back_frames",
                 "unpack_ns", "returned", "device")

    def __init__(self, engine, step, index, meta, fp, frames, pack_ns,
                 device):
        self.engine, self.step, self.index = engine, step, index
        self.meta, self.fp, self.frames = meta, fp, frames
        self.pack_ns, self.device = pack_ns, device
        self.unpacked = self.back_fp = self.node = self.returned = None
        self.back_frames, self.unpack_ns = (), 0


class Diff:
    """A saved tensor that came back different: the fields of a
    check-diff event, plus site, the FILE:LINE the summary names."""
    __slots__ = ("step", "index", "engine", "pack_site", "unpack_site",
                 "site", "shape", "dtype", "bytes", "device", "differs",
                 "detail", "pack_ns", "unpack_ns")

    def __init__(self, pair, bits, detail):
        m = pair.meta
        self.step, self.index, self.engine = pair.step, pair.index, \
            pair.engine
        self.pack_site = site_text(pair.frames)
        self.unpack_site = site_text(pair.back_frames, pair.node)
        self.site = site_line(pair.frames)
        self.shape, self.dtype, self.bytes = shape_text(m.shape), m.dtype, \
            m.nbytes
        self.device, self.differs, self.detail = pair.device, bits, detail
        self.pack_ns, self.unpack_ns = pair.pack_ns, pair.unpack_ns

    def __repr__(self):
        return ("<offload check: step %d #%d %s %s %s packed at %s by %s: "
                "%s>" % (self.step, self.index, self.shape, self.dtype,
                         self.bytes, self.site, self.engine, self.detail))


class _Tally:
    __slots__ = ("packs", "unpacks", "checked", "differ", "packed_bytes",
                 "moved_bytes", "device")

    def __init__(self, device):
        self.packs = self.unpacks = self.checked = self.differ = 0
        self.packed_bytes = self.moved_bytes = 0
        self.device = device


class Ledger:
    """What the checker found, for the whole process: a tally per step and
    engine (sent as deltas: the recording adds them up), every
    difference, how many saved tensors were compared, and how many each
    engine packed.  Thread-safe: unpack runs on autograd's threads."""

    def __init__(self, emitter=None):
        self._lock = threading.Lock()
        self._tallies = {}
        self.emitter = emitter
        self.diffs = []
        self.checked = 0
        self.engines = {}

    def _tally(self, step, engine, device):
        t = self._tallies.get((step, engine))
        if t is None:
            t = self._tallies[(step, engine)] = _Tally(device)
        elif t.device != device:
            t.device = -1
        return t

    def packed(self, pair):
        with self._lock:
            t = self._tally(pair.step, pair.engine, pair.device)
            t.packs += 1
            t.packed_bytes += pair.meta.nbytes
            self.engines[pair.engine] = \
                self.engines.get(pair.engine, 0) + 1

    def unpacked(self, pair, moved):
        """pair came back; moved: in other memory than it was packed in."""
        with self._lock:
            t = self._tally(pair.step, pair.engine, pair.device)
            t.unpacks += 1
            if moved:
                t.moved_bytes += pair.meta.nbytes

    def judge(self, pair, differing):
        """Decide about an unpacked pair; differing is how many checksums
        differ (None: contents not compared).  Returns the Diff, or None
        when it came back the same."""
        bits = differences(pair.meta, pair.unpacked)
        if differing:
            bits |= CONTENTS
        compared = differing is not None or bits & _INCOMPARABLE
        diff = None
        if bits & ~STRIDES:
            diff = Diff(pair, bits, describe(pair.meta, pair.unpacked, bits,
                                             differing, pair.returned))
        with self._lock:
            t = self._tally(pair.step, pair.engine, pair.device)
            if compared:
                t.checked += 1
                self.checked += 1
            if diff is not None:
                t.differ += 1
                self.diffs.append(diff)
        if diff is not None and self.emitter is not None:
            self.emitter.diff(diff)
        return diff

    def send(self, before=None):
        """Send the tallies of steps before `before` (all when None) and
        forget them."""
        with self._lock:
            done = [k for k in self._tallies if before is None
                    or k[0] < before]
            out = [(k, self._tallies.pop(k)) for k in done]
        if self.emitter is not None:
            for (step, engine), t in sorted(out, key=lambda kv: kv[0][0]):
                self.emitter.step(step, engine, t)

    def summary(self, first=0, checked_before=0):
        """The summary line over the differences from number `first` on and
        the tensors compared after the first checked_before (the caller
        prefixes "vramtrace: ")."""
        diffs = self.diffs[first:]
        line = "offload check: %d of %d saved tensors came back different" \
            % (len(diffs), self.checked - checked_before)
        if diffs:
            d = min(diffs, key=lambda d: (d.step, d.index))
            line += " (first at step %d, packed at %s by %s)" % (
                d.step, d.site, d.engine)
        return line


def _bytes(s):
    return s.encode("utf-8", "replace") if s else None


class Emitter:
    """Sends check-step and check-diff events through libvramtrace.so
    (vramtrace._library).  Without a library of this package's version it
    says so once and does nothing; the library itself does nothing when
    the process is not being recorded."""

    def __init__(self):
        lib = _library.load_or_warn("offload check results are not "
                                    "recorded")
        self._step = lib.vramtrace_check_step if lib is not None else None
        self._diff = lib.vramtrace_check_diff if lib is not None else None

    def step(self, step, engine, t):
        if self._step is None:
            return
        r = _library.CheckStep(step, t.packs, t.unpacks, t.checked,
                               t.differ, t.packed_bytes, t.moved_bytes,
                               t.device, 0, _bytes(engine))
        self._step(ctypes.byref(r))

    def diff(self, d):
        if self._diff is None:
            return
        r = _library.CheckDiff(d.step, d.pack_ns, d.unpack_ns, d.index,
                               d.bytes, d.differs, d.device,
                               _bytes(d.engine), _bytes(d.pack_site),
                               _bytes(d.unpack_site), _bytes(d.site),
                               _bytes(d.shape), _bytes(d.dtype),
                               _bytes(d.detail))
        self._diff(ctypes.byref(r))


def after_import(target, install, what):
    """Call install() once module target has been imported whole (the
    sitecustomize's way in: nothing is imported eagerly); if it fails,
    say so in one line ("vramtrace: WHAT: error") and let the program
    run."""
    import importlib.abc
    import importlib.util

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target_=None):
            if name != target:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                try:
                    install()
                except Exception as e:  # the program runs unchecked
                    sys.stderr.write("vramtrace: %s: %s: %s\n" % (
                        what, type(e).__name__, e))

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Watch())
