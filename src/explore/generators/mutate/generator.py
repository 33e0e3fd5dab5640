"""`--agent mutate`: the built-in, offline, deterministic repair engine.

propose = localise (per-test coverage → suspicious lines) → mutate (AST operators at those
lines) → screen (fork worker, failing tests first) → deepen (when nothing fixes a failing test:
second-tier operators, more lines, two edits, until the seconds are spent) → shape (strategy)
→ plans with patches.
realise = `git apply` of the plan's patch in the candidate's worktree.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...edges import gitrepo, procs
from ...edges.testing import Hangs
from ...model.candidates import CandidatePlan, PhaseTiming, Proposal, Realised
from ...model.usage import MutateUsage, Usage
from ..base import CandidateContext, FixGenerator, ProposalRequest
from . import localise, revert, shape
from .changes import changed_files, changed_in, changed_lines, regressing_hunks
from .deepen import deepen
from .edits import Mutant
from .prepared import Prepared
from .screen import Job, Screener, Slot, Verdict
from .search import Budget, Search, screen_in_order


class MutateOptions(BaseModel):
    """`[tool.explore.mutate]` (or options["mutate"]): the search's own settings."""

    budget_mutants: int = 600
    """Most mutants screened per iteration while something plausible has been found; a search that
    has found nothing widens until budget_seconds is spent (deepen.py)."""
    budget_seconds: float = 60.0
    """Most seconds spent screening per iteration."""
    formula: str = localise.DEFAULT_FORMULA
    """ochiai | dstar | tarantula."""
    design: str = "fork"
    """fork (pre-imported worker, forks per mutant) | fresh (a new pytest per mutant)."""
    lanes: int | None = None
    """Mutants screened at once (default: min(parallel, CPUs))."""
    mutant_timeout: float | None = None
    """Seconds per mutant (default: from the coverage run's duration, 2–30 s)."""
    memory_mb: int = 512
    """Address space a mutant may add before it is stopped."""
    patience: int = 40
    """Mutants screened past the first full fix (one that fixes every failing test) before
    settling for what was found."""
    partial_patience: int = 120
    """Mutants screened past the latest partial fix, when there is no full one, before settling."""
    giveup: int = 3
    """Failing tests a mutant may fail, fixing none, before it is dropped."""
    max_lines: int = 40
    """Most suspicious lines mutated."""
    extra: dict[str, Any] = Field(default_factory=dict)


MAX_MUTANT_TIMEOUT = 30.0
HUNG_ONLY_TIMEOUT = 5.0
"""A mutant's timeout when every test it would run hangs on the unmutated code."""
CALIBRATE_FROM = 50
"""The calibration run uses the widest of the first this many prepared mutants."""


class ApplyFailed(RuntimeError):
    """The plan's patch does not apply to the candidate's worktree."""


