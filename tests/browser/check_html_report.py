#!/usr/bin/env python3
"""check_html_report.py: report.html (faultline visualize) in headless Chromium (cdp.py), driven with
real mouse events:
  1. the page loads with no script exception and no console error; the tables, the flame graph and
     the heatmap render (rows, frames with a size, painted pixels); hovering the heatmap names the
     cell under the pointer; the page says how many counter series it draws of how many, and
     ticking one more draws it; the axis labels fit the canvas; wheel zoom stops at one column
     (labels still distinct, no cell drawn past the plot) and at the whole axis;
  2. a click on the top row of the callsite table selects it: the flame graph marks the frames of
     its stacks (its function among them) and no frame of the other phase's function; the heatmap
     grays the other cells;
  3. a drag on the heatmap over RECT (addresses LO..HI, times T0..T1 in ns on the page's axis)
     leaves only callsites whose function is EXPECT in the table, and no frame of OTHER in the
     flame graph;
  4. a click on the top allocation site lists its objects with their lifetimes.
Screenshots of each step go to the directory --screenshots.
With --empty (the page of an empty selection): the page loads with no script exception and no
console error, shows its message under the header, and hides the heatmap, the tables and the
flame graph.

usage: check_html_report.py PAGE --rect LO HI T0 T1 --expect FUNC --other FUNC --screenshots DIR
       check_html_report.py PAGE --empty --screenshots DIR
Exit 0 pass, 1 fail, 77 (first line "SKIP reason") when no browser can be started."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

failures = []


def check(ok, what):
    print(("ok " if ok else "FAIL: ") + what, file=sys.stdout if ok else sys.stderr)
    if not ok:
        failures.append(what)


def center_of(b, selector):
    """Scrolls the first element matching SELECTOR into view; its center in viewport pixels."""
    return b.eval("(function (s) { var e = document.querySelector(s); if (!e) return null;"
                  " e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
                  " return [r.left + r.width / 2, r.top + r.height / 2]; })(%s)" % json.dumps(selector))


def table_names(b):
    return b.eval("[...document.querySelectorAll('#tablewrap tbody td.name')].map(function (t) {"
                  " return t.textContent; })")


def flame_frames(b, selected_only):
    sel = "#flamesvg g.sel title" if selected_only else "#flamesvg g title"
    return b.eval("[...document.querySelectorAll(%s)].map(function (t) {"
                  " return t.textContent.replace(/ \\([0-9,]+ faults.*$/, ''); })" % json.dumps(sel))


def heatmap_pixels(b):
    """Painted pixels of the heatmap canvas: [all, gray] (gray: cells outside a selection; text,
    black, is not counted)."""
    return b.eval("(function () { var c = document.getElementById('heatmap'), d = c.getContext('2d')"
                  ".getImageData(0, 0, c.width, c.height).data, all = 0, gray = 0;"
                  " for (var i = 0; i < d.length; i += 4) { if (d[i + 3] === 0) continue; all++;"
                  "   if (d[i] > 60 && Math.abs(d[i] - d[i + 1]) < 8 && Math.abs(d[i + 1] - d[i + 2]) < 8) gray++; }"
                  " return [all, gray]; })()")


def drag(b, x0, y0, x1, y1):
    b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0, "y": y0})
    b.call("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x0, "y": y0, "button": "left", "clickCount": 1})
    for i in range(1, 5):
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0 + (x1 - x0) * i / 4,
                                            "y": y0 + (y1 - y0) * i / 4, "button": "left", "buttons": 1})
    b.call("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x1, "y": y1, "button": "left", "clickCount": 1})


def check_empty(b):
    """The page of an empty selection: its message, shown under the header, and no empty view."""
    shown = b.eval("(function () { var e = document.getElementById('empty'); return e && e.offsetParent !== null"
                   " && e.previousElementSibling && e.previousElementSibling.id === 'notes' ? e.textContent : null; })()")
    check(shown is not None and shown.startswith("No fault of the selected kinds"),
          "the page says the selection is empty, under the header: %r" % shown)
    hidden = b.eval("['controls', 'heat', 'tables', 'flame'].filter(function (id) {"
                    " return document.getElementById(id).offsetParent === null; })")
    check(hidden == ["controls", "heat", "tables", "flame"], "no empty grid, table or flame graph shown (hidden: %s)" % hidden)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--rect", nargs=4, type=lambda s: int(s, 0), metavar=("LO", "HI", "T0", "T1"))
    ap.add_argument("--expect")
    ap.add_argument("--other")
    ap.add_argument("--empty", action="store_true")
    ap.add_argument("--screenshots", required=True)
    a = ap.parse_args()
    if not a.empty and (not a.rect or not a.expect or not a.other):
        ap.error("--rect, --expect and --other are required without --empty")
    try:
        browser = cdp.Browser(width=1300, height=1000)
    except cdp.BrowserUnavailable as e:
        print("SKIP %s" % e)
        return 77
    with browser as b:
        b.open("file://" + os.path.abspath(a.page))
        shot = lambda name: b.screenshot(os.path.join(a.screenshots, name))  # noqa: E731
        shot("1-loaded.png")
        check(not b.errors, "no script exception on load (%s)" % "; ".join(b.errors[:3]))
        check(not b.console_errors, "no console error on load (%s)" % "; ".join(b.console_errors[:3]))
        if a.empty:
            return check_empty(b)
        names = table_names(b)
        check(len(names) >= 2, "the callsite table has rows (%d)" % len(names))
        frames = flame_frames(b, False)
        sized = b.eval("[...document.querySelectorAll('#flamesvg rect')].filter(function (r) {"
                       " var q = r.getBoundingClientRect(); return q.width > 0 && q.height > 0; }).length")
        check(len(frames) >= 3 and sized == len(frames), "the flame graph renders (%d frames, %d with a size)" %
              (len(frames), sized))
        check(a.expect in frames and a.other in frames, "the flame graph holds %s and %s" % (a.expect, a.other))
        painted, gray = heatmap_pixels(b)
        check(painted > 1000 and gray < painted / 100, "the heatmap is painted in colour (%d pixels, %d gray)" %
              (painted, gray))

        # the counter series: the first ones drawn, the others named and a tick away
        nseries = b.eval("faultline.data.series.length")
        choice = b.eval("document.getElementById('serieschoice').textContent")
        drawn = min(nseries, 6)
        check(choice.startswith("%d of %d counter series drawn" % (drawn, nseries)) and
              (nseries <= drawn or "%d more series not shown" % (nseries - drawn) in choice),
              "the page says how many counter series are drawn: %r" % choice[:90])
        if nseries > drawn:
            h0 = b.eval("document.getElementById('timeline').height")
            xy = center_of(b, "#serieschoice input:not(:checked)")
            b.click(xy[0], xy[1])
            choice = b.eval("document.getElementById('serieschoice').textContent")
            h1 = b.eval("document.getElementById('timeline').height")
            check(choice.startswith("%d of %d" % (drawn + 1, nseries)) and h1 > h0,
                  "ticking a series draws it (%r, strip canvas %d -> %d px)" % (choice[:40], h0, h1))

        xy = b.eval("(function () { var c = document.getElementById('heatmap'); c.scrollIntoView({block: 'center'});"
                    " var r = c.getBoundingClientRect(), p = faultline.plot;"
                    " return [r.left + (p.left + p.right) / 2, r.top + (p.top + p.bottom) / 2]; })()")
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": xy[0], "y": xy[1]})
        hover = b.eval("document.getElementById('hover').textContent")
        check(" faults" in hover and hover.startswith("0x"), "hovering the heatmap names the cell: %r" % hover)

        # zoom: the wheel stops at one column and at the whole axis; cells stay inside the plot;
        # the axis labels fit the canvas, with enough decimals to tell them apart
        whole = b.eval("[faultline.state.t0, faultline.state.t1]")
        labels = b.eval("faultline.ticks()")
        width = b.eval("document.getElementById('heatmap').width")
        check(len(labels) >= 4 and all(l[1] >= 0 and l[2] <= width for l in labels),
              "the axis labels fit the canvas (%s)" % ", ".join("%s at %.0f-%.0f" % tuple(l) for l in labels[-2:]))
        # at the middle of the fullest cell: its neighbours' cells would run past the plot's edges
        at = b.eval("(function () { var c = document.getElementById('heatmap'), r = c.getBoundingClientRect(),"
                    " d = faultline.data, g = d.grid, best = 0; for (var i = 0; i < d.cells.length; i += 5)"
                    " if (d.cells[i + 4] > d.cells[best + 4]) best = i;"
                    " var q = faultline.pixel(g.addr0 + (d.cells[best] + 0.5) * g.row_bytes, (d.cells[best + 1] + 0.5) * g.col_ns);"
                    " return [r.left + q.x, r.top + q.y]; })()")
        for _ in range(40):
            b.call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": at[0], "y": at[1], "deltaX": 0, "deltaY": -100})
        span = b.eval("faultline.state.t1 - faultline.state.t0")
        labels = b.eval("faultline.ticks()")
        texts = [l[0] for l in labels]
        outside = b.eval("(function () { var c = document.getElementById('heatmap'), p = faultline.plot,"
                         " d = c.getContext('2d').getImageData(Math.ceil(p.right) + 1, p.top, c.width - Math.ceil(p.right) - 1,"
                         " p.bottom - p.top).data, n = 0; for (var i = 3; i < d.length; i += 4) if (d[i]) n++; return n; })()")
        check(abs(span - 1) < 1e-9, "zooming in stops at one column (span %.3g columns)" % span)
        inside = b.eval("(function () { var c = document.getElementById('heatmap'), p = faultline.plot,"
                        " d = c.getContext('2d').getImageData(p.left + 1, p.top, p.right - p.left - 2, p.bottom - p.top).data,"
                        " n = 0; for (var i = 3; i < d.length; i += 4) if (d[i]) n++; return n; })()")
        check(inside > 1000 and outside == 0, "zoomed on a cell, it fills the plot (%d pixels) and nothing is drawn right "
              "of the plot (%d pixels)" % (inside, outside))
        check(len(texts) >= 2 and len(set(texts)) == len(texts) and all(l[1] >= 0 and l[2] <= width for l in labels),
              "zoomed, the axis labels are distinct and fit: %s" % texts)
        shot("1-zoomed.png")
        for _ in range(40):
            b.call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": at[0], "y": at[1], "deltaX": 0, "deltaY": 100})
        back = b.eval("[faultline.state.t0, faultline.state.t1]")
        check(back == [0, whole[1]], "zooming out stops at the whole axis (%s, was %s)" % (back, whole))

        # 2. select the top callsite
        top = names[0] if names else ""
        top_function = top.split(" ")[0]
        xy = center_of(b, "#tablewrap tbody tr")
        b.click(xy[0], xy[1])
        selected = flame_frames(b, True)
        check(b.eval("faultline.state.sel !== null"), "a click on the top row selects it (%s)" % top)
        check(top_function in selected, "the flame graph marks %s, the selected callsite's function (marked: %s)" %
              (top_function, ", ".join(selected[:8])))
        other = a.other if top_function == a.expect else a.expect
        check(other not in selected, "the flame graph does not mark %s" % other)
        painted_sel, gray = heatmap_pixels(b)
        check(gray > painted_sel / 10 and gray < painted_sel * 0.9,
              "the heatmap grays the faults of other callsites and keeps the selected in colour (%d of %d pixels gray)" %
              (gray, painted_sel))
        shot("2-selected.png")
        xy = center_of(b, "#clearsel")
        b.click(xy[0], xy[1])

        # 3. brush the rectangle of the second phase
        center_of(b, "#heatmap")
        corners = b.eval("(function (lo, hi, t0, t1) { var c = document.getElementById('heatmap')"
                         ".getBoundingClientRect(), p = faultline.pixel(lo, t0), q = faultline.pixel(hi, t1),"
                         " plot = faultline.plot;"
                         " function cx(x) { return c.left + Math.min(Math.max(x, plot.left), plot.right); }"
                         " function cy(y) { return c.top + Math.min(Math.max(y, plot.top), plot.bottom); }"
                         " return [cx(p.x), cy(p.y), cx(q.x), cy(q.y)]; })(%d, %d, %d, %d)" % tuple(a.rect))
        drag(b, *corners)
        check(b.eval("faultline.state.brush !== null"), "the drag brushed a rectangle (%s)" %
              b.eval("document.getElementById('brushinfo').textContent"))
        names = table_names(b)
        check(len(names) >= 1 and all(n.split(" ")[0] == a.expect for n in names),
              "the brushed table holds only %s's callsites: %s" % (a.expect, names[:6]))
        frames = flame_frames(b, False)
        check(a.expect in frames and a.other not in frames,
              "the brushed flame graph holds %s and not %s" % (a.expect, a.other))
        shot("3-brushed.png")
        xy = center_of(b, "#clearbrush")
        b.click(xy[0], xy[1])

        # 4. an allocation site's objects
        xy = b.eval("(function () { var t = [...document.querySelectorAll('#tabs button')].find(function (x) {"
                    " return x.textContent === 'allocation sites'; }); t.scrollIntoView({block: 'center'});"
                    " var r = t.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        b.click(xy[0], xy[1])
        xy = center_of(b, "#tablewrap tbody tr")
        b.click(xy[0], xy[1])
        objects = b.eval("document.querySelectorAll('#objects tr').length - 1")
        check(objects >= 1, "a click on the top allocation site lists its objects' lifetimes (%d)" % objects)
        shot("4-site.png")
        check(not b.errors and not b.console_errors, "no script error while driven (%s)" %
              "; ".join((b.errors + b.console_errors)[:3]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
