"""Lab 01: coalescing: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

import re

from kitreport import course
from kitreport.figure import Figure, Series
from kitreport.labs import floats, timed
from kitreport.tables import COMMON

SCHEMA = COMMON + [("kernel", "text"), ("time_ms", "num"), ("time_vs_coalesced", "num"),
                   ("segments_per_request", "num"), ("sectors_per_request", "num"),
                   ("load_efficiency", "num"), ("correct", "num")]


def _lab01_category(kernel):
    if kernel == "full_coalesced_access":
        return "coalesced"
    if kernel == "non_coalesced_access":
        return "random"
    m = re.match(r"strided_access s=(\d+)$", kernel)
    if m:
        return "stride %s" % m.group(1)
    return None


def figures(runs, with_course=True):
    part1 = lambda run: [r for r in timed(run.rows) if _lab01_category(r["kernel"])]
    ref = runs[0]
    size = next((r["size"] for r in part1(ref)), ref.rows[0]["size"] if ref.rows else 0)
    order = ["coalesced"] + ["stride %d" % (1 << k) for k in range(6)] + ["random"]
    time = Figure("01-coalescing-time", "Part 1: each kernel's time against the coalesced kernel's",
                  kind="bars", categories=order, ylabel="time / coalesced time (x, log scale)", logy=10,
                  caption="The course's C[tid] = A[x] + B[x], 100 iterations per thread, %s per array: "
                          "the median time of each kernel over the coalesced kernel's." % floats(size))
    segs = Figure("01-coalescing-segments", "Part 1: 128-byte segments per warp request", kind="bars",
                  categories=order,
                  ylabel="segments per request",
                  caption="Segments a warp's load request touches, counted on each program's own kernels "
                          "(the course: transactions per request, from nvprof).")
    for run in runs:
        rows = part1(run)
        base = next((r["time_ms"] for r in rows if r["kernel"] == "full_coalesced_access"), 0)
        if base > 0:
            time.add(Series(run.label, [(_lab01_category(r["kernel"]), r["time_ms"] / base) for r in rows],
                            role=run.role))
        segs.add(Series(run.label, [(_lab01_category(r["kernel"]), r["segments_per_request"]) for r in run.rows
                                    if _lab01_category(r["kernel"])], role=run.role))
    if with_course and size:
        k = course.nearest(course.COALESCING, size)
        full, non, t_full, t_non = course.COALESCING[k]
        title = "%s, %s" % (course.K40, floats(k))
        time.add(Series(title, [("coalesced", 1.0), ("random", non / full)], role="course"))
        segs.add(Series(title, [("coalesced", t_full), ("random", t_non)], role="course"))
    sums = Figure("01-coalescing-sums", "Part 2: the sums of a matrix's rows and columns", kind="bars",
                  ylabel="time (ms)")
    for run in runs:
        rows = [r for r in timed(run.rows) if r["kernel"] in ("row_sums", "column_sums", "row_sums_coalesced")]
        if rows:
            n = int(rows[0]["size"])
            sums.caption = ("An n x n matrix of floats, n = {:,}: a thread per row, a thread per column, "
                            "and the coalesced row sums (TODO(4)).".format(n))
        sums.add(Series(run.label, [(r["kernel"], r["time_ms"]) for r in rows], role=run.role))
    return [time, segs, sums]
