#!/usr/bin/env python3
"""Write the small valid pickles that t-pickle.c reads (tests/data/pickle/good).

values-pN: one dict with every value type the reader knows, at protocol N.
snapshot-pN: a tiny snapshot-shaped dict (segments, device_traces of two
devices, allocator_settings, external_annotations) with shared frames.
handmade: opcodes Python's pickler does not emit for small data (BINUNICODE8,
LONG4, SETITEM, POP, POP_MARK, TUPLE, LONG_BINPUT, BINBYTES8) and ints of
9 bytes it would write in fewer, written raw.
shared-NAME-pN: the snapshot with objects shared as a script that filters or
merges snapshots shares them (a trace list twice, entries repeated, the
original kept under another key, ...), at protocols 2 and 4.
Run from this directory; it checks every file with pickle.loads.
"""
import pickle
import struct


def values():
    shared = [1, 2, 3]
    return {
        "none": None, "true": True, "false": False,
        "i0": 0, "i255": 255, "i256": 256, "i65535": 65535,
        "i65536": 65536, "im1": -1, "imin32": -2**31, "imax32": 2**31 - 1,
        "i2_31": 2**31, "pos6": 2**47 - 5, "neg6": -2**47 + 5,
        "pos7": 2**55 + 7, "neg7": -2**55 - 7, "max64": 2**63 - 1,
        "min64": -2**63, "u63": 2**63, "umax64": 2**64 - 1,
        "addr": 0x7f6a2c000000,
        "f": 1.5, "fneg": -2.25e-300, "fbig": 1e300,
        "s": "", "short": "abc", "nul": "a\0b",
        "utf8": "caf\u00e9 \U0001f600", "long": "x" * 300,
        "t0": (), "t1": (1,), "t2": (1, "a"), "t3": (1, 2, 3),
        "t4": (1, 2, 3, 4),
        "shared": [shared, shared, {"again": shared}],
        "nested": [[[[["deep"]]]]],
        "biglist": list(range(2500)),
        "bigdict": {"k%d" % i: i for i in range(2100)},
        "intkeys": {1: "one", (2, 3): "tuple", None: "none"},
        "one": [7], "empty": [], "edict": {},
    }


def snapshot():
    f1 = {"name": "<module>", "filename": "train.py", "line": 70}
    f2 = {"name": "forward", "filename": "model.py", "line": 12}
    frames = [f2, f1]
    blocks = [{"address": 0x7f0000000000 + i * 2**20, "size": 2**20,
               "requested_size": 1000 + i, "state": st, "frames": frames}
              for i, st in enumerate(["active_allocated", "inactive",
                                      "active_pending_free"])]
    seg = {"device": 0, "address": 0x7f0000000000, "total_size": 3 * 2**20,
           "allocated_size": 2**20, "active_size": 2**20,
           "requested_size": 1000, "stream": 0, "segment_type": "large",
           "segment_pool_id": (0, 0), "is_expandable": False,
           "frames": frames, "blocks": blocks}
    seg2 = dict(seg, address=0x7f1000000000,
                blocks=[dict(blocks[0], address=0x7f1000000000)],
                segment_type="small")
    actions = ["segment_alloc", "alloc", "free_requested", "free_completed",
               "alloc", "segment_free"]

    def trace(dev, n):
        return [{"action": actions[i % len(actions)],
                 "addr": 0x7f0000000000 + i * 512, "size": 512 * (i + 1),
                 "stream": 93898984661968 if i % 3 else 0,
                 "time_us": 1795253848541456 + i,
                 "compile_context": "N/A", "user_metadata": "",
                 "frames": frames if i % 2 else [f1]}
                for i in range(n)]
    return {
        "segments": [seg, seg2],
        "device_traces": [trace(0, 7), trace(1, 1200)],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "",
                               "max_split_size": -1,
                               "garbage_collection_threshold": 0.5,
                               "expandable_segments": False,
                               "roundup_power2_divisions": {"1": 0}},
        "external_annotations": [
            {"stage": "START", "name": "Optimizer.step#AdamW.step",
             "device": 0, "time_us": 1795253849671844},
            {"stage": "END", "name": "Optimizer.step#AdamW.step",
             "device": 0, "time_us": 1795253849721083}],
        "future_key": {"unknown": [1, 2]},
    }


