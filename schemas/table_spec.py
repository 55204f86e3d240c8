"""What every table module in ``schemas/`` declares: a name, a place, a schema with comments."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark.sql import types as T

CHANGE_DATA_FEED: tuple[str, str] = ("delta.enableChangeDataFeed", "true")
"""The property that makes Delta keep a table's change data feed: set on the silver tables gold refreshes from,
which it reads from the versions after the last one it reflects (pipelines/gold/refresh.py). An append-only
table's feed costs nothing at write time: Delta reads its inserts from the files the appends added."""


DELETION_VECTORS: tuple[str, str] = ("delta.enableDeletionVectors", "true")
"""Deletion vectors on the gold tables a refresh MERGEs into or replaces groups of: a row deleted from a file is
marked in a small side file instead of the whole file being rewritten, so the write costs what changed (the gain
on bench/gold.py's warehouse is recorded in CHANGELOG.md). delta-rs reads them through DataFusion."""

GROUP_CLUSTERING: tuple[str, ...] = ("cluster_name", "group")
"""Liquid clustering of the gold tables and of silver's group tables: rows of one group together (Delta 4,
``CLUSTER BY``; OPTIMIZE, i.e. ``offsetlake maintain``, lays the files out). A refresh reads the silver records
of the groups that changed and replaces or MERGEs their gold rows, and the dashboards ask for one group: with
files clustered by group, each skips the files of other groups by their column statistics.
Not on silver.offset_commits and bronze: they are partitioned by date, which clustering excludes."""


class Incremental(enum.Enum):
    """How a refresh brings a gold table up to date with what silver gained: declared by the table's module beside
    its schema, key and build step, as a dbt model declares its ``incremental_strategy``.

    ``pipelines/gold/refresh.py`` writes each gold table by the strategy it declares (a test holds every gold
    table to one); ``offsetlake run --once`` and ``refresh`` re-run any of them idempotently after a kill.
    """

    MERGE_LATEST_PER_KEY = "MERGE the newest new record of each key; a re-applied or older record changes nothing"
    RECOUNT_TOUCHED_KEYS = "recount the keys the new records fall in from silver, and MERGE the counts"
    REPLACE_TOUCHED_GROUPS = ("replay each group with new records from all of its records (history/), and replace "
                              "that group's rows in one Delta commit (replaceWhere)")
    APPEND_NEW_SNAPSHOTS = "append the rows of the end-offset snapshots newer than the table's newest (per snapshot id)"


def column(name: str, data_type: T.DataType, comment: str, nullable: bool = True) -> T.StructField:
    """A column with its one-line description (Delta keeps it as the column comment)."""
    return T.StructField(name, data_type, nullable, {"comment": comment})


@dataclass(frozen=True)
class Constraint:
    """A row rule Delta enforces at every write: a CHECK constraint named ``name`` on the table.

    Written as the condition a row *violates* it on (``violated_when``, SQL over the table's columns), the way a
    data-quality query selects offending rows; the constraint Delta holds is ``expression``. Delta rejects a row
    whose CHECK is false *or null*, where a query's WHERE keeps only true: ``expression`` maps an unknown
    violation (a null column) to "holds", as the query does, so the table and the query agree on every row.
    A write with a violating row fails whole (Delta's DELTA_VIOLATE_CONSTRAINT_WITH_VALUES names the row), so
    only rules that hold by construction of offsetlake's own code are constraints: a failure is a bug, not bad
    input (https://docs.delta.io/latest/delta-constraints.html).
    """

    name: str
    violated_when: str

    @property
    def expression(self) -> str:
        return f"NOT coalesce(({' '.join(self.violated_when.split())}), false)"

    @property
    def property_key(self) -> str:
        """Where Delta keeps it among the table's properties."""
        return f"delta.constraints.{self.name.lower()}"

    def held_in(self, properties: Mapping[str, str]) -> bool:
        """Whether a table's ``properties`` hold this constraint as it is now (Delta keeps the expression as
        its parser's tokens joined by spaces -- ``coalesce ( lag , 0 )`` -- so spaces are not compared)."""
        held = properties.get(self.property_key)
        return held is not None and "".join(held.split()) == "".join(self.expression.split())


@dataclass(frozen=True)
class TableSpec:
    """A Delta table of the warehouse.

    ``name`` is ``layer.table`` (``silver.offset_commits``); the table lives at
    ``<warehouse>/<layer>/<table>``. ``key`` lists the columns that identify a
    row, used by tests and data-quality checks.
    """

    name: str
    description: str
    schema: T.StructType
    partition_by: tuple[str, ...] = ()
    key: tuple[str, ...] = field(default_factory=tuple)
    #: Delta table properties the table is created with, and an existing table is given
    #: (pipelines/delta_tables.py ``ensure_table``, ``evolve_table``), e.g. deletion vectors on a MERGE target.
    properties: tuple[tuple[str, str], ...] = ()
    #: Row rules Delta enforces at write (CHECK constraints), added by ``ensure_table``/``evolve_table``; the
    #: data-quality rule naming one (``quality.suite.Rule.constraint``) needs no scan of a table that holds it.
    constraints: tuple[Constraint, ...] = ()
    #: Liquid clustering columns (Delta ``CLUSTER BY``), given to a table made before by ``evolve_table``; a
    #: table has either these or ``partition_by``.
    cluster_by: tuple[str, ...] = ()
    #: How a refresh keeps the table current (gold tables; None: written by the ingest or a snapshot as they come).
    incremental: Incremental | None = None
    #: The kind of the group replay's rows the table holds (``history.KINDS``; the group tables only).
    replay_rows: str | None = None

    def constraint(self, name: str) -> Constraint:
        return next(c for c in self.constraints if c.name == name)

    @property
    def layer(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def table(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def relative_path(self) -> str:
        return f"{self.layer}/{self.table}"

    def describe(self) -> dict[str, str]:
        """Column name -> description, for docs and ``offsetlake tables``."""
        return {f.name: f.metadata.get("comment", "") for f in self.schema.fields}
