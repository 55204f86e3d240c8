"""What every table module in ``schemas/`` declares: a name, a place, a schema with comments."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import types as T

CHANGE_DATA_FEED: tuple[str, str] = ("delta.enableChangeDataFeed", "true")
"""The property that makes Delta keep a table's change data feed: set on the silver tables gold refreshes from,
which it reads from the versions after the last one it reflects (pipelines/gold/refresh.py). An append-only
table's feed costs nothing at write time: Delta reads its inserts from the files the appends added."""


def column(name: str, data_type: T.DataType, comment: str, nullable: bool = True) -> T.StructField:
    """A column with its one-line description (Delta keeps it as the column comment)."""
    return T.StructField(name, data_type, nullable, {"comment": comment})


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
