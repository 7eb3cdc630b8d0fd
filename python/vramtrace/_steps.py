"""Step markers: vramtrace.step() and vramtrace.mark(name) call
libvramtrace.so's vramtrace_step() and vramtrace_mark() (loaded by
vramtrace._library on the first call), which reach the recording through
the injection library, and do nothing when the process is not recorded.
Without a library of this package's version they say so once and do
nothing.
"""
from vramtrace import _library

listeners = []          # called at every step(): the offload check's end
_lib = None
_tried = False


def _load():
    global _lib, _tried
    if not _tried:
        _tried = True
        _lib = _library.load_or_warn("steps are not marked")
    return _lib


def step():
    """End the current training step."""
    for f in listeners:
        f()
    lib = _lib if _tried else _load()
    if lib is not None:
        lib.vramtrace_step()


def mark(name):
    """Record a named instant."""
    lib = _lib if _tried else _load()
    if lib is not None:
        lib.vramtrace_mark(str(name).encode())
