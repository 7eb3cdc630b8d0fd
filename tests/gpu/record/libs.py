"""The shared libraries a loop of bench.py leaves mapped, for part libs.

usage: libs.py LOOP OUT.txt

Runs bench.py's LOOP for 3 timed steps in this process, then writes the
names of the shared objects mapped at the end (from /proc/self/maps), one
per line, sorted.
"""
import os
import runpy
import sys

loop, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", loop, out + ".json", "3"]
runpy.run_path(os.path.join(here, "bench.py"), run_name="__main__")
names = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        path = line.split(None, 5)[5].strip() if len(line.split()) > 5 else ""
        if ".so" in os.path.basename(path):
            names.add(os.path.basename(path))
with open(out, "w") as f:
    f.write("".join(n + "\n" for n in sorted(names)))
