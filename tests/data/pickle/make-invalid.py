#!/usr/bin/env python3
"""Write invalid/*: pickles the reader reads whole but whose values no
PyTorch snapshot can hold (a negative size, a dict where a list belongs, a
device no machine has), and invalid/EXPECT: the substring of `vramtrace
import`'s one-line error for each (the key path and the value).  Each is
the snapshot of make-good.py with one value changed.  Run from this
directory with python3.
"""
import copy
import importlib.util
import os
import pickle

spec = importlib.util.spec_from_file_location("good", "make-good.py")
good = importlib.util.module_from_spec(spec)
spec.loader.exec_module(good)


def snapshot():
    s = good.snapshot()
    del s["future_key"]
    return copy.deepcopy(s)


def case(change):
    s = snapshot()
    change(s)
    return s


def setter(path, value):
    """A change that sets the value at path (keys and indices) to value."""
    def change(s):
        d = s
        for k in path[:-1]:
            d = d[k]
        if value is DELETE:
            del d[path[-1]]
        else:
            d[path[-1]] = value
    return change


DELETE = object()
SEG = ["segments", 0]
BLOCK = ["segments", 0, "blocks", 1]
ENTRY = ["device_traces", 1, 4]
NOTE = ["external_annotations", 1]
MAX_TIME = (2**63 - 1) // 1000

