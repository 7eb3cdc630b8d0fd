#!/usr/bin/env python3
"""Write the hostile corpus (bad/*) and its manifest bad/EXPECT.

Each file must make the reader fail with one line containing the expected
substring.  Run from this directory after make-good.py (the truncated files
are cut from good/snapshot-p4.pickle).  Needs only python3 and, for the
SQLite file, the sqlite3 command.
"""
import os
import pickle
import pickletools
import struct
import subprocess

P4 = b"\x80\x04"
ROOT = P4 + b"}"                     # PROTO 4, root dict
KEY = b"\x8c\x01k"                   # a str key
expect = []


def write(name, data, substring):
    with open("bad/" + name, "wb") as f:
        f.write(data)
    expect.append((name, substring))


def refused(data):
    """The reader's message for the first opcode it refuses in data."""
    allowed = {"PROTO", "FRAME", "EMPTY_DICT", "EMPTY_LIST", "MARK",
               "SETITEMS", "SETITEM", "APPENDS", "APPEND",
               "SHORT_BINUNICODE", "BINUNICODE", "MEMOIZE", "BINPUT",
               "BINGET", "LONG_BINGET", "LONG_BINPUT", "EMPTY_TUPLE",
               "TUPLE1", "TUPLE2", "TUPLE3", "BININT1", "BININT", "NONE"}
    for op, _, pos in pickletools.genops(data):
        if op.name not in allowed:
            return ("unsupported pickle opcode %s at offset %d (not a "
                    "PyTorch memory snapshot)" % (op.name, pos))
    raise AssertionError("nothing refused")


