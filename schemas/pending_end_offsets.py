"""silver.pending_end_offsets: end-offset snapshots the ingest has not yet passed (``pipelines.end_offsets``)."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas import partition_end_offsets
from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="silver.pending_end_offsets",
    description=(
        "Snapshots taken but not yet in silver.partition_end_offsets: each waits here until the ingest has read "
        "__consumer_offsets up to where it ended when the snapshot was taken, so that its lag is computed from "
        "every commit made before it; promoted (and removed from here) by the lag refresh."
    ),
    schema=T.StructType([
        *partition_end_offsets.TABLE.schema.fields,
        column("offsets_topic_end", T.MapType(T.IntegerType(), T.LongType(), False),
               "__consumer_offsets partition -> its end for a read_committed consumer (ListOffsets LATEST, "
               "READ_COMMITTED), read after the snapshot's own offsets: the ingest's planned end offsets must reach "
               "these before the snapshot's lag is computed", False),
    ]),
    key=partition_end_offsets.TABLE.key,
)
