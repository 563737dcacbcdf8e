#!/usr/bin/env python3
"""kitreport.py: every structured file the grader writes or reads.

The graders (grade.sh, grade-class.sh, Gradescope's run_autograder, the
Classroom workflows) are bash; what they hand to people and platforms is
CSV, TAP, JUnit XML and JSON, written here with Python's standard library
(csv, json, xml.etree), never by hand. Python 3.6 or newer: on every
grading host the kit supports (Debian, Ubuntu, Gradescope's images).

    kitreport.py write DIR            one student's grading (a NUL-separated
                                      record on stdin) into DIR: grades.csv,
                                      grades.tap, grades.xml (JUnit),
                                      results.json (Gradescope), record.json
    kitreport.py roster FILE NAME [ENTRY]
                                      the roster row of a submission: its
                                      ID and name, NUL-separated
    kitreport.py roster-unmatched FILE
                                      the roster rows that name none of the
                                      keys on stdin (NUL-separated)
    kitreport.py gather OUT LABS [options]
                                      the class's CSVs from OUT/students
    kitreport.py skipped RECORD       how many labs a grading skipped
    kitreport.py gradescope-users FILE
                                      names and IDs of a Gradescope
                                      submission's users (group members too)
    kitreport.py gradescope-note FILE SCORE TEXT
                                      a results.json of one message
    kitreport.py gradescope-import GRADED FILE
                                      a GPU host's results.json, checked

Text from students (names, IDs, compiler messages) is made one line of
printable text (control and bidirectional-format characters removed, any
script kept). Spreadsheet cells that would start a formula (=, +, -, @,
TAB, CR: OWASP's "CSV Injection") get a leading apostrophe.
"""

import csv
import io
import json
import os
import re
import sys
import unicodedata
import xml.etree.ElementTree as ET

# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def clean(text, limit=400):
    """One line of printable text: controls become spaces, format characters
    (bidirectional overrides, zero-width marks, a BOM) and anything XML 1.0
    cannot hold are dropped; at most LIMIT characters."""
    out = []
    for ch in str(text):
        cat = unicodedata.category(ch)
        if ch in "\t\n\r\v\f" or cat == "Zl" or cat == "Zp":
            out.append(" ")
        elif cat in ("Cc", "Cf", "Cs", "Co", "Cn"):
            continue
        else:
            out.append(ch)
    return "".join(out).strip()[:limit]


# OWASP, "CSV Injection": a cell that starts with = + - @ TAB or CR may be
# read as a formula by a spreadsheet; a leading ' makes it text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(text):
    """A text cell for a spreadsheet."""
    text = "" if text is None else str(text)
    return "'" + text if text.startswith(FORMULA_START) else text


def number(value):
    """A number as people write it: 20, 16.4; empty for None."""
    if value is None or value == "":
        return ""
    value = float(value)
    text = "%.2f" % value
    text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def to_float(text):
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


# ---------------------------------------------------------------------------
# One student's record
# ---------------------------------------------------------------------------

LAB_KEYS = ("verdict", "points", "max_points", "ratio", "reason", "seconds")


def read_record(data):
    """The record grade.sh writes: NUL-separated KEY VALUE pairs; `lab NAME`
    starts a lab's fields, `header LINE` repeats."""
    fields = data.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 2:
        raise ValueError("the record has a key without a value")
    rec = {"header": [], "labs": []}
    lab = None
    for i in range(0, len(fields), 2):
        key = fields[i].decode("utf-8", "replace")
        value = fields[i + 1].decode("utf-8", "replace")
        if key == "lab":
            lab = {"lab": clean(value, 80)}
            rec["labs"].append(lab)
        elif key == "header":
            rec["header"].append(clean(value, 1000))
        elif lab is not None and key in LAB_KEYS:
            lab[key] = value
        else:
            rec[key] = value
    return rec


