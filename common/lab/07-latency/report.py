"""Lab 07: latency: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

from kitreport.figure import Figure, Series
from kitreport.labs import REFERENCE
from kitreport.tables import COMMON

SCHEMA = COMMON + [("part", "text"), ("row", "text"), ("warps_per_sm", "num?"),
                   ("loads_per_thread", "num?"), ("time_ms", "num?"), ("value", "num"), ("unit", "text"),
                   ("correct", "num")]


def figures(runs, with_course=True):
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
