"""How a strategy turns screened mutants into candidates — pure functions over the results.

conservative (variations): the best-ranked plausible single fixes, most failing tests fixed first;
exploratory (distinct): distinct lines and distinct operator families first, never more than two
candidates at one line;
aggressive (batched): combinations of partial fixes at different lines first when they fix more
than any single; its search stops once partial fixes together cover every failing test;
surgical (minimal): first the reverts of the change after which the pass rate fell (each hunk,
then all of them, then single lines), then single-token mutants nearest the lines that change
touched (the ranking already put them first; every operator when no single token fixes all),
the smallest edit first among equally good ones.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from ...model.candidates import CandidatePlan
from .edits import Mutant, normalise_patch
from .prepared import Prepared


def is_full(item: Prepared, failing: frozenset[str]) -> bool:
    return item.plausible and failing <= set(item.fixed)


def stop_rule(
    shape: str,
    n: int,
    failing: frozenset[str],
    patience: int,
    partial_patience: int | None = None,
    statements_done: Callable[[list[Prepared]], bool] | None = None,
) -> Callable[[list[Prepared]], bool]:
    """When the screened prefix holds what the strategy can use, so the rest of the budget is
    not spent: n full fixes (on n distinct lines for `distinct`); or `patience` more mutants
    ranked below the first full fix screened since it without finding the others (those ranked
    as high as it do not count: among equals the candidates' tests decide, not the order, so
    they are all seen); or, with partial fixes only,
    `partial_patience` (default 3 × patience) more since the latest one — a full fix may still
    rank lower, so partial fixes wait longer while they keep coming, and they are what a
    two-edit fix is built from — and only once `statements_done` (see `statements_reached`).
    Never before the first plausible mutant: without one, only the budget ends the search."""
    wait_partial = 3 * patience if partial_patience is None else partial_patience

    def enough(prefix: list[Prepared]) -> bool:
        full = [i for i, p in enumerate(prefix) if is_full(p, failing)]
        if shape == "batched" and not full and covers(prefix, failing):
            return True
        if shape == "distinct":
            if len({prefix[i].mutant.lines for i in full}) >= n:
                return True
        elif len(full) >= n:
            return True
        if full:
            found = prefix[full[0]].score
            return sum(p.score < found for p in prefix[full[0] + 1 :]) >= patience
        last = max((i for i, p in enumerate(prefix) if p.plausible), default=None)
        if last is None or len(prefix) - 1 - last < wait_partial:
            return False
        return statements_done is None or statements_done(prefix)

    return enough


STATEMENT = "statement"
"""The operator family that inserts or deletes a whole statement."""


def statements_reached(ranked: list[Mutant], shared: Collection[tuple[str, int]]) -> Callable[[list[Prepared]], bool]:
    """Whether a screened prefix (of `ranked`, in order) has got past the last statement mutant
    at a line every failing test runs — before which partial fixes alone do not end the search.

    A missing or extra statement is a common fault, but its operators have the lowest priors,
    so at the most suspicious lines they rank below every variant of every other operator at
    lesser lines: patience counted in mutants from a partial fix elsewhere (often an accidental
    one, at a line only some failing tests run, fixing those tests by side effect) runs out
    before they are reached. A single fault behind every failure lies on a line every failing
    test runs; until each statement edit there has been tried, "no full fix ranks lower" is not
    yet known. Its cost is the mutants ranked above the last of them (the budget still bounds
    it), and only in searches that would settle for partial fixes: none when a full fix is
    found or no partial one (the other rules decide then), none with a single failing test
    (every plausible mutant is a full fix). Ranking is left alone: where a full fix exists,
    what is found first does not change."""
    position = {m: i for i, m in enumerate(ranked)}
    last = max((i for i, m in enumerate(ranked) if m.family == STATEMENT and (m.file, m.line) in shared), default=-1)

    def done(prefix: list[Prepared]) -> bool:
        return last < 0 or (bool(prefix) and position.get(prefix[-1].mutant, len(ranked)) >= last)

    return done


def covers(screened: list[Prepared], failing: frozenset[str]) -> bool:
    """Plausible partial fixes at two or more different lines that together fix every failing
    test: enough to batch them into one candidate."""
    partial = [p for p in screened if p.plausible]
    lines = {p.mutant.lines for p in partial}
    fixed = {t for p in partial for t in p.fixed}
    return len(lines) >= 2 and bool(failing) and failing <= fixed


def edit_size(item: Prepared) -> int:
    """Characters removed plus characters inserted: how big the diff is."""
    return sum((e.end - e.start) + len(e.text) for _, e in item.mutant.edits)


def order(screened: list[Prepared]) -> list[Prepared]:
    """Plausible mutants: most failing tests fixed, then rank order (the list's own order)."""
    plausible = [(i, p) for i, p in enumerate(screened) if p.plausible]
    plausible.sort(key=lambda ip: (-len(ip[1].fixed), ip[0]))
    return [p for _, p in plausible]


def choose(
    shape: str, n: int, singles: list[Prepared], combos: list[Prepared], first: Sequence[Prepared] = ()
) -> list[Prepared]:
    """Up to n candidates in the strategy's shape; `first` (surgical's reverts) ahead of the
    rest, most failing tests fixed first, and never a second candidate with the same diff."""
    if first:
        ahead: list[Prepared] = []
        for p in order(list(first)):  # a bigger revert only when it fixes more than the smaller inside it
            if not any(set(q.mutant.edits) <= set(p.mutant.edits) and len(q.fixed) >= len(p.fixed) for q in ahead):
                ahead.append(p)
        seen = {normalise_patch(p.patch) for p in ahead}
        rest = choose(shape, n, [p for p in singles if normalise_patch(p.patch) not in seen], combos)
        return (ahead + rest)[:n]
    ranked_singles = order(singles)
    if shape == "batched":
        best_single = len(ranked_singles[0].fixed) if ranked_singles else 0
        better = [c for c in order(combos) if len(c.fixed) > best_single]
        return (better + ranked_singles)[:n]
    if shape == "distinct":
        return distinct(n, ranked_singles, order(combos))
    if shape == "minimal":
        ranked = sorted(enumerate(ranked_singles), key=lambda ip: (-len(ip[1].fixed), edit_size(ip[1]), ip[0]))
        return ([p for _, p in ranked] + order(combos))[:n]
    return (ranked_singles + order(combos))[:n]


PER_LINE = 2
"""Most exploratory candidates at one line: never three variations of one line."""


def distinct(n: int, singles: list[Prepared], combos: list[Prepared]) -> list[Prepared]:
    """Different lines with different operator families first, then different lines, then a second
    candidate at a line already used (another family only), then combinations touching a new line."""
    chosen: list[Prepared] = []

    def lines(p: Prepared) -> set[tuple[str, int]]:
        return set(p.mutant.lines)

    def used(p: Prepared) -> int:
        return max((sum(1 for c in chosen if line in lines(c)) for line in lines(p)), default=0)

    passes: tuple[Callable[[Prepared], bool], ...] = (
        lambda p: used(p) == 0 and all(p.mutant.family != c.mutant.family for c in chosen),
        lambda p: used(p) == 0,
        lambda p: used(p) < PER_LINE and all(p.mutant.family != c.mutant.family for c in chosen if lines(c) & lines(p)),
    )
    for accept in passes:
        for p in singles:
            if len(chosen) < n and p not in chosen and accept(p):
                chosen.append(p)
    for p in combos:
        if len(chosen) < n and any(all(line not in lines(c) for c in chosen) for line in lines(p)):
            chosen.append(p)
    return chosen


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