def normalise(rec):
    """Typed, cleaned fields and totals."""
    out = {
        "kit_record": 1,
        "student": clean(rec.get("student", "")),
        "student_id": clean(rec.get("student_id", "")),
        "origin": clean(rec.get("origin", "")),
        "grading_seed": clean(rec.get("seed", "")),
        "gpu": clean(rec.get("gpu", "")),
        "isolation": clean(rec.get("isolation", "")),
        "isolation_note": clean(rec.get("isolation_note", ""), 1000),
        "mode": clean(rec.get("mode", ""), 1000),
        "again": clean(rec.get("again", ""), 1000),
        "header": rec.get("header", []),
        "execution_time": to_float(rec.get("execution_time")),
        "labs": [],
    }
    total = maximum = 0.0
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for lab in rec["labs"]:
        verdict = lab.get("verdict", "FAIL")
        if verdict not in counts:
            verdict = "FAIL"
        points = to_float(lab.get("points"))
        if verdict == "FAIL":
            points = 0.0
        if verdict == "SKIP":
            points = None
        max_points = to_float(lab.get("max_points")) or 0.0
        counts[verdict] += 1
        total += points or 0.0
        maximum += max_points
        out["labs"].append({
            "lab": lab["lab"],
            "verdict": verdict,
            "points": points,
            "max_points": max_points,
            "time_vs_reference": to_float(lab.get("ratio")),
            "reason": clean(lab.get("reason", ""), 1000),
            "seconds": to_float(lab.get("seconds")),
        })
    out.update(total=total, max_points=maximum, passed=counts["PASS"],
               failed=counts["FAIL"], skipped=counts["SKIP"])
    return out


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def csv_text(rows, quote_all=True):
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL,
                   lineterminator="\n")
    for row in rows:
        w.writerow(row)
    return buf.getvalue()


GRADES_CSV_HEADER = ["student", "student_id", "lab", "verdict", "points", "max_points",
                     "time_vs_reference", "reason", "grading_seed", "gpu", "isolation", "mode"]


def grades_csv(r):
    rows = [GRADES_CSV_HEADER]
    for lab in r["labs"]:
        rows.append([cell(r["student"]), cell(r["student_id"]), lab["lab"], lab["verdict"],
                     number(lab["points"]), number(lab["max_points"]),
                     number(lab["time_vs_reference"]), cell(lab["reason"]),
                     r["grading_seed"], cell(r["gpu"]), cell(r["isolation"]), cell(r["mode"])])
    return csv_text(rows)


def tap_escape(text):
    """A TAP description: a backslash and a # escaped, so that no text of a
    student's can start a directive (TAP 13/14; Perl's TAP::Parser honours
    the escapes)."""
    return text.replace("\\", "\\\\").replace("#", "\\#")


def yaml_scalar(value):
    """A YAML scalar: JSON's double-quoted strings and numbers are YAML."""
    if value is None:
        return "~"
    if isinstance(value, float):
        return number(value)
    return json.dumps(value, ensure_ascii=False)


def grades_tap(r):
    lines = ["TAP version 13", "1..%d" % len(r["labs"])]
    lines.append("# Student: " + r["student"] + (" (ID %s)" % r["student_id"] if r["student_id"] else ""))
    lines.append("# Mode: " + r["mode"])
    lines.append("# Isolation: " + r["isolation_note"])
    for k, lab in enumerate(r["labs"], 1):
        score = "%s/%s" % (number(lab["points"]) or "-", number(lab["max_points"]))
        if lab["verdict"] == "PASS":
            lines.append("ok %d - %s %s" % (k, lab["lab"], score))
        elif lab["verdict"] == "SKIP":
            # After "# SKIP" everything is the reason: nothing there is read
            # as another directive.
            lines.append("ok %d - %s # SKIP %s" % (k, lab["lab"], lab["reason"]))
        else:
            lines.append("not ok %d - %s %s: %s" % (k, lab["lab"], score, tap_escape(lab["reason"])))
        lines.append("  ---")
        for key in ("verdict", "points", "max_points", "time_vs_reference", "reason"):
            lines.append("  %s: %s" % (key, yaml_scalar(lab[key])))
        lines.append("  mode: %s" % yaml_scalar(r["mode"]))
        lines.append("  ...")
    return "\n".join(lines) + "\n"


