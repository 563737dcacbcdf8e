#!/usr/bin/env python3
"""Where the suite's time went on the GPU: reads the hold log that
tests/run.sh keeps (KIT_LOCK_LOG) and prints how long the GPU was held
alone (timed runs: nothing else ran), by whom, and how long holders waited
to have it alone, and how long a timing waited while holders that shared
the GPU finished (nobody new may start then).

The log's lines, one per event, time first (seconds since the epoch):
  TIME want-s|want-x|hold-s|hold-x|free NUMBER DESCRIPTION    (a test)
  TIME want|hold grade.sh PID -s|-x [TEST]                    (the grader)
  TIME free grade.sh PID
A holder's hold lasts until its next hold (another mode) or its free; a
hold with neither lasts until the last event of the log.

usage: gpu_holds.py LOG [TOP]
"""

import re
import sys


def test_name(encoded):
    """A Bats test's description from BATS_TEST_NAME (test_ then _ for a
    space and -XX for any other character)."""
    text = encoded[5:] if encoded.startswith("test_") else encoded
    return re.sub(r"-([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), text.replace("_", " "))


def parse(path):
    events = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ")
            if len(parts) < 3:
                continue
            try:
                t = float(parts[0])
            except ValueError:
                continue
            kind = parts[1]
            if parts[2] == "grade.sh":
                who = "grade.sh %s" % (parts[3] if len(parts) > 3 else "?")
                mode = parts[4] if len(parts) > 4 and kind != "free" else ""
                name = " ".join(parts[5:]) if len(parts) > 5 else ""
                name = "the grader, for: %s" % (test_name(name) if name else who)
                events.append((t, kind, mode, who, name))
            else:
                mode = kind[4:] if kind.startswith(("want", "hold")) else ""
                kind = kind[:4]
                desc = " ".join(parts[3:])
                events.append((t, kind, mode, "test " + desc, desc))
    events.sort(key=lambda e: e[0])
    return events


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 64
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    events = parse(sys.argv[1])
    if not any(kind == "hold" for _, kind, _, _, _ in events):
        print("# the GPU: not held (no test ran on it)")
        return 0
    start, end = events[0][0], events[-1][0]
    held = {}      # who -> (mode, since, name)
    wanted = {}    # who -> time its wait began
    alone = {}     # name -> seconds held alone
    waited = 0.0
    alone_total = 0.0
    drain = 0.0    # a timing waits while shared holders finish
    last = start
    for t, kind, mode, who, name in events:
        if wanted and held and all(m == "-s" for m, _, _ in held.values()):
            drain += t - last
        last = t
        # A holder that wants the GPU alone lets its shared hold go first.
        if (kind in ("hold", "free") or (kind == "want" and mode == "-x")) and who in held:
            m, since, n = held.pop(who)
            if m == "-x":
                alone[n] = alone.get(n, 0.0) + t - since
                alone_total += t - since
        if kind == "want" and mode == "-x":
            wanted[who] = t
        if kind == "hold":
            held[who] = (mode, t, name)
            if who in wanted:
                waited += t - wanted.pop(who)
    for who, (m, since, n) in held.items():
        if m == "-x":
            alone[n] = alone.get(n, 0.0) + end - since
            alone_total += end - since
    span = end - start
    print("# the GPU: held alone %.0f s of the %.0f s from the first hold to the last event; "
          "holders waited %.0f s in all to have it alone; for %.0f s a timing waited for "
          "runs that shared it to end" % (alone_total, span, waited, drain))
    for n, s in sorted(alone.items(), key=lambda x: -x[1])[:top]:
        print("#   %5.1f s alone  %s" % (s, n[:100]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
