"""Argument types of the ``offsetlake`` subcommands: each checks its value while the command line is parsed.

A bad value is then argparse's one-line usage error (exit 2) naming the option, the value and what is
expected, before any settings file is read or a JVM starts, instead of a failure from Spark, librdkafka or
the reference coordinator once the work has begun. Each type is an ``argparse`` ``type=`` callable: it takes
the text and returns the value, or raises ``argparse.ArgumentTypeError``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import re
from collections.abc import Callable

from conf.settings import BOOTSTRAP_SERVERS

_INTEGER = re.compile(r"[+-]?\d+")


def whole_number(minimum: int, maximum: int | None = None, meaning: str = "") -> Callable[[str], int]:
    """A whole number from ``minimum`` (to ``maximum``); ``meaning`` is said after the range, e.g. "(0: all)"."""
    expected = (f"a whole number from {minimum} to {maximum}" if maximum is not None
                else f"a whole number >= {minimum}") + (f" {meaning}" if meaning else "")

    def parse(text: str) -> int:
        if not _INTEGER.fullmatch(text.strip()):
            raise argparse.ArgumentTypeError(f"{text!r} is not {expected}")
        value = int(text)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{text!r} is not {expected}")
        return value

    return parse


def seconds(allow_zero: bool, meaning: str = "") -> Callable[[str], float]:
    """A finite number of seconds, > 0 (or >= 0 with ``allow_zero``); no nan, no inf (``float()`` takes both)."""
    expected = ("a number of seconds >= 0" if allow_zero else "a positive number of seconds") + (
        f" {meaning}" if meaning else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {expected}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"{text!r} is not {expected}")
        return value

    return parse


# Spark's interval units (IntervalUtils.stringToInterval: the whole word, optionally plural). A streaming
# trigger refuses months and years (ProcessingTimeTrigger), and only seconds may have a fraction.
_INTERVAL_TERM = r"(?:\d+\s+(?:week|day|hour|minute|second|millisecond|microsecond)s?|(?:\d+\.\d*|\.\d+)\s+seconds?)"
_INTERVAL = re.compile(rf"\s*{_INTERVAL_TERM}(?:\s+{_INTERVAL_TERM})*\s*", re.IGNORECASE)


def trigger_interval(text: str) -> str:
    """A Structured Streaming processing-time trigger as Spark takes it ("30 seconds", "1 minute 30 seconds",
    "500 milliseconds"), returned unchanged; a form Spark would refuse is refused here, when it is typed."""
    if not _INTERVAL.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration such as '30 seconds', '500 milliseconds' or '2 minutes' (a number and "
            "a unit: milliseconds, seconds, minutes, hours or days)")
    return text.strip()


def iso_time(text: str) -> int:
    """An ISO 8601 date or time (UTC unless it has an offset) as epoch milliseconds."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 date or time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000)


def bootstrap_servers(text: str) -> str:
    """``host:port[,host:port...]``, as the kafka.bootstrap_servers setting is checked."""
    if not BOOTSTRAP_SERVERS.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not host:port[,host:port...]")
    return text


def kafka_version(text: str) -> str:
    """A broker release line the reference coordinator writes records for ("4.2"), returned unchanged."""
    from coordinator.records import KafkaVersion

    try:
        KafkaVersion.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Kafka version from {KafkaVersion.SUPPORTED} such as 4.2") from None
    return text
