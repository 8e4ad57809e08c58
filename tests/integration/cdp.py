"""A small client of the Chrome DevTools Protocol over --remote-debugging-pipe
(fd 3 in, fd 4 out, messages ending in NUL): headless Chromium driven by a
test without a websocket library. One page, one flat session.

    with Browser(["--window-size=1280,1400"]) as b:
        b.navigate("http://127.0.0.1:8080/")
        b.wait("document.body.dataset.loaded === 'yes'")
        rows = b.eval("[...document.querySelectorAll('tr')].length")
        b.screenshot("/tmp/page.png")
"""
import base64
import fcntl
import json
import os
import subprocess
import sys
import time


class BrowserError(Exception):
    pass


def check(cond, what):
    """A test's assertion: prints FAIL and what, and exits 1, when cond is false."""
    if not cond:
        print("FAIL:", what, file=sys.stderr)
        sys.exit(1)


class Browser:
    def __init__(self, args=(), binary="chromium", log=None):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # in the child: its fd 3 reads our messages, fd 4 writes its own
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        cmd = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
               "--no-first-run", "--disable-extensions", "--hide-scrollbars",
               "--disable-features=Translate,OptimizationHints,MediaRouter"] + list(args) + ["about:blank"]
        self._proc = subprocess.Popen(cmd, preexec_fn=wire, close_fds=False, stdin=subprocess.DEVNULL,
                                      stdout=log or subprocess.DEVNULL, stderr=log or subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self._session = None
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            if time.time() > deadline:
                raise BrowserError("no answer from Chromium in time")
            chunk = os.read(self._from_child, 65536)
            if not chunk:
                raise BrowserError("Chromium closed its pipe (exit %s)" % self._proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True, timeout=60):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self._session:
            msg["sessionId"] = self._session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next_id:
                if "error" in m:
                    raise BrowserError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def navigate(self, url):
        r = self.call("Page.navigate", {"url": url})
        if r.get("errorText"):
            raise BrowserError("navigate %s: %s" % (url, r["errorText"]))

    def eval(self, expression):
        """The value of a JavaScript expression (awaited when a promise)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError("%s: %s" % (expression, r["exceptionDetails"].get("exception", {}).get("description", r["exceptionDetails"])))
        return r["result"].get("value")

    def wait(self, expression, timeout=30, what=None):
        """Until the expression is truthy; its value."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                last = self.eval(expression)
                if last:
                    return last
            except BrowserError as e:
                last = e
            time.sleep(0.2)
        raise BrowserError("waited %ds for %s (last: %r)" % (timeout, what or expression, last))

    def screenshot(self, path):
        data = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
        with open(path, "wb") as f:
            f.write(data)
        return len(data)

    def console_errors(self):
        return [e for e in self.events if e.get("method") == "Runtime.exceptionThrown" or
                (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")]
