"""`--agent A,B,C`: a fallback chain of generators. Each iteration asks the head first; the next
one is asked when the current one fails for this iteration — it raises, is unavailable past its
retries (rate limit, overload, unreachable), runs out of budget, or proposes nothing. A refused
key (401/403, a plain Escalation) still stops the run at once: falling back would hide it."""

from __future__ import annotations

from typing import Any

from ..errors import BudgetExhausted, Escalation, Unavailable
from ..models import CandidatePlan, Proposal, Realised
from ..usage import Usage
from .base import CandidateContext, FixGenerator, ProposalRequest


class ChainGenerator:
    def __init__(self, members: list[FixGenerator]) -> None:
        self.members = members
        self.name = ",".join(m.name for m in members)
        self._by_name = {m.name: m for m in members}

    @property
    def usage(self) -> Usage:
        """Run-wide totals of the members that keep them (for the budget on resume)."""
        return sum((Usage.of(getattr(member, "usage", None)) for member in self.members), Usage())

    async def propose(self, request: ProposalRequest) -> Proposal:
        """The first member's plans that come (each tagged with its generator), and why every
        member before it was passed over."""
        fallbacks: list[str] = []
        usage = Usage()
        for member in self.members:
            try:
                proposal = await member.propose(request)
            except Unavailable as exc:
                usage += Usage.of(getattr(exc, "usage", None))
                why = f"unavailable: {exc.reason}"
            except BudgetExhausted as exc:
                usage += Usage.of(getattr(exc, "usage", None))
                why = f"out of budget: {exc}"
            except Escalation:
                raise
            except Exception as exc:  # noqa: BLE001 — a member's bug moves the chain on
                usage += Usage.of(getattr(exc, "usage", None))
                why = f"raised {type(exc).__name__}: {exc}"
            else:
                usage += proposal.usage
                if proposal.plans:
                    for plan in proposal.plans:
                        plan.generator = member.name
                    return proposal.model_copy(update={"usage": usage, "fallbacks": fallbacks + proposal.fallbacks})
                why = f"proposed nothing: {proposal.reason or 'no idea'}"
            fallbacks.append(f"{member.name} {why}"[:600])
        return Proposal(reason="every generator of the chain failed: " + "; ".join(fallbacks), usage=usage, fallbacks=fallbacks)

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        member = self._by_name.get(plan.generator or "") or self.members[0]
        return await member.realise(plan, context)

    def test_writer(self) -> Any:
        """The first member that can write tests (`--issue`), or None."""
        return next((m for m in self.members if hasattr(m, "write_tests")), None)