def grades_xml(r):
    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", {
        "name": "kit-grading " + r["student"],
        "tests": str(len(r["labs"])),
        "failures": str(r["failed"]),
        "skipped": str(r["skipped"]),
        "errors": "0",
    })
    if r["execution_time"] is not None:
        suite.set("time", number(r["execution_time"]))
    props = ET.SubElement(suite, "properties")
    for key in ("student", "student_id", "grading_seed", "gpu", "isolation", "mode", "origin"):
        ET.SubElement(props, "property", {"name": key, "value": r[key]})
    for lab in r["labs"]:
        case = ET.SubElement(suite, "testcase", {"classname": r["student"], "name": lab["lab"]})
        if lab["seconds"] is not None:
            case.set("time", number(lab["seconds"]))
        score = "%s/%s points" % (number(lab["points"]) or "-", number(lab["max_points"]))
        if lab["verdict"] == "PASS":
            ET.SubElement(case, "system-out").text = score
        elif lab["verdict"] == "SKIP":
            ET.SubElement(case, "skipped", {"message": lab["reason"]})
        else:
            fail = ET.SubElement(case, "failure", {"message": lab["reason"], "type": "FAIL"})
            fail.text = "%s: %s" % (score, lab["reason"])
    buf = io.BytesIO()
    ET.ElementTree(root).write(buf, encoding="UTF-8", xml_declaration=True)
    return buf.getvalue().decode("utf-8") + "\n"


def results_json(r, visibility="visible"):
    """Gradescope's results.json, every field of its specification
    (gradescope-autograders.readthedocs.io/en/latest/specs/): plain text
    ("text" formats), so that no student text is rendered as HTML."""
    tests = []
    for k, lab in enumerate(r["labs"], 1):
        out = lab["verdict"] + (": " + lab["reason"] if lab["reason"] else "")
        if lab["time_vs_reference"] is not None:
            out += "\ntime against the kit's reference: %sx" % number(lab["time_vs_reference"])
        test = {
            "name": lab["lab"],
            "name_format": "text",
            "number": str(k),
            "max_score": lab["max_points"],
            "status": "passed" if lab["verdict"] == "PASS" else "failed",
            "output": out,
            "output_format": "text",
            "tags": [lab["verdict"]],
            "visibility": visibility,
            "extra_data": {"verdict": lab["verdict"], "time_vs_reference": lab["time_vs_reference"]},
        }
        # A lab not graded here has no score: Gradescope shows it as a
        # failing check, not as a zero.
        if lab["verdict"] != "SKIP":
            test["score"] = lab["points"]
        tests.append(test)
    out = {
        "score": r["total"],
        "output": "\n".join([line for line in r["header"] if line] + ([r["again"]] if r["again"] else [])),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "extra_data": {k: r[k] for k in ("student", "student_id", "grading_seed", "gpu", "isolation", "mode")},
        "tests": tests,
    }
    if r["execution_time"] is not None:
        out["execution_time"] = int(round(r["execution_time"]))
    return json.dumps(out, ensure_ascii=False, indent=2) + "\n"


def cmd_write(args):
    if len(args) != 1:
        return usage()
    rec = normalise(read_record(sys.stdin.buffer.read()))
    d = args[0]
    write_text(os.path.join(d, "grades.csv"), grades_csv(rec))
    write_text(os.path.join(d, "grades.tap"), grades_tap(rec))
    write_text(os.path.join(d, "grades.xml"), grades_xml(rec))
    write_text(os.path.join(d, "results.json"), results_json(rec))
    write_text(os.path.join(d, "record.json"), json.dumps(rec, ensure_ascii=False, indent=2) + "\n")
    return 0


