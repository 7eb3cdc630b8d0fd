#!/usr/bin/env python3
"""Write the hostile corpus of packed snapshots (bad/*) and bad/EXPECT.

Each file must make `vramtrace import` fail with one line naming the file
and containing the expected substring (the third column, where there is
one, is the codec the build must read for that line; a build without it
says it was built without).  Run from this directory: the damaged files
are made from real.pickle.xz, a snapshot a real program wrote with
pickle.dump, and tiny.pt, one (without a trace) that torch.save wrote.  Needs python3 and the xz
and zstd commands.
"""
import bz2
import gzip
import io
import lzma
import os
import sqlite3
import struct
import subprocess
import tempfile
import zipfile

PICKLE = lzma.open("real.pickle.xz").read()
TORCH = open("tiny.pt", "rb").read()
SMALL = b"\x80\x04}\x94."          # an empty dict: enough inside a zip
expect = []


def write(name, data, substring, codec=""):
    with open("bad/" + name, "wb") as f:
        f.write(data)
    expect.append((name, substring, codec))


def flip(data, at):
    b = bytearray(data)
    b[at] ^= 0xFF
    return bytes(b)


def zip_of(entries, method=zipfile.ZIP_STORED):
    """A zip archive of (name, bytes), the same bytes at every run."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return out.getvalue()


def central(data):
    """Offset of the first central directory entry of a zip."""
    return data.index(b"PK\1\2")


def patch(data, at, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


gz = gzip.compress(PICKLE, mtime=0)
write("truncated.gz", gz[:len(gz) // 2], "truncated: its gzip data ends early")
write("garbage-after.gz", gz + b"garbage", "cannot decompress its gzip data at byte")
write("flipped.gz", flip(gz, len(gz) // 2), "cannot decompress its gzip data at byte")
write("empty.gz", gzip.compress(b"", mtime=0), "(gzip content)")
xz = lzma.compress(PICKLE)
write("truncated.xz", xz[:len(xz) // 2], "truncated: its xz data ends early",
      "xz")
write("flipped.xz", flip(xz, len(xz) // 2), "cannot decompress its xz data at byte", "xz")
zst = subprocess.run(["zstd", "-q", "-c"], input=PICKLE, check=True,
                     stdout=subprocess.PIPE).stdout
write("truncated.zst", zst[:len(zst) // 2],
      "truncated: its zstd data ends early", "zstd")
# zstd --long=31 on a pipe (the size unknown) keeps its 2 GiB window
long = subprocess.run(["zstd", "-q", "--long=31", "-c"], input=PICKLE,
                      check=True, stdout=subprocess.PIPE).stdout
write("long-window.zst", long, "needs a window over 128 MiB (zstd --long):"
      " decompress it with zstd -d --long=31 first", "zstd")
write("snapshot.bz2", bz2.compress(PICKLE),
      "compressed with bzip2, which vramtrace does not read")
write("snapshot.lz4", b"\x04\x22\x4d\x18" + bytes(64),
      "compressed with lz4, which vramtrace does not read")
with tempfile.TemporaryDirectory() as d:
    db = os.path.join(d, "x.db")
    sqlite3.connect(db).execute("CREATE TABLE t(x)").connection.commit()
    write("database.db.gz", gzip.compress(open(db, "rb").read(), mtime=0),
          "its gzip content is a database, not a snapshot")

# torch.save's archive, damaged
write("truncated.pt", TORCH[:len(TORCH) // 2], "no end of central directory")
data_at = TORCH.index(b"\x80\x02}")
write("flipped.pt", flip(TORCH, data_at + 100), "CRC-32 is not the one")
locator = TORCH.rindex(b"PK\6\7")
write("zip64-misplaced.pt", patch(TORCH, locator + 8, "<Q", len(TORCH)),
      "zip64 end record out of place")
# archives made by hand
write("no-pickle.zip", zip_of([("readme.txt", b"hello")]),
      "a zip archive without a pickle")
write("two-pickles.zip", zip_of([("a.pkl", SMALL), ("b.pickle", SMALL)]),
      "a zip archive with 2 pickles")
write("empty.zip", b"PK\5\6" + bytes(18), "a zip archive without a pickle")
one = zip_of([("snap.pickle", SMALL)])
cd = central(one)
write("encrypted.zip", patch(one, cd + 8, "<H", 1), "encrypted")
write("method-bzip2.zip", patch(one, cd + 10, "<H", 12),
      "compressed with method 12")
write("size.zip", patch(one, cd + 24, "<I", len(SMALL) + 10),
      "size is not the one its entry says")
write("local.zip", patch(one, cd + 42, "<I", 7), "no local header")
end = one.rindex(b"PK\5\6")
write("directory.zip", patch(one, end + 16, "<I", len(one)),
      "central directory out of place")
# a zip64 entry that says it unpacks to 1 TiB
name = b"snap.pickle"
extra = struct.pack("<HHQQ", 1, 16, 1 << 40, len(SMALL))
local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, 0,
                    0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra))
entry = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0,
                    0, 0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra), 0, 0,
                    0, 0, 0)
body = local + name + extra + SMALL
directory = entry + name + extra
write("huge.zip", body + directory +
      struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(directory),
                  len(body), 0), "a decompression bomb")
# decompression bombs: content that begins no pickle is not unpacked past
# its first bytes; a pickle's head followed by 128 MiB of zeros stops at
# 256 times the file (64 MiB at least)
write("zeros.gz", gzip.compress(bytes(16 << 20), mtime=0),
      "not a pickle of protocol 2 to 5 (byte 0x00 at offset 0")
write("bomb.xz", lzma.compress(b"\x80\x04" + bytes(128 << 20)),
      "a decompression bomb", "xz")
deflated = zip_of([("snap.pkl", PICKLE)], zipfile.ZIP_DEFLATED)
write("deflate-flipped.zip", flip(deflated, 200), "cannot decompress its deflate data")

with open("bad/EXPECT", "w") as f:
    f.write("# file<TAB>substring of the one-line error<TAB>codec it needs;"
            " written by make-bad.py\n")
    for name, substring, codec in expect:
        f.write("%s\t%s\t%s\n" % (name, substring, codec))
