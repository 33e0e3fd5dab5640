"""An iteration's steps (detect, select, propose, fan out, score, merge), each returning what it found:
the loop (run/loop.Runner.iteration) runs them in order and writes what they return into the run's
state. Nothing here writes the RunState."""

from __future__ import annotations

import logging
import string
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import git

from .. import generators
from ..decide import history, scoring, shard_plan, strategy, targets
from ..decide.affected import ImportMap
from ..decide.strategy import Strategy
from ..edges import attribution, gitrepo, history_io
from ..fanout.config import FanOutConfig
from ..fanout.pending import Judged, Pending
from ..fanout.scheduler import FanOutResult
from ..generators.base import FixGenerator
from ..model import tally as agent_tally
from ..model import usage
from ..model.candidates import CandidatePlan, CandidateResult, CandidateStatus, IterationRecord, PhaseTiming, Proposal
from ..model.config import parse_size
from ..model.errors import BudgetExhausted, Escalation
from ..model.events import Listener, Note, Subscriber
from ..model.runstate import RunState
from ..model.testresults import TestOutcome, TestRun
from . import merging
from .kit import Kit
from .suite import weights_of
from .transitions import yardstick

LETTERS = string.ascii_lowercase
logger = logging.getLogger("explore.loop")
_T = TypeVar("_T")


def failing(run: RunState, tests: TestRun) -> list[TestOutcome]:
    """The failing tests to repair, as the current run found them (the set-aside ones left out)."""
    repair = targets.to_repair(run.current_failing, run.targets)
    return [tests.outcomes[i] for i in repair if i in tests.outcomes and i not in run.set_aside]


def threshold(strategies: dict[str, Strategy], name: str, field: str, default: _T) -> _T:
    found = strategies.get(name)
    value = getattr(found.trigger, field) if found else None
    return default if value is None else value


def choose(
    kit: Kit, run: RunState, n: int, failing: list[TestOutcome], flaky: frozenset[str]
) -> tuple[strategy.Choice, history.Detection]:
    """Detect (history: stuck tests, a regression, the trend) and select the iteration's strategy."""
    # its own branch record says what the user's branch held when this run paused, not where it goes
    # on from: read, it would be a drop from the last merge to the baseline (a false regression)
    records = [r for r in history_io.load(kit.history_path) if not (r.branch and r.run_id == run.run_id)]
    detection = history.detect(
        records,
        [o.message for o in failing if o.id not in flaky],
        flaky=flaky | frozenset(run.preexisting_failures),
        stuck_threshold=threshold(kit.strategies, "exploratory", "stuck_iterations", 3),
        regression_points=threshold(kit.strategies, "surgical", "regression_drop", 10.0),
        reports=[o.longrepr or o.message for o in failing if o.id not in flaky],
    )
    choice = strategy.select(kit.strategies, n, run.current.pass_rate, detection, kit.options.strategy)
    return choice, detection


def tried_patches(run: RunState) -> list[str]:
    """Patches tried on the current commit: a patch that failed before an earlier merge may
    be the second half of a two-edit fix now."""
    since = max((i for i, r in enumerate(run.iterations) if r.commit), default=-1) + 1
    patches = []
    for record in run.iterations[since:]:
        for candidate in record.candidates:
            if candidate.patch_path and Path(candidate.patch_path).exists():
                patches.append(Path(candidate.patch_path).read_text(encoding="utf-8", errors="replace"))
    return patches


def request(
    kit: Kit,
    run: RunState,
    n: int,
    chosen: Strategy,
    failing: list[TestOutcome],
    detection: history.Detection,
    scratch: Path,
    iteration_dir: Path,
    tests: TestRun,
    deadline: float | None,
) -> generators.ProposalRequest:
    """What the generator is asked: the failing tests, the strategy, what was tried, the limits."""
    options = kit.options
    return generators.ProposalRequest(
        repo_root=kit.root,
        scratch=scratch,
        current_commit=run.current_commit,
        base_commit=run.base_commit,
        n=options.parallel,
        iteration=n,
        strategy=chosen,
        failing=failing,
        passing=sorted(set(run.baseline_ids) - set(run.current_failing)),
        test_command=kit.test_command,
        run_dir=iteration_dir,
        history=list(run.iterations),
        tried_patches=tried_patches(run),
        test_patterns=options.test_patterns,
        allow_test_edits=options.allow_test_edits,
        hint="\n".join(run.hints) or None,
        tracker=kit.tracker,
        regression=detection.regressed,
        time_limit=kit.suite.generator_limit(tests),
        deadline=deadline,
        durations={i: o.duration_s for i, o in tests.outcomes.items()},
    )