class MutateGenerator(FixGenerator):
    name = "mutate"
    suite_bound = True
    """Its search's time grows with the suite's (every mutant runs tests): the run's search budget
    applies to it by default (decide/stop.py)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        raw = dict(options.get("mutate") or {})
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

    def baseline_env(self, run_dir: Path, commit: str, test_patterns: list[str]) -> dict[str, str]:
        """Environment that makes the loop's baseline run record per-test coverage as well, so the
        first iteration needs no second suite run (a baseline that sends its tests to other
        processes records nothing, and propose runs its own). A sharded baseline writes a part
        per shard, merged when read."""
        folder = run_dir / "mutate-baseline"
        result = folder / "coverage-run.json"
        folder.mkdir(parents=True, exist_ok=True)
        result.unlink(missing_ok=True)
        self._baseline = (commit, result)
        addopts = " ".join(x for x in (os.environ.get("PYTEST_ADDOPTS", ""), f"-p {localise.PLUGIN_NAME}") if x)
        for part in localise.shard_parts(result):
            part.unlink()
        return {**localise.coverage_env(None, folder, "baseline", result, test_patterns), "PYTEST_ADDOPTS": addopts}

    def _from_baseline(
        self, request: ProposalRequest, failing: frozenset[str], longreprs: list[str]
    ) -> localise.Collected | None:
        if self._baseline is None or self._baseline[0] != request.current_commit:
            return None
        found = localise.read_result(self._baseline[1], failing, request.passing, longreprs)
        self._baseline = None  # once: a later iteration at this commit measures afresh
        return found if found.measured and found.spectrum.lines else None

    async def propose(self, request: ProposalRequest) -> Proposal:
        started = time.monotonic()
        if not request.test_command.is_pytest:
            return Proposal(
                reason="mutate needs pytest (per-test coverage and screening); this run uses a custom --test-cmd"
            )
        failing = frozenset(t.id for t in request.failing)
        if not failing:
            return Proposal(reason="no failing tests: nothing for mutate to repair")
        settings = self.settings
        run_dir = request.run_dir / "mutate"
        python = request.test_command.python or sys.executable
        longreprs = [t.longrepr or t.message for t in request.failing]
        coverage_started = time.monotonic()
        collected = self._from_baseline(request, failing, longreprs) or await localise.collect(
            python,
            request.scratch,
            run_dir,
            failing,
            request.passing,
            request.test_patterns,
            request.tracker,
            longreprs,
            test_timeout=request.test_command.test_timeout,
            time_limit=request.time_limit,
            hangs=Hangs(  # the tests that hung last time would only hang again: lowered from the first
                hung=sum(t.outcome == "timeout" for t in request.failing),
                slowest_pass_s=request.test_command.slowest_pass_s,
            ),
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
        suspects = localise.without_contrast(suspects, spectrum, sources)
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
        )
        undo = search.prepare([(m, m.prior) for m in revert.reverts(hunks, sources)], revert.MOST)
        prepare_started = time.monotonic()
        ranked = search.ranked()
        prepared = search.prepare(ranked, settings.budget_mutants)  # lazily: screening reads it as it goes
        search.prepare_s += time.monotonic() - prepare_started
        seconds = settings.budget_seconds
        if request.deadline is not None:  # the run's search budget ends sooner
            seconds = max(0.0, min(seconds, request.deadline - time.monotonic()))
        budget = Budget(settings.budget_mutants, seconds)  # after ranking: preparation does not eat it
        lanes = settings.lanes or max(1, min(self.parallel, os.cpu_count() or 1))

        def settle(ranked: list[tuple[Mutant, float]]) -> Callable[[list[Prepared]], bool]:
            done = shape.statements_reached([m for m, _ in ranked], search.shared_lines())
            return shape.stop_rule(
                request.strategy.shape, request.n, failing, settings.patience, settings.partial_patience, done
            )

        enough = settle(ranked)

        timeout = {"s": settings.mutant_timeout or MAX_MUTANT_TIMEOUT}  # until calibrated

        def job_for(item: Prepared) -> Job:
            return Job(item.files, item.phase1, item.phase2, timeout["s"], settings.giveup, settings.memory_mb)

        combos: list[Prepared] = []
        screen_started, prepared_before = time.monotonic(), search.prepare_s
        preload = third_party_imports(request.scratch, list(sources) + sorted({t.split("::")[0] for t in failing}))
        steps: dict[str, float] = {}
        screener = await self._warm_screener(request, python, run_dir, lanes, preload)
        steps["workers_s"] = time.monotonic() - screen_started
        try:
            slots = screener.slots
            if prepared and not settings.mutant_timeout:
                hung = frozenset(t.id for t in request.failing if t.outcome == "timeout")
                timeout["s"] = await calibrate(slots[0], *widest_tests(search), hung)
            steps["calibrated_s"] = time.monotonic() - screen_started
            reverts = await screen_in_order(undo, slots, budget, job_for, lambda done: False) if undo else []
            singles = await screen_in_order(prepared, slots, budget, job_for, enough)
            ranked_screened = len(singles)
            if (
                policy.single_token
                and not any(shape.is_full(p, failing) for p in reverts + singles)
                and not budget.exhausted()
            ):
                singles += await widen(search, singles, request.tried_patches, screener, budget, job_for, settle)
            no_full = not any(shape.is_full(p, failing) for p in singles)
            stuck = not any(p.plausible for p in singles)  # no single edit helps: maybe two must go together
            if (policy.max_edits >= 2 or stuck) and no_full and not budget.exhausted():
                pairs = search.prepare(search.combine(singles), budget.mutants - budget.screened)
                combos = await screen_in_order(pairs, slots, budget, job_for, lambda done: False)
            if not any(p.plausible for p in reverts + singles + combos) and budget.left_s() > 0:
                more, deeper = await deepen(
                    search, reverts + singles + combos, request.tried_patches, slots, budget, job_for, settle
                )
                singles, combos = singles + more, combos + deeper
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
            exhausted=not chosen and not budget.exhausted() and not early,  # explain's "search complete"
        )

    async def _warm_screener(
        self, request: ProposalRequest, python: str, run_dir: Path, lanes: int, preload: list[str]
    ) -> Screener:
        """The run's screener: kept across iterations while it screens the same worktree the same
        way, told which files changed since (a worker restarts only when it imported one)."""
        key = (
            self.settings.design,
            python,
            str(request.scratch),
            os.stat(request.scratch).st_ino,
            lanes,
            id(request.tracker),
        )
        if self._screener is not None and self._screener_at is not None and self._screener_at[0] == key:
            changed = await changed_files(request, self._screener_at[1])
            if changed is not None:
                await self._screener.refresh(changed)
                self._screener_at = (key, request.current_commit)
                return self._screener
        await self.aclose()
        screener = Screener(self.settings.design, python, request.scratch, run_dir, lanes, preload, request.tracker)
        await screener.__aenter__()
        self._screener, self._screener_at = screener, (key, request.current_commit)
        return screener

    async def aclose(self) -> None:
        """End the warm screening workers (the loop calls it when the run ends)."""
        screener, self._screener, self._screener_at = self._screener, None, None
        if screener is not None:
            await screener.aclose()

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


def unmoved(screened: list[Prepared]) -> list[str]:
    """Failing tests that ran against at least one mutant and passed under none: the loop sets
    aside one that stays so for two iterations running."""
    moved: dict[str, bool] = {}
    for item in screened:
        if item.verdict is None or item.verdict.status != "ok":
            continue
        for test in item.phase1:
            outcome = item.verdict.outcomes.get(test)
            if outcome is not None:
                moved[test] = moved.get(test, False) or outcome == "passed"
    return sorted(t for t, yes in moved.items() if not yes)


def overrides_note(overridden: list[str]) -> str:
    """The user's pytest options mutate turned off in its own runs, said so in the report."""
    if not overridden:
        return ""
    return f"; overrode the project's pytest options {', '.join(overridden)} for per-test coverage and screening (they send tests elsewhere, stop or repeat them)"


