"""The run's git results: the run's state before any ref, one commit per improving iteration on
the run branch, and the fast-forward of the user's branch at the end."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import git

from ..edges import gitrepo
from ..edges.worktrees import Captured
from ..model.candidates import CandidateResult, IterationRecord
from ..model.config import Options
from ..model.events import Note, Subscriber
from ..model.runstate import PAUSED, REPAIRED, Application, RunState
from . import applying, state


def prepare_new(info: gitrepo.RepoInfo, options: Options, run_id: str) -> RunState:
    """A new run: a snapshot of a dirty tree and the state; the run branch is created only once the
    state is on disk (run_repair), so a run killed at any point is found by `resume` and `clean`."""
    dirty = gitrepo.is_dirty(info.repo)
    base = gitrepo.snapshot(info.repo, info.head) if dirty else info.head
    run = RunState(
        run_id=run_id,
        repo=str(info.root),
        pid=os.getpid(),
        options=options.model_dump(),
        start_branch=info.branch,
        start_commit=info.head,
        base_commit=base,
        current_commit=base,
        dirty=dirty,
        branch=f"explore/{run_id}",
        started_at=time.time(),
    )
    return run


def discard(info: gitrepo.RepoInfo, run: RunState) -> None:
    """A run refused for its input at the baseline (targets that match no test) leaves nothing:
    no branch, no run folder — as if refused before it started."""
    import shutil

    if run.branch and not run.iterations:
        gitrepo.delete_branch(info.repo, run.branch)
        gitrepo.delete_ref(info.repo, gitrepo.run_ref(run.run_id))
    shutil.rmtree(state.run_dir(info.root, run.run_id), ignore_errors=True)


def build_commit(
    repo: git.Repo, run: RunState, record: IterationRecord, best: CandidateResult, tested: Captured
) -> str:
    """best's change as a commit on the current commit, no ref moved yet: built from the patch
    bytes captured before its tests ran, and refused (gitrepo.TreeMismatch) unless its tree is
    the tree they ran on."""
    message = (
        f"explore: iteration {record.n} ({record.strategy}) candidate {best.id}: "
        f"pass rate {run.current.pass_rate:.1f}% -> {best.pass_rate:.1f}%\n\n{best.hypothesis}".strip()
    )
    return gitrepo.commit_patch(repo, run.current_commit, tested.patch or b"", message, tested.tree)


def move_to(repo: git.Repo, run: RunState, new: str) -> None:
    """The confirmed commit on the run branch (its refs; the loop then points the run and the
    iteration's record at it)."""
    applying.move_run(repo, run, new, run.current_commit)
    state.fault_point("merged-before-save")


@dataclass(frozen=True)
class Ending:
    """Where a run's result is once it ended, for the loop to record."""

    merged_commit: str | None
    branch: str | None
    """The run's visible branch (None: deleted, the result is in the user's branch or there is none)."""
    application: Application | None = None
    """Set when the user's branch was fast-forwarded to the result."""


def kept_back(run: RunState, options: Options) -> str | None:
    """Why the user's branch stays where it is at the end, or None: only a met gate moves it (a run
    below its gate keeps what it merged on its own ref, unless `--apply-partial`; an interrupted or
    escalated run is resumed first, whatever the flag)."""
    if options.no_apply:
        return "--no-apply"
    if run.dirty:
        return "the tree had uncommitted changes"
    if run.status in PAUSED and not (options.apply_partial and run.status == "escalated" and run.awaiting_service):
        return f"the run is {run.status}"
    if run.status not in REPAIRED and not options.apply_partial:
        return "the run ended below its gate: only a met gate moves your branch, unless --apply-partial"
    return None


def finish(
    info: gitrepo.RepoInfo, run: RunState, options: Options, emit: Subscriber, drift: list[str] | None = None
) -> Ending:
    """Fast-forward the user's branch when safe (the run then keeps no visible branch); otherwise say
    how to take the result. drift: what changed in the user's tree, hooks or config after the
    candidates ran (nothing explains it)."""
    merged = run.current_commit != run.base_commit
    if not merged:
        branch = run.branch
        if run.status not in PAUSED:
            if run.branch:
                gitrepo.delete_branch(info.repo, run.branch)
                branch = None
            gitrepo.delete_ref(info.repo, gitrepo.run_ref(run.run_id))
        return Ending(None, branch)
    left = Ending(run.current_commit, run.branch)
    why = kept_back(run, options)
    if why:
        emit(Note(f"result left on {run.branch} ({why}); take it with: explore apply {run.run_id}"))
        return left
    if drift:
        emit(
            Note(
                f"result left on {run.branch}: {', '.join(drift[:8])} changed after the candidates ran and explore "
                f"cannot tell by whom; look at them, then take the result with: explore apply {run.run_id}"
            )
        )
        return left
    application, why = applying.fast_forward(info, run.model_copy(update={"merged_commit": run.current_commit}))
    if application is None:
        emit(Note(f"result left on {run.branch} ({why}); take it with: explore apply {run.run_id}"))
        return left
    emit(Note(f"fast-forwarded {info.branch} to {run.current_commit[:10]}"))
    return Ending(run.current_commit, None, application)
