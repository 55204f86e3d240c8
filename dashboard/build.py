"""Build the dashboard page from a warehouse: read, prepare, render, write."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conf.settings import Settings
from dashboard.data import COLUMNS, ROW_FILTERS, VIEWS, DashboardData, Filters, build_data
from dashboard.read import ReadReport, read_tables
from dashboard.render import render_html


@dataclass(frozen=True)
class DashboardReport:
    out: Path
    data: DashboardData
    read: ReadReport
    seconds: float


def describe_filters(filters: Filters) -> str:
    parts = []
    if filters.groups:
        parts.append("groups " + ", ".join(filters.groups))
    if filters.since is not None:
        parts.append("since " + time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(filters.since / 1000)))
    return "; ".join(parts)


def build_dashboard(settings: Settings, out: Path, *, groups: Sequence[str] = (), since: int | None = None,
                    engine: str = "auto", spark_factory: Callable[[], Any] | None = None,
                    now: int | None = None) -> DashboardReport:
    """Write the page for ``settings.warehouse`` to ``out``; ``since`` is epoch milliseconds."""
    started = time.monotonic()
    filters = Filters(groups=tuple(groups), since=since)
    tables, read = read_tables(settings, COLUMNS, engine=engine, spark_factory=spark_factory,
                               filters=ROW_FILTERS, views=VIEWS)
    generated = now if now is not None else int(time.time() * 1000)
    data = build_data(tables, filters, now=generated, warehouse=settings.warehouse_uri)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(data, describe_filters(filters)), encoding="utf-8")
    return DashboardReport(out=out, data=data, read=read, seconds=time.monotonic() - started)
