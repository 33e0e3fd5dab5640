"""Choosing a run's target tests at the baseline (named, matched, gone red --since REF) and leaving
out the failures a person recorded as known. The pure rules are in targets.py; each step here
returns the `Targets` it chose, and the loop writes them into the run's state."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio

from ..decide import environment, targets
from ..edges import gitrepo, history_io, outcomes
from ..edges.worktrees import WorktreePool
from ..model import testids
from ..model.config import Options
from ..model.errors import UsageError
from ..model.events import Note, Step, Subscriber
from ..model.testresults import EnvironmentFailure, TestRun
from . import known_failures, state
from .suite import Suite


@dataclass(frozen=True)
class Targets:
    """The tests a run repairs (None: every failing test) and the failures it leaves alone."""

    targets: list[str] | None = None
    preexisting: list[str] = field(default_factory=list)
    known_failures: list[str] = field(default_factory=list)
    environment_failures: list[EnvironmentFailure] = field(default_factory=list)
    awaiting_service: list[str] = field(default_factory=list)
    """Tests to repair set aside for a service or credential (environment.SERVICE)."""
    needs_service: list[EnvironmentFailure] = field(default_factory=list)
    """Every failure to repair needs a service (not set aside): the run escalates at once (not kept in the state)."""


async def choose(
    chosen: Targets,
    options: Options,
    baseline: TestRun,
    baseline_ids: list[str],
    flaky: list[str],
    suite: Suite,
    pool: WorktreePool,
    emit: Subscriber,
    root: Path,
) -> Targets:
    """The tests this run repairs, fixed once at the baseline (kept in the state for resume):
    named ones, matched ones, and with --since those that went red after REF."""
    normal = testids.normaliser(outcomes.tree_roots(root))  # ids as the user's checkout spells them
    named = set(targets.select(baseline_ids, map(normal, options.test_ids), map(normal, options.tests)))
    failing = sorted(set(baseline.failing()) - set(flaky))
    if options.since:
        commit = since_commit(root, options.since)
        emit(Step(f"targets: running the tests at {options.since} ({commit[:10]}) to see which went red since"))
        path, _ = await anyio.to_thread.run_sync(pool.acquire, "a", commit)
        then = await suite.full_run(path, "since", commit, suite.plan(baseline, baseline_ids))
        if then.infra_error or not then.per_test:
            why = then.infra_error or "the test command gives no per-test results (see --junit-xml)"
            raise UsageError(
                f"--since {options.since}: cannot tell which tests passed at {commit[:10]}: {why}; "
                "name the targets with -- IDS or --tests instead"
            )
        named |= set(targets.went_red(failing, then))
    preexisting = targets.preexisting(failing, named)
    left = f"; left alone: {len(preexisting)} other failing test(s)" if preexisting else ""
    emit(Step(f"targets: {len(named)} test(s), {len(set(failing) & named)} failing{left}"))
    return replace(chosen, targets=sorted(named), preexisting=preexisting)


def target_reproduction(chosen: Targets, kept: list[str], baseline: TestRun, flaky: list[str]) -> Targets:
    """The reproduction tests join the targets; other failures are left alone."""
    joined = sorted(set(chosen.targets or []) | set(kept))
    failing = sorted(set(baseline.failing()) - set(flaky))
    return replace(chosen, targets=joined, preexisting=targets.preexisting(failing, joined))


def leave_out_known(chosen: Targets, failing: list[str], flaky: list[str], root: Path, emit: Subscriber) -> Targets:
    """Failures a person skipped at the gate (.explore/known-failures.json) are not targets:
    left alone like pre-existing failures, and said so."""
    named = chosen.targets if chosen.targets is not None else sorted(set(failing) - set(flaky))
    kept, left = known_failures.leave_out(named, known_failures.load(root))
    if not left:
        return chosen
    emit(Note(f"leaving out {len(left)} known failure(s) recorded in {known_failures.path(root)}: {', '.join(left)}"))
    return replace(chosen, targets=kept, known_failures=left, preexisting=sorted(set(chosen.preexisting) | set(left)))


def leave_out_environment(
    chosen: Targets, baseline: TestRun, failing: list[str], flaky: list[str], files: list[str], emit: Subscriber
) -> Targets:
    """Failures no code edit can fix (environment.py) are not targets, named or not: named with the
    line that shows why, and left alone like pre-existing failures. Those the run was to repair that
    need a service are remembered: the run repairs the rest, then ends `external_service` naming them."""
    candidates = [baseline.outcomes[i] for i in failing if i not in flaky]
    modules = environment.local_modules(files)
    found = [f for f in (environment.classify(o, modules, files) for o in candidates) if f is not None]
    aside = environment.set_aside(found, [o.id for o in candidates], chosen.targets)
    left = aside.left_out
    if not left:
        return replace(chosen, needs_service=aside.kept)
    ids = {f.test for f in left}
    named = chosen.targets if chosen.targets is not None else sorted(set(failing) - set(flaky))
    emit(Note(f"environment: {len(left)} failure(s) no code edit can fix, left out of the targets:"))
    for failure in left[:10]:
        emit(Note(f"  {environment.describe(failure)}"))
    if aside.awaiting_service:
        emit(
            Note(
                f"environment: {len(aside.awaiting_service)} of them need a service or credential: the run repairs "
                "the rest, then ends external_service (exit 3) naming them"
            )
        )
    return replace(
        chosen,
        targets=[t for t in named if t not in ids],
        preexisting=sorted(set(chosen.preexisting) | ids),
        environment_failures=left,
        awaiting_service=aside.awaiting_service,
        needs_service=aside.kept,
    )


def since_commit(root: Path, since: str) -> str:
    """The commit `--since REF|last-green` names; a usage error when it names none."""
    ref = targets.since_ref(since, history_io.load(state.explore_dir(root) / "history.jsonl"))
    commit = gitrepo.resolve_commit(root, ref)
    if commit is None:
        what = f"the last green run's commit {ref[:10]}" if since == targets.LAST_GREEN else repr(ref)
        raise UsageError(f"--since {since}: {what} is not a commit of this repository (a branch, tag or sha)")
    return commit
