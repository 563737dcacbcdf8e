#!/usr/bin/env python3
"""handout_figures.py HANDOUTS_DIR: the handouts' figures hold together.

Every image a handout shows is a file under HANDOUTS_DIR; every SVG under
HANDOUTS_DIR/figures is shown by some handout; and each SVG's caption (its
text of class "caption", as the kit's figures write it) names the GPU, the
date (YYYY-MM-DD) and the command that made it. Prints one line per
problem; exit 1 if any, 0 if none.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
GPU = re.compile(r"\b(NVIDIA|Tesla|GeForce|Quadro|RTX|H100|H200|A100|T4)\b")
DATE = re.compile(r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b")
COMMAND = re.compile(r"\b(make (run|report|check)|bash [\w./-]+\.sh|[\w./-]+/(build|solutions)/)")


def caption_of(path):
    root = ET.parse(path).getroot()
    return " ".join(t.text or "" for t in root.iter(SVG + "text") if t.get("class") == "caption")


def main(argv):
    if len(argv) != 2:
        print("usage: handout_figures.py HANDOUTS_DIR", file=sys.stderr)
        return 64
    top = argv[1]
    problems = []
    shown = set()
    for name in sorted(os.listdir(top)):
        if not name.endswith(".md"):
            continue
        with open(os.path.join(top, name), encoding="utf-8") as f:
            for line_no, line in enumerate(f, 1):
                for target in IMAGE.findall(line):
                    if "://" in target:
                        problems.append(f"{name}:{line_no}: an image from elsewhere: {target}")
                        continue
                    path = os.path.normpath(os.path.join(top, target))
                    shown.add(path)
                    if not os.path.isfile(path):
                        problems.append(f"{name}:{line_no}: shows {target}, which is not there")
    figures = os.path.join(top, "figures")
    for name in sorted(os.listdir(figures)) if os.path.isdir(figures) else []:
        path = os.path.normpath(os.path.join(figures, name))
        if not name.endswith(".svg"):
            continue
        if path not in shown:
            problems.append(f"figures/{name}: shown by no handout")
        try:
            caption = caption_of(path)
        except ET.ParseError as e:
            problems.append(f"figures/{name}: not an SVG ({e})")
            continue
        for what, pattern in (("GPU", GPU), ("date", DATE), ("command", COMMAND)):
            if not pattern.search(caption):
                problems.append(f"figures/{name}: its caption names no {what}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
