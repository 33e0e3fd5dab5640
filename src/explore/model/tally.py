"""Per agent, what a run's candidates did (the JSON summary's `agents`, the report's table, the
history's per-run record): candidates made, `ok` ones, wins (merged), time and cost."""

from __future__ import annotations

from pydantic import BaseModel

from .candidates import CandidateStatus, IterationRecord


class AgentTally(BaseModel):
    candidates: int = 0
    ok: int = 0
    wins: int = 0
    time_s: float = 0.0
    """The candidates' own seconds (generation and tests), added up."""
    cost_usd: float = 0.0


def tally(iterations: list[IterationRecord]) -> dict[str, AgentTally]:
    """Each candidate counted for the agent that made it (its `generator`)."""
    found: dict[str, AgentTally] = {}
    for record in iterations:
        for candidate in record.candidates:
            agent = found.setdefault(candidate.generator or "unknown", AgentTally())
            agent.candidates += 1
            agent.ok += candidate.status == CandidateStatus.ok
            agent.wins += record.winner == candidate.id and record.commit is not None
            agent.time_s = round(agent.time_s + candidate.duration_s, 3)
            agent.cost_usd = round(agent.cost_usd + candidate.usage.llm.cost_usd, 6)
    return found
