#!/usr/bin/env python3
"""report_page.py RUN [--out FILE] [--kit DIR]: the page of `make report`.

RUN is the folder common/report/report.sh fills: for each lab, the runs of
the student's program and of the reference on the same inputs,

    RUN/run.txt                 date, seed, options (key: value lines)
    RUN/gpu.txt                 what kit-query said of the GPU
    RUN/NN-name/SIDE/           SIDE: student or reference
        build.status, build.log     the build's exit status and messages
        command                     the command line that ran it
        status, output.txt          its exit status, what it printed
        table.csv, timeline.csv     what it wrote with --csv, --timeline

and the page, RUN/report.html by default, shows per lab the figures its
handout discusses: the student's curve beside the reference's, the course's
Tesla K40 figure where the course has one. Where the student's file does
not build, or its program FAILs, the section says so and shows the
reference alone.

Exit status: 0 the page is written; 64 bad command line; 65 the page is
written but a reference's table could not be read (said on stderr).
Needs python3 (3.6 or newer); gnuplot for the figures (without it, the
page says what to install and holds the tables).
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kitreport import labs as labmod  # noqa: E402
from kitreport import page, tables  # noqa: E402
from kitreport.page import esc  # noqa: E402

KIT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def read_text(path, limit=200000):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return None


def read_int(path):
    text = read_text(path)
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


class Side:
    """One program of a lab, as report.sh left it."""

    def __init__(self, lab, folder, role):
        self.lab, self.folder, self.role = lab, folder, role
        self.word = "NONE"  # PASS, FAIL, or NONE (nothing to say)
        self.said = ""      # one line: what happened
        self.detail = []    # lines to show (compiler errors, the program's reasons)
        self.run = None     # labs.Run, when there is something to draw
        self.table_problem = None
        self.command = (read_text(os.path.join(folder, "command")) or "").strip()
        self.kv = tables.read_kv(os.path.join(folder, "output.txt"))
        self._judge()

    def _judge(self):
        f = self.folder
        who = "your program" if self.role == labmod.STUDENT else "the reference"
        built = read_int(os.path.join(f, "build.status"))
        if not os.path.isdir(f):
            self.said = "%s was not run" % who
            return
        if built is not None and built != 0:
            self.word = "FAIL"
            self.said = ("your file does not build" if self.role == labmod.STUDENT else "the reference does not build")
            log = read_text(os.path.join(f, "build.log")) or ""
            errs = [ln for ln in log.splitlines() if "error" in ln.lower()]
            self.detail = (errs or log.splitlines())[:12]
            return
        status = read_int(os.path.join(f, "status"))
        output = read_text(os.path.join(f, "output.txt")) or ""
        result = self.kv.get("result")
        if status is None:
            self.said = "%s was not run" % who
            return
        if status == 0 and result == "PASS":
            self.word, self.said = "PASS", "%s passed its checks" % who
        elif status == 1 or result == "FAIL":
            self.word = "FAIL"
            self.said = "%s FAILs its checks" % who
            # The lines that point at a TODO first, then the rest that say
            # what is wrong (the table's WRONG rows, the verdict).
            lines = output.splitlines()
            todo = [ln for ln in lines if "TODO(" in ln]
            other = [ln for ln in lines if "TODO(" not in ln and
                     ("WRONG" in ln or "FAIL" in ln or "wrong" in ln)]
            self.detail = (todo + other)[:12]
        elif status == 2:
            self.word = "FAIL"
            self.said = "%s cannot run here" % who
            self.detail = [ln for ln in output.splitlines() if "cannot run here" in ln][:3]
        elif status == 64:
            self.word = "FAIL"
            self.said = "%s refused its command line" % who
            self.detail = output.splitlines()[:4]
        elif status == 124:
            self.word = "FAIL"
            self.said = "%s did not finish in time (KIT_REPORT_TIMEOUT)" % who
        elif status > 128:
            self.word = "FAIL"
            self.said = "%s crashed (signal %d)" % (who, status - 128)
            self.detail = output.splitlines()[-6:]
        else:
            self.word = "FAIL"
            self.said = "%s ended with exit status %d and no verdict" % (who, status)
            self.detail = output.splitlines()[-6:]
        if self.word == "PASS" or self.role == labmod.REFERENCE:
            self._read_tables()

    def _read_tables(self):
        try:
            rows = tables.read_lab(self.lab, os.path.join(self.folder, "table.csv"))
            timeline = []
            tl = os.path.join(self.folder, "timeline.csv")
            if os.path.exists(tl):
                timeline = tables.read_timeline(tl, self.lab)
            self.run = labmod.Run(self.role, rows, timeline, self.kv)
        except tables.TableError as e:
            self.table_problem = str(e)


def facts_line(run_facts, ref, lab):
    """GPU, size, seed and date, for a caption."""
    row = ref.run.rows[0] if ref.run and ref.run.rows else {}
    kv = ref.kv
    parts = ["GPU: %s" % (row.get("gpu") or kv.get("device") or run_facts.get("device") or "?")]
    if kv.get("size"):
        parts.append("size %s" % page.grouped(kv["size"]))
    for key in ("matrix", "matrix-side"):
        if kv.get(key):
            parts.append("matrix %s x %s" % (page.grouped(kv[key]), page.grouped(kv[key])))
    if len(parts) == 1 and row.get("size"):
        parts.append("size %s" % page.grouped(row["size"]))
    seed = kv.get("seed") or (str(int(row["seed"])) if row.get("seed") is not None else run_facts.get("seed"))
    if seed:
        parts.append("seed %s" % seed)
    if run_facts.get("date"):
        parts.append(run_facts["date"])
    return "; ".join(parts)


def section(kit, lab, run_dir, run_facts, maker):
    student = Side(lab, os.path.join(run_dir, lab, "student"), labmod.STUDENT)
    ref = Side(lab, os.path.join(run_dir, lab, "reference"), labmod.REFERENCE)
    title = page.lab_title(kit, lab)
    out = ['<section id="lab-%s">' % esc(lab), "<h2>%s</h2>" % esc(title)]
    out.append("<p>Your program: %s %s. Reference: %s %s.</p>"
               % (page.verdict(student.word if student.word != "NONE" else "not run"), esc(student.said),
                  page.verdict(ref.word if ref.word != "NONE" else "not run"), esc(ref.said)))
    problems = []
    if student.word != "PASS":
        out.append('<div class="problem"><p>%s: the figures show the reference alone.%s</p>%s</div>'
                   % (esc(student.said[0].upper() + student.said[1:]),
                      " Fix it and run <code>make report LAB=%s</code> again; <code>make run LAB=%s</code> "
                      "shows the whole output." % (esc(lab[:2]), esc(lab[:2])) if student.word == "FAIL" else "",
                      "<pre>%s</pre>" % esc("\n".join(student.detail)) if student.detail else ""))
    elif student.table_problem:
        out.append('<div class="problem"><p>Your program passed, but its table could not be read, so the figures '
                   'show the reference alone: %s</p></div>' % esc(student.table_problem))
    if ref.word != "PASS" and ref.said:
        out.append('<div class="problem"><p>%s.</p>%s</div>'
                   % (esc(ref.said[0].upper() + ref.said[1:]),
                      "<pre>%s</pre>" % esc("\n".join(ref.detail)) if ref.detail else ""))
    if ref.table_problem:
        problems.append("%s: the reference's table: %s" % (lab, ref.table_problem))
        out.append('<div class="problem"><p>The reference\'s table could not be read: %s</p></div>'
                   % esc(ref.table_problem))
    runs = []
    if ref.run:
        runs.append(ref.run)
    if student.run and student.word == "PASS":
        runs.append(student.run)
    if runs and runs[0].role == labmod.REFERENCE:
        facts = facts_line(run_facts, ref, lab)
        verdicts = "Your program: %s; reference: %s." % (
            student.word if student.word != "NONE" else "not run", ref.word if ref.word != "NONE" else "not run")
        for fig in labmod.figures(lab, runs):
            course = " The course's Tesla K40 figure is from its notes (000), measured with nvprof, at the size " \
                     "its legend gives." if fig.has("course") else ""
            caption = "<strong>%s.</strong> %s %s. %s%s" % (esc(fig.title), esc(fig.caption), esc(facts),
                                                            esc(verdicts), esc(course))
            out.append(maker.html(fig, caption))
    elif not ref.run and not ref.table_problem:
        out.append('<p class="note">Nothing to draw: the reference wrote no table.</p>')
    cmds = [(s.role, s.command) for s in (student, ref) if s.command]
    if cmds:
        out.append("<details><summary>the commands</summary><pre>%s</pre></details>"
                   % esc("\n".join("%s: %s" % c for c in cmds)))
    out.append("</section>")
    return "\n".join(out), student, ref, problems


def build(run_dir, out_path, kit):
    run_facts = tables.read_kv(os.path.join(run_dir, "run.txt"))
    gpu = tables.read_kv(os.path.join(run_dir, "gpu.txt"))
    run_facts.setdefault("device", gpu.get("device", ""))
    labs = [d for d in sorted(os.listdir(run_dir)) if os.path.isdir(os.path.join(run_dir, d)) and labmod.lab_module(d)]
    if not labs:
        raise SystemExit("report_page.py: %s holds no lab's runs (make report writes them)" % run_dir)
    maker = page.FigureMaker()
    sections, summary, problems = [], [], []
    try:
        for lab in labs:
            html_text, student, ref, probs = section(kit, lab, run_dir, run_facts, maker)
            sections.append(html_text)
            problems += probs
            summary.append([page.Markup('<a href="#lab-%s">%s</a>' % (esc(lab), esc(page.lab_title(kit, lab)))),
                            page.Markup("%s %s" % (page.verdict(student.word if student.word != "NONE" else "–"),
                                                   esc(student.said))),
                            page.Markup(page.verdict(ref.word if ref.word != "NONE" else "–"))])
    finally:
        maker.close()
    head = ["<h1>Your labs beside the kit's reference</h1>"]
    facts = []
    if run_facts.get("device") or gpu.get("device"):
        cc = gpu.get("compute-capability")
        facts.append("GPU: %s%s" % (gpu.get("device") or run_facts.get("device"),
                                    " (compute capability %s, %s SMs)" % (cc, gpu.get("sms", "?")) if cc else ""))
    for key, name in (("date", "date"), ("seed", "seed"), ("args", "options")):
        if run_facts.get(key):
            facts.append("%s: %s" % (name, run_facts[key]))
    head.append('<p class="lead">%s. Each lab ran your program and the reference one after the other, with the same '
                'seed and size. The verdicts are the programs\' own checks; <code>make check</code> grades as your '
                'instructor will.</p>' % esc("; ".join(facts)))
    if maker.missing:
        head.append('<p class="note">%s.</p>' % esc(maker.missing[0].upper() + maker.missing[1:]))
    head.append(page.table(["lab", "your program", "reference"], summary))
    page.write(out_path, page.document("Lab report: your programs beside the reference",
                                       "\n".join(head + sections)))
    return problems, maker


def main(argv):
    ap = argparse.ArgumentParser(prog="report_page.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="the folder make report filled")
    ap.add_argument("--out", help="the page (default: RUN/report.html)")
    ap.add_argument("--kit", default=KIT, help="the kit's folder (for the handouts' titles)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 64 if e.code else 0
    if not os.path.isdir(args.run):
        print("report_page.py: %s is not a folder" % args.run, file=sys.stderr)
        return 64
    out = args.out or os.path.join(args.run, "report.html")
    problems, maker = build(args.run, out, args.kit)
    print("report: %s" % out)
    if maker.missing:
        print("report: %s" % maker.missing)
    for p in maker.failures:
        print("report: %s" % p, file=sys.stderr)
    for p in problems:
        print("report: %s" % p, file=sys.stderr)
    return 65 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
