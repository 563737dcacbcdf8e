"""Each lab's figures, the ones its handout discusses, from its tables.

A lab's own report code lives in its folder, common/lab/NN-name/report.py:
its CSV table's columns (SCHEMA; TIMELINE_NEEDS where its timeline needs
more than the common columns) and figures(runs, with_course), loaded here
by the lab's name, so that adding a lab touches no list of the kit's.

figures(lab, runs) takes the runs to draw (the reference's, and the
student's where it passed), each with its table rows (tables.py), its
timeline rows (Labs 05 and 08) and its key: value lines, and returns Figures
(figure.py): the student's curve and the reference's in one figure, and the
course's Tesla K40 figure where the course has one. The same functions draw
the handouts' figures from the reference alone. What several labs draw
alike (a timeline) is here.
"""

import importlib.util
import os
import re
import subprocess

from .figure import OPERATION_COLOURS, Figure, Series

STUDENT, REFERENCE = "student", "reference"


class Run:
    """One program's run: role (student or reference), what to call it, its
    table rows, timeline rows and key: value lines."""

    def __init__(self, role, rows, timeline=None, kv=None, label=None):
        self.role = role
        self.rows = rows or []
        self.timeline = timeline or []
        self.kv = kv or {}
        self.label = label or ("your program" if role == STUDENT else "reference")


def timed(rows):
    return [r for r in rows if r.get("time_ms") and r["time_ms"] > 0]


def named(title, run):
    return "%s, %s" % (title, run.label) if title else run.label


def floats(n):
    return "{:,} floats".format(int(n))


def _timeline_groups(run):
    groups = {}
    for r in run.timeline:
        key = r.get("version") or ""
        groups.setdefault(key, []).append(r)
    return groups


def timelines(runs, lab, note="", untitled=None):
    """One timeline figure per run and version: a row per stream (per GPU and
    stream where the timeline has a gpu column), copies and kernels as bars.
    note: what the caption says beyond the common words (how it was
    measured); untitled(run, rows): the name of a timeline without a
    version column (default: "the traced run")."""
    figs = []
    end = max([r["end_ms"] for run in runs for r in run.timeline] or [0.0])
    for run in runs:
        for version, rows in sorted(_timeline_groups(run).items()):
            # Lab 05's trace records a kernel by its chunk, not its stream
            # (stream -1): its row is the stream of its chunk's copies.
            by_chunk = {r.get("chunk"): r["stream"] for r in rows
                        if r.get("chunk") is not None and int(r["stream"]) >= 0}
            rows = [dict(r, stream=by_chunk[r.get("chunk")])
                    if int(r["stream"]) < 0 and r.get("chunk") in by_chunk else r for r in rows]
            if not version:
                version = untitled(run, rows) if untitled else "the traced run"
            multi = any(r.get("gpu") is not None for r in rows)

            def row_label(r):
                if multi:
                    return "GPU %d, stream %d" % (int(r.get("gpu") or 0), int(r["stream"]))
                return "stream %d" % int(r["stream"])

            order = sorted({(int(r.get("gpu") or 0), int(r["stream"])) for r in rows})
            labels = [("GPU %d, stream %d" % o) if multi else ("stream %d" % o[1]) for o in order]
            slug = re.sub(r"[^a-z0-9]+", "-", version.lower().split(",")[0]).strip("-")
            fig = Figure("%s-timeline-%s-%s" % (lab, run.role, slug), "Timeline of %s: %s" % (version, run.label),
                         kind="timeline", xlabel="time (ms)", ylabel="", rows=labels,
                         height=max(220, 70 + 22 * len(labels)),
                         caption="When each copy and kernel of %s ran, measured inside the program (a row per %s).%s"
                                 % (version, "GPU and stream" if multi else "stream", note))
            fig.xmax = end * 1.02 if end > 0 else None
            for op in ("h2d", "kernel", "d2h", "p2p", "other"):
                pts = [(row_label(r), r["start_ms"], r["end_ms"]) for r in rows if r["operation"] == op]
                if pts:
                    fig.add(Series(OPERATION_COLOURS[op][1], pts, role=run.role, operation=op))
            figs.append(fig)
    return figs


# --------------------------------------------------------------------------
# The labs' own report code
# --------------------------------------------------------------------------

_KIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_modules = {}


def lab_names():
    """Every lab with report code of its own, in the order of their numbers
    (the labs as the kit's one list, common/lab/labs.sh, gives them)."""
    listed = subprocess.run(["bash", "-c", 'source "$1/common/lab/labs.sh" && kit_labs "$1"', "_", _KIT],
                            stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
    return [lab for lab in listed if lab_module(lab) is not None]


def lab_module(lab):
    """The module of common/lab/LAB/report.py, or None where the lab has none."""
    if lab not in _modules:
        path = os.path.join(_KIT, "common", "lab", lab, "report.py")
        if not re.match(r"\d\d-[a-z0-9-]+$", lab) or not os.path.isfile(path):
            return None
        spec = importlib.util.spec_from_file_location("kitreport.lab_" + lab.replace("-", "_"), path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[lab] = module
    return _modules[lab]


def figures(lab, runs, with_course=True):
    """The figures of lab from runs (the reference's first); those with
    nothing to draw are left out."""
    module = lab_module(lab)
    if module is None:
        return []
    return [f for f in module.figures(runs, with_course) if not f.empty()]
