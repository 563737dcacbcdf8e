"""Lab 03: divergence: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

from kitreport import course
from kitreport.figure import Figure, Series
from kitreport.labs import floats, named, timed
from kitreport.tables import COMMON

SCHEMA = COMMON + [("part", "num"), ("kernel", "text"), ("work", "num"), ("time_ms", "num"),
                   ("lanes_per_body", "num"), ("correct", "num")]


def figures(runs, with_course=True):
    ref = runs[0]
    size = ref.rows[0]["size"] if ref.rows else 0
    p1 = Figure("03-divergence-part1", "Part 1: branching by thread against branching by warp", kind="bars",
                ylabel="time / warp_no_divergence time (x)",
                caption="The course's four-way branch, 100 iterations per thread, %s: each kernel's time "
                        "over warp_no_divergence's." % floats(size))
    for run in runs:
        t = {r["kernel"]: r["time_ms"] for r in timed(run.rows) if r["part"] == 1}
        if t.get("warp_no_divergence"):
            base = t["warp_no_divergence"]
            p1.add(Series(run.label, [(k, t[k] / base) for k in ("warp_no_divergence", "warp_divergence") if k in t],
                          role=run.role))
    if with_course:
        n, nodiv, div = course.DIVERGENCE
        p1.add(Series("%s, %s" % (course.K40, floats(n)), [("warp_no_divergence", 1.0),
                                                            ("warp_divergence", div / nodiv)], role="course"))
    p2 = Figure("03-divergence-work", "Part 2: mixed, grouped and reorganised against the work per element",
                xlabel="work (steps per element, log scale)", ylabel="time (ms)", logx=2,
                caption="process_by_class on the classes mixed at random, on data grouped by class, and the whole "
                        "reorganisation (count, partition, process, scatter back), %s." % floats(size))
    names = [("process_by_class mixed", "mixed"), ("process_by_class grouped", "grouped"),
             ("reorganised", "reorganised")]
    for run in runs:
        for style, (kernel, title) in enumerate(names):
            pts = [(r["work"], r["time_ms"]) for r in timed(run.rows) if r["part"] == 2 and r["kernel"] == kernel]
            p2.add(Series(named(title, run), pts, role=run.role, style=style))
    return [p1, p2]
