#!/usr/bin/env python3
"""class_page.py OUT [--submissions DIR] [--kit DIR]: OUT/class.html, a class at a glance.

Reads what `make grade-class` wrote in OUT, by column name (columns the
grader adds later are ignored): class.csv (a row per student), class-labs.csv
(a row per student and lab) and the reports in OUT/students/NAME/. Writes
OUT/class.html: per lab the distribution of points and of time against the
reference, the reasons for FAIL and SKIP with their counts, and a row per
student linking to their report; and, with --submissions, the pairs of
submissions of one lab that are unusually alike (similarity-tester's sim_c
on the students' files, the skeleton's own lines discounted): a list to
look at, not a verdict.

Exit status: 0 written; 64 bad command line; 65 OUT's tables cannot be read.
Needs python3 (3.6 or newer); gnuplot for the figures and similarity-tester
for the similarity list (without them the page says what to install and
holds the tables).
"""

import argparse
import csv
import io
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kitreport import page, similarity  # noqa: E402
from kitreport.figure import Figure, Series  # noqa: E402
from kitreport.page import esc  # noqa: E402

KIT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class ClassError(Exception):
    pass


def read_csv(path, required):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ClassError("%s: cannot be read: %s" % (path, e))
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    header = next(csv.reader(io.StringIO(text, newline="")), [])
    missing = [c for c in required if c not in header]
    if missing:
        raise ClassError("%s: no column %s (its columns: %s): not what make grade-class writes"
                         % (path, ", ".join("'%s'" % m for m in missing), ", ".join(header)))
    return rows


def number(text):
    try:
        v = float(text)
        return v if v == v else None
    except (TypeError, ValueError):
        return None


def reason_kind(reason):
    """A reason without its particulars (a line, a file, a ratio): what it is."""
    r = reason.strip()
    for cut in (": ", " (", " at --", "; "):
        if cut in r:
            r = r.split(cut, 1)[0]
    return re.sub(r"\d+(\.\d+)?", "N", r).strip() or "(no reason given)"


TIME_BINS = [(1.25, "at most 1.25x"), (2.0, "1.25 to 2x"), (3.0, "2 to 3x"), (10.0, "3 to 10x"),
             (float("inf"), "more than 10x")]


def time_bin(x):
    for top, label in TIME_BINS:
        if x <= top:
            return label
    return TIME_BINS[-1][1]


def point_bins(maximum):
    """Labels and tests of the points histogram of a lab worth maximum."""
    if maximum <= 0:
        return [("0", lambda p: True)]
    half, three = maximum / 2.0, maximum * 0.75
    g = page.fmt
    return [("0", lambda p: p <= 0),
            ("under %s" % g(half), lambda p: 0 < p < half),
            ("%s to %s" % (g(half), g(three)), lambda p: half <= p < three),
            ("%s to %s" % (g(three), g(maximum)), lambda p: three <= p < maximum),
            ("all %s" % g(maximum), lambda p: p >= maximum)]


