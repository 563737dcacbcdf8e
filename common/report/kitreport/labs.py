"""Each lab's figures, the ones its handout discusses, from its tables.

figures(lab, runs) takes the runs to draw (the reference's, and the
student's where it passed), each with its table rows (tables.py), its
timeline rows (Labs 05 and 08) and its key: value lines, and returns Figures
(figure.py): the student's curve and the reference's in one figure, and the
course's Tesla K40 figure where the course has one. The same functions draw
the handouts' figures from the reference alone.
"""

import math
import re

from . import course
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


def _timed(rows):
    return [r for r in rows if r.get("time_ms") and r["time_ms"] > 0]


def _named(title, run):
    return "%s, %s" % (title, run.label) if title else run.label


def floats(n):
    return "{:,} floats".format(int(n))


# --------------------------------------------------------------------------
# Lab 01: coalescing
# --------------------------------------------------------------------------

def _lab01_category(kernel):
    if kernel == "full_coalesced_access":
        return "coalesced"
    if kernel == "non_coalesced_access":
        return "random"
    m = re.match(r"strided_access s=(\d+)$", kernel)
    if m:
        return "stride %s" % m.group(1)
    return None


def lab01(runs, with_course=True):
    part1 = lambda run: [r for r in _timed(run.rows) if _lab01_category(r["kernel"])]
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
        rows = [r for r in _timed(run.rows) if r["kernel"] in ("row_sums", "column_sums", "row_sums_coalesced")]
        if rows:
            n = int(rows[0]["size"])
            sums.caption = ("An n x n matrix of floats, n = {:,}: a thread per row, a thread per column, "
                            "and the coalesced row sums (TODO(4)).".format(n))
        sums.add(Series(run.label, [(r["kernel"], r["time_ms"]) for r in rows], role=run.role))
    return [time, segs, sums]


# --------------------------------------------------------------------------
# Lab 02: grouping
# --------------------------------------------------------------------------

def lab02(runs, with_course=True):
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
        rows = _timed(run.rows)
        time.add(Series(run.label, [(r["segments_per_group"], r["semi_vs_coalesced"]) for r in rows], role=run.role))
        segs.add(Series(run.label, [(r["segments_per_group"], r["segments_per_request"]) for r in run.rows],
                        role=run.role))
    ref_rows = _timed(ref.rows)
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


# --------------------------------------------------------------------------
# Lab 03: divergence
# --------------------------------------------------------------------------

def lab03(runs, with_course=True):
    ref = runs[0]
    size = ref.rows[0]["size"] if ref.rows else 0
    p1 = Figure("03-divergence-part1", "Part 1: branching by thread against branching by warp", kind="bars",
                ylabel="time / warp_no_divergence time (x)",
                caption="The course's four-way branch, 100 iterations per thread, %s: each kernel's time "
                        "over warp_no_divergence's." % floats(size))
    for run in runs:
        t = {r["kernel"]: r["time_ms"] for r in _timed(run.rows) if r["part"] == 1}
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
            pts = [(r["work"], r["time_ms"]) for r in _timed(run.rows) if r["part"] == 2 and r["kernel"] == kernel]
            p2.add(Series(_named(title, run), pts, role=run.role, style=style))
    return [p1, p2]


# --------------------------------------------------------------------------
# Lab 04: occupancy
# --------------------------------------------------------------------------

def _scenarios(run):
    s = {1: {}, 2: {}}
    for r in run.rows:
        m = re.match(r"s([12])-(\d+)$", r["row"])
        if m and r["part"] == 2:
            s[int(m.group(1))][int(m.group(2))] = r
    return s


