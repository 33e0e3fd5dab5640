"""How a fleet's candidates are dealt to its slots (`--deal auto|even`) — pure.

`even` is the rotation (candidate i to slot i mod k). `auto` is Thompson sampling over what this
repository's history says each slot's agents won: every slot first gets one candidate (while there
are candidates for all), then each further candidate goes to the slot whose draw from
Beta(1 + wins, 1 + candidates − wins) is highest. The draws come from a generator seeded by the run
and the iteration, so a run deals the same way when it is replayed. With no history, or no
candidate ever made by these agents here, `auto` is the rotation."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from ..model.tally import AgentTally

DealMode = Literal["auto", "even"]


@dataclass(frozen=True)
class Deal:
    slots: list[int]
    """The slot of each candidate, in letter order (a, b, c…)."""
    how: str
    """For the run's header: how the candidates are dealt, and why."""


def slot_record(slot: str, tallies: dict[str, AgentTally]) -> tuple[int, int]:
    """(wins, candidates) of a slot: its chain's members added up."""
    members = [tallies[m] for m in slot.split(",") if m in tallies]
    return sum(t.wins for t in members), sum(t.candidates for t in members)


def deal(n: int, slots: list[str], tallies: dict[str, AgentTally], mode: DealMode, seed: str) -> Deal:
    k = len(slots)
    records = [slot_record(s, tallies) for s in slots]
    if mode == "even" or not any(made for _, made in records):
        why = "--deal even" if mode == "even" else "no candidate of these agents in this repository's history yet"
        return Deal([i % k for i in range(n)], f"in turn ({why})")
    rng = random.Random(seed)
    counts = [1 if n >= k else 0 for _ in slots]
    for _ in range(n - sum(counts)):
        draws = [rng.betavariate(1 + wins, 1 + made - wins) for wins, made in records]
        counts[max(range(k), key=lambda i: draws[i])] += 1
    order = _interleaved(counts)
    said = ", ".join(f"{slots[i]} {counts[i]} ({wins}/{made} won)" for i, (wins, made) in enumerate(records))
    return Deal(order, f"by what wins here (Thompson sampling over this repository's history): {said}")


def _interleaved(counts: list[int]) -> list[int]:
    """Slots in turn while each has candidates left: [2, 1] → [0, 1, 0]."""
    left, order = list(counts), []
    while any(left):
        for i in range(len(left)):
            if left[i]:
                order.append(i)
                left[i] -= 1
    return order


def history_tallies(records: list[dict[str, AgentTally]]) -> dict[str, AgentTally]:
    """The per-agent tallies of history records, added up."""
    total: dict[str, AgentTally] = {}
    for agents in records:
        for name, t in agents.items():
            into = total.setdefault(name, AgentTally())
            into.candidates += t.candidates
            into.ok += t.ok
            into.wins += t.wins
            into.time_s = round(into.time_s + t.time_s, 3)
            into.cost_usd = round(into.cost_usd + t.cost_usd, 6)
    return total