async def propose(generator: FixGenerator, asked: generators.ProposalRequest, iteration_dir: Path) -> Proposal:
    """The generator's proposal. A generator bug costs an iteration, never the run: it is a proposal
    with no plans (the traceback beside). Escalation and BudgetExhausted go up to the loop."""
    try:
        proposal = await generator.propose(asked)
    except (Escalation, BudgetExhausted):
        raise
    except Exception as exc:
        log = iteration_dir / "generator-error.txt"
        log.write_text(traceback.format_exc(), encoding="utf-8")
        proposal = Proposal(
            reason=f"the generator failed: {type(exc).__name__}: {exc} (traceback in {log})",
            usage=usage.Usage.of(getattr(exc, "usage", None)),
        )
    logger.debug("generator: %s", proposal.reason or "(no note)")
    return proposal


def lettered(proposal: Proposal, parallel: int, generator: str) -> list[CandidatePlan]:
    """At most `parallel` plans, named a, b, c…, each with the generator that proposed it."""
    plans = proposal.plans[:parallel]
    for letter, plan in zip(LETTERS, plans):
        plan.id, plan.generator = letter, plan.generator or generator
    return plans


def new_record(n: int, choice: strategy.Choice, proposal: Proposal, timing: PhaseTiming) -> IterationRecord:
    return IterationRecord(
        n=n,
        strategy=choice.name,
        strategy_reason=choice.reason,
        generator_note=proposal.reason,
        usage=proposal.usage,
        timing=timing,
        fallbacks=list(proposal.fallbacks),
        search_complete=proposal.exhausted,
    )


def note_chain(emit: Subscriber, proposal: Proposal, plans: list[CandidatePlan], generator: str) -> None:
    """An `--agent A,B,C` chain: why it moved on, and which generator proposed."""
    for why in proposal.fallbacks:
        emit(Note(f"fallback: {why}"))
    if plans and generators.SEPARATOR in generator:  # a fleet: each candidate's agent
        emit(Note("candidates: " + ", ".join(f"{p.id} {p.generator}" for p in plans)))
    elif plans and "," in generator:
        emit(Note(f"candidates by {plans[0].generator}"))


def import_map(worktree: Path, run: RunState, known: ImportMap | None = None) -> ImportMap:
    """The baseline's test files' imports, at the worktree; known: what was read ahead (imports_ahead)."""
    files = {i.split("::", 1)[0] for i in run.baseline_ids if "::" in i}
    return ImportMap.build(worktree, files, known)


def judging(run: RunState, tests: TestRun, flaky: frozenset[str]) -> Judged:
    """What the candidates are judged by: the run's yardstick, the tests passing in its current run
    (flaky ones left out), its pass rate, and the tests no candidate may break."""
    return Judged(
        yardstick=yardstick(run),
        current_passing=frozenset(tests.passing() - flaky),
        current_rate=run.current.pass_rate,
        protected=targets.protected(
            run.baseline_ids,
            run.targets,
            run.preexisting_failures,
            flaky | frozenset(run.baseline_xfailed),
        ),  # xfail stays allowed there
    )


def config(
    kit: Kit,
    run: RunState,
    asked: generators.ProposalRequest,
    tests: TestRun,
    flaky: frozenset[str],
    listener: Listener,
    progressive: bool,
    watch: attribution.Watch,
    known_imports: ImportMap | None = None,
    pending: Pending | None = None,
) -> FanOutConfig:
    """How the candidates are realised, tested and scored: against the current commit and its run
    (`asked`: what the generator was asked, in the iteration's folder and scratch worktree;
    known_imports: the import map read while the baseline ran, run/imports_ahead; pending: the
    baseline's flaky rerun still going, fanout/pending)."""
    options = kit.options
    judged = judging(run, tests, flaky)
    return FanOutConfig(
        generator=kit.generator,
        request=asked,
        pool=kit.pool,
        executor=kit.executor,
        commit=run.current_commit,
        iteration_dir=asked.run_dir,
        test_command=kit.test_command,
        yardstick=judged.yardstick,
        current_passing=judged.current_passing,
        current_xfailed=frozenset(i for i, o in tests.outcomes.items() if o.outcome == "xfailed")
        & frozenset(run.baseline_xfailed),
        current_rate=judged.current_rate,
        test_patterns=options.test_patterns,
        allow_test_edits=options.allow_test_edits,
        branch_timeout=options.branch_timeout,
        worktree_setup=options.worktree_setup,
        tracker=kit.tracker,
        listener=listener,
        progressive=progressive,
        memory_limit=kit.memory_limit,
        import_map=import_map(asked.scratch, run, known_imports)
        if progressive
        else None,  # read only by a progressive run
        shard_weights=shard_plan.file_weights(tests.outcomes, weights_of(tests)),
        durations=weights_of(tests),
        whole_first_allowed=asked.strategy.tests.mode == "auto",
        shards=options.shards,
        overhead_s=kit.suite.overhead_s,
        protected=judged.protected,
        frozen=frozenset(run.reproduction.files if run.reproduction else ()),
        test_data=frozenset(run.baseline_opened),
        allow_new_files=tuple(options.allow_new_files),
        watch=watch,
        sandbox=kit.sandbox,
        max_patch_bytes=parse_size(options.max_patch_size),
        pending=pending,
    )


