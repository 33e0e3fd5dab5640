"""Choosing a run's target tests at the baseline (named, matched, gone red --since REF) and leaving
out the failures a person recorded as known. The pure rules are in targets.py."""

from __future__ import annotations

from pathlib import Path

import anyio

from ..cli.live import Display
from ..decide import environment, history, targets
from ..edges import gitrepo
from ..edges.worktrees import WorktreePool
from ..model.config import Options
from ..model.errors import UsageError
from ..model.models import RunState, TestRun
from . import known_failures, state
from .suite import Suite


async def choose(
    run: RunState, options: Options, baseline: TestRun, suite: Suite, pool: WorktreePool, display: Display, root: Path
) -> None:
    """The tests this run repairs, fixed once at the baseline (kept in the state for resume):
    named ones, matched ones, and with --since those that went red after REF."""
    chosen = set(targets.select(run.baseline_ids, options.test_ids, options.tests))
    failing = sorted(set(baseline.failing()) - set(run.flaky))
    if options.since:
        commit = since_commit(root, options.since)
        display.phase(f"targets: running the tests at {options.since} ({commit[:10]}) to see which went red since")
        path, _ = await anyio.to_thread.run_sync(pool.acquire, "a", commit)
        then = await suite.full_run(path, "since", commit, suite.plan(baseline, run.baseline_ids))
        if then.infra_error or not then.per_test:
            why = then.infra_error or "the test command gives no per-test results (see --junit-xml)"
            raise UsageError(
                f"--since {options.since}: cannot tell which tests passed at {commit[:10]}: {why}; "
                "name the targets with -- IDS or --tests instead"
            )
        chosen |= set(targets.went_red(failing, then))
    run.targets = sorted(chosen)
    run.preexisting_failures = targets.preexisting(failing, chosen)
    left = f"; left alone: {len(run.preexisting_failures)} other failing test(s)" if run.preexisting_failures else ""
    display.phase(f"targets: {len(chosen)} test(s), {len(set(failing) & chosen)} failing{left}")


def target_reproduction(run: RunState, baseline: TestRun) -> None:
    """The reproduction tests join the targets; other failures are left alone."""
    assert run.reproduction
    run.targets = sorted(set(run.targets or []) | set(run.reproduction.kept))
    failing = sorted(set(baseline.failing()) - set(run.flaky))
    run.preexisting_failures = targets.preexisting(failing, run.targets)


def leave_out_known(run: RunState, failing: list[str], root: Path, display: Display) -> None:
    """Failures a person skipped at the gate (.explore/known-failures.json) are not targets:
    left alone like pre-existing failures, and said so."""
    chosen = run.targets if run.targets is not None else sorted(set(failing) - set(run.flaky))
    kept, left = known_failures.leave_out(chosen, known_failures.load(root))
    if left:
        run.targets, run.known_failures = kept, left
        run.preexisting_failures = sorted(set(run.preexisting_failures) | set(left))
        display.note(
            f"leaving out {len(left)} known failure(s) recorded in {known_failures.path(root)}: {', '.join(left)}"
        )


def leave_out_environment(
    run: RunState, baseline: TestRun, failing: list[str], files: list[str], display: Display
) -> None:
    """Failures no code edit can fix (environment.py) are not targets: named with the line that
    shows why, and left alone like pre-existing failures."""
    candidates = [baseline.outcomes[i] for i in failing if i not in run.flaky]
    modules = environment.local_modules(files)
    found = [f for f in (environment.classify(o, modules, files) for o in candidates) if f is not None]
    left = environment.left_out(found, run.targets)
    if not left:
        return
    ids = {f.test for f in left}
    chosen = run.targets if run.targets is not None else sorted(set(failing) - set(run.flaky))
    run.targets = [t for t in chosen if t not in ids]
    run.preexisting_failures = sorted(set(run.preexisting_failures) | ids)
    run.environment_failures = left
    display.note(f"environment: {len(left)} failure(s) no code edit can fix, left out of the targets:")
    for failure in left[:10]:
        display.note(f"  {environment.describe(failure)}")


def since_commit(root: Path, since: str) -> str:
    """The commit `--since REF|last-green` names; a usage error when it names none."""
    ref = targets.since_ref(since, history.load(state.explore_dir(root) / "history.jsonl"))
    commit = gitrepo.resolve_commit(root, ref)
    if commit is None:
        what = f"the last green run's commit {ref[:10]}" if since == targets.LAST_GREEN else repr(ref)
        raise UsageError(f"--since {since}: {what} is not a commit of this repository (a branch, tag or sha)")
    return commit
