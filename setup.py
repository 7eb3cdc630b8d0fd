"""pip install . : vramtrace's Autotools build, packaged.

Builds the program, libvramtrace.so, libvramtrace-inject.so (when
configure finds CUDA's headers) and the vramtrace._offload extension with
./configure && make, and puts them inside the vramtrace package, where
the program looks for the libraries and the package looks for its
library (vramtrace._library).  The `vramtrace` command pip puts on PATH is
a console script that runs the program (vramtrace.__main__); the pytest
plugin is registered through the pytest11 entry point (pyproject.toml).
Offline, with Debian's python3-setuptools, python3-wheel and python3-pip:

    pip install --no-build-isolation .
    pip wheel --no-build-isolation .

The build runs in build/autotools, a copy of the sources (git's list of
them, or every file of an unpacked release tarball), so that a source
tree configured by hand is left alone; it is kept, and later builds are
incremental.  configure gets the Python that runs this (PYTHON) and the
words of VRAMTRACE_CONFIGURE (--with-cuda=DIR, --without-cuda, ...); it
finds CUDA as it does by hand (CUDA_HOME, CUDA_PATH, nvcc, /usr/local/cuda).
"""

import filecmp
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build", "autotools")
SKIP = {".git", "build", "__pycache__"}

# What make builds that goes into the package: (file, required).
OUTPUTS = (("vramtrace", True), ("libvramtrace.so", True),
           ("libvramtrace-inject.so", False),
           ("python/vramtrace/_offload.abi3.so", False))


def version():
    with open(os.path.join(HERE, "configure.ac")) as f:
        return re.search(r"AC_INIT\(\[vramtrace\], \[([^]]+)\]",
                         f.read()).group(1)


def _rules():
    """.gitignore's patterns as (regex, negated, directories only)."""
    rules = []
    path = os.path.join(HERE, ".gitignore")
    for line in open(path).read().splitlines() if os.path.exists(path) \
            else []:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        neg, line = line.startswith("!"), line.lstrip("!")
        dironly, line = line.endswith("/"), line.rstrip("/")
        glob = line.lstrip("/") if "/" in line else "**/" + line
        rx = re.escape(glob).replace(r"\*\*/", "(.*/)?").replace(
            r"\*", "[^/]*").replace(r"\?", "[^/]")
        rules.append((re.compile(rx + "$"), neg, dironly))
    return rules


def _ignored(rel, isdir, rules):
    ignored = False
    for rx, neg, dironly in rules:
        if (isdir or not dironly) and rx.match(rel):
            ignored = not neg
    return ignored


def _git(*args):
    return subprocess.run(["git", "-C", HERE] + list(args), check=True,
                          capture_output=True).stdout.decode()


def sources():
    """The source tree's files, relative to it: git's list where the tree
    is a git work tree of its own, or else (an unpacked tarball, a copy of
    the tree, inside another repository or not) those .gitignore keeps."""
    try:
        top = _git("rev-parse", "--show-toplevel").strip()
        if os.path.realpath(top) == os.path.realpath(HERE):
            out = _git("ls-files", "-z", "-c", "-o", "--exclude-standard")
            return [p for p in out.split("\0")
                    if p and os.path.isfile(os.path.join(HERE, p))]
    except (OSError, subprocess.CalledProcessError):
        pass
    rules, files = _rules(), []
    for top, dirs, names in os.walk(HERE):
        rel = os.path.relpath(top, HERE)
        rel = "" if rel == "." else rel + "/"
        dirs[:] = [d for d in dirs if d not in SKIP and
                   not _ignored(rel + d, True, rules)]
        files += [rel + n for n in names if n not in SKIP and
                  not _ignored(rel + n, False, rules)]
    return files


def sync(files):
    """Copy the files that changed into BUILD (new mtimes, so make sees
    them); leave the rest as they are, so the build is incremental."""
    for rel in files:
        src, dst = os.path.join(HERE, rel), os.path.join(BUILD, rel)
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
        shutil.copymode(src, dst)


def run(cmd):
    print("vramtrace build: " + " ".join(shlex.quote(c) for c in cmd),
          flush=True)
    subprocess.run(cmd, cwd=BUILD, check=True)


def autotools():
    """configure && make in BUILD; returns the outputs' paths."""
    sync(sources())
    configure = os.path.join(BUILD, "configure")
    if (not os.path.exists(configure) or os.path.getmtime(configure) <
            os.path.getmtime(os.path.join(BUILD, "configure.ac"))):
        run(["autoreconf", "-fi"])
    args = ["./configure", "PYTHON=" + sys.executable] + \
        shlex.split(os.environ.get("VRAMTRACE_CONFIGURE", ""))
    stamp = os.path.join(BUILD, ".configure-args")
    old = open(stamp).read() if os.path.exists(stamp) else None
    if old != repr(args) or not os.path.exists(
            os.path.join(BUILD, "config.status")):
        run(args)
        with open(stamp, "w") as f:
            f.write(repr(args))
    run(["make", "-j%d" % (os.cpu_count() or 1)])
    found = []
    for rel, required in OUTPUTS:
        path = os.path.join(BUILD, rel)
        if os.path.exists(path):
            found.append(path)
        elif required:
            raise RuntimeError("vramtrace build: make left no " + rel)
    return found


class BuildAutotools(build_py):
    """build_py, plus the compiled files in the package's directory."""

    def run(self):
        super().run()
        package = os.path.join(self.build_lib, "vramtrace")
        os.makedirs(package, exist_ok=True)
        for path in autotools():
            shutil.copy2(path, os.path.join(package,
                                            os.path.basename(path)))


class NativeDistribution(Distribution):
    """The wheel holds a program and libraries: a platform wheel."""

    def has_ext_modules(self):
        return True


# The metadata goes to build/, not into python/ where a source tree's
# PYTHONPATH would find it (and its entry points) too.
os.makedirs(os.path.join(HERE, "build"), exist_ok=True)
options = {"egg_info": {"egg_base": os.path.join(HERE, "build")}}
if sys.version_info >= (3, 11):  # the extension is on the stable ABI
    options["bdist_wheel"] = {"py_limited_api": "cp311"}

setup(version=version(), distclass=NativeDistribution,
      cmdclass={"build_py": BuildAutotools}, options=options)
