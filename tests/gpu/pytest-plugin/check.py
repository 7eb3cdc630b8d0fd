"""check.py: the table of tests/gpu/pytest-plugin/run, and its verdict.

    check.py JUNIT.xml TEST_STEPS.py SITE_DIR RECORD.json RECORD.db
        RECORD2.json RECORD2.db VRAMTRACE

Each line: what was checked, what was expected, what came out, ok or FAIL.
Exits 1 when a line fails.
"""
import json
import os
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET

junit, source, site, rec, db, rec2, db2, vt = sys.argv[1:9]
rows = []


def row(what, want, got, good):
    rows.append((what, str(want), str(got), "ok" if good else "FAIL"))


cases = {c.get("name"): c for c in ET.parse(junit).iter("testcase")}
leak_line = next(i for i, line in enumerate(open(source), 1)
                 if "# the leak" in line)
for name, leaks in (("test_marker_leak", True), ("test_marker_clean", False),
                    ("test_fixture_leak", True),
                    ("test_fixture_clean", False)):
    c = cases.get(name)
    failure = c.find("failure") if c is not None else None
    text = (failure.get("message", "") + (failure.text or "")) \
        if failure is not None else ""
    got = "missing" if c is None else ("failed" if failure is not None
                                       else "passed")
    row(name, "failed" if leaks else "passed", got,
        got == ("failed" if leaks else "passed"))
    if leaks:
        verdict = text.split("\n", 1)[0]
        if verdict.startswith("Failed: "):  # pytest.fail()'s prefix
            verdict = verdict[len("Failed: "):]
        verdict = verdict[:60]
        row(name + " verdict", "vramtrace: LEAK", verdict,
            verdict.startswith("vramtrace: LEAK"))
        where = "test_steps.py:%d train" % leak_line
        row(name + " site", where, "found" if where in text else "missing",
            where in text)
        frame = "train (%s:%d)" % (os.path.realpath(source), leak_line)
        row(name + " stack", "train frame", "found" if frame in text
            else "missing", frame in text)


def recorded(path, dbpath, label):
    r = json.load(open(path))
    mapped = r["mapped"]
    cupti = [p for p in mapped if os.path.basename(p).startswith(
        "libcupti.so")]
    cudart = [p for p in mapped if os.path.basename(p).startswith(
        "libcudart.so")]
    row(label + " torch", "cuda", "%s cuda %s" % (r["torch"], r["cuda"]), True)
    row(label + " libcupti mapped", 1, " ".join(cupti) or "none",
        len(cupti) == 1)
    row(label + " libcudart mapped", 1, " ".join(cudart) or "none",
        len(cudart) == 1)
    ours = [p for p in mapped if "libvramtrace" in p]
    row(label + " vramtrace libraries from the install", 2,
        len([p for p in ours if p.startswith(site)]),
        len([p for p in ours if p.startswith(site)]) == 2)
    row(label + " engine offloaded", ">0", r["stats"].get("offloads"),
        (r["stats"].get("offloads") or 0) > 0)
    row(label + " hooks: vramtrace._offload", headers, r.get("extension"),
        r.get("extension") == headers)
    n = subprocess.run([vt, "sql", dbpath, "--format", "csv",
                        "select count(*) from allocations"],
                       capture_output=True, text=True).stdout.split()
    n = int(n[-1]) if n and n[-1].isdigit() else 0
    row(label + " allocations recorded", ">0", n, n > 0)
    leaks = json.loads(subprocess.run([vt, "leaks", dbpath, "--format",
                                       "json"], capture_output=True,
                                      text=True).stdout or "{}")
    row(label + " steps, verdict", "8, CLEAN", "%s, %s" % (
        leaks.get("total_steps"), leaks.get("verdict")),
        leaks.get("total_steps") == 8 and leaks.get("verdict") == "CLEAN")


# pip install . builds the extension where this python3 has its headers.
headers = os.path.exists(os.path.join(sysconfig.get_paths()["include"],
                                      "Python.h"))
ext = os.path.join(site, "vramtrace", "_offload.abi3.so")
row("pip install: _offload.abi3.so", "installed" if headers else
    "absent (no Python.h)", "installed" if os.path.exists(ext) else "absent",
    os.path.exists(ext) == headers)
recorded(rec, db, "record")
recorded(rec2, db2, "record process,wheels")
w = [max(len(r[i]) for r in rows) for i in range(3)]
for r in rows:
    print("%-*s  %-*s  %-*s  %s" % (w[0], r[0], w[1], r[1], w[2], r[2][:90],
                                   r[3]))
sys.exit(1 if any(r[3] != "ok" for r in rows) else 0)