def hung_note(hung: list[str]) -> str:
    """Tests the per-test coverage run went on without: they ignored the per-test limit."""
    if not hung:
        return ""
    return f"; the per-test coverage run went on without {', '.join(hung[:3])}{' …' if len(hung) > 3 else ''} (ignored the per-test limit)"


async def calibrate(slot: Slot, phase1: list[str], phase2: list[str], hung: frozenset[str] = frozenset()) -> float:
    """A mutant's timeout from the unmutated code's run of the most tests any mutant gets:
    generous for honest mutants, short for the ones that loop forever. Tests that overran their
    limit in the last run are left out: they would only measure the hang the search must fix."""
    phase1, phase2 = [t for t in phase1 if t not in hung], [t for t in phase2 if t not in hung]
    if not phase1 and not phase2:
        return HUNG_ONLY_TIMEOUT
    longest = (MAX_MUTANT_TIMEOUT - 0.5) / 8  # a run that lasts longer gives the longest timeout anyway
    verdict = await slot.screen(Job({}, phase1, phase2, longest, stop=False))
    return timeout_from(verdict)


def timeout_from(verdict: Verdict) -> float:
    """Eight times the tests' own time, plus once what the rest of the round trip cost (importing
    and collecting them: a mutant that cannot be swapped in pays it again), plus half a second."""
    tests = verdict.tests_s if verdict.tests_s is not None and verdict.status == "ok" else verdict.duration_s
    return round(min(MAX_MUTANT_TIMEOUT, max(0.75, 8 * tests + max(verdict.duration_s - tests, 0.0) + 0.5)), 2)


def widest_tests(search: Search) -> tuple[list[str], list[str]]:
    """The failing and passing tests of the most suspicious line (of the first CALIBRATE_FROM)
    that the most tests run: a mutant there is screened against them all."""
    spectrum = search.spectrum
    widest = max(
        (spectrum.covering(s.file, s.line) for s in search.suspects[:CALIBRATE_FROM]), key=len, default=frozenset()
    )
    return sorted(widest & spectrum.failing), sorted(widest & spectrum.passing)


