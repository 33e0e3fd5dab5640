"""The run never goes quiet (issue 40: nothing was printed for up to 150 s while a big suite ran):
every few seconds, how far each running test job has gone — tests done of those collected, summed
over its shards — as a typed event the display shows (edges/progress reads what the plugin writes)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from ..edges import progress
from ..model.events import Subscriber, TestsProgress

INTERVAL_S = 2.0
"""How often the progress files are read."""
QUIET_S = 30.0
"""A job whose files have not changed for this long is not shown (it ended, or was killed)."""
KINDS = {"tests": "full suite", "affected": "affected tests", "rerun": "rerun", "confirmation": "final confirmation"}


def label(job: str) -> str:
    """`baseline`, or `[a] full suite` for iteration-1/candidate-a/tests."""
    parts = job.split("/")
    cid = next((p.removeprefix("candidate-") for p in parts if p.startswith("candidate-")), None)
    if cid is None:
        return parts[-1]
    return f"[{cid}] {KINDS.get(parts[-1], parts[-1])}"


async def watch(run_dir: Path, emit: Subscriber, interval_s: float = INTERVAL_S) -> None:
    """Until cancelled: each job under run_dir still running (its files changed in the last QUIET_S)
    and not yet through all its tests, as a TestsProgress every interval_s."""
    while True:
        await anyio.sleep(interval_s)
        jobs = await anyio.to_thread.run_sync(progress.scan, run_dir, time.time() - QUIET_S)
        for job, (done, total) in sorted(jobs.items()):
            if done < total:
                emit(TestsProgress(label(job), done, total))
