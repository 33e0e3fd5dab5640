"""The run's state machine: baseline, iterations (detect, select, propose, fan out, score, merge),
stop conditions, checkpoints after every step, and cleanup whatever happens."""

from __future__ import annotations

import logging
import os
import string
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import anyio

from .. import executors, generators
from ..decide import criticality, escalation, history, redaction, scoring, shard_plan, strategy, targets
from ..decide import stop as giving_up
from ..decide.affected import ImportMap
from ..edges import gitrepo, guard, history_io, procs, sandbox, strategy_io
from ..edges.testing import BASELINE_TEST_TIMEOUT, TestCommand, make_command
from ..edges.worktrees import WorktreePool, default_root
from ..fanout.scheduler import FanOutConfig, FanOutResult, fan_out
from ..model import usage
from ..model.candidates import CandidatePlan, CandidateStatus, IterationRecord, PhaseTiming, Proposal
from ..model.config import Options, parse_size
from ..model.errors import BudgetExhausted, Escalation, UsageError
from ..model.events import (
    BaselineFinished,
    CandidateEvent,
    Escalated,
    FanOutStarted,
    IterationStarted,
    Merged,
    Note,
    Phase,
    RunFinished,
    Subscriber,
    UsageSpent,
)
from ..model.phase import RunPhase, Stage
from ..model.runstate import Criticality, EscalationCategory, RunState
from ..model.testresults import TestOutcome, TestRun
from . import adoption, applying, baseline, debug_reports, merging, signals, state, targeting
from .suite import Suite, weights_of

LETTERS = string.ascii_lowercase
Number = TypeVar("Number", int, float)
logger = logging.getLogger("explore.loop")