CASES = [
    # name, change, expected substring
    ("segments-dict", setter(["segments"], {"a": 1}),
     "segments is a dict, not a list"),
    ("segments-tuple", lambda s: s.update(segments=tuple(s["segments"])),
     "segments is a tuple, not a list"),
    ("device-traces-dict", setter(["device_traces"], {"0": []}),
     "device_traces is a dict, not a list"),
    ("device-trace-int", setter(["device_traces", 0], 5),
     "device_traces[0] is an int, not a list"),
    ("devices-1025", lambda s: s.update(device_traces=[[]] * 1025),
     "device_traces has 1025 devices, more than 1024"),
    ("annotations-dict", setter(["external_annotations"], {"x": 1}),
     "external_annotations is a dict, not a list"),
    ("settings-list", setter(["allocator_settings"], [1]),
     "allocator_settings is a list, not a dict"),
    ("no-segments-no-traces", lambda s: (s.pop("segments"),
                                         s.pop("device_traces")),
     "no \"segments\" or \"device_traces\""),
    ("segment-int", setter(SEG, 7), "segments[0] is an int, not a dict"),
    ("segment-total-2-47", setter(SEG + ["total_size"], 2**47),
     "segments[0].total_size is 140737488355328, not in 0 to"
     " 140737488354816"),
    ("segment-total-negative", setter(SEG + ["total_size"], -1),
     "segments[0].total_size is -1, negative"),
    ("segment-allocated-over", setter(SEG + ["allocated_size"], 2**40),
     "segments[0].allocated_size is 1099511627776, not in 0 to 3145728"),
    ("segment-device-range", setter(SEG + ["device"], 5000),
     "segments[0].device is 5000, not in 0 to 1023"),
    ("segment-device-negative", setter(SEG + ["device"], -1),
     "segments[0].device is -1, negative"),
    ("segment-address-negative", setter(SEG + ["address"], -4096),
     "segments[0].address is -4096, negative"),
    ("segment-stream-missing", setter(SEG + ["stream"], DELETE),
     "segments[0].stream is missing"),
    ("segment-stream-str", setter(SEG + ["stream"], "0"),
     "segments[0].stream is a str, not an int"),
    ("segment-pool-three", setter(SEG + ["segment_pool_id"], (0, 0, 0)),
     "segments[0].segment_pool_id has 3 items, not 2"),
    ("segment-expandable-int", setter(SEG + ["is_expandable"], 1),
     "segments[0].is_expandable is an int, not a bool"),
    ("blocks-dict", setter(SEG + ["blocks"], {"address": 0}),
     "segments[0].blocks is a dict, not a list"),
    ("block-size-negative", setter(BLOCK + ["size"], -2**20),
     "segments[0].blocks[1].size is -1048576, negative"),
    ("block-outside", setter(BLOCK + ["address"], 0x7f2000000000),
     "segments[0].blocks[1].address is 139775415681024, not in "
     "139637976727552 to 139637979873280"),
    ("block-past-end", setter(BLOCK + ["size"], 2**30),
     "segments[0].blocks[1].size is 1073741824, not in 0 to 2097152"),
    ("block-state-int", setter(BLOCK + ["state"], 1),
     "segments[0].blocks[1].state is an int, not a str"),
    ("frames-dict", setter(SEG + ["frames"], {"name": "x"}),
     "segments[0].frames is a dict, not a list"),
    ("frame-str", setter(SEG + ["frames"], ["train.py:70"]),
     "segments[0].frames[0] is a str, not a dict"),
    ("frame-line-negative", lambda s: s["segments"][0].update(
        frames=[{"name": "f", "filename": "a.py", "line": -3}]),
     "segments[0].frames[0].line is -3, negative"),
    # 2^64 - 1 is PyTorch's unknown line; 2^63 is no line at all.
    ("frame-line-2-63", lambda s: s["segments"][0].update(
        frames=[{"name": "f", "filename": "a.py", "line": 2**63}]),
     "segments[0].frames[0].line is 9223372036854775808, not in 0 to"),
    ("entry-size-2-64", setter(ENTRY + ["size"], 2**64 - 1),
     "device_traces[1][4].size is 18446744073709551615, not in 0 to"),
    # 128 TiB, more than any device has (and the 47 bits a size is read in)
    ("entry-size-2-47", setter(ENTRY + ["size"], 2**47),
     "device_traces[1][4].size is 140737488355328, not in 0 to"
     " 140737488354816"),
    ("entry-list", setter(ENTRY, [1, 2]),
     "device_traces[1][4] is a list, not a dict"),
    ("entry-size-negative", setter(ENTRY + ["size"], -512),
     "device_traces[1][4].size is -512, negative"),
    ("entry-addr-str", setter(ENTRY + ["addr"], "0x7f"),
     "device_traces[1][4].addr is a str, not an int"),
    ("entry-time-negative", setter(ENTRY + ["time_us"], -1),
     "device_traces[1][4].time_us is -1, negative"),
    ("entry-time-overflow", setter(ENTRY + ["time_us"], MAX_TIME + 1),
     "device_traces[1][4].time_us is %d, not in 0 to %d"
     % (MAX_TIME + 1, MAX_TIME)),
    # PyTorch before 2.2 wrote no times, and no annotations
    ("entry-time-missing", lambda s: [e.pop("time_us") for t in
                                      s["device_traces"] for e in t] and
     s.pop("external_annotations"),
     "device_traces[0][0].time_us is missing: the trace has no times, as"
     " PyTorch before 2.2 wrote it"),
    ("entry-stream-negative", setter(ENTRY + ["stream"], -2),
     "device_traces[1][4].stream is -2, negative"),
    ("entry-action-missing", setter(ENTRY + ["action"], DELETE),
     "device_traces[1][4].action is missing"),
    ("entry-action-long", setter(ENTRY + ["action"], "a" * 40),
     "device_traces[1][4].action is 40 bytes long, more than 31"),
    ("entry-frames-int", setter(ENTRY + ["frames"], 0),
     "device_traces[1][4].frames is an int, not a list"),
    # 5 actions on device 0, then 59 new ones and one too many
    ("actions-65", lambda s: [e.update(action="act%d" % i) for i, e in
                              enumerate(s["device_traces"][1][:65])],
     "device_traces[1][59].action: more than 64 different actions"),
    ("annotation-time-missing", setter(NOTE + ["time_us"], DELETE),
     "external_annotations[1].time_us is missing"),
    ("annotation-device-range", setter(NOTE + ["device"], 1024),
     "external_annotations[1].device is 1024, not in -1 to 1023"),
    ("annotation-name-none", setter(NOTE + ["name"], None),
     "external_annotations[1].name is a none, not a str"),
]


def main():
    os.makedirs("invalid", exist_ok=True)
    lines = ["# file<TAB>substring of `vramtrace import`'s one-line error; "
             "written by make-invalid.py"]
    for name, change, want in CASES:
        data = pickle.dumps(case(change), protocol=4)
        pickle.loads(data)               # Python reads it whole
        with open("invalid/%s.pickle" % name, "wb") as f:
            f.write(data)
        lines.append("%s.pickle\t%s" % (name, want))
    with open("invalid/EXPECT", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