class System:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def main():
    os.makedirs("bad", exist_ok=True)
    for f in os.listdir("bad"):
        if f.endswith(".pickle"):
            os.remove("bad/" + f)

    snap = open("good/snapshot-p4.pickle", "rb").read()
    for cut in (1, 2, 5, 11, 12, 57, 100, 1001, 30000, len(snap) - 1):
        write("trunc-%d.pickle" % cut, snap[:cut],
              "truncated at offset %d (" % cut)

    write("binunicode-4g.pickle", ROOT + b"X\xff\xff\xff\xffabc",
          "BINUNICODE of 4294967295 bytes")
    write("binunicode8-huge.pickle", ROOT + b"\x8d" +
          struct.pack("<Q", 2**63) + b"abc",
          "BINUNICODE8 of 9223372036854775808 bytes")
    write("binbytes-trunc.pickle", ROOT + b"B\x10\x00\x00\x00abc",
          "truncated at offset 11 (BINBYTES of 16 bytes at offset 3)")
    write("long4-huge.pickle", ROOT + b"\x8b\xff\xff\xff\x7f",
          "LONG4 of 2147483647 bytes at offset 3 does not fit in 64 bits")
    write("long1-9.pickle", ROOT + KEY + b"\x8a\x09" + b"\x01" * 9 + b"s.",
          "LONG1 of 9 bytes at offset 6 does not fit in 64 bits")
    write("frame-huge.pickle", P4 + b"\x95" + b"\xff" * 8 + b"}.",
          "truncated at offset 13 (FRAME at offset 2)")
    write("binfloat-trunc.pickle", ROOT + b"G\x3f\xf0",
          "truncated at offset 6 (BINFLOAT at offset 3)")
    write("nest-lists.pickle", ROOT + KEY + b"]" * 100000 + b"a" * 99999,
          "nesting deeper than 64 levels")
    write("nest-tuples.pickle", ROOT + KEY + b"N" + b"\x85" * 100000,
          "nesting deeper than 64 levels")
    write("binget-range.pickle", ROOT + KEY + b"h\x05s.",
          "memo index 5 out of range at offset 6 (BINGET")
    write("long-binget-range.pickle", ROOT + KEY + b"j\xff\xff\xff\xffs.",
          "memo index 4294967295 out of range at offset 6 (LONG_BINGET")
    write("binput-far.pickle", ROOT + b"\x94" + KEY + b"]r\x00\x00\x10\x00",
          "memo index 1048576 out of range at offset 8 (LONG_BINPUT")
    write("toplevel-list.pickle", pickle.dumps([1, 2], protocol=4),
          "top-level value is a list, not a dict")
    write("toplevel-int.pickle", pickle.dumps(5, protocol=4),
          "top-level value is an int, not a dict")
    write("toplevel-stop-int.pickle", ROOT + b"K\x05.",
          "top-level value is an int, not a dict")
    for proto in (2, 4):
        data = pickle.dumps({"segments": [System()]}, protocol=proto)
        write("os-system-p%d.pickle" % proto, data, refused(data))
    for name, code in (("reduce", b"R"), ("build", b"b"),
                       ("inst", b"iposix\nsystem\n"), ("obj", b"o"),
                       ("newobj", b"\x81"), ("newobj-ex", b"\x92"),
                       ("persid", b"P1\n"), ("binpersid", b"Q"),
                       ("ext1", b"\x82\x01"), ("ext4", b"\x84\x01\0\0\0"),
                       ("dict", b"d"), ("global", b"cos\nsystem\n"),
                       ("stack-global", b"\x8c\x02os\x8c\x06system\x93")):
        data = ROOT + code + b"."
        write(name + ".pickle", data, refused(data))
    write("unknown-0xff.pickle", ROOT + b"\xff.",
          "unsupported pickle opcode 0xff at offset 3 (not a PyTorch memory"
          " snapshot)")
    write("empty.pickle", b"", "empty file")
    subprocess.run(["sqlite3", "bad/sqlite.pickle",
                    "create table t(x); insert into t values (1);"],
                   check=True)
    expect.append(("sqlite.pickle", "a SQLite database, not a pickle"))
    write("text.pickle", b"segments: 3\ndevice_traces: none\n",
          "not a pickle of protocol 2 to 5 (byte 0x73 at offset 0")
    write("proto6.pickle", b"\x80\x06}.",
          "unsupported pickle protocol 6 at offset 0")
    write("proto1.pickle", b"\x80\x01}.",
          "unsupported pickle protocol 1 at offset 0")
    write("proto0-noproto.pickle", pickle.dumps({}, protocol=0),
          "not a pickle of protocol 2 to 5 (byte 0x28 at offset 0")
    write("append-empty.pickle", P4 + b"a.",
          "stack underflow at offset 2 (APPEND)")
    write("setitems-no-mark.pickle", ROOT + b"u.",
          "SETITEMS without MARK at offset 3")
    write("setitems-odd.pickle", ROOT + b"(K\x01u.",
          "odd number of items (1) for SETITEMS at offset 6")
    write("setitems-to-list.pickle", P4 + b"}]K\x01K\x02s.",
          "SETITEM to a list, not a dict, at offset 8")
    write("setitem-list-key.pickle", ROOT + b"]K\x01s.",
          "unhashable dict key (list) at offset 6")
    write("stop-empty.pickle", P4 + b".",
          "stack underflow at offset 2 (STOP)")
    write("no-stop.pickle", ROOT, "truncated at offset 3 (no STOP opcode")
    write("utf8-invalid.pickle", ROOT + b"\x8c\x02\xff\xfeK\x01s.",
          "invalid UTF-8 in SHORT_BINUNICODE at offset 3")
    write("utf8-overlong.pickle", ROOT + b"\x8c\x02\xc0\xafK\x01s.",
          "invalid UTF-8 in SHORT_BINUNICODE at offset 3")
    write("append-to-int.pickle", ROOT + b"K\x01K\x02a.",
          "APPEND to an int, not a list, at offset 7")
    write("self-append.pickle", ROOT + KEY + b"]\x94h\x00a.",
          "container put inside itself at offset 10")
    write("sealed-append.pickle", ROOT + KEY + b"]\x94sh\x00K\x02a.",
          "APPEND into a container already nested in another at offset 13")
    write("marks.pickle", ROOT + b"(" * 70000, "more than 65536 open MARKs")
    # Found by fuzz-pickle: EMPTY_TUPLE on the empty stack.
    write("fuzz-empty-tuple.pickle", b"\x80\x04)\x8d\x00",
          "top-level value is a tuple, not a dict")
    # Shared values are read again from the file, within bounds: a trace
    # list referenced 200 times would read the file over 16 times...
    trace = [{"action": "alloc", "addr": i, "size": 512, "stream": 0,
              "time_us": i, "frames": []} for i in range(1000)]
    data = pickle.dumps({"segments": [], "device_traces": [trace] * 200},
                        protocol=4)
    write("reread-bomb.pickle", data, "would make the file read more than "
          "16 times over (reading again the value that offset ")
    # ...and a value inside a value inside ... read again 17 deep.
    entries = [{"action": "x", "time_us": 0}]
    for i in range(17):
        entries.append({"action": "x", "time_us": i, "prev": entries[-1]})
    data = pickle.dumps({"segments": [],
                         "device_traces": [[e] for e in entries]},
                        protocol=4)
    gets = [p for op, _, p in pickletools.genops(data)
            if op.name in ("BINGET", "LONG_BINGET")]
    write("nested-deep.pickle", data, "shared values nested more than 16 "
          "deep at offset 98 (reading again the value that offset %d "
          "refers to)" % gets[-1])
    def u(text):
        return b"\x8c" + bytes([len(text)]) + text.encode()
    write("key-twice.pickle", ROOT + b"(" + u("segments") + b"]" +
          u("segments") + b"]u.", 'key "segments" twice in the top-level '
          "dict at offset 26")
    write("root-dropped.pickle", ROOT + b"0}.", "the top-level dict is "
          "dropped at offset 3")
    write("root-nested.pickle", P4 + b"(}t.", "the top-level dict is put "
          "inside another value at offset 4")
    write("stop-two.pickle", ROOT + b"}.", "STOP at offset 4 returns a dict "
          "inside the top-level one")
    # An entry the importer takes (an action it skips) for the two below.
    entry = b"}" + u("action") + u("x") + b"s" + u("time_us") + b"K\x00s"
    # A shared trace list whose entry reads memo 0, stored again after it.
    data = (ROOT + u("k1") + u("s") + b"\x94s" + u("device_traces") +
            b"]\x94]\x94" + entry + u("a") + b"h\x00sa" + b"a" +
            b"K\x07q\x000" + b"h\x02as.")
    pos = [p for op, _, p in pickletools.genops(data)
           if op.name == "BINGET"][0]
    write("memo-reused.pickle", data, "memo index 0 at offset %d was stored"
          " again later" % pos)
    # A trace list popped, taken back and filled, then shared.
    data = (ROOT + u("device_traces") + b"]\x94(]\x94" + b"0h\x01" +
            entry + b"ae(h\x01es.")
    write("moved.pickle", data, "after it was changed off the stack: it "
          "cannot be read again")

    with open("bad/EXPECT", "w") as f:
        f.write("# file<TAB>substring of the reader's one-line error;"
                " written by make-bad.py\n")
        for name, substring in expect:
            f.write("%s\t%s\n" % (name, substring))


if __name__ == "__main__":
    main()
