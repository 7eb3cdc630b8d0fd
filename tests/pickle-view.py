#!/usr/bin/env python3
"""pickle-view.py FILE: what a snapshot holds, as `t-pickle --view` prints it.

Python's pickle.load() is the reference: every element of "segments",
of each "device_traces" list and of "external_annotations", in the order
of the top-level dict's keys, then the value of "allocator_settings".
"""
import pickle
import sys


def text(v):
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "%.17g" % v
    if isinstance(v, (str, bytes)):
        b = v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v
        body = "".join(chr(c) if 0x20 <= c <= 0x7e and c not in b'"\\'
                       else "\\x%02x" % c for c in b)
        return ('b"' if isinstance(v, bytes) else '"') + body + '"'
    if isinstance(v, tuple):
        return "(" + ", ".join(text(x) for x in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(text(k) + ": " + text(x)
                               for k, x in v.items()) + "}"
    raise TypeError(type(v))


def main():
    with open(sys.argv[1], "rb") as f:
        d = pickle.load(f)
    out = []
    for k, v in d.items():
        if k == "segments" and isinstance(v, list):
            out += ["segment %d %s" % (i, text(e)) for i, e in enumerate(v)]
        elif k == "device_traces" and isinstance(v, list):
            for dev, t in enumerate(v):
                if isinstance(t, list):
                    out += ["trace %d %d %s" % (dev, i, text(e))
                            for i, e in enumerate(t)]
        elif k == "external_annotations" and isinstance(v, list):
            out += ["annotation %d %s" % (i, text(e))
                    for i, e in enumerate(v)]
    if "allocator_settings" in d:
        out.append("key allocator_settings %s" % text(d["allocator_settings"]))
    sys.stdout.write("".join(line + "\n" for line in out))


if __name__ == "__main__":
    main()
