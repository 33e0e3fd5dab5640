"""One candidate: its worktree, its generator step, the checks on its patch, its test jobs.

Generation needs the local worktree (an agent or a coder edits files there); the patch it leaves
is what travels to the executor, which runs the candidate's tests wherever it runs them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import anyio

from ..decide import escalation, scoring, shard_plan
from ..decide.affected import ImportMap
from ..edges import gitrepo, guard, harness_refs, procs, sandbox, testcode_io
from ..edges.testing import TestCommand
from ..edges.worktrees import Captured, WorktreePool, run_setup
from ..executors import shards
from ..executors.jobs import Executor, JobResult, JobStatus, TestJob
from ..generators.base import CandidateContext, FixGenerator, ProposalRequest
from ..model.candidates import CandidatePlan, CandidateResult, CandidateStatus
from ..model.errors import BudgetExhausted, Escalation, GeneratorFailed, SetupFailed
from ..model.events import CandidateEvent, Listener, Phase
from ..model.testfiles import is_test_file
from ..model.testresults import PASSING, TestOutcome, TestRun
from ..model.usage import Usage

LINK_REWRITTEN = (
    "rewrote its worktree's .git file (or pointed the worktree's HEAD at a branch): explore's own git "
    "would have acted on another repository or branch"
)


@dataclass(frozen=True)
class FanOutConfig:
    """What every candidate of one iteration shares: read-only inputs."""

    generator: FixGenerator
    request: ProposalRequest
    pool: WorktreePool
    executor: Executor
    commit: str
    iteration_dir: Path
    test_command: TestCommand
    yardstick: scoring.Yardstick
    current_passing: frozenset[str]
    current_rate: float
    test_patterns: list[str]
    allow_test_edits: bool
    branch_timeout: float
    worktree_setup: str | None
    tracker: procs.ProcessTracker
    listener: Listener = lambda _event: None
    progressive: bool = True
    memory_limit: int | None = None
    import_map: ImportMap | None = None
    shard_weights: dict[str, float] = field(default_factory=dict)
    """Seconds (or test counts) per test file of the current run: what full-suite shards balance."""
    shards: int | None = None
    """--shards; None: the free slots the current run's test time fills (shard_plan.worthwhile)."""
    overhead_s: float = shard_plan.DEFAULT_OVERHEAD_S
    protected: frozenset[str] = frozenset()
    """With target tests: the other tests passing at the baseline, which no candidate may break."""
    frozen: frozenset[str] = frozenset()
    """`--issue`: the reproduction test files of iteration 0, which no candidate may edit."""
    test_data: frozenset[str] = frozenset()
    """The files the tests read at the baseline: edits to them are test edits."""
    watch: guard.Watch | None = None
    """What no candidate may change outside its worktree, checked when each one ends."""
    sandbox: sandbox.Sandbox | None = None
    """Where its agent and setup processes run (its tests: the executor's)."""
    max_patch_bytes: int | None = None
    """`max-patch-size`: a larger patch is not read further and its candidate is rejected."""

    def emit(self, cid: str, phase: Phase, detail: str = "", result: CandidateResult | None = None) -> None:
        self.listener(CandidateEvent(cid, phase, detail, result))

    def shard_groups(self, busy: int) -> list[list[str]]:
        """The file groups of a full-suite run while `busy` candidates share the executor's slots."""
        slots = max(1, shards.usable_slots(self.executor) // max(1, busy))
        count = (
            self.shards
            if self.shards is not None
            else shard_plan.worthwhile(slots, sum(self.shard_weights.values()), self.overhead_s)
        )
        return shard_plan.plan(self.shard_weights, count) if self.test_command.is_pytest else []


@dataclass
class Board:
    """The fan-out's own bookkeeping while candidates run (never read outside the scheduler)."""

    runs: dict[str, TestRun] = field(default_factory=dict)
    patches: dict[str, str] = field(default_factory=dict)
    """The patch each candidate's test jobs apply (its exact bytes, surrogate-escaped)."""
    tested: dict[str, Captured] = field(default_factory=dict)
    """Each candidate's change as captured before its tests ran: what a winner's commit is built from."""
    whole: set[str] = field(default_factory=set)
    """Candidates whose last full-suite run was one unsharded job on exactly their tested tree: it was their final confirmation."""
    kept: dict[str, frozenset[str]] = field(default_factory=dict)
    """The ignored entries of each candidate's worktree before its generator ran (worktree_setup's)."""
    keys: dict[str, str] = field(default_factory=dict)
    first_by_key: dict[str, str] = field(default_factory=dict)
    estimates: set[str] = field(default_factory=set)
    done: dict[str, anyio.Event] = field(default_factory=dict)
    running: int = 0
    infra_error: str | None = None
    stop: Exception | None = None
    destructive: dict[str, escalation.Pattern] = field(default_factory=dict)
    agent_escalation: dict[str, escalation.Pattern] = field(default_factory=dict)

    def twin_of(self, cid: str) -> str | None:
        twin = self.first_by_key.get(self.keys.get(cid, ""))
        return twin if twin and twin != cid else None

    def forget(self, cid: str) -> None:
        """cid runs again from the start (a replay): nothing it left counts."""
        for table in (self.runs, self.patches, self.destructive, self.agent_escalation):
            table.pop(cid, None)
        key = self.keys.pop(cid, None)
        if key is not None and self.first_by_key.get(key) == cid:
            del self.first_by_key[key]
        self.estimates.discard(cid)
        self.done[cid] = anyio.Event()


async def run_candidate(plan: CandidatePlan, config: FanOutConfig, board: Board) -> CandidateResult:
    result = CandidateResult(
        id=plan.id,
        status=CandidateStatus.crashed,
        confidence=plan.confidence,
        hypothesis=plan.hypothesis,
        operator=plan.operator,
        location=plan.location,
        executor=config.executor.name,
        generator=plan.generator,
    )
    files_dir = config.iteration_dir / f"candidate-{plan.id}"
    files_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    config.emit(plan.id, Phase.starting)
    board.running += 1
    if config.watch is not None:
        config.watch.enter(plan.id)
    try:
        with anyio.fail_after(config.branch_timeout):
            await _attempt(plan, config, board, result, files_dir)
    except TimeoutError:
        result.status = CandidateStatus.timeout
        result.reason = (
            f"exceeded --branch-timeout {config.branch_timeout:g}s; its process tree was killed"
            + _last_words(files_dir)
        )
    except SetupFailed as exc:
        board.infra_error = str(exc)
        result.status, result.reason = CandidateStatus.crashed, str(exc)
    except (Escalation, BudgetExhausted) as exc:  # the run stops after this fan-out
        board.stop = board.stop or exc
        _crashed(result, exc)
    except Exception as exc:  # a crashing branch never takes the run down
        _crashed(result, exc)
    finally:
        board.running -= 1
        board.done[plan.id].set()
    if config.watch is not None:
        try:
            outside(result, await config.watch.leave(plan.id))
        except (OSError, RuntimeError) as exc:  # never merged unchecked
            result.status, result.reason = (
                CandidateStatus.crashed,
                f"could not check what it changed outside its worktree: {exc}"[:500],
            )
    result.duration_s = round(time.monotonic() - started, 3)
    if result.status != CandidateStatus.ok:
        result.score = 0.0
    config.emit(plan.id, Phase.finished, result=result)
    return result


def _last_words(files_dir: Path) -> str:
    """What an agent that was killed printed last (its log in the candidate folder), for the reason."""
    log = files_dir / "agent.log"
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines() if log.exists() else []
    return f"; the agent's last output: {lines[-1].strip()[:300]}" if lines else ""


def outside(result: CandidateResult, change: guard.Change | None) -> None:
    """A candidate that changed what it must not in the repository is rejected, whatever its tests
    said; files it may have changed elsewhere (home, the repository's parent) are named."""
    if change is None:
        return
    result.outside_writes = [*change.paths, *change.elsewhere]
    reason = guard.reason(change)
    if reason:
        result.status, result.reason = CandidateStatus.rejected, reason


def _crashed(result: CandidateResult, exc: Exception) -> None:
    result.status, result.reason = CandidateStatus.crashed, f"{type(exc).__name__}: {exc}"[:500]
    result.usage = Usage.of(getattr(exc, "usage", None) or result.usage)  # what a generator spent before failing


async def _attempt(
    plan: CandidatePlan, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path
) -> None:
    path, fresh = await anyio.to_thread.run_sync(config.pool.acquire, plan.id, config.commit)
    if fresh and config.worktree_setup:
        config.emit(plan.id, Phase.setup)
        setup = await run_setup(
            config.worktree_setup,
            path,
            files_dir / "setup.log",
            tracker=config.tracker,
            confine=config.sandbox.confine(path, files_dir) if config.sandbox else None,
        )
        setup.check()
    board.kept[plan.id] = (
        await anyio.to_thread.run_sync(config.pool.ignored, path) if config.pool.keep_ignored else frozenset()
    )
    config.emit(plan.id, Phase.generating)
    context = CandidateContext(
        workdir=path,
        candidate_id=plan.id,
        iteration=config.request.iteration,
        strategy=config.request.strategy,
        files_dir=files_dir,
        request=config.request,
        tracker=config.tracker,
        confine=config.sandbox.confine(path, files_dir) if config.sandbox else None,
        git=partial(config.pool.git_in, path),
    )
    try:
        realised = await config.generator.realise(plan, context)
    except GeneratorFailed as exc:
        agent_log = files_dir / "agent.log"
        found = escalation.classify_agent_output(agent_log.read_text(errors="replace")) if agent_log.exists() else None
        if found:
            board.agent_escalation[plan.id] = found
        result.status, result.reason = CandidateStatus.crashed, str(exc)
        result.usage = exc.usage  # a named agent's spending before it failed
        return
    except Exception as exc:
        if plan.patch is not None:
            result.status, result.reason = CandidateStatus.apply_failed, f"{type(exc).__name__}: {exc}"[:500]
            return
        raise
    result.usage, result.fallbacks = realised.usage, realised.fallbacks
    result.generator = realised.generator or result.generator
    if realised.confidence is not None:
        result.confidence = realised.confidence
    if realised.hypothesis:
        result.hypothesis = realised.hypothesis
    if not config.pool.intact(path):
        result.status, result.reason = CandidateStatus.rejected, LINK_REWRITTEN
        return
    patch_file = files_dir / "candidate.diff"
    captured = await anyio.to_thread.run_sync(config.pool.capture_patch, path, patch_file, config.max_patch_bytes)
    files = result.files_changed = captured.files
    result.binary_files = list(captured.binary)
    if not files:
        result.status, result.reason = CandidateStatus.rejected, "empty: the generator made no change"
        return
    if captured.patch is None:
        binary = f"; binary: {', '.join(captured.binary[:5])}" if captured.binary else ""
        result.status, result.reason = (
            CandidateStatus.rejected,
            f"its patch is over max-patch-size ({_size(config.max_patch_bytes)}){binary}",
        )
        return
    result.patch_path, result.diff_lines = str(patch_file), scoring.diff_size(captured.review)
    board.patches[plan.id] = captured.patch.decode("utf-8", errors="surrogateescape")
    board.tested[plan.id] = captured
    reach = scoring.reach_reason(files, captured.links)
    clobbered = gitrepo.would_overwrite(config.pool.repo_root, captured.added)
    if clobbered and not reach:
        reach = f"adds {', '.join(clobbered[:3])}, which would replace an untracked or ignored file of yours in {config.pool.repo_root}"
    if reach:
        result.status, result.reason = CandidateStatus.rejected, reach
        return
    tests = tuple(f for f in files if is_test_file(f, config.test_patterns))
    destructive = escalation.classify_patch(captured.review, tests)
    if destructive:
        board.destructive[plan.id] = destructive
        result.status, result.reason = CandidateStatus.rejected, f"destructive: {destructive.reason}"
        return
    frozen = [f for f in files if f in config.frozen]
    if frozen:
        result.status, result.reason = (
            CandidateStatus.rejected,
            f"edits the reproduction tests of the issue: {', '.join(frozen)}",
        )
        return
    harness = (
        await anyio.to_thread.run_sync(  # allow-test-edits does not lift it: library code must not know it is tested
            harness_refs.reason,
            path,
            config.commit,
            files,
            config.test_patterns,
            config.yardstick.ids | config.yardstick.skipped,
        )
    )
    if harness:
        result.status, result.reason = CandidateStatus.rejected, harness
        return
    if tests and not config.allow_test_edits:
        result.status, result.reason = CandidateStatus.rejected, f"edits test files: {', '.join(tests[:5])}"
        return
    if not config.allow_test_edits:
        edits = await anyio.to_thread.run_sync(
            testcode_io.reason,
            path,
            config.commit,
            files,
            config.yardstick.ids | config.yardstick.skipped,
            config.test_command.shell,
            config.test_data,
        )
        if edits:
            result.status, result.reason = CandidateStatus.rejected, edits
            return
    key = scoring.patch_key({f: _read_or_none(path / f) for f in files})
    board.keys[plan.id] = key
    twin = board.first_by_key.setdefault(key, plan.id)
    if twin != plan.id:
        config.emit(plan.id, Phase.shared, twin)
        await board.done[twin].wait()
        if twin in board.runs:
            score(result, board.runs[twin], config, files)
            result.validated = twin not in board.estimates
            result.progress = f"same normalised patch as candidate {twin}"
        else:
            result.status, result.reason = (
                CandidateStatus.crashed,
                f"same patch as candidate {twin}, which did not finish",
            )
        return
    job = await _test(plan.id, path, config, board, result, files_dir)
    if not config.pool.intact(path):  # its code, run by the tests, rewrote the link
        result.status, result.reason = CandidateStatus.rejected, LINK_REWRITTEN
        return
    if job.status != JobStatus.ok:
        result.status, result.reason = _job_failure(job)
        return
    board.runs[plan.id] = job.run
    result.rerun_passed = await confirm_newly_failing(plan.id, path, config, board, job.run, files_dir)
    if result.rerun_passed and not config.pool.intact(path):  # the rerun ran its code too
        result.status, result.reason = CandidateStatus.rejected, LINK_REWRITTEN
        return
    score(result, job.run, config, files)


def _job_failure(job: JobResult) -> tuple[CandidateStatus, str]:
    status = {JobStatus.timeout: CandidateStatus.timeout, JobStatus.oom: CandidateStatus.oom}.get(
        job.status, CandidateStatus.crashed
    )
    if job.status == JobStatus.oom:
        return status, f"its tests exceeded the memory cap ({job.run.infra_error or job.reason})"
    return status, job.reason or f"its test job {job.status.value}"


def candidate_job(
    config: FanOutConfig, board: Board, cid: str, path: Path, kind: str, select: list[str] | None = None
) -> TestJob:
    return TestJob(
        id=f"{config.request.iteration}{cid}-{kind}",
        command=config.test_command,
        commit=config.commit,
        patch=board.patches.get(cid, ""),
        select=select,
        timeout_s=config.branch_timeout,
        memory_limit=config.memory_limit,
        log_name={"affected": "affected.log", "rerun": "rerun.log"}.get(kind, "tests.log"),
        workdir=path,
    )


async def _test(
    cid: str, path: Path, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path
) -> JobResult:
    """Affected tests first (failing now + test files importing a changed module); the full suite
    runs now only when selection cannot tell, otherwise later in validation for the best."""
    failing_now = sorted(config.yardstick.ids - config.current_passing)
    selection = _selection(config, result.files_changed, failing_now)
    if selection is not None:
        config.emit(cid, Phase.affected, str(len(selection)))
        await anyio.to_thread.run_sync(config.pool.scrub, path, board.kept.get(cid, frozenset()))
        first = await config.executor.run(candidate_job(config, board, cid, path, "affected", selection), files_dir)
        if first.status != JobStatus.ok:
            return first
        if not first.run.infra_error:
            assumed = {i: TestOutcome(id=i, outcome="passed") for i in config.current_passing}
            ran = [
                o
                for o in first.run.outcomes.values()
                if o.id in config.yardstick.ids or o.id not in config.yardstick.skipped
            ]
            passed = sum(1 for o in ran if o.outcome in PASSING)
            result.progress = f"affected {passed:,}/{len(ran):,}"
            result.validated = False
            board.estimates.add(cid)
            estimate = TestRun(
                outcomes={**assumed, **first.run.outcomes},
                exit_code=first.run.exit_code,
                log_path=first.run.log_path,
                unconfirmed=first.run.unconfirmed,
            )
            return first.model_copy(update={"run": estimate})
    groups = config.shard_groups(board.running)
    config.emit(cid, Phase.full, f"{len(groups)} shards" if groups else "")
    return await full_suite(cid, path, config, board, result, files_dir, groups)


async def full_suite(
    cid: str,
    path: Path,
    config: FanOutConfig,
    board: Board,
    result: CandidateResult,
    files_dir: Path,
    groups: list[list[str]],
) -> JobResult:
    await anyio.to_thread.run_sync(config.pool.scrub, path, board.kept.get(cid, frozenset()))
    # one unsharded job on exactly the tested tree is the final confirmation; an earlier test run
    # that rewrote tracked files makes it not so (the confirmation then runs on a clean checkout)
    whole = not groups and await anyio.to_thread.run_sync(config.pool.tree_of, path) == board.tested[cid].tree
    full = await shards.run_sharded(config.executor, candidate_job(config, board, cid, path, "full"), groups, files_dir)
    if full.status == JobStatus.ok:
        (board.whole.add if whole else board.whole.discard)(cid)
        counts = config.yardstick.counts(full.run)
        result.progress = f"{result.progress + ' → ' if result.progress else ''}full {counts.passed:,}/{counts.total:,}"
        result.validated = True
    return full


def _selection(config: FanOutConfig, changed: list[str], failing_now: list[str]) -> list[str] | None:
    if not (config.progressive and config.test_command.is_pytest and config.import_map is not None and failing_now):
        return None
    if len(failing_now) > 500 or not all("::" in i for i in failing_now):
        return None
    files = config.import_map.affected_files(changed, config.test_patterns)
    if files is None:
        return None
    return sorted(files) + [i for i in failing_now if i.split("::", 1)[0] not in files]


MAX_RERUN = 20
"""More tests newly failing than this is a breakage, not a flake: no rerun."""


async def confirm_newly_failing(
    cid: str, path: Path, config: FanOutConfig, board: Board, run: TestRun, files_dir: Path
) -> list[str]:
    """No candidate condemned by a flake: the tests that passed before and fail in run are rerun
    alone (in one job, in the candidate's tree) before they can reject or outrank it; those that
    pass then take the rerun's outcome in run. Returns them."""
    newly = [
        i
        for i in scoring.newly_failing(set(config.current_passing), run, config.yardstick)
        if "::" in i and i in run.outcomes and run.outcomes[i].outcome != "timeout"
    ]  # a hang would cost its whole limit again
    if not newly or len(newly) > MAX_RERUN or not config.test_command.is_pytest:
        return []
    rerun = await config.executor.run(candidate_job(config, board, cid, path, "rerun", newly), files_dir)
    if rerun.status != JobStatus.ok:
        return []
    passed = [i for i in newly if i in rerun.run.outcomes and rerun.run.outcomes[i].outcome in PASSING]
    run.outcomes.update({i: rerun.run.outcomes[i] for i in passed})
    return passed


def score(result: CandidateResult, run: TestRun, config: FanOutConfig, files: list[str]) -> None:
    reason = scoring.tamper_reason(files, run, config.yardstick, config.test_patterns, config.allow_test_edits)
    reason = reason or scoring.outside_targets_reason(run, config.protected)
    counts = config.yardstick.counts(run)
    result.pass_rate = counts.pass_rate
    result.failed_tests = config.yardstick.failing(run)
    result.newly_failing = scoring.newly_failing(set(config.current_passing), run, config.yardstick)
    if reason:
        result.status, result.reason = CandidateStatus.rejected, reason
        return
    result.status = CandidateStatus.ok
    result.score = counts.pass_rate


def _size(limit: int | None) -> str:
    return f"{(limit or 0) / 2**20:g} MiB"


def _read_or_none(path: Path) -> bytes | None:
    try:
        return os.readlink(path).encode(errors="surrogateescape") if path.is_symlink() else path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