def lab_section(kit, lab, rows, maker):
    n = len(rows)
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("PASS", "FAIL", "SKIP")}
    maximum = max([number(r.get("max_points")) or 0 for r in rows] or [0])
    out = ['<section id="lab-%s">' % esc(lab), "<h2>%s</h2>" % esc(page.lab_title(kit, lab))]
    out.append("<p>%d students: %s %d, %s %d, %s %d.</p>" % (n, page.verdict("PASS"), counts["PASS"],
                                                               page.verdict("FAIL"), counts["FAIL"],
                                                               page.verdict("SKIP"), counts["SKIP"]))
    graded = [r for r in rows if r["verdict"] in ("PASS", "FAIL")]
    pts = [number(r.get("points")) or 0.0 for r in graded]
    bins = point_bins(maximum)
    fig = Figure("points-%s" % lab, "%s: points" % lab, kind="bars", ylabel="students", width=520, height=320, font_size=14,
                 integer_y=True,
                 caption="Points of the %d students graded (a SKIP has none), out of %s."
                         % (len(graded), page.fmt(maximum)))
    fig.add(Series("students", [(label, sum(1 for p in pts if test(p))) for label, test in bins], role="reference"))
    out.append('<div class="pair">')
    out.append(maker.html(fig, "<strong>Points.</strong> %s" % esc(fig.caption)))
    ratios = [number(r.get("time_vs_reference")) for r in rows if r["verdict"] in ("PASS", "FAIL")]
    timed = [x for x in ratios if x is not None]
    if timed:
        tfig = Figure("time-%s" % lab, "%s: time against the reference" % lab, kind="bars", ylabel="students",
                      width=520, height=320, font_size=14, integer_y=True,
                      caption="Each student's time over the reference's where the grader timed it (%d of %d); "
                              "the median is %sx." % (len(timed), len(ratios), page.fmt(median(sorted(timed)))))
        tfig.add(Series("students", [(label, sum(1 for x in timed if time_bin(x) == label))
                                     for _, label in TIME_BINS], role="reference"))
        out.append(maker.html(tfig, "<strong>Time against the reference.</strong> %s" % esc(tfig.caption)))
    else:
        out.append("<p>No time against the reference for this lab (graded on correctness alone, or nothing timed).</p>")
    out.append("</div>")
    for verdict in ("FAIL", "SKIP"):
        kinds = {}
        for r in rows:
            if r["verdict"] == verdict:
                kinds.setdefault(reason_kind(r.get("reason", "")), []).append(r)
        if not kinds:
            continue
        table_rows = []
        for kind, rs in sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            names = ", ".join(sorted({r["_name"] for r in rs}))
            example = rs[0].get("reason", "")
            table_rows.append([kind, len(rs), names, example])
        out.append("<h3>Reasons for %s</h3>" % esc(verdict))
        out.append(page.table(["reason", "students", "who", "one of them, in full"], table_rows, numeric=(1,)))
    out.append("</section>")
    return "\n".join(out)


def summary_table(kit, labs, lab_rows):
    """A row per lab: verdicts, median points and time against the reference, the commonest reason."""
    rows = []
    for lab in labs:
        mine = [r for r in lab_rows if r["lab"] == lab]
        counts = [sum(1 for r in mine if r["verdict"] == v) for v in ("PASS", "FAIL", "SKIP")]
        pts = sorted(number(r.get("points")) or 0.0 for r in mine if r["verdict"] in ("PASS", "FAIL"))
        times = sorted(x for x in (number(r.get("time_vs_reference")) for r in mine) if x is not None)
        kinds = {}
        for r in mine:
            if r["verdict"] in ("FAIL", "SKIP"):
                k = "%s: %s" % (r["verdict"], reason_kind(r.get("reason", "")))
                kinds[k] = kinds.get(k, 0) + 1
        common = max(sorted(kinds), key=lambda k: kinds[k]) if kinds else ""
        rows.append([page.Markup('<a href="#lab-%s">%s</a>' % (esc(lab), esc(page.lab_title(kit, lab))))] + counts +
                     [median(pts), "%sx" % page.fmt(median(times)) if times else "",
                      "%s (%d)" % (common, kinds[common]) if common else ""])
    return page.table(["lab", "PASS", "FAIL", "SKIP", "median points", "median time / reference",
                       "commonest reason"], rows, numeric=(1, 2, 3, 4, 5))


def median(values):
    if not values:
        return ""
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2.0


