"""Headless Debian Chromium for the dashboard tests: where it is and how it is started.

``tests/dashboard/devtools.py`` drives it through the DevTools protocol.

The browser comes from Debian's packages (``make browser`` installs ``chromium``); nothing is
downloaded by a test tool. The flags keep Chromium off the network (this machine has none) and
out of the user's profile.
"""

from __future__ import annotations

import shutil

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
