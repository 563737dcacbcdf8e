"""Lab 02: grouping: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

from kitreport import course
from kitreport.figure import Figure, Series
from kitreport.labs import REFERENCE, floats, timed
from kitreport.tables import COMMON

SCHEMA = COMMON + [("segments_per_group", "num"), ("time_ms", "num"), ("semi_vs_coalesced", "num"),
                   ("random_vs_semi", "num"), ("segments_per_request", "num"),
                   ("expected_segments", "num"), ("sectors_per_request", "num"),
                   ("warp_reach", "num"), ("correct", "num")]


def figures(runs, with_course=True):
    ref = runs[0]
    size = ref.rows[0]["size"] if ref.rows else 0
    time = Figure("02-grouping-time", "Time against the group size G", xlabel="G (segments per group, log scale)",
                  ylabel="time / coalesced time (x, log scale)", logx=2, logy=10,
                  caption="The semi-coalesced kernel's time over the coalesced kernel's, for each G "
                          "(%s per array); the dotted line is the random kernel's." % floats(size))
    segs = Figure("02-grouping-segments", "Segments per request against G", xlabel="G (segments per group, log scale)",
                  ylabel="segments per request", logx=2,
                  caption="Counted on each program's own kernel, beside the expected G(1 - (1 - 1/G)^32).")
    for run in runs:
        rows = timed(run.rows)
        time.add(Series(run.label, [(r["segments_per_group"], r["semi_vs_coalesced"]) for r in rows], role=run.role))
        segs.add(Series(run.label, [(r["segments_per_group"], r["segments_per_request"]) for r in run.rows],
                        role=run.role))
    ref_rows = timed(ref.rows)
    if ref_rows:
        r0 = ref_rows[0]
        time.add(Series("random kernel, %s" % ref.label, [(0, r0["semi_vs_coalesced"] * r0["random_vs_semi"])],
                        role=REFERENCE, rule="y"))
    segs.add(Series("expected: G(1 - (1 - 1/G)^32)",
                    [(r["segments_per_group"], r["expected_segments"]) for r in ref.rows], role="model", style=1))
    if with_course and size:
        k = course.nearest(course.GROUPING_G16, size)
        full, semi, _ = course.GROUPING_G16[k]
        time.add(Series("%s, G = 16, %s" % (course.K40, floats(k)), [(16, semi / full)], role="course"))
        segs.add(Series("%s, G = 16 (transactions)" % course.K40, [(16, course.GROUPING_TRANSACTIONS_G16)],
                        role="course"))
    return [time, segs]
