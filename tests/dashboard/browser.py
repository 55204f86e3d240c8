"""Headless Debian Chromium for the dashboard tests: the DOM after the page's scripts ran, and a screenshot.

The browser comes from Debian's packages (``make browser`` installs ``chromium``); nothing is
downloaded by a test tool. The flags keep Chromium off the network (this machine has none) and
out of the user's profile.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")


def chromium() -> str:
    """The Chromium executable; a missing browser is a test failure with the fix, never a skip."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("Debian's chromium is not installed: run `make browser` "
                         "(apt-get install -y chromium chromium-driver) to run the dashboard's browser test")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="offsetlake-chromium-") as profile:
        result = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                                capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, f"chromium failed ({result.returncode}): {result.stderr[-2000:]}"
    return result


def rendered_dom(page: Path) -> str:
    """The page's DOM after its scripts ran (virtual time lets them finish without waiting)."""
    return _run("--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()).stdout


def screenshot(page: Path, png: Path, width: int = 1400, height: int = 2000) -> Path:
    _run("--virtual-time-budget=5000", f"--screenshot={png.resolve()}", f"--window-size={width},{height}",
         page.resolve().as_uri())
    assert png.is_file() and png.stat().st_size > 0, f"no screenshot at {png}"
    return png


@dataclass
class RenderedPage(HTMLParser):
    """What the browser drew: the body's data-rendered flag, marks per chart, status table rows."""

    rendered: str | None = None
    marks: dict[str, int] = field(default_factory=dict)
    declared_marks: dict[str, str | None] = field(default_factory=dict)
    status_rows: int = 0
    texts: list[str] = field(default_factory=list)
    errors: str = ""
    _chart: str | None = None
    _in_errors: bool = False

    def __post_init__(self) -> None:
        HTMLParser.__init__(self)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if tag == "body":
            self.rendered = values.get("data-rendered")
        elif tag == "svg" and values.get("data-chart"):
            self._chart = values["data-chart"]
            self.marks.setdefault(self._chart, 0)
            self.declared_marks[self._chart] = values.get("data-marks")
        elif self._chart and "mark" in classes:
            self.marks[self._chart] += 1
        elif tag == "tr" and "status-row" in classes:
            self.status_rows += 1
        self._in_errors = values.get("id") == "errors"

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._chart = None
        self._in_errors = False

    def handle_data(self, data: str) -> None:
        if self._in_errors:
            self.errors += data
        if data.strip():
            self.texts.append(data.strip())


def parse(dom: str) -> RenderedPage:
    page = RenderedPage()
    page.feed(dom)
    return page
