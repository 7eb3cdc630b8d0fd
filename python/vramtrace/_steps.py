"""Step markers through ctypes, no compiled extension.

The calls go to libvramtrace.so (VRAMTRACE_LIBRARY, set by vramtrace
record) or, when that library is not there, straight to the injection
library CUDA loads (CUDA_INJECTION64_PATH).  Without either they do nothing.
"""
import ctypes
import os

_step = None
_mark = None
listeners = []          # called at every step(): the offload check's end


def _load():
    global _step, _mark
    for var, step_name, mark_name in (
            ("VRAMTRACE_LIBRARY", "vramtrace_step", "vramtrace_mark"),
            ("CUDA_INJECTION64_PATH", "vramtrace_inject_step",
             "vramtrace_inject_mark")):
        path = os.environ.get(var)
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
            _step = getattr(lib, step_name)
            _mark = getattr(lib, mark_name)
        except (OSError, AttributeError):
            continue
        _step.argtypes = []
        _step.restype = None
        _mark.argtypes = [ctypes.c_char_p]
        _mark.restype = None
        return


def step():
    """End the current training step."""
    for f in listeners:
        f()
    if _step is not None:
        _step()


def mark(name):
    """Record a named instant."""
    if _mark is not None:
        _mark(str(name).encode())


_load()
