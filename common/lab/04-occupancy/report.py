"""Lab 04: occupancy: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

import math
import re

from kitreport import course
from kitreport.figure import Figure, Series
from kitreport.labs import named, timed
from kitreport.tables import COMMON

SCHEMA = COMMON + [("part", "num"), ("row", "text"), ("threads", "num"), ("blocks", "num"),
                   ("blocks_per_sm", "num"), ("theoretical", "num"), ("achieved", "num"),
                   ("sm_efficiency", "num"), ("time_ms", "num"), ("correct", "num")]


def _scenarios(run):
    s = {1: {}, 2: {}}
    for r in run.rows:
        m = re.match(r"s([12])-(\d+)$", r["row"])
        if m and r["part"] == 2:
            s[int(m.group(1))][int(m.group(2))] = r
    return s


def figures(runs, with_course=True):
    figs = []
    ratio = Figure("04-occupancy-scenarios", "Scenario 1 against scenario 2, over n",
                   xlabel="n (elements, log scale)", ylabel="scenario 1 time / scenario 2 time (x)", logx=2,
                   caption="Scenario 1: min(n, 1024) threads a block; scenario 2: the blocks spread over the SMs "
                           "first. Above 1: spreading was faster.")
    times = Figure("04-occupancy-scenario-times", "The two scenarios' times", xlabel="n (elements, log scale)",
                   ylabel="time (ms)", logx=2, caption="The scenario kernel's median time in each scenario.")
    eff = Figure("04-occupancy-sm-efficiency", "SM efficiency of the two scenarios", xlabel="n (elements, log scale)",
                 ylabel="SM efficiency (%)", logx=2,
                 caption="The share of the kernel's time each SM had a warp, traced per warp without a profiler "
                         "(the course: nvprof's sm_efficiency).")
    for run in runs:
        s = _scenarios(run)
        common = sorted(set(s[1]) & set(s[2]))
        ratio.add(Series(run.label, [(n, s[1][n]["time_ms"] / s[2][n]["time_ms"]) for n in common
                                     if s[2][n]["time_ms"] > 0 and s[1][n]["time_ms"] > 0], role=run.role))
        for k in (1, 2):
            times.add(Series(named("scenario %d" % k, run), [(n, r["time_ms"]) for n, r in sorted(s[k].items())
                                                              if r["time_ms"] > 0], role=run.role, style=k - 1))
            eff.add(Series(named("scenario %d" % k, run), [(n, 100 * r["sm_efficiency"]) for n, r in
                                                            sorted(s[k].items())], role=run.role, style=k - 1))
    ratio.add(Series("equal times", [(0, 1.0)], role="model", rule="y"))
    if with_course:
        ratio.add(Series(course.K40, [(n, v[0] / v[1]) for n, v in sorted(course.SCENARIOS.items())], role="course"))
        eff.add(Series("%s, scenario 1" % course.K40, [(n, v[2]) for n, v in sorted(course.SCENARIOS.items())],
                       role="course"))
        eff.add(Series("%s, scenario 2" % course.K40, [(n, v[3]) for n, v in sorted(course.SCENARIOS.items())],
                       role="course", style=1))
    figs += [ratio, times, eff]
    shapes = Figure("04-occupancy-shapes", "Part 4: the book's block shapes for sumMatrixOnGPU2D", kind="bars",
                    ylabel="time (ms)", caption="The same matrix sum with each (x, y) block shape.")
    for run in runs:
        pts = []
        for r in timed(run.rows):
            m = re.match(r"shape-(\d+)x(\d+)$", r["row"])
            if m and r["part"] == 4:
                pts.append(("(%s,%s)" % m.groups(), r["time_ms"]))
        shapes.add(Series(run.label, pts, role=run.role))
    if runs and runs[0].rows:
        side = int(round(math.sqrt(runs[0].rows[0]["size"])))
        shapes.caption = "The same matrix sum, {:,} x {:,} floats, with each (x, y) block shape.".format(side, side)
    figs.append(shapes)
    throttle = Figure("04-occupancy-throttle", "Part 5: the kernel at (128,1), throttled to fewer blocks per SM",
                      xlabel="blocks per SM (log scale)", ylabel="time (ms)", logx=2,
                      caption="Dynamic shared memory the kernel does not use lets no more than so many blocks share "
                              "an SM (TODO(5)); the rightmost point is unthrottled.")
    regs = Figure("04-occupancy-registers", "Part 5: heavy and heavy_bounded (registers against occupancy)",
                  kind="bars", ylabel="time (ms)",
                  caption="heavy as compiled, and heavy_bounded with the __launch_bounds__ of TODO(4).")
    for run in runs:
        pts = []
        for r in timed(run.rows):
            m = re.match(r"throttle-(\d+)$", r["row"])
            if m and r["part"] == 5:
                pts.append((int(m.group(1)), r["time_ms"]))
        throttle.add(Series(run.label, pts, role=run.role))
        labels = {}
        for r in timed(run.rows):
            if r["part"] == 5 and r["row"] in ("heavy", "heavy-bounded"):
                labels[r["row"]] = r["time_ms"]
        regs.add(Series(run.label, [(k.replace("-", "_"), v) for k, v in labels.items()], role=run.role))
    figs += [throttle, regs]
    return figs
