"""`--agent A,B,C`: a fallback chain of generators. Each iteration asks the head first; the next
one is asked when the current one fails for this iteration — it raises, is unavailable past its
retries (rate limit, overload, unreachable), runs out of budget, or proposes nothing. A refused
key (401/403, a plain Escalation) still stops the run at once: falling back would hide it.

A coding agent (claude-code, codex…, a command) meets its model only when it realises a candidate:
when it is unavailable then and the next member is an agent too, the candidate's worktree is reset
and that member realises it; when the next member plans from the code first (mutate, anthropic),
the candidate crashes and the next iteration's proposal passes the unavailable member over."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio

from ..edges.gitrepo import GIT
from ..model.candidates import CandidatePlan, Proposal, Realised
from ..model.errors import BudgetExhausted, Escalation, Unavailable
from ..model.usage import Usage
from .base import CandidateContext, FixGenerator, ProposalRequest, RerunRequest, TestWriter, WarmUpRequest


class ChainGenerator(FixGenerator):
    def __init__(self, members: list[FixGenerator]) -> None:
        self.members = members
        self.name = ",".join(m.name for m in members)
        self._by_name = {m.name: m for m in members}
        self._resting: dict[str, str] = {}
        """Members unavailable while realising a candidate: passed over by the next proposal."""

    @property
    def usage(self) -> Usage:
        """Run-wide totals of the members that keep them (for the budget on resume)."""
        return sum((member.usage for member in self.members), Usage())

    async def propose(self, request: ProposalRequest) -> Proposal:
        """The first member's plans that come (each tagged with its generator), and why every
        member before it was passed over."""
        fallbacks: list[str] = []
        usage = Usage()
        for member in self.members:
            if member.name in self._resting:
                why = self._resting.pop(member.name)
                fallbacks.append(f"{member.name} unavailable in the last iteration: {why}"[:600])
                continue
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
            except Exception as exc:
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
        return Proposal(
            reason="every generator of the chain failed: " + "; ".join(fallbacks), usage=usage, fallbacks=fallbacks
        )

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        member = self._by_name.get(plan.generator or "") or self.members[0]
        fallbacks: list[str] = []
        spent = Usage()
        while True:
            try:
                realised = await member.realise(plan, context)
            except Unavailable as exc:
                spent += Usage.of(getattr(exc, "usage", None))
                later = self.members[self.members.index(member) + 1 :]
                if later and later[0].agent_in_realise:
                    fallbacks.append(
                        f"{member.name} unavailable for candidate {context.candidate_id}: {exc.reason}"[:600]
                    )
                    await anyio.to_thread.run_sync(_reset, context)
                    member, plan = (
                        later[0],
                        plan.model_copy(update={"generator": later[0].name, "operator": later[0].name}),
                    )
                    continue
                stop: Exception = exc
                if later:  # mutate or anthropic plan from the scratch worktree: they take over next iteration
                    self._resting[member.name] = exc.reason
                    stop = Resting(f"{member.name} unavailable: {exc.reason}; {later[0].name} proposes next iteration")
                stop.usage = spent  # type: ignore[attr-defined]
                raise stop from None
            if not fallbacks:
                return realised
            return realised.model_copy(
                update={"generator": member.name, "fallbacks": fallbacks, "usage": spent + realised.usage}
            )

    def baseline_env(self, run_dir: Path, commit: str, test_patterns: list[str]) -> dict[str, str]:
        """The head's, as for the warm-up: mutate's per-test coverage rides on the baseline, so a
        chain headed by mutate needs no second, traced run of the suite before its first proposal."""
        return self.members[0].baseline_env(run_dir, commit, test_patterns)

    async def warm_up(self, request: WarmUpRequest) -> None:
        """The head's warm-up: the member the first iteration asks first (a later one may never
        propose, and warming it would take the baseline's idle core for nothing)."""
        await self.members[0].warm_up(request)

    async def rerun_failing(self, request: RerunRequest) -> dict[str, str] | None:
        """The head's: the member the warm-up warmed."""
        return await self.members[0].rerun_failing(request)

    async def aclose(self) -> None:
        """Every member's, even when one fails (each may keep something warm: mutate's workers)."""
        failed: list[BaseException] = []
        for member in self.members:
            try:
                await member.aclose()
            except Exception as exc:
                failed.append(exc)
        if failed:
            raise failed[0]

    def test_writer(self) -> TestWriter | None:
        """The first member that can write tests (`--issue`), or None."""
        return next((found for m in self.members if (found := m.test_writer()) is not None), None)


class Resting(Exception):
    """A member was unavailable for a candidate and the next one cannot take it over at once."""


def _reset(context: CandidateContext) -> None:
    """Undo what a member that gave up left in the worktree (ignored files stay: setup output)."""
    # to the commit explore checked out, not HEAD: a member's commit lives in its own object store
    # (sandbox.Confinement.store), which explore's git does not read
    for args in (["reset", "--hard", "--quiet", context.base or "HEAD"], ["clean", "-fdq"]):
        if context.git is not None:
            context.git(*args)
        else:
            subprocess.run([*GIT, *args], cwd=context.workdir, check=True, capture_output=True)
