"""Crash adoption: a run killed between its merge commit and its state write left the commit on the
run branch only; `resume` takes it, so merged work is never redone or lost."""

from __future__ import annotations

import re

import git

from ..model.candidates import IterationRecord
from ..model.runstate import RunState
from . import applying

RECOVERED = "recovered after a crash"


def found_on_branch(repo: git.Repo, run: RunState) -> IterationRecord | None:
    """The iteration merged on the run's branch after the state's last write (its commit is the
    record's), or None. The loop adopts it: it becomes the current and merged commit."""
    tip = applying.run_tip(repo, run)
    if not (tip and tip != run.current_commit and repo.git.rev_parse(f"{tip}^") == run.current_commit):
        return None
    subject = repo.git.log("-1", "--format=%s", tip)
    found = re.match(r"explore: iteration \d+ \((\w+)\) candidate (\w+)", subject)
    return IterationRecord(
        n=len(run.iterations) + 1,
        strategy=found.group(1) if found else "unknown",
        winner=found.group(2) if found else None,
        strategy_reason=RECOVERED,
        commit=tip,
        generator_note=f"adopted from the run branch: {subject}",
    )
