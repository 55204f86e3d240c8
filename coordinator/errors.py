"""The Kafka error codes the group protocols answer with (``common/protocol/Errors.java``)."""

from __future__ import annotations

from enum import Enum


class Errors(Enum):
    NONE = 0
    UNKNOWN_SERVER_ERROR = -1
    UNKNOWN_TOPIC_OR_PARTITION = 3
    OFFSET_METADATA_TOO_LARGE = 12
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    FENCED_MEMBER_EPOCH = 110

    @property
    def code(self) -> int:
        return self.value


class KafkaError(Exception):
    """An error a request handler answers with (Java's ``Errors.X.exception()``)."""

    def __init__(self, error: Errors, message: str = ""):
        super().__init__(f"{error.name}{': ' + message if message else ''}")
        self.error = error