def similarity_section(labs, subs, kit, threshold):
    out = ['<section id="similarity">', "<h2>Similar submissions</h2>"]
    out.append("<p>Pairs of submissions of one lab that are unusually alike: each holds at least %d%% of the other's "
               "code, and they are more alike to each other than either is to the kit's reference. The skeleton's "
               "own lines are left out of every file first, so that what is compared is what the students wrote; "
               "similarity-tester (<code>sim_c</code>) compares runs of tokens, so renamed variables, moved comments "
               "and new spacing do not hide a copy. <strong>This is a list to look at, not a verdict</strong>: short "
               "answers to the same question can be alike by nature. Files close to the kit's reference (which "
               "students have in <code>solutions/</code>) are listed apart.</p>" % threshold)
    if not similarity.sim_path():
        out.append('<p class="note">%s; the rest of this page does not need it.</p>'
                   % esc(similarity.INSTALL_SIM[0].upper() + similarity.INSTALL_SIM[1:]))
        out.append("</section>")
        return "\n".join(out), None
    entries = similarity.submissions(subs)
    files = {}
    for name, path in entries:
        for lab, text in similarity.lab_files(path, labs).items():
            files.setdefault(lab, {})[name] = text
    listed = 0
    for lab in labs:
        name = lab.split("-", 1)[1]
        skel = read_file(os.path.join(kit, "labs", lab, name + ".cu"))
        ref = read_file(os.path.join(kit, "solutions", lab, name + ".cu"))
        mine = files.get(lab, {})
        out.append("<h3>%s</h3>" % esc(lab))
        if skel is None:
            out.append('<p class="note">The kit\'s skeleton of this lab (labs/%s/%s.cu) is not here: not compared.</p>'
                       % (esc(lab), esc(name)))
            continue
        try:
            res = similarity.analyse(lab, mine, skel, ref or "", threshold=threshold)
        except OSError as e:
            out.append('<p class="problem">Not compared: %s</p>' % esc(e))
            continue
        out.append("<p>%d files taken from the submissions, %d with code of their own beyond the skeleton.</p>"
                   % (res.students, res.with_code))
        if res.pairs:
            listed += len(res.pairs)
            out.append(page.table(["submission", "submission", "first in second", "second in first",
                                   "first like the reference", "second like the reference"],
                                  [[a, b, "%d%%" % ab, "%d%%" % ba, "%d%%" % ra, "%d%%" % rb]
                                   for a, b, ab, ba, ra, rb in res.pairs], numeric=(2, 3, 4, 5)))
        else:
            out.append("<p>No pair is unusually alike.</p>")
        if res.close_to_reference:
            out.append("<p>Close to the kit's reference (at least %d%% of the file's own code is found in it):</p>"
                       % threshold)
            out.append(page.table(["submission", "its code in the reference", "the reference's in it"],
                                  [[n, "%d%%" % a, "%d%%" % b] for n, a, b in res.close_to_reference],
                                  numeric=(1, 2)))
    out.append("</section>")
    return "\n".join(out), listed


