#!/usr/bin/env python3
"""Write a large, valid PyTorch memory snapshot pickle for benchmarks.

usage: gen-snapshot.py [-s SIZE] [-d DEVICES] [--share] [--fresh-frames]
                       [--real-lifetimes] [--check] OUT

SIZE is in bytes with an optional K, M or G suffix (default 1G).  The file
has the shape of torch.cuda.memory._dump_snapshot(): segments with blocks,
device_traces with alloc / free_requested / free_completed / segment_alloc
/ segment_free entries whose frames are shared through the memo,
allocator_settings, and external_annotations with one Optimizer.step
START/END pair per step.  Opcodes are written directly (protocol 4, as
pickle.dump writes them: memoized containers, batches of 1000 for APPENDS),
so memory stays small whatever the size.  --share writes what a script that
filtered a snapshot writes: after device 0's trace, device 1's is every
other entry of it (references to the same dicts), and the original list
is kept under "raw_traces" (a reference).  --fresh-frames gives each
trace entry a list of its own around the shared frame dicts, as PyTorch
2.11's _dump_snapshot writes most entries (two in three in the leak zoo's
snapshots), where by default every entry refers to a shared list.
By default a block lives about 100,000 trace entries (50 steps) at one
of 100,000 addresses, with sizes of any multiple of 512 bytes: a stress
of the live table, of the allocations that cross steps and of the
groups.  --real-lifetimes gives blocks the lifetimes of a real training
run instead (fixture_large.pickle's: half freed within 26 trace entries,
nine in ten within 600; these files: 28 and 330; none longer than a
step), and the blocks never freed are made in the first step (one in ten
of its blocks, as a model's weights and its optimizer's state): 25
sizes, each block's address one its size freed before, so a few hundred
addresses in all.
--check loads the result with pickle.load and verifies its shape (use it
only on small sizes).
"""
import argparse
import heapq
import math
import pickle
import random
import struct
import sys

BATCH = 1000
STEP_ENTRIES = 2000      # trace entries per optimizer step


class Writer:
    """Pickle opcodes to a file, with a memo of strings and shared nodes."""

    def __init__(self, f):
        self.f = f
        self.size = 0
        self.memo = 0
        self.strings = {}

    def raw(self, b):
        self.f.write(b)
        self.size += len(b)

    def memoize(self):
        self.memo += 1
        return self.memo - 1

    @staticmethod
    def get(i):
        if i < 256:
            return b"h" + bytes([i])
        return b"j" + struct.pack("<I", i)

    def str(self, s):
        """Bytes that push s: a BINGET once it has been written."""
        if s in self.strings:
            return self.get(self.strings[s])
        b = s.encode()
        if len(b) < 256:
            out = b"\x8c" + bytes([len(b)]) + b + b"\x94"
        else:
            out = b"X" + struct.pack("<I", len(b)) + b + b"\x94"
        self.strings[s] = self.memoize()
        return out

    @staticmethod
    def int(v):
        if 0 <= v < 256:
            return b"K" + bytes([v])
        if 0 <= v < 65536:
            return b"M" + struct.pack("<H", v)
        if -2**31 <= v < 2**31:
            return b"J" + struct.pack("<i", v)
        n = (v.bit_length() + 8) // 8
        return b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True)

    def value(self, v):
        if callable(v):             # a node, encoded in stream order
            return v()
        if isinstance(v, bool):
            return b"\x88" if v else b"\x89"
        if isinstance(v, int):
            return self.int(v)
        if isinstance(v, float):
            return b"G" + struct.pack(">d", v)
        if isinstance(v, str):
            return self.str(v)
        if isinstance(v, bytes):    # already encoded (a BINGET)
            return v
        raise TypeError(v)

    def dict(self, pairs):
        """Bytes of a new memoized dict of (key, value) pairs."""
        self.memoize()
        out = [b"}\x94("]
        for k, v in pairs:
            out.append(self.str(k))
            out.append(self.value(v))
        out.append(b"u")
        return b"".join(out)

    def list(self, items_fn):
        """Bytes of a new memoized list of the items items_fn() encodes.

        Items are encoded after the list is memoized, so that memo indices
        follow the order of the bytes, as the unpickler assigns them.
        """
        self.memoize()
        encoded_items = items_fn()
        out = [b"]\x94"]
        for i in range(0, len(encoded_items), BATCH):
            chunk = encoded_items[i:i + BATCH]
            if len(chunk) == 1:
                out += [chunk[0], b"a"]
            else:
                out += [b"("] + chunk + [b"e"]
        return b"".join(out)


