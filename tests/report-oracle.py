#!/usr/bin/env python3
"""report-oracle.py: check an HTML report's data against its database.

usage: report-oracle.py VRAMTRACE PAGE.html DB

Reads the page's data (the JSON in #vramtrace-data) and the run's
allocations (through `vramtrace sql`), recomputes in Python what
query-report.c computes in C and prints one line per difference:
  - each track's peak (bytes and instant) and its bytes at the end;
  - each series' bucket values: the state of the track's series at the
    instant of the track's highest total within the bucket (the state at
    the bucket's start when nothing higher happens in it);
  - the run's peak in the report's layer over the device lanes (every lane
    for the host layer, pinned host memory);
  - the holders: the sites' bytes at the peak and at the end add up to the
    layer's live bytes then, and each site's listed blocks are its
    largest live ones.
Exits 0 when there is no difference.  Times are ns from the page's t0; an
allocation of unknown time counts from t0.
"""
import json
import re
import subprocess
import sys

LAYERS = ["segment", "pool", "block", "host"]


def page_data(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="vramtrace-data">'
                  r'\n(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def sql(vt, db, query):
    out = subprocess.run([vt, "sql", db, query, "--format", "json"],
                         check=True, capture_output=True).stdout
    return json.loads(out)


def walk(events, keys, t0, width, n):
    """Events (t, key, delta) -> (hi per key per bucket, peak, peak t,
    end per key): instants together, the highest total per bucket."""
    events.sort(key=lambda e: e[0])
    cur = {k: 0 for k in keys}
    hi = {k: [0] * n for k in keys}
    peak, peak_t, b_open, best, i = 0, None, -1, None, 0

    def open_until(b):
        nonlocal b_open, best
        while b_open < b:
            b_open += 1
            for k in keys:
                hi[k][b_open] = cur[k]
            best = sum(cur.values())
    while i < len(events):
        t = events[i][0]
        b = min((t - t0) // width, n - 1)
        open_until(b)
        while i < len(events) and events[i][0] == t:
            cur[events[i][1]] += events[i][2]
            i += 1
        total = sum(cur.values())
        if total > best:
            best = total
            for k in keys:
                hi[k][b] = cur[k]
        if total > peak:
            peak, peak_t = total, t - t0
    open_until(n - 1)
    return hi, peak, peak_t, dict(cur)


def main(vt, page, db):
    d = page_data(page)
    bad = []
    run = d["run"]["id"]
    rows = sql(vt, db, "select id, coalesce(process_id, 0) as p,"
               " coalesce(device, -1) as d, stream, layer, alloc_ns,"
               " free_ns, bytes, site_id from allocations where run_id = %d"
               % run)
    t0 = int(d["t0_ns"]) if d["t0_ns"] is not None else 0
    width, n = d["bucket_ns"], d["buckets"]
    lane_of = {}
    for i, lane in enumerate(d["lanes"]):
        lane_of[(lane["process"] or 0, lane["device"])] = i

    def events(match):
        ev = []
        for r in rows:
            if not match(r):
                continue
            a = r["alloc_ns"] if r["alloc_ns"] is not None else t0
            key = (r["p"], r["d"], r["stream"], r["layer"])
            ev.append((max(a, t0), key, r["bytes"]))
            if r["free_ns"] is not None:
                ev.append((r["free_ns"], key, -r["bytes"]))
        return ev

    if min([t0] + [r["alloc_ns"] for r in rows
                   if r["alloc_ns"] is not None]) < t0:
        bad.append("an allocation before t0")
    for i, lane in enumerate(d["lanes"]):
        for k in lane["tracks"]:
            layer = LAYERS.index(k["layer"])
            p = lane["process"] or 0
            keys = [(p, lane["device"], s["stream"], layer)
                    for s in k["series"]]
            hi, peak, peak_t, end = walk(events(
                lambda r: (r["p"], r["d"], r["layer"]) ==
                (p, lane["device"], layer)), keys, t0, width, n)
            where = "lane %d %s" % (i, k["layer"])
            if (k["peak"]["bytes"], k["peak"]["t"]) != (peak, peak_t):
                bad.append("%s: peak %s, want %s at %s" % (
                    where, k["peak"], peak, peak_t))
            if k["end_bytes"] != sum(end.values()):
                bad.append("%s: end %d, want %d" % (
                    where, k["end_bytes"], sum(end.values())))
            for s, key in zip(k["series"], keys):
                if s["hi"] != hi[key]:
                    b = next(j for j in range(n) if s["hi"][j] !=
                             hi[key][j])
                    bad.append("%s stream %s: bucket %d is %d, want %d" % (
                        where, s["stream"], b, s["hi"][b], hi[key][b]))
                if s["end_bytes"] != end[key]:
                    bad.append("%s stream %s: end %d, want %d" % (
                        where, s["stream"], s["end_bytes"], end[key]))
    layer = LAYERS.index(d["layer"])
    host = LAYERS.index("host")

    def counted(r):
        return r["layer"] == layer and (layer == host or r["d"] >= 0)
    in_layer = [r for r in rows if counted(r)]
    keys = sorted({(r["p"], r["d"], r["stream"], layer) for r in in_layer},
                  key=str)
    _, peak, peak_t, _ = walk(events(counted), keys, t0, width, n)
    if (d["peak"]["bytes"], d["peak"]["t"]) != (peak, peak_t):
        bad.append("run peak %s, want %d at %s" % (d["peak"], peak, peak_t))

    # The holders, at the peak (0) and at the end (1).
    h = d["holders"]
    for at in (0, 1):
        if at == 0 and peak_t is None:
            continue
        t = t0 + (peak_t or 0)
        live = [r for r in in_layer if (at == 1 and r["free_ns"] is None) or
                (at == 0 and (r["alloc_ns"] or t0) <= t and
                 (r["free_ns"] is None or r["free_ns"] > t))]
        total = sum(s["bytes"][at] for s in h["sites"]) + h["other_bytes"][at]
        if total != sum(r["bytes"] for r in live):
            bad.append("holders at %d: %d bytes, want %d" % (
                at, total, sum(r["bytes"] for r in live)))
        listed = {}
        for b in h["blocks"][at]:
            listed.setdefault(b[0], []).append(b[3])
        for si, site in enumerate(h["sites"]):
            want = sorted((r["bytes"] for r in live if (r["site_id"] or 0)
                           == site["id"]), reverse=True)
            if [len(want), sum(want)] != [site["blocks"][at],
                                          site["bytes"][at]]:
                bad.append("holders at %d: site %d holds %d in %d, want "
                           "%d in %d" % (at, site["id"], site["bytes"][at],
                                         site["blocks"][at], sum(want),
                                         len(want)))
            if listed.get(si, []) != want[:h["site_blocks"]]:
                bad.append("holders at %d: site %d lists %s, want %s" % (
                    at, site["id"], listed.get(si, []),
                    want[:h["site_blocks"]]))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