@dataclass
class Runner:
    info: gitrepo.RepoInfo
    options: Options
    run: RunState
    emit: Subscriber
    tracker: procs.ProcessTracker = field(default_factory=procs.ProcessTracker)
    current_run: TestRun | None = None
    interrupted: bool = False
    refused: UsageError | None = None
    """Input found wrong once the baseline ran (targets matching no test): raised after cleanup."""
    suite_s: float = 0.0
    """Seconds of the last baseline (or resume re-test) not yet booked on an iteration's timing."""
    clock: giving_up.SearchClock | None = None
    """The search budget's clock (decide/stop.py), started once the baseline has run."""

    def __post_init__(self) -> None:
        self.root = self.info.root
        extra = [self.root / ".explore" / "strategies"]
        if self.options.strategies_dir:
            extra.append((self.root / self.options.strategies_dir).resolve())
        self.strategies = strategy_io.load_strategies(extra)
        self.agent = generators.resolve_agent(self.options.agent, self.options.agent_cmd, self.options.agents)
        # what earlier sessions of a resumed run spent counts against its budget
        self.generator = generators.create(
            self.agent, {**self.options.model_dump(), "spent": self.run.usage.model_dump()}
        )
        test_command = make_command(
            self.options.test_cmd,
            self.options.junit_xml,
            self.options.python,
            test_timeout=self.options.test_timeout or self.run.test_timeout or BASELINE_TEST_TIMEOUT,
            root=self.root,
            slowest_pass_s=self.run.slowest_pass_s or 0.0,
        )
        pool_root = (
            Path(self.options.worktree_dir).expanduser() / self.root.name
            if self.options.worktree_dir
            else default_root(self.root)
        )
        self.pool = WorktreePool(
            self.info.repo,
            self.root,
            pool_root / self.run.run_id,
            include=self.options.worktree_include,
            keep_ignored=bool(self.options.worktree_setup),
        )
        self.memory_limit = self.options.memory_cap()
        self.pool.disk_floor = parse_size(self.options.disk_floor)
        self.history_path = state.explore_dir(self.root) / "history.jsonl"
        self.run_dir = state.run_dir(self.root, self.run.run_id)
        self.sandbox = sandbox.probe(self.options.sandbox, tuple(self.options.sandbox_writable))
        self.emit(Note(self.sandbox.note))
        self.executor = executors.create(
            self.options,
            root=self.root,
            run_id=self.run.run_id,
            pool=self.pool,
            tracker=self.tracker,
            sandbox=self.sandbox,
        )
        self.suite = Suite(
            self.executor,
            test_command,
            self.options,
            self.run_dir,
            self.emit,
            self.tracker,
            self.memory_limit,
            sandbox=self.sandbox,
        )
        self.guard = guard.Guard(
            self.root, Path(self.info.repo.git_dir), Path(self.info.repo.common_dir), self.run_dir / "quarantine"
        )
        self.fence: guard.Fingerprint | None = None
        """The user's tree and git dir as the last fan-out found (and left) them."""

    # ------------------------------------------------------------------ helpers

    @property
    def test_command(self) -> TestCommand:
        """The suite's command: the baseline gives it the per-test limit it derives."""
        return self.suite.command

    @property
    def tools(self) -> baseline.Tools:
        return baseline.Tools(
            repo=self.info.repo,
            root=self.root,
            options=self.options,
            pool=self.pool,
            suite=self.suite,
            generator=self.generator,
            history_path=self.history_path,
            run_dir=self.run_dir,
            tracker=self.tracker,
            memory_limit=self.memory_limit,
            sandbox=self.sandbox,
            emit=self.emit,
        )

    def save(self, phase: RunPhase | None = None) -> None:
        if phase:
            self.run.phase = phase
        self.run.worktrees = [str(p) for p in self.pool.created.values()]
        self.run.pids = sorted(self.tracker.pids)
        self.run.duration_s = round(time.time() - self.run.started_at, 3)
        state.save(self.root, self.run)

    @property
    def yardstick(self) -> scoring.Yardstick:
        flaky = frozenset(self.run.flaky)  # counted neither way: never a reason to merge or reject
        return scoring.Yardstick(
            frozenset(self.run.baseline_ids) - flaky,
            frozenset(self.run.baseline_skipped) | flaky,
            frozenset(self.run.baseline_xfailed),
            frozenset(self.run.baseline_unconfirmed),
        )

    def criticality_of(self, failing: list[str]) -> dict[str, Criticality]:
        outcomes = self.current_run.outcomes if self.current_run else {}
        return {t: criticality.classify(t, outcomes.get(t), self.options.criticality) for t in failing}

    # ------------------------------------------------------------------ phases

    async def execute(self) -> RunState:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(signals.watch, scope, self._interrupt)
                try:
                    await self._main()
                finally:
                    group.cancel_scope.cancel()
        if self.refused:
            raise self.refused
        if self.interrupted:
            self.run.status = "interrupted"
            self.run.stop_reason = "interrupted by a signal; `explore resume` continues"
        return self.run

    def _interrupt(self, again: bool) -> None:
        if again:  # second signal: force it
            self.tracker.kill_all()
            os._exit(130)
        self.interrupted = True
        self.emit(Note("interrupted: stopping candidates and cleaning up (Ctrl-C again to force)"))

    async def _main(self) -> None:
        self.emit(Note(generators.why_agent(self.options.agent, self.options.agent_cmd, self.agent)))
        try:
            if not self.run.baseline_ids and self.run.phase.before_baseline:
                await self.start()
            else:
                await self.retest()
            self.start_clock()
            while self.run.status == "running":
                await self.iteration()
        except Escalation as exc:
            self.escalate(exc.category, exc.reason, exc.suggested_action)
        except BudgetExhausted as exc:
            self.run.status, self.run.stop_reason = "failed", f"budget: {exc}"
        except UsageError as exc:
            self.refused = exc
        finally:
            with anyio.CancelScope(shield=True):
                await self.generator.aclose()  # a generator's warm workers (mutate)
                await self.executor.close()
                self.tracker.kill_all()
                await anyio.to_thread.run_sync(self.pool.remove_all)
                self.save()

    def start_clock(self) -> None:
        """The search budget, in proportion to the suite's time as this run measured it."""
        budget = giving_up.budget_for(self.options.search_budget_spec(), self.generator.suite_bound)
        if budget is None:
            return
        test_s = shard_plan.test_seconds(self.current_run) if self.current_run else 0.0
        suite_s = giving_up.suite_seconds(test_s, self.suite.overhead_s)
        self.clock = giving_up.SearchClock(budget, suite_s, time.monotonic())
        if self.run.status == "running":
            self.emit(Note(f"search budget: {self.clock.describe()} with no repair in sight (--search-budget)"))

    def give_up(self, why: giving_up.Why) -> None:
        assert self.clock is not None
        self.run.gave_up = giving_up.account(why, self.clock, time.monotonic(), self.run, self.agent)
        self.run.status, self.run.stop_reason = (
            "failed",
            giving_up.reason(self.run.gave_up, self.clock, self.generator.name),
        )

    def escalate(self, category: EscalationCategory, reason: str, action: str) -> None:
        self.run.status = "escalated"
        self.run.escalation = escalation.info(
            category,
            reason,
            action,
            self.run.run_id,
            len(self.run.iterations),
            self.agent,
            any(r.commit for r in self.run.iterations),
        )
        self.run.stop_reason = f"escalated ({category})"
        self.emit(Escalated(self.run.escalation))

    def set_current(self, run: TestRun) -> None:
        yard = self.yardstick
        self.run.current = yard.counts(run)
        self.run.current_failing = yard.failing(run)
        self.run.failure_messages = {
            i: (run.outcomes[i].message if i in run.outcomes else "missing from the run")[:500]
            for i in self.run.current_failing
        }

    def check_gate(self) -> None:
        self.run.criticality = self.criticality_of(self.run.current_failing)
        blocking = targets.blocking(self.run.current_failing, self.run.targets, self.run.preexisting_failures)
        verdict = criticality.gate(
            self.run.current.pass_rate, {t: self.run.criticality[t] for t in blocking}, self.options.target_pass_rate
        )
        if verdict:
            self.run.status = verdict
            self.run.stop_reason = "the quality gate is met" + (
                " (the whole suite is green)" if verdict == "succeeded" else ""
            )
            if verdict == "succeeded" and self.run.current_failing:
                self.run.stop_reason = (
                    f"the quality gate is met (every target passes; {len(self.run.current_failing)} "
                    "pre-existing failure(s) outside the targets left alone)"
                )

    # ------------------------------------------------------------------ where the run starts

    async def start(self) -> None:
        """A new run's baseline (baseline.py): the suite on the base commit, `--issue`'s
        reproduction, then what the run tells about the tests, written into the state."""
        self.save(RunPhase.at(Stage.baseline))
        measured = await baseline.measure(self.tools, self.run.base_commit)
        self.suite_s = measured.seconds
        run = await self._reproduce(measured.run) if self.options.issue else measured.run
        found = await baseline.assess(
            self.tools,
            run,
            measured,
            targeting.Targets(
                self.run.targets,
                self.run.preexisting_failures,
                self.run.known_failures,
                self.run.environment_failures,
            ),
            self.run.current_commit,
            self.run.reproduction.kept if self.run.reproduction else None,
        )
        self.run.baseline_skipped, self.run.baseline_ids = found.skipped, found.ids
        self.run.baseline_xfailed, self.run.baseline_opened = found.xfailed, found.opened
        self.run.baseline_unconfirmed = found.unconfirmed
        if found.test_timeout is not None:
            self.run.test_timeout = found.test_timeout
        self.run.slowest_pass_s = found.slowest_pass_s
        self.run.flaky = found.flaky
        chosen = found.targets
        self.run.targets, self.run.preexisting_failures = chosen.targets, chosen.preexisting
        self.run.known_failures, self.run.environment_failures = chosen.known_failures, chosen.environment_failures
        if found.stop is not None:
            raise found.stop
        self.current_run = found.run
        self.set_current(found.run)
        self.run.baseline = self.run.current.model_copy()
        earlier = set(found.set_aside_before) & set(self.run.current_failing)
        self.run.unmoved_streak = {t: history.SET_ASIDE_AFTER - 1 for t in sorted(earlier)}
        history_io.append(
            self.history_path,
            history.HistoryRecord(
                run_id=self.run.run_id,
                n=0,
                pass_rate=self.run.current.pass_rate,
                failing=self.run.current_failing,
                flaky=self.run.flaky,
                commit=self.run.current_commit,
                green=not self.run.current_failing,
            ),
        )
        self.emit(BaselineFinished(self.run.baseline.model_copy(), tuple(self.run.flaky)))
        self.run.baseline_timeouts = found.timeouts
        hung = baseline.hung_note(found.timeouts)
        if hung:
            self.emit(Note(hung))
        if self.test_command.test_timeout:
            self.emit(Note(f"per-test limit from now on: {self.test_command.test_timeout:g}s"))
        self.check_gate()
        self.save(RunPhase.at(Stage.iterating))

    async def _reproduce(self, run: TestRun) -> TestRun:
        """`--issue`'s iteration 0: the kept tests committed as "reproduce: …" on the run branch;
        the suite re-run on that commit is the baseline. None kept: escalated."""
        found = await baseline.reproduce_issue(self.tools, self.run.base_commit)
        result = found.result
        for attempt in result.samples:
            self.run.usage += attempt.usage
        self.run.reproduction = result
        if not result.kept:
            self.run.baseline_ids = sorted(i for i, o in run.outcomes.items() if o.outcome != "skipped")
            self.set_current(run)
            self.run.baseline = self.run.current.model_copy()
            raise baseline.not_reproduced(result)
        assert result.chosen and self.run.branch
        commit = await baseline.commit_reproduction(self.tools, found, self.run.base_commit)
        applying.move_run(self.info.repo, self.run, commit, self.run.current_commit)
        self.run.current_commit = result.commit = commit
        self.emit(Note(f"reproduce: kept {', '.join(result.kept)} (sample {result.chosen}) as {commit[:10]}"))
        self.save(RunPhase.at(Stage.baseline))
        return await baseline.run_reproduced(self.tools, commit)

    async def retest(self) -> None:
        """On resume: an iteration merged on the run branch after the last save is adopted
        (adoption.py), then the current commit re-tested for fresh failure details."""
        adopted = adoption.found_on_branch(self.info.repo, self.run)
        if adopted is not None and adopted.commit:
            self.emit(Note(f"adopting {adopted.commit[:10]}, merged on the run's branch just before the run stopped"))
            self.run.current_commit = self.run.merged_commit = adopted.commit
            self.run.iterations.append(adopted)
        found = await baseline.retest(
            self.tools, self.run.run_id, self.run.current_commit, len(self.run.iterations), self.run.baseline_ids
        )
        self.suite_s = found.seconds
        self.current_run = found.run
        self.set_current(found.run)
        last = self.run.iterations[-1] if self.run.iterations else None
        if last and last.strategy_reason == adoption.RECOVERED and not last.failed_tests and last.pass_rate == 0:
            last.pass_rate, last.failed_tests = self.run.current.pass_rate, list(self.run.current_failing)
        self.check_gate()

    # ------------------------------------------------------------------ an iteration

    async def iteration(self) -> None:
        n = len(self.run.iterations) + 1
        records = [r for r in history_io.load(self.history_path)]
        flaky = frozenset(self.run.flaky)
        assert self.current_run is not None
        repair = targets.to_repair(self.run.current_failing, self.run.targets)
        failing = [
            self.current_run.outcomes[i]
            for i in repair
            if i in self.current_run.outcomes and i not in self.run.set_aside
        ]
        detection = history.detect(
            records,
            [o.message for o in failing if o.id not in flaky],
            flaky=flaky | frozenset(self.run.preexisting_failures),
            stuck_threshold=self._threshold("exploratory", "stuck_iterations", 3),
            regression_points=self._threshold("surgical", "regression_drop", 10.0),
            reports=[o.longrepr or o.message for o in failing if o.id not in flaky],
        )
        choice = strategy.select(self.strategies, n, self.run.current.pass_rate, detection, self.options.strategy)
        chosen = self.strategies[choice.name]
        inputs = giving_up.SearchInputs(self.run.current_commit, choice.name, frozenset(o.id for o in failing))
        if self.clock is not None and self.clock.nothing_left(inputs):
            self.give_up("search_complete")
            return
        self.emit(IterationStarted(n, choice.name, choice.reason))
        iteration_dir = self.run_dir / f"iteration-{n}"
        iteration_dir.mkdir(parents=True, exist_ok=True)
        scratch, _ = await anyio.to_thread.run_sync(self.pool.acquire, "a", self.run.current_commit)
        request = generators.ProposalRequest(
            repo_root=self.root,
            scratch=scratch,
            current_commit=self.run.current_commit,
            base_commit=self.run.base_commit,
            n=self.options.parallel,
            iteration=n,
            strategy=chosen,
            failing=failing,
            passing=sorted(set(self.run.baseline_ids) - set(self.run.current_failing)),
            test_command=self.test_command,
            run_dir=iteration_dir,
            history=list(self.run.iterations),
            tried_patches=self._tried_patches(),
            test_patterns=self.options.test_patterns,
            allow_test_edits=self.options.allow_test_edits,
            hint="\n".join(self.run.hints) or None,
            tracker=self.tracker,
            regression=detection.regressed,
            time_limit=self.suite.generator_limit(self.current_run),
            deadline=self.clock.deadline() if self.clock else None,
        )
        self.save(RunPhase.at(Stage.propose, n))
        timing = PhaseTiming(baseline=round(self.suite_s, 3))
        self.suite_s = 0.0
        started = time.monotonic()
        try:
            proposal = await self.generator.propose(request)
        except (Escalation, BudgetExhausted) as exc:
            self.run.usage += usage.Usage.of(getattr(exc, "usage", None))
            raise
        except Exception as exc:  # a generator bug costs an iteration, never the run
            log = iteration_dir / "generator-error.txt"
            log.write_text(traceback.format_exc(), encoding="utf-8")
            proposal = Proposal(
                reason=f"the generator failed: {type(exc).__name__}: {exc} (traceback in {log})",
                usage=usage.Usage.of(getattr(exc, "usage", None)),
            )
        timing.propose = round(time.monotonic() - started, 3)
        timing.coverage, timing.screening = proposal.timing.coverage, proposal.timing.screening
        timing.prepare = proposal.timing.prepare
        self.run.usage += proposal.usage
        logger.debug("generator: %s", proposal.reason or "(no note)")
        plans = proposal.plans[: self.options.parallel]
        for letter, plan in zip(LETTERS, plans):
            plan.id, plan.generator = letter, plan.generator or self.generator.name
        record = IterationRecord(
            n=n,
            strategy=choice.name,
            strategy_reason=choice.reason,
            generator_note=proposal.reason,
            usage=proposal.usage,
            timing=timing,
            fallbacks=list(proposal.fallbacks),
            search_complete=proposal.exhausted,
        )
        if proposal.exhausted and self.clock is not None:
            self.clock.exhausted_on = inputs
        self.note_chain(proposal, plans)
        if not plans:
            self.emit(Note(f"no candidates: {proposal.reason or 'the generator had no idea'}"))
        else:
            self.emit(FanOutStarted(n, tuple(p.id for p in plans)))
            self.save(RunPhase.at(Stage.fanout, n))
            await self.executor.prepare(self.run.current_commit)
            watch = await guard.Watch.start(self.guard, f"iteration-{n}")
            self.fence = watch.baseline
            config = FanOutConfig(
                generator=self.generator,
                request=request,
                pool=self.pool,
                executor=self.executor,
                commit=self.run.current_commit,
                iteration_dir=iteration_dir,
                test_command=self.test_command,
                yardstick=self.yardstick,
                current_passing=frozenset(self.current_run.passing() - flaky),
                current_rate=self.run.current.pass_rate,
                test_patterns=self.options.test_patterns,
                allow_test_edits=self.options.allow_test_edits,
                branch_timeout=self.options.branch_timeout,
                worktree_setup=self.options.worktree_setup,
                tracker=self.tracker,
                listener=self._candidate_events(n),
                progressive=chosen.progressive,
                memory_limit=self.memory_limit,
                import_map=self.import_map(scratch),
                shard_weights=shard_plan.file_weights(self.current_run.outcomes, weights_of(self.current_run)),
                shards=self.options.shards,
                overhead_s=self.suite.overhead_s,
                protected=targets.protected(
                    self.run.baseline_ids,
                    self.run.targets,
                    self.run.preexisting_failures,
                    flaky | frozenset(self.run.baseline_xfailed),
                ),  # xfail stays allowed there
                frozen=frozenset(self.run.reproduction.files if self.run.reproduction else ()),
                test_data=frozenset(self.run.baseline_opened),
                watch=watch,
                sandbox=self.sandbox,
                max_patch_bytes=parse_size(self.options.max_patch_size),
            )
            started = time.monotonic()
            outcome = await fan_out(plans, config, self.options.parallel)
            timing.validation, timing.confirmation = round(outcome.validation_s, 3), round(outcome.confirmation_s, 3)
            timing.fanout = round(time.monotonic() - started - outcome.validation_s, 3)
            record.candidates = outcome.candidates
            for candidate in record.candidates:
                record.usage += candidate.usage
                self.run.usage += candidate.usage
                record.fallbacks += candidate.fallbacks
                for why in candidate.fallbacks:
                    self.emit(Note(f"fallback: {why}"))
            stop = outcome.findings.escalation(len(plans))
            if stop is not None:
                raise stop
            self.run.iterations.append(record)  # before the merge's checkpoint, so a kill keeps it
            started = time.monotonic()
            self._merge_best(record, outcome, n)
            timing.merge = round(time.monotonic() - started, 3)
        record.pass_rate, record.failed_tests = self.run.current.pass_rate, list(self.run.current_failing)
        self._set_aside_unmoved(proposal.unmoved)
        if not record.usage.empty:
            self.emit(UsageSpent(n, record.usage, self.run.usage))
        if not any(r is record for r in self.run.iterations):
            self.run.iterations.append(record)
        self.run.no_progress = 0 if record.commit else self.run.no_progress + 1
        if record.commit and self.clock is not None:
            self.clock.restart(time.monotonic())
        self._debug_report(record, failing)
        history_io.append(
            self.history_path,
            history.HistoryRecord(
                run_id=self.run.run_id,
                n=n,
                pass_rate=record.pass_rate,
                failing=record.failed_tests,
                flaky=self.run.flaky,
                strategy=choice.name,
                commit=self.run.current_commit,
                green=not record.failed_tests,
                set_aside=list(self.run.set_aside),
            ),
        )
        self.check_gate()
        if self.run.status == "running":
            left = [
                t
                for t in targets.to_repair(self.run.current_failing, self.run.targets)
                if t not in self.run.set_aside and t not in flaky
            ]
            if not left and self.run.set_aside:
                self.run.status, self.run.stop_reason = (
                    "failed",
                    f"only set-aside failures remain: {', '.join(self.run.set_aside)}",
                )
            elif n >= self.options.max_iterations:
                self.run.status, self.run.stop_reason = (
                    "failed",
                    f"max iterations ({self.options.max_iterations}) spent",
                )
            elif self.run.no_progress >= self.options.no_progress_limit:
                self.run.status, self.run.stop_reason = (
                    "failed",
                    f"no progress in {self.run.no_progress} iterations in a row",
                )
            elif self.clock is not None and self.clock.over(time.monotonic()):
                self.give_up("search_budget")
        self.save(RunPhase.at(Stage.done, n))

    def _debug_report(self, record: IterationRecord, failing: list[TestOutcome]) -> None:
        """--reports-dir: the iteration's report by topic; with --commit-reports, in the run branch's commit."""
        if not self.options.reports_dir:
            return
        path, tip = debug_reports.write(
            self.root,
            self.info.repo,
            self.options.reports_dir,
            self.run,
            record,
            failing,
            self.options.commit_reports and bool(self.run.branch),
        )
        if tip:
            applying.move_run(self.info.repo, self.run, tip, self.run.current_commit)
            if record.commit == self.run.current_commit:
                record.commit = tip
            self.run.current_commit = self.run.merged_commit = tip
        self.emit(Note(f"debug report: {path.relative_to(self.root)}" + (f" (committed as {tip[:10]})" if tip else "")))

    def _set_aside_unmoved(self, unmoved: list[str]) -> None:
        """A failing test that no edit the generator tried has moved, in two iterations running,
        is set aside: later iterations no longer aim at it (and the history remembers it)."""
        self.run.unmoved_streak = history.unmoved_streaks(self.run.unmoved_streak, unmoved, self.run.current_failing)
        new = history.to_set_aside(self.run.unmoved_streak, self.run.set_aside)
        if new:
            self.run.set_aside += new
            self.emit(
                Note(
                    f"setting aside {', '.join(new)}: no edit tried in {history.SET_ASIDE_AFTER} iterations running changed its outcome"
                )
            )

    def note_chain(self, proposal: Proposal, plans: list[CandidatePlan]) -> None:
        """An `--agent A,B,C` chain: why it moved on, and which generator proposed."""
        for why in proposal.fallbacks:
            self.emit(Note(f"fallback: {why}"))
        if plans and "," in self.generator.name:
            self.emit(Note(f"candidates by {plans[0].generator}"))

    def import_map(self, worktree: Path) -> ImportMap:
        files = {i.split("::", 1)[0] for i in self.run.baseline_ids if "::" in i}
        return ImportMap.build(worktree, files)

    def _threshold(self, name: str, field: str, default: Number) -> Number:
        found = self.strategies.get(name)
        value = getattr(found.trigger, field) if found else None
        return default if value is None else value

    def _candidate_events(self, n: int) -> Callable[[CandidateEvent], None]:
        def report(event: CandidateEvent) -> None:
            self.emit(event)
            if event.phase == Phase.finished:
                self.save(RunPhase.at(Stage.scored, n, event.candidate))

        return report

    def _tried_patches(self) -> list[str]:
        """Patches tried on the current commit: a patch that failed before an earlier merge may
        be the second half of a two-edit fix now."""
        since = max((i for i, r in enumerate(self.run.iterations) if r.commit), default=-1) + 1
        patches = []
        for record in self.run.iterations[since:]:
            for candidate in record.candidates:
                if candidate.patch_path and Path(candidate.patch_path).exists():
                    patches.append(Path(candidate.patch_path).read_text(encoding="utf-8", errors="replace"))
        return patches

    def _merge_best(self, record: IterationRecord, outcome: FanOutResult, n: int) -> None:
        best = outcome.best()
        if best is None:
            return
        before = self.run.current.pass_rate
        if not scoring.is_improvement(best.pass_rate, before):
            self.emit(Note(f"best candidate {best.id} ({best.pass_rate:.1f}%) does not improve on {before:.1f}%"))
            return
        try:
            new = merging.build_commit(self.info.repo, self.run, record, best, outcome.tested[best.id])
        except gitrepo.TreeMismatch as exc:
            best.status, best.reason, best.score = (
                CandidateStatus.rejected,
                f"its commit is not what was tested: {exc}",
                0.0,
            )
            self.emit(Note(f"candidate {best.id} not merged: {best.reason}"))
            return
        if best.rerun_passed:
            self.run.flaky = sorted(set(self.run.flaky) | set(best.rerun_passed))
            self.emit(
                Note(
                    f"flaky: {', '.join(best.rerun_passed[:5])} failed in candidate {best.id}'s run and passed rerun alone"
                )
            )
        merging.move_to(self.info.repo, self.run, new)
        self.run.current_commit, self.run.merged_commit = new, new
        record.winner, record.commit = best.id, new
        self.current_run = outcome.runs[best.id]
        self.set_current(self.current_run)
        self.emit(Merged(best.id, before, self.run.current.pass_rate, new))
        self.save(RunPhase.at(Stage.merged, n))


