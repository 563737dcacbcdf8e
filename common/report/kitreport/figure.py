"""A figure and its SVG, drawn by gnuplot's svg terminal.

A Figure holds series of one of three kinds:

    xy        points (x, y), joined by lines: a curve against a swept quantity;
              a series with `rule` set is a straight line across the plot
              (Little's law's warps, the random kernel's time)
    bars      a value per category (x is the category's label), series side by side
    timeline  spans (row label, start, end) per kind of operation, as bars on a time axis

svg() writes a gnuplot script (the data inline, as data blocks), runs gnuplot
and returns the SVG as text, ready to be inlined in a page: no XML
declaration, ids made unique to the figure, every plot's <title> set to its
series' name (what a reader's pointer shows, and what the tests look for).
"""

import math
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

# Colours by role: the student's program, the kit's reference, the course's
# GPU, and lines drawn from a model (an ideal, Little's law).
ROLE_COLOURS = {
    "student": "#c0392b",
    "reference": "#1f5fa8",
    "course": "#7a7a7a",
    "model": "#2e8b3a",
}
ROLE_ORDER = {"student": 0, "reference": 1, "course": 2, "model": 3}
# Line styles for several quantities of one role (dash type, point type).
STYLES = [(1, 7), (2, 5), (4, 9), (5, 13), (3, 11)]
COURSE_POINTS = [9, 11, 13, 5]
# The operations of a timeline and their colours.
OPERATION_COLOURS = {
    "h2d": ("#2a7ab9", "copy in (host to device)"),
    "kernel": ("#e08a1e", "kernel"),
    "d2h": ("#3c9b4e", "copy out (device to host)"),
    "p2p": ("#8e44ad", "copy between GPUs"),
    "other": ("#999999", "other"),
}


class GnuplotMissing(Exception):
    """gnuplot is not installed; the message says what to install."""


class GnuplotFailed(Exception):
    """gnuplot ran and failed; the message holds what it said."""


class Series:
    """One line, one set of bars or one kind of timeline span.

    points: [(x, y)] for xy; [(category, y)] for bars;
            [(row, start, end)] for timeline.
    role:   student, reference, course or model (the colour).
    style:  0, 1, ...: which line style of the role (several quantities).
    rule:   'x' or 'y': a line at x = points[0][0] (or y = points[0][1])
            across the whole plot.
    """

    def __init__(self, title, points, role="reference", style=0, rule=None, operation=None):
        self.title = title
        self.points = list(points)
        self.role = role
        self.style = style
        self.rule = rule
        self.operation = operation


class Figure:
    """A figure: its kind, axes, series and caption.

    name:    short id, unique on its page (also the file name of a handout's SVG)
    title:   one line over the plot
    caption: text under it (page) or in it (a handout's SVG)
    """

    def __init__(self, name, title, kind="xy", xlabel="", ylabel="", logx=None, logy=None,
                 caption="", rows=None, width=760, height=440, categories=None, integer_y=False,
                 font_size=11, integer_x=False):
        self.name = name
        self.title = title
        self.kind = kind
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.logx = logx
        self.logy = logy
        self.caption = caption
        self.rows = rows or []  # timeline: the row labels, top to bottom
        self.series = []
        self.width = width
        self.height = height
        self.categories = categories or []  # bars: the categories' order (others follow as met)
        self.integer_y = integer_y  # counts: whole numbers on the y axis
        self.integer_x = integer_x  # counts (GPUs): whole numbers on the x axis
        self.font_size = font_size  # points (a small figure shown small wants larger type)
        self.xmax = None  # timeline: the end of the time axis (several timelines drawn to one scale)

    def add(self, series):
        """Adds series (if it has points), the student's first, then the
        reference's, the course's and the models'."""
        if series is not None and series.points:
            self.series.append(series)
            self.series.sort(key=lambda s: ROLE_ORDER.get(s.role, 9))
        return self

    def category_order(self):
        cats = [c for c in self.categories if any(p[0] == c for s in self.series for p in s.points)]
        for s in self.series:
            for c, _ in s.points:
                if c not in cats:
                    cats.append(c)
        return cats

    def has(self, role):
        return any(s.role == role for s in self.series)

    def empty(self):
        return not any(s.rule is None for s in self.series)


def gnuplot_path():
    return shutil.which(os.environ.get("KIT_GNUPLOT", "gnuplot"))


INSTALL_GNUPLOT = ("gnuplot is not installed: the figures need it "
                   "(Debian, Ubuntu: sudo apt-get install gnuplot-nox; Fedora: sudo dnf install gnuplot; "
                   "macOS: brew install gnuplot); the tables below hold the same numbers")


def quote(text):
    """A gnuplot string literal: single quotes, in which only '' is special."""
    return "'" + str(text).replace("'", "''").replace("\n", " ") + "'"


