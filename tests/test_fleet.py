"""generators/fleet.py without a run: what each slot is asked. A slot that searches against the suite
(mutate) keeps to the default search budget within each iteration, since the run keeps none for a
fleet of agents; a budget the run sets is passed as it is."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand
from explore.generators.base import CandidateContext, FixGenerator, ProposalRequest
from explore.generators.chain import ChainGenerator
from explore.generators.command import CommandGenerator
from explore.generators.fleet import FleetGenerator
from explore.model.candidates import CandidatePlan, Proposal, Realised


class Asked(FixGenerator):
    """A slot that notes the deadline it is asked with and proposes nothing."""

    def __init__(self, name: str, searches: bool) -> None:
        self.name = name
        self.suite_bound = searches  # type: ignore[misc]
        self.deadlines: list[float | None] = []

    async def propose(self, request: ProposalRequest) -> Proposal:
        self.deadlines.append(request.deadline)
        return Proposal(reason="nothing here")

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        raise AssertionError("never realised: it proposes nothing")


def request(tmp_path: Path, durations: dict[str, float], deadline: float | None = None) -> ProposalRequest:
    return ProposalRequest(
        repo_root=tmp_path,
        scratch=tmp_path,
        current_commit="0" * 40,
        base_commit="0" * 40,
        n=3,
        iteration=1,
        strategy=load_strategies()["conservative"],
        failing=[],
        passing=[],
        test_command=TestCommand(python=sys.executable),
        run_dir=tmp_path / "run" / "iteration-1",
        deadline=deadline,
        durations=durations,
    )


@pytest.mark.anyio
async def test_a_searching_slot_gets_the_default_search_budget_and_a_set_one_is_kept(tmp_path: Path) -> None:
    search = Asked("searcher", searches=True)
    fleet = FleetGenerator([CommandGenerator("true"), ChainGenerator([Asked("other", False), search])])
    before = time.monotonic()
    proposal = await fleet.propose(request(tmp_path, {"t::a": 4.0, "t::b": 8.0}))
    after = time.monotonic()
    [deadline] = search.deadlines
    assert deadline is not None and before + 120 <= deadline <= after + 120  # 10x the suite's 12 s
    assert len(proposal.plans) == 3  # the command slot took the share the searcher left
    await fleet.propose(request(tmp_path, {"t::a": 0.2}))
    assert search.deadlines[1] is not None and search.deadlines[1] >= after + 30  # at least 30 s
    await fleet.propose(request(tmp_path, {"t::a": 0.2}, deadline=12345.0))
    assert search.deadlines[2] == 12345.0  # the run's own budget (--search-budget), as it is
    agents = Asked("agent", searches=False)
    await FleetGenerator([CommandGenerator("true"), agents]).propose(request(tmp_path, {"t::a": 4.0}))
    assert agents.deadlines == [None]  # no slot searches: nothing is bounded
