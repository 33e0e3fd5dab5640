"""How far a pytest process has gone, for explore to show while it runs (issue 40: a 150-second
suite printed nothing in between): with `EXPLORE_PROGRESS=PATH` in the environment, the plugin
writes the number of tests collected as the file's first line, then one `.` per test finished —
an `x` for one that failed (in its setup, call or teardown), whose id goes on a line of the file
beside it (`.failed`: explore stops a whole run that can no longer outrank the best candidate) —
each appended and flushed at once (a reader counts them: explore.edges.progress). Only the process that reports (under xdist: the controller) writes.
Standalone, like the plugin."""

from __future__ import annotations

import os

PROGRESS_ENV = "EXPLORE_PROGRESS"
FAILED = ".failed"


class Progress:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.failed: set[str] = set()

    def _write(self, data: bytes) -> None:
        try:
            if self.fd is None:
                self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
            os.write(self.fd, data)
        except OSError:  # progress is a courtesy: never the run's failure
            self.fd = -1 if self.fd is None else self.fd

    def pytest_collection_finish(self, session) -> None:
        self._write(f"{len(session.items)}\n".encode())

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed:
            self.failed.add(report.nodeid)

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        if self.fd is not None and self.fd >= 0:
            if nodeid in self.failed:
                try:
                    with open(self.path + FAILED, "ab") as failed:
                        failed.write(nodeid.encode("utf-8", "surrogateescape") + b"\n")
                except OSError:
                    pass
            self._write(b"x" if nodeid in self.failed else b".")

    def pytest_unconfigure(self, config) -> None:
        if self.fd is not None and self.fd >= 0:
            os.close(self.fd)
            self.fd = None


def register(config) -> None:
    """The progress writer, when explore asked for one and this process reports."""
    path = os.environ.get(PROGRESS_ENV)
    if path and getattr(config, "workerinput", None) is None and getattr(config, "slaveinput", None) is None:
        config.pluginmanager.register(Progress(path), "explore-progress")
