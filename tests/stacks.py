"""Allocations with known Python stacks, through the stack capture.

usage: stacks.py run PROBE MODE DEPTH OUT.json
       stacks.py check DB OUT.json MODE
       stacks.py history PYTHONDIR
       stacks.py fake-torch DIR
       stacks.py site OUT.json

run: loads PROBE (tests/libstack-probe.so) into this python3 with ctypes,
starts it (VRAMTRACE_OUTPUT or VRAMTRACE_SOCKET says where events go) and
makes allocations whose stacks it notes with traceback.extract_stack() on
the very line of the call: with the GIL held (ctypes.PyDLL), with it
released (ctypes.CDLL: the way a PyTorch operation allocates), 500 times
from one line, from a stack deeper than DEPTH, from a Python thread, from a
C thread with no Python frame, and in a call that keeps the GIL released
for 1.5 s.  OUT.json maps each address to what its stack must be.

check: compares the stacks a database holds for those addresses with
OUT.json, printing TAP lines without a plan.

history: drives vramtrace._history (from PYTHONDIR) with stand-ins for
torch.cuda and for the injection library that record what they are asked;
the real ones need a GPU (tests/gpu/record/run stacks).  TAP lines.

fake-torch: writes a stand-in torch package into DIR (torch.cuda with
_lazy_call and a memory module whose history holds two blocks,
torch.optim.optimizer with a global step hook); site: a program that
imports it, under record's sitecustomize, starts "CUDA" and takes "an
optimizer step"; OUT.json gets what the sitecustomize installed.
"""
import ctypes
import json
import sqlite3
import sys
import threading
import traceback


def here():
    """The caller's stack at its current line, innermost first."""
    return [[f.name, f.filename, f.lineno]
            for f in reversed(traceback.extract_stack()[:-1])]


def run(probe, mode, depth, out):
    released = ctypes.CDLL(probe)
    held = ctypes.PyDLL(probe)
    for lib in (released, held):
        lib.probe_start.argtypes = [ctypes.c_char_p, ctypes.c_uint]
        lib.probe_alloc.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
        lib.probe_alloc_wait.argtypes = [ctypes.c_uint64, ctypes.c_uint64,
                                         ctypes.c_uint]
        lib.probe_free.argtypes = [ctypes.c_uint64]
        lib.probe_thread_alloc.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
    if held.probe_start(mode.encode(), depth) != 0:
        sys.exit("probe_start failed")
    expect = {}

    def note(address, frames, kind="python", truncated=False):
        expect[str(address)] = {"frames": frames, "kind": kind,
                                "truncated": truncated}

    def gil_held():
        note(0x1000, here()); held.probe_alloc(0x1000, 4096)

    def gil_released():
        note(0x2000, here()); released.probe_alloc(0x2000, 4096)

    def one_line():
        for i in range(500):
            note(0x100000 + i, here()); released.probe_alloc(0x100000 + i, 64)
            released.probe_free(0x100000 + i)

    def deep(n):
        if n > 0:
            return deep(n - 1)
        note(0x3000, here()[:depth], truncated=True); released.probe_alloc(0x3000, 4096)

    def in_thread():
        note(0x4000, here()); released.probe_alloc(0x4000, 4096)

    gil_held()
    gil_released()
    one_line()
    deep(depth + 20)
    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    # No Python frame on that thread: a native stack, or none.
    note(0x5000, None, kind="native")
    released.probe_thread_alloc(0x5000, 4096)
    # Released for longer than an allocation may wait for its stack.
    note(0x6000, None, kind="native")
    released.probe_alloc_wait(0x6000, 4096, 1500)
    with open(out, "w") as f:
        json.dump(expect, f)


def frames_of(c, address):
    row = c.execute("select site_id, s.kind from allocations a left join "
                    "sites s on s.id = a.site_id where address = ?",
                    (address,)).fetchone()
    if row is None:
        return None, None, None
    site, kind = row
    if site is None:
        return True, None, None
    frames = [list(r) for r in c.execute(
        "select f.name, f.filename, f.line from site_frames sf join frames f"
        " on f.id = sf.frame_id where sf.site_id = ? order by sf.depth",
        (site,))]
    return True, kind, frames


def check(db, js, mode):
    expect = json.load(open(js))
    c = sqlite3.connect(db)
    n = 0

    def tap(ok, what, detail=""):
        nonlocal n
        n += 1
        print("%sok %d - %s" % ("" if ok else "not ", n, what))
        if not ok and detail:
            print("#   " + detail.replace("\n", "\n#   "))

    python = mode in ("python", "all")
    native = mode in ("native", "all")
    names = {0x1000: "GIL held", 0x2000: "GIL released (hooked)",
             0x3000: "deeper than the limit", 0x4000: "a Python thread",
             0x5000: "a C thread", 0x6000: "released 1.5 s"}
    for address, what in sorted(names.items()):
        e = expect[str(address)]
        stored, kind, frames = frames_of(c, address)
        if stored is None:
            tap(False, "%s: allocation stored" % what)
            continue
        if python and e["frames"] is not None:
            want = e["frames"] + ([["...", "??", 0]] if e["truncated"]
                                  else [])
            tap(kind == "python" and frames == want,
                "%s: the Python stack, innermost first" % what,
                "kind %s\ngot  %s\nwant %s" % (kind, frames, want))
        elif native:
            tap(kind == "native" and bool(frames),
                "%s: a native stack" % what, "kind %s, %s" % (kind, frames))
        else:
            tap(frames is None, "%s: no stack" % what, "got %s" % frames)
    sites = c.execute("select count(distinct site_id), count(*) from "
                      "allocations where address >= 1048576 and address < "
                      "1048576 + 500").fetchone()
    tap(sites == (1 if mode != "none" else 0, 500),
        "500 allocations from one line: one site", "%s" % (sites,))


