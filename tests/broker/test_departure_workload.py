"""broker/departure_workload.py on the background broker: gold's stop bounds and departure causes against what
the clients lived through (issue 12, items 3 and 4).

The groups run in the run's real-traffic warehouse (tests/real_traffic.py), beside the demo's. The
expected values are the clients' own records -- the moment the test called ``close()`` or sent SIGKILL,
the remaining member's revocation and assignment callbacks, which member went and how -- never gold's
output. Clocks: the broker stamps its records with the same machine's wall clock the callbacks read.

What must hold, from the protocol:

* every member that stopped for a rebalance did so within ``[stopped_at_lower_bound,
  stopped_at_upper_bound]``, and nobody resumed before ``stable_at``;
* the members commit several times a second until they stop, so the lower bound is within a couple
  of seconds of the first stop (the previous record, which the bound used to start from, is further
  back than that by design: each departure comes more than a second after the group settled);
* a member that closed (LeaveGroup) right after committing cannot have expired: ``member_left``,
  although it had been in the group longer than its session timeout; a SIGKILLed member stopped
  committing a session timeout before the coordinator removed it, which an idle member's LeaveGroup
  would look like too: ``member_left_or_vanished``; a static member back after its removal:
  ``static_member_returned``.
"""

from __future__ import annotations

import datetime as dt

import pytest

from broker.departure_workload import SESSION_TIMEOUT_MS

# Slack for the clocks' resolutions (record timestamps are in ms) and for callbacks that run at the
# client's next poll (up to one 0.1 s poll later) rather than at the protocol moment.
TOLERANCE = 0.3
# How far before the first stop the lower bound may be: the members' commit cadence (several a
# second) plus a loaded machine's scheduling delays. The previous record is further back.
LOWER_BOUND_SLACK = 2.0


@pytest.fixture(scope="module")
def departures(real_traffic_warehouse):  # type: ignore[no-untyped-def]
    return real_traffic_warehouse.departures


def seconds(moment: dt.datetime) -> float:
    # collect() gives naive local datetimes (pyspark's fromtimestamp): .timestamp() reads them back as such
    return moment.timestamp()


def rebalances(departures, group: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return sorted((r for r in departures.gold.rebalances if r["group"] == group and r["event_type"] == "rebalance"),
                  key=lambda r: r["stable_at"])


def departure_of(departures, group: str) -> dict:  # type: ignore[no-untyped-def]
    gone = departures.departures[group].gone_member
    (event,) = [r for r in rebalances(departures, group) if any(m.startswith(gone) for m in r["members_left"])]
    return event


def assert_bounds_hold(event: dict, first_stop: float, other_stop: float, resumed: float) -> None:
    lower, upper = seconds(event["stopped_at_lower_bound"]), seconds(event["stopped_at_upper_bound"])
    stable = seconds(event["stable_at"])
    # both stops lie within the bounds; the remaining member resumed no sooner than stable_at
    assert lower - TOLERANCE <= first_stop <= upper + TOLERANCE, (lower, first_stop, upper)
    assert lower - TOLERANCE <= other_stop <= upper + TOLERANCE, (lower, other_stop, upper)
    assert resumed >= stable - TOLERANCE, (resumed, stable)
    # and the lower bound is the members' last commits, not a record written before the group settled
    assert lower >= first_stop - LOWER_BOUND_SLACK, (lower, first_stop)
    assert seconds(event["last_stable_at"]) < first_stop - 1.0  # the old, looser starting point
    # the upper bound on how long they stopped is what the first stop to the remaining member's resumption took
    assert event["stopped_ms_upper_bound"] / 1000 <= resumed - first_stop + LOWER_BOUND_SLACK + TOLERANCE
    assert event["stopped_ms_lower_bound"] >= 0


def test_a_member_that_closed_is_a_leave_and_the_bounds_hold_what_the_clients_lived_through(departures) -> None:  # type: ignore[no-untyped-def]
    d = departures.departures[departures.groups.leave]
    event = departure_of(departures, d.group)
    assert event["members_left"] == [d.gone_member]
    # In the group for longer than its session timeout, but it committed just before it went.
    assert d.gone_at - seconds(event["last_stable_at"]) > SESSION_TIMEOUT_MS / 1000
    assert event["likely_cause"] == "member_left"
    assert_bounds_hold(event, d.gone_at, d.stayer_stopped_at, d.stayer_resumed_at)


def test_a_killed_member_is_not_called_a_leave_and_its_rebalance_waited_out_the_session(departures) -> None:  # type: ignore[no-untyped-def]
    d = departures.departures[departures.groups.kill]
    event = departure_of(departures, d.group)
    assert event["likely_cause"] == "member_left_or_vanished"
    assert_bounds_hold(event, d.gone_at, d.stayer_stopped_at, d.stayer_resumed_at)
    # the coordinator removed it a session timeout after its last heartbeat: the join completed no sooner
    assert seconds(event["stopped_at_upper_bound"]) >= d.gone_at + SESSION_TIMEOUT_MS / 1000 - 1.0


def test_a_static_member_removed_after_its_session_expired_and_back_returned(departures) -> None:  # type: ignore[no-untyped-def]
    d = departures.departures[departures.groups.static_return]
    gone = departure_of(departures, d.group)
    assert gone["members_left"] == [d.gone_member]
    # It committed until it closed, but sent no LeaveGroup (static): removed a session timeout later.
    assert gone["likely_cause"] == "member_left_or_vanished"
    assert_bounds_hold(gone, d.gone_at, d.stayer_stopped_at, d.stayer_resumed_at)
    assert d.returned_at is not None and d.return_stopped_at is not None and d.return_resumed_at is not None
    (back,) = [r for r in rebalances(departures, d.group) if seconds(r["stable_at"]) > d.returned_at]
    assert back["likely_cause"] == "static_member_returned"
    assert len(back["members_joined"]) == 1 and back["members_joined"] != gone["members_left"]  # a new member id
    # Nobody left this time: the first to stop was the member that stayed.
    assert_bounds_hold(back, d.return_stopped_at, d.return_stopped_at, d.return_resumed_at)
