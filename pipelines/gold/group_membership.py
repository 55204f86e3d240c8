"""gold.group_membership: SCD2 rows of each group's members, from the records listing them.

The table's whole definition: ``TABLE`` (schema, key, clustering, properties) and its incremental strategy. Its
rows are the replay's ``membership`` rows (``history.classic`` for classic groups, ``history.consumer`` for KIP-848
ones: what each column means is decided there once), written by ``pipelines/gold/refresh.py``: a refresh replays
each group that gained records from all of its records and replaces that group's rows in one commit.
"""

from __future__ import annotations

from pyspark.sql import types as T

from history import MEMBERSHIP
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

TABLE = TableSpec(
    name="gold.group_membership",
    description=(
        "One row per member id seen in a classic group's GroupMetadata records (SCD2). Times are what records "
        "show: a member that joined and left within one rebalance never appears. KIP-848 members (group_type "
        "'consumer'): from their ConsumerGroupMemberMetadata record to its tombstone (left or fenced), one row "
        "per stay and subscription: a member record with other SubscribedTopicNames or SubscribedTopicRegex "
        "closes the row and opens the next one at the same time (a fenced member rejoining with its member id "
        "gets another row too). Share members (group_type 'share'): the same, without instance id, rebalance "
        "timeout or assignor. Streams members (group_type 'streams'): the same, one row per stay and topology "
        "epoch, with their process id and interactive-query endpoint."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("member_id", T.StringType(), "member id (client id or group.instance.id + '-' + UUID)", False),
        column("group_instance_id", T.StringType(), "static membership id (KIP-345); null for dynamic members"),
        column("client_id", T.StringType(), "client.id"),
        column("client_host", T.StringType(), "host the member connected from"),
        column("session_timeout_ms", T.IntegerType(),
               "session timeout (last record); null for KIP-848 members (a broker setting), except classic "
               "members of a consumer group (upgrade path)"),
        column("rebalance_timeout_ms", T.IntegerType(), "rebalance timeout, max.poll.interval.ms (last record)"),
        column("valid_from", T.TimestampType(),
               "first record listing it: its generation's start (currentStateTimestamp), or the record time of "
               "a static member swap. The JoinGroup itself was earlier and is not persisted", False),
        column("valid_to", T.TimestampType(),
               "the first later record without it (next generation's start, a swap, Empty or the tombstone): "
               "an upper bound of when it left; KIP-848: also the record that changed its subscription, "
               "where its next row starts; null while the row is current"),
        column("first_generation", T.IntegerType(),
               "first recorded generation listing it; KIP-848: the group epoch after its join", False),
        column("last_generation", T.IntegerType(),
               "last recorded generation listing it; KIP-848: the last group epoch it was a member in", False),
        column("group_type", T.StringType(),
               "'classic' (GroupMetadata records), 'consumer' (KIP-848, group.protocol=consumer: group epochs), "
               "'share' (KIP-932 share groups) or 'streams' (KIP-1071 streams groups)", False),
        column("rack_id", T.StringType(), "client.rack (KIP-848 members); null otherwise"),
        column("subscribed_topics", T.ArrayType(T.StringType(), False),
               "subscribed topic names as recorded (last record); KIP-848: SubscribedTopicNames, the same "
               "for the whole row (a change opens a new row)"),
        column("subscribed_topic_regex", T.StringType(),
               "KIP-848 regex subscription (SubscribedTopicRegex), the same for the whole row"),
        column("server_assignor", T.StringType(), "KIP-848 group.remote.assignor the member asked for, if any"),
        column("first_member_epoch", T.IntegerType(),
               "KIP-848: lowest member epoch in its current-assignment records during the stay; null for classic"),
        column("last_member_epoch", T.IntegerType(),
               "KIP-848: highest member epoch in its current-assignment records during the stay; null for classic"),
        column("process_id", T.StringType(), "streams members: the Kafka Streams process (processId); else null"),
        column("user_endpoint", T.StringType(),
               "streams members: host:port of the interactive-query endpoint (application.server); else null"),
        column("topology_epoch", T.IntegerType(),
               "streams members: the topology epoch they run, the same for the whole row; else null"),
    ]),
    key=("cluster_name", "group", "member_id", "valid_from"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
    replay_rows=MEMBERSHIP,
)