def number(v):
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "NaN"
    return repr(float(v))


def _block(name, lines):
    return "$%s << EOD\n%s\nEOD\n" % (name, "\n".join(lines))


def _range_of(values, log):
    values = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if not values:
        return None
    return min(values), max(values)


def script(fig, output):
    """The gnuplot script that draws fig into the file output."""
    lines = []
    lines.append("set terminal svg noenhanced size %d,%d font 'sans,%d' background '#ffffff'"
                 % (fig.width, fig.height, fig.font_size))
    lines.append("set output %s" % quote(output))
    lines.append("set encoding utf8")
    lines.append("set title %s" % quote(fig.title))
    lines.append("set grid")
    lines.append("set key below Left reverse noautotitle width 2 height 1")
    if fig.kind == "xy":
        lines += _xy(fig)
    elif fig.kind == "bars":
        lines += _bars(fig)
    elif fig.kind == "timeline":
        lines += _timeline(fig)
    else:
        raise ValueError("unknown figure kind %r" % fig.kind)
    return "\n".join(lines) + "\n"


def _axes(fig, lines):
    lines.append("set xlabel %s" % quote(fig.xlabel))
    lines.append("set ylabel %s" % quote(fig.ylabel))
    if fig.logx:
        lines.append("set logscale x %s" % fig.logx)
    if fig.logy:
        lines.append("set logscale y %s" % fig.logy)
    if fig.integer_x and not fig.logx:
        lines.append("set xtics 1")


def _style(series):
    colour = ROLE_COLOURS.get(series.role, "#000000")
    dash, point = STYLES[series.style % len(STYLES)]
    if series.role == "course":
        point = COURSE_POINTS[series.style % len(COURSE_POINTS)]
    return colour, dash, point


def _log_tics(lo, hi):
    """Tics at 1, 2, 5 times the powers of ten from lo to hi (gnuplot labels
    only the powers of ten, too few where the range is short)."""
    tics = []
    k = math.floor(math.log10(lo))
    while 10 ** k <= hi * 1.0001:
        for m in (1, 2, 5):
            v = m * 10 ** k
            if lo <= v <= hi:
                tics.append(v)
        k += 1
    if len(tics) > 9:
        tics = [t for t in tics if abs(math.log10(t) - round(math.log10(t))) < 1e-9]
    return tics


def _ytics(fig, lines, lo, hi):
    if fig.logy == 10 and lo > 0:
        tics = _log_tics(lo, hi)
        if tics:
            lines.append("set ytics (%s)" % ", ".join('"%g" %s' % (t, number(t)) for t in tics))
            lines.append("set mytics 10")


def _xy(fig):
    lines = []
    _axes(fig, lines)
    xs = _range_of([p[0] for s in fig.series if not s.rule for p in s.points], fig.logx)
    ys = _range_of([p[1] for s in fig.series if not s.rule for p in s.points], fig.logy)
    ys_all = _range_of([p[1] for s in fig.series for p in s.points if s.rule != "x"], fig.logy)
    xs_all = _range_of([p[0] for s in fig.series for p in s.points if s.rule != "y"], fig.logx)
    if xs_all:
        lo, hi = xs_all
        if fig.logx:
            lines.append("set xrange [%s:%s]" % (number(lo / 1.3), number(hi * 1.3)))
        else:
            pad = (hi - lo) * 0.04 or 1.0
            lines.append("set xrange [%s:%s]" % (number(lo - pad), number(hi + pad)))
    if ys_all:
        lo, hi = ys_all
        if fig.logy:
            lines.append("set yrange [%s:%s]" % (number(lo / 1.5), number(hi * 1.5)))
            _ytics(fig, lines, lo / 1.5, hi * 1.5)
        else:
            lines.append("set yrange [%s:%s]" % (number(min(0.0, lo)), number(hi * 1.08 if hi > 0 else 1.0)))
    # The reference's curves first, then the student's over them, then the
    # course's points and the models' lines, thin, over both.
    plots = []
    rank = {"reference": 0, "student": 1, "course": 2, "model": 3}
    fig.plot_order = sorted(range(len(fig.series)), key=lambda i: rank.get(fig.series[i].role, 4))
    both = {"reference", "student"} <= {s.role for s in fig.series}
    for i in fig.plot_order:
        s = fig.series[i]
        colour, dash, point = _style(s)
        if s.rule == "x":
            # A vertical line across the curves' y range.
            x = s.points[0][0]
            lo, hi = ys if ys else (1.0, 2.0)
            if fig.logy:
                lo, hi = lo / 1.5, hi * 1.5
            else:
                lo, hi = min(0.0, lo), hi * 1.08
            data = ["%s %s" % (number(x), number(lo)), "%s %s" % (number(x), number(hi))]
            with_ = "lines lw 2 dt 2 lc rgb '%s'" % colour
        elif s.rule == "y":
            y = s.points[0][1]
            lo, hi = xs if xs else (1.0, 2.0)
            if fig.logx:
                lo, hi = lo / 1.3, hi * 1.3
            else:
                pad = (hi - lo) * 0.04 or 1.0
                lo, hi = lo - pad, hi + pad
            data = ["%s %s" % (number(lo), number(y)), "%s %s" % (number(hi), number(y))]
            with_ = "lines lw 1.5 dt 3 lc rgb '%s'" % colour
        else:
            data = ["%s %s" % (number(x), number(y)) for x, y in sorted(s.points, key=lambda p: p[0])]
            if s.role == "course":
                with_ = "points pt %d ps 1.6 lc rgb '%s'" % (point, colour)
            elif s.role == "model":
                with_ = "linespoints lw 1.5 dt %d pt %d ps 0.6 lc rgb '%s'" % (dash, point, colour)
            elif both and s.role == "reference":
                # Wide, under the student's thin curve: where the two agree
                # (an honest program's do) the reference shows as its edge.
                with_ = "linespoints lw 5 dt %d pt %d ps 1.6 lc rgb '%s'" % (dash, point, colour)
            elif both and s.role == "student":
                with_ = "linespoints lw 1.5 dt %d pt %d ps 0.7 lc rgb '%s'" % (dash, point, colour)
            else:
                with_ = "linespoints lw 2 dt %d pt %d ps 0.9 lc rgb '%s'" % (dash, point, colour)
        lines.append(_block("s%d" % i, data).rstrip("\n"))
        plots.append("$s%d using 1:2 with %s title %s" % (i, with_, quote(s.title)))
    lines.append("plot " + ", \\\n     ".join(plots))
    return lines