def shared():
    """Snapshots whose objects are shared, by name."""
    base = snapshot()
    del base["future_key"]
    t0, t1 = base["device_traces"]
    seg = base["segments"]

    def but(**kw):
        d = dict(base)
        d.update(kw)
        return d

    def first(**kw):
        return dict(list(kw.items()) + list(base.items()))

    kept = [e for e in t1 if e["action"] != "alloc"]
    return {
        # the same trace list for two devices
        "trace-twice": but(device_traces=[t1, t1]),
        # entries repeated in one list, and the merge of two devices
        "trace-concat": but(device_traces=[t0 + t0, t1 + t1[:500]]),
        "segments-concat": but(segments=seg + seg),
        # a filtered trace, and the original kept after or before it
        "raw-after": but(device_traces=[kept], raw=t1),
        "raw-before": first(raw=t1, device_traces=[kept, t0]),
        # lists first seen under keys the importer does not read
        "unknown-first": first(zzz=t1, zz2=seg),
        "nested": but(device_traces=[t1 + t1, t1 + t1]),
        # "segments" inside another value is not the snapshot's
        "meta-segments": first(meta={"segments": seg}),
        "empty-first": but(device_traces=[[], t1]),
        "single-first": but(device_traces=[[t0[0]], t1]),
        "self-merge": {"segments": seg + seg,
                       "device_traces": [t0, t1, t0, t1],
                       "allocator_settings": base["allocator_settings"],
                       "external_annotations":
                           base["external_annotations"] * 2},
        "settings-shared": but(allocator_settings={"x": t0},
                               device_traces=[t0]),
        "segments-in-settings": first(allocator_settings=seg),
    }


def handmade():
    def u8(s):
        b = s.encode()
        return b"\x8d" + struct.pack("<Q", len(b)) + b
    out = b"\x80\x04}("                              # PROTO 4, dict, MARK
    out += u8("big") + b"\x8b\x08\x00\x00\x00" + struct.pack("<q", -2**62)
    out += u8("zero") + b"\x8b\x00\x00\x00\x00"      # LONG4 of 0 bytes
    out += u8("long1zero") + b"\x8a\x00"             # LONG1 of 0 bytes
    out += u8("long1-9") + b"\x8a\x09\x05" + b"\x00" * 8  # 9 bytes, 5
    out += u8("long1-9neg") + b"\x8a\x09" + b"\xff" * 9   # 9 bytes, -1
    out += u8("tup") + b"(K\x01K\x02K\x03K\x04t"       # TUPLE from MARK
    out += u8("bytes") + b"\x8e" + struct.pack("<Q", 3) + b"a\0b"
    out += u8("put") + b"]q\x00"                     # BINPUT 0
    out += u8("put2") + b"]r\x01\x00\x00\x00"         # LONG_BINPUT 1
    out += b"u"                                      # SETITEMS
    out += b"\x8c\x03getj\x01\x00\x00\x00s"           # LONG_BINGET, SETITEM
    out += b"K\x050"                                 # POP
    out += b"(K\x06K\x071"                           # POP_MARK
    out += b"\x8c\x03binB\x02\x00\x00\x00hiq\x02s"      # BINBYTES, BINPUT
    out += b"\x8c\x04bin2h\x02s"                     # BINGET
    out += b"\x8c\x04get0h\x00s"                     # BINGET
    out += b"." + b"trailing bytes are ignored"
    return out


def main():
    for proto in (2, 4, 5):
        for name, obj in (("values", values()), ("snapshot", snapshot())):
            v = dict(obj)
            if proto == 2 and name == "values":
                v["bytes"] = None        # protocol 2 pickles bytes by REDUCE
            elif name == "values":
                v["bytes"] = b"\x00\xffbytes"
            data = pickle.dumps(v, protocol=proto)
            assert pickle.loads(data) == v
            with open("good/%s-p%d.pickle" % (name, proto), "wb") as f:
                f.write(data)
    data = handmade()
    obj = pickle.loads(data)
    assert obj == {"big": -2**62, "zero": 0, "long1zero": 0,
                   "long1-9": 5, "long1-9neg": -1,
                   "tup": (1, 2, 3, 4), "bytes": b"a\0b", "put": [],
                   "put2": [], "get": [], "bin": b"hi", "bin2": b"hi",
                   "get0": []}, obj
    with open("good/handmade.pickle", "wb") as f:
        f.write(data)
    for name, obj in shared().items():
        for proto in (2, 4):
            data = pickle.dumps(obj, protocol=proto)
            assert pickle.loads(data) == obj
            with open("good/shared-%s-p%d.pickle" % (name, proto),
                      "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
