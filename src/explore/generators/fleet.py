"""`--agent A --agent B,C`: the fleet. Each occurrence of `--agent` is a slot (its comma list is that
slot's own fallback chain, chain.py), and one iteration's candidates are dealt to the slots in turn
(`--parallel 3` over two slots: a and c from the first, b from the second), so the tests choose
among candidates of different agents and the best is merged.

A slot keeps its own settings, budget accounting and failures: a rate-limited member falls back
along its slot's chain; a slot that proposes nothing (unavailable, out of budget, no idea) has its
candidates dealt to the other slots, and a slot unavailable while realising a candidate hands it to
another slot whose agent can take it over mid-iteration (its worktree reset) — the iteration's
`fallbacks` say so. The loop sees one generator.

The run's search budget (decide/stop.py) applies by default only to a generator whose search grows
with the suite: a fleet's agents spend the model's time, so the run gives up by it only when
`--search-budget` is set. A slot that searches (mutate) still keeps to the default budget within
each iteration: its proposal gets a deadline of 10x the suite's time (at least 30 s) unless the run
gives one."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import anyio

from ..decide import dealing
from ..decide import stop as search_budget
from ..decide.dealing import DealMode
from ..model.candidates import CandidatePlan, Proposal, Realised
from ..model.errors import BudgetExhausted, Escalation, Unavailable
from ..model.tally import AgentTally
from ..model.usage import Usage
from .base import SEPARATOR, CandidateContext, FixGenerator, ProposalRequest, RerunRequest, TestWriter, WarmUpRequest
from .chain import ChainGenerator, Resting, _reset

SLOT = "fleet_slot"
"""The plan's `data` key naming the slot that proposed it."""