def read_file(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def build(out_dir, subs, kit, threshold):
    students = read_csv(os.path.join(out_dir, "class.csv"), ["student", "points", "max_points", "status"])
    labs_path = os.path.join(out_dir, "class-labs.csv")
    lab_rows = read_csv(labs_path, ["lab", "verdict", "points", "max_points", "time_vs_reference", "reason"]) \
        if os.path.exists(labs_path) and os.path.getsize(labs_path) > 0 else []
    for r in lab_rows:
        r["_name"] = r.get("submission") or r.get("student") or "?"
    labs = []
    for r in lab_rows:
        if r["lab"] not in labs:
            labs.append(r["lab"])
    maker = page.FigureMaker()
    reports = {}
    for s in students:
        rep = os.path.join("students", s["student"], "report.txt")
        if os.path.isfile(os.path.join(out_dir, rep)):
            reports[s["student"]] = rep
    try:
        body = ["<h1>The class at a glance</h1>"]
        graded = [s for s in students if number(s.get("points")) is not None]
        seed = read_file(os.path.join(out_dir, "grading-seed"))
        gpus = sorted({r.get("gpu", "") for r in lab_rows if r.get("gpu")})
        body.append('<p class="lead">%d students, %d graded; labs: %s%s%s. From %s, written by make grade-class.</p>'
                    % (len(students), len(graded), esc(", ".join(labs) or "none"),
                       "; GPU: %s" % esc(", ".join(gpus)) if gpus else "",
                       "; class seed %s" % esc(seed.strip()) if seed else "",
                       esc(os.path.abspath(out_dir))))
        if maker.missing:
            body.append('<p class="note">%s.</p>' % esc(maker.missing[0].upper() + maker.missing[1:]))
        nav = ['<nav><ul>', '<li><a href="#students">the students</a></li>']
        nav += ['<li><a href="#lab-%s">%s</a></li>' % (esc(l), esc(l)) for l in labs]
        if subs:
            nav.append('<li><a href="#similarity">similar submissions</a></li>')
        nav.append("</ul></nav>")
        body.append("\n".join(nav))
        body.append(summary_table(kit, labs, lab_rows))
        # A row per student.
        per = {}
        for r in lab_rows:
            per.setdefault(r["_name"], {})[r["lab"]] = r
        rows = []
        for s in sorted(students, key=lambda s: s["student"]):
            name = s["student"]
            link = page.Markup('<a href="%s">%s</a>' % (esc(reports[name]), esc(name))) if name in reports \
                else name
            cells = [link, s.get("student_id", ""),
                     "%s / %s" % (s["points"], s.get("max_points", "")) if s.get("points") else ""]
            for lab in labs:
                r = per.get(name, {}).get(lab)
                if r is None:
                    cells.append("")
                    continue
                ratio = number(r.get("time_vs_reference"))
                cells.append(page.Markup("%s %s%s" % (page.verdict(r["verdict"]), esc(r.get("points", "")),
                                                      " <small>(%sx)</small>" % esc(page.fmt(ratio)) if ratio else "")))
            cells.append(s.get("status", ""))
            rows.append(cells)
        body.append('<section id="students"><h2>The students</h2>')
        body.append("<p>Each name links to the student's report (report.txt: every run, the reasons in full); "
                    "the time against the reference is in brackets.</p>")
        body.append(page.table(["student", "ID", "points"] + labs + ["status"], rows))
        body.append("</section>")
        for lab in labs:
            body.append(lab_section(kit, lab, [r for r in lab_rows if r["lab"] == lab], maker))
        listed = None
        if subs:
            sim_html, listed = similarity_section(labs, subs, kit, threshold)
            body.append(sim_html)
        path = os.path.join(out_dir, "class.html")
        page.write(path, page.document("The class at a glance", "\n".join(body)))
    finally:
        maker.close()
    return path, maker, listed


def main(argv):
    ap = argparse.ArgumentParser(prog="class_page.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the folder make grade-class wrote (OUT)")
    ap.add_argument("--submissions", help="the class's submissions, for the similarity list")
    ap.add_argument("--kit", default=KIT, help="the kit, for the skeletons and references (default: this one)")
    ap.add_argument("--threshold", type=int, default=60, help="percent of each other's code a listed pair holds "
                                                             "(default 60)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 64 if e.code else 0
    if not os.path.isdir(args.out):
        print("class_page.py: %s is not a folder" % args.out, file=sys.stderr)
        return 64
    if args.submissions and not os.path.isdir(args.submissions):
        print("class_page.py: --submissions %s is not a folder" % args.submissions, file=sys.stderr)
        return 64
    if not 1 <= args.threshold <= 100:
        print("class_page.py: --threshold must be 1 to 100", file=sys.stderr)
        return 64
    try:
        path, maker, listed = build(args.out, args.submissions, args.kit, args.threshold)
    except ClassError as e:
        print("class_page.py: %s" % e, file=sys.stderr)
        return 65
    print("class.html: %s" % path)
    if maker.missing:
        print("class.html: %s" % maker.missing)
    if args.submissions and not similarity.sim_path():
        print("class.html: %s" % similarity.INSTALL_SIM)
    elif listed:
        print("class.html: %d pair%s of similar submissions to look at" % (listed, "" if listed == 1 else "s"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
