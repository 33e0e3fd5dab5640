"""How a strategy turns screened mutants into candidates — pure functions over the results.

conservative (variations): the best plausible mutants, most failing tests fixed first;
exploratory (distinct): one per line, then one per operator family;
aggressive (batched): two-edit combinations first when they fix more;
surgical (minimal): single-token mutants, nearest the lines changed since the last green record
(the ranking already put them first).
"""

from __future__ import annotations

from collections.abc import Callable

from ...models import CandidatePlan
from .search import Prepared


def is_full(item: Prepared, failing: frozenset[str]) -> bool:
    return item.plausible and failing <= set(item.fixed)


def stop_rule(shape: str, n: int, failing: frozenset[str], patience: int, partial_patience: int | None = None) -> Callable[[list[Prepared]], bool]:
    """When the screened prefix holds what the strategy can use, so the rest of the budget is
    not spent: n full fixes (on n distinct lines for `distinct`); or `patience` more mutants
    screened since the first full fix without finding the others; or, with partial fixes only,
    `partial_patience` (default 3 × patience) more since the latest one — a full fix may still
    rank lower, so partial fixes wait longer while they keep coming, and they are what a
    two-edit fix is built from.
    Never before the first plausible mutant: without one, only the budget ends the search."""
    wait_partial = 3 * patience if partial_patience is None else partial_patience

    def enough(prefix: list[Prepared]) -> bool:
        full = [i for i, p in enumerate(prefix) if is_full(p, failing)]
        if shape == "distinct":
            if len({prefix[i].mutant.lines for i in full}) >= n:
                return True
        elif len(full) >= n:
            return True
        if full:
            return len(prefix) - 1 - full[0] >= patience
        last = max((i for i, p in enumerate(prefix) if p.plausible), default=None)
        return last is not None and len(prefix) - 1 - last >= wait_partial

    return enough


def order(screened: list[Prepared]) -> list[Prepared]:
    """Plausible mutants: most failing tests fixed, then rank order (the list's own order)."""
    plausible = [(i, p) for i, p in enumerate(screened) if p.plausible]
    plausible.sort(key=lambda ip: (-len(ip[1].fixed), ip[0]))
    return [p for _, p in plausible]


def choose(shape: str, n: int, singles: list[Prepared], combos: list[Prepared]) -> list[Prepared]:
    """Up to n candidates in the strategy's shape."""
    ranked_singles = order(singles)
    if shape == "batched":
        best_single = len(ranked_singles[0].fixed) if ranked_singles else 0
        better = [c for c in order(combos) if len(c.fixed) > best_single]
        return (better + ranked_singles)[:n]
    if shape == "distinct":
        chosen: list[Prepared] = []
        for p in ranked_singles:  # different lines first
            if len(chosen) < n and all(p.mutant.lines != c.mutant.lines for c in chosen):
                chosen.append(p)
        for p in ranked_singles:  # then different operator families at a line already used
            if len(chosen) < n and p not in chosen and all(p.mutant.family != c.mutant.family for c in chosen):
                chosen.append(p)
        return (chosen + order(combos))[:n]
    pool = ranked_singles + [c for c in order(combos)]
    return pool[:n]


def confidence(item: Prepared, failing: frozenset[str], top_score: float) -> float:
    """Share of the failing tests the mutant fixes, weighted by its rank score (suspiciousness
    of its line × operator prior) against the best-ranked mutant's: equally good candidates
    for the tests are told apart the way the search ordered them."""
    if not failing:
        return 0.0
    share = len(set(item.fixed) & failing) / len(failing)
    standing = min(1.0, item.score / top_score) if top_score > 0 else 0.0
    return round(share * (0.5 + 0.5 * standing), 4)


def to_plan(item: Prepared, failing: frozenset[str], top_score: float) -> CandidatePlan:
    mutant = item.mutant
    return CandidatePlan(
        patch=item.patch,
        hypothesis=mutant.describe(),
        confidence=confidence(item, failing, top_score),
        operator=mutant.operator,
        location=", ".join(f"{f}:{n}" for f, n in mutant.lines),
        data={
            "fixed": item.fixed,
            "failing": len(failing),
            "screened_against": len(item.phase1) + len(item.phase2),
            "rank_score": round(item.score, 6),
        },
    )
