"""The run's state machine: baseline, iterations (detect, select, propose, fan out, score, merge),
stop conditions, checkpoints after every step, and cleanup whatever happens.

The Runner is the one writer of the run's state (RunState): each step returns what it found and the
Runner keeps the next state its transitions (run/transitions, run/stops) return. The iteration's steps
are in run/iteration, the run's tools and their cleanup in run/kit; a run's start and end around the
Runner in run/repair."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

import anyio

from .. import generators
from ..decide import crashes, history, suite_time
from ..decide import stop as giving_up
from ..decide.affected import ImportMap
from ..decide.strategy import Choice, Strategy
from ..edges import attribution, gitrepo, guard, history_io
from ..model import usage
from ..model.candidates import IterationRecord, PhaseTiming, Proposal
from ..model.config import Options
from ..model.errors import BudgetExhausted, Escalation, UsageError
from ..model.events import (
    BaselineFinished,
    CandidateEvent,
    Escalated,
    FanOutStarted,
    IterationStarted,
    Listener,
    Merged,
    Note,
    Phase,
    Subscriber,
    UsageSpent,
)
from ..model.phase import RunPhase, Stage
from ..model.runstate import RunState, SandboxUsed
from ..model.testresults import TestOutcome, TestRun
from . import (
    adoption,
    applying,
    baseline,
    merging,
    putback,
    signals,
    state,
    stops,
    targeting,
    transitions,
    warming,
)
from .imports_ahead import ImportsAhead
from .kit import Kit
from .progress import watch as watch_progress
from .suite import Recheck

if TYPE_CHECKING:  # imported where an iteration uses them, beside the baseline's run (run/modules_ahead)
    from ..fanout.scheduler import FanOutResult
    from . import beside

log = logging.getLogger("explore.run")


@dataclass
class Runner:
    """The run's one writer: each step returns what it found, and the Runner keeps the next state
    (run/transitions, run/stops) and checkpoints it."""

    info: gitrepo.RepoInfo
    options: Options
    run: RunState
    emit: Subscriber
    current_run: TestRun | None = None
    interrupted: bool = False
    refused: UsageError | None = None
    """Input found wrong once the baseline ran (targets matching no test): raised after cleanup."""
    suite_s: float = 0.0
    """Seconds of the last baseline (or resume re-test) not yet booked on an iteration's timing."""
    warm_s: float = 0.0
    """Seconds the run waited for the generator's warm-up after the baseline: booked on the first proposal."""
    clock: giving_up.SearchClock | None = None
    """The search budget's clock (decide/stop.py), started once the baseline has run."""
    timed: suite_time.SuiteTime | None = None
    """The run the suite is timed by, for the budget and the per-test limit (decide/suite_time)."""
    recheck: Recheck | None = None
    """The baseline's flaky rerun left to run beside the first proposal (Suite.baseline)."""
    start_s: float = 0.0
    """Seconds from the run's start to its baseline (a new run's): booked on the first iteration."""
    ending: float | None = None
    """When the run's end began (monotonic): its seconds are booked on the last iteration."""
    imports: ImportsAhead | ImportMap | None = None
    """The test files' import map: read while the baseline runs, then the last iteration's (run/imports_ahead)."""

    def __post_init__(self) -> None:
        self.kit = Kit.build(self.info, self.options, self.run, self.emit)
        self.run = self.run.model_copy(
            update={"sandbox": SandboxUsed(mechanism=self.kit.sandbox.mechanism, why=self.kit.sandbox.why)}
        )
        self.fence: guard.Fingerprint | None = None
        """The user's tree and git dir as the last fan-out found (and left) them."""

    def save(self, phase: RunPhase | None = None) -> None:
        self.run = transitions.checkpoint(
            self.run,
            phase,
            [str(p) for p in self.kit.pool.created.values()],
            sorted(self.kit.tracker.pids),
            time.time(),
        )
        state.save(self.kit.root, self.run)

    def check_gate(self) -> None:
        self.run = stops.gate(self.run, self.current_run.outcomes if self.current_run else {}, self.options)

    # ------------------------------------------------------------------ phases

    async def execute(self) -> RunState:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                await group.start(signals.watch, scope, self._interrupt)  # receiving before the first step
                group.start_soon(watch_progress, self.kit.run_dir, self.emit)  # the running tests, every few seconds
                if self.interrupted:  # a signal held before the scope existed
                    scope.cancel()
                try:
                    await self._main()
                finally:
                    group.cancel_scope.cancel()
        if self.refused:
            raise self.refused
        if self.interrupted:
            self.run = transitions.ended(self.run, "interrupted", transitions.interrupted_reason(self.run))
        return self.run

    def _interrupt(self, again: bool) -> None:
        if again:  # second signal: force it
            self.kit.tracker.kill_all()
            os._exit(130)
        self.interrupted = True
        self.emit(Note("interrupted: stopping candidates and cleaning up (Ctrl-C again to force)"))

    async def _main(self) -> None:
        self.emit(Note(generators.why_agent(self.options.agent, self.options.agent_cmd, self.kit.agent)))
        if header := self.kit.generator.header():
            self.emit(Note(header))
        try:
            if not self.run.baselined:  # a new run, or one interrupted before its baseline ended
                await self.start()
            else:
                await self.retest()
            self.start_clock()
            while self.run.status == "running":
                await self.iteration()
        except Escalation as exc:
            self.run = stops.escalated(self.run, exc.category, exc.reason, exc.suggested_action, self.kit.agent)
            assert self.run.escalation is not None
            self.emit(Escalated(self.run.escalation))
        except BudgetExhausted as exc:
            self.run = transitions.ended(self.run, "failed", f"budget: {exc}")
        except UsageError as exc:
            self.refused = exc
        finally:
            self.ending = time.monotonic()
            with anyio.CancelScope(shield=True):
                await self.kit.close()
                self.save()

    def start_clock(self) -> None:
        """The search budget, in proportion to the suite's time as this run measured it."""
        test_s = self.timed.test_s if self.timed else 0.0
        self.clock = stops.clock(
            self.options, self.kit.generator.suite_bound, test_s, self.kit.suite.overhead_s, time.monotonic()
        )
        if self.clock is not None and self.run.status == "running":
            self.emit(Note(f"search budget: {self.clock.describe()} with no repair in sight (--search-budget)"))

    # ------------------------------------------------------------------ where the run starts

    async def start(self) -> None:
        """A new run's baseline (baseline.py): the suite on the base commit, `--issue`'s
        reproduction, then what the run tells about the tests, written into the state."""
        self.start_s = max(0.0, time.time() - self.run.started_at)
        self.save(RunPhase.at(Stage.baseline))
        if self.kit.test_command.is_pytest:  # read while the baseline runs (run/imports_ahead)
            self.imports = ImportsAhead(self.info.root)
        warmed = await warming.measure(self.kit, self.options, self.run.base_commit)
        measured, self.suite_s, self.warm_s = warmed.measured, warmed.measured.seconds, warmed.waited_s
        if measured.recheck is not None and self.options.issue:  # the reproduction's baseline reads it first
            found_now = await self.kit.suite.recheck(measured.recheck)
            measured = replace(measured, rerun_passed=measured.rerun_passed | found_now, recheck=None)
        self.recheck = measured.recheck
        run = await self._reproduce(measured.run) if self.options.issue else measured.run
        found = await baseline.assess(
            self.kit.tools,
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
        self.run = transitions.baselined(self.run, found)
        if found.stop is not None:  # the baseline's counts are said before the escalation is
            self.recheck = None
            self.emit(BaselineFinished(self.run.baseline.model_copy(), tuple(self.run.flaky)))
            raise found.stop
        self.current_run = found.run
        self.timed = suite_time.SuiteTime(found.run, traced=measured.traced and not self.options.issue)
        self.run = transitions.measured(self.run, found)
        from . import iteration

        history_io.append(self.kit.history_path, iteration.baseline_record(self.run))
        self.emit(BaselineFinished(self.run.baseline.model_copy(), tuple(self.run.flaky)))
        hung = baseline.hung_note(found.timeouts)
        if hung:
            self.emit(Note(hung))
        if self.kit.test_command.test_timeout:
            self.emit(Note(f"per-test limit from now on: {self.kit.test_command.test_timeout:g}s"))
        self.check_gate()
        self.save(RunPhase.at(Stage.iterating))

    async def _reproduce(self, run: TestRun) -> TestRun:
        """`--issue`'s iteration 0: the kept tests committed as "reproduce: …" on the run branch;
        the suite re-run on that commit is the baseline. None kept: escalated."""
        found = await baseline.reproduce_issue(self.kit.tools, self.run.base_commit)
        result = found.result
        self.run = transitions.reproduction_tried(self.run, result)
        if not result.kept:
            self.run = transitions.not_reproduced(self.run, run)
            raise baseline.not_reproduced(result)
        assert result.chosen and self.run.branch
        commit = await baseline.commit_reproduction(self.kit.tools, found, self.run.base_commit)
        applying.move_run(self.info.repo, self.run, commit, self.run.current_commit)
        self.run = transitions.reproduction_committed(self.run, commit)
        self.emit(Note(f"reproduce: kept {', '.join(result.kept)} (sample {result.chosen}) as {commit[:10]}"))
        self.save(RunPhase.at(Stage.baseline))
        return await baseline.run_reproduced(self.kit.tools, commit)

    async def retest(self) -> None:
        """On resume: an iteration merged on the run branch after the last save is adopted
        (adoption.py), then the current commit re-tested for fresh failure details."""
        adopted = adoption.found_on_branch(self.info.repo, self.run)
        if adopted is not None and adopted.commit:
            self.emit(Note(f"adopting {adopted.commit[:10]}, merged on the run's branch just before the run stopped"))
            self.run = transitions.adopted(self.run, adopted)
        found = await baseline.retest(
            self.kit.tools, self.run.run_id, self.run.current_commit, len(self.run.iterations), self.run.baseline_ids
        )
        self.suite_s = found.seconds
        self.current_run = found.run
        self.timed = suite_time.SuiteTime(found.run, traced=False)
        self.run = transitions.retested(self.run, found.run)
        self.check_gate()

    # ------------------------------------------------------------------ an iteration (run/iteration)

    async def iteration(self) -> None:
        from . import beside, iteration

        n = len(self.run.iterations) + 1
        flaky = frozenset(self.run.flaky)
        assert self.current_run is not None
        failing = iteration.failing(self.run, self.current_run)
        choice, detection = iteration.choose(self.kit, self.run, n, failing, flaky)
        chosen = self.kit.strategies[choice.name]
        inputs = giving_up.SearchInputs(self.run.current_commit, choice.name, frozenset(o.id for o in failing))
        if self.clock is not None and self.clock.nothing_left(inputs):
            self.run = stops.gave_up(
                self.run, "search_complete", self.clock, time.monotonic(), self.kit.agent, self.kit.generator.name
            )
            return
        self.emit(IterationStarted(n, choice.name, choice.reason))
        iteration_dir = self.kit.run_dir / f"iteration-{n}"
        iteration_dir.mkdir(parents=True, exist_ok=True)
        scratch, _ = await anyio.to_thread.run_sync(self.kit.pool.acquire, "a", self.run.current_commit)
        deadline = self.clock.deadline() if self.clock else None
        asked = iteration.request(
            self.kit, self.run, n, chosen, failing, detection, scratch, iteration_dir, self.current_run, deadline
        )
        self.save(RunPhase.at(Stage.propose, n))
        timing = PhaseTiming(baseline=round(self.suite_s, 3), start=round(self.start_s, 3))
        self.suite_s = self.start_s = 0.0
        left, self.recheck = self.recheck, None
        rerun = beside.Rerun(self.kit, left) if left is not None else None
        step = partial(self._step, n, choice, chosen, asked, failing, flaky, inputs, timing, rerun)
        record, proposal = await beside.alongside(rerun, self._rechecked, step)
        flaky = frozenset(self.run.flaky)  # with what the baseline's rerun found
        record.pass_rate, record.failed_tests = self.run.current.pass_rate, list(self.run.current_failing)
        self._set_aside_unmoved(proposal.unmoved)
        if not record.usage.empty:
            self.emit(UsageSpent(n, record.usage, self.run.usage))
        self.run = transitions.iterated(self.run, record)
        if record.commit and self.clock is not None:
            self.clock.restart(time.monotonic())
        self._debug_report(record, failing)
        history_io.append(self.kit.history_path, iteration.history_record(self.run, n, record, choice.name))
        self.check_gate()
        self.run = stops.after_iteration(
            self.run, n, flaky, self.options, self.clock, time.monotonic(), self.kit.agent, self.kit.generator.name
        )
        self.save(RunPhase.at(Stage.done, n))

    async def _step(
        self,
        n: int,
        choice: Choice,
        chosen: Strategy,
        asked: generators.ProposalRequest,
        failing: list[TestOutcome],
        flaky: frozenset[str],
        inputs: giving_up.SearchInputs,
        timing: PhaseTiming,
        rerun: beside.Rerun | None,
    ) -> tuple[IterationRecord, Proposal]:
        """The iteration's proposal and fan-out, the baseline's flaky rerun (if left) beside both:
        the candidates' tests start at once, nothing is judged before it ends (fanout/pending)."""
        from ..fanout.scheduler import fan_out
        from . import beside, iteration, retiming

        started = time.monotonic()
        try:
            proposal = await iteration.propose(self.kit.generator, asked, asked.run_dir)
        except (Escalation, BudgetExhausted) as exc:
            self.run = transitions.spent(self.run, usage.Usage.of(getattr(exc, "usage", None)))
            raise
        timing.propose, self.warm_s = round(time.monotonic() - started + self.warm_s, 3), 0.0
        timing.coverage, timing.screening = proposal.timing.coverage, proposal.timing.screening
        timing.prepare = proposal.timing.prepare
        self.run = transitions.spent(self.run, proposal.usage)
        plans = iteration.lettered(proposal, self.options.parallel, self.kit.generator.name)
        record = iteration.new_record(n, choice, proposal, timing)
        ids = [o.id for o in failing]
        if frozenset(self.run.flaky) != flaky:  # the rerun ended while they were proposed: never started
            flaky = frozenset(self.run.flaky)
            plans, record.candidates = beside.withdraw(plans, ids, flaky, self.emit)
        tests = self.current_run
        assert tests is not None
        pending = rerun.beside_fanout(lambda: beside.settled(plans, ids, flaky, self.run, tests)) if rerun else None
        if proposal.exhausted and self.clock is not None:
            self.clock.exhausted_on = inputs
        iteration.note_chain(self.emit, proposal, plans, self.kit.generator.name)
        if not plans and record.candidates:
            self.emit(Note("no candidates left: each was aimed only at tests found flaky"))
        elif not plans:
            self.emit(Note(f"no candidates: {proposal.reason or 'the generator had no idea'}"))
        else:
            self.emit(FanOutStarted(n, tuple(p.id for p in plans)))
            self.save(RunPhase.at(Stage.fanout, n))
            await self.kit.executor.prepare(self.run.current_commit)
            watch = await attribution.Watch.start(self.kit.guard, f"iteration-{n}")
            self.fence = watch.baseline
            ahead, self.imports = self.imports, None
            known = await anyio.to_thread.run_sync(ahead.known) if isinstance(ahead, ImportsAhead) else ahead
            config = iteration.config(
                self.kit,
                self.run,
                asked,
                tests,
                flaky,
                self._candidate_events(n),
                chosen.progressive,
                watch,
                known if chosen.progressive else None,
                pending,
            )
            self.imports = config.import_map or known  # the next iteration parses only what changed
            started = time.monotonic()
            try:
                outcome = await fan_out(plans, config, self.options.parallel)
            except (
                BaseException
            ):  # a signal, an error, a generator lost mid-way: its candidates' leave() may not have run
                with anyio.CancelScope(shield=True):
                    self.run = await putback.after_cut(self.kit, self.run, watch, self.emit)
                    self.save()
                raise
            timing.validation, timing.confirmation = round(outcome.validation_s, 3), round(outcome.confirmation_s, 3)
            timing.fanout = round(time.monotonic() - started - outcome.validation_s, 3)
            iteration.tally(record, outcome, self.emit, kept=record.candidates)
            self.run = transitions.spent(self.run, *(c.usage for c in record.candidates))
            stop = outcome.findings.escalation(len(plans)) or crashes.same_crash(record.candidates)
            if stop is not None:
                raise stop
            self.run = transitions.recorded(self.run, record)  # before the merge's checkpoint, so a kill keeps it
            started = time.monotonic()
            self._merge_best(record, outcome, n)
            timing.merge = round(time.monotonic() - started, 3)
            if (
                retimed := retiming.after_fanout(self.kit, self.run, self.timed, self.clock, outcome, self.emit)
            ) is not None:
                self.run, self.timed = retimed
        return record, proposal

    def _rechecked(self, found: set[str]) -> None:
        """The baseline's rerun has ended: the targets it found flaky are flaky from now on, out of the
        current and the baseline's counts (iteration 1's current run is the baseline's)."""
        from . import beside

        rechecked = sorted(found & set(self.run.current_failing))
        if rechecked:
            assert self.current_run is not None
            self.run = transitions.flaky_at_baseline(self.run, rechecked, self.current_run)
            self.emit(beside.found_note(rechecked))

    def _debug_report(self, record: IterationRecord, failing: list[TestOutcome]) -> None:
        """--reports-dir: the iteration's report by topic; with --commit-reports, in the run branch's commit."""
        from . import iteration

        written = iteration.debug_report(self.kit, self.run, record, failing)
        if written is None:
            return
        path, tip = written
        if tip:
            applying.move_run(self.info.repo, self.run, tip, self.run.current_commit)
            if record.commit == self.run.current_commit:
                record.commit = tip
            self.run = transitions.report_committed(self.run, tip)
        committed = f" (committed as {tip[:10]})" if tip else ""
        self.emit(Note(f"debug report: {path.relative_to(self.kit.root)}{committed}"))

    def _set_aside_unmoved(self, unmoved: list[str]) -> None:
        """A failing test that no edit the generator tried has moved, in two iterations running,
        is set aside: later iterations no longer aim at it (and the history remembers it)."""
        self.run, new = transitions.unmoved(self.run, unmoved)
        if new:
            why = f"no edit tried in {history.SET_ASIDE_AFTER} iterations running changed its outcome"
            self.emit(Note(f"setting aside {', '.join(new)}: {why}"))

    def _candidate_events(self, n: int) -> Listener:
        def report(event: CandidateEvent) -> None:
            self.emit(event)
            state.fault_point(f"candidate-{event.phase.value}")
            if event.phase == Phase.finished:
                self.save(RunPhase.at(Stage.scored, n, event.candidate))

        return report

    def _merge_best(self, record: IterationRecord, outcome: FanOutResult, n: int) -> None:
        from . import iteration

        chosen = iteration.pick(self.info.repo, self.run, record, outcome, self.emit)
        if chosen is None:
            return
        best, new = chosen.best, chosen.commit
        before = self.run.current.pass_rate
        if best.rerun_passed:
            self.run = transitions.found_flaky(self.run, best.rerun_passed)
            which = ", ".join(best.rerun_passed[:5])
            self.emit(Note(f"flaky: {which} failed in candidate {best.id}'s run and passed rerun alone"))
        merging.move_to(self.info.repo, self.run, new)
        record.winner, record.commit = best.id, new
        self.current_run = outcome.runs[best.id]
        self.run = transitions.merged(self.run, new, self.current_run)
        self.emit(Merged(best.id, before, self.run.current.pass_rate, new))
        self.save(RunPhase.at(Stage.merged, n))
