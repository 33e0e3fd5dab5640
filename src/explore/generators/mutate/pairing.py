"""Two-edit mutants made of screened singles: pairs of partial fixes (two defects in one
candidate), the same change at two lines (one mistake repeated), pairs of the best singles, and
second-order mutants at the most suspicious lines (deepen.py's last stage). Pure functions; the
order of what they return is fixed, so the search stays deterministic."""

from __future__ import annotations

import itertools

from .edits import Edit, Mutant, overlaps
from .prepared import Prepared

Order = tuple[float | str, ...]
"""A sort key of mutants: numbers and names, the lowest first."""
ChangeKey = tuple[str, str, str]
"""(operator, replaced text, new text): equal for the same change."""


def combine(
    screened: list[Prepared], sources: dict[str, str], top_singles: int = 12, limit: int = 300
) -> list[tuple[Mutant, float]]:
    """Two-edit mutants. With partial fixes: pairs whose fixed tests differ (a fix of two
    defects in one candidate). Without: pairs making the same change at two lines first
    (`>` → `>=` twice: one mistake repeated), then pairs of the best singles."""
    partial = [p for p in screened if p.plausible]
    alive = [p for p in screened if p.verdict and p.verdict.status == "ok"]
    if len(partial) >= 2:
        candidates = list(itertools.combinations(partial, 2))
    else:
        groups: dict[ChangeKey, list[Prepared]] = {}
        for p in alive:
            change = change_key(p.mutant, sources)
            if change is not None:
                groups.setdefault(change, []).append(p)
        candidates = [pair for group in groups.values() for pair in itertools.combinations(group[:10], 2)]
        candidates += list(itertools.combinations(alive[:top_singles], 2))
    pairs: dict[tuple[tuple[str, Edit], ...], tuple[Order, Mutant, float]] = {}
    position = {id(p): i for i, p in enumerate(screened)}
    for a, b in candidates:
        if a.mutant.lines == b.mutant.lines or overlaps([e for _, e in a.mutant.edits], [e for _, e in b.mutant.edits]):
            continue
        gain = len(set(a.fixed) | set(b.fixed))
        if partial and gain <= max(len(a.fixed), len(b.fixed)):
            continue
        combo = pair_of(a.mutant, b.mutant)
        first, second = combo.parts
        analogous = change_key(first, sources) is not None and change_key(first, sources) == change_key(second, sources)
        score = a.score + b.score
        key = (
            -gain,
            not analogous,
            -round(score, 12),
            position[id(a)] + position[id(b)],
            first.file,
            first.line,
            first.col,
            second.file,
            second.line,
            second.col,
            combo.operator,
            first.new,
            second.new,
        )
        pairs.setdefault(combo.edits, (key, combo, score))
    ordered = sorted(pairs.values(), key=lambda item: item[0])
    return [(m, s) for _, m, s in ordered[:limit]]


def at_top(
    screened: list[Prepared],
    weight: dict[tuple[str, int], float],
    lines: int = 3,
    per_line: int = 30,
    limit: int = 3000,
) -> list[tuple[Mutant, float]]:
    """Second-order mutants at the most suspicious lines (by `weight`): every two screened
    singles that ran (no crash, no timeout) at the `lines` best lines, at one line or two, whose
    edits do not overlap; best summed score first. For a search where no single edit fixed
    anything."""
    alive = [p for p in screened if p.verdict and p.verdict.status == "ok" and len(p.mutant.lines) == 1]
    top = sorted({p.mutant.lines[0] for p in alive}, key=lambda fl: (-weight.get(fl, 0.0), fl))[:lines]
    chosen = [
        p
        for line in top
        for p in sorted((q for q in alive if q.mutant.lines[0] == line), key=lambda q: -q.score)[:per_line]
    ]
    pairs: dict[tuple[tuple[str, Edit], ...], tuple[Order, Mutant, float]] = {}
    for a, b in itertools.combinations(chosen, 2):
        if overlaps([e for _, e in a.mutant.edits], [e for _, e in b.mutant.edits]):
            continue
        combo = pair_of(a.mutant, b.mutant)
        first, second = combo.parts
        key = (
            -round(a.score + b.score, 12),
            first.file,
            first.line,
            first.col,
            second.line,
            second.col,
            combo.operator,
            first.new,
            second.new,
        )
        pairs.setdefault(combo.edits, (key, combo, a.score + b.score))
    ordered = sorted(pairs.values(), key=lambda item: item[0])
    return [(m, s) for _, m, s in ordered[:limit]]


def change_key(mutant: Mutant, sources: dict[str, str]) -> ChangeKey | None:
    """(operator, replaced text, new text) of a one-edit mutant: equal for the same change."""
    if len(mutant.edits) != 1:
        return None
    file, edit = mutant.edits[0]
    return (mutant.operator, sources[file][edit.start : edit.end], edit.text)


def pair_of(a: Mutant, b: Mutant) -> Mutant:
    """The two-edit mutant made of two singles (in source order)."""
    first, second = sorted((a, b), key=lambda m: (m.file, m.line, m.col, m.operator, m.new))
    return Mutant(
        file=first.file,
        line=first.line,
        col=first.col,
        operator=f"{first.operator}+{second.operator}",
        family="combination",
        prior=first.prior * second.prior,
        old=first.old,
        new=first.new,
        single_token=first.single_token and second.single_token,
        edits=tuple(sorted(first.edits + second.edits, key=lambda fe: (fe[0], fe[1]))),
        parts=(first, second),
    )
