"""Lab 06: shared memory: its CSV table's columns (SCHEMA) and the figures its handout
discusses, from the programs' tables (common/report/kitreport/labs.py
loads this file; make report and the handouts' figures use it)."""

from kitreport.figure import Figure, Series
from kitreport.tables import COMMON

SCHEMA = COMMON + [("kernel", "text"), ("time_ms", "num"), ("gbs", "num"),
                   ("load_segments_per_request", "num"), ("store_segments_per_request", "num"),
                   ("shared_store_wavefronts", "num"), ("shared_load_wavefronts", "num"),
                   ("correct", "num")]


def figures(runs, with_course=True):
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
