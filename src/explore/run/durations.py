"""`.explore/durations.json`: what the last baseline in this repository recorded — seconds per test
file and one test process's cost beyond its tests — so the next run's first baseline is planned
from timings instead of test counts (issue 27: shards only where they pay, by recorded durations)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..decide import shard_plan
from ..model.testresults import TestRun
from . import state

FILE = "durations.json"


class RecordedDurations(BaseModel):
    files: dict[str, float]
    """Seconds per test file (the sum of its tests' setup, call and teardown)."""
    overhead_s: float
    """One test process's cost beyond its tests (its cheapest shard's)."""


def path_for(run_dir: Path) -> Path:
    """The file beside the runs: run_dir is `.explore/runs/<id>` (state.run_dir)."""
    return run_dir.parent.parent / FILE


def read(path: Path) -> RecordedDurations | None:
    """The recorded durations, or None when there are none (or the file is not ours: ignored)."""
    try:
        return RecordedDurations.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def write(path: Path, run: TestRun, overhead_s: float) -> None:
    """Record run's per-file seconds (atomically); nothing when it timed no test (a custom report)."""
    durations = {i: o.duration_s for i, o in run.outcomes.items()}
    if not any(durations.values()):
        return
    recorded = RecordedDurations(files=shard_plan.file_weights(run.outcomes, durations), overhead_s=overhead_s)
    state.atomic_write(path, json.dumps(recorded.model_dump(), indent=1, sort_keys=True))


def first_weights(on_disk: Mapping[str, float], recorded: RecordedDurations) -> dict[str, float]:
    """Seconds per test file on disk: as recorded, else its test count at shard_plan.FIRST_TEST_S
    (a file added since). Pure."""
    return {f: recorded.files.get(f, shard_plan.FIRST_TEST_S * count) for f, count in on_disk.items()}
