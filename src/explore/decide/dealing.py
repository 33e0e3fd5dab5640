"""How a fleet's candidates are dealt to its slots (`--deal auto|even`) — pure.

`even` is the rotation (candidate i to slot i mod k). `auto` is Thompson sampling over what this
repository's history says each slot did: every slot first gets one candidate (while there are
candidates for all), then each further candidate goes to the slot whose draw from
Beta(1 + won, 1 + iterations − won) is highest, where `iterations` counts the iterations the slot's
agents made candidates in and `won` those one of its candidates was merged in. A slot is rated per
iteration, not per candidate: an iteration has one winner, so counting candidates would rate an agent
lower the more candidates it was dealt (one that won every iteration with 3 of 4 candidates would
stand at 1/3). The draws come from a generator seeded by the run and the iteration, so a run deals
the same way when it is replayed. With no history, or no iteration of these agents here, `auto` is
the rotation. The history's per-iteration tallies (`agents` in each history.jsonl record) are read
as they are: the format is unchanged."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from ..model import agentnames
from ..model.tally import AgentTally

DealMode = Literal["auto", "even"]
WHY = "by what wins here (Thompson sampling over the iterations each slot took part in, in this repository's history)"


@dataclass(frozen=True)
class Deal:
    slots: list[int]
    """The slot of each candidate, in letter order (a, b, c…)."""
    how: str
    """For the run's header: how the candidates are dealt, and why."""


@dataclass(frozen=True)
class Record:
    """A slot in this repository's history: the iterations its agents made candidates in, and won."""

    iterations: int = 0
    won: int = 0


def slot_record(slot: str, history: list[dict[str, AgentTally]]) -> Record:
    """The record of a slot (its chain's members together) over per-iteration tallies."""
    members = agentnames.chain(slot)
    mine = [[it[m] for m in members if m in it] for it in history]
    took = [tallies for tallies in mine if any(t.candidates for t in tallies)]
    return Record(len(took), sum(any(t.wins for t in tallies) for tallies in took))


def deal(n: int, slots: list[str], history: list[dict[str, AgentTally]], mode: DealMode, seed: str) -> Deal:
    """history: the per-agent tally of each iteration this repository recorded (history_io.load_tallies)."""
    k = len(slots)
    records = [slot_record(s, history) for s in slots]
    if mode == "even" or not any(r.iterations for r in records):
        why = "--deal even" if mode == "even" else "no iteration of these agents in this repository's history yet"
        return Deal([i % k for i in range(n)], f"in turn ({why})")
    rng = random.Random(seed)
    counts = [1 if n >= k else 0 for _ in slots]
    for _ in range(n - sum(counts)):
        draws = [rng.betavariate(1 + r.won, 1 + r.iterations - r.won) for r in records]
        counts[max(range(k), key=lambda i: draws[i])] += 1
    said = ", ".join(
        f"{slots[i]} {counts[i]} (won {r.won} of {r.iterations} iterations)" for i, r in enumerate(records)
    )
    return Deal(_interleaved(counts), f"{WHY}: {said}")


def _interleaved(counts: list[int]) -> list[int]:
    """Slots in turn while each has candidates left: [2, 1] → [0, 1, 0]."""
    left, order = list(counts), []
    while any(left):
        for i in range(len(left)):
            if left[i]:
                order.append(i)
                left[i] -= 1
    return order
