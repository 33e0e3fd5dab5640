"""explore's record of each test call on the wire: a FIFO made for one test run and read while the
run goes (a pipe's buffer holds 64 KiB: a suite of thousands of tests would block its writer), its
lines handed to decide/witness.parse.

The FIFO is left writable, not readable, by its owner once explore holds its reading end: a test
process that wanted to take the plugin's lines out of it first has to change its mode. explore holds
a writing end too, so the stream never ends before explore says so (the test process and its
children come and go). Nothing secret passes: the stream's shape is what is checked."""

from __future__ import annotations

import os
import secrets
import select
import threading
from pathlib import Path

from ..decide.witness import ENV, Record, parse

CHUNK = 1 << 16


class Channel:
    """One test run's stream: open it (`beside`), hand `env()` to the run, `close()` for the record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path, 0o600)
        self._read = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._hold = os.open(path, os.O_WRONLY)  # no end of input until explore closes it
        os.chmod(path, 0o200)
        self._wake_read, self._wake = os.pipe()
        self._chunks: list[bytes] = []
        self._thread = threading.Thread(target=self._drain, name=f"witness {path.name}", daemon=True)
        self._thread.start()

    def env(self) -> dict[str, str]:
        return {ENV: str(self.path)}

    def _drain(self) -> None:
        poller = select.poll()  # not select(): explore may hold more than FD_SETSIZE descriptors
        poller.register(self._read, select.POLLIN)
        poller.register(self._wake_read, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            self._take()
            if self._wake_read in ready:
                return

    def _take(self) -> None:
        while True:
            try:
                chunk = os.read(self._read, CHUNK)
            except BlockingIOError:
                return
            if not chunk:
                return
            self._chunks.append(chunk)

    def close(self) -> Record:
        """The stream read to its end (the test process is gone), its verdict; the FIFO removed."""
        os.write(self._wake, b".")
        self._thread.join()
        self._take()
        for fd in (self._read, self._hold, self._wake_read, self._wake):
            os.close(fd)
        self.path.unlink(missing_ok=True)
        return parse(b"".join(self._chunks).decode("utf-8", "replace").splitlines())


def beside(log_path: Path) -> Channel:
    """A fresh stream next to a run's log, its name holding a random token."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    return Channel(log_path.with_name(f"{log_path.stem}.calls-{secrets.token_hex(6)}"))
