"""broker/group_clients.py: real share consumers and Kafka Streams instances join, leave and crash, and the
Admin client shows it.

What the tests expect comes from KIP-932 and KIP-1071, not from the clients' output: a share group's members
between them are assigned every partition of the topic; a streams group runs each task of each subtopology
on exactly one member, and a standby task never on the member running it; a member that closes is gone at
once (it sent a leave heartbeat), a member killed with SIGKILL stays listed until its session times out
(6 s on the test broker, broker/embedded.py) and is then fenced.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from broker.embedded import EmbeddedBroker
from broker.group_clients import GroupAdmin, GroupClients, settled_share_group, settled_streams_group
from broker.workload import create_topic, produce_messages

pytestmark = [pytest.mark.broker, pytest.mark.jvm_process]

SESSION_TIMEOUT_S = 6.0
#: A killed member is fenced a session timeout after its last heartbeat, which a loaded machine may have
#: delayed by a second or two: half the session timeout still tells a fencing from a leave (seen at once).
FENCED_NO_SOONER_THAN_S = SESSION_TIMEOUT_S / 2


@pytest.fixture(scope="module")
def clients(kafka_broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> GroupClients:
    return GroupClients.compile(tmp_path_factory.mktemp("group-clients"), kafka_broker.bootstrap_servers)


@pytest.fixture(scope="module")
def admin(clients: GroupClients) -> Iterator[GroupAdmin]:
    with clients.admin() as admin:
        yield admin


def _topic(clients: GroupClients, prefix: str, partitions: int) -> str:
    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    config = {"bootstrap.servers": clients.bootstrap_servers}
    create_topic(config, topic, partitions)
    produce_messages(config, topic, 12, partitions)
    return topic


def _clients_of(description: dict) -> list[str]:  # type: ignore[type-arg]
    return sorted(m["client_id"] for m in description["members"])


def _fenced_after_session_timeout(wait_gone) -> float:  # type: ignore[no-untyped-def]
    """Seconds from the kill until the member was gone (``wait_gone`` waits for that)."""
    killed = time.monotonic()
    wait_gone()
    return time.monotonic() - killed


def test_a_share_consumer_joins_and_is_assigned_every_partition_and_receives_records(clients, admin) -> None:
    group, topic = f"share-{uuid.uuid4().hex[:8]}", _topic(clients, "share", 3)
    admin.set_group_config(group, share_auto_offset_reset="earliest")
    with clients.share_member(group, "solo", topic, rack="rack-1") as member:
        described = admin.wait_for_share_group(group, settled_share_group(1, {(topic, p) for p in range(3)}))
        deadline = time.monotonic() + 60
        while not any(line.startswith("polled") for line in member.lines) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert any(line.startswith("polled") for line in member.lines)
    assert described["state"] == "STABLE" and described["group_epoch"] >= 1
    (solo,) = described["members"]
    assert (solo["client_id"], solo["rack_id"]) == ("solo", "rack-1")
    assert solo["assignment"] == [{"topic": topic, "partition": p} for p in range(3)]


def test_a_share_consumer_that_closes_leaves_at_once_and_one_killed_is_fenced_after_its_session(clients,
                                                                                                admin) -> None:
    group, topic = f"share-{uuid.uuid4().hex[:8]}", _topic(clients, "share", 3)
    partitions = {(topic, p) for p in range(3)}
    with clients.share_member(group, "a", topic) as a, clients.share_member(group, "b", topic) as b, \
            clients.share_member(group, "c", topic) as c:
        three = admin.wait_for_share_group(group, settled_share_group(3, partitions))
        assert _clients_of(three) == ["a", "b", "c"]
        assert b.stop() == 0
        assert _clients_of(admin.describe_share_group(group)) == ["a", "c"]  # the first look after close()
        c.kill()
        assert _clients_of(admin.describe_share_group(group)) == ["a", "c"]  # still there: nobody told the broker
        waited = _fenced_after_session_timeout(
            lambda: admin.wait_for_share_group(group, settled_share_group(1, partitions)))
        assert waited >= FENCED_NO_SOONER_THAN_S
        one = admin.describe_share_group(group)
        assert _clients_of(one) == ["a"] and one["group_epoch"] > three["group_epoch"]
        assert a.stop() == 0
    empty = admin.wait_for_share_group(group, lambda d: d["state"] == "EMPTY")
    assert empty["members"] == []
    assert admin.delete_share_group(group) == {"ok": True}
    assert admin.describe_share_group(group)["state"] == "DEAD"


def test_a_streams_group_runs_each_task_once_keeps_standbys_apart_and_fences_a_killed_instance(clients,
                                                                                             admin) -> None:
    group = f"streams-{uuid.uuid4().hex[:8]}"
    source = _topic(clients, "streams-in", 3)
    # The timings too: with a group config of its own, a streams group's are GroupConfig's static defaults
    # (tests/history/capture_group_records.py says why).
    admin.set_group_config(group, streams_num_standby_replicas=1, streams_session_timeout_ms=6000,
                           streams_heartbeat_interval_ms=500)
    with clients.streams_member(group, "a", source, f"{source}-out") as a, \
            clients.streams_member(group, "b", source, f"{source}-out") as b:
        two = admin.wait_for_streams_group(group, settled_streams_group(2))
        subtopologies = {s["subtopology_id"]: s for s in two["subtopologies"]}
        assert subtopologies["0"]["source_topics"] == [source]
        assert subtopologies["0"]["repartition_sink_topics"] == [f"{group}-by-value-repartition"]
        assert list(subtopologies["1"]["repartition_source_topics"]) == [f"{group}-by-value-repartition"]
        assert list(subtopologies["1"]["state_changelog_topics"]) == [f"{group}-counts-changelog"]
        active = [(t["subtopology_id"], p) for m in two["members"] for t in m["assignment"]["active"]
                  for p in t["partitions"]]
        assert sorted(active) == [(s, p) for s in ("0", "1") for p in range(3)]  # every task exactly once
        for m in two["members"]:
            mine = {(t["subtopology_id"], p) for t in m["assignment"]["active"] for p in t["partitions"]}
            standby = {(t["subtopology_id"], p) for t in m["assignment"]["standby"] for p in t["partitions"]}
            assert not mine & standby
            assert {s for s, _ in standby} <= {"1"}  # only the stateful subtopology has standbys
        assert sum(len(t["partitions"]) for m in two["members"] for t in m["assignment"]["standby"]) == 3
        assert {m["process_id"] for m in two["members"]} and len({m["process_id"] for m in two["members"]}) == 2

        c = clients.streams_member(group, "c", source, f"{source}-out")
        with c:
            admin.wait_for_streams_group(group, settled_streams_group(3))
            assert b.stop() == 0
            assert len(admin.describe_streams_group(group)["members"]) == 2  # the first look after close()
            c.kill()
            waited = _fenced_after_session_timeout(
                lambda: admin.wait_for_streams_group(group, settled_streams_group(1)))
            assert waited >= FENCED_NO_SOONER_THAN_S
        (survivor,) = admin.describe_streams_group(group)["members"]
        assert survivor["client_id"].startswith("a-")  # Streams names its consumer <client.id>-StreamThread-1-consumer
        assert sorted((t["subtopology_id"], p) for t in survivor["assignment"]["active"] for p in t["partitions"]) \
            == [(s, p) for s in ("0", "1") for p in range(3)]
        assert a.stop() == 0
    assert admin.wait_for_streams_group(group, settled_streams_group(0))["members"] == []
    assert admin.delete_streams_group(group) == {"ok": True}


def test_a_client_that_cannot_start_says_so_in_one_line(clients) -> None:
    from broker.group_clients import GroupClientError, Member

    broken = Member("broken", clients.command("broken", "no-such-mode"))
    with pytest.raises(GroupClientError, match=r"broken did not start .*exit code 1.*unknown mode no-such-mode") as e:
        broken.start(timeout=60)
    assert "\n" not in str(e.value)