@dataclass(frozen=True)
class Pick:
    """The candidate to merge and its commit (built, no ref moved yet)."""

    best: CandidateResult
    commit: str


def pick(
    repo: git.Repo, run: RunState, record: IterationRecord, outcome: FanOutResult, emit: Subscriber
) -> Pick | None:
    """The best candidate, if it improves on the current pass rate and its commit is the tree it was
    tested on (else it is rejected: the candidate's result says why)."""
    best = outcome.best()
    if best is None:
        return None
    before = run.current.pass_rate
    if not scoring.is_improvement(best.pass_rate, before):
        emit(Note(f"best candidate {best.id} ({best.pass_rate:.1f}%) does not improve on {before:.1f}%"))
        return None
    try:
        new = merging.build_commit(repo, run, record, best, outcome.tested[best.id])
    except gitrepo.TreeMismatch as exc:
        best.status, best.reason, best.score = (
            CandidateStatus.rejected,
            f"its commit is not what was tested: {exc}",
            0.0,
        )
        emit(Note(f"candidate {best.id} not merged: {best.reason}"))
        return None
    return Pick(best, new)


def debug_report(
    kit: Kit, run: RunState, record: IterationRecord, failing: list[TestOutcome]
) -> tuple[Path, str | None] | None:
    """--reports-dir: the iteration's report by topic (its path); with --commit-reports, also the
    commit on the run branch's tip that carries it (no ref moved yet). None: no --reports-dir."""
    options = kit.options
    if not options.reports_dir:
        return None
    from . import debug_reports  # here: only --reports-dir needs it

    return debug_reports.write(
        kit.root,
        kit.info.repo,
        options.reports_dir,
        run,
        record,
        failing,
        options.commit_reports and bool(run.branch),
    )


def tally(
    record: IterationRecord, outcome: FanOutResult, emit: Subscriber, kept: list[CandidateResult] | None = None
) -> None:
    """The candidates on the iteration's record (not yet in the run's state): their results, what
    they cost, and the generator fallbacks they took. kept: results the fan-out never saw (the
    withdrawn ones), listed with them in letter order."""
    record.candidates = sorted([*outcome.candidates, *kept], key=lambda c: c.id) if kept else outcome.candidates
    for candidate in record.candidates:
        record.usage += candidate.usage
        record.fallbacks += candidate.fallbacks
        for why in candidate.fallbacks:
            emit(Note(f"fallback: {why}"))


def baseline_record(run: RunState) -> history.HistoryRecord:
    """The baseline's line (iteration 0) in .explore/history.jsonl."""
    return history.HistoryRecord(
        run_id=run.run_id,
        n=0,
        pass_rate=run.current.pass_rate,
        failing=run.current_failing,
        flaky=run.flaky,
        commit=run.current_commit,
        green=not run.current_failing,
    )


def history_record(run: RunState, n: int, record: IterationRecord, strategy_name: str) -> history.HistoryRecord:
    """The iteration's line in .explore/history.jsonl."""
    return history.HistoryRecord(
        run_id=run.run_id,
        n=n,
        pass_rate=record.pass_rate,
        failing=record.failed_tests,
        flaky=run.flaky,
        strategy=strategy_name,
        commit=run.current_commit,
        green=not record.failed_tests,
        set_aside=list(run.set_aside),
        agents=agent_tally.tally([record]),
    )
