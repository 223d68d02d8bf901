#!/usr/bin/env python3
"""check_flamegraph.py: opens a faultline flame graph SVG in headless Chromium (cdp.py) and checks,
through real mouse clicks and the page's own prompt, that it works as a person would use it:

  - it renders: the frames are laid out with a size on screen, no script error was thrown;
  - clicking the frame named --click zooms: that frame's rectangle becomes the full width
    (width - 2 * xpad, within 0.5 px, on screen too), frames outside it are hidden, its ancestors
    stay visible, "Reset Zoom" appears; clicking "Reset Zoom" restores every width;
  - clicking "Search" and answering the prompt with --search REGEX highlights exactly the frames
    whose names match (--expect-match NAME,NAME,... is the set of names), in magenta, and prints
    "Matched: P%" equal to --expect-matched; Escape clears the search;
  - the URL parameters ?f=NAME&s=REGEX open the graph zoomed on NAME with the search applied.

usage: check_flamegraph.py SVG --click NAME --search REGEX --expect-match NAMES --expect-matched P%
                           [--screenshots DIR]
Prints one "ok ..." line per check. Exit 0 pass, 1 fail, 77 (first line "SKIP reason") when no
browser can be started."""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if cond:
        print("ok " + what)
    else:
        failures += 1
        print("FAIL: " + what, file=sys.stderr)


FRAME_JS = """(function (name) {
  var gs = document.querySelectorAll('#frames > g');
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i];
    if (!g.fl || g.fl.name !== name) continue;
    var r = g.querySelector('rect'), b = r.getBoundingClientRect();
    return { x: b.left + b.width / 2, y: b.top + b.height / 2, screen_w: b.width,
             w: parseFloat(r.getAttribute('width')), orig_w: g.fl.w, hidden: g.classList.contains('hide') };
  }
  return null;
})(%s)"""


def frame(b, name):
    import json
    return b.eval(FRAME_JS % json.dumps(name))


