"""One writer at a time per warehouse and cluster: a lease row in a small Delta table, taken before Spark starts.

Why: two processes writing one cluster's tables break what Delta's optimistic concurrency does not decide:
two streaming queries on the same checkpoint, a table created by both at once
(DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION), clustering metadata added by both ("A conflicting metadata domain
delta.clustering is added"), and a run that then ingests nothing. A second writer is refused at its start, in one
line naming the holder, before it has started a JVM or made anything.

Where: ``<warehouse>/_offsetlake/writer_leases``, one row per ``cluster_name`` (``WriterLease``), written with
delta-rs: no JVM, and any URI delta-rs writes (a local path, ``hdfs://``, ``s3a://``, ``abfss://``, ``gs://``, with
``storage.delta_rs``); never a file lock on the warehouse. Read with delta-rs's own query engine into arro3
arrays: pyarrow's dataset module imports pandas, seconds of a refusal's start on a loaded machine.

The protocol. Delta commits version N+1 by creating its log entry only if it does not exist yet (put-if-absent:
a create or rename that fails on an existing entry on local disks and HDFS, a conditional write on object stores;
on S3 delta-rs 1.x uses S3's conditional writes, and an S3-compatible store without them cannot decide the race;
tested here on the local disk and on HDFS, tests/cluster/test_cluster.py). Every lease write is
committed with no retries (``max_commit_retries=0``), so it succeeds only if the table is still at the version
it was read at: a compare-and-swap on the table's version.

- acquire: read the cluster's row at version N. Held by another (not released, ``expires_at`` ahead) -> refused
  (``LeaseHeld``). Absent, released or expired -> write our row as N+1. Of two acquirers that read N exactly one
  creates N+1; the other's commit fails (``CommitFailedError``), it reads again, finds the winner's row and is
  refused. A failed commit for another reason (another cluster's row written at that moment) is retried from
  the read, a few times.
- renew: every third of ``writer.lease_seconds``, from a daemon thread of the holder: read; our row (same
  ``holder``, a token per acquisition) -> write it with a new ``expires_at``; anyone else's, or none -> lost. A
  renewal that fails (storage unreachable) is reported and tried again at the next tick; once the lease has
  expired without one, it is lost too, since a successor may now take it. Lost (``LeaseLost``): ``on_lost`` is
  called, and the commands stop after their current batch or step and exit 1.
- release: on leaving ``hold`` (a normal end, an error, Ctrl-C, the commands' SIGTERM): ``released_at`` is set
  and the lease is free at once. A ``kill -9``'s lease is free once it expires, ``writer.lease_seconds`` after
  its last renewal.

Limits. Expiry compares the holder's ``expires_at`` with the reader's clock: the hosts' clocks must agree to well
within a lease (NTP). There is no fencing: a holder frozen past its lease (a suspended VM) goes on writing after
its successor started, until its next renewal finds the lease gone; Delta's own conflict checks are then all
that stands between them. Gold's query has one checkpoint for the whole warehouse (``<warehouse>/_checkpoints/gold``)
while leases are per cluster: two clusters' writers on one warehouse still both refresh gold. Only the commands
take the lease: code calling the pipelines directly (the tests, ``demo``) does not.

Which commands hold it (``cli/writer_lease.py``): those that write a cluster's tables or its streaming checkpoints
-- ``ingest`` (bronze, silver, their checkpoints), ``run`` (all of them), ``gold`` (the gold tables and gold's
checkpoint, which ``run`` refreshes too), ``lag`` unless ``--no-refresh`` (gold.consumer_lag and its state store's
checkpoint, per cluster), ``validate`` (ingests its topic, refreshes gold). Not: ``maintain`` (OPTIMIZE and VACUUM
change no rows, create no table and have no checkpoint: Delta's conflict checks decide between them and a writer,
and the daily maintenance must be able to run beside a continuous ``run``), ``snapshot-end-offsets`` (blind appends
to silver.partition_end_offsets, which never conflict; it runs every minute beside the ingest by design),
``check`` (reads; appends its results), ``demo`` (a warehouse of its own: it refuses a directory it did not
make), and the readers (``sql``, ``serve-sql``, ``dashboard``).

Housekeeping: each write leaves the row's previous file behind; the holder vacuums the table (its own
``delta.deletedFileRetentionDuration`` of an hour) when it releases and every hour it holds, and delta-rs
drops log entries older than a day at its checkpoints.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import math
import os
import random
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conf.settings import Settings
from pipelines.storage import join

if TYPE_CHECKING:
    from deltalake import DeltaTable

#: The lease table, under the warehouse.
LEASE_TABLE = "_offsetlake/writer_leases"
#: Lease commits lost in a row to other commits (other clusters' leases, a vacuum) before an attempt gives up.
COMMIT_ATTEMPTS = 8
#: How often a holder vacuums the lease table while it holds the lease.
VACUUM_EVERY_SECONDS = 3600.0
#: The lease table's properties: files a write replaced go after an hour, log entries after a day.
TABLE_PROPERTIES = (("delta.deletedFileRetentionDuration", "interval 1 hours"),
                    ("delta.logRetentionDuration", "interval 1 days"))
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class WriterLease:
    """One row of the lease table: which process writes a cluster's tables in the warehouse, and until when."""

    cluster_name: str
    holder: str  # a token per acquisition: tells apart two processes of one pid on two hosts, or one pid reused
    command: str  # e.g. "offsetlake run"
    host: str
    pid: int
    acquired_at: dt.datetime  # UTC, as every time here
    renewed_at: dt.datetime
    expires_at: dt.datetime  # free for another writer from then on, if not renewed
    released_at: dt.datetime | None = None  # set by the holder when it ends: free at once

    def held_at(self, now: dt.datetime) -> bool:
        """Whether the lease keeps others out at ``now``."""
        return self.released_at is None and now < self.expires_at

    def seconds_left(self, now: dt.datetime) -> int:
        """Whole seconds until it expires (0 if it has)."""
        return max(0, math.ceil((self.expires_at - now).total_seconds()))

    def holder_named(self) -> str:
        """``'offsetlake run' (pid 4242 on host-a, since <its acquisition time> UTC)``."""
        return f"'{self.command}' (pid {self.pid} on {self.host}, since {self.acquired_at:%Y-%m-%d %H:%M:%S} UTC)"