# ---------------------------------------------------------------------------
# Rosters
# ---------------------------------------------------------------------------

# A roster's columns, by the names instructors' files use (the kit's own,
# Canvas's gradebook export, Moodle's, Gradescope's), case and spaces aside.
ROSTER_COLUMNS = {
    "submission": ("submission",),
    "student_id": ("student_id", "id", "student id"),
    "name": ("name", "student", "full name", "student name"),
    "sis_user_id": ("sis_user_id", "sis user id"),
    "sis_login_id": ("sis_login_id", "sis login id"),
    "section": ("section",),
    "email": ("email", "email address", "e-mail"),
    "username": ("username",),
    "id_number": ("id_number", "id number", "idnumber", "sid"),
}


def read_csv_rows(path):
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8-sig", "replace")
    return list(csv.reader(io.StringIO(text, newline="")))


def read_roster(path):
    """The roster's rows as dicts. With a header row naming `submission`,
    columns are found by name; without one, the columns are
    submission, student_id, name (more columns: the name held commas)."""
    rows = [r for r in read_csv_rows(path) if any(c.strip() for c in r)]
    if not rows:
        return []
    first = [c.strip().lower() for c in rows[0]]
    out = []
    if "submission" in first:
        index = {}
        for key, names in ROSTER_COLUMNS.items():
            for i, h in enumerate(first):
                if h in names and key not in index:
                    index[key] = i
        for r in rows[1:]:
            row = {key: (r[i].strip() if i < len(r) else "") for key, i in index.items()}
            if row.get("submission"):
                out.append(row)
    else:
        for r in rows:
            if len(r) < 2 or not r[0].strip():
                continue
            out.append({"submission": r[0].strip(), "student_id": r[1].strip(),
                        "name": ",".join(r[2:]).strip() if len(r) > 2 else ""})
    return out


def archive_bare(entry):
    for ext in (".tar.gz", ".tar.xz", ".tgz", ".tar", ".zip"):
        if entry.endswith(ext):
            return entry[: -len(ext)]
    return entry


def roster_keys(name, entry):
    """The names a roster row may give a submission graded as NAME: NAME
    itself, then its entry in SUBMISSIONS as it is and without an archive's
    extension (ENTRY is given only when NAME was made from it, not renamed
    for a collision)."""
    keys = [name]
    if entry:
        keys += [entry, archive_bare(entry)]
    return keys


def roster_row(roster, name, entry):
    for key in roster_keys(name, entry):
        for row in roster:
            if row["submission"] == key:
                return row
    return None


def cmd_roster(args):
    if len(args) not in (2, 3):
        return usage()
    row = roster_row(read_roster(args[0]), args[1], args[2] if len(args) == 3 else "")
    if row:
        sys.stdout.buffer.write((clean(row.get("student_id", "")) + "\0" + clean(row.get("name", "")) + "\0").encode())
    return 0


def cmd_roster_unmatched(args):
    if len(args) != 1:
        return usage()
    known = set(k for k in sys.stdin.buffer.read().decode("utf-8", "replace").split("\0") if k)
    for row in read_roster(args[0]):
        if row["submission"] not in known:
            print("roster: no submission '%s' (ID %s)" % (clean(row["submission"]), clean(row.get("student_id", ""))))
    return 0


# ---------------------------------------------------------------------------
# The class
# ---------------------------------------------------------------------------


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_submissions(path):
    """OUT/submissions.list: the submissions of this grading as grade-class
    listed them, NUL-separated pairs: the name it grades one as, and its
    entry in SUBMISSIONS (empty where the name was changed for a
    collision)."""
    subs = []
    with open(path, "rb") as f:
        fields = f.read().split(b"\0")
    for i in range(0, len(fields) - 1, 2):
        subs.append((fields[i].decode("utf-8", "replace"), fields[i + 1].decode("utf-8", "replace")))
    return subs


