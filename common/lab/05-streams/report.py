"""Lab 05: streams: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

from kitreport.figure import Figure, Series
from kitreport.labs import REFERENCE, named, timed, timelines
from kitreport.tables import COMMON

SCHEMA = COMMON + [("version", "text"), ("chunks", "num"), ("kernel_work", "num"), ("time_ms", "num"),
                   ("ideal_ms", "num"), ("correct", "num")]


def _order(version):
    v = version.lower()
    if v.startswith("depth-first"):
        return "depth-first"
    if v.startswith("breadth-first"):
        return "breadth-first"
    if v.startswith("serial, pinned"):
        return "serial-pinned"
    if v.startswith("serial, pageable"):
        return "serial-pageable"
    return None


def figures(runs, with_course=True):
    ref = runs[0]
    size = ref.rows[0]["size"] if ref.rows else 0
    pipe = Figure("05-streams-pipeline", "The pipeline against the number of chunks",
                  xlabel="chunks (streams, log scale)", ylabel="time (ms)", logx=2,
                  caption="3 x {:,} integers through copies in, a kernel and copies out: depth-first and "
                          "breadth-first issue, the ideal of each number of chunks, and serial from pinned "
                          "memory (dotted).".format(int(size)))
    for run in runs:
        rows = timed(run.rows)
        if not rows:
            continue
        work = run.rows[0]["kernel_work"]
        main = [r for r in rows if r["kernel_work"] == work]
        for style, order in enumerate(("depth-first", "breadth-first")):
            pipe.add(Series(named(order, run), [(r["chunks"], r["time_ms"]) for r in main
                                                  if _order(r["version"]) == order], role=run.role, style=style))
        serial = [r for r in main if _order(r["version"]) == "serial-pinned"]
        if serial and run.role == REFERENCE:
            pipe.add(Series("serial, pinned memory, %s" % run.label, [(0, serial[0]["time_ms"])], role=REFERENCE,
                            rule="y"))
        if run.role == REFERENCE:
            pipe.add(Series("ideal of N chunks", [(r["chunks"], r["ideal_ms"]) for r in main
                                                  if _order(r["version"]) == "depth-first" and r["ideal_ms"] > 0],
                            role="model", style=1))
    return [pipe] + timelines(runs, "05-streams", untitled=_traced_version)


def _traced_version(run, rows):
    """Lab 05 traces its fastest depth-first run: as many chunks as streams."""
    chunks = run.kv.get("timeline-chunks") or len({int(r["stream"]) for r in rows})
    return "depth-first, %s chunks" % chunks
