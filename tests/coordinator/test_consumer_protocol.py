"""The subscription and assignment bytes our members carry equal the Java client's
(``ConsumerProtocol.serialize*``, ``StickyAssignor``/``CooperativeStickyAssignor`` user data)."""

from __future__ import annotations

import random

from coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from coordinator.assignors.sticky import StickyAssignor
from coordinator.consumer_protocol import Assignment, subscription
from coordinator.topic_partition import TopicPartition
from decoders import encode_assignment, encode_subscription
from tests.coordinator.oracle import run_oracle

TOPICS = ["orders", "payments", "a", "b.c", "t0", "zeta", "Ünïcode"]


def _tps(partitions: list[TopicPartition]) -> str:
    return ",".join(f"{tp.topic}:{tp.partition}" for tp in partitions) or "-"


def _random_partitions(rng: random.Random) -> list[TopicPartition]:
    return [TopicPartition(rng.choice(TOPICS), rng.randrange(12)) for _ in range(rng.randrange(8))]


def test_subscriptions_assignments_and_assignor_user_data_are_byte_identical_to_javas(
    protocol_oracle: list[str],
) -> None:
    rng = random.Random(5)
    requests, expected = [], []
    for _ in range(150):
        topics = rng.sample(TOPICS, rng.randint(1, 4))
        owned = list(dict.fromkeys(_random_partitions(rng)))
        generation = rng.choice([-1, 0, 3, 120])
        user_data = rng.choice([None, b"", bytes(rng.getrandbits(8) for _ in range(5))])
        requests.append(
            f"SUB {','.join(topics)} {_tps(owned)} {generation} {'-' if user_data is None else user_data.hex() or '-'}"
        )
        if user_data == b"":
            user_data = None  # "-" means null on the Java side too
        expected.append(encode_subscription(subscription(topics, user_data, owned, generation).as_record_dict()).hex())

        assigned = list(dict.fromkeys(_random_partitions(rng)))
        requests.append(f"ASG {_tps(assigned)}")
        expected.append(encode_assignment(Assignment(tuple(assigned)).as_record_dict()).hex())

        sticky = StickyAssignor()
        sticky.on_assignment(assigned, generation)
        requests.append(f"STICKY {generation} {_tps(assigned)}")
        expected.append(sticky.subscription_user_data(set(topics)).hex())

        coop = CooperativeStickyAssignor()
        coop.on_assignment([], generation)
        requests.append(f"COOP {generation}")
        expected.append(coop.subscription_user_data(set(topics)).hex())
    actual = run_oracle(protocol_oracle, "\n".join(requests) + "\n").splitlines()
    mismatches = [(r, e, a) for r, e, a in zip(requests, expected, actual, strict=True) if e != a]
    assert not mismatches, f"{len(mismatches)} differ; first: {mismatches[0]}"
