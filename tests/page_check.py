#!/usr/bin/env python3
"""page_check.py PAGE...: checks the kit's pages, for tests/95-report.bats.

For each page: it parses as HTML (html.parser) with every element closed in
order; it is self-contained (no <script>, no <link>, <iframe>, <object> or
<embed>, no src or href that leaves the page's folder, no url() but to an
id of the page, no @import or @font-face); every inline <svg> parses as XML
and draws something. Prints, for each figure, one line

    figure NAME: SERIES | SERIES | ...

(NAME: the <figure>'s id; SERIES: the titles of its plots, as the reader's
pointer shows them), and for each page `page PATH: N figures`. Exit status
1, with the reasons on stderr, if a page fails a check.
"""

import html.parser
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Inside inline SVG, html.parser sees these as ordinary elements that close themselves (<path .../>).
FORBIDDEN = {"script", "link", "iframe", "object", "embed", "base", "frame", "frameset", "applet"}
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def external(value):
    v = value.strip().lower()
    return bool(re.match(r"^([a-z][a-z0-9+.-]*:|//)", v)) or v.startswith("/") or v.startswith("..")


class Checker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.problems = []
        self.figures = []  # ids of <figure>
        self.doctype = False

    def handle_decl(self, decl):
        if decl.lower().startswith("doctype html"):
            self.doctype = True

    def handle_starttag(self, tag, attrs):
        self._attrs(tag, attrs)
        if tag == "figure":
            self.figures.append(dict(attrs).get("id", ""))
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self._attrs(tag, attrs)

    def _attrs(self, tag, attrs):
        if tag in FORBIDDEN:
            self.problems.append("line %d: <%s> (a page of the kit loads nothing)" % (self.getpos()[0], tag))
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.problems.append("line %d: an event handler (%s)" % (self.getpos()[0], name))
            if name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data") and external(value):
                self.problems.append("line %d: %s=\"%s\" leaves the page" % (self.getpos()[0], name, value))
            if name.startswith("xmlns") and value not in NAMESPACES:
                self.problems.append("line %d: an unknown namespace %s" % (self.getpos()[0], value))
            if "url(" in value and not re.fullmatch(r".*url\(#[^)]*\).*", value):
                self.problems.append("line %d: %s holds a url() to elsewhere" % (self.getpos()[0], name))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack:
            self.problems.append("line %d: </%s> closes nothing" % (self.getpos()[0], tag))
            return
        open_tag, pos = self.stack.pop()
        if open_tag != tag:
            self.problems.append("line %d: </%s> closes <%s> of line %d" % (self.getpos()[0], tag, open_tag, pos[0]))

    def handle_data(self, data):
        if self.stack and self.stack[-1][0] == "style":
            if re.search(r"@import|@font-face|url\((?!#)", data):
                self.problems.append("a style that loads from elsewhere")


def check_svg(text, where):
    """The series titles of one inline SVG; problems appended to where."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        where.append("an SVG that is not XML: %s" % e)
        return None
    if root.tag != SVG + "svg":
        where.append("an <svg> outside the SVG namespace")
        return None
    drawn = sum(1 for el in root.iter() if el.tag in (SVG + "path", SVG + "rect", SVG + "use", SVG + "circle")
                and (el.attrib.get("d", "x") or "").strip())
    if drawn < 5:
        where.append("an SVG that draws (next to) nothing")
    series = []
    for g in root.iter(SVG + "g"):
        if re.search(r"gnuplot_plot_\d+$", g.attrib.get("id", "")):
            t = g.find(SVG + "title")
            series.append(t.text if t is not None and t.text else "?")
            marks = [el for el in g.iter() if el.tag in (SVG + "path", SVG + "use", SVG + "rect")]
            if not marks:
                where.append("series '%s' draws nothing" % series[-1])
    return series


def check(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    c = Checker()
    c.feed(text)
    c.close()
    problems = list(c.problems)
    if not c.doctype:
        problems.append("no <!DOCTYPE html>")
    for tag, pos in c.stack:
        problems.append("<%s> of line %d is never closed" % (tag, pos[0]))
    if not re.search(r'<meta charset="utf-8">', text, re.I):
        problems.append("no <meta charset=\"utf-8\">")
    lines = []
    figures = re.findall(r'<figure id="([^"]*)">(.*?)</figure>', text, re.S)
    for name, body in figures:
        svgs = re.findall(r"<svg\b.*?</svg>", body, re.S)
        for svg in svgs:
            series = check_svg(svg, problems)
            if series is not None:
                lines.append("figure %s: %s" % (name, " | ".join(series)))
        if not svgs:
            lines.append("figure %s: (a table, no picture)" % name)
    ids = re.findall(r'\bid="([^"]+)"', text)
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        problems.append("ids used twice: %s" % ", ".join(dup[:5]))
    return lines, problems, len(figures)


def main(argv):
    bad = 0
    for path in argv:
        lines, problems, n = check(path)
        for line in lines:
            print(line)
        print("page %s: %d figures" % (path, n))
        for p in problems:
            print("%s: %s" % (path, p), file=sys.stderr)
        bad += bool(problems)
    return 1 if bad or not argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
