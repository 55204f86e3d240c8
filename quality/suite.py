"""What a data-quality suite declares: named rules, each a Great Expectations expectation with a severity.

Most rules here are cross-row invariants that GX has no built-in expectation for ("no partition owned
by two members in one generation"). They are written as a Spark SQL query that selects the violating
rows and checked with GX's ``UnexpectedRowsExpectation`` (it fails when the query returns rows, and
keeps up to 200 of them in its result, so a failure shows the offending rows). ``{batch}`` in a query
is the suite's table; other tables are read through temporary views named by :func:`view_name`
(``silver.group_metadata`` -> ``silver_group_metadata``). ``$name`` placeholders are filled from the
``[quality]`` settings (``string.Template``), e.g. ``$max_quarantine_rate``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from string import Template
from typing import TYPE_CHECKING, Literal

from conf.settings import QualitySettings
from schemas.table_spec import Constraint

if TYPE_CHECKING:
    from great_expectations.expectations import Expectation

Severity = Literal["critical", "warning"]


class Scope(Enum):
    """What a rule must see to judge a row: how much of a table a check of the increment reads for it
    (``quality.increment``)."""

    ROW = "row"  # the row alone (a WHERE on each row): the new rows
    GROUP = "group"  # every row of the row's consumer group, in its table and in each table it needs (windows, joins)
    TABLE = "table"  # the whole table (an aggregate over it)
GOLD_VIEW_SUFFIX = "_as_of_gold"


def view_name(table: str) -> str:
    """The temporary view a query reads ``table`` through: ``silver.offset_commits`` -> ``silver_offset_commits``."""
    return table.replace("@gold", GOLD_VIEW_SUFFIX).replace(".", "_")


def as_of_gold(table: str) -> str:
    """A silver table as gold last saw it, for gold-vs-silver rules: at the version gold's refresh commits
    record (``pipelines.gold.refresh.reflected_silver_versions``)."""
    return table + "@gold"


@dataclass(frozen=True)
class Rule:
    """One named expectation: what must hold, how bad a failure is, and why it must hold.

    ``expectation`` builds the GX expectation from the quality settings. ``table`` is the table it
    runs on (the suite's by default); ``needs`` are other tables its query reads (it is skipped
    when one does not exist yet). ``scope``: what it must see to judge a row (``Scope``; TABLE, the safe default,
    reads whole tables even in a check of the increment). ``constraint``: the Delta CHECK constraint that
    enforces the rule at every write (``schemas.table_spec.Constraint``); a table holding it cannot hold a
    violating row, so the check reports the rule passed without a scan (the query still runs on a table without
    it, e.g. one with rows from before, and on tables handed to the check as DataFrames).
    """

    name: str
    severity: Severity
    reason: str
    expectation: Callable[[QualitySettings], Expectation]
    table: str | None = None
    needs: tuple[str, ...] = ()
    constraint: Constraint | None = None
    scope: Scope = Scope.TABLE


@dataclass(frozen=True)
class Suite:
    """The rules of one module, named after it; ``table`` is the table most of them check."""

    name: str
    table: str
    rules: tuple[Rule, ...] = field(default_factory=tuple)

    def rule(self, name: str) -> Rule:
        return next(r for r in self.rules if r.name == name)

    def tables(self) -> set[str]:
        return {r.table or self.table for r in self.rules}


def unexpected_rows(query: str) -> Callable[[QualitySettings], Expectation]:
    """A rule whose query selects the violating rows: it passes when the query returns none."""

    def build(quality: QualitySettings) -> Expectation:
        import great_expectations as gx

        return gx.expectations.UnexpectedRowsExpectation(unexpected_rows_query=render_query(query, quality))

    return build


def enforced_by(constraint: Constraint, columns: str) -> Callable[[QualitySettings], Expectation]:
    """The query of a rule Delta enforces as ``constraint``: the rows it rejects, showing ``columns``."""
    return unexpected_rows(f"SELECT {columns} FROM {{batch}} WHERE {constraint.violated_when}")


def render_query(query: str, quality: QualitySettings) -> str:
    """Fill ``$name`` placeholders from the quality settings; ``{batch}`` is left for GX."""
    values = {name: getattr(quality, name) for name in type(quality).model_fields if name != "severity"}
    return Template(query).substitute(values)


def built_in(name: str, **kwargs: object) -> Callable[[QualitySettings], Expectation]:
    """A rule that is one of GX's own expectations, e.g. ``built_in("ExpectColumnValuesToBeInSet", ...)``."""

    def build(quality: QualitySettings) -> Expectation:
        import great_expectations as gx

        return getattr(gx.expectations, name)(**kwargs)

    return build