class _Calls:
    """Records the calls made to its attributes."""

    def __init__(self, **returns):
        self.calls = []
        self.returns = returns

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return self.returns.get(name)
        return call


def history(pythondir):
    import atexit
    import contextlib
    import io
    import os
    sys.path.insert(0, pythondir)
    os.environ["VRAMTRACE_TORCH_HISTORY"] = "4"
    os.environ["VRAMTRACE_STACK_DEPTH"] = "2"
    from vramtrace import _history
    lib = _Calls()
    _history._load = lambda: lib
    frames = [{"name": "inner", "filename": "/t/a.py", "line": 3},
              {"name": "mid\tdle", "filename": "/t/b.py", "line": 9},
              {"name": "<module>", "filename": "/t/c.py", "line": 1}]
    trace = [
        {"action": "segment_alloc", "addr": 1, "size": 2, "time_us": 5},
        {"action": "alloc", "addr": 4096, "size": 512, "stream": 7,
         "time_us": 10, "frames": frames},
        {"action": "free_requested", "addr": 4096, "size": 512,
         "time_us": 11},
        {"action": "free_completed", "addr": 4096, "size": 512, "stream": 7,
         "time_us": 12},
        {"action": "alloc", "addr": 8192, "size": 64, "time_us": 13,
         "frames": []}]
    memory = _Calls(_snapshot={"device_traces": [[], trace]})
    cuda = _Calls()
    cuda.memory = memory
    _history.install(cuda)
    n = 0

    def tap(ok, what, detail):
        nonlocal n
        n += 1
        print("%sok %d - %s" % ("" if ok else "not ", n, what))
        if not ok:
            print("#   %s" % (detail,))

    lazy = [c for c in cuda.calls if c[0] == "_lazy_call"]
    tap(len(lazy) == 1, "waits for CUDA's initialisation", cuda.calls)
    lazy[0][1][0]()
    atexit.unregister(_history.fold)
    rec = [c for c in memory.calls if c[0] == "_record_memory_history"]
    tap(len(rec) == 1 and rec[0][2].get("stacks") == "python" and
        rec[0][2].get("max_entries") == 4, "records Python stacks, "
        "VRAMTRACE_TORCH_HISTORY entries", memory.calls)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        _history.fold(memory)
    blocks = [c[1] for c in lib.calls if c[0] == "vramtrace_inject_block"]
    want = [(0, 10000, 1, 4096, 512, 7,
             b"!python\ninner\t/t/a.py\t3\nmid dle\t/t/b.py\t9\n"
             b"...\t??\t0\n"),
            (1, 12000, 1, 4096, 512, 7, None),
            (0, 13000, 1, 8192, 64, 0, None)]
    tap(blocks == want, "allocations and completed frees with their "
        "stacks, two frames deep", "%s" % blocks)
    tap(lib.calls[-1][0] == "vramtrace_inject_flush", "flushes at the end",
        lib.calls[-1])
    tap("device 1 made more than 4" in err.getvalue() and
        "device 0" not in err.getvalue(), "says when the history wrapped",
        err.getvalue())


FAKE_TORCH = {
    "torch/__init__.py": "",
    "torch/cuda/__init__.py": """
from . import memory
queued = []
def _lazy_call(fn):
    queued.append(fn)
""",
    "torch/cuda/memory.py": """
recorded = []
def _record_memory_history(**kwargs):
    recorded.append(kwargs)
def _snapshot():
    f = [{"name": "forward", "filename": "/m/model.py", "line": 12},
         {"name": "<module>", "filename": "/m/train.py", "line": 3}]
    return {"device_traces": [[
        {"action": "alloc", "addr": 65536, "size": 2048, "stream": 0,
         "time_us": 1700000000000001, "frames": f},
        {"action": "alloc", "addr": 131072, "size": 4096, "stream": 0,
         "time_us": 1700000000000002, "frames": f},
        {"action": "free_completed", "addr": 65536, "size": 2048,
         "stream": 0, "time_us": 1700000000000003}]]}
""",
    "torch/optim/__init__.py": "from . import optimizer\n",
    "torch/optim/optimizer.py": """
hooks = []
def register_optimizer_step_post_hook(hook):
    hooks.append(hook)
""",
}


def fake_torch(d):
    import os
    for name, text in FAKE_TORCH.items():
        os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def site(out):
    import torch.cuda
    import torch.optim.optimizer
    for fn in torch.cuda.queued:    # CUDA starts
        fn()
    with open(out, "w") as f:
        json.dump({"history": torch.cuda.memory.recorded,
                   "step_hooks": len(torch.optim.optimizer.hooks)}, f)


if sys.argv[1] == "run":
    run(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
elif sys.argv[1] == "history":
    history(sys.argv[2])
elif sys.argv[1] == "fake-torch":
    fake_torch(sys.argv[2])
elif sys.argv[1] == "site":
    site(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3], sys.argv[4])
