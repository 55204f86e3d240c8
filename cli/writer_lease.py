"""The writing commands' side of the writer lease (``pipelines/writer_lease.py``; not a subcommand).

``ingest``, ``run``, ``gold``, ``lag`` and ``validate`` each take the lease of their warehouse and cluster before
Spark starts and hold it until they end (that module's docstring says which commands do and why); here a refusal,
a loss and a renewal's trouble become offsetlake's one-line messages.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from cli.console import say
from cli.errors import CommandError

if TYPE_CHECKING:
    from conf.settings import Settings
    from pipelines.writer_lease import LeaseLost


@contextlib.contextmanager
def writer_lease_held(settings: Settings, command: str, stop: threading.Event | None = None) -> Iterator[None]:
    """Hold the lease for the block, or raise CommandError naming its holder. ``stop``: the command's stop event
    (``cli.ingest.stop_requested_by_signals``), set if the lease is lost, so that it stops after its current batch;
    without one, the command runs its step to the end. Either way a lost lease exits 1."""
    from pipelines.spark_session import check_local_warehouse
    from pipelines.writer_lease import LeaseError, hold

    check_local_warehouse(settings)  # first: the lease table is made in the warehouse (WarehouseError otherwise)

    def warn(line: str) -> None:
        say("", f"offsetlake: warning: {line}", level=logging.WARNING)

    def lost(exc: LeaseLost) -> None:
        warn(f"{exc}; stopping {'after the current batch' if stop is not None else 'at the end of this step'}")
        if stop is not None:
            stop.set()

    try:
        with _sigterm_interrupts(), hold(settings, f"offsetlake {command}", on_trouble=warn, on_lost=lost):
            yield
    except LeaseError as exc:
        raise CommandError(str(exc)) from None  # our own refusal: nothing for the debug log


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM as Ctrl-C for a command that has no handler of its own (``gold``, ``lag``, ``validate``): a scheduler
    stops a task with SIGTERM, and the lease is then released on the way out instead of left to expire."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
