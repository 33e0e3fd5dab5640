"""`--agent mutate`: the built-in, offline, deterministic repair engine.

propose = localise (per-test coverage → suspicious lines) → mutate (AST operators at those
lines) → screen (fork worker, failing tests first) → deepen (when nothing fixes a failing test:
second-tier operators, more lines, two edits, until the seconds are spent) → shape (strategy)
→ plans with patches.
realise = `git apply` of the plan's patch in the candidate's worktree.

Beside it: its settings (options.py), a mutant's timeout (calibrate.py), and its account of the
search — the proposal's reason and search.json (account.py).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from itertools import chain
from pathlib import Path
from typing import Any

import anyio

from ...edges import gitrepo, procs
from ...edges.testing import Hangs
from ...model.candidates import CandidatePlan, PhaseTiming, Proposal, Realised
from ...model.usage import MutateUsage, Usage
from ..base import CandidateContext, FixGenerator, ProposalRequest
from . import focus, localise, pairing, revert, shape, ties
from .account import explain, hung_note, overrides_note, unmoved, write_log
from .calibrate import ASIDE_FROM_S, MAX_MUTANT_TIMEOUT, calibrate, from_durations, widened, widest_tests
from .calibrate import aside as calibrate_aside
from .changes import changed_in, changed_lines, regressing_hunks
from .deepen import deepen, widen
from .edits import Mutant
from .options import MutateOptions
from .prepared import Prepared
from .screen import Job, Screener, Slot, third_party_imports
from .search import Budget, Search, screen_in_order
from .warmscreen import WarmScreening


class ApplyFailed(RuntimeError):
    """The plan's patch does not apply to the candidate's worktree."""


class MutateGenerator(WarmScreening, FixGenerator):
    name = "mutate"
    suite_bound = True
    """Its search's time grows with the suite's (every mutant runs tests): the run's search budget
    applies to it by default (decide/stop.py)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        # hyphens as everywhere in [tool.explore] (`budget-seconds`): they went to `extra`, unread
        raw = {str(k).replace("-", "_"): v for k, v in (options.get("mutate") or {}).items()}
        known = {k: v for k, v in raw.items() if k in MutateOptions.model_fields}
        self.settings = MutateOptions(**known, extra={k: v for k, v in raw.items() if k not in known})
        if self.settings.formula not in localise.FORMULAS:
            raise ValueError(
                f"unknown mutate formula {self.settings.formula!r}: choose one of {', '.join(localise.FORMULAS)}"
            )
        self.parallel = int(options.get("parallel") or 3)
        self._baseline: tuple[str, Path] | None = None
        """(commit, result file) of per-test coverage recorded by the loop's baseline run."""
        self._screener: Screener | None = None
        self._screener_at: tuple[tuple[str, str, str, int, int, int], str] | None = None
        """(what the screener was opened for, the commit its workers last saw)."""
        self._warming: anyio.Event | None = None
        """Set when the warm-up has ended (its workers ready, or not started): the baseline's
        rerun waits for it."""
        self._rerun_lock = anyio.Lock()
        self._focus = False
        """The baseline stopped tracing for the suite's size (focus.py): each proposal measures the
        failing tests' own files."""
        self._searched = ties.Searched()
        """The lines earlier proposals searched: a tie at the cut starts with the others (ties.py)."""

    def baseline_env(self, run_dir: Path, commit: str, test_patterns: list[str]) -> dict[str, str]:
        """Environment that makes the loop's baseline run record per-test coverage as well, so the
        first iteration needs no second suite run (a baseline that sends its tests to other
        processes records nothing, and propose runs its own; one of a big suite without
        sys.monitoring stops tracing before its first test, and propose measures the failing tests'
        files: focus.py). A sharded baseline writes a part per shard, merged when read."""
        folder = run_dir / "mutate-baseline"
        result = folder / "coverage-run.json"
        folder.mkdir(parents=True, exist_ok=True)
        result.unlink(missing_ok=True)
        self._baseline = (commit, result)
        addopts = " ".join(x for x in (os.environ.get("PYTEST_ADDOPTS", ""), f"-p {localise.PLUGIN_NAME}") if x)
        for part in localise.shard_parts(result):
            part.unlink()
        env = localise.coverage_env(None, folder, "baseline", result, test_patterns)
        return {**env, focus.BIG_ENV: str(focus.TRACE_MOST), "PYTEST_ADDOPTS": addopts}

    def _from_baseline(
        self, request: ProposalRequest, failing: frozenset[str], longreprs: list[str]
    ) -> localise.Collected | None:
        if self._baseline is None or self._baseline[0] != request.current_commit:
            return None
        found = localise.read_result(self._baseline[1], failing, request.passing, longreprs)
        self._focus = self._focus or focus.too_big(self._baseline[1])
        self._baseline = None  # once: a later iteration at this commit measures afresh
        return found if found.measured and found.spectrum.lines else None

    async def propose(self, request: ProposalRequest) -> Proposal:
        started = time.monotonic()
        if not request.test_command.is_pytest:
            return Proposal(
                reason="mutate needs pytest (per-test coverage and screening); this run uses a custom --test-cmd"
            )
        failing = frozenset(t.id for t in request.failing)
        commit = request.current_commit
        if not failing:
            return Proposal(reason="no failing tests: nothing for mutate to repair")
        settings = self.settings
        run_dir = request.run_dir / "mutate"
        python = request.test_command.python or sys.executable
        longreprs = [t.longrepr or t.message for t in request.failing]
        coverage_started = time.monotonic()
        carried = self._from_baseline(request, failing, longreprs)
        focused = (
            focus.focus(failing, request.passing, request.scratch, request.durations)
            if self._focus
            else focus.Focus([], request.passing)
        )
        collected = carried or await localise.collect(
            python,
            request.scratch,
            run_dir,
            failing,
            focused.contrast,
            request.test_patterns,
            request.tracker,
            longreprs,
            test_timeout=request.test_command.test_timeout,
            time_limit=request.time_limit,
            hangs=Hangs(  # the tests that hung last time would only hang again: lowered from the first
                hung=sum(t.outcome == "timeout" for t in request.failing),
                slowest_pass_s=request.test_command.slowest_pass_s,
            ),
            select=focused.files,
            leave_out=focused.left_out,
        )
        coverage_s = time.monotonic() - coverage_started
        spectrum = collected.spectrum
        overridden = list(collected.overridden)

        def excluded(file: str) -> bool:
            return localise.is_test_file(file, request.test_patterns) or not (request.scratch / file).is_file()

        suspects = localise.rank(spectrum, settings.formula, excluded)
        if not suspects:
            return Proposal(
                reason="no source line outside the tests is run by the failing tests: nothing to mutate"
                + overrides_note(overridden)
                + hung_note(collected.hung),
                exhausted=True,
            )
        sources = {s.file: (request.scratch / s.file).read_text(encoding="utf-8") for s in suspects}
        suspects = ties.order(
            localise.without_contrast(suspects, spectrum, sources), spectrum, sources, self._searched, commit
        )
        policy = request.strategy.mutation
        hunks = await regressing_hunks(request) if request.strategy.shape == "minimal" else []
        for hunk in hunks:
            if hunk.file not in sources and not excluded(hunk.file):
                sources[hunk.file] = (request.scratch / hunk.file).read_text(encoding="utf-8")
        changed = (changed_in(hunks) or await changed_lines(request)) if policy.single_token else {}
        search = Search(
            request.scratch,
            sources,
            spectrum,
            suspects,
            tried=request.tried_patches,
            single_token=policy.single_token,
            changed=changed,
            max_lines=settings.max_lines,
            seen=self._searched.seen(commit),
        )
        reverting = revert.reverts(hunks, sources)
        undo = search.prepare([(m, m.prior) for m in reverting], revert.MOST)
        prepare_started = time.monotonic()
        ranked = search.ranked()
        prepared = search.prepare(ranked, settings.budget_mutants)  # lazily: screening reads it as it goes
        search.prepare_s += time.monotonic() - prepare_started
        own = "budget_seconds" not in settings.model_fields_set  # the user's own figure holds as given
        failing_s = sum(request.durations.get(t, 0.0) for t in failing) if own else None
        # after ranking: preparation does not eat it
        budget = Budget.of(settings.budget_mutants, settings.budget_seconds, failing_s, self._lanes(), request.deadline)

        def settle(ranked: list[tuple[Mutant, float]]) -> Callable[[list[Prepared]], bool]:
            done = shape.statements_reached([m for m, _ in ranked], search.shared_lines())
            return shape.stop_rule(
                request.strategy.shape, request.n, failing, settings.patience, settings.partial_patience, done
            )

        enough = settle(ranked)

        timeout = {"s": settings.mutant_timeout or MAX_MUTANT_TIMEOUT}  # until calibrated

        hung = frozenset(t.id for t in request.failing if t.outcome == "timeout")
        widest = widest_tests(search, chain(reverting, (m for m, _ in ranked)))
        measured = frozenset(widest[0]) | frozenset(widest[1])

        def job_for(item: Prepared) -> Job:
            seconds = (
                timeout["s"]
                if settings.mutant_timeout
                else widened(timeout["s"], item.phase1, item.phase2, measured, request.durations, hung)
            )
            return Job(item.files, item.phase1, item.phase2, seconds, settings.giveup, settings.memory_mb)

        combos: list[Prepared] = []
        screen_started, prepared_before = time.monotonic(), search.prepare_s
        steps: dict[str, float] = {}
        screener = await self._warm_screener(
            request,
            python,
            run_dir,
            lambda: third_party_imports(request.scratch, list(sources) + sorted({t.split("::")[0] for t in failing})),
        )
        steps["workers_s"] = time.monotonic() - screen_started
        try:
            recorded = None
            if prepared and not settings.mutant_timeout:
                recorded = from_durations(request.durations, *widest, hung) if screener.collects() else None
                if recorded is None or recorded < 8 * ASIDE_FROM_S:  # unknown or cheap: measured before any mutant
                    timeout["s"] = await calibrate(screener.slots[0], *widest, hung, not screener.collects())
                    steps["calibrated_s"] = time.monotonic() - screen_started
                    recorded = None
                else:  # screening starts at once, while one worker measures it
                    timeout["s"] = steps["recorded_timeout_s"] = recorded
            measuring: AbstractAsyncContextManager[list[Slot]] = (
                calibrate_aside(list(screener.slots), *widest, hung, timeout, steps, screen_started)
                if recorded
                else nullcontext(list(screener.slots))
            )
            async with measuring as slots:
                reverts = await screen_in_order(undo, slots, budget, job_for, lambda done: False) if undo else []
                singles = await screen_in_order(prepared, slots, budget, job_for, enough)
                ranked_screened = len(singles)
                if (
                    policy.single_token
                    and not any(shape.is_full(p, failing) for p in reverts + singles)
                    and not budget.exhausted()
                ):
                    singles += await widen(search, singles, request.tried_patches, slots, budget, job_for, settle)
                no_full = not any(shape.is_full(p, failing) for p in singles)
                stuck = not any(p.plausible for p in singles)  # no single edit helps: maybe two must go together
                if (policy.max_edits >= 2 or stuck) and no_full and not budget.exhausted():
                    pairs = search.prepare(pairing.combine(singles, search.sources), budget.mutants - budget.screened)
                    combos = await screen_in_order(pairs, slots, budget, job_for, lambda done: False)
                if not any(p.plausible for p in reverts + singles + combos) and budget.left_s() > 0:
                    more, deeper = await deepen(
                        search, reverts + singles + combos, request.tried_patches, slots, budget, job_for, settle
                    )
                    singles, combos = singles + more, combos + deeper
            steps["timeout_s"] = timeout["s"]
            overridden += [o for o in screener.overridden() if o not in overridden]
        except BaseException:
            await self.aclose()  # a worker may be out of step: the next iteration starts afresh
            raise
        finally:
            if request.tracker is None:  # no run to end the warm workers later: end them now
                await self.aclose()
        screening_s = (
            time.monotonic() - screen_started - (search.prepare_s - prepared_before)
        )  # preparation has its own line
        screened_all = reverts + singles + combos
        searched, unfinished = ties.searched_lines(search, ranked, screened_all)
        self._searched.add(searched, sources, screened_all, commit, unfinished)
        chosen = shape.choose(request.strategy.shape, request.n, singles, combos, first=reverts)
        top_score = max((p.score for p in singles), default=0.0)
        plans = [shape.to_plan(item, failing, top_score) for item in chosen]
        elapsed = time.monotonic() - started
        screened = len(reverts) + len(singles) + len(combos)
        screen_s = max(elapsed - coverage_s, 1e-9)
        early = not budget.exhausted() and prepared.at(ranked_screened) is not None
        reason = (
            explain(chosen, reverts + singles, combos, failing, budget, search, suspects, request.n, elapsed, early)
            + overrides_note(overridden)
            + hung_note(collected.hung)
        )
        write_log(
            run_dir / "search.json", settings, reverts + singles, combos, search, suspects, coverage_s, elapsed, steps
        )
        return Proposal(
            plans=plans,
            reason=reason,
            usage=Usage(
                mutate=MutateUsage(
                    mutants_screened=screened, screening_s=round(screen_s, 3), mutate_s=round(elapsed, 2)
                )
            ),
            timing=PhaseTiming(
                coverage=round(coverage_s, 3), screening=round(screening_s, 3), prepare=round(search.prepare_s, 3)
            ),
            unmoved=unmoved(reverts + singles + combos),
            # explain's "search complete": every suspicious line reached, nothing found
            exhausted=not chosen and not budget.exhausted() and not early and len(search.reached) >= len(suspects),
        )

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        if not plan.patch:
            raise ApplyFailed("the mutate plan carries no patch")
        done = await procs.run(
            [*gitrepo.GIT, "apply", "--whitespace=nowarn", "-"],
            context.workdir,
            stdin=plan.patch.encode(),
            log_path=context.files_dir / "apply.log",
            tracker=context.tracker,
        )
        if done.exit_code != 0:
            raise ApplyFailed(f"git apply failed for {plan.location}: {done.output_tail.strip()[-300:]}")
        return Realised(confidence=plan.confidence, hypothesis=plan.hypothesis)
