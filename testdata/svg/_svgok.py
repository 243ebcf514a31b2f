# _svgok.py: reads one SVG document on stdin and says whether it is what
# the report layer promises (docs/report.md "The pictures"): well-formed
# XML whose root is an <svg> in the SVG namespace, self-contained (no
# <script>, no <foreignObject>, no href or xlink:href, no url(...) in any
# attribute, so nothing is fetched), with a <title>.  Prints one line,
# "svg ok: N elements, M texts", or what is wrong; exits 1 on the latter.
# Used by testdata/svg/*.aicm's RUN lines (stdlib only, /usr/bin/python3).
import sys
import xml.dom.minidom

NS = "http://www.w3.org/2000/svg"


def main():
    try:
        doc = xml.dom.minidom.parseString(sys.stdin.buffer.read())
    except Exception as e:  # expat's message says where
        print("svg bad: not well-formed XML: %s" % e)
        return 1
    root = doc.documentElement
    if root.tagName != "svg" or root.getAttribute("xmlns") != NS:
        print("svg bad: the root is <%s xmlns='%s'>, expected <svg xmlns='%s'>"
              % (root.tagName, root.getAttribute("xmlns"), NS))
        return 1
    n = texts = 0
    for el in root.getElementsByTagName("*"):
        n += 1
        if el.tagName in ("script", "foreignObject", "image", "use", "a"):
            print("svg bad: element <%s>" % el.tagName)
            return 1
        for k, v in el.attributes.items():
            if k.endswith("href") or "url(" in v or k.startswith("on"):
                print("svg bad: attribute %s='%s' on <%s>" % (k, v, el.tagName))
                return 1
        if el.tagName == "text":
            texts += 1
    if not root.getElementsByTagName("title"):
        print("svg bad: no <title>")
        return 1
    print("svg ok: %d elements, %d texts" % (n, texts))
    return 0


sys.exit(main())