class LeaseError(RuntimeError):
    """The lease could not be read or written; the message is one line, shown to the user as is."""


class LeaseHeld(LeaseError):
    """Another process holds the cluster's lease: this one must not write."""

    def __init__(self, settings: Settings, lease: WriterLease, now: dt.datetime) -> None:
        self.lease = lease
        super().__init__(f"cluster {settings.cluster_name}'s tables in {settings.warehouse_uri} are being written by "
                         f"{lease.holder_named()}; stop that process, or, if it was killed, start this again once "
                         f"its lease expires in {lease.seconds_left(now)} s (writer.lease_seconds)")


class LeaseLost(LeaseError):
    """The lease this process held is no longer its own: it must stop writing."""

    def __init__(self, settings: Settings, lease: WriterLease, why: str) -> None:
        self.lease = lease
        super().__init__(f"lost the writer lease of cluster {settings.cluster_name} in {settings.warehouse_uri}: "
                         f"{why}")


def lease_table_uri(settings: Settings) -> str:
    return join(settings.warehouse_uri, LEASE_TABLE)


def one_line(exc: BaseException) -> str:
    """An exception as one line: delta-rs's messages span lines, indented and coloured."""
    text = " ".join(_ANSI.sub("", str(exc)).split())
    return text[:300] if text else type(exc).__name__


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _storage_options(settings: Settings) -> dict[str, str] | None:
    return dict(settings.storage.delta_rs) or None


def _schema() -> Any:
    import arro3.core as arrow

    time_type = arrow.DataType.timestamp("us", tz="UTC")
    return arrow.Schema([
        arrow.Field("cluster_name", arrow.DataType.string(), False),
        arrow.Field("holder", arrow.DataType.string(), False),
        arrow.Field("command", arrow.DataType.string(), False),
        arrow.Field("host", arrow.DataType.string(), False),
        arrow.Field("pid", arrow.DataType.int64(), False),
        arrow.Field("acquired_at", time_type, False),
        arrow.Field("renewed_at", time_type, False),
        arrow.Field("expires_at", time_type, False),
        arrow.Field("released_at", time_type, True),
    ])


@contextlib.contextmanager
def _storage_errors(settings: Settings) -> Iterator[None]:
    """delta-rs's failures to reach the table (``OSError``, ``DeltaError``: a wrong address, missing credentials, a
    file where a directory should be) as one ``LeaseError`` line."""
    from deltalake.exceptions import DeltaError

    try:
        yield
    except (OSError, DeltaError) as exc:
        raise LeaseError(f"warehouse {settings.warehouse_uri} cannot be read or written for its writer lease "
                         f"({one_line(exc)}); check the setting warehouse and the storage.delta_rs options") from exc