def cmd_gather(args):
    """gather OUT LABS [--roster FILE] [--assignment NAME]: class.csv,
    class-labs.csv, roster.csv, canvas.csv and moodle.csv from the
    students' record.json, one row per submission this grading listed (a
    submission with no record is NOT GRADED, with its reason). Prints one
    line per ungraded submission and a last line `N_NOT_GRADED N_INCOMPLETE`."""
    if len(args) < 2:
        return usage()
    out, labs = args[0], [l for l in args[1].split(",") if l]
    roster_path = assignment = None
    rest = args[2:]
    while rest:
        if rest[0] == "--roster" and len(rest) > 1:
            roster_path, rest = rest[1], rest[2:]
        elif rest[0] == "--assignment" and len(rest) > 1:
            assignment, rest = rest[1], rest[2:]
        else:
            return usage()
    roster = read_roster(roster_path) if roster_path else []
    assignment = clean(assignment or "CUDA labs", 200)
    subs = read_submissions(os.path.join(out, "submissions.list"))

    class_rows = [["student", "student_id", "points", "max_points", "passed", "failed", "skipped"]
                  + labs + ["status"]]
    lab_rows = [["submission"] + GRADES_CSV_HEADER]
    roster_rows = [["submission", "student_id", "name", "points", "max_points", "status"]]
    canvas_rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment]]
    moodle_rows = [["Full name", "Email address", "Username", "ID number", "Submission", assignment]]
    not_graded = incomplete = 0
    max_points = None
    for name, entry in subs:
        d = os.path.join(out, "students", name)
        rec = read_json(os.path.join(d, "record.json"))
        why = None
        try:
            with open(os.path.join(d, "not-graded"), encoding="utf-8", errors="replace") as f:
                why = clean(f.read(), 300) or "not graded"
        except OSError:
            if rec is None:
                why = "not graded: no result for this submission"
        row = roster_row(roster, name, entry) or {}
        sid = clean(row.get("student_id", "")) or (rec or {}).get("student_id", "")
        person = clean(row.get("name", "")) or (rec or {}).get("student", "") or name
        if why:
            not_graded += 1
            print("NOT GRADED: %s: %s" % (name, why))
            class_rows.append([cell(name), cell(sid), "", "", "", "", ""] + [""] * len(labs) + [cell(why)])
            roster_rows.append([cell(name), cell(sid), cell(person), "", "", cell(why)])
            score = ""
        else:
            by_lab = {l["lab"]: l for l in rec["labs"]}
            status = "graded"
            if rec["skipped"]:
                status = "incomplete: a lab was skipped"
                incomplete += 1
            max_points = rec["max_points"] if max_points is None else max(max_points, rec["max_points"])
            class_rows.append([cell(name), cell(sid), number(rec["total"]), number(rec["max_points"]),
                               str(rec["passed"]), str(rec["failed"]), str(rec["skipped"])]
                              + [number(by_lab[l]["points"]) if l in by_lab else "" for l in labs]
                              + [status])
            for lab in rec["labs"]:
                lab_rows.append([cell(name), cell(rec["student"]), cell(rec["student_id"]), lab["lab"],
                                 lab["verdict"], number(lab["points"]), number(lab["max_points"]),
                                 number(lab["time_vs_reference"]), cell(lab["reason"]), rec["grading_seed"],
                                 cell(rec["gpu"]), cell(rec["isolation"]), cell(rec["mode"])])
            roster_rows.append([cell(name), cell(sid), cell(person), number(rec["total"]),
                                number(rec["max_points"]), status])
            # A grade only where every lab was graded: an LMS cell for a
            # skipped lab stays empty, never a zero.
            score = "" if rec["skipped"] else number(rec["total"])
        canvas_rows.append([cell(person), cell(row.get("student_id", "")), cell(row.get("sis_user_id", "")),
                            cell(row.get("sis_login_id", "")), cell(row.get("section", "")), score])
        # Moodle's CSV import reads "-" as "no grade" for new and existing
        # grade items alike (an empty cell only for existing ones).
        moodle_rows.append([cell(person), cell(row.get("email", "")), cell(row.get("username", "")),
                            cell(row.get("id_number", "") or row.get("student_id", "")), cell(name),
                            score if score != "" else "-"])
    if max_points is not None:
        # Canvas reads a row whose first cell is "Points Possible" as the
        # assignments' points (it creates a new assignment with them).
        canvas_rows.insert(1, ["Points Possible", "", "", "", "", number(max_points)])
    write_text(os.path.join(out, "class.csv"), csv_text(class_rows, quote_all=False))
    write_text(os.path.join(out, "class-labs.csv"), csv_text(lab_rows))
    write_text(os.path.join(out, "roster.csv"), csv_text(roster_rows))
    write_text(os.path.join(out, "canvas.csv"), csv_text(canvas_rows))
    write_text(os.path.join(out, "moodle.csv"), csv_text(moodle_rows))
    print("%d %d" % (not_graded, incomplete))
    return 0


