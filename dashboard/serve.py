"""Serve the dashboard over HTTP: every group's summary at ``/``, one group's page at ``/group/<id>``, built when asked.

Why: at 10,000 groups one page cannot chart every group (``data.MAX_CHARTED_GROUPS``: 500 charted groups made
a page of 89 MiB that Chromium took half a minute to draw), and a written file reaches another group only by
running the command again with ``--group``. Served, each group's name in the summary's status table links to
its own page, built on request from that group's rows alone (``read_tables``' group pushdown, delta-rs: no
JVM), so a group's timelines load on demand in about the time of one read, and every page reads the warehouse
as it is now.

The standard library's ``ThreadingHTTPServer``: a page is built by reading Delta tables, not by serving files,
and one operator's clicks need no web framework. It binds 127.0.0.1 by default: there is no authentication.
"""

from __future__ import annotations

import sys
import time
import urllib.parse
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conf.settings import Settings
from dashboard.build import build_page
from dashboard.render import PageLinks

GROUP_PREFIX = "/group/"
LINKS = PageLinks(group=GROUP_PREFIX + "{}", home="/")


def page_for(settings: Settings, path: str, *, since: int | None = None, engine: str = "auto",
             spark_factory: Callable[[], Any] | None = None) -> tuple[HTTPStatus, str]:
    """(status, HTML or a one-line text) for a request path: ``/``, or ``/group/<url-quoted group id>``."""
    route = urllib.parse.urlsplit(path).path
    if route in ("/", "/index.html"):
        return HTTPStatus.OK, build_page(settings, since=since, engine=engine, spark_factory=spark_factory,
                                         links=LINKS).html
    if route.startswith(GROUP_PREFIX) and len(route) > len(GROUP_PREFIX):
        group = urllib.parse.unquote(route[len(GROUP_PREFIX):])
        page = build_page(settings, groups=(group,), since=since, engine=engine, spark_factory=spark_factory,
                          links=LINKS)
        if page.data.groups_total == 0:
            return HTTPStatus.NOT_FOUND, f"no group {group!r} in the warehouse {settings.warehouse_uri}\n"
        return HTTPStatus.OK, page.html
    return HTTPStatus.NOT_FOUND, f"no page at {route}: / lists every group, /group/<id> shows one\n"


def make_server(settings: Settings, host: str, port: int, *, since: int | None = None, engine: str = "auto",
                log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
                ) -> ThreadingHTTPServer:
    """A server bound to ``host:port`` (0: any free port; ``server.server_address`` says which), not started."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            started = time.monotonic()
            try:
                status, body = page_for(settings, self.path, since=since, engine=engine)
            except Exception as exc:  # noqa: BLE001 - one failed page is a 500 and a line, the server goes on
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                status, body = HTTPStatus.INTERNAL_SERVER_ERROR, f"reading the warehouse failed: {first}\n"
            data = body.encode("utf-8")
            self.send_response(status)
            kind = "text/html" if status == HTTPStatus.OK else "text/plain"
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")  # every page reads the warehouse as it is now
            self.end_headers()
            self.wfile.write(data)
            log(f"dashboard: GET {urllib.parse.unquote(self.path)} {status.value} "
                f"({len(data) / 1024:,.0f} KiB) in {time.monotonic() - started:.2f}s")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
            """Silenced: do_GET logs one line per page with its time instead."""

    return ThreadingHTTPServer((host, port), Handler)
