"""HTML for the kit's pages: one file each, self-contained.

No scripts, no fonts or style sheets from elsewhere, no links out of the
page but relative ones to files beside it (a student's report.txt): a page
opens the same from a laptop, a cluster's file system or an LMS.
"""

import html
import os
import tempfile

from . import figure as figmod

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
       margin: 0 auto; max-width: 1040px; padding: 1.2em 1.5em 4em; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2.2em; padding-top: 0.6em; border-top: 2px solid #d8dde3; }
h3 { font-size: 1.05em; margin-top: 1.6em; }
p.lead { color: #444; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.92em; }
th, td { border: 1px solid #d0d5db; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f1f3f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.2em 0 1.6em; }
figure svg.figure-svg { width: 100%; max-width: 900px; height: auto; display: block;
                        border: 1px solid #e2e5e9; }
figcaption { font-size: 0.9em; color: #333; max-width: 900px; margin-top: 0.4em; }
.verdict { font-weight: 600; padding: 0.05em 0.45em; border-radius: 0.3em; white-space: nowrap; }
.PASS { background: #dff3e3; color: #14532d; }
.FAIL { background: #fbe0df; color: #7f1d1d; }
.SKIP, .NONE { background: #eceff3; color: #374151; }
.note { background: #fff8e1; border-left: 4px solid #e0a800; padding: 0.5em 0.8em; margin: 0.8em 0; }
.problem { background: #fdecea; border-left: 4px solid #c0392b; padding: 0.5em 0.8em; margin: 0.8em 0; }
pre { background: #f6f8fa; padding: 0.6em 0.8em; overflow-x: auto; font-size: 0.85em; max-width: 100%; }
code { font-size: 0.92em; }
details { margin: 0.4em 0 1em; }
summary { cursor: pointer; color: #1f5fa8; }
nav ul { columns: 3; padding-left: 1.2em; }
.pair { display: flex; flex-wrap: wrap; gap: 0 1.5em; }
.pair figure { flex: 1 1 420px; min-width: 0; margin-top: 0.6em; }
"""


def esc(text):
    return html.escape("" if text is None else str(text), quote=True)


def verdict(word):
    word = (word or "NONE").upper()
    cls = word if word in ("PASS", "FAIL", "SKIP") else "NONE"
    return '<span class="verdict %s">%s</span>' % (cls, esc(word))


def table(headers, rows, numeric=()):
    """An HTML table; rows hold text (escaped here) or Markup."""
    out = ["<table>", "<thead><tr>%s</tr></thead>" % "".join("<th>%s</th>" % esc(h) for h in headers), "<tbody>"]
    for row in rows:
        cells = []
        for i, v in enumerate(row):
            cls = ' class="num"' if i in numeric else ""
            cells.append("<td%s>%s</td>" % (cls, v.html if isinstance(v, Markup) else esc(fmt(v))))
        out.append("<tr>%s</tr>" % "".join(cells))
    out.append("</tbody></table>")
    return "\n".join(out)


class Markup:
    """HTML already made safe."""

    def __init__(self, html_text):
        self.html = html_text


def fmt(v):
    """A number as a table shows it: four significant digits, thousands grouped."""
    if isinstance(v, float):
        if v != v:
            return "–"
        if abs(v) >= 1000:
            return "{:,.0f}".format(v)
        return "%.4g" % v
    if isinstance(v, int) and not isinstance(v, bool):
        return "{:,}".format(v)
    return "" if v is None else str(v)


def lab_title(kit, lab):
    """The handout's title, e.g. 'Lab 01: coalesced access to global memory'."""
    try:
        with open(os.path.join(kit, "handouts", lab + ".md"), encoding="utf-8") as f:
            first = f.readline()
    except OSError:
        first = ""
    return first.lstrip("# ").strip() or "Lab %s" % lab


def grouped(n):
    try:
        return "{:,}".format(int(n))
    except (TypeError, ValueError):
        return str(n)


def figure_data_table(fig):
    """The numbers of a figure, as a table (what a page shows where gnuplot is not)."""
    if fig.kind == "timeline":
        rows = []
        for s in fig.series:
            for r, a, b in sorted(s.points, key=lambda p: p[1]):
                rows.append([r, s.title, a, b, b - a])
        return table(["row", "operation", "start (ms)", "end (ms)", "length (ms)"], rows, numeric=(2, 3, 4))
    if fig.kind == "bars":
        cats = fig.category_order()
        rows = []
        for c in cats:
            row = [c]
            for s in fig.series:
                vals = [y for k, y in s.points if k == c]
                row.append(vals[0] if vals else "")
            rows.append(row)
        return table([""] + [s.title for s in fig.series], rows, numeric=tuple(range(1, len(fig.series) + 1)))
    rows = []
    for s in fig.series:
        if s.rule == "x":
            rows.append([s.title, s.points[0][0], ""])
        elif s.rule == "y":
            rows.append([s.title, "", s.points[0][1]])
        else:
            for x, y in sorted(s.points, key=lambda p: p[0]):
                rows.append([s.title, x, y])
    return table(["series", fig.xlabel, fig.ylabel], rows, numeric=(1, 2))


class FigureMaker:
    """Draws figures for one page; remembers why it could not (once)."""

    def __init__(self, draw=True):
        self.draw = draw and figmod.gnuplot_path() is not None
        self.missing = None if self.draw else figmod.INSTALL_GNUPLOT
        self.failures = []
        self.count = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="kit-figure.")

    def close(self):
        self._tmp.cleanup()

    def html(self, fig, caption_html):
        """A <figure>: the SVG (or, without gnuplot, the table), its caption,
        and its numbers in a table under it."""
        self.count += 1
        parts = ['<figure id="%s">' % esc(fig.name)]
        drawn = False
        if self.draw and not fig.empty():
            try:
                parts.append(figmod.svg(fig, self._tmp.name))
                drawn = True
            except figmod.GnuplotFailed as e:
                self.failures.append("%s: %s" % (fig.name, e))
                parts.append('<p class="problem">This figure could not be drawn: %s</p>' % esc(e))
        parts.append("<figcaption>%s</figcaption>" % caption_html)
        if drawn:
            parts.append("<details><summary>the numbers</summary>%s</details>" % figure_data_table(fig))
        else:
            parts.append(figure_data_table(fig))
        parts.append("</figure>")
        return "\n".join(parts)


def document(title, body):
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n%s\n</body>\n</html>\n"
            % (esc(title), STYLE, body))


def write(path, text):
    """Writes path through a temporary file beside it: a reader never sees half a page."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".page.", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
