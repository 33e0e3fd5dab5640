"""Reading how far the running test processes have gone: the progress files explore's pytest plugin
writes (`EXPLORE_PROGRESS`, pytest_plugin/_explore_progress: the tests collected on the first line,
then one `.` per test finished, `x` for one that failed) beside each job's log, summed over a job's
shards."""

from __future__ import annotations

import os
import re
from pathlib import Path

PROGRESS_ENV = "EXPLORE_PROGRESS"
SUFFIX = ".progress"
FAILED = ".failed"
"""Beside a progress file: the ids of the tests that failed, one a line."""
SHARD = re.compile(r"\.shard-\d+$")


def path_for(log_path: Path) -> Path:
    """Where the job logging to log_path writes its progress."""
    return log_path.with_suffix(SUFFIX)


def read(path: Path) -> tuple[int, int] | None:
    """(tests done, tests collected) of one progress file; None before its collection has ended."""
    found = _marks(path)
    return None if found is None else (len(found[0]), found[1])


def failures(path: Path) -> int:
    """How many of the tests done so far failed (0 when nothing is known yet)."""
    found = _marks(path)
    return 0 if found is None else found[0].count(b"x")


def failed_ids(path: Path) -> set[str]:
    """The ids of the tests that failed so far (the file beside the progress file)."""
    try:
        data = (path.parent / (path.name + FAILED)).read_bytes()
    except OSError:
        return set()
    return {line.decode("utf-8", "surrogateescape") for line in data.splitlines() if line}


def forget(path: Path) -> None:
    """Remove a job's progress files before it runs again (a stale failure is no failure)."""
    for stale in (path, path.parent / (path.name + FAILED)):
        stale.unlink(missing_ok=True)


def _marks(path: Path) -> tuple[bytes, int] | None:
    """(one mark per test done, tests collected); None before collection has ended."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, newline, marks = data.partition(b"\n")
    if not newline or not head.strip().isdigit():
        return None
    return bytes(c for c in marks if c in b".x"), int(head)


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


def of_job(log_dir: Path, stem: str) -> tuple[int, int, int] | None:
    """(tests done, tests collected, tests failed) of the job logging to log_dir/<stem>.log, its
    shards (<stem>.shard-N) summed; None when none of them had collected (or wrote no progress:
    a remote executor's job)."""
    paths = [log_dir / f"{stem}{SUFFIX}", *sorted(log_dir.glob(f"{stem}.shard-*{SUFFIX}"))]
    found = [marks for marks in map(_marks, paths) if marks is not None]
    if not found:
        return None
    return (
        sum(len(m) for m, _ in found),
        sum(c for _, c in found),
        sum(m.count(b"x") for m, _ in found),
    )
