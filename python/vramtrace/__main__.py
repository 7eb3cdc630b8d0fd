"""The vramtrace program from Python: `python3 -m vramtrace ARGS`, and the
`vramtrace` command a pip install puts on PATH (its console script).

The program is the compiled one in this package's directory (pip install
puts it there, beside the libraries it looks for next to itself), else a
vramtrace on PATH (make install puts it in bindir).  It replaces this
process, so its exit status and signals are the program's own.
"""
import os
import shutil
import sys


def _compiled(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def program():
    """The path of the vramtrace program, or None.  A vramtrace on PATH
    counts only when it is compiled (never this module's console script)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "vramtrace")
    if os.access(here, os.X_OK) and _compiled(here):
        return here
    found = shutil.which("vramtrace")
    if found is not None and _compiled(found):
        return found
    return None


def main():
    path = program()
    if path is None:
        sys.stderr.write("vramtrace: the vramtrace program is neither in "
                         "the package (%s) nor on PATH\n"
                         % os.path.dirname(os.path.abspath(__file__)))
        return 127
    os.execv(path, ["vramtrace"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
