"""The simulated clock: events in time order, same-time events in scheduling order, keyed timers."""

from __future__ import annotations

from coordinator.clock import SimulatedClock


def test_events_run_in_time_order_and_ties_in_the_order_they_were_scheduled() -> None:
    clock, seen = SimulatedClock(100), []
    clock.at(130, lambda: seen.append("c"))
    clock.at(110, lambda: seen.append("a"))
    clock.at(110, lambda: seen.append("b"))
    clock.run_until(200)
    assert seen == ["a", "b", "c"] and clock.now == 200


def test_scheduling_a_key_again_replaces_the_pending_event_and_cancel_drops_it() -> None:
    clock, seen = SimulatedClock(0), []
    clock.after(10, lambda: seen.append("first"), key="k")
    clock.after(20, lambda: seen.append("second"), key="k")
    clock.after(5, lambda: seen.append("x"), key="x")
    clock.cancel("x")
    clock.run_until(100)
    assert seen == ["second"]


def test_events_can_schedule_more_events_and_nothing_runs_in_the_past() -> None:
    clock, seen = SimulatedClock(0), []
    clock.at(10, lambda: clock.at(5, lambda: seen.append(clock.now)))
    clock.run_until(50)
    assert seen == [10]
