"""pipelines/writer_lease.py: one writer per warehouse and cluster, decided by a conditional Delta commit.

Real leases in a real Delta table (delta-rs on a local warehouse), real threads and processes racing for them; no
Spark, no broker. The commands that take the lease are tested in tests/cli/test_writer_lease.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conf.settings import ConfigError, Settings, WriterSettings, load_settings
from pipelines.writer_lease import (
    LeaseError,
    LeaseHeld,
    LeaseLost,
    WriterLease,
    acquire,
    current_lease,
    hold,
    lease_table_uri,
    release,
    renew,
)

ROOT = Path(__file__).resolve().parents[2]

#: A process that holds a lease until its stdin closes (then releases it) and prints its pid first.
HOLDER = """
import sys
from conf.settings import Settings, WriterSettings
from pipelines.writer_lease import hold

settings = Settings(warehouse=sys.argv[1], cluster_name=sys.argv[2], writer=WriterSettings(lease_seconds=60))
with hold(settings, "offsetlake ingest"):
    print("held", flush=True)
    sys.stdin.read()
"""

#: A process that, at each of the start times given, tries to take the lease of a new warehouse (one per round).
RACER = """
import json, sys, time
from conf.settings import Settings
from pipelines.writer_lease import LeaseHeld, acquire

base, starts = sys.argv[1], json.loads(sys.argv[2])
for round, start in enumerate(starts):
    time.sleep(max(0.0, start - time.time()))
    settings = Settings(warehouse=f"{base}/round-{round}", cluster_name="racing")
    try:
        lease = acquire(settings, "racer")
        print(json.dumps({"round": round, "won": lease.holder}), flush=True)
    except LeaseHeld as held:
        print(json.dumps({"round": round, "refused_by": held.lease.holder}), flush=True)
"""


def settings_in(tmp_path: Path, cluster: str = "east", lease_seconds: float = 60.0) -> Settings:
    # model_construct: a test may ask for a lease below the setting's minimum (an expiry without a long wait).
    return Settings(warehouse=str(tmp_path / "warehouse"), cluster_name=cluster,
                    writer=WriterSettings.model_construct(lease_seconds=lease_seconds))


def python(script: str, *args: str, **popen: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", script, *args], env=env, text=True, cwd=ROOT,
                            **popen)  # type: ignore[call-overload]


@pytest.fixture
def holder_process(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding cluster east's lease of ``tmp_path``'s warehouse."""
    process = python(HOLDER, str(tmp_path / "warehouse"), "east", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "held"
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_second_writer_of_a_cluster_is_refused_naming_the_first_and_other_clusters_are_free(
        tmp_path: Path, holder_process: subprocess.Popen[str]) -> None:
    east = settings_in(tmp_path)
    with pytest.raises(LeaseHeld) as refused:
        acquire(east, "offsetlake run")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"cluster east's tables in {east.warehouse_uri} are being written by 'offsetlake ingest' "
                              f"(pid {holder_process.pid} on {socket.gethostname()}, since ")
    left = re.search(r"; stop that process, or, if it was killed, start this again once its lease expires in (\d+) s "
                     r"\(writer.lease_seconds\)$", message)
    assert left is not None and 30 <= int(left.group(1)) <= 60, message
    assert (refused.value.lease.pid, refused.value.lease.host) == (holder_process.pid, socket.gethostname())

    west = acquire(east.model_copy(update={"cluster_name": "west"}), "offsetlake run")
    assert west.cluster_name == "west"

    # The holder ends normally: its lease is released, and free at once (not at its expiry, a minute away).
    assert holder_process.stdin is not None
    holder_process.stdin.close()
    assert holder_process.wait(timeout=30) == 0
    released = current_lease(east)
    assert released is not None and released.released_at is not None and released.expires_at > released.released_at
    assert acquire(east, "offsetlake run").pid == os.getpid()


