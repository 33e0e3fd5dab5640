"""What the search tells: the proposal's reason (`explain` and its notes), the failing tests no
mutant moved (`unmoved`), and search.json, the record of every mutant screened (`write_log`)."""

from __future__ import annotations

import json
from pathlib import Path

from . import localise, shape
from .options import MutateOptions
from .prepared import Prepared
from .search import Budget, Search


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
        budget.spent()
        if budget.exhausted()
        else "stopped early: enough for the strategy"
        if early
        else "search complete"
        if len(search.reached) >= len(suspects)
        else "the other lines left to a later iteration"
    )
    head = (
        f"screened {screened} mutants at {len(search.reached)} of {len(suspects)} suspicious lines in {elapsed:.1f}s "
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
        },  # seconds into screening (workers up, timeout calibrated) and the mutant timeout
        "suspects": [{"file": s.file, "line": s.line, "score": round(s.score, 6)} for s in suspects[:50]],
        "skipped": search.skipped,
        "screened": rows,
    }
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
