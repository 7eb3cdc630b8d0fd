"""Print what `vramtrace leaks` said on each file of the zoo next to what the
program measured itself.

usage: table.py DIR SHAPE...

DIR holds rec/SHAPE.json and snap/SHAPE.json (the facts zoo.py wrote) and
leaks/SHAPE.rec.json and leaks/SHAPE.snap.json (`leaks --format json`).
The first suspect's name is marked "!" where the program's leaking line
is neither its origin nor its caller.
The per-step check compares the live bytes `leaks` reports at each step
with torch.cuda.memory_allocated() after the same optimizer.step().
"""
import json
import os
import sys

MiB = 1024.0 * 1024


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def growth(allocated):
    """Mean change per step of memory_allocated() after the first step."""
    a = [x for x in allocated if x is not None]
    if len(a) < 2:
        return float("nan")
    return (a[-1] - a[0]) / (len(a) - 1) / MiB


def per_step(facts, lk):
    """The largest gap between leaks' live bytes and memory_allocated()."""
    a = facts.get("allocated") or []
    p = lk.get("per_step") or []
    if not a or None in a or len(p) != len(a):
        return "steps %d/%d" % (len(p), len(a))
    return "max diff %.2f MiB" % (max(abs(x["live_bytes"] - y)
                                      for x, y in zip(p, a)) / MiB)


def row(name, facts, lk, want=None):
    """The file's line; want is the verdict it must give where that is not
    the program's own (a snapshot without history tells no growth)."""
    if facts is None:
        return "%-24s no facts (the program failed; see its log)" % name
    truth = want or facts["verdict"]
    if lk is None:
        return "%-24s %-6s %+8.2f  leaks failed" % (
            name, truth, growth(facts["allocated"]))
    garbage = sorted("%s:%s" % (s["garbage"], s["stream"])
                     for s in lk.get("streams", []) if s.get("garbage"))
    mark = "ok" if lk["verdict"] == truth else "WRONG"
    return "%-24s %-6s %+8.2f  %-12s %-5s %+9.2f %4.0f%%  %-18s %-16s %s" % (
        name, truth, growth(facts["allocated"]), lk["verdict"], mark,
        lk["growth_bytes_per_step"] / MiB, 100 * lk["grew_fraction"],
        per_step(facts, lk), top_site(facts, lk), " ".join(garbage) or "-")


def file_line(label):
    """"zoo.py:161" of a label "/any/dir/zoo.py:161 main"."""
    return os.path.basename(label.rsplit(" ", 1)[0])


def top_site(facts, lk):
    """The file:line that names the first suspect (its origin, or its
    label where it has none), with "!" where neither the origin nor its
    caller is the program's leaking line."""
    s = lk.get("suspects") or []
    if not s or s[0]["site"] is None:
        return "-"
    names = [file_line(s[0][k]) for k in ("origin", "caller") if s[0].get(k)]
    site = names[0] if names else file_line(s[0]["site"])
    return site + ("!" if facts.get("line") not in [None, site] + names
                   else "")


def main():
    d, shapes = sys.argv[1], sys.argv[2:]
    print("%-24s %-6s %8s  %-12s %-5s %9s %5s  %-18s %-16s %s" % (
        "file", "truth", "MiB/step", "leaks says", "", "MiB/step", "grew",
        "vs allocated()", "first suspect", "garbage"))
    for kind, sub in (("rec", "rec"), ("snap", "snap")):
        for s in shapes:
            print(row("%s.%s" % (s, kind),
                      load(os.path.join(d, sub, s + ".json")),
                      load(os.path.join(d, "leaks", "%s.%s.json" %
                                        (s, kind)))))
    print(row("steady-nohistory.snap",
              load(os.path.join(d, "snap", "steady-nohistory.json")),
              load(os.path.join(d, "leaks", "steady-nohistory.snap.json")),
              "INCONCLUSIVE"))
    print(row("steady-socket.rec",
              load(os.path.join(d, "db", "steady-socket.json")),
              load(os.path.join(d, "leaks", "steady-socket.json"))))
    for s in shapes:
        f = load(os.path.join(d, "rec", s + ".json"))
        if f:
            print("%-12s line %-12s kept %6.2f MiB in %2d, allocator %s, "
                  "device %.1f GiB, torch %s" % (
                      s, f["line"], f["kept_bytes"] / MiB, f["kept_tensors"],
                      f["allocator"], f["device_bytes"] / MiB / 1024,
                      f["torch"]))


main()
