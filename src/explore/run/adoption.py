"""Crash adoption: a run killed between its merge commit and its state write left the commit on the
run branch only; `resume` takes it, so merged work is never redone or lost."""

from __future__ import annotations

import re

import git

from ..cli.live import Display
from ..model.models import IterationRecord, RunState
from . import applying

RECOVERED = "recovered after a crash"


def adopt_branch(repo: git.Repo, run: RunState, display: Display) -> None:
    tip = applying.run_tip(repo, run)
    if tip and tip != run.current_commit and repo.git.rev_parse(f"{tip}^") == run.current_commit:
        display.note(f"adopting {tip[:10]}, merged on the run's branch just before the run stopped")
        run.current_commit = run.merged_commit = tip
        subject = repo.git.log("-1", "--format=%s", tip)
        found = re.match(r"explore: iteration \d+ \((\w+)\) candidate (\w+)", subject)
        run.iterations.append(
            IterationRecord(
                n=len(run.iterations) + 1,
                strategy=found.group(1) if found else "unknown",
                winner=found.group(2) if found else None,
                strategy_reason=RECOVERED,
                commit=tip,
                generator_note=f"adopted from the run branch: {subject}",
            )
        )