def _existing(settings: Settings) -> DeltaTable | None:
    """The lease table at its newest version; None if the warehouse has none."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(lease_table_uri(settings), storage_options=_storage_options(settings))
    except TableNotFoundError:
        return None


def _open(settings: Settings) -> DeltaTable:
    """The lease table at its newest version, created first if the warehouse has none."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError

    table = _existing(settings)
    if table is not None:
        return table
    uri, options = lease_table_uri(settings), _storage_options(settings)
    try:
        DeltaTable.create(uri, _schema(), mode="ignore", name="writer_leases",
                          description="offsetlake's writer leases: which process writes each cluster's tables "
                                      "(pipelines/writer_lease.py)",
                          configuration=dict(TABLE_PROPERTIES), storage_options=options)
    except DeltaError:
        if not DeltaTable.is_deltatable(uri, storage_options=options):
            raise
        # else another process created it at the same moment
    return DeltaTable(uri, storage_options=options)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _read(table: DeltaTable, cluster_name: str) -> WriterLease | None:
    """The cluster's row at the version ``table`` was loaded at."""
    from deltalake import QueryBuilder

    rows = (QueryBuilder().register("leases", table)
            .execute(f"SELECT * FROM leases WHERE cluster_name = {_quoted(cluster_name)}").read_all())
    if not rows.num_rows:
        return None
    columns = {name: rows.column(name).to_pylist() for name in rows.column_names}
    leases = [WriterLease(**{f.name: columns[f.name][i] for f in dataclasses.fields(WriterLease)})
              for i in range(rows.num_rows)]
    return max(leases, key=lambda lease: lease.renewed_at)  # one row per cluster: every write replaces it


def _micros(moment: dt.datetime) -> int:
    return (moment - _EPOCH) // dt.timedelta(microseconds=1)


def _row(lease: WriterLease) -> Any:
    import arro3.core as arrow

    schema = _schema()
    columns: dict[str, Any] = {}
    for f in dataclasses.fields(WriterLease):
        value = getattr(lease, f.name)
        field_type = schema.field(f.name).type
        if arrow.DataType.is_timestamp(field_type):
            columns[f.name] = arrow.Array([None if value is None else _micros(value)],
                                          arrow.DataType.int64()).cast(field_type)
        else:
            columns[f.name] = arrow.Array([value], field_type)
    return arrow.Table.from_pydict(columns, schema=schema)


def _committed(table: DeltaTable, lease: WriterLease) -> bool:
    """Write ``lease`` as the cluster's row in the version after the one ``table`` was loaded at; False if another
    commit took that version first."""
    from deltalake import CommitProperties, write_deltalake
    from deltalake.exceptions import CommitFailedError

    try:
        write_deltalake(table, _row(lease), mode="overwrite",
                        predicate=f"cluster_name = {_quoted(lease.cluster_name)}",
                        commit_properties=CommitProperties(max_commit_retries=0))
    except CommitFailedError:
        return False
    return True


def _pause(attempt: int) -> None:
    """A short random wait before reading again, so that retries of racing writers spread out."""
    time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))


def _busy(settings: Settings) -> LeaseError:
    return LeaseError(f"the writer lease table {lease_table_uri(settings)} took another commit {COMMIT_ATTEMPTS} times "
                      "in a row; try again")


def acquire(settings: Settings, command: str) -> WriterLease:
    """Take the cluster's lease for this process, or raise ``LeaseHeld`` naming its holder."""
    holder = uuid.uuid4().hex
    with _storage_errors(settings):
        for attempt in range(COMMIT_ATTEMPTS):
            table = _open(settings)
            now = _now()
            current = _read(table, settings.cluster_name)
            if current is not None and current.holder == holder:
                return current  # an earlier attempt's commit landed after all
            if current is not None and current.held_at(now):
                raise LeaseHeld(settings, current, now)
            lease = WriterLease(cluster_name=settings.cluster_name, holder=holder, command=command,
                                host=socket.gethostname(), pid=os.getpid(), acquired_at=now, renewed_at=now,
                                expires_at=now + dt.timedelta(seconds=settings.writer.lease_seconds))
            if _committed(table, lease):
                return lease
            _pause(attempt)
    raise _busy(settings)


def renew(settings: Settings, lease: WriterLease) -> WriterLease:
    """Extend our lease by ``writer.lease_seconds`` from now; ``LeaseLost`` if it is no longer ours."""
    with _storage_errors(settings):
        for attempt in range(COMMIT_ATTEMPTS):
            table = _existing(settings)
            now = _now()
            current = None if table is None else _read(table, lease.cluster_name)
            if table is None or current is None or current.released_at is not None:
                raise LeaseLost(settings, lease, "it was released or removed by another process")
            if current.holder != lease.holder:
                raise LeaseLost(settings, lease, f"{current.holder_named()} holds it now")
            renewed = dataclasses.replace(current, renewed_at=now,
                                          expires_at=now + dt.timedelta(seconds=settings.writer.lease_seconds))
            if _committed(table, renewed):
                return renewed
            _pause(attempt)
    raise _busy(settings)


