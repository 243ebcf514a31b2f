"""report_check.py: the structure of an aicm HTML report, checked.

    /usr/bin/python3 tests/report_check.py PAGE [--kernels N] [--stages N]
        [--run | --no-run] [--no-graph] [--unlowered] [--untuned]

PAGE is the file --report=html wrote, or the DOM that headless Chromium
dumped of it (tests/browser.sh): both are parsed the same way, by the
standard library's html.parser, so that what is checked is what a reader's
browser builds, not a pattern in the text.  The page is large and holds
Graphviz's drawing, whose text changes with the Graphviz version, so it is
checked by structure rather than against a golden file:

- it is self-contained: no "http://", "https://", "@import" or "url(" in
  it, no <script>, <link>, <iframe>, <object> or <embed> element, and no
  src= or href= but "#anchor" links;
- the sections are there, each with its id (top, toc, ir, graph, kernels,
  run, reports), every "#anchor" link names an id of the page, and the
  contents list each kernel;
- the IR panels (one per stage; exactly N with --stages N), each a <pre>;
- exactly N kernels (--kernels N), each an <article class="kernel"> with
  autotune's heat map and table and its tile grid, each picture an inline
  <svg> with at least a few elements in it (--untuned, --unlowered: those
  kernels say why there is no picture instead);
- the graph drawn by dot as an inline <svg> (--no-graph: the note that
  says dot was missing);
- with --run: the KernelStats table (a row per kernel and the total), the
  traffic bars and the roofline; with --no-run: the note saying how to get
  run data.

Prints one "report_check: PAGE: ok: ..." line, or each failure and exits 1.
"""
import argparse
import html.parser
import sys

SECTIONS = ["top", "toc", "ir", "graph", "kernels", "run", "reports"]
FORBIDDEN_TEXT = ["http://", "https://", "@import", "url("]
FORBIDDEN_TAGS = {"script", "link", "iframe", "object", "embed", "base"}
VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Elem:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.kids = []

    def cls(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for k in self.kids:
            yield from k.walk()

    def find(self, tag=None, cls=None):
        return [e for e in self.walk() if (tag is None or e.tag == tag) and
                (cls is None or cls in e.cls())]


class Tree(html.parser.HTMLParser):
    """A small DOM: elements with their attributes and children."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Elem("#root", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        e = Elem(tag, attrs, self.cur)
        self.cur.kids.append(e)
        if tag not in VOID:
            self.cur = e

    def handle_startendtag(self, tag, attrs):
        self.cur.kids.append(Elem(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        e = self.cur
        while e is not self.root and e.tag != tag:
            e = e.parent
        if e is not self.root:
            self.cur = e.parent


def svg_ok(fig):
    """An inline <svg> in fig holding at least a few drawn elements."""
    svgs = fig.find("svg")
    return bool(svgs) and sum(1 for _ in svgs[0].walk()) >= 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--kernels", type=int)
    ap.add_argument("--stages", type=int)
    ap.add_argument("--run", dest="run", action="store_true", default=None)
    ap.add_argument("--no-run", dest="run", action="store_false")
    ap.add_argument("--no-graph", action="store_true")
    ap.add_argument("--unlowered", action="store_true")
    ap.add_argument("--untuned", action="store_true")
    a = ap.parse_args()

    text = open(a.page, encoding="utf-8").read()
    bad = []
    for s in FORBIDDEN_TEXT:
        if s in text:
            i = text.index(s)
            bad.append("holds %r (at %r)" % (s, text[max(0, i - 40):i + 40]))
    t = Tree()
    t.feed(text)
    t.close()
    root = t.root
    ids = {}
    for e in root.walk():
        if e.tag in FORBIDDEN_TAGS:
            bad.append("has a <%s> element %s" % (e.tag, e.attrs))
        if "id" in e.attrs:
            if e.attrs["id"] in ids:
                bad.append("id %r twice" % e.attrs["id"])
            ids[e.attrs["id"]] = e
        for at in ("src", "href", "xlink:href", "srcset", "action", "data"):
            v = e.attrs.get(at)
            if v is not None and not v.startswith("#"):
                bad.append("<%s %s=%r> refers outside the page" % (e.tag, at, v))
    for e in root.find("a"):
        h = e.attrs.get("href") or ""
        if h.startswith("#") and h[1:] not in ids:
            bad.append("link %r names no id" % h)
    for s in SECTIONS:
        if s not in ids:
            bad.append("no section with id %r" % s)

    stages = root.find("div", "stage")
    if not stages:
        bad.append("no IR panel")
    for st in stages:
        if not st.find("pre"):
            bad.append("IR panel %r has no <pre>" % st.attrs.get("id"))
    if a.stages is not None and len(stages) != a.stages:
        bad.append("%d IR panels, expected %d" % (len(stages), a.stages))

    kernels = root.find("article", "kernel")
    if a.kernels is not None and len(kernels) != a.kernels:
        bad.append("%d kernels, expected %d" % (len(kernels), a.kernels))
    toc = ids.get("toc")
    toc_links = {e.attrs.get("href") for e in toc.find("a")} if toc else set()
    for k in kernels:
        kid = k.attrs.get("id", "")
        name = kid[len("kernel-"):]
        if "#" + kid not in toc_links:
            bad.append("kernel %r is not in the contents" % name)
        figs = {f.attrs.get("id", "").split("-", 1)[0]: f for f in k.find("figure")}
        want = []
        if not a.untuned:
            want.append("heatmap")
            if not k.find("table", "tune"):
                bad.append("kernel %r has no autotune table" % name)
        if not a.unlowered:
            want.append("tilegrid")
        for w in want:
            if w not in figs:
                bad.append("kernel %r has no %s figure" % (name, w))
            elif not svg_ok(figs[w]):
                bad.append("kernel %r: the %s figure holds no drawn <svg>" % (name, w))
        if a.untuned and "heatmap" in figs:
            bad.append("kernel %r has a heat map but --untuned" % name)

    if a.no_graph:
        if "graph-missing" not in ids:
            bad.append("no note saying why the graph is not drawn")
    elif "graph-svg" not in ids or not svg_ok(ids["graph-svg"]):
        bad.append("the graph is not drawn (no <svg> in #graph-svg)")

    if a.run:
        if "stats" not in ids:
            bad.append("no KernelStats table")
        else:
            rows = ids["stats"].find("tr")
            n = len(rows) - 1
            if a.kernels is not None and n != a.kernels + 1:
                bad.append("the KernelStats table has %d rows, expected %d kernels and "
                           "the total" % (n, a.kernels))
        for w in ("traffic", "roofline"):
            if w not in ids or not svg_ok(ids[w]):
                bad.append("no %s picture" % w)
    elif a.run is False and "run-missing" not in ids:
        bad.append("no note saying how to get run data")

    if bad:
        for b in bad[:12]:
            print("report_check: %s: %s" % (a.page, b))
        if len(bad) > 12:
            print("report_check: %s: and %d more" % (a.page, len(bad) - 12))
        return 1
    print("report_check: %s: ok: %d sections, %d IR panels, %d kernels%s%s" % (
        a.page.rsplit("/", 1)[-1], len(SECTIONS), len(stages), len(kernels),
        ", graph drawn" if not a.no_graph else ", graph not drawn",
        ", run data" if a.run else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