def lab04(runs, with_course=True):
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
            times.add(Series(_named("scenario %d" % k, run), [(n, r["time_ms"]) for n, r in sorted(s[k].items())
                                                              if r["time_ms"] > 0], role=run.role, style=k - 1))
            eff.add(Series(_named("scenario %d" % k, run), [(n, 100 * r["sm_efficiency"]) for n, r in
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
        for r in _timed(run.rows):
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
        for r in _timed(run.rows):
            m = re.match(r"throttle-(\d+)$", r["row"])
            if m and r["part"] == 5:
                pts.append((int(m.group(1)), r["time_ms"]))
        throttle.add(Series(run.label, pts, role=run.role))
        labels = {}
        for r in _timed(run.rows):
            if r["part"] == 5 and r["row"] in ("heavy", "heavy-bounded"):
                labels[r["row"]] = r["time_ms"]
        regs.add(Series(run.label, [(k.replace("-", "_"), v) for k, v in labels.items()], role=run.role))
    figs += [throttle, regs]
    return figs


# --------------------------------------------------------------------------
# Lab 05: streams
# --------------------------------------------------------------------------

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


def lab05(runs, with_course=True):
    ref = runs[0]
    size = ref.rows[0]["size"] if ref.rows else 0
    pipe = Figure("05-streams-pipeline", "The pipeline against the number of chunks",
                  xlabel="chunks (streams, log scale)", ylabel="time (ms)", logx=2,
                  caption="3 x {:,} integers through copies in, a kernel and copies out: depth-first and "
                          "breadth-first issue, the ideal of each number of chunks, and serial from pinned "
                          "memory (dotted).".format(int(size)))
    for run in runs:
        rows = _timed(run.rows)
        if not rows:
            continue
        work = run.rows[0]["kernel_work"]
        main = [r for r in rows if r["kernel_work"] == work]
        for style, order in enumerate(("depth-first", "breadth-first")):
            pipe.add(Series(_named(order, run), [(r["chunks"], r["time_ms"]) for r in main
                                                  if _order(r["version"]) == order], role=run.role, style=style))
        serial = [r for r in main if _order(r["version"]) == "serial-pinned"]
        if serial and run.role == REFERENCE:
            pipe.add(Series("serial, pinned memory, %s" % run.label, [(0, serial[0]["time_ms"])], role=REFERENCE,
                            rule="y"))
        if run.role == REFERENCE:
            pipe.add(Series("ideal of N chunks", [(r["chunks"], r["ideal_ms"]) for r in main
                                                  if _order(r["version"]) == "depth-first" and r["ideal_ms"] > 0],
                            role="model", style=1))
    return [pipe] + timelines(runs, "05-streams")


def _timeline_groups(run):
    groups = {}
    for r in run.timeline:
        key = r.get("version") or ""
        groups.setdefault(key, []).append(r)
    return groups


# What a lab's timeline figure says beyond the common caption: how it was measured.
TIMELINE_NOTES = {
    "08-multi-gpu": " Each GPU's events are put on the host's clock, GPU by GPU (within the program's "
                    "timeline-uncertainty-ms). A bar starts when its stream reached the operation: a copy may wait "
                    "there for its GPU's copy engine. The program sees the copies, not the launches: a kernel's bar "
                    "is its stream's time between a chunk's copies in and its copy out.",
}


def timelines(runs, lab):
    """One timeline figure per run and version: a row per stream (per GPU and
    stream where the timeline has a gpu column), copies and kernels as bars."""
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
                # Lab 05 traces its fastest depth-first run: as many chunks as streams.
                chunks = run.kv.get("timeline-chunks") or len({int(r["stream"]) for r in rows})
                version = "depth-first, %s chunks" % chunks if lab == "05-streams" else "the traced run"
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
                                 % (version, "GPU and stream" if multi else "stream", TIMELINE_NOTES.get(lab, "")))
            fig.xmax = end * 1.02 if end > 0 else None
            for op in ("h2d", "kernel", "d2h", "p2p", "other"):
                pts = [(row_label(r), r["start_ms"], r["end_ms"]) for r in rows if r["operation"] == op]
                if pts:
                    fig.add(Series(OPERATION_COLOURS[op][1], pts, role=run.role, operation=op))
            figs.append(fig)
    return figs


# --------------------------------------------------------------------------
# Lab 06: shared memory
# --------------------------------------------------------------------------

def lab06(runs, with_course=True):
    ref = runs[0]
    side = int(ref.rows[0]["size"]) if ref.rows else 0
    bw = Figure("06-shared-memory-bandwidth", "The transposes' bandwidth against a copy of the same tiles",
                kind="bars", ylabel="bandwidth (GB/s)",
                caption="A {:,} x {:,} matrix of floats: bytes read and written over the median time.".format(side, side))
    banks = Figure("06-shared-memory-banks", "Shared-memory wavefronts per load request (bank conflicts)",
                   kind="bars", ylabel="wavefronts per request",
                   caption="1: no bank conflict; 32: every lane of the warp waits its turn at one bank.")
    stores = Figure("06-shared-memory-stores", "Global segments per store request", kind="bars",
                    ylabel="segments per request",
                    caption="The naive transpose writes down a column: 32 segments a request.")
    for run in runs:
        rows = [r for r in run.rows if r["kernel"]]
        bw.add(Series(run.label, [(r["kernel"], r["gbs"]) for r in rows if r["gbs"] > 0], role=run.role))
        banks.add(Series(run.label, [(r["kernel"], r["shared_load_wavefronts"]) for r in rows
                                     if r["kernel"] in ("transpose_shared", "transpose_padded")], role=run.role))
        stores.add(Series(run.label, [(r["kernel"], r["store_segments_per_request"]) for r in rows
                                      if r["kernel"].startswith("transpose")], role=run.role))
    return [bw, banks, stores]


# --------------------------------------------------------------------------
# Lab 07: latency
# --------------------------------------------------------------------------

def lab07(runs, with_course=True):
    occ = Figure("07-latency-occupancy", "Bandwidth against resident warps, beside Little's law",
                 xlabel="warps per SM", ylabel="bandwidth (GB/s)",
                 caption="sum_tlp, one load in flight per thread: the bandwidth at each number of resident warps; "
                         "the dashed lines are the warps Little's law asks for (TODO(1)), the dotted one the kit's "
                         "stream of part 2.")
    ilp = Figure("07-latency-ilp", "Bandwidth against loads in flight per thread, 8 warps per SM",
                 xlabel="loads per thread (log scale)", ylabel="bandwidth (GB/s)", logx=2,
                 caption="sum_ilp (TODO(2)) at 8 warps per SM; the dotted line is sum_tlp at full occupancy.")
    lat = Figure("07-latency-latency", "Load latency by level of the memory", kind="bars", logy=10,
                 ylabel="latency (SM clock cycles, log scale)",
                 caption="One thread chasing pointers through a working set in L1, in L2, and in DRAM only.")
    thr = Figure("07-latency-throughput", "Instruction throughput", kind="bars", logy=10,
                 ylabel="results per clock per SM (log scale)",
                 caption="Compute-bound chains at full occupancy: float against double, intrinsics against "
                         "accurate functions and fast math.")
    level = {"l1": "L1", "l2": "L2", "dram": "DRAM only"}
    for run in runs:
        rows = run.rows
        occ.add(Series(run.label, [(r["warps_per_sm"], r["value"]) for r in rows
                                   if r["part"] == "occupancy" and r["warps_per_sm"]], role=run.role))
        law = [r["value"] for r in rows if r["part"] == "littles-law"]
        if law and law[0] > 0:
            occ.add(Series("Little's law, %s" % run.label, [(law[0], 0)], role=run.role, rule="x"))
        ilp.add(Series(run.label, [(r["loads_per_thread"], r["value"]) for r in rows
                                   if r["part"] == "ilp" and r["loads_per_thread"]], role=run.role))
        lat.add(Series(run.label, [(level.get(r["row"], r["row"]), r["value"]) for r in rows
                                   if r["part"] == "latency" and r["unit"] == "cycles"], role=run.role))
        thr.add(Series(run.label, [(r["row"], r["value"]) for r in rows
                                   if r["part"] == "throughput" and r["value"] > 0], role=run.role))
        if run.role == REFERENCE:
            stream = [r["value"] for r in rows if r["part"] == "bandwidth"]
            if stream:
                occ.add(Series("the kit's stream (part 2)", [(0, stream[0])], role="model", rule="y"))
            tlp = [r for r in rows if r["part"] == "occupancy" and r["warps_per_sm"]]
            if tlp:
                best = max(tlp, key=lambda r: r["warps_per_sm"])
                ilp.add(Series("sum_tlp at %d warps per SM, %s" % (best["warps_per_sm"], run.label), [(0, best["value"])],
                               role="model", rule="y"))
    return [occ, ilp, lat, thr]


# --------------------------------------------------------------------------
# Lab 08: multi-GPU
# --------------------------------------------------------------------------

def lab08(runs, with_course=True):
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
        p1 = [r for r in _timed(run.rows) if r["part"] == 1]
        versions.add(Series(run.label, [(r["version"], r["time_ms"]) for r in p1], role=run.role))
        for style, streams in enumerate(sorted({int(r["streams"]) for r in p1})):
            mine = {int(r["gpus"]): r["time_ms"] for r in p1 if int(r["streams"]) == streams}
            if 1 in mine and len(mine) > 1:
                scaling.add(Series(_named("%d stream%s each" % (streams, "" if streams == 1 else "s"), run),
                                   [(g, mine[1] / t) for g, t in sorted(mine.items())], role=run.role, style=style))
        peer.add(Series(run.label, [(r["version"], r["gbs"]) for r in _timed(run.rows) if r["part"] == 2],
                        role=run.role))
    figs = [versions]
    if not scaling.empty():
        top = max(p[0] for s in scaling.series for p in s.points)
        scaling.add(Series("twice the GPUs, twice the speed", [(1, 1), (top, top)], role="model", style=1))
        figs.append(scaling)
    if not peer.empty():
        figs.append(peer)
    return figs + timelines(runs, "08-multi-gpu")


BUILDERS = {
    "01-coalescing": lab01,
    "02-grouping": lab02,
    "03-divergence": lab03,
    "04-occupancy": lab04,
    "05-streams": lab05,
    "06-shared-memory": lab06,
    "07-latency": lab07,
    "08-multi-gpu": lab08,
}

# Labs whose figures include one of the course's Tesla K40.
COURSE_FIGURES = {"01-coalescing", "02-grouping", "03-divergence", "04-occupancy"}


def figures(lab, runs, with_course=True):
    """The figures of lab from runs (the reference's first); those with
    nothing to draw are left out."""
    if lab not in BUILDERS:
        return []
    return [f for f in BUILDERS[lab](runs, with_course) if not f.empty()]
