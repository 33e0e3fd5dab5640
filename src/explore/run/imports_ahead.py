"""The test files' import map (decide/affected), read while the baseline runs.

A progressive iteration picks each candidate's affected tests from the import map of the suite's test
files, built when its fan-out starts: on networkx (257 test files) parsing them is 1.5-3 s of CPU on
the path between the proposal and the first candidate's tests, once per run. The baseline leaves a
core idle whenever it does not shard (`--parallel 1`, a small suite), so the map is read on a
thread from the checkout's test files as pytest would collect them (shards.disk_weights) while the
baseline runs; the iteration's map keeps an entry only where the file's text is the one read here
(ImportMap.build's `known`), so a file the baseline's checkout did not have as the iteration does
is parsed afresh: the map is the same either way."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from ..decide.affected import ImportMap
from ..executors import shards

log = logging.getLogger("explore.run")


class ImportsAhead:
    """One thread reading the import map of the test files at root (a daemon: a run that ends
    before it does, an escalated baseline, never waits for it)."""

    def __init__(self, root: Path) -> None:
        self._map: ImportMap | None = None
        self._thread = threading.Thread(target=self._build, args=(root,), name="explore-imports-ahead", daemon=True)
        self._thread.start()

    def _build(self, root: Path) -> None:
        try:
            self._map = ImportMap.build(root, shards.disk_weights(root))
        except Exception:
            log.debug("imports ahead: not read", exc_info=True)

    def known(self) -> ImportMap | None:
        """The map once read (blocks until then: call it on a worker thread); None if reading failed."""
        self._thread.join()
        return self._map
