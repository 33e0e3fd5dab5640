"""Where a run starts from: the baseline run of a new run (per-test limit, flaky reruns, targets,
`--issue`'s iteration 0) or, on resume, the re-test of the current commit. Steps of `loop.Runner`,
kept apart from the iterations."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

import anyio

from .. import generators
from ..decide import escalation, history, targets
from ..edges import gitrepo, testcode
from ..edges.testing import OPENED_ENV, derived_test_timeout
from ..model.errors import Escalation
from ..model.models import EscalationCategory, RunState, TestRun
from . import adoption, applying, reproduce, targeting

if TYPE_CHECKING:
    from .loop import Runner


async def start(r: Runner) -> None:
    """A new run's baseline: the suite on the base commit, then what it tells about the tests."""
    r.save("baseline")
    r.display.phase(f"baseline: running {r.test_command.describe()} on {r.run.base_commit[:10]}")
    path, _ = await anyio.to_thread.run_sync(r.pool.acquire, "a", r.run.base_commit)
    await r.suite.setup_once(path)
    env = {**_baseline_env(r), **({OPENED_ENV: "1"} if r.test_command.is_pytest else {})}
    groups = await r.suite.first_plan(path)
    started = time.monotonic()
    run, rerun_passed = await r.suite.baseline(path, r.run.base_commit, groups, env)
    r.suite_s = time.monotonic() - started
    if run.infra_error:
        raise Escalation(
            EscalationCategory.infrastructure,
            f"the baseline test run failed: {run.infra_error} (log: {run.log_path})",
            escalation.INFRASTRUCTURE_ACTION,
        )
    opened = testcode.test_data(run.opened, r.options.test_patterns, testcode.collected_files(run.outcomes))
    if r.options.issue:
        run = await reproduce_issue(r, run)
    r.run.baseline_skipped = sorted(i for i, o in run.outcomes.items() if o.outcome == "skipped")
    r.run.baseline_ids = sorted(set(run.outcomes) - set(r.run.baseline_skipped))
    r.run.baseline_xfailed = sorted(i for i, o in run.outcomes.items() if o.outcome == "xfailed")
    r.run.baseline_opened = opened
    r.run.baseline_unconfirmed = sorted(run.unconfirmed)
    if r.test_command.is_pytest and not r.options.test_timeout:
        r.run.test_timeout = derived_test_timeout(run)
        r.test_command = r.suite.command = replace(r.test_command, test_timeout=r.run.test_timeout)
    failing = run.failing()
    if failing and r.test_command.is_pytest and all("::" in i for i in failing):
        known = {i for record in history.load(r.history_path) for i in record.flaky} & set(failing)
        r.run.flaky = sorted(known | (rerun_passed & set(failing)))  # reruns ran as each shard ended
    if r.options.has_targets():
        await targeting.choose(r.run, r.options, run, r.suite, r.pool, r.display, r.root)
    if r.run.reproduction:
        targeting.target_reproduction(r.run, run)
    files = gitrepo.python_files(r.info.repo, r.run.current_commit)
    targeting.leave_out_environment(r.run, run, failing, files, r.display)
    escalate_external(r.run, run, failing)
    targeting.leave_out_known(r.run, failing, r.root, r.display)
    r.current_run = run
    r.set_current(run)
    r.run.baseline = r.run.current.model_copy()
    earlier = history.set_aside_before(history.load(r.history_path)) & set(r.run.current_failing)
    r.run.unmoved_streak = {t: history.SET_ASIDE_AFTER - 1 for t in sorted(earlier)}
    history.append(
        r.history_path,
        history.HistoryRecord(
            run_id=r.run.run_id,
            n=0,
            pass_rate=r.run.current.pass_rate,
            failing=r.run.current_failing,
            flaky=r.run.flaky,
            commit=r.run.current_commit,
            green=not r.run.current_failing,
        ),
    )
    b = r.run.baseline
    flaky = f", {len(r.run.flaky)} flaky: {', '.join(r.run.flaky)}" if r.run.flaky else ""
    r.display.phase(f"baseline: {b.passed}/{b.total} passed ({b.pass_rate:.1f}%){flaky}")
    hung = sorted(i for i, o in run.outcomes.items() if o.outcome == "timeout")
    if hung:
        r.display.note(
            f"baseline: {len(hung)} test(s) overran the per-test limit (outcome timeout): {', '.join(hung[:5])}"
        )
    if r.test_command.test_timeout:
        r.display.note(f"per-test limit from now on: {r.test_command.test_timeout:g}s")
    r.check_gate()
    r.save("iterating")


