"""gold.partition_assignments: SCD2, one row per partition per member per generation."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="gold.partition_assignments",
    description="Which member owned which partition, generation by generation, from the stored assignments.",
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("topic", T.StringType(), "assigned topic", False),
        column("partition", T.IntegerType(), "assigned partition", False),
        column("member_id", T.StringType(), "owner member id", False),
        column("client_id", T.StringType(), "owner client.id"),
        column("group_instance_id", T.StringType(), "owner's static membership id, if any"),
        column("generation", T.IntegerType(), "generation of the assignment", False),
        column("valid_from", T.TimestampType(),
               "the assignment was stored: append time of the first record with it (Stable, or a static swap)",
               False),
        column("valid_to", T.TimestampType(),
               "the first later record without it (next generation's start, swap, Empty, tombstone); null while "
               "current. An upper bound: eager members revoke when the rebalance starts, which is not persisted"),
    ]),
    key=("cluster_name", "group", "generation", "member_id", "topic", "partition"),
)
