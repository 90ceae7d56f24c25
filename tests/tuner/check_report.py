#!/usr/bin/env python3
"""Reads a kc tune report (.svg or .html) as XML and prints what
tests/tuner/test_report.c checks, one fact a line, in document order:

  svg W H                    every <svg> element's width and height
  chart N                    every chart's dots (circles in its points group)
  best TEXT                  every best-label's text
  besttitle TEXT             the tooltip of every best dot
  default TEXT               every default-label's text
  fail STATUS COUNT          every item of a failures strip
  map NX NY CELLS BEST X Y   every heat map: its declared size, the cells
                             drawn, the best outlines, its axes
  cellkinds OK FAILED NONE   every heat map's cells by kind
  note TEXT                  every note ("nothing measured", ...)
  summary TEXT               every summary line

A file that is not well-formed XML exits 1 with the parser's message. The
HTML page is written to parse as XML too; each of its inline <svg>
elements is also cut out and parsed on its own, as a standalone SVG.
"""
import re
import sys
import xml.etree.ElementTree as ET


def local(tag):
    return tag.rsplit("}", 1)[-1]


def classes(el):
    return el.get("class", "").split()


def text(el):
    return " ".join("".join(el.itertext()).split())


def own_text(el):
    """The text of el without its <title> tooltip."""
    parts = [el.text or ""]
    for child in el:
        if local(child.tag) != "title":
            parts.append(text(child))
        parts.append(child.tail or "")
    return " ".join("".join(parts).split())


def title_of(el):
    for child in el:
        if local(child.tag) == "title":
            return text(child)
    return ""


def facts(root):
    out = []
    for el in root.iter():
        tag, cls = local(el.tag), classes(el)
        if tag == "svg":
            out.append("svg %s %s" % (el.get("width"), el.get("height")))
        elif tag == "g" and "points" in cls:
            out.append("chart %d" % sum(1 for c in el if local(c.tag) == "circle"))
        elif tag == "text" and "best-label" in cls:
            out.append("best " + text(el))
        elif tag == "text" and "default-label" in cls:
            out.append("default " + text(el))
        elif tag == "circle" and "best" in cls:
            out.append("besttitle " + title_of(el))
        elif tag == "g" and "fail" in cls:
            out.append("fail %s %s" % (el.get("data-status"), el.get("data-count")))
        elif tag == "g" and "heatmap" in cls:
            cells = [r for r in el.iter() if local(r.tag) == "rect" and "cell" in classes(r)]
            best = [r for r in el.iter() if "best-cell" in classes(r)]
            out.append("map %s %s %d %d %s %s" % (el.get("data-nx"), el.get("data-ny"), len(cells),
                                                 len(best), el.get("data-x"), el.get("data-y") or "-"))
            kinds = [sum(1 for r in cells if k in classes(r)) for k in ("ok", "failed", "none")]
            out.append("cellkinds %d %d %d" % tuple(kinds))
        elif "note" in cls:
            out.append("note " + own_text(el))
        elif "summary" in cls:
            out.append("summary " + text(el))
    return out


def main():
    path = sys.argv[1]
    data = open(path, "rb").read()
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        print("%s: not well-formed XML: %s" % (path, e))
        return 1
    if path.endswith((".html", ".htm")):
        for i, m in enumerate(re.finditer(rb"<svg\b.*?</svg>", data, re.S)):
            try:
                ET.fromstring(m.group(0))
            except ET.ParseError as e:
                print("%s: inline svg %d not well-formed: %s" % (path, i, e))
                return 1
    # bytes, so that the C locale cannot turn "µs" into an error
    sys.stdout.buffer.write("".join(line + "\n" for line in facts(root)).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
