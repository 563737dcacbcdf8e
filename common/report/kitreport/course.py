"""The course's own figures, to draw beside this GPU's.

From the course's notes (000, the tables the handouts quote): a Tesla K40
(Kepler, 15 SMX, 1.5 MB of L2) measured with nvprof. Labs 05 to 08 have no
K40 figure: the course's streams figures are pictures of Fermi's queues,
and its multi-GPU slides give no timings.
"""

K40 = "Tesla K40 (the course)"

# Lab 01 (notes 000): floats -> (coalesced ms, random ms, transactions per
# request coalesced, random).
COALESCING = {
    32768: (0.113, 1.688, 1.00, 30.63),
    4194304: (9.89, 516.7, 1.00, 31.09),
}

# Lab 02 (notes 000), G = 16: floats -> (coalesced, semi, random) in ms.
GROUPING_G16 = {
    32768: (0.113, 0.789, 1.683),
    4194304: (9.96, 221.4, 516.6),
}
GROUPING_TRANSACTIONS_G16 = 13.41

# Lab 03 (notes 000), 4,194,304 floats: warp_no_divergence, warp_divergence (ms).
DIVERGENCE = (4194304, 12.43, 38.55)

# Lab 04 (notes 000), 1,000,000 iterations, the course's code assuming 16
# SMX: n -> (S1 time, S2 time, S1 SM efficiency %, S2 SM efficiency %,
# S1 achieved %, S2 achieved %); times in its table's unit.
SCENARIOS = {
    32: (0.35, 0.35, 6.54, 6.55, 1.5, 1.5),
    64: (0.41, 0.41, 6.54, 12.46, 2.9, 1.5),
    128: (0.69, 0.69, 6.54, 18.83, 4.3, 1.5),
    256: (0.70, 0.69, 6.54, 37.17, 8.8, 1.5),
    512: (0.71, 0.69, 6.54, 68.48, 17.0, 1.6),
    1024: (0.74, 0.70, 6.54, 78.32, 35.0, 2.8),
    2048: (0.75, 0.70, 13.15, 96.32, 35.0, 4.7),
    4096: (0.75, 0.72, 26.26, 95.91, 35.0, 9.4),
    8192: (0.75, 0.74, 52.41, 95.10, 35.0, 18.0),
    16384: (0.91, 0.91, 83.29, 83.28, 39.0, 39.0),
    32768: (1.6, 1.6, 62.07, 62.11, 72.0, 72.0),
    65536: (2.49, 2.49, 72.80, 72.80, 77.0, 75.0),
}


def nearest(table, size):
    """The key of table nearest to size on a log scale (the course ran two sizes)."""
    import math
    return min(table, key=lambda k: abs(math.log(max(size, 1)) - math.log(k)))