def release(settings: Settings, lease: WriterLease) -> bool:
    """Free our lease at once; False if it was not ours any more."""
    with _storage_errors(settings):
        for attempt in range(COMMIT_ATTEMPTS):
            table = _existing(settings)
            current = None if table is None else _read(table, lease.cluster_name)
            if table is None or current is None or current.holder != lease.holder or current.released_at is not None:
                return False
            if _committed(table, dataclasses.replace(current, released_at=_now())):
                return True
            _pause(attempt)
    raise _busy(settings)


def current_lease(settings: Settings) -> WriterLease | None:
    """The cluster's row as it is now (held, expired or released), or None if it never had one."""
    with _storage_errors(settings):
        table = _existing(settings)
        return None if table is None else _read(table, settings.cluster_name)


def vacuum(settings: Settings) -> None:
    """Delete the lease table's files that left it (or were never committed) more than an hour ago."""
    with _storage_errors(settings):
        table = _existing(settings)
        if table is not None:
            table.vacuum(dry_run=False)


class _Renewal(threading.Thread):
    """The holder's renewals, every third of the lease, until ``finish()`` or the lease is lost."""

    def __init__(self, settings: Settings, lease: WriterLease, on_trouble: Callable[[str], None],
                 on_lost: Callable[[LeaseLost], None]) -> None:
        super().__init__(name="offsetlake-writer-lease", daemon=True)
        self.settings = settings
        self.lease = lease
        self.lost: LeaseLost | None = None
        self._on_trouble = on_trouble
        self._on_lost = on_lost
        self._finishing = threading.Event()

    def finish(self) -> None:
        self._finishing.set()
        self.join(timeout=max(10.0, self.settings.writer.lease_seconds))

    def run(self) -> None:
        interval = self.settings.writer.lease_seconds / 3
        last_vacuum = time.monotonic()
        wait = interval
        while not self._finishing.wait(wait):
            try:
                self.lease = renew(self.settings, self.lease)
            except LeaseLost as lost:
                self._lose(lost)
                return
            except Exception as exc:  # noqa: BLE001 - storage trouble: reported, and tried again
                if self._finishing.is_set():
                    return
                now = _now()
                if not self.lease.held_at(now):
                    self._lose(LeaseLost(self.settings, self.lease, "not renewed before it expired at "
                                         f"{self.lease.expires_at:%H:%M:%S} UTC ({one_line(exc)})"))
                    return
                # Again after a third of the lease, or, if it expires sooner, once more just after it does.
                wait = min(interval, (self.lease.expires_at - now).total_seconds() + 0.01)
                self._on_trouble(f"could not renew the writer lease of cluster {self.settings.cluster_name} in "
                                 f"{self.settings.warehouse_uri} ({one_line(exc)}); trying again in {wait:.1f} s, "
                                 f"it expires in {self.lease.seconds_left(now)} s")
                continue
            wait = interval
            if time.monotonic() - last_vacuum >= VACUUM_EVERY_SECONDS:
                last_vacuum = time.monotonic()
                try:
                    vacuum(self.settings)
                except Exception as exc:  # noqa: BLE001 - the next vacuum tries again; nothing depends on it
                    self._on_trouble(f"could not vacuum {lease_table_uri(self.settings)} ({one_line(exc)})")

    def _lose(self, lost: LeaseLost) -> None:
        if not self._finishing.is_set():
            self.lost = lost
            self._on_lost(lost)


@contextlib.contextmanager
def hold(settings: Settings, command: str, *, on_trouble: Callable[[str], None] = lambda line: None,
         on_lost: Callable[[LeaseLost], None] = lambda lost: None) -> Iterator[WriterLease]:
    """Hold the cluster's lease for the block: acquired on entry (``LeaseHeld`` if another process holds it),
    renewed by a daemon thread, released on leaving, however the block ends.

    ``on_trouble(line)``: a renewal or the release failed and is left to the next try or to the expiry (one line,
    from the renewal's thread or this one). ``on_lost(lost)``: the lease is gone (called from the renewal's
    thread, once); the block should stop writing soon, and ``LeaseLost`` is raised when it ends without an error
    of its own.
    """
    lease = acquire(settings, command)
    renewal = _Renewal(settings, lease, on_trouble, on_lost)
    renewal.start()
    try:
        yield lease
    finally:
        renewal.finish()
        if renewal.lost is None and not renewal.is_alive():
            try:
                release(settings, renewal.lease)
                vacuum(settings)
            except Exception as exc:  # noqa: BLE001 - the lease expires by itself
                on_trouble(f"could not release the writer lease of cluster {settings.cluster_name} in "
                           f"{settings.warehouse_uri} ({one_line(exc)}); it expires in "
                           f"{renewal.lease.seconds_left(_now())} s")
    if renewal.lost is not None:
        raise renewal.lost
