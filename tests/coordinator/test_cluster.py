"""Topics in a scenario: log end offsets grow at the produce rate; added partitions start empty."""

from __future__ import annotations

import pytest

from coordinator.cluster import Cluster, Topic


def test_log_end_offsets_start_with_the_initial_records_and_grow_at_the_produce_rate() -> None:
    cluster = Cluster([Topic("t", 2, produce_rate=10, initial_records=5)], start_ms=1000)
    assert cluster.log_end_offset("t", 1, 1000) == 5
    assert cluster.log_end_offset("t", 1, 3500) == 5 + 25  # 2.5 s at 10 records/s


def test_added_partitions_start_empty_and_partitions_never_shrink() -> None:
    cluster = Cluster([Topic("t", 2, produce_rate=10, initial_records=5)], start_ms=0)
    cluster.add_partitions("t", 3, now=10_000)
    assert cluster.partition_counts() == {"t": 3}
    assert cluster.log_end_offset("t", 2, 12_000) == 20 and cluster.log_end_offset("t", 0, 12_000) == 125
    with pytest.raises(ValueError, match="cannot grow"):
        cluster.add_partitions("t", 2, now=20_000)