def check_options(root: Path, options: Options) -> None:
    """Refuse an unknown strategy or agent before anything is written."""
    extra = [root / ".explore" / "strategies"] + (
        [(root / options.strategies_dir).resolve()] if options.strategies_dir else []
    )
    known = strategy_io.load_strategies(extra)
    if options.strategy != "auto" and options.strategy not in known:
        raise UsageError(f"unknown strategy {options.strategy!r}: choose auto or one of {', '.join(sorted(known))}")
    generators.resolve_agent(options.agent, options.agent_cmd, options.agents)
    sandbox.probe(options.sandbox, tuple(options.sandbox_writable))  # `require` without bubblewrap: refused here
    if options.since:
        targeting.since_commit(root, options.since)


async def run_repair(
    info: gitrepo.RepoInfo,
    options: Options,
    emit: Subscriber,
    resume: RunState | None = None,
    hint: str | None = None,
    run_id: str | None = None,
) -> RunState:
    run = resume or merging.prepare_new(info, options, run_id or state.new_run_id())
    if resume:
        from .housekeeping import kill_strays

        kill_strays(run)
        applying.restore_refs(info.repo, run)
        run.pid, run.status, run.escalation, run.stop_reason, run.no_progress = os.getpid(), "running", None, None, 0
        run.gave_up = None
    if hint:
        run.hints.append(hint)
    runner = Runner(info=info, options=options, run=run, emit=emit)
    if hint and not escalation.uses_hints(runner.agent):
        emit(
            Note(
                f"{runner.agent} cannot use a hint: it is kept in the report; a generator that reads it: --agent anthropic or --agent-cmd"
            )
        )
    runner.save()  # before any ref: a run killed from here on is found by `resume` and `clean`
    if not resume:
        applying.move_run(info.repo, run, run.base_commit)
        state.fault_point("branch-created")
    try:
        await runner.execute()
    except UsageError:
        merging.discard(info, run)
        raise
    finally:
        run.usage = usage.unrecorded(runner.generator.usage, run.usage)
        redaction.scrub_tree(state.run_dir(info.root, run.run_id))
    drift = runner.guard.drift(runner.fence) if runner.fence is not None else []
    ending = merging.finish(info, run, options, emit, drift)
    run.merged_commit, run.branch = ending.merged_commit, ending.branch
    if ending.application is not None:
        run.application, run.applied = ending.application, True
    run.finished = run.status != "interrupted"
    runner.save(RunPhase.at(run.status))
    emit(RunFinished(run.status, run.stop_reason, run))
    return run
