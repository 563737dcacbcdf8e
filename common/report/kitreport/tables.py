"""The labs' CSV tables, read by column name and checked.

Each lab's program writes its table with --csv FILE (common/lab/NN-*/harness.cu;
every table starts with gpu, size, seed; its columns are named in the lab's
report.py); Labs 05 and 08 also write a
timeline with --timeline FILE. A table is read with the csv module, by the names in
its header: columns the kit adds later are ignored, a column a figure needs
and the table lacks is refused, and so is a row whose numbers are not
numbers. A refusal names the file, the line and what is wrong.
"""

import csv
import io
import math

from . import labs

# Column kinds: text; num (a number); num? (a number or empty).
COMMON = [("gpu", "text"), ("size", "num"), ("seed", "num")]

# A timeline: an operation on a row (a stream; with a gpu column, a GPU's
# stream) from start_ms to end_ms. Optional columns: chunk, gpu, and version
# (which run: depth-first, breadth-first), each a figure of its own.
TIMELINE = [("operation", "text"), ("stream", "num"), ("start_ms", "num"), ("end_ms", "num")]
TIMELINE_OPTIONAL = [("chunk", "num?"), ("gpu", "num?"), ("version", "text")]
# What a lab's timeline must hold besides is the lab's TIMELINE_NEEDS
# (common/lab/NN-name/report.py; Lab 08's rows are a GPU's streams).


class TableError(Exception):
    """A table the pages cannot use: the message says where and why."""


def _number(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(text)
    return v


def read(path, columns, optional=(), what="table"):
    """The rows of the CSV at path as dicts of the named columns (numbers as
    floats), checked against columns [(name, kind)]. Raises TableError."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise TableError("%s: no such file (the program wrote no %s)" % (path, what))
    except (OSError, UnicodeDecodeError) as e:
        raise TableError("%s: cannot be read as text: %s" % (path, e))
    if "\0" in text:
        raise TableError("%s: holds NUL bytes: not a %s of the kit" % (path, what))
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise TableError("%s: empty: the program wrote no %s" % (path, what))
    except csv.Error as e:
        raise TableError("%s, line 1: not CSV: %s" % (path, e))
    header = [h.strip() for h in header]
    missing = [name for name, _ in columns if name not in header]
    if missing:
        raise TableError("%s: not a %s: no column %s (its columns: %s)"
                         % (path, what, ", ".join("'%s'" % m for m in missing), ", ".join(header)))
    index = {name: header.index(name) for name in header}
    kinds = list(columns) + [c for c in optional if c[0] in index]
    rows = []
    line = 1
    try:
        for fields in reader:
            line += 1
            if not fields or all(not x.strip() for x in fields):
                continue
            if len(fields) != len(header):
                raise TableError("%s, line %d: %d fields, the header has %d" % (path, line, len(fields), len(header)))
            row = {"_line": line}
            for name, kind in kinds:
                raw = fields[index[name]].strip()
                if kind == "text":
                    row[name] = raw
                    continue
                if kind == "num?" and raw == "":
                    row[name] = None
                    continue
                try:
                    row[name] = _number(raw)
                except ValueError:
                    raise TableError("%s, line %d: column '%s' holds '%s', not a number" % (path, line, name, raw))
            rows.append(row)
    except csv.Error as e:
        raise TableError("%s, line %d: not CSV: %s" % (path, line, e))
    if not rows:
        raise TableError("%s: no rows: the program measured nothing it could write" % path)
    return rows


def read_lab(lab, path):
    """A lab's table, by the columns its report.py names (SCHEMA)."""
    module = labs.lab_module(lab)
    if module is None:
        raise TableError("%s: no lab '%s' (labs: %s)" % (path, lab, ", ".join(labs.lab_names())))
    return read(path, module.SCHEMA, what="table of lab %s" % lab)


def read_timeline(path, lab=None):
    module = labs.lab_module(lab) if lab else None
    needs = getattr(module, "TIMELINE_NEEDS", [])
    optional = [c for c in TIMELINE_OPTIONAL if c[0] not in {n for n, _ in needs}]
    rows = read(path, TIMELINE + needs, optional, what="timeline of lab %s" % lab if lab else "timeline")
    for r in rows:
        if r["end_ms"] < r["start_ms"]:
            raise TableError("%s, line %d: an operation that ends (%g ms) before it starts (%g ms)"
                             % (path, r["_line"], r["end_ms"], r["start_ms"]))
    return rows


def read_kv(path):
    """The `key: value` lines of a program's output (the last of a key wins)."""
    kv = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if ": " not in line:
                    continue
                key, value = line.split(": ", 1)
                if key and all(c.islower() or c.isdigit() or c == "-" for c in key):
                    kv[key] = value
    except OSError:
        pass
    return kv