def test_an_expired_lease_is_taken_over_and_its_holder_finds_it_lost(tmp_path: Path) -> None:
    short = settings_in(tmp_path, lease_seconds=0.5)  # below the setting's minimum: expiry without waiting long
    killed = acquire(short, "offsetlake run")  # never renewed, as if its process had been killed
    with pytest.raises(LeaseHeld):
        acquire(short, "offsetlake ingest")
    time.sleep(0.6)
    successor = acquire(short, "offsetlake ingest")
    assert successor.holder != killed.holder and successor.command == "offsetlake ingest"
    with pytest.raises(LeaseLost, match=r"lost the writer lease of cluster east in .*: 'offsetlake ingest' \(pid "):
        renew(short, killed)
    assert release(short, killed) is False  # not its own any more: the successor's lease stays
    assert current_lease(short).holder == successor.holder  # type: ignore[union-attr]


def test_a_released_lease_is_free_at_once(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    first = acquire(settings, "offsetlake gold")
    assert release(settings, first) is True
    second = acquire(settings, "offsetlake lag")
    assert second.holder != first.holder and second.acquired_at < first.expires_at
    assert release(settings, first) is False


def race(settings: Settings, racers: int) -> tuple[list[WriterLease], list[LeaseHeld], list[BaseException]]:
    """``racers`` threads let go at once, each trying to take the lease: who won, who was refused, what failed."""
    start = threading.Barrier(racers)
    won: list[WriterLease] = []
    refused: list[LeaseHeld] = []
    errors: list[BaseException] = []

    def attempt() -> None:
        start.wait()
        try:
            won.append(acquire(settings, "racer"))
        except LeaseHeld as held:
            refused.append(held)
        except BaseException as exc:  # noqa: BLE001 - the caller asserts there is none
            errors.append(exc)

    threads = [threading.Thread(target=attempt) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return won, refused, errors


def test_threads_racing_for_one_lease_have_exactly_one_winner_each_round(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    racers = 4
    for round in range(12):
        won, refused, errors = race(settings, racers)
        assert not errors and len(won) == 1 and len(refused) == racers - 1, (round, won, refused, errors)
        assert all(held.lease.holder == won[0].holder for held in refused)
        release(settings, won[0])
    # The commits did race: every loser of a commit leaves its data file behind, uncommitted (vacuumed later).
    from deltalake import DeltaTable

    table = DeltaTable(lease_table_uri(settings))
    written = sum(entry.get("operationMetrics", {}).get("num_added_files", 0) for entry in table.history())
    on_disk = len(list(Path(lease_table_uri(settings)).glob("*.parquet")))
    assert on_disk > written, "no commit was lost to another: the threads did not race"


def test_processes_racing_for_a_new_warehouses_lease_have_exactly_one_winner_each_round(tmp_path: Path) -> None:
    """Each round on a warehouse without a lease table, so that the table's creation races too."""
    rounds, racers = 5, 3
    first = time.time() + 2.0  # the processes' start-up (Python, delta-rs) before the first round
    starts = json.dumps([first + 0.3 * i for i in range(rounds)])
    processes = [python(RACER, str(tmp_path), starts, stdout=subprocess.PIPE) for _ in range(racers)]
    results = []
    for process in processes:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        results += [json.loads(line) for line in out.splitlines()]
    for round in range(rounds):
        outcomes = [r for r in results if r["round"] == round]
        winners = [r["won"] for r in outcomes if "won" in r]
        assert len(outcomes) == racers and len(winners) == 1, outcomes
        assert all(r["refused_by"] == winners[0] for r in outcomes if "refused_by" in r)


def test_a_held_lease_is_renewed_by_its_holder_and_released_when_the_block_ends(tmp_path: Path) -> None:
    settings = settings_in(tmp_path, lease_seconds=3.0)  # renewed every second
    with hold(settings, "offsetlake run") as lease:
        time.sleep(1.5)
        renewed = current_lease(settings)
        assert renewed is not None and renewed.holder == lease.holder
        assert renewed.renewed_at > lease.acquired_at and renewed.expires_at > lease.expires_at
        with pytest.raises(LeaseHeld):
            acquire(settings, "offsetlake ingest")
    ended = current_lease(settings)
    assert ended is not None and ended.released_at is not None
    acquire(settings, "offsetlake ingest")


def test_a_lease_taken_from_its_holder_is_reported_lost_and_raised_when_the_block_ends(tmp_path: Path) -> None:
    settings = settings_in(tmp_path, lease_seconds=3.0)
    lost: list[LeaseLost] = []
    noticed = threading.Event()

    def on_lost(exc: LeaseLost) -> None:
        lost.append(exc)
        noticed.set()

    with pytest.raises(LeaseLost) as raised, hold(settings, "offsetlake run", on_lost=on_lost) as lease:
        # Just after a renewal (a second before the next), another process finds the lease free, as after a pause of
        # the holder longer than the lease, and takes it.
        deadline = time.monotonic() + 10
        while current_lease(settings).renewed_at == lease.renewed_at and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.05)
        release(settings, current_lease(settings))  # type: ignore[arg-type]
        successor = acquire(settings, "offsetlake ingest")
        assert noticed.wait(10), "the holder's next renewal did not notice"
    assert lost == [raised.value]
    message = str(raised.value)
    assert message.startswith(f"lost the writer lease of cluster east in {settings.warehouse_uri}: ")
    # Taken (or, if the renewal came between the release and the take-over, released by another process).
    assert message.endswith((f"'offsetlake ingest' (pid {os.getpid()} on {socket.gethostname()}, since "
                             f"{successor.acquired_at:%Y-%m-%d %H:%M:%S} UTC) holds it now",
                             "it was released or removed by another process")), message
    assert current_lease(settings).holder == successor.holder  # type: ignore[union-attr]


def test_renewals_that_fail_are_reported_and_the_lease_is_lost_once_it_expires(tmp_path: Path) -> None:
    settings = settings_in(tmp_path, lease_seconds=3.0)
    trouble: list[str] = []
    lost: list[LeaseLost] = []
    noticed = threading.Event()
    table = Path(lease_table_uri(settings))

    def on_lost(exc: LeaseLost) -> None:
        lost.append(exc)
        noticed.set()

    with pytest.raises(LeaseLost), hold(settings, "offsetlake run", on_trouble=trouble.append, on_lost=on_lost):
        # The table becomes unreadable (storage gone wrong): a file where its directory was.
        shutil.move(table, table.with_name("moved"))
        table.write_text("not a Delta table")
        assert noticed.wait(10)
    assert trouble and all(line.startswith(f"could not renew the writer lease of cluster east in "
                                           f"{settings.warehouse_uri} (") for line in trouble)
    assert all("\n" not in line for line in trouble)
    [expired] = lost
    assert re.search(r": not renewed before it expired at \d\d:\d\d:\d\d UTC \(.+\)$", str(expired)), str(expired)


def test_an_unreachable_warehouse_is_one_line_naming_it(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    settings = Settings(warehouse=str(blocked / "warehouse"), cluster_name="east")
    with pytest.raises(LeaseError) as raised:
        acquire(settings, "offsetlake run")
    message = str(raised.value)
    assert "\n" not in message and "\x1b" not in message
    assert message.startswith(f"warehouse {settings.warehouse_uri} cannot be read or written for its writer lease (")
    assert message.endswith("check the setting warehouse and the storage.delta_rs options")


def test_the_lease_is_a_setting_checked_like_the_others(tmp_path: Path) -> None:
    assert load_settings(config_file=None, environ={}).writer.lease_seconds == 60.0
    config = tmp_path / "offsetlake.toml"
    config.write_text("[writer]\nlease_seconds = 20\n", encoding="utf-8")
    assert load_settings(config, environ={}).writer.lease_seconds == 20.0
    assert load_settings(config, environ={"OFFSETLAKE_WRITER__LEASE_SECONDS": "7.5"}).writer.lease_seconds == 7.5
    with pytest.raises(ConfigError) as raised:
        load_settings(config, environ={"OFFSETLAKE_WRITER__LEASE_SECONDS": "1"})
    assert str(raised.value) == ("setting writer.lease_seconds = 1.0 (from env OFFSETLAKE_WRITER__LEASE_SECONDS) is "
                                 "invalid: expected a number of seconds >= 3 (the lease is renewed every third of it)")
    example = load_settings(ROOT / "conf" / "offsetlake.example.toml", environ={})
    assert example.writer == WriterSettings()
    assert "`writer.lease_seconds`" in (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
