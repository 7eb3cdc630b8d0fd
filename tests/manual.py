#!/usr/bin/env python3
"""manual.py: check that vramtrace(1) documents every command as the
program's own help does.

    manual.py VRAMTRACE MAN.1.in

For every command `VRAMTRACE help` lists, its entry in the manual (the
.TP item whose first line is ".B NAME ...") must exist; that first line,
without its fonts, must be the usage line of `VRAMTRACE help NAME`; and the
entry's Options list must have one item per option of --help, with its
letter when it has one, and no item for an option the command lacks.
Prints one line per disagreement; exits 1 if there is any.
"""
import re
import subprocess
import sys


def roff_text(line):
    """The text of a line of roff: no font escapes, \\- as -, \\e as \\."""
    line = re.sub(r"\\f[BIRP]", "", line)
    line = line.replace("\\-", "-").replace("\\e", "\\")
    return " ".join(line.split())


def program_help(vramtrace, name):
    """(usage line, {long name: letter or None}) from `help NAME`."""
    out = subprocess.run([vramtrace, "help", name], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    usage = []
    for line in out:
        if usage and not line.startswith(" "):
            break
        usage.append(line)
    options = {}
    for line in out:
        m = re.match(r"^  (?:-(\w), |    )--([\w-]+)", line)
        if m and m.group(2) != "help":
            options[m.group(2)] = m.group(1)
    return " ".join(" ".join(usage).split()), options


def entries(text, names):
    """{name: the lines of its entry} for the command entries of the man."""
    lines = text.splitlines()
    starts = [i for i in range(1, len(lines)) if lines[i - 1] == ".TP" and
              re.match(r"\.B (%s) " % "|".join(names), lines[i])]
    out = {}
    for k, i in enumerate(starts):
        end = starts[k + 1] - 1 if k + 1 < len(starts) else len(lines)
        for j in range(i + 1, end):
            if lines[j].startswith(".SH"):
                end = j
                break
        out[lines[i].split()[1]] = lines[i:end]
    return out


def documented(entry):
    """{long name: letter or None} of the entry's Options items."""
    out = {}
    for prev, line in zip(entry, entry[1:]):
        if prev != ".TP":
            continue
        m = re.match(r'\.BR? (?:\\-(\w) ", " )?\\-\\-([\w\\-]+)', line)
        if m:
            out[m.group(2).replace("\\-", "-")] = m.group(1)
    return out


def main():
    vramtrace, man = sys.argv[1], sys.argv[2]
    listing = subprocess.run([vramtrace, "help"], capture_output=True,
                             text=True, check=True).stdout
    names = re.findall(r"^  ([a-z]+) ", listing, re.M)
    found = entries(open(man, encoding="utf-8").read(), names)
    bad = []
    for name in names:
        usage, options = program_help(vramtrace, name)
        if name not in found:
            bad.append("%s: no entry in the manual" % name)
            continue
        head = "usage: vramtrace " + roff_text(found[name][0][3:])
        if head != usage:
            bad.append("%s: the manual says\n    %s\n  --help says\n    %s"
                       % (name, head, usage))
        doc = documented(found[name])
        for opt, letter in sorted(options.items()):
            if opt not in doc:
                bad.append("%s: --%s is not in the manual's Options" %
                           (name, opt))
            elif doc[opt] != letter:
                bad.append("%s: --%s is -%s in --help, -%s in the manual" %
                           (name, opt, letter, doc[opt]))
        for opt in sorted(set(doc) - set(options)):
            bad.append("%s: the manual has --%s, the command does not" %
                       (name, opt))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