def cmd_skipped(args):
    """skipped RECORD: the number of labs a grading skipped; exit 1 where
    there is no readable record (the grading did not finish)."""
    if len(args) != 1:
        return usage()
    rec = read_json(args[0])
    if not isinstance(rec, dict) or not isinstance(rec.get("labs"), list):
        return 1
    print(sum(1 for lab in rec["labs"] if lab.get("verdict") == "SKIP"))
    return 0


# ---------------------------------------------------------------------------
# Gradescope
# ---------------------------------------------------------------------------


def cmd_gradescope_users(args):
    """The submission's users (submission_metadata.json, "users": one, or a
    group's members): names joined with ", ", then their SIDs or e-mail
    addresses, NUL-separated."""
    if len(args) != 1:
        return usage()
    meta = read_json(args[0]) or {}
    users = [u for u in meta.get("users", []) if isinstance(u, dict)]
    names = ", ".join(clean(u.get("name", "")) for u in users if clean(u.get("name", "")))
    ids = ", ".join(clean(u.get("sid") or u.get("email") or u.get("id") or "") for u in users)
    sys.stdout.buffer.write((names + "\0" + ids.strip(", ") + "\0").encode())
    return 0


def cmd_gradescope_note(args):
    """gradescope-note FILE SCORE TEXT: a results.json of one message."""
    if len(args) != 3:
        return usage()
    res = {"score": float(args[1]), "output": clean(args[2], 2000), "output_format": "text",
           "visibility": "visible", "stdout_visibility": "hidden", "tests": []}
    write_text(args[0], json.dumps(res, ensure_ascii=False, indent=2) + "\n")
    return 0


def cmd_gradescope_import(args):
    """gradescope-import GRADED OUT: the GPU host's results.json of these
    files, checked, with a line saying where it was graded."""
    if len(args) != 2:
        return usage()
    res = read_json(args[0])
    if not isinstance(res, dict) or not isinstance(res.get("score"), (int, float)) or not isinstance(res.get("tests"), list):
        return 1
    res["output"] = ("Graded on the course's GPU host; these are that grading's results for exactly the files "
                     "uploaded here.\n" + str(res.get("output", "")))
    write_text(args[1], json.dumps(res, ensure_ascii=False, indent=2) + "\n")
    return 0


# ---------------------------------------------------------------------------


def usage():
    sys.stderr.write(__doc__)
    return 64


def main(argv):
    commands = {
        "write": cmd_write,
        "roster": cmd_roster,
        "roster-unmatched": cmd_roster_unmatched,
        "gather": cmd_gather,
        "skipped": cmd_skipped,
        "gradescope-users": cmd_gradescope_users,
        "gradescope-note": cmd_gradescope_note,
        "gradescope-import": cmd_gradescope_import,
    }
    if len(argv) < 2 or argv[1] not in commands:
        return usage()
    return commands[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
