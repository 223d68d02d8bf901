#!/usr/bin/env python3
"""check_render.py: opens an SVG (or any page) in headless Chromium (cdp.py) and checks that it
renders: at least N elements match a CSS selector and each has a size on screen, and the page threw
no script error. Optionally saves a screenshot.

usage: check_render.py FILE --selector CSS --min N [--screenshot PNG]
Exit 0 pass, 1 fail, 77 (first line "SKIP reason") when no browser can be started."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--selector", required=True)
    ap.add_argument("--min", type=int, default=1)
    ap.add_argument("--screenshot")
    a = ap.parse_args()
    try:
        browser = cdp.Browser(width=1400, height=800)
    except cdp.BrowserUnavailable as e:
        print("SKIP %s" % e)
        return 77
    with browser as b:
        b.open("file://" + os.path.abspath(a.file))
        res = b.eval("(function (sel) { var els = document.querySelectorAll(sel), sized = 0;"
                     " for (var i = 0; i < els.length; i++) { var r = els[i].getBoundingClientRect();"
                     "   if (r.width > 0 && r.height > 0) sized++; }"
                     " return { n: els.length, sized: sized }; })(%s)" % json.dumps(a.selector))
        if a.screenshot:
            b.screenshot(a.screenshot)
        failed = False
        if res["n"] < a.min or res["sized"] != res["n"]:
            print("FAIL: %s: %d elements match %r (want >= %d), %d with a size on screen" %
                  (a.file, res["n"], a.selector, a.min, res["sized"]), file=sys.stderr)
            failed = True
        else:
            print("ok %s renders: %d elements %r, all with a size on screen" %
                  (os.path.basename(a.file), res["n"], a.selector))
        if b.errors:
            print("FAIL: script errors: %s" % "; ".join(b.errors[:3]), file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
