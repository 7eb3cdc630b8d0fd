"""vramtrace._leaks: does a training step leak GPU memory?  The pytest
plugin's core (vramtrace.pytest_plugin), without pytest.

check(step, warmup, steps, recorder) runs step() warmup + steps times, each
inside one of the recorder's step marks, and asks the vramtrace program
what the recorder recorded.  TorchRecorder records a PyTorch memory
snapshot: the caching allocator's history with Python stacks, each step a
record_function range that the snapshot keeps as an annotation.  The
verdict is vramtrace's own, never computed here: `vramtrace import` cuts
the snapshot into steps at those annotations, `vramtrace leaks` judges the
live bytes at the step ends with its leak-shape model (src/leak-shape.c)
and names the sites that hold what grew, and the stacks of those sites
come from the database (`vramtrace sql`, the frames of vramtrace-db(5)).
"""

import contextlib
import json
import os
import subprocess
import tempfile

from vramtrace.__main__ import program

STEP_NAME = "vramtrace.step"
STACK_FRAMES = 12               # frames shown per site
SITES = 5                       # sites shown with their stacks


class ToolError(RuntimeError):
    """The vramtrace program failed, or the recording has no steps."""


class TorchRecorder:
    """Records the steps as a PyTorch memory snapshot (CUDA's caching
    allocator), from start() to stop(PATH)."""

    marker = r"^vramtrace\.step$"   # the annotations that end a step

    def __init__(self, max_entries=1000000):
        self.max_entries = max_entries

    def start(self):
        import torch
        torch.cuda.synchronize()
        record = torch.cuda.memory._record_memory_history
        # What an earlier test left in the history is not this one's.
        for extra in ({"clear_history": True}, {}):
            try:
                record(enabled="all", stacks="python",
                       max_entries=self.max_entries, **extra)
                return
            except TypeError:   # an older PyTorch: fewer keywords
                pass
        record(max_entries=self.max_entries)

    @contextlib.contextmanager
    def step(self):
        import torch
        with torch.autograd.profiler.record_function(STEP_NAME):
            yield

    def stop(self, path):
        import torch
        torch.cuda.synchronize()
        try:
            torch.cuda.memory._dump_snapshot(path)
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)


class Verdict:
    """What vramtrace said: verdict (LEAK, CLEAN or INCONCLUSIVE), growth
    (bytes per step), data (`vramtrace leaks --format json`), text (its
    report) and stacks (of the top sites); report() puts them together."""

    def __init__(self, data, text, stacks, ran):
        self.data, self.text, self.stacks, self.ran = data, text, stacks, ran
        self.verdict = data.get("verdict")
        self.growth = data.get("growth_bytes_per_step")
        self.reason = data.get("reason")

    def headline(self):
        line = self.text.splitlines()[1] if self.text.count("\n") else ""
        return "vramtrace: %s (the step ran %d times)" % (
            line.replace("verdict: ", "", 1) or self.verdict, self.ran)

    def report(self):
        out = [self.headline(), "", self.text.rstrip()]
        if self.stacks:
            out += ["", "stacks of the sites holding memory allocated after "
                    "the warm-up (innermost first):"]
        for site, frames in self.stacks:
            out.append("  " + site)
            out += ["      %s (%s:%s)" % f for f in frames]
        return "\n".join(out)


def _run(args):
    exe = program()
    if exe is None:
        raise ToolError("vramtrace: the vramtrace program is neither in the "
                        "package nor on PATH")
    p = subprocess.run([exe] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise ToolError("vramtrace %s: %s" % (args[0], p.stderr.strip()))
    return p.stdout


def _stacks(db, suspects):
    """(label, frames) of the first SITES suspects that have a stack."""
    ids = [s["site_id"] for s in suspects if s.get("site_id") is not None]
    ids = ids[:SITES]
    if not ids:
        return []
    rows = json.loads(_run([
        "sql", db, "--format", "json",
        "select sf.site_id, sf.depth, f.name, f.filename, f.line "
        "from site_frames sf join frames f on f.id = sf.frame_id "
        "where sf.site_id in (%s) and sf.depth < %d "
        "order by sf.site_id, sf.depth"
        % (",".join(str(int(i)) for i in ids), STACK_FRAMES)]))
    frames = {}
    for r in rows:
        frames.setdefault(r["site_id"], []).append(
            (r["name"], r["filename"], r["line"]))
    return [(s["site"], frames.get(s["site_id"], [])) for s in suspects
            if s.get("site_id") in frames]


def judge(snapshot, warmup, marker, threshold=None, ran=0):
    """vramtrace's verdict on a snapshot whose steps end at the
    annotations matching marker, the first warmup of them left out."""
    with tempfile.TemporaryDirectory(prefix="vramtrace-") as d:
        db = os.path.join(d, "steps.db")
        _run(["import", snapshot, "-o", db, "--step-marker", marker])
        args = ["leaks", db, "--warmup", str(warmup)]
        if threshold is not None:
            args += ["--threshold", str(int(threshold))]
        data = json.loads(_run(args + ["--format", "json"]))
        if not data.get("total_steps"):
            raise ToolError("vramtrace: the snapshot %s has no step marked "
                            "(no annotation matches %s): this PyTorch does "
                            "not keep record_function ranges in its memory "
                            "history" % (snapshot, marker))
        return Verdict(data, _run(args), _stacks(db, data["suspects"]), ran)


def check(step, warmup, steps, recorder, threshold=None, keep=None):
    """Run step() warmup + steps times under recorder and return
    vramtrace's Verdict.  keep: a path to leave the snapshot at."""
    if warmup < 0 or steps < 3:
        raise ValueError("gpu_leaks: warmup must be 0 or more and steps 3 "
                         "or more (the leak model needs 3 steps after the "
                         "warm-up)")
    with tempfile.TemporaryDirectory(prefix="vramtrace-") as d:
        snapshot = keep or os.path.join(d, "steps.pickle")
        ran = 0
        recorder.start()
        try:
            for _ in range(warmup + steps):
                with recorder.step():
                    step()
                ran += 1
        finally:
            recorder.stop(snapshot)
        return judge(snapshot, warmup, recorder.marker, threshold, ran)