def escalate_external(state: RunState, run: TestRun, failing: list[str]) -> None:
    """An external service (or an undecided requirement) behind a failure being repaired is for a
    person; the same failure outside the targets was named an environment failure and left out."""
    left = {f.test for f in state.environment_failures}
    repair = [i for i in targets.to_repair(failing, state.targets) if i not in left]
    texts = {i: run.outcomes[i].longrepr or run.outcomes[i].message for i in repair}
    found = escalation.classify_failures(list(texts.values()))
    if found:
        hit = [i for i, text in texts.items() if found.regex.search(text)]
        raise Escalation(found.category, f"{found.reason} (in {len(hit)} failing test(s), e.g. {hit[0]})", found.action)


async def reproduce_issue(r: Runner, run: TestRun) -> TestRun:
    """`--issue`, iteration 0 (reproduce.py): test-writer samples, the kept tests committed as
    "reproduce: …" on the run branch; the suite re-run on that commit is the baseline."""
    writer = generators.test_writer(r.generator)
    r.display.phase(
        f"reproduce: {r.options.parallel} test-writer sample(s) ({writer.name}) write tests from the report"
    )
    samples = reproduce.Samples(
        writer=writer,
        issue=r.options.issue or "",
        pool=r.pool,
        commit=r.run.base_commit,
        test_command=r.test_command,
        test_patterns=r.options.test_patterns,
        run_dir=r.run_dir,
        timeout=r.options.branch_timeout,
        tracker=r.tracker,
        memory_limit=r.memory_limit,
        setup=r.options.worktree_setup,
        sandbox=r.sandbox,
        progress=lambda cid, text: r.display.note(f"  [{cid}] {text}"),
    )  # samples are no fan-out: their progress is text
    result, paths = await reproduce.run_samples(samples, r.options.parallel)
    for attempt in result.samples:
        r.run.usage += attempt.usage
    r.run.reproduction = result
    if not result.kept:
        r.run.baseline_ids = sorted(i for i, o in run.outcomes.items() if o.outcome != "skipped")
        r.set_current(run)
        r.run.baseline = r.run.current.model_copy()
        raise Escalation(
            EscalationCategory.ambiguous_requirements,
            reproduce.escalation_reason(result.samples),
            reproduce.AMBIGUOUS_ACTION,
        )
    assert result.chosen and r.run.branch
    # on the base commit: a run killed after this commit redoes iteration 0 from the baseline
    commit = await anyio.to_thread.run_sync(
        reproduce.commit,
        r.pool,
        paths[result.chosen],
        result,
        r.run.base_commit,
        r.options.issue or "",
        r.run_dir / "reproduce",
    )
    applying.move_run(r.info.repo, r.run, commit, r.run.current_commit)
    r.run.current_commit = result.commit = commit
    r.display.note(f"reproduce: kept {', '.join(result.kept)} (sample {result.chosen}) as {commit[:10]}")
    r.save("baseline")
    path, _ = await anyio.to_thread.run_sync(r.pool.acquire, "a", commit)
    return await r.suite.full_run(path, "baseline-reproduced", commit, [])


def _baseline_env(r: Runner) -> dict[str, str]:
    """What the generator asks the baseline run to carry (mutate: per-test coverage, so its
    first iteration needs no second run of the suite)."""
    hook = getattr(r.generator, "baseline_env", None)
    if hook is None or not r.test_command.is_pytest:
        return {}
    return hook(r.run_dir, r.run.base_commit, list(r.options.test_patterns))


async def retest(r: Runner) -> None:
    """On resume: the failures at the current commit, to hand the generator fresh details."""
    adoption.adopt_branch(r.info.repo, r.run, r.display)
    r.display.phase(
        f"resume {r.run.run_id}: re-testing {r.run.current_commit[:10]} (iteration {len(r.run.iterations)} done)"
    )
    path, _ = await anyio.to_thread.run_sync(r.pool.acquire, "a", r.run.current_commit)
    await r.suite.setup_once(path)
    started = time.monotonic()
    run = await r.suite.full_run(
        path, f"resume-{int(time.time())}", r.run.current_commit, r.suite.plan(None, r.run.baseline_ids)
    )
    r.suite_s = time.monotonic() - started
    if run.infra_error:
        raise Escalation(
            EscalationCategory.infrastructure,
            f"the test run failed on resume: {run.infra_error}",
            escalation.INFRASTRUCTURE_ACTION,
        )
    r.current_run = run
    r.set_current(run)
    last = r.run.iterations[-1] if r.run.iterations else None
    if last and last.strategy_reason == adoption.RECOVERED and not last.failed_tests and last.pass_rate == 0:
        last.pass_rate, last.failed_tests = r.run.current.pass_rate, list(r.run.current_failing)
    r.check_gate()
