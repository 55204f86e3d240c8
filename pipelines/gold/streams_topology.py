"""gold.streams_topology: the topics of each streams group's topology, one row per topic, subtopology and epoch.

The table's whole definition: ``TABLE`` (schema, key, clustering, properties) and its incremental strategy. Its
rows are the replay's ``topology`` rows (``history.streams``, from StreamsGroupTopology records), written by
``pipelines/gold/refresh.py`` like the other group tables: a refresh replays each group that gained records from
all of its records and replaces that group's rows in one commit.
"""

from __future__ import annotations

from pyspark.sql import types as T

from history import TOPOLOGY
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

TABLE = TableSpec(
    name="gold.streams_topology",
    description=(
        "Streams groups only (KIP-1071, group_type 'streams'): the topology the group runs, as its "
        "StreamsGroupTopology records declare it: per topology epoch, each subtopology's source topics (or "
        "regexes), repartition source and sink topics and state changelog topics. A new topology record "
        "closes the rows of the previous one (an application upgraded to a new topology)."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "streams group id (application.id)", False),
        column("incarnation", T.IntegerType(), "0 for the group's first life; +1 after each group tombstone", False),
        column("topology_epoch", T.IntegerType(), "the topology's epoch (the members' topology.epoch)", False),
        column("subtopology_id", T.StringType(), "subtopology id, as tasks name it", False),
        column("topic_role", T.StringType(),
               "'source', 'source_regex' (a source pattern, not a topic), 'repartition_source', "
               "'repartition_sink' or 'changelog'", False),
        column("topic", T.StringType(), "topic name as recorded; a pattern for 'source_regex'", False),
        column("partitions", T.IntegerType(),
               "declared partitions of a repartition source or changelog topic (0: derived by the coordinator "
               "from the source topics); null for the other roles"),
        column("replication_factor", T.ShortType(),
               "declared replication factor of an internal topic (-1: the broker default); null otherwise"),
        column("valid_from", T.TimestampType(), "append time of the topology record", False),
        column("valid_to", T.TimestampType(),
               "the next topology record, its tombstone or the group's; null while current"),
        column("group_type", T.StringType(), "'streams' (the only group type with a topology)", False),
    ]),
    key=("cluster_name", "group", "valid_from", "subtopology_id", "topic_role", "topic"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
    replay_rows=TOPOLOGY,
)
