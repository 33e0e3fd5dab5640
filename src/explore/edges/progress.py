"""Reading how far the running test processes have gone: the progress files explore's pytest plugin
writes (`EXPLORE_PROGRESS`, pytest_plugin/_explore_progress: the tests collected on the first line,
then one `.` per test finished) beside each job's log, summed over a job's shards."""

from __future__ import annotations

import os
import re
from pathlib import Path

PROGRESS_ENV = "EXPLORE_PROGRESS"
SUFFIX = ".progress"
SHARD = re.compile(r"\.shard-\d+$")


def path_for(log_path: Path) -> Path:
    """Where the job logging to log_path writes its progress."""
    return log_path.with_suffix(SUFFIX)


def read(path: Path) -> tuple[int, int] | None:
    """(tests done, tests collected) of one progress file; None before its collection has ended."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, newline, dots = data.partition(b"\n")
    if not newline or not head.strip().isdigit():
        return None
    return dots.count(b"."), int(head)


def scan(root: Path, since: float) -> dict[str, tuple[int, int]]:
    """The progress of the jobs under root whose files changed after `since` (a time.time()), by
    job — its log's path relative to root without the shard's part (`iteration-1/candidate-a/tests`,
    `baseline`) —, each job's shards summed."""
    jobs: dict[str, tuple[int, int]] = {}
    for path in root.rglob(f"*{SUFFIX}"):
        try:
            if os.stat(path).st_mtime < since:
                continue
        except OSError:
            continue
        found = read(path)
        if found is None:
            continue
        key = SHARD.sub("", path.relative_to(root).with_suffix("").as_posix())
        done, total = jobs.get(key, (0, 0))
        jobs[key] = (done + found[0], total + found[1])
    return jobs
