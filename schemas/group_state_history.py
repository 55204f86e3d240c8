"""gold.group_state_history: the states each classic group went through, as far as records show."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="gold.group_state_history",
    description=(
        "State sequence per group: Empty, CompletingRebalance, Stable, Dead. PreparingRebalance is never "
        "persisted and does not appear; CompletingRebalance only for generations that reached Stable."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("state", T.StringType(), "Empty | CompletingRebalance | Stable | Dead", False),
        column("at", T.TimestampType(), "when the group entered the state", False),
        column("until", T.TimestampType(), "when it entered the next recorded state; null while current"),
        column("generation", T.IntegerType(), "generation of the record (null for Dead)"),
        column("evidence", T.StringType(),
               "'current_state_timestamp' (Empty, CompletingRebalance: the record's field), 'record_time' "
               "(Stable: the assignment record's append time), 'tombstone' (Dead)", False),
    ]),
    key=("cluster_name", "group", "at", "state"),
)
