"""A simulated clock and the event queue that drives a run.

Everything in a simulation (scenario actions, broker timers, client timers, request and response
delivery) is an event at an integer epoch-millisecond time. Events at the same time run in the
order they were scheduled, so a run is a pure function of its scenario and seed.

Keyed timers mirror Kafka's ``CoordinatorTimer.schedule(key, ...)``: scheduling a key that is
already pending replaces it, and ``cancel(key)`` drops it
(``coordinator-common/.../runtime/CoordinatorTimer.java``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(eq=False)
class _Event:
    at: int
    seq: int
    action: Callable[[], None]
    key: str | None = None
    cancelled: bool = False


class SimulatedClock:
    """Current time plus the queue of future events."""

    def __init__(self, start_ms: int = 0):
        self._now = start_ms
        self._queue: list[tuple[int, int, _Event]] = []  # (at, seq, event): tuples compare fast
        self._seq = 0
        self._keyed: dict[str, _Event] = {}

    @property
    def now(self) -> int:
        return self._now

    def at(self, when_ms: int, action: Callable[[], None], key: str | None = None) -> None:
        """Run ``action`` at ``when_ms`` (never earlier than now); a key replaces its pending event."""
        if key is not None:
            self.cancel(key)
        event = _Event(max(when_ms, self._now), self._seq, action, key)
        self._seq += 1
        heapq.heappush(self._queue, (event.at, event.seq, event))
        if key is not None:
            self._keyed[key] = event

    def after(self, delay_ms: int, action: Callable[[], None], key: str | None = None) -> None:
        self.at(self._now + max(0, delay_ms), action, key)

    def cancel(self, key: str) -> None:
        event = self._keyed.pop(key, None)
        if event is not None:
            event.cancelled = True

    def run_until(self, end_ms: int) -> None:
        """Run every event due at or before ``end_ms`` (events may schedule more), then stop
        with the clock at ``end_ms``."""
        while self._queue and self._queue[0][0] <= end_ms:
            event = heapq.heappop(self._queue)[2]
            if event.cancelled:
                continue
            if event.key is not None and self._keyed.get(event.key) is event:
                del self._keyed[event.key]
            self._now = event.at
            event.action()
        self._now = max(self._now, end_ms)
