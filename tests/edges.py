"""What the failure tests point offsetlake at: a Kafka address nothing answers on, a server that accepts connections
and never answers, a directory no one may write, a disk with no room left. Real sockets and real file systems."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def closed_address() -> Iterator[str]:
    """``127.0.0.1:<port>`` of a socket bound and not listening: every connection is refused while the block
    runs (no other process can take the port meanwhile)."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{bound.getsockname()[1]}"


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """``127.0.0.1:<port>`` of a server that accepts every connection and never sends a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            accepted.append(connection)

    thread = threading.Thread(target=accept, name="silent-server", daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=5)
        for connection in accepted:
            connection.close()


def _mount_tmpfs(path: Path, options: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")


def _unmount(path: Path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True, check=True)


@contextlib.contextmanager
def read_only_directory(path: Path) -> Iterator[Path]:
    """``path`` as a directory this process may not write: mode 0555, or, for root (whom no mode stops), a
    read-only tmpfs mounted there."""
    if os.geteuid() != 0:
        path.mkdir(parents=True)
        path.chmod(0o555)
        try:
            yield path
        finally:
            path.chmod(0o755)
        return
    _mount_tmpfs(path, "ro,size=64k")
    try:
        yield path
    finally:
        _unmount(path)


@contextlib.contextmanager
def full_directory(path: Path) -> Iterator[Path]:
    """``path`` as a directory of a file system with no room left (a small tmpfs, filled): root only."""
    if os.geteuid() != 0:
        pytest.skip("a full file system needs a tmpfs mount, which only root may make")
    _mount_tmpfs(path, "size=256k")
    try:
        with open(path / "filler", "wb", buffering=0) as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 4096)
        with pytest.raises(OSError) as full, open(path / "probe", "wb", buffering=0) as probe:
            probe.write(b"\0" * 4096)
        assert full.value.errno == errno.ENOSPC
        (path / "probe").unlink()
        yield path
    finally:
        _unmount(path)
