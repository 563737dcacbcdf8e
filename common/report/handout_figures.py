#!/usr/bin/env python3
"""handout_figures.py DIR [OUTDIR]: the handouts' figures, from the reference's tables.

DIR holds, for each lab drawn, what the reference wrote and how it was run
(common/report/handout-figures.sh --run writes them all):

    NN-name.csv            its table (--csv)
    NN-name.timeline.csv   Labs 05 and 08: its timeline (--timeline)
    NN-name.txt            key: value lines: command (how it was run) and date

Each figure the lab's handout discusses goes to OUTDIR (default
handouts/figures) as NN-name-WHAT.svg, with the GPU, the date and the
command written in the picture under the plot, and the Markdown that shows
it is printed, to paste beside the handout's tables.

Exit status: 0 written; 2 gnuplot is not installed; 64 bad command line;
65 a table cannot be read, or its run is not recorded (nothing is written).
"""

import argparse
import os
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kitreport import figure as figmod  # noqa: E402
from kitreport import labs as labmod  # noqa: E402
from kitreport import tables  # noqa: E402

KIT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def load(folder, lab):
    """The reference's run of lab from folder: (Run, facts), or None when it
    has no table there. Raises TableError for what cannot be used."""
    csv_path = os.path.join(folder, lab + ".csv")
    if not os.path.exists(csv_path):
        return None
    rows = tables.read_lab(lab, csv_path)
    timeline = []
    tl = os.path.join(folder, lab + ".timeline.csv")
    if os.path.exists(tl):
        timeline = tables.read_timeline(tl, lab)
    facts = tables.read_kv(os.path.join(folder, lab + ".txt"))
    for key in ("command", "date"):
        if not facts.get(key):
            raise tables.TableError("%s: no '%s:' line: a handout's figure says how and when it was measured "
                                    "(handout-figures.sh --run records both)" % (os.path.join(folder, lab + ".txt"),
                                                                                 key))
    kv = tables.read_kv(os.path.join(folder, lab + ".output.txt"))
    return labmod.Run(labmod.REFERENCE, rows, timeline, kv, label="the kit's reference"), facts


def main(argv):
    ap = argparse.ArgumentParser(prog="handout_figures.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="the folder of the reference's tables")
    ap.add_argument("outdir", nargs="?", default=os.path.join(KIT, "handouts", "figures"))
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 64 if e.code else 0
    if not os.path.isdir(args.dir):
        print("handout_figures.py: %s is not a folder" % args.dir, file=sys.stderr)
        return 64
    if not figmod.gnuplot_path():
        print("handout_figures.py: %s" % figmod.INSTALL_GNUPLOT.split("; the tables")[0], file=sys.stderr)
        return 2
    runs = {}
    try:
        for lab in labmod.lab_names():
            got = load(args.dir, lab)
            if got:
                runs[lab] = got
    except tables.TableError as e:
        print("handout_figures.py: %s" % e, file=sys.stderr)
        return 65
    if not runs:
        print("handout_figures.py: %s holds no lab's table (NN-name.csv)" % args.dir, file=sys.stderr)
        return 65
    os.makedirs(args.outdir, exist_ok=True)
    rel = os.path.relpath(args.outdir, os.path.join(KIT, "handouts"))
    with tempfile.TemporaryDirectory(prefix="kit-handout.") as tmp:
        for lab, (run, facts) in sorted(runs.items()):
            gpu = run.rows[0]["gpu"] if run.rows else "?"
            print("%s (handouts/%s.md):" % (lab, lab))
            for fig in labmod.figures(lab, [run]):
                cuda = ", CUDA %s" % facts["cuda"] if facts.get("cuda") else ""
                caption = "%s %s%s, %s; %s" % (fig.caption, gpu, cuda, facts["date"], facts["command"])
                if fig.has("course"):
                    caption += "; the Tesla K40 from the course's notes (000), nvprof"
                text = figmod.svg(fig, tmp, standalone_caption=caption)
                fig.name = fig.name.replace("-timeline-reference-", "-timeline-")
                path = os.path.join(args.outdir, fig.name + ".svg")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                print("  ![%s: %s, %s](%s/%s.svg)" % (fig.title, gpu, facts["date"], rel, fig.name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
