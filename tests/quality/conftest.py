"""The quality tests' real warehouse: the run's real-traffic warehouse (tests/real_traffic.py).

Its quality part: a classic group (two members, range) that reads a topic and leaves; an admin
reset of its offsets to 0 while it is Empty, then the group reads everything again; a KIP-848
group; two end-offset snapshots around more messages. Beside it, the demo workload's groups
(crash, static restart, cooperative, ...). Then what a scheduler runs: ingest, gold, lag.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def warehouse(real_traffic_warehouse):  # type: ignore[no-untyped-def]
    quality = real_traffic_warehouse.quality
    return {"settings": real_traffic_warehouse.settings, "topic": quality.topic, "classic": quality.classic,
            "modern": quality.modern}