class Frames:
    """A pool of call stacks, each written once and then shared."""

    def __init__(self, w, rnd, fresh=False):
        self.w = w
        self.fresh = fresh
        self.stacks = []
        names = ["forward", "backward", "_conv_forward", "linear", "step",
                 "<module>", "train_step", "_call_impl", "empty_like"]
        files = ["train.py", "model.py", "torch/nn/modules/module.py",
                 "torch/optim/adamw.py", "??"]
        for _ in range(64):
            depth = rnd.randint(1, 8)
            self.stacks.append([(rnd.choice(names), rnd.choice(files),
                                 rnd.randint(0, 900)) for _ in range(depth)])
        self.frame_memo = {}
        self.list_memo = {}

    def get(self, i):
        """Bytes that push call stack i as a list of frame dicts: the
        shared list, or with fresh a new list of the shared dicts."""
        if self.fresh:
            return self.w.list(lambda: [self.frame(fr)
                                        for fr in self.stacks[i]])
        if i in self.list_memo:
            return self.w.get(self.list_memo[i])
        self.list_memo[i] = self.w.memo
        return self.w.list(lambda: [self.frame(fr) for fr in self.stacks[i]])

    def frame(self, fr):
        if fr in self.frame_memo:
            return self.w.get(self.frame_memo[fr])
        self.frame_memo[fr] = self.w.memo
        return self.w.dict([("name", fr[0]), ("filename", fr[1]),
                            ("line", 0 if fr[1] == "??" else fr[2])])


