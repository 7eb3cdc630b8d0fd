"""PyTorch's allocation history, folded into a recording.

With PyTorch's native caching allocator, CUPTI sees only the segments the
allocator takes from the driver, not the tensors it carves out of them.
vramtrace record (--torch-allocator native, or PYTORCH_CUDA_ALLOC_CONF
already set) therefore has its sitecustomize call install() when
torch.cuda is imported: once CUDA is initialised (torch.cuda._lazy_call)
PyTorch records every block allocation and free with its Python stack
(torch.cuda.memory._record_memory_history), and at exit fold() hands that
history to the injection library (vramtrace_inject_block), which sends it
on the process's connection as block-layer allocations with their stacks.

PyTorch keeps the last max_entries events (VRAMTRACE_TORCH_HISTORY); if
the run made more, the earlier ones are lost and fold() says so.  A
process that dies without running its exit handlers folds nothing.  Any
failure here prints one line and leaves the program alone.
"""
import atexit
import ctypes
import os
import sys

_lib = None
_max_entries = 0
_depth = 64


def _warn(what):
    sys.stderr.write("vramtrace: PyTorch's allocation history: %s\n" % what)


def _start(memory):
    try:
        memory._record_memory_history(enabled="all", context="alloc",
                                      stacks="python",
                                      max_entries=_max_entries)
    except Exception as e:  # the program must not notice us
        _warn("cannot record it (%s); blocks will be missing" % e)
        return
    atexit.register(fold, memory)


def _load():
    """The injection library CUDA loaded, bound; None if it is not there."""
    lib = ctypes.CDLL(os.environ.get("CUDA_INJECTION64_PATH"))
    fn = lib.vramtrace_inject_block
    fn.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_int32,
                   ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                   ctypes.c_char_p]
    fn.restype = None
    return lib


def install(cuda):
    """Record the history from CUDA's initialisation on (cuda: torch.cuda)."""
    global _lib, _max_entries, _depth
    try:
        _max_entries = int(os.environ.get("VRAMTRACE_TORCH_HISTORY", "0"))
        _depth = int(os.environ.get("VRAMTRACE_STACK_DEPTH", "64"))
        _lib = _load()
    except (TypeError, ValueError, OSError, AttributeError) as e:
        _warn("not recorded (%s)" % e)
        return
    if _max_entries > 0:
        cuda._lazy_call(lambda: _start(cuda.memory))


def _clean(s):
    return str(s).replace("\t", " ").replace("\n", " ")


def _stack(frames, cache):
    """The site string of a trace entry's frames (innermost first)."""
    key = tuple((f["name"], f["filename"], f["line"])
                for f in frames[:_depth])
    text = cache.get(key)
    if text is None:
        text = "!python\n" + "".join(
            "%s\t%s\t%d\n" % (_clean(n), _clean(fn), int(line))
            for n, fn, line in key)
        if len(frames) > _depth:
            text += "...\t??\t0\n"
        text = cache[key] = text.encode("utf-8", "replace")
    return text


def fold(memory):
    """Send the recorded history's block allocations and frees."""
    try:
        snapshot = memory._snapshot()
    except Exception as e:
        _warn("cannot read it at exit (%s)" % e)
        return
    cache = {}
    sent = 0
    for device, trace in enumerate(snapshot.get("device_traces", [])):
        if len(trace) >= _max_entries:
            _warn("device %d made more than %d allocations and frees; the "
                  "first ones are lost (raise VRAMTRACE_TORCH_HISTORY)"
                  % (device, _max_entries))
        for e in trace:
            action = e.get("action")
            if action == "alloc":
                frames = e.get("frames") or []
                stack = _stack(frames, cache) if frames else None
                _lib.vramtrace_inject_block(0, e["time_us"] * 1000, device,
                                            e["addr"], e["size"],
                                            e.get("stream", 0), stack)
            elif action == "free_completed":
                _lib.vramtrace_inject_block(1, e["time_us"] * 1000, device,
                                            e["addr"], e["size"],
                                            e.get("stream", 0), None)
            else:
                continue
            sent += 1
    try:
        _lib.vramtrace_inject_flush()
    except AttributeError:
        pass
    return sent
