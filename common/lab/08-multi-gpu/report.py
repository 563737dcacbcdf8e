"""Lab 08: multi-GPU: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

from kitreport.figure import Figure, Series
from kitreport.labs import named, timed, timelines
from kitreport.tables import COMMON

SCHEMA = COMMON + [("part", "num"), ("version", "text"), ("gpus", "num"), ("streams", "num"),
                   ("time_ms", "num"), ("gbs", "num"), ("correct", "num")]

# A timeline row is a GPU's stream: without the GPU its GPUs' stream 0 would
# share one row.
TIMELINE_NEEDS = [("gpu", "num")]


def figures(runs, with_course=True):
    ref = runs[0]
    size = ref.rows[0]["size"] if ref.rows else 0
    versions = Figure("08-multi-gpu-versions", "Part 1: C = A + B on one GPU and on all", kind="bars",
                      ylabel="time (ms)",
                      caption="{:,} unsigned ints per array from pinned host memory: copies in, the add, the copy "
                              "out, with one stream and several per GPU.".format(int(size)))
    scaling = Figure("08-multi-gpu-scaling", "Speedup over one GPU", xlabel="GPUs", ylabel="speedup over 1 GPU (x)",
                     caption="Each version's time on one GPU (as many streams) over its time on several.",
                     integer_x=True)
    peer = Figure("08-multi-gpu-peer", "Part 2: between two GPUs", kind="bars", ylabel="bandwidth (GB/s)",
                  caption="Peer copies with access on and off, and a kernel reading the other GPU's memory.")
    for run in runs:
        p1 = [r for r in timed(run.rows) if r["part"] == 1]
        versions.add(Series(run.label, [(r["version"], r["time_ms"]) for r in p1], role=run.role))
        for style, streams in enumerate(sorted({int(r["streams"]) for r in p1})):
            mine = {int(r["gpus"]): r["time_ms"] for r in p1 if int(r["streams"]) == streams}
            if 1 in mine and len(mine) > 1:
                scaling.add(Series(named("%d stream%s each" % (streams, "" if streams == 1 else "s"), run),
                                   [(g, mine[1] / t) for g, t in sorted(mine.items())], role=run.role, style=style))
        peer.add(Series(run.label, [(r["version"], r["gbs"]) for r in timed(run.rows) if r["part"] == 2],
                        role=run.role))
    figs = [versions]
    if not scaling.empty():
        top = max(p[0] for s in scaling.series for p in s.points)
        scaling.add(Series("twice the GPUs, twice the speed", [(1, 1), (top, top)], role="model", style=1))
        figs.append(scaling)
    if not peer.empty():
        figs.append(peer)
    return figs + timelines(runs, "08-multi-gpu", note=TIMELINE_NOTE)


# What the timeline's caption says beyond the common one: how it was measured.
TIMELINE_NOTE = (" Each GPU's events are put on the host's clock, GPU by GPU (within the program's "
                 "timeline-uncertainty-ms). A bar starts when its stream reached the operation: a copy may wait "
                 "there for its GPU's copy engine. The program sees the copies, not the launches: a kernel's bar "
                 "is its stream's time between a chunk's copies in and its copy out.")
