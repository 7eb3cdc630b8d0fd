#!/usr/bin/env python3
"""browser.py: load a page in headless Chromium and report what it shows.

usage: browser.py [--chromium PATH] [--shot OUT.png] PAGE.html ACTION...

ACTION is --eval JS (the value of the expression, as JSON) or --click CSS
(a real mouse click, through Chromium's input pipeline, in the middle of
the first element that matches).  They run in order once the page has set
data-ready on <html>.  Prints one JSON object: "ready", "draw_ms" (the
page's data-draw-ms: from navigation to the end of its script), "script_ms" (the
part its script took), "ready_ms" (from the navigation command to
data-ready, as seen from here), "evals"
(one value per --eval), "errors" (exceptions and console errors),
"requests" (every URL the page asked for besides itself) and, with --shot,
"shot" (width, height, and the share of pixels that are not the page's
white background in the whole shot and in each canvas, counted by
Chromium's own PNG decoder).

Chromium is driven through the DevTools protocol over a pipe
(--remote-debugging-pipe: fds 3 and 4, NUL-terminated JSON), so nothing
but Python's standard library is needed.  Exits 77 when Chromium is not
found, 1 on a protocol failure or time-out.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic",
         "--disable-dev-shm-usage", "--remote-debugging-pipe"]
WIDTH, HEIGHT = 1280, 2400
TIMEOUT = 60


class Browser:
    def __init__(self, path, profile):
        r1, self.w = os.pipe()
        self.r, w2 = os.pipe()

        def fds():
            a, b = os.dup(r1), os.dup(w2)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [path] + FLAGS + ["--user-data-dir=" + profile, "about:blank"],
            close_fds=False, preexec_fn=fds, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r1)
        os.close(w2)
        self.buf = b""
        self.id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params or {}}
        if self.session is not None:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        return self.reply(self.id)

    def reply(self, want):
        deadline = time.time() + TIMEOUT
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                msg = json.loads(raw)
                if msg.get("id") == want:
                    if "error" in msg:
                        raise RuntimeError(json.dumps(msg["error"]))
                    return msg.get("result", {})
                if "method" in msg:
                    self.events.append(msg)
            if time.time() > deadline:
                raise RuntimeError("no answer from chromium")
            data = os.read(self.r, 1 << 20)
            if not data:
                raise RuntimeError("chromium went away")
            self.buf += data

    def eval(self, expr, wait=False):
        res = self.send("Runtime.evaluate", {"expression": expr,
                                             "returnByValue": True,
                                             "awaitPromise": wait})
        if "exceptionDetails" in res:
            raise RuntimeError("%s: %s" % (expr, json.dumps(
                res["exceptionDetails"])[:300]))
        return res["result"].get("value")

    def click(self, css):
        rect = self.eval("(function(){var e=document.querySelector(%s);"
                         "if(!e)return null;e.scrollIntoView({block:"
                         "'center'});var r=e.getBoundingClientRect();"
                         "return [r.left+r.width/2,r.top+r.height/2]})()"
                         % json.dumps(css))
        if rect is None:
            raise RuntimeError("nothing matches " + css)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {
                "type": kind, "x": rect[0], "y": rect[1],
                "button": "left", "clickCount": 1})

    def close(self):
        try:
            self.session = None
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# The share of a screenshot's pixels that are not white, in the whole
# shot and in each canvas's box, counted by the browser's own PNG decoder
# in a page of its own.
INKED = """(async function (png, boxes) {
    var img = new Image(), c = document.createElement('canvas'), g, d;
    img.src = 'data:image/png;base64,' + png;
    await img.decode();
    c.width = img.width;
    c.height = img.height;
    g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    d = g.getImageData(0, 0, c.width, c.height).data;
    function inked(x0, y0, x1, y1) {
        var n = 0, ink = 0, x, y, i;
        for (y = Math.max(y0, 0); y < Math.min(y1, c.height); y++)
            for (x = Math.max(x0, 0); x < Math.min(x1, c.width); x++) {
                i = 4 * (y * c.width + x);
                n++;
                if (d[i] !== 255 || d[i + 1] !== 255 || d[i + 2] !== 255)
                    ink++;
            }
        return n ? ink / n : 0;
    }
    return { width: c.width, height: c.height,
        inked: inked(0, 0, c.width, c.height),
        canvases: boxes.map(function (r) {
            return inked(Math.round(r[0]), Math.round(r[1]),
                Math.round(r[2]), Math.round(r[3]));
        }) };
})"""


def main(argv):
    chromium, shot, actions, page = None, None, [], None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--chromium", "--shot", "--eval", "--click"):
            if i + 1 == len(argv):
                sys.exit("browser.py: %s needs a value" % a)
            if a == "--chromium":
                chromium = argv[i + 1]
            elif a == "--shot":
                shot = argv[i + 1]
            else:
                actions.append((a, argv[i + 1]))
            i += 2
        elif page is None:
            page = a
            i += 1
        else:
            sys.exit(__doc__)
    if page is None:
        sys.exit(__doc__)
    chromium = chromium or os.environ.get("CHROMIUM") or \
        shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("browser.py: chromium not found", file=sys.stderr)
        return 77
    profile = tempfile.mkdtemp(prefix="vt-chromium-")
    b = Browser(chromium, profile)
    out = {"evals": [], "errors": [], "requests": []}
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"})
        b.session = b.send("Target.attachToTarget", {
            "targetId": target["targetId"], "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            b.send(domain + ".enable")
        b.send("Emulation.setDeviceMetricsOverride", {
            "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1,
            "mobile": False})
        url = "file://" + os.path.abspath(page)
        start = time.time()
        b.send("Page.navigate", {"url": url})
        while b.eval("document.documentElement && document."
                     "documentElement.getAttribute('data-ready')") != "1":
            if time.time() - start > TIMEOUT:
                raise RuntimeError("the page never became ready")
            time.sleep(0.02)
        out["ready_ms"] = round((time.time() - start) * 1000, 1)
        out["ready"] = True
        for k in ("draw_ms", "script_ms"):
            out[k] = float(b.eval("document.documentElement.getAttribute("
                                  "'data-%s')" % k.replace("_", "-")))
        for kind, arg in actions:
            if kind == "--eval":
                out["evals"].append(b.eval(arg))
            else:
                b.click(arg)
        for ev in b.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                out["errors"].append(p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p["type"] == "error":
                out["errors"].append(str(p["args"])[:300])
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                out["errors"].append(p["entry"]["text"])
            elif m == "Network.requestWillBeSent" and \
                    p["request"]["url"] != url:
                out["requests"].append(p["request"]["url"])
        if shot:
            b.eval("window.scrollTo(0, 0)")
            data = base64.b64decode(b.send("Page.captureScreenshot", {
                "format": "png"})["data"])
            with open(shot, "wb") as f:
                f.write(data)
            boxes = b.eval("Array.prototype.map.call(document."
                           "querySelectorAll('canvas'), function (c) {"
                           "var r = c.getBoundingClientRect(); return "
                           "[r.left, r.top, r.right, r.bottom]; })")
            out["shot"] = b.eval("%s(%s, %s)" % (INKED, json.dumps(
                base64.b64encode(data).decode()), json.dumps(boxes)),
                wait=True)
    except RuntimeError as e:
        print("browser.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        b.close()
        shutil.rmtree(profile, ignore_errors=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
