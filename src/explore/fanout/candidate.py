"""One candidate: its worktree, its generator step, the checks on its patch (checks.py), its test
jobs (testjobs.py); a twin — the same normalised patch as an earlier candidate — waits for that
one's tests on the board (board.py) instead of running its own.

Generation needs the local worktree (an agent or a coder edits files there); the patch it leaves
is what travels to the executor, which runs the candidate's tests wherever it runs them.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

import anyio

from ..decide import escalation, redaction, scoring
from ..edges.worktrees import run_setup
from ..executors.jobs import JobStatus
from ..generators.base import CandidateContext
from ..model.candidates import CandidatePlan, CandidateResult, CandidateStatus
from ..model.errors import BudgetExhausted, Escalation, GeneratorFailed, SetupFailed
from ..model.events import Phase
from ..model.usage import Usage
from .board import Board
from .checks import LINK_REWRITTEN, outside, patch_rejection, score
from .config import FanOutConfig
from .testjobs import confirm_reruns, job_failure, ranked, run_tests
from .turns import off_the_clock


async def run_candidate(plan: CandidatePlan, config: FanOutConfig, board: Board) -> CandidateResult:
    """The candidate of plan from worktree to scored result under --branch-timeout, then checked for
    what it changed outside its worktree; whatever it does, its failure is its status, never raised."""
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
        with anyio.fail_after(config.branch_timeout) as scope:
            board.deadlines[plan.id] = scope
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
        board.deadlines.pop(plan.id, None)
        board.running -= 1
        board.done[plan.id].set()
    if config.pending is not None and plan.id in config.pending.withdrawn:  # its scope was cancelled
        result.status, result.reason = CandidateStatus.rejected, config.pending.withdrawn[plan.id]
        result.tested = result.validated = False
    if config.watch is not None:
        try:
            outside(result, await config.watch.leave(plan.id))
        except (OSError, RuntimeError) as exc:  # never merged unchecked
            result.status, result.reason = (
                CandidateStatus.crashed,
                f"could not check what it changed outside its worktree: {exc}"[:500],
            )
        if result.status != CandidateStatus.ok:  # a whole-suite turn's result it gave back no longer counts
            board.turns.withdraw(plan.id)
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


def _crashed(result: CandidateResult, exc: Exception) -> None:
    result.status, result.reason = CandidateStatus.crashed, f"{type(exc).__name__}: {exc}"[:500]
    result.usage = Usage.of(getattr(exc, "usage", None) or result.usage)  # what a generator spent before failing


async def _attempt(
    plan: CandidatePlan, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path
) -> None:
    path, fresh = await anyio.to_thread.run_sync(config.pool.acquire, plan.id, config.commit)
    confine = config.sandbox.confine(path, files_dir, own_store=True) if config.sandbox else None
    if fresh and config.worktree_setup:
        config.emit(plan.id, Phase.setup)
        setup = await run_setup(
            config.worktree_setup,
            path,
            files_dir / "setup.log",
            tracker=config.tracker,
            confine=confine,
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
        confine=confine,
        git=partial(config.pool.git_in, path),
        base=config.commit,
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
    await anyio.to_thread.run_sync(config.pool.settle, path)  # nothing of its own store left in the user's view
    patch_file = files_dir / "candidate.diff"
    captured = await anyio.to_thread.run_sync(config.pool.capture_patch, path, patch_file, config.max_patch_bytes)
    if captured.patch is not None and redaction.leaked(captured.patch):
        redaction.scrub_file(
            patch_file
        )  # the later iterations' prompts read it: the value stays in memory, to be rejected
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
    rejection = await patch_rejection(plan.id, path, config, board, captured)
    if rejection:
        result.status, result.reason = CandidateStatus.rejected, rejection
        return
    result.removals = board.removals.get(plan.id, [])
    key = scoring.patch_key({f: _read_or_none(path / f) for f in files})
    board.keys[plan.id] = key
    twin = board.first_by_key.setdefault(key, plan.id)
    if twin != plan.id:
        pending = config.pending
        config.emit(plan.id, Phase.shared, twin)
        with off_the_clock(board.deadlines.get(plan.id)):  # its twin's tests are not its own time
            await board.done[twin].wait()
            config = await config.judged(plan.id)
        if twin in board.runs:
            score(result, board.runs[twin], config, files)
            result.validated = twin not in board.estimates
            result.progress = f"same normalised patch as candidate {twin}"
            return
        if twin in board.skipped:
            _not_tested(result, f"same normalised patch as candidate {twin}, not tested")
            return
        if pending is None or twin not in pending.withdrawn:
            result.status, result.reason = (
                CandidateStatus.crashed,
                f"same patch as candidate {twin}, which did not finish",
            )
            return
        # its twin was withdrawn for its aims, which are not this one's: the patch is tested as this one
        board.first_by_key[key] = plan.id
    try:
        await _tested(plan.id, path, config, board, result, files_dir)
    finally:  # a whole-suite first run's turn: its rank, once validated, is what the others must beat
        validated = result.status == CandidateStatus.ok and result.validated
        scored = ranked(board, result, result.pass_rate, len(result.newly_failing)) if validated else None
        board.turns.give_back(plan.id, scored)


async def _tested(
    cid: str, path: Path, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path
) -> None:
    """cid's test job, its flaky rerun and its score."""
    job = await run_tests(cid, path, config, board, result, files_dir)
    if job is None:
        board.skipped.add(cid)
        best = board.turns.best
        why = board.turns.stopped.get(cid) or (
            f"candidate {best.id if best else '?'} outranks it even if it passed every test"
        )
        _not_tested(result, f"not tested: {why}")
        config.emit(cid, Phase.not_tested, why)
        return
    if not config.pool.intact(path):  # its code, run by the tests, rewrote the link
        result.status, result.reason = CandidateStatus.rejected, LINK_REWRITTEN
        return
    if job.status != JobStatus.ok:
        result.status, result.reason = job_failure(job)
        return
    config = await config.judged(cid)  # scored once the baseline's flaky rerun has ended (pending.py)
    board.runs[cid] = job.run
    await confirm_reruns(cid, path, config, board, result, job.run, files_dir)
    if not config.pool.intact(path):  # the reruns ran its code too
        result.status, result.reason = CandidateStatus.rejected, LINK_REWRITTEN
        return
    score(result, job.run, config, result.files_changed)


def _not_tested(result: CandidateResult, progress: str) -> None:
    """No test of the candidate ran (its whole-suite first run's turn never came): not validated,
    no score; validation runs its suite if the one that outranks it is not merged after all. The
    reason says so where the report says why a candidate was not merged."""
    result.status, result.validated, result.progress, result.reason = CandidateStatus.ok, False, progress, progress
    result.tested = False


def _size(limit: int | None) -> str:
    return f"{(limit or 0) / 2**20:g} MiB"


def _read_or_none(path: Path) -> bytes | None:
    try:
        return os.readlink(path).encode(errors="surrogateescape") if path.is_symlink() else path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
