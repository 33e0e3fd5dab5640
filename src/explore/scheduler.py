"""Fan-out: each candidate in its own worktree under its own deadline, at most --parallel at once.

A candidate's failure (crash, timeout, exception) is recorded as its status and never takes the
run down; cancellation (Ctrl-C) kills every process tree through procs.run's shielded cleanup.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from . import escalation, procs, scoring, testcode
from .errors import BudgetExhausted, Escalation
from .generators.base import CandidateContext, FixGenerator, ProposalRequest
from .generators.command import AgentCrashed
from .affected import ImportMap
from .models import PASSING, CandidatePlan, CandidateResult, CandidateStatus, TestOutcome, TestRun
from .testing import TestCommand, run_tests
from .worktrees import SetupFailed, WorktreePool

Progress = Callable[[str, str], None]


@dataclass
class FanOut:
    """What every candidate of one iteration shares."""

    generator: FixGenerator
    request: ProposalRequest
    pool: WorktreePool
    commit: str
    iteration_dir: Path
    test_command: TestCommand
    yardstick: scoring.Yardstick
    current_passing: set[str]
    current_rate: float
    test_patterns: list[str]
    allow_test_edits: bool
    branch_timeout: float
    worktree_setup: str | None
    tracker: procs.ProcessTracker
    progress: Progress = lambda _id, _text: None
    progressive: bool = True
    memory_limit: int | None = None
    import_map: ImportMap | None = None
    protected: frozenset[str] = frozenset()
    """With target tests: the other tests passing at the baseline, which no candidate may break."""
    frozen: frozenset[str] = frozenset()
    """`--issue`: the reproduction test files of iteration 0, which no candidate may edit."""
    estimates: set[str] = field(default_factory=set)
    runs: dict[str, TestRun] = field(default_factory=dict)
    patches: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    infra_error: str | None = None
    validation_s: float = 0.0
    """Wall time of `validate`: the full-suite runs of the best candidates (for the timing)."""
    stop: Exception | None = None
    """An escalation or budget stop raised inside a candidate: ends the run after the fan-out."""
    destructive: dict[str, escalation.Pattern] = field(default_factory=dict)
    agent_escalation: dict[str, escalation.Pattern] = field(default_factory=dict)
    _first_by_key: dict[str, str] = field(default_factory=dict)
    _done: dict[str, anyio.Event] = field(default_factory=dict)


async def fan_out(plans: list[CandidatePlan], ctx: FanOut, parallel: int) -> list[CandidateResult]:
    limiter = anyio.CapacityLimiter(parallel)
    results: dict[str, CandidateResult] = {}

    async def one(plan: CandidatePlan) -> None:
        async with limiter:
            results[plan.id] = await run_candidate(plan, ctx)

    async with anyio.create_task_group() as group:
        for plan in plans:
            ctx._done[plan.id] = anyio.Event()
            group.start_soon(one, plan)
    _count_agreement(results, ctx)
    ordered = [results[plan.id] for plan in plans]
    await validate(ordered, ctx)
    return ordered


def _count_agreement(results: dict[str, CandidateResult], ctx: FanOut) -> None:
    for cid, result in results.items():
        key = ctx.keys.get(cid)
        if key:
            result.agreement = sum(1 for other in ctx.keys.values() if other == key)


async def run_candidate(plan: CandidatePlan, ctx: FanOut) -> CandidateResult:
    result = CandidateResult(
        id=plan.id,
        status=CandidateStatus.crashed,
        confidence=plan.confidence,
        hypothesis=plan.hypothesis,
        operator=plan.operator,
        location=plan.location,
        generator=plan.generator,
    )
    files_dir = ctx.iteration_dir / f"candidate-{plan.id}"
    files_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    ctx.progress(plan.id, "starting")
    try:
        with anyio.fail_after(ctx.branch_timeout):
            await _attempt(plan, ctx, result, files_dir)
    except TimeoutError:
        result.status = CandidateStatus.timeout
        result.reason = f"exceeded --branch-timeout {ctx.branch_timeout:g}s; its process tree was killed"
    except SetupFailed as exc:
        ctx.infra_error = str(exc)
        result.status, result.reason = CandidateStatus.crashed, str(exc)
    except (Escalation, BudgetExhausted) as exc:  # the run stops after this fan-out
        ctx.stop = ctx.stop or exc
        _crashed(result, exc)
    except Exception as exc:  # a crashing branch never takes the run down
        _crashed(result, exc)
    finally:
        ctx._done[plan.id].set()
    result.duration_s = round(time.monotonic() - started, 3)
    if result.status != CandidateStatus.ok:
        result.score = 0.0
    ctx.progress(plan.id, _final_text(result))
    return result


def _crashed(result: CandidateResult, exc: Exception) -> None:
    result.status, result.reason = CandidateStatus.crashed, f"{type(exc).__name__}: {exc}"[:500]
    result.usage = dict(getattr(exc, "usage", None) or result.usage)  # what a generator spent before failing


def _final_text(result: CandidateResult) -> str:
    cost = f" — ${result.usage['cost_usd']:.4f}" if result.usage.get("cost_usd") else ""
    if result.status == CandidateStatus.ok:
        return f"ok {result.pass_rate:.1f}%" + (f" ({result.progress})" if result.progress else "") + cost
    return f"{result.status.value}: {result.reason or ''}{cost}"


async def _attempt(plan: CandidatePlan, ctx: FanOut, result: CandidateResult, files_dir: Path) -> None:
    path, fresh = await anyio.to_thread.run_sync(ctx.pool.acquire, plan.id, ctx.commit)
    if fresh and ctx.worktree_setup:
        ctx.progress(plan.id, "worktree setup")
        done = await procs.run(ctx.worktree_setup, path, log_path=files_dir / "setup.log", tracker=ctx.tracker)
        if done.exit_code != 0:
            raise SetupFailed(f"worktree_setup `{ctx.worktree_setup}` failed with exit {done.exit_code}: {done.output_tail.strip()[-300:]}")
    ctx.progress(plan.id, "generating")
    context = CandidateContext(
        workdir=path, candidate_id=plan.id, iteration=ctx.request.iteration, strategy=ctx.request.strategy,
        files_dir=files_dir, request=ctx.request, tracker=ctx.tracker,
    )
    try:
        realised = await ctx.generator.realise(plan, context)
    except AgentCrashed as exc:
        agent_log = files_dir / "agent.log"
        found = escalation.classify_agent_output(agent_log.read_text(errors="replace")) if agent_log.exists() else None
        if found:
            ctx.agent_escalation[plan.id] = found
        result.status, result.reason = CandidateStatus.crashed, str(exc)
        return
    except Exception as exc:
        if plan.patch is not None:
            result.status, result.reason = CandidateStatus.apply_failed, f"{type(exc).__name__}: {exc}"[:500]
            return
        raise
    result.usage = realised.usage
    if realised.confidence is not None:
        result.confidence = realised.confidence
    if realised.hypothesis:
        result.hypothesis = realised.hypothesis
    patch_file = files_dir / "candidate.diff"
    files = await anyio.to_thread.run_sync(ctx.pool.capture_patch, path, patch_file)
    patch = patch_file.read_text(encoding="utf-8", errors="replace")
    result.files_changed, result.patch_path, result.diff_lines = files, str(patch_file), scoring.diff_size(patch)
    if not files:
        result.status, result.reason = CandidateStatus.rejected, "empty: the generator made no change"
        return
    ctx.patches[plan.id] = patch
    tests = tuple(f for f in files if scoring.is_test_file(f, ctx.test_patterns))
    destructive = escalation.classify_patch(patch, tests)
    if destructive:
        ctx.destructive[plan.id] = destructive
        result.status, result.reason = CandidateStatus.rejected, f"destructive: {destructive.reason}"
        return
    frozen = [f for f in files if f in ctx.frozen]
    if frozen:
        result.status, result.reason = CandidateStatus.rejected, f"edits the reproduction tests of the issue: {', '.join(frozen)}"
        return
    if tests and not ctx.allow_test_edits:
        result.status, result.reason = CandidateStatus.rejected, f"edits test files: {', '.join(tests[:5])}"
        return
    if not ctx.allow_test_edits:
        edits = await anyio.to_thread.run_sync(
            testcode.reason, path, ctx.commit, files, ctx.yardstick.ids | ctx.yardstick.skipped, ctx.test_command.shell)
        if edits:
            result.status, result.reason = CandidateStatus.rejected, edits
            return
    key = scoring.patch_key({f: _read_or_none(path / f) for f in files})
    ctx.keys[plan.id] = key
    twin = ctx._first_by_key.setdefault(key, plan.id)
    if twin != plan.id:
        ctx.progress(plan.id, f"same patch as {twin}: reusing its tests")
        await ctx._done[twin].wait()
        if twin in ctx.runs:
            _score(result, ctx.runs[twin], ctx, files)
            result.validated = twin not in ctx.estimates
            result.progress = f"same normalised patch as candidate {twin}"
        else:
            result.status, result.reason = CandidateStatus.crashed, f"same patch as candidate {twin}, which did not finish"
        return
    run = await _test(plan.id, path, ctx, result, files_dir)
    if run.oom:
        result.status, result.reason = CandidateStatus.oom, f"its tests exceeded the memory cap ({run.infra_error})"
        return
    ctx.runs[plan.id] = run
    _score(result, run, ctx, files)


async def _test(cid: str, path: Path, ctx: FanOut, result: CandidateResult, files_dir: Path) -> TestRun:
    """Affected tests first (failing now + test files importing a changed module); the full suite
    runs now only when selection cannot tell, otherwise later in `validate` for the best."""
    failing_now = sorted(ctx.yardstick.ids - ctx.current_passing)
    selection = _selection(ctx, result.files_changed, failing_now)
    if selection is not None:
        ctx.progress(cid, f"affected tests ({len(selection)} ids/files)")
        first = await run_tests(ctx.test_command, path, files_dir / "affected.log", select=selection,
                                tracker=ctx.tracker, memory_limit=ctx.memory_limit)
        if first.oom:
            return first
        if not first.infra_error:
            estimate = TestRun(outcomes={**_assumed_passing(ctx), **first.outcomes}, exit_code=first.exit_code, log_path=first.log_path)
            ran = [o for o in first.outcomes.values() if o.id in ctx.yardstick.ids or o.id not in ctx.yardstick.skipped]
            passed = sum(1 for o in ran if o.outcome in PASSING)
            result.progress = f"affected {passed:,}/{len(ran):,}"
            result.validated = False
            ctx.estimates.add(cid)
            return estimate
    ctx.progress(cid, "full suite")
    return await _full(cid, path, ctx, result, files_dir)


async def _full(cid: str, path: Path, ctx: FanOut, result: CandidateResult, files_dir: Path) -> TestRun:
    full = await run_tests(ctx.test_command, path, files_dir / "tests.log", tracker=ctx.tracker, memory_limit=ctx.memory_limit)
    counts = ctx.yardstick.counts(full)
    result.progress = f"{result.progress + ' → ' if result.progress else ''}full {counts.passed:,}/{counts.total:,}"
    result.validated = True
    return full


def _selection(ctx: FanOut, changed: list[str], failing_now: list[str]) -> list[str] | None:
    if not (ctx.progressive and ctx.test_command.is_pytest and ctx.import_map is not None and failing_now):
        return None
    if len(failing_now) > 500 or not all("::" in i for i in failing_now):
        return None
    files = ctx.import_map.affected_files(changed, ctx.test_patterns)
    if files is None:
        return None
    return sorted(files) + [i for i in failing_now if i.split("::", 1)[0] not in files]


async def validate(results: list[CandidateResult], ctx: FanOut) -> None:
    """Full-suite validation of the candidates selection made look best, best first, until one
    holds up or none can still beat what is validated: a selection miss costs time, never a
    wrong merge."""
    started = time.monotonic()
    try:
        await _validate(results, ctx)
    finally:
        ctx.validation_s += time.monotonic() - started


async def _validate(results: list[CandidateResult], ctx: FanOut) -> None:
    floor = max([ctx.current_rate] + [r.pass_rate for r in results if r.status == CandidateStatus.ok and r.validated])
    pending = [r for r in results if r.status == CandidateStatus.ok and not r.validated and r.id in ctx.runs]
    for result in sorted(pending, key=_rank_key, reverse=True):
        if not scoring.is_improvement(result.pass_rate, floor):
            result.progress = f"{result.progress} → full not needed (cannot beat {floor:.1f}%)"
            continue
        files_dir = ctx.iteration_dir / f"candidate-{result.id}"
        ctx.progress(result.id, "validating on the full suite")
        with anyio.move_on_after(ctx.branch_timeout) as scope:
            run = await _full(result.id, ctx.pool.path_for(result.id), ctx, result, files_dir)
        if scope.cancelled_caught:
            result.status, result.reason = CandidateStatus.timeout, f"full-suite validation exceeded {ctx.branch_timeout:g}s"
            continue
        ctx.runs[result.id] = run
        ctx.estimates.discard(result.id)
        _score(result, run, ctx, result.files_changed)
        if run.oom:
            result.status, result.reason = CandidateStatus.oom, "the full suite exceeded the memory cap"
        ctx.progress(result.id, _final_text(result))
        if result.status == CandidateStatus.ok:
            floor = max(floor, result.pass_rate)
    for result in results:  # twins share their original's validated result
        twin = ctx._first_by_key.get(ctx.keys.get(result.id, ""))
        if twin and twin != result.id and twin in ctx.runs and result.status == CandidateStatus.ok:
            _score(result, ctx.runs[twin], ctx, result.files_changed)
            result.validated = twin not in ctx.estimates


def _rank_key(result: CandidateResult) -> tuple:
    return scoring.Ranked(result.id, result.pass_rate, len(result.newly_failing), result.agreement, result.confidence, result.diff_lines).key()


def _assumed_passing(ctx: FanOut) -> dict:
    return {i: TestOutcome(id=i, outcome="passed") for i in ctx.current_passing}


def _score(result: CandidateResult, run: TestRun, ctx: FanOut, files: list[str]) -> None:
    reason = scoring.tamper_reason(files, run, ctx.yardstick, ctx.test_patterns, ctx.allow_test_edits)
    reason = reason or scoring.outside_targets_reason(run, ctx.protected)
    counts = ctx.yardstick.counts(run)
    result.pass_rate = counts.pass_rate
    result.failed_tests = ctx.yardstick.failing(run)
    result.newly_failing = scoring.newly_failing(ctx.current_passing, run, ctx.yardstick)
    if reason:
        result.status, result.reason = CandidateStatus.rejected, reason
        return
    result.status = CandidateStatus.ok
    result.score = counts.pass_rate


def _read_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return None
