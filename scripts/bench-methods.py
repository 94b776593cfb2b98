#!/usr/bin/env python3
"""The method of each benchmark, from the script itself: the first paragraph of
every bench/*.sh's opening comment, written into docs/benchmarks.md between the
bench-methods markers. `make bench` runs it after the table; it needs no run.

usage: bench-methods.py [MARKDOWN_FILE]   (default docs/benchmarks.md)
"""
import glob, os, sys

BEGIN, END = "<!-- bench-methods:begin -->", "<!-- bench-methods:end -->"
markdown = sys.argv[1] if len(sys.argv) > 1 else "docs/benchmarks.md"


def first_paragraph(path):
    """The opening comment's lines up to its first empty one, without the `#`."""
    lines = []
    with open(path) as f:
        for number, line in enumerate(f):
            if number == 0 and line.startswith("#!"):
                continue
            if not line.startswith("#"):
                break
            text = line[1:].strip()
            if not text:
                break
            lines.append(text)
    return " ".join(lines)


notes = []
for path in sorted(glob.glob(os.path.join(os.path.dirname(markdown), "..", "bench", "*.sh"))):
    name = "bench/" + os.path.basename(path)
    note = first_paragraph(path) or "(no opening comment: write one)"
    notes.append("- `%s`: %s" % (name, note))
block = BEGIN + "\n" + "\n".join(notes) + "\n" + END

with open(markdown) as f:
    doc = f.read()
if BEGIN in doc and END in doc:
    doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
else:
    doc = doc.rstrip("\n") + "\n\n" + block + "\n"
with open(markdown, "w") as f:
    f.write(doc)
