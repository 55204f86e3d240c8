"""Drive headless Debian Chromium through the Chrome DevTools Protocol, as a user would drive the page.

Why not ``--dump-dom`` any more: the page is interactive (zoom, a group picker), and what must be proved is
that real input changes what Vega draws, that nothing on the page logs an error, and that it fetches
nothing. One Chromium serves a whole test module (``Browser``); each test opens its own tab (``Tab``).

The protocol is JSON over one WebSocket (``websockets``' synchronous client, already in the lock). Commands
are sent to a tab through a flattened session (``Target.attachToTarget`` with ``flatten``); every event that
arrives while waiting for a reply is kept, so console errors, exceptions and network requests can be
asserted on afterwards. Waiting is always bounded polling on a condition, never a fixed sleep.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests.dashboard.browser import FLAGS, chromium

Event = dict[str, Any]


class DevToolsError(AssertionError):
    """A protocol command failed, or a condition did not come true in time."""


def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """``condition()``'s first truthy value, polled until ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise DevToolsError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


@dataclass
class Browser:
    """One headless Chromium with remote debugging on a free port, and its browser-level WebSocket."""

    process: subprocess.Popen[bytes]
    profile: Path
    socket: ClientConnection
    exits: contextlib.ExitStack
    events: dict[str, list[Event]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def start(cls, timeout: float = 60.0) -> Browser:
        profile = Path(tempfile.mkdtemp(prefix="offsetlake-chromium-"))
        process = subprocess.Popen(
            [chromium(), *FLAGS, "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        try:
            # Chromium writes the port it chose and the browser target's path once it listens.
            lines = wait_for(lambda: port_file.is_file() and port_file.read_text().splitlines()[:2] or None,
                             timeout, "Chromium's DevToolsActivePort file")
            while len(lines) < 2 or not lines[1]:
                lines = wait_for(lambda: port_file.read_text().splitlines()[:2], timeout, "the browser target")
            exits = contextlib.ExitStack()  # websockets 17 wants its connection entered as a context
            socket = exits.enter_context(connect(f"ws://127.0.0.1:{lines[0]}{lines[1]}", max_size=None,
                                                 open_timeout=timeout))
        except BaseException:
            process.kill()
            process.wait()
            shutil.rmtree(profile, ignore_errors=True)
            raise
        return cls(process=process, profile=profile, socket=socket, exits=exits)

    def close(self) -> None:
        try:
            self.exits.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 60.0) -> dict[str, Any]:
        """Send one command and return its result; events received meanwhile are kept per session."""
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DevToolsError(f"no reply to {method} within {timeout:.0f}s")
            reply = json.loads(self.socket.recv(timeout=remaining))
            if reply.get("id") == ident:
                if "error" in reply:
                    raise DevToolsError(f"{method} failed: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.setdefault(reply.get("sessionId", ""), []).append(reply)

    def open(self, width: int = 1400, height: int = 1000) -> Tab:
        """A new tab with the console, the log, page events and the network watched."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tab = Tab(self, session, target)
        for domain in ("Runtime", "Log", "Page", "Network"):
            tab.send(f"{domain}.enable")
        tab.send("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        return tab


@dataclass
class Tab:
    browser: Browser
    session: str
    target: str

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> dict[str, Any]:
        return self.browser.send(method, params, self.session, timeout)

    @property
    def events(self) -> list[Event]:
        return self.browser.events.setdefault(self.session, [])

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})

    def evaluate(self, expression: str, timeout: float = 60.0) -> Any:
        """The value of a JavaScript expression in the page (promises awaited), as JSON."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise DevToolsError(f"{expression[:80]!r} threw: "
                                f"{details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def navigate(self, url: str, ready: str, timeout: float = 60.0) -> None:
        """Load ``url`` and poll until the expression ``ready`` is truthy."""
        self.send("Page.navigate", {"url": url})
        wait_for(lambda: self.evaluate(ready), timeout, f"{ready} after loading {url}", interval=0.1)

    def errors(self) -> list[str]:
        """Console errors and assertions, uncaught exceptions and error log entries so far."""
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console." + params["type"] + ": " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append("exception: " + str(details.get("exception", {}).get("description")
                                                  or details.get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append("log: " + params["entry"].get("text", ""))
        return found

    def requests(self) -> list[str]:
        """URLs of every network request the tab made so far."""
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def wheel(self, x: float, y: float, delta_y: float) -> None:
        """A real mouse-wheel turn at (x, y) in CSS pixels of the viewport (negative: away, zoom in)."""
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        self.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0,
                                               "deltaY": delta_y})

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
        """Press the left button at ``start``, move to ``end`` in steps, release."""
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": start[0], "y": start[1]})
        self.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": start[0], "y": start[1],
                                               "button": "left", "buttons": 1, "clickCount": 1})
        for i in range(1, steps + 1):
            x = start[0] + (end[0] - start[0]) * i / steps
            y = start[1] + (end[1] - start[1]) * i / steps
            self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "left",
                                                   "buttons": 1})
        self.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": end[0], "y": end[1],
                                               "button": "left", "buttons": 0, "clickCount": 1})

    def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "buttons": 1 if kind == "mousePressed" else 0, "clickCount": 1})

    def type_text(self, text: str) -> None:
        """Type into the focused element, one key at a time (``Input.insertText`` per character)."""
        for character in text:
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": character, "key": character})
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": character})

    def screenshot(self, png: Path, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            metrics = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": metrics["width"], "height": metrics["height"], "scale": 1}
        png.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", params)["data"]))
        return png
