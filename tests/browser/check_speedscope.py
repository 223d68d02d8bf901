#!/usr/bin/env python3
"""check_speedscope.py: loads a folded-stacks file into speedscope (the npm package's offline build,
dist/release/index.html) in headless Chromium, the way speedscope's own command line does (a script
calling speedscope.loadFileFromBase64, named in #localProfilePath=), and checks that it imported:
the page title becomes "NAME - speedscope", no alert (speedscope's import error) and no script error.

usage: check_speedscope.py FOLDED INDEX_HTML [--screenshot PNG]
Exit 0 pass, 1 fail, 77 (first line "SKIP reason") when no browser can be started."""

import argparse
import base64
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folded")
    ap.add_argument("index_html")
    ap.add_argument("--screenshot")
    a = ap.parse_args()
    name = os.path.basename(a.folded)
    with open(a.folded, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    fd, js = tempfile.mkstemp(prefix="faultline-speedscope.", suffix=".js")
    with os.fdopen(fd, "w") as f:
        f.write("speedscope.loadFileFromBase64(%s, %s)" % (json.dumps(name), json.dumps(data)))
    try:
        try:
            browser = cdp.Browser()
        except cdp.BrowserUnavailable as e:
            print("SKIP %s" % e)
            return 77
        with browser as b:
            b.open("file://" + os.path.abspath(a.index_html) + "#localProfilePath=" + js)
            title = ""
            for _ in range(80):
                title = b.eval("document.title")
                if name in title or b.dialogs:
                    break
                time.sleep(0.25)
            if a.screenshot:
                b.screenshot(a.screenshot)
            if title != name + " - speedscope" or b.dialogs or b.errors:
                print("FAIL: speedscope did not import %s: title %r, dialogs %s, errors %s" %
                      (name, title, [d.get("message") for d in b.dialogs], b.errors[:3]), file=sys.stderr)
                return 1
            print("ok speedscope imports %s (title %r)" % (name, title))
            return 0
    finally:
        os.unlink(js)


if __name__ == "__main__":
    sys.exit(main())
