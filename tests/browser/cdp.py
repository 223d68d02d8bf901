"""cdp.py: a small Chrome DevTools Protocol driver for headless Chromium, standard library only.

Chromium is started with --remote-debugging-pipe: it reads protocol commands from file descriptor 3
and writes responses and events to descriptor 4, each message a JSON object followed by a NUL byte.
No port is opened and nothing is fetched (the browser runs with networking features off and a fresh
profile directory). One page target is created and attached in "flat" mode, so every page command
carries its sessionId.

    with Browser() as b:            # raises BrowserUnavailable when there is no chromium
        b.open("file:///tmp/x.svg")
        n = b.eval("document.querySelectorAll('rect').length")
        b.click(100, 200)
        b.screenshot("/tmp/x.png")

JavaScript dialogs (prompt/alert) are answered as they open with the text set in
b.dialog_text, because a page blocked in prompt() answers no other command until then. Exceptions
thrown by the page are collected in b.errors, console.error and console.assert messages in
b.console_errors."""

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


class BrowserUnavailable(Exception):
    """No Chromium could be started (not installed, or it failed at once)."""


class ProtocolError(Exception):
    pass


def find_chromium():
    env = os.environ.get("FAULTLINE_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, width=1300, height=1000, timeout=30.0):
        self.exe = find_chromium()
        if not self.exe:
            raise BrowserUnavailable("chromium is not installed (deps.sh --test installs Debian's chromium)")
        self.timeout = timeout
        self.width, self.height = width, height
        self.next_id = 0
        self.buffer = b""
        self.events = []
        self.errors = []
        self.console_errors = []
        self.dialog_text = None
        self.dialogs = []
        self.session = None
        self.profile = tempfile.mkdtemp(prefix="faultline-chromium.")
        self.proc = None
        self._start()

    # ------------------------------------------------------------------ process and pipe
    def _start(self):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()

        def child_fds():
            # The browser's ends become fds 3 and 4, whatever numbers the pipes got: copied above
            # 10 first (so neither dup2 overwrites the other's source), then into place. Every other
            # descriptor of ours is close-on-exec (os.pipe's default), so close_fds is not needed,
            # and would run after this function and close 3 and 4 again.
            a = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.close(a)
            os.close(b)

        args = [self.exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
                "--user-data-dir=" + self.profile, "--remote-debugging-pipe",
                "--window-size=%d,%d" % (self.width, self.height), "about:blank"]
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        try:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                         preexec_fn=child_fds, close_fds=False)
        except OSError as e:
            raise BrowserUnavailable("cannot start %s: %s" % (self.exe, e))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.wfd, self.rfd = to_browser_w, from_browser_r
        try:
            self.call("Browser.getVersion", timeout=20)
        except (ProtocolError, OSError) as e:
            self.close()
            raise BrowserUnavailable("%s did not answer on its debugging pipe: %s (log: %s)" %
                                     (self.exe, e, self._log_tail()))

    def _log_tail(self):
        try:
            with open(os.path.join(self.profile, "chromium.log"), "rb") as f:
                return f.read()[-600:].decode("utf-8", "replace").strip().replace("\n", " | ")
        except OSError:
            return "?"

    def close(self):
        if self.proc and self.proc.poll() is None:
            try:
                self._send({"id": self._new_id(), "method": "Browser.close"})
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in ("wfd", "rfd"):
            if hasattr(self, fd):
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                delattr(self, fd)
        if getattr(self, "log", None):
            self.log.close()
            self.log = None
        if os.environ.get("FAULTLINE_TEST_KEEP") != "1":
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ messages
    def _new_id(self):
        self.next_id += 1
        return self.next_id

    def _send(self, message):
        data = json.dumps(message).encode() + b"\0"
        while data:
            n = os.write(self.wfd, data)
            data = data[n:]

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProtocolError("timed out waiting for the browser")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.rfd, 1 << 16)
            if not chunk:
                raise ProtocolError("the browser closed its pipe (exit status %s)" % self.proc.poll())
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def _on_event(self, message):
        method = message.get("method")
        params = message.get("params", {})
        if method == "Page.javascriptDialogOpening":
            self.dialogs.append(params)
            text = self.dialog_text if self.dialog_text is not None else ""
            self._send({"id": self._new_id(), "method": "Page.handleJavaScriptDialog",
                        "params": {"accept": self.dialog_text is not None, "promptText": text},
                        "sessionId": message.get("sessionId")})
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = params.get("args", [])
            self.console_errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            exc = details.get("exception", {})
            self.errors.append(exc.get("description") or details.get("text") or "exception")
        self.events.append(message)

    def call(self, method, params=None, session=True, timeout=None):
        """Sends one command and returns its result (events that arrive meanwhile are handled)."""
        message_id = self._new_id()
        message = {"id": message_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise ProtocolError("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            if "method" in reply:
                self._on_event(reply)

    def wait_event(self, method, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            message = self._read_message(deadline)
            if "method" in message:
                self._on_event(message)
                if message["method"] == method:
                    self.events.remove(message)
                    return message

    # ------------------------------------------------------------------ page
    def open(self, url):
        """Opens URL in a new page and waits for its load event."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def eval(self, expression):
        """The value of a JavaScript expression (JSON-able), or raises with the page's exception."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise ProtocolError("evaluating %r: %s" % (expression[:80], details.get("exception", {}).get(
                "description", details.get("text"))))
        return result.get("result", {}).get("value")

    def click(self, x, y):
        """A real left click (press and release) at viewport coordinates."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            params = {"type": kind, "x": x, "y": y}
            if kind != "mouseMoved":
                params.update(button="left", clickCount=1)
            self.call("Input.dispatchMouseEvent", params)

    def key(self, key, code, keycode, modifiers=0):
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": code,
                                                 "windowsVirtualKeyCode": keycode, "modifiers": modifiers})

    def screenshot(self, path, full_page=True):
        params = {"format": "png"}
        if full_page:
            size = self.eval("[document.documentElement.getBoundingClientRect().width,"
                             " document.documentElement.getBoundingClientRect().height]")
            params["clip"] = {"x": 0, "y": 0, "width": max(1, size[0]), "height": max(1, size[1]), "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
