"""check-compare.py: the offload check's verdicts without torch (TAP).

What "came back the same" means (python/vramtrace/_check.py): shape, dtype,
device and contents decide, strides alone do not; what a difference says;
which frame is a site; what the ledger counts and sends; the summary line.
Run with the package on PYTHONPATH."""
import sys

from vramtrace import _check as C

n = 0
failed = 0


def ok(cond, what):
    global n, failed
    n += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))
    failed += not cond


def meta(shape=(4, 5), dtype="bfloat16", device="cuda:0", strides=(5, 1),
         sums=9):
    nbytes = 2
    for d in shape:
        nbytes *= d
    return C.Meta(shape, dtype, device, strides, nbytes, sums)


class Sink:
    """An emitter that keeps what it is given."""

    def __init__(self):
        self.steps, self.diffs = [], []

    def step(self, step, engine, t):
        self.steps.append((step, engine, t.packs, t.unpacks, t.checked,
                           t.differ, t.packed_bytes, t.moved_bytes,
                           t.device))

    def diff(self, d):
        self.diffs.append(d)


def pair(step=0, index=0, back=None, engine="trl.OffloadActivations",
         packed=None, device=0):
    p = C.Pair(engine, step, index, packed or meta(), None, C.capture(1),
               1000 + index, device)
    p.unpacked = back if back is not None else meta()
    p.unpack_ns = 2000 + index
    return p


print("1..19")
sink = Sink()
led = C.Ledger(sink)

# Same shape, dtype, device and contents, another layout: the same.
p = pair(back=meta(strides=(1, 4)))
ok(C.differences(p.meta, p.unpacked) == C.STRIDES, "strides alone differ")
ok(led.judge(p, 0) is None and led.checked == 1 and not led.diffs,
   "a contiguous copy of a strided view came back the same, and counts")

FIRST_LINE = sys._getframe().f_lineno + 1
d = led.judge(pair(index=1), 3)
ok(d is not None and d.differs == C.CONTENTS and
   d.detail == "contents: 3 of 9 checksums differ",
   "differing checksums are a contents difference: %s" % (d and d.detail))

d = led.judge(pair(index=2, back=meta(strides=(1, 4))), 1)
ok(d.differs == C.CONTENTS | C.STRIDES and
   d.detail.endswith("returned with strides (1, 4) for (5, 1)"),
   "a layout is named with another difference: %s" % d.detail)

d = led.judge(pair(index=3, back=meta(shape=(5, 4), strides=(4, 1))), None)
ok(d.differs & C.SHAPE and d.detail.startswith("shape 4x5 -> 5x4"),
   "a shape difference without a comparison: %s" % d.detail)

d = led.judge(pair(index=4, back=meta(dtype="float32")), None)
ok(d.differs == C.DTYPE and d.detail == "dtype bfloat16 -> float32",
   "a dtype difference: %s" % d.detail)

d = led.judge(pair(index=5, back=meta(device="cpu")), None)
ok(d.differs == C.DEVICE and d.detail == "device cuda:0 -> cpu",
   "a device difference: %s" % d.detail)

NOT_TENSOR_LINE = sys._getframe().f_lineno + 1
p = pair(step=1, index=0)
p.unpacked, p.returned = None, "int"
d = led.judge(p, None)
ok(d.differs == C.NOT_TENSOR and "returned int, not a tensor" in d.detail,
   "unpack returning no tensor: %s" % d.detail)

before = led.checked
ok(led.judge(pair(index=6, back=meta(sums=None)), None) is None and
   led.checked == before, "contents that cannot be read are not counted as "
   "checked, and are no difference")

ok(C.comparable(0, meta(), meta()) and
   not C.comparable(C.SHAPE, meta(), meta()) and
   not C.comparable(0, meta(sums=None), meta()),
   "contents compare only with the same shape, dtype and device, both read")

ok(C.shape_text(()) == "scalar" and C.shape_text((8, 1024)) == "8x1024",
   "shapes in words")

line = led.summary()
ok(line == "offload check: 6 of 7 saved tensors came back different "
   "(first at step 0, packed at %s:%d by trl.OffloadActivations)"
   % (__file__, FIRST_LINE), "the summary line: %s" % line)
ok(led.summary(first=5, checked_before=6) == "offload check: 1 of 1 saved "
   "tensors came back different (first at step 1, packed at %s:%d by "
   "trl.OffloadActivations)" % (__file__, NOT_TENSOR_LINE),
   "the summary of a later part names its own first difference")

ok(len(sink.diffs) == 6 and sink.diffs[0].index == 1,
   "every difference reaches the emitter")

# Tallies: deltas by step and engine, older steps first.
led2 = C.Ledger(Sink())
for i in range(3):
    led2.packed(pair(step=0, index=i))
led2.packed(pair(step=1, index=0, device=1))
led2.unpacked(pair(step=0), moved=True)
led2.unpacked(pair(step=0), moved=False)
led2.send(before=1)
s = led2.emitter.steps
ok(s == [(0, "trl.OffloadActivations", 3, 2, 0, 0, 120, 40, 0)],
   "a step's tally: packs, unpacks, bytes packed and moved: %s" % s)
led2.judge(pair(step=0), 2)
led2.send()
s = led2.emitter.steps[1:]
ok(s == [(0, "trl.OffloadActivations", 0, 0, 1, 1, 0, 0, 0),
         (1, "trl.OffloadActivations", 1, 0, 0, 0, 40, 0, 1)],
   "later news of a step is a delta; steps go oldest first: %s" % s)

# Sites: the innermost frame outside torch and vramtrace.
ns = {}
exec(compile("def linear(f):\n    return f()\n", "/opt/torch/nn/linear.py",
             "exec"), ns)
C.SKIP_DIRS.append("/opt/torch/")
frames = ns["linear"](lambda: C.capture(1))
ok(frames[0][0].co_filename == "/opt/torch/nn/linear.py" and
   C.site_line(frames) == "%s:%d" % (__file__, frames[1][1]),
   "a site skips torch's frames: %s" % C.site_line(frames))
ok(C.site_line([], node="MmBackward0") == "MmBackward0" and
   C.site_text(frames[:1], node="MmBackward0") ==
   "MmBackward0\t<autograd>\t0\nlinear\t/opt/torch/nn/linear.py\t2\n",
   "a site as text, the autograd node first")
ok(C.capture(10 ** 6) == [], "a stack shallower than asked is empty")
sys.exit(1 if failed else 0)