def element_center(b, element_id):
    return b.eval("(function () { var b = document.getElementById('%s').getBoundingClientRect();"
                  " return [b.left + b.width / 2, b.top + b.height / 2]; })()" % element_id)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("svg")
    ap.add_argument("--click", required=True)
    ap.add_argument("--search", required=True)
    ap.add_argument("--expect-match", required=True)
    ap.add_argument("--expect-matched", required=True)
    ap.add_argument("--screenshots")
    a = ap.parse_args()
    url = "file://" + os.path.abspath(a.svg)
    try:
        browser = cdp.Browser()
    except cdp.BrowserUnavailable as e:
        print("SKIP %s" % e)
        return 77
    with browser as b:
        print("# %s" % b.call("Browser.getVersion", session=False).get("product"))
        b.open(url)

        # Renders.
        info = b.eval("({ frames: document.querySelectorAll('#frames > g').length,"
                      " parsed: typeof frames !== 'undefined' ? frames.length : -1,"
                      " width: cfg.width, xpad: cfg.xpad,"
                      " svg_w: document.documentElement.getBoundingClientRect().width,"
                      " drawn: Array.prototype.filter.call(document.querySelectorAll('#frames rect'),"
                      "   function (r) { return r.getBoundingClientRect().width >= 1; }).length })")
        check(info["frames"] > 1 and info["parsed"] == info["frames"],
              "renders: %d frames, all read by the script (%d)" % (info["frames"], info["parsed"]))
        check(info["drawn"] == info["frames"], "every frame has a width on screen (%d of %d)" %
              (info["drawn"], info["frames"]))
        check(abs(info["svg_w"] - info["width"]) < 1, "canvas %.0f px wide as declared (%d)" %
              (info["svg_w"], info["width"]))
        if a.screenshots:
            b.screenshot(os.path.join(a.screenshots, "flamegraph.png"))
        full = info["width"] - 2 * info["xpad"]

        # Click to zoom.
        f = frame(b, a.click)
        check(f is not None, "a frame named %s exists" % a.click)
        if f is None:
            return 1
        before = f["w"]
        b.click(f["x"], f["y"])
        z = frame(b, a.click)
        check(abs(z["w"] - full) < 0.5 and abs(z["screen_w"] - full) < 0.5,
              "clicking %s zooms it to the full width: %.2f px (was %.2f, full %d, on screen %.2f)" %
              (a.click, z["w"], before, full, z["screen_w"]))
        state = b.eval("({ unzoom: !document.getElementById('unzoom').classList.contains('hide'),"
                       " hidden: document.querySelectorAll('#frames > g.hide').length,"
                       " parents: document.querySelectorAll('#frames > g.parent').length,"
                       " outside: Array.prototype.filter.call(document.querySelectorAll('#frames > g:not(.hide) rect'),"
                       "   function (r) { var x = parseFloat(r.getAttribute('x')), w = parseFloat(r.getAttribute('width'));"
                       "   return x < cfg.xpad - 0.01 || x + w > cfg.width - cfg.xpad + 0.01; }).length })")
        check(state["unzoom"], "Reset Zoom is shown")
        check(state["parents"] >= 1, "ancestors stay visible, faded (%d)" % state["parents"])
        check(state["outside"] == 0, "no visible frame extends past the canvas after zooming")
        print("# %d frames hidden by the zoom" % state["hidden"])
        if a.screenshots:
            b.screenshot(os.path.join(a.screenshots, "flamegraph-zoomed.png"))
        ux, uy = element_center(b, "unzoom")
        b.click(ux, uy)
        r = frame(b, a.click)
        check(abs(r["w"] - before) < 0.01 and not b.eval("!document.getElementById('unzoom').classList.contains('hide')"),
              "Reset Zoom restores the width (%.2f) and hides itself" % r["w"])

        # Search through the page's own prompt.
        b.dialog_text = a.search
        sx, sy = element_center(b, "search")
        b.click(sx, sy)
        check(len(b.dialogs) == 1 and b.dialogs[0].get("type") == "prompt",
              "clicking Search opens a prompt (answered %r)" % a.search)
        res = b.eval("({ names: Array.prototype.map.call(document.querySelectorAll('#frames > g.match'),"
                     "   function (g) { return g.fl.name; }),"
                     " fills: Array.prototype.map.call(document.querySelectorAll('#frames > g.match rect'),"
                     "   function (r) { return r.getAttribute('fill'); }),"
                     " matched: document.getElementById('matched').textContent,"
                     " matched_shown: !document.getElementById('matched').classList.contains('hide'),"
                     " button: document.getElementById('search').textContent })")
        want = set(n for n in a.expect_match.split(",") if n)
        got = set(res["names"])
        check(got == want, "search %r highlights exactly %s (got %s)" % (a.search, sorted(want), sorted(got)))
        check(res["fills"] and all(fill == "rgb(230,0,230)" for fill in res["fills"]),
              "matched frames are magenta (%d)" % len(res["fills"]))
        check(res["matched_shown"] and res["matched"] == "Matched: " + a.expect_matched,
              "%r shown (want 'Matched: %s')" % (res["matched"], a.expect_matched))
        check(res["button"] == "Reset Search", "the Search button became Reset Search")
        if a.screenshots:
            b.screenshot(os.path.join(a.screenshots, "flamegraph-search.png"))
        b.key("Escape", "Escape", 27)
        left = b.eval("document.querySelectorAll('#frames > g.match').length")
        check(left == 0, "Escape clears the search")
        # URL parameters restore a zoom (?f=NAME) and a search (?s=REGEX) on load.
        from urllib.parse import quote
        b.open(url + "?f=" + quote(a.click) + "&s=" + quote(a.search))
        z = frame(b, a.click)
        res = b.eval("({ names: Array.prototype.map.call(document.querySelectorAll('#frames > g.match'),"
                     "   function (g) { return g.fl.name; }),"
                     " matched: document.getElementById('matched').textContent })")
        check(z and abs(z["w"] - full) < 0.5, "?f=%s opens zoomed on %s" % (a.click, a.click))
        check(set(res["names"]) == want and res["matched"].endswith(" of the zoomed frame"),
              "?s=%s highlights %s on load, %r" % (a.search, sorted(set(res["names"])), res["matched"]))
        check(not b.errors, "no script error (%s)" % "; ".join(b.errors[:3]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
