"""Build the dashboard page from a warehouse: read, prepare, render, write."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conf.settings import Settings
from dashboard.data import (
    CHART_COLUMNS,
    RANKING_COLUMNS,
    ROW_FILTERS,
    VIEWS,
    DashboardData,
    Filters,
    build_data,
    charted_groups,
)
from dashboard.read import ReadReport, count_rows_by_group, read_tables
from dashboard.render import PageLinks, render_html


@dataclass(frozen=True)
class PageReport:
    html: str
    data: DashboardData
    read: ReadReport
    seconds: float


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


def build_page(settings: Settings, *, groups: Sequence[str] = (), since: int | None = None, engine: str = "auto",
               spark_factory: Callable[[], Any] | None = None, now: int | None = None,
               links: PageLinks | None = None) -> PageReport:
    """The page for ``settings.warehouse`` (``since``: epoch milliseconds), not written anywhere."""
    started = time.monotonic()
    filters = Filters(groups=tuple(groups), since=since)
    # Two reads: what ranks every group (a few rows each), then the charts' detail for the charted groups only.
    only = filters.groups or None
    tables, read = read_tables(settings, RANKING_COLUMNS, engine=engine, spark_factory=spark_factory,
                               filters=ROW_FILTERS, views=VIEWS, groups=only)
    sizes = count_rows_by_group(settings, CHART_COLUMNS, engine, spark_factory, groups=only)
    charted = charted_groups(tables, filters, sizes)
    detail, _ = read_tables(settings, CHART_COLUMNS, engine=engine, spark_factory=spark_factory,
                            groups=set(charted.values()), report=read)
    tables.update(detail)
    generated = now if now is not None else int(time.time() * 1000)
    data = build_data(tables, filters, now=generated, warehouse=settings.warehouse_uri, charted=set(charted))
    page = render_html(data, describe_filters(filters), links=links)
    return PageReport(html=page, data=data, read=read, seconds=time.monotonic() - started)


def build_dashboard(settings: Settings, out: Path, *, groups: Sequence[str] = (), since: int | None = None,
                    engine: str = "auto", spark_factory: Callable[[], Any] | None = None,
                    now: int | None = None) -> DashboardReport:
    """Write the page for ``settings.warehouse`` to ``out``; ``since`` is epoch milliseconds."""
    started = time.monotonic()
    page = build_page(settings, groups=groups, since=since, engine=engine, spark_factory=spark_factory, now=now)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page.html, encoding="utf-8")
    return DashboardReport(out=out, data=page.data, read=page.read, seconds=time.monotonic() - started)
