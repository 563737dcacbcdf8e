#!/usr/bin/env python3
"""The code cells of a Colab notebook (nbformat 4), for tests/97-colab.bats.

usage: colab_cells.py NOTEBOOK OUTDIR CONTENT

Checks the notebook's structure (nbformat 4, a GPU runtime asked for, every
code cell either a %%bash cell or Python), then writes each code cell to
OUTDIR as NN.sh (a %%bash cell's body) or NN.py, /content in them
replaced by CONTENT (the folder standing for Colab's), and prints one line per cell:
NN KIND NEEDS FIRST-COMMAND, where NEEDS is what a "# needs: ..." line of
the cell names (else "-"). Exit 64 on a bad command line, 1 on a notebook
that is not one Colab would run.
"""

import json
import os
import re
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    path, out, content = sys.argv[1:]
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    problems = []
    if nb.get("nbformat") != 4:
        problems.append("nbformat is %r, not 4" % nb.get("nbformat"))
    if nb.get("metadata", {}).get("accelerator") != "GPU":
        problems.append("metadata.accelerator is not GPU: Colab would start without one")
    cells = nb.get("cells", [])
    os.makedirs(out, exist_ok=True)
    n = 0
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            problems.append("code cell %d keeps the outputs of a run" % n)
        lines = cell.get("source", [])
        text = "".join(lines) if isinstance(lines, list) else lines
        first = text.split("\n", 1)[0].strip()
        if first == "%%bash":
            kind, body = "bash", text.split("\n", 1)[1] if "\n" in text else ""
            body = body.replace("/content", content)
            name = "%02d.sh" % n
        elif first.startswith(("%", "!")):
            problems.append("code cell %d: %r: only %%%%bash cells and Python, so that each runs as written" % (n, first))
            continue
        else:
            kind, body, name = "python", text.replace("/content", content), "%02d.py" % n
        needs = re.search(r"^# needs: (.*)$", body, re.M)
        command = next((l.strip() for l in body.splitlines() if l.strip() and not l.lstrip().startswith("#")), "")
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(body if body.endswith("\n") else body + "\n")
        print("%02d %s %s %s" % (n, kind, needs.group(1).replace(" ", "_") if needs else "-", command))
        n += 1
    for p in problems:
        print("colab_cells.py: %s: %s" % (path, p), file=sys.stderr)
    return 1 if problems or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