def explain(
    chosen: list[Prepared],
    singles: list[Prepared],
    combos: list[Prepared],
    failing: frozenset[str],
    budget: Budget,
    search: Search,
    suspects: list[localise.Suspect],
    n: int,
    elapsed: float,
    early: bool = False,
) -> str:
    """The generator's honest account: what was searched, what was found, why fewer than n."""
    screened = len(singles) + len(combos)
    full = sum(1 for p in singles + combos if shape.is_full(p, failing))
    partial = sum(1 for p in singles + combos if p.plausible) - full
    stop = (
        "budget spent"
        if budget.exhausted()
        else "stopped early: enough for the strategy"
        if early
        else "search complete"
    )
    head = (
        f"screened {screened} mutants at {len(search.suspects)} of {len(suspects)} suspicious lines in {elapsed:.1f}s "
        f"({stop}): {full} fix all {len(failing)} failing tests, {partial} fix some"
    )
    if not chosen:
        return f"no plausible mutant: {head}; none fixes a failing test without breaking a passing test it reaches"
    if len(chosen) < n:
        return f"{head}; only {len(chosen)} plausible candidate(s) in this strategy's shape"
    return head


def write_log(
    path: Path,
    settings: MutateOptions,
    singles: list[Prepared],
    combos: list[Prepared],
    search: Search,
    suspects: list[localise.Suspect],
    coverage_s: float,
    elapsed: float,
    steps: dict[str, float] | None = None,
) -> None:
    """What was screened, for people and for the benchmark: kept next to the iteration's files."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "mutant": p.mutant.describe(),
            "status": p.verdict.status if p.verdict else None,
            "fixed": len(p.fixed),
            "broken": len(p.broken),
            "score": round(p.score, 6),
            "tests_run": len(p.verdict.outcomes) if p.verdict else 0,
            "seconds": round(p.verdict.duration_s, 3) if p.verdict else None,
            "swapped": bool(p.verdict and p.verdict.swapped),
        }
        for p in singles + combos
    ]
    data = {
        "formula": settings.formula,
        "design": settings.design,
        "coverage_s": round(coverage_s, 3),
        "elapsed_s": round(elapsed, 3),
        "screening_steps": {
            k: round(v, 3) for k, v in (steps or {}).items()
        },  # seconds into screening: workers up, timeout calibrated
        "suspects": [{"file": s.file, "line": s.line, "score": round(s.score, 6)} for s in suspects[:50]],
        "skipped": search.skipped,
        "screened": rows,
    }
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


async def widen(
    search: Search,
    screened: list[Prepared],
    tried: list[str],
    screener: Screener,
    budget: Budget,
    job_for: Callable[[Prepared], Job],
    settle: Callable[[list[tuple[Mutant, float]]], Callable[[list[Prepared]], bool]],
) -> list[Prepared]:
    """Smallest first, not smallest only: when no single-token edit fixes every failing test, the rest of the budget
    screens every operator's mutants (the single-token ones already screened left out)."""
    wide = Search(
        search.workdir,
        search.sources,
        search.spectrum,
        search.suspects,
        tried=[*tried, *(p.patch for p in screened)],
        single_token=False,
        changed=search.changed,
        max_lines=len(search.suspects),
    )
    ranked = wide.ranked()
    found = await screen_in_order(
        wide.prepare(ranked, budget.mutants - budget.screened), screener.slots, budget, job_for, settle(ranked)
    )
    search.prepare_s += wide.prepare_s
    for reason, count in wide.skipped.items():
        if reason != "tried":  # the single-token mutants screened already are not news
            search.skipped[reason] = search.skipped.get(reason, 0) + count
    return found


def third_party_imports(root: Path, files: list[str]) -> list[str]:
    """Top-level modules the project imports that are not its own: the fork worker imports
    them once so no mutant pays for them (the project's own modules must stay unimported)."""
    names: set[str] = set()
    for rel in files:
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    local = {
        p.stem if p.suffix == ".py" else p.name
        for base in (root, root / "src")
        if base.is_dir()
        for p in base.iterdir()
    }
    return sorted(n for n in names if n not in local and n != "__future__")
