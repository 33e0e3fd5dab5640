"""`explore bench --compare old.json new.json`: what got better or worse, case by case."""

from __future__ import annotations

from dataclasses import dataclass

from .results import BenchResult, CaseResult, Stats

RANK = {"unrepaired": 0, "repaired?": 1, "plausible": 2, "correct": 3}


@dataclass
class Change:
    case: str
    strategy: str
    kind: str
    """better | worse | added | removed | same grade (changed details)."""
    old: str
    new: str

    def line(self) -> str:
        return f"{self.kind:<8} {self.case} [{self.strategy}]: {self.old} → {self.new}"


def _describe(r: CaseResult | None) -> str:
    if r is None:
        return "absent"
    extra = f"{r.iterations} it" + (f", {r.error}" if r.error else "")
    return f"{r.grade} ({extra})"


def compare(old: BenchResult, new: BenchResult) -> list[Change]:
    """Cases whose grade (unrepaired < claimed only < plausible < correct) changed, or that came or went."""
    before = {(r.case, r.arm): r for r in old.results}
    after = {(r.case, r.arm): r for r in new.results}
    changes: list[Change] = []
    for key in sorted(before.keys() | after.keys()):
        o, n = before.get(key), after.get(key)
        if o is None or n is None:
            kind = "added" if o is None else "removed"
        elif RANK[n.grade] != RANK[o.grade]:
            kind = "better" if RANK[n.grade] > RANK[o.grade] else "worse"
        else:
            continue
        changes.append(Change(key[0], key[1], kind, _describe(o), _describe(n)))
    return changes


def report(old: BenchResult, new: BenchResult) -> list[str]:
    """The lines `--compare` prints: changed cases, then per-strategy totals old → new."""
    changes = compare(old, new)
    lines = [c.line() for c in changes] or ["no case changed grade"]
    lines.append("")
    for name in dict.fromkeys([*old.summary, *new.summary]):
        o, n = old.summary.get(name), new.summary.get(name)

        def fmt(s: Stats | None) -> str:
            return (
                "-" if s is None else f"correct {s.correct}/{s.runs}, plausible {s.plausible}, median {s.median_s:.1f}s"
            )

        lines.append(f"{name}: {fmt(o)} → {fmt(n)}")
    better = sum(c.kind == "better" for c in changes)
    worse = sum(c.kind == "worse" for c in changes)
    lines.append(f"{better} better, {worse} worse, {len(changes) - better - worse} added/removed")
    return lines