class FleetGenerator(FixGenerator):
    def __init__(
        self,
        slots: list[FixGenerator],
        mode: DealMode = "even",
        history: list[dict[str, AgentTally]] | None = None,
        parallel: int = 3,
        run_id: str = "",
    ) -> None:
        self.slots = slots
        self.name = SEPARATOR.join(slot.name for slot in slots)
        self.mode: DealMode = mode
        self.history = history or []
        """Each iteration's per-agent tally in this repository's history: what `--deal auto` learns from."""
        self.parallel = parallel
        self.run_id = run_id
        self._resting: dict[int, str] = {}

    @property
    def usage(self) -> Usage:
        return sum((slot.usage for slot in self.slots), Usage())

    def dealt(self, n: int, seed: str = "") -> list[int]:
        """Which slot each of n candidates goes to (decide/dealing.py)."""
        return dealing.deal(n, [s.name for s in self.slots], self.history, self.mode, seed).slots

    def header(self) -> str:
        found = dealing.deal(self.parallel, [s.name for s in self.slots], self.history, self.mode, f"{self.run_id}/1")
        return f"deal: {self.parallel} candidates of iteration 1 to {len(self.slots)} slots, {found.how}"

    async def propose(self, request: ProposalRequest) -> Proposal:
        """Each slot proposes its share; a slot that fails leaves its share to the others."""
        request = self._with_deadline(request)
        deal = self.dealt(request.n, f"{request.run_dir.parent.name}/{request.iteration}")
        share = {i: deal.count(i) for i in range(len(self.slots))}
        got: dict[int, list[CandidatePlan]] = {}
        fallbacks: list[str] = []
        usage = Usage()
        merged = Proposal()
        for i, slot in enumerate(self.slots):
            if not share[i]:
                continue
            if i in self._resting:
                fallbacks.append(f"{slot.name} unavailable in the last iteration: {self._resting.pop(i)}"[:600])
                continue
            proposal, why = await self._ask(slot, request, share[i])
            usage += proposal.usage
            fallbacks += proposal.fallbacks
            if proposal.plans:
                got[i] = proposal.plans
                _fold(merged, proposal)
            else:
                fallbacks.append(f"{slot.name} {why}"[:600])
        missing = request.n - sum(len(plans) for plans in got.values())
        for i in sorted(range(len(self.slots)), key=lambda i: not self.slots[i].agent_in_realise):
            if missing <= 0 or i not in got or not self.slots[i].agent_in_realise:
                continue  # only an agent is asked again: its proposal is free, a search's is not
            proposal, _ = await self._ask(self.slots[i], request, missing)
            usage += proposal.usage
            got[i] += proposal.plans
            if proposal.plans:
                fallbacks.append(f"{len(proposal.plans)} candidate(s) dealt to {self.slots[i].name} instead")
            missing -= len(proposal.plans)
        plans = _interleave(deal, got)
        for plan in plans:
            slot = plan.data[SLOT]
            plan.generator = plan.generator or self.slots[slot].name
        if not plans:
            return Proposal(
                reason="every slot of the fleet failed: " + "; ".join(fallbacks), usage=usage, fallbacks=fallbacks
            )
        return merged.model_copy(update={"plans": plans, "usage": usage, "fallbacks": fallbacks})

    def _with_deadline(self, request: ProposalRequest) -> ProposalRequest:
        """The default search budget for a searching slot, when the run keeps none (see above); the
        suite's time is its tests' seconds in the run that found the failures."""
        if request.deadline is not None or not any(_searches(slot) for slot in self.slots):
            return request
        suite_s = search_budget.suite_seconds(sum(request.durations.values()), 0.0)
        return replace(
            request, deadline=time.monotonic() + search_budget.budget_seconds(search_budget.DEFAULT, suite_s)
        )

    async def _ask(self, slot: FixGenerator, request: ProposalRequest, n: int) -> tuple[Proposal, str]:
        asked = _with_n(request, n)
        try:
            proposal = await slot.propose(asked)
        except Unavailable as exc:
            return Proposal(usage=Usage.of(getattr(exc, "usage", None))), f"unavailable: {exc.reason}"
        except BudgetExhausted as exc:
            return Proposal(usage=Usage.of(getattr(exc, "usage", None))), f"out of budget: {exc}"
        except Escalation:
            raise
        except Exception as exc:
            return Proposal(usage=Usage.of(getattr(exc, "usage", None))), f"raised {type(exc).__name__}: {exc}"
        for plan in proposal.plans:
            plan.data[SLOT] = self.slots.index(slot)
        return proposal, f"proposed nothing: {proposal.reason or 'no idea'}"

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        index = int(plan.data.get(SLOT, 0))
        slot = self.slots[index]
        try:
            return await slot.realise(plan, context)
        except (Unavailable, Resting) as exc:
            reason = exc.reason if isinstance(exc, Unavailable) else str(exc)
            spent = Usage.of(getattr(exc, "usage", None))
            other = next((s for s in self.slots if s is not slot and _head(s).agent_in_realise), None)
            if isinstance(exc, Unavailable):  # a chain that rests a member says so itself next iteration
                self._resting[index] = reason
            if other is None:
                raise
            await anyio.to_thread.run_sync(_reset, context)
            name = _head(other).name
            realised = await other.realise(plan.model_copy(update={"generator": name, "operator": name}), context)
            why = f"{slot.name} unavailable for candidate {context.candidate_id}: {reason}; {name} took it over"
            return realised.model_copy(
                update={
                    "generator": realised.generator or name,
                    "fallbacks": [*realised.fallbacks, why[:600]],
                    "usage": spent + realised.usage,
                }
            )

    def baseline_env(self, run_dir: Path, commit: str, test_patterns: list[str]) -> dict[str, str]:
        return self._warm().baseline_env(run_dir, commit, test_patterns)

    async def warm_up(self, request: WarmUpRequest) -> None:
        await self._warm().warm_up(request)

    async def rerun_failing(self, request: RerunRequest) -> dict[str, str] | None:
        return await self._warm().rerun_failing(request)

    def _warm(self) -> FixGenerator:
        """The slot whose head searches against the suite (mutate), which the baseline can serve."""
        return next((s for s in self.slots if _head(s).suite_bound), self.slots[0])

    async def aclose(self) -> None:
        failed: list[BaseException] = []
        for slot in self.slots:
            try:
                await slot.aclose()
            except Exception as exc:
                failed.append(exc)
        if failed:
            raise failed[0]

    def test_writer(self) -> TestWriter | None:
        return next((found for s in self.slots if (found := s.test_writer()) is not None), None)


def _searches(slot: FixGenerator) -> bool:
    """A member of the slot searches against the suite (mutate)."""
    return any(m.suite_bound for m in (slot.members if isinstance(slot, ChainGenerator) else [slot]))


def _head(slot: FixGenerator) -> FixGenerator:
    return slot.members[0] if isinstance(slot, ChainGenerator) else slot


def _with_n(request: ProposalRequest, n: int) -> ProposalRequest:
    return replace(request, n=n)


def _fold(into: Proposal, proposal: Proposal) -> None:
    """A search's timing and unmoved tests (mutate's) kept for the iteration's record."""
    if proposal.timing.coverage or proposal.timing.screening or proposal.timing.prepare:
        into.timing = proposal.timing
    into.unmoved += [t for t in proposal.unmoved if t not in into.unmoved]
    into.reason = into.reason or proposal.reason


def _interleave(deal: list[int], got: dict[int, list[CandidatePlan]]) -> list[CandidatePlan]:
    """Plans in the order dealt (a from the first slot dealt, b from the next…), then what is left."""
    queues = {i: list(plans) for i, plans in got.items()}
    ordered: list[CandidatePlan] = []
    for i in deal:
        if queues.get(i):
            ordered.append(queues[i].pop(0))
    for i in sorted(queues):
        ordered += queues[i]
    return ordered[: len(deal)]
