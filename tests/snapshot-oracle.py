"""snapshot-oracle.py: what Python's own pickle module reads from a
PyTorch memory snapshot, as lines of "key value" that the import tests
compare with what vramtrace stored.  The oracle only counts; it never
writes a database."""
import collections
import pickle
import sys

with open(sys.argv[1], "rb") as f:
    d = pickle.load(f)
out = collections.OrderedDict()
out["segments"] = len(d["segments"])
out["blocks"] = sum(len(s["blocks"]) for s in d["segments"])
out["trace_entries"] = sum(len(t) for t in d["device_traces"])
for dev, trace in enumerate(d["device_traces"]):
    for action, n in sorted(collections.Counter(e["action"] for e in trace).items()):
        out["action %d %s" % (dev, action)] = n
active = collections.Counter()
count = collections.Counter()
for s in d["segments"]:
    for b in s["blocks"]:
        if b["state"].startswith("active"):
            active[s["stream"]] += b["size"]
            count[s["stream"]] += 1
for stream in sorted(active):
    out["active_bytes %d" % stream] = active[stream]
    out["active_blocks %d" % stream] = count[stream]
out["steps"] = sum(1 for a in d["external_annotations"]
                   if a["stage"] == "END" and a["name"].startswith("Optimizer.step"))
for k, v in out.items():
    print(k, v)
