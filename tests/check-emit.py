"""check-emit.py: the offload check's events from Python, as a traced
process sends them (t-check.sh reads the spool back with spooldump).

Through _check.Emitter, libvramtrace.so (VRAMTRACE_LIBRARY) and the
injection library it forwards to (CUDA_INJECTION64_PATH): one step of an
engine with two saved tensors, one of which came back different, and one
difference of strides alone, which is none.  Prints the pack site the
difference must name."""
import sys

from vramtrace import _check as C


def made_here():
    return C.capture(1)


led = C.Ledger(C.Emitter())
m = C.Meta((8, 1024), "bfloat16", "cuda:0", (1024, 1), 16384, 9216)
copy = C.Meta((8, 1024), "bfloat16", "cuda:0", (1, 8), 16384, 9216)
site = sys._getframe().f_lineno + 1
frames = made_here()
for index, back, differing in ((0, copy, 0), (1, m, 5)):
    p = C.Pair("tests.Engine", 4, index, m, None, frames, 1000 + index, 0)
    p.unpacked, p.node, p.unpack_ns = back, "MmBackward0", 2000 + index
    led.packed(p)
    led.unpacked(p, moved=index == 1)
    led.judge(p, differing)
led.send()
print("%s:%d" % (__file__, site))