def _bars(fig):
    lines = []
    _axes(fig, lines)
    cats = fig.category_order()
    n = max(1, len(fig.series))
    width = 0.8 / n
    lines.append("set boxwidth %s absolute" % number(width))
    lines.append("set style fill solid 0.85 border -1")
    lines.append("set grid noxtics ytics")
    longest = max([len(str(c)) for c in cats] or [0])
    rotate = " rotate by 30 right" if longest * len(cats) * 7 > fig.width * 0.75 else ""
    lines.append("set xtics (%s) scale 0%s" % (", ".join("%s %d" % (quote(c), i) for i, c in enumerate(cats)),
                                                rotate))
    lines.append("set xrange [-0.6:%s]" % number(len(cats) - 0.4))
    ys = _range_of([p[1] for s in fig.series for p in s.points], fig.logy)
    if ys:
        lo, hi = ys
        if fig.logy:
            bottom = 10 ** math.floor(math.log10(lo / 1.5))
            lines.append("set yrange [%s:%s]" % (number(bottom), number(hi * 2.0)))
            _ytics(fig, lines, bottom, hi * 2.0)
        else:
            lines.append("set yrange [0:%s]" % number(hi * 1.12 if hi > 0 else 1.0))
            if fig.integer_y:
                lines.append("set ytics %d" % max(1, math.ceil(hi / 8.0)))
    plots = []
    fig.plot_order = list(range(len(fig.series)))
    for k, s in enumerate(fig.series):
        colour, _, _ = _style(s)
        offset = (k - (n - 1) / 2.0) * width
        data = ["%s %s" % (number(cats.index(c) + offset), number(y)) for c, y in s.points]
        lines.append(_block("s%d" % k, data).rstrip("\n"))
        pattern = " fs pattern 4 border" if s.role == "course" else ""
        plots.append("$s%d using 1:2 with boxes lc rgb '%s'%s title %s" % (k, colour, pattern, quote(s.title)))
    lines.append("plot " + ", \\\n     ".join(plots))
    return lines


def _timeline(fig):
    lines = []
    rows = list(fig.rows)
    for s in fig.series:
        for r, _, _ in s.points:
            if r not in rows:
                rows.append(r)
    lines.append("set xlabel %s" % quote(fig.xlabel or "time (ms)"))
    lines.append("set ylabel %s" % quote(fig.ylabel))
    lines.append("set ytics (%s) scale 0" % ", ".join("%s %d" % (quote(r), i) for i, r in enumerate(rows)))
    lines.append("set yrange [%s:-0.7]" % number(len(rows) - 0.3))
    lines.append("set grid xtics noytics")
    lines.append("set style fill solid 0.9 border -1")
    end = fig.xmax or max([p[2] for s in fig.series for p in s.points] or [1.0])
    lines.append("set xrange [0:%s]" % number(end * 1.02))
    plots = []
    fig.plot_order = list(range(len(fig.series)))
    for k, s in enumerate(fig.series):
        colour = OPERATION_COLOURS.get(s.operation, OPERATION_COLOURS["other"])[0]
        data = ["%s %s %s" % (number(a), number(b), rows.index(r)) for r, a, b in s.points]
        lines.append(_block("s%d" % k, data).rstrip("\n"))
        plots.append("$s%d using (($1+$2)/2):3:(($2-$1)/2):(0.36) with boxxyerror lc rgb '%s' title %s"
                     % (k, colour, quote(s.title)))
    lines.append("plot " + ", \\\n     ".join(plots))
    return lines


