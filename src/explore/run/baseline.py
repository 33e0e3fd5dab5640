"""Where a run starts from: the baseline run of a new run (per-test limit, flaky reruns, targets,
`--issue`'s iteration 0) or, on resume, the re-test of the current commit. Steps of the loop, kept
apart from the iterations: each takes what it needs (`Tools`, values of the run's state) and returns
what it found; the loop writes it into the run's state."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio
import git

from .. import generators
from ..decide import environment, escalation, history, targets, testcode
from ..edges import gitrepo, history_io, outcomes, procs
from ..edges.sandbox import Sandbox
from ..edges.testing import OPENED_ENV, derived_test_timeout, slowest_pass
from ..edges.worktrees import WorktreePool
from ..generators.base import FixGenerator
from ..model.config import Options
from ..model.errors import Escalation
from ..model.events import BaselineStarted, Note, Step, Subscriber
from ..model.runstate import EscalationCategory, Reproduction
from ..model.testresults import HungTest, TestRun
from . import reproduce, targeting
from .modules_ahead import import_ahead
from .suite import Recheck, Suite
from .targeting import Targets


@dataclass(frozen=True)
class Tools:
    """What the baseline steps use of the run (the loop's Runner builds it)."""

    repo: git.Repo
    root: Path
    options: Options
    pool: WorktreePool
    suite: Suite
    generator: FixGenerator
    history_path: Path
    run_dir: Path
    tracker: procs.ProcessTracker
    memory_limit: int | None
    sandbox: Sandbox | None
    emit: Subscriber


@dataclass(frozen=True)
class Measured:
    """The suite on the base commit: the run, its tests that passed when rerun, the files it read."""

    run: TestRun
    rerun_passed: frozenset[str]
    opened: list[str]
    seconds: float
    traced: bool = False
    """The generator's recording ran in it (mutate's per-test coverage): its times are a tracer's."""
    recheck: Recheck | None = None
    """The failing tests whose flaky rerun runs beside the first proposal (Suite.baseline)."""


@dataclass(frozen=True)
class Baseline:
    """What the baseline tells about the tests, for the loop to write into the run's state."""

    run: TestRun
    ids: list[str]
    skipped: list[str]
    xfailed: list[str]
    opened: list[str]
    unconfirmed: list[str]
    test_timeout: float | None
    """The per-test limit derived from the baseline (None: configured, or not pytest)."""
    slowest_pass_s: float | None
    """The slowest passing test's seconds (None: not pytest): after a hang, lowered limits stay above 5x it."""
    timeouts: list[HungTest]
    """The tests the per-test limit stopped, each with where it was stuck."""
    flaky: list[str]
    targets: Targets
    set_aside_before: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    """Tests that overran the per-test limit and passed rerun alone with a generous one: not targets."""
    """Failing tests earlier runs set aside (history): one more unmoved iteration sets them aside."""
    stop: Escalation | None = None
    """A failure being repaired needs a person (an external service…): the loop records what the
    baseline found, then escalates (targets chosen so far; the known failures not yet left out)."""


async def measure(t: Tools, base_commit: str, checkout: Path | None = None) -> Measured:
    """A new run's baseline: the suite on the base commit, its flaky reruns as each shard ends.
    checkout: worktree "a" already at the base commit (the loop's warm-up works in it: not reset again)."""
    command = t.suite.command
    t.emit(BaselineStarted(command.describe(), base_commit))
    path = checkout or (await anyio.to_thread.run_sync(t.pool.acquire, "a", base_commit))[0]
    await t.suite.setup_once(path)
    asked = _baseline_env(t, base_commit)
    env = {**asked, **({OPENED_ENV: "1"} if command.is_pytest else {})}
    groups = await t.suite.first_plan(path)
    started = time.monotonic()
    import_ahead(lambda: t.tracker.pids)  # what only the iterations need, once the suite's process runs
    run, rerun_passed, recheck = await t.suite.baseline(path, base_commit, groups, env, t.generator)
    seconds = time.monotonic() - started
    if run.infra_error:
        tests = [i for i in run.outcomes if i.removeprefix("::") not in run.collection_errors]  # JUnit's files
        ran = f"; {len(run.passing() & set(tests)):,} of {len(tests):,} tests that ran passed" if tests else ""
        raise Escalation(
            EscalationCategory.infrastructure,
            f"the baseline test run failed: {run.infra_error}{ran} (log: {run.log_path})",
            escalation.INFRASTRUCTURE_ACTION,
        )
    opened = testcode.test_data(run.opened, t.options.test_patterns, testcode.collected_files(run.outcomes))
    return Measured(run, frozenset(rerun_passed), opened, seconds, traced=bool(asked), recheck=recheck)


async def assess(
    t: Tools, run: TestRun, measured: Measured, chosen: Targets, current_commit: str, kept: list[str] | None
) -> Baseline:
    """What the baseline run (or the run after `--issue`'s reproduction) tells: the tests, the
    per-test limit (the suite's command carries it from here on), the flaky ones, the targets.
    chosen: the targets the run's state holds so far; kept: the reproduction's tests."""
    skipped = sorted(i for i, o in run.outcomes.items() if o.outcome == "skipped")
    ids = sorted(set(run.outcomes) - set(skipped))
    test_timeout = None
    if t.suite.command.is_pytest and not t.options.test_timeout:
        test_timeout = derived_test_timeout(run)
        t.suite.command = replace(t.suite.command, test_timeout=test_timeout)
    slowest = slowest_pass(run) if t.suite.command.is_pytest else None
    if slowest is not None:
        t.suite.command = replace(t.suite.command, slowest_pass_s=slowest)
    flaky: list[str] = []
    failing = run.failing()
    if failing and t.suite.command.is_pytest and all("::" in i for i in failing):
        known = {i for record in history_io.load(t.history_path) for i in record.flaky} & set(failing)
        flaky = sorted(known | (measured.rerun_passed & set(failing)))  # reruns ran as each shard ended
    if t.options.has_targets():
        chosen = await targeting.choose(chosen, t.options, run, ids, flaky, t.suite, t.pool, t.emit, t.root)
    if kept is not None:
        chosen = targeting.target_reproduction(chosen, kept, run, flaky)
    files = gitrepo.python_files(t.repo, current_commit)
    chosen = targeting.leave_out_environment(chosen, run, failing, flaky, files, t.emit)
    stop = external(chosen, run, failing)
    if stop is None:
        chosen = targeting.leave_out_known(chosen, failing, flaky, t.root, t.emit)
    return Baseline(
        stop=stop,
        run=run,
        ids=ids,
        skipped=skipped,
        xfailed=sorted(i for i, o in run.outcomes.items() if o.outcome == "xfailed"),
        opened=measured.opened,
        unconfirmed=sorted(run.unconfirmed),
        test_timeout=test_timeout,
        slowest_pass_s=slowest,
        timeouts=outcomes.hung_tests(run),
        flaky=flaky,
        targets=chosen,
        set_aside_before=sorted(history.set_aside_before(history_io.load(t.history_path))),
        slow=[i for i in t.suite.slow if i in run.outcomes],
    )


def external(chosen: Targets, run: TestRun, failing: list[str]) -> Escalation | None:
    """An external service (or an undecided requirement) behind a failure being repaired is for a
    person; the same failure outside the targets was named an environment failure and left out."""
    left = {f.test for f in chosen.environment_failures}
    repair = [i for i in targets.to_repair(failing, chosen.targets) if i not in left]
    texts = {i: run.outcomes[i].longrepr or run.outcomes[i].message for i in repair}
    found = escalation.classify_failures(list(texts.values()))
    if found:
        hit = [i for i, text in texts.items() if found.regex.search(text)]
        return Escalation(
            found.category, f"{found.reason} (in {len(hit)} failing test(s), e.g. {hit[0]})", found.action
        )
    if chosen.needs_service:  # a credential or an unreachable network: no row of escalation.PATTERNS
        return Escalation(
            EscalationCategory.external_service,
            environment.service_reason(chosen.needs_service),
            environment.SERVICE_ACTION,
        )
    return None


@dataclass(frozen=True)
class Reproduced:
    """`--issue`'s iteration 0: the samples' outcome and the worktree of each sample."""

    result: Reproduction
    paths: dict[str, Path]


async def reproduce_issue(t: Tools, base_commit: str) -> Reproduced:
    """`--issue`, iteration 0 (reproduce.py): test-writer samples write tests from the report."""
    writer = generators.test_writer(t.generator)
    t.emit(Step(f"reproduce: {t.options.parallel} test-writer sample(s) ({writer.name}) write tests from the report"))
    samples = reproduce.Samples(
        writer=writer,
        issue=t.options.issue or "",
        pool=t.pool,
        commit=base_commit,
        test_command=t.suite.command,
        test_patterns=t.options.test_patterns,
        run_dir=t.run_dir,
        timeout=t.options.branch_timeout,
        tracker=t.tracker,
        memory_limit=t.memory_limit,
        setup=t.options.worktree_setup,
        sandbox=t.sandbox,
        progress=lambda cid, text: t.emit(Note(f"  [{cid}] {text}")),
    )  # samples are no fan-out: their progress is text
    result, paths = await reproduce.run_samples(samples, t.options.parallel)
    return Reproduced(result, paths)


def not_reproduced(result: Reproduction) -> Escalation:
    return Escalation(
        EscalationCategory.ambiguous_requirements,
        reproduce.escalation_reason(result.samples),
        reproduce.AMBIGUOUS_ACTION,
    )


async def commit_reproduction(t: Tools, found: Reproduced, base_commit: str) -> str:
    """The kept tests committed as "reproduce: …" on the base commit (a run killed after this
    commit redoes iteration 0 from the baseline)."""
    assert found.result.chosen
    return await anyio.to_thread.run_sync(
        reproduce.commit,
        t.pool,
        found.paths[found.result.chosen],
        found.result,
        base_commit,
        t.options.issue or "",
        t.run_dir / "reproduce",
    )


async def run_reproduced(t: Tools, commit: str) -> TestRun:
    """The suite on the reproduction's commit: the baseline from now on."""
    path, _ = await anyio.to_thread.run_sync(t.pool.acquire, "a", commit)
    return await t.suite.full_run(path, "baseline-reproduced", commit, [])


def _baseline_env(t: Tools, base_commit: str) -> dict[str, str]:
    """What the generator asks the baseline run to carry (mutate: per-test coverage, so its
    first iteration needs no second run of the suite)."""
    if not t.suite.command.is_pytest:
        return {}
    return t.generator.baseline_env(t.run_dir, base_commit, list(t.options.test_patterns))


@dataclass(frozen=True)
class Retested:
    run: TestRun
    seconds: float


async def retest(t: Tools, run_id: str, current_commit: str, done: int, baseline_ids: list[str]) -> Retested:
    """On resume: the failures at the current commit, to hand the generator fresh details."""
    t.emit(Step(f"resume {run_id}: re-testing {current_commit[:10]} (iteration {done} done)"))
    path, _ = await anyio.to_thread.run_sync(t.pool.acquire, "a", current_commit)
    await t.suite.setup_once(path)
    started = time.monotonic()
    run = await t.suite.full_run(path, f"resume-{int(time.time())}", current_commit, t.suite.plan(None, baseline_ids))
    seconds = time.monotonic() - started
    if run.infra_error:
        raise Escalation(
            EscalationCategory.infrastructure,
            f"the test run failed on resume: {run.infra_error}",
            escalation.INFRASTRUCTURE_ACTION,
        )
    return Retested(run, seconds)


def hung_note(hung: list[HungTest]) -> str | None:
    """The live view's line on the tests the per-test limit stopped: every one, where it was stuck."""
    if not hung:
        return None
    lowered = " (the limit lowered after the first)" if len(hung) > 1 else ""
    return f"baseline: {len(hung)} test(s) overran the per-test limit (outcome timeout){lowered}: " + "; ".join(
        f"{h.test} stuck at {h.stuck_at}" for h in hung
    )