def segments(w, frames, rnd, count):
    """Encoded segment dicts, each with its blocks."""
    out = []
    base = 0x7f0000000000

    def pool():
        enc = w.int(0) + w.int(0) + b"\x86\x94"   # TUPLE2, MEMOIZE
        w.memoize()
        return enc

    def block(addr, size):
        state = rnd.choice(["active_allocated", "inactive",
                            "active_pending_free"])
        stack = rnd.randrange(64)
        return w.dict([
            ("address", addr), ("size", size),
            ("requested_size", size - rnd.randint(0, 4096)),
            ("state", state),
            ("frames", (lambda: w.list(lambda: []))
             if state == "inactive" else (lambda: frames.get(stack)))])

    for i in range(count):
        nblocks = rnd.randint(1, 20)
        bsize = 2**20
        stack = rnd.randrange(64)
        out.append(w.dict([
            ("device", 0), ("address", base),
            ("total_size", nblocks * bsize),
            ("allocated_size", nblocks * bsize // 2),
            ("active_size", nblocks * bsize // 2),
            ("requested_size", nblocks * bsize // 2),
            ("stream", 0 if i % 3 else 93898984661968),
            ("segment_type", "large" if i % 4 else "small"),
            ("segment_pool_id", pool), ("is_expandable", False),
            ("frames", lambda: frames.get(stack)),
            ("blocks", lambda: w.list(lambda: [
                block(base + j * bsize, bsize) for j in range(nblocks)]))]))
        base += 2**32
    return out


class Cycle:
    """The default entries: a fixed cycle of actions, each at address
    n % 100000 (so a block lives 100,000 entries), of any size."""

    actions = ["segment_alloc", "alloc", "alloc", "free_requested",
               "free_completed", "alloc", "free_requested",
               "free_completed", "segment_free"]

    def __init__(self, rnd):
        self.rnd = rnd

    def entry(self, n):
        """(action, address, size) of trace entry n."""
        return (self.actions[n % len(self.actions)],
                0x7f0000000000 + (n % 100000) * 512,
                512 * self.rnd.randint(1, 40000))


class Lifetimes:
    """Entries as a training run makes them (--real-lifetimes): each
    block allocated with a lifetime drawn from a log-normal of median 26
    trace entries, at most a step (in the first step, one in ten never
    freed), then free_requested and free_completed once it is due; a
    freed address is given again to the next block of its size."""

    SIZES = [512 * 2**k for k in range(15)] + [
        3 * 512 * 2**k for k in range(10)]

    def __init__(self, rnd):
        self.rnd = rnd
        self.due = []               # heap of (entry, address, size)
        self.free = {}              # size -> addresses freed
        self.next_addr = 0x7f0000000000
        self.freeing = None         # the block between its two frees

    def entry(self, n):
        if self.freeing is not None:
            addr, size = self.freeing
            self.freeing = None
            self.free.setdefault(size, []).append(addr)
            return "free_completed", addr, size
        if self.due and self.due[0][0] <= n:
            _, addr, size = heapq.heappop(self.due)
            self.freeing = addr, size
            return "free_requested", addr, size
        size = self.rnd.choice(self.SIZES)
        if self.free.get(size):
            addr = self.free[size].pop()
        else:
            addr = self.next_addr
            self.next_addr += size
        if n >= STEP_ENTRIES or self.rnd.randrange(10):
            life = min(STEP_ENTRIES, max(1, int(
                self.rnd.lognormvariate(math.log(26), 2.0))))
            heapq.heappush(self.due, (n + life, addr, size))
        return "alloc", addr, size


def traces(w, frames, rnd, budget, devices, annotations, share,
           real_lifetimes):
    """Write device_traces until about budget bytes of it are out.

    With share, one device is written and a second one refers to every
    other entry of it; returns the memo index of the first device's list.
    """
    w.raw(w.list(lambda: []))    # the device_traces list, then each device
    start = w.size
    written = 1 if share else devices
    per_device = budget // written
    time_us = 1795253848541456
    entries = []
    first = None
    for dev in range(written):
        if first is None:
            first = w.memo
        w.raw(w.list(lambda: []))
        n = 0
        end = start + per_device * (dev + 1)
        source = Lifetimes(rnd) if real_lifetimes else Cycle(rnd)
        while w.size < end:
            batch = [b"("]
            for _ in range(BATCH):
                stack = rnd.randrange(64)
                action, addr, size = source.entry(n)
                if share and n % 2 == 0:
                    entries.append(w.memo)
                batch.append(w.dict([("action", action),
                         ("addr", addr), ("size", size),
                         ("stream", 0 if n % 5 else 93898984661968),
                         ("time_us", time_us),
                         ("compile_context", "N/A"),
                         ("user_metadata", ""),
                         ("frames", lambda: frames.get(stack))]))
                if n % STEP_ENTRIES == 0:
                    annotations.append(time_us)
                time_us += rnd.randint(1, 50)
                n += 1
            batch.append(b"e")
            w.raw(b"".join(batch))
        w.raw(b"a")              # the device list into device_traces
    if share:
        w.raw(w.list(lambda: []))
        for i in range(0, len(entries), BATCH):
            w.raw(b"(" + b"".join(w.get(j) for j in entries[i:i + BATCH]) +
                  b"e")
        w.raw(b"a")
    return first


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-s", "--size", default="1G")
    ap.add_argument("-d", "--devices", type=int, default=1)
    ap.add_argument("--share", action="store_true")
    ap.add_argument("--fresh-frames", action="store_true")
    ap.add_argument("--real-lifetimes", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("out")
    a = ap.parse_args()
    mult = {"K": 2**10, "M": 2**20, "G": 2**30}
    size = a.size.upper()
    size = int(size[:-1]) * mult[size[-1]] if size[-1] in mult else int(size)
    rnd = random.Random(42)

    with open(a.out, "wb") as f:
        w = Writer(f)
        frames = Frames(w, rnd, a.fresh_frames)
        w.raw(b"\x80\x04}\x94(")
        w.memoize()
        nseg = max(2, min(2000, size // (1 << 20)))
        w.raw(w.str("segments") +
              w.list(lambda: segments(w, frames, rnd, nseg)))
        w.raw(w.str("device_traces"))
        annotations = []
        first = traces(w, frames, rnd, max(0, size - w.size - 4096),
                       a.devices, annotations, a.share,
                       a.real_lifetimes)
        if a.share:
            w.raw(w.str("raw_traces") + w.get(first))
        w.raw(w.str("allocator_settings") + w.dict([
            ("PYTORCH_CUDA_ALLOC_CONF", ""), ("max_split_size", -1),
            ("garbage_collection_threshold", 0.0),
            ("expandable_segments", False),
            ("pinned_num_register_threads", 1),
            ("release_lock_on_cudamalloc", False),
            ("pinned_use_cuda_host_register", False),
            ("graph_capture_record_stream_reuse", False)]))
        w.raw(w.str("external_annotations"))
        w.raw(w.list(lambda: [
            w.dict([("stage", stage), ("name", "Optimizer.step#AdamW.step"),
                    ("device", 0), ("time_us", t + dt)])
            for t in annotations
            for stage, dt in (("START", 0), ("END", 40000))]))
        w.raw(b"u.")

    if a.check:
        with open(a.out, "rb") as f:
            d = pickle.load(f)
        keys = ["segments", "device_traces", "allocator_settings",
                "external_annotations"]
        if a.share:
            keys.insert(2, "raw_traces")
            t = d["device_traces"]
            assert len(t) == 2 and t[1] == t[0][::2] and t[1][0] is t[0][0]
            assert d["raw_traces"] is t[0]
        else:
            assert len(d["device_traces"]) == a.devices
        assert list(d) == keys, list(d)
        e = d["device_traces"][0][0]
        assert e["action"] in ("segment_alloc", "alloc")
        assert e["frames"][0]["name"]
        assert d["segments"][0]["segment_pool_id"] == (0, 0)
        print("%s: %d segments, %d trace entries, %d annotations" % (
            a.out, len(d["segments"]),
            sum(len(t) for t in d["device_traces"]),
            len(d["external_annotations"])), file=sys.stderr)


if __name__ == "__main__":
    main()