def wrap(text, width):
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = (line + " " + w) if line else w
    if line:
        lines.append(line)
    return lines


def run_gnuplot(text, workdir):
    exe = gnuplot_path()
    if not exe:
        raise GnuplotMissing(INSTALL_GNUPLOT)
    path = os.path.join(workdir, "figure.gp")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    proc = subprocess.run([exe, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GnuplotFailed("gnuplot failed (status %d): %s" % (proc.returncode, " / ".join(said[-4:])))


def svg(fig, workdir, standalone_caption=None):
    """fig drawn by gnuplot: the SVG's text, ready to inline (or to save with
    standalone_caption written into the picture)."""
    out = os.path.join(workdir, "figure.svg")
    if os.path.exists(out):
        os.remove(out)
    run_gnuplot(script(fig, out), workdir)
    with open(out, encoding="utf-8") as f:
        text = f.read()
    return tidy(text, fig, standalone=standalone_caption is not None, caption=standalone_caption)


_PLOT_ID = re.compile(r"^gnuplot_plot_(\d+)[a-z]?$")


def tidy(text, fig, standalone=False, caption=None):
    """gnuplot's SVG with ids unique to fig, each plot's <title> its series'
    name, and a title and description for readers of assistive technology."""
    root = ET.fromstring(text)
    prefix = re.sub(r"[^A-Za-z0-9_-]", "-", fig.name) + "-"
    href = "{%s}href" % XLINK_NS
    ids = {}
    for el in root.iter():
        if "id" in el.attrib:
            old = el.attrib["id"]
            ids[old] = prefix + old
            el.attrib["id"] = prefix + old
    for el in root.iter():
        for attr in (href, "href"):
            v = el.attrib.get(attr)
            if v and v.startswith("#") and v[1:] in ids:
                el.attrib[attr] = "#" + ids[v[1:]]
        for attr in ("filter", "clip-path", "fill", "stroke", "mask"):
            v = el.attrib.get(attr)
            if v and v.startswith("url(#") and v[5:-1] in ids:
                el.attrib[attr] = "url(#%s)" % ids[v[5:-1]]
    # Each plot group: its title becomes its series' name.
    tag_g, tag_title, tag_desc = "{%s}g" % SVG_NS, "{%s}title" % SVG_NS, "{%s}desc" % SVG_NS
    for g in root.iter(tag_g):
        m = _PLOT_ID.match(g.attrib.get("id", "")[len(prefix):])
        if not m:
            continue
        k = int(m.group(1)) - 1
        t = g.find(tag_title)
        order = getattr(fig, "plot_order", None) or list(range(len(fig.series)))
        if t is not None and 0 <= k < len(order):
            series = fig.series[order[k]]
            t.text = series.title
            g.attrib["class"] = "series series-%s" % series.role
    for child in list(root):
        if child.tag in (tag_title, tag_desc):
            root.remove(child)
    title = ET.Element(tag_title)
    title.text = fig.title
    desc = ET.Element(tag_desc)
    desc.text = fig.caption or fig.title
    root.insert(0, desc)
    root.insert(0, title)
    if caption:
        # The caption under the plot, in the picture (a handout's figure travels alone).
        width, height = int(float(root.attrib["width"])), int(float(root.attrib["height"]))
        lines = wrap(caption, max(40, width // 6))
        extra = 16 * len(lines) + 12
        rect = ET.SubElement(root, "{%s}rect" % SVG_NS, {"x": "0", "y": str(height), "width": str(width),
                                                         "height": str(extra), "fill": "#ffffff"})
        rect.tail = "\n"
        for i, line in enumerate(lines):
            t = ET.SubElement(root, "{%s}text" % SVG_NS, {"x": "10", "y": str(height + 16 * (i + 1)),
                                                          "font-family": "sans-serif", "font-size": "11",
                                                          "fill": "#333333", "class": "caption"})
            t.text = line
            t.tail = "\n"
        root.attrib["height"] = str(height + extra)
        root.attrib["viewBox"] = "0 0 %d %d" % (width, height + extra)
    root.attrib["role"] = "img"
    root.attrib["class"] = "figure-svg"
    if not standalone:
        # Scales with the page; the viewBox keeps its proportions.
        root.attrib.pop("width", None)
        root.attrib.pop("height", None)
    body = ET.tostring(root, encoding="unicode")
    if standalone:
        return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"
    return body
