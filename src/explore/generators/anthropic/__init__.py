"""The anthropic fix generator: a read-only debugger that diagnoses (propose) and a
worktree-confined coder that applies one diagnosis per candidate (realise)."""

from __future__ import annotations

import hashlib
from typing import Any

import anyio

from ...decide.redaction import redact
from ...model.candidates import CandidatePlan, Proposal, Realised
from ...model.errors import Escalation, Unavailable
from ...model.runstate import EscalationCategory
from ...model.usage import Usage
from ..base import CandidateContext, FixGenerator, ProposalRequest, TestWriter, TestWriteRequest, WrittenTests
from . import coder, debugger, testwriter
from .client import ChainExhausted, HttpClientFactory, ModelClient, RetryPolicy
from .context import assemble
from .cost import Ledger
from .diagnosis import Diagnosis
from .session import Session, Transcript
from .settings import Settings, load
from .tools import Workspace

__all__ = ["AnthropicGenerator", "Diagnosis", "Settings"]


class AnthropicGenerator(FixGenerator, TestWriter):
    """One instance per run: it keeps the run's token and cost totals for the budget."""

    name = "anthropic"

    def __init__(self, options: dict[str, Any], http_client_factory: HttpClientFactory | None = None) -> None:
        self.settings = load(options)
        self.ledger = Ledger(
            prices=self.settings.price_table(),
            budget_usd=options.get("budget_usd"),
            budget_tokens=options.get("budget_tokens"),
        )
        self.ledger.resume(options.get("spent") or {})
        policy = RetryPolicy(
            max_retries=self.settings.max_retries,
            overloaded_fallback_after=self.settings.overloaded_fallback_after,
            max_retry_after=self.settings.max_retry_after,
            timeout=self.settings.timeout,
        )
        self.client = ModelClient(self.ledger, policy, http_client_factory)
        self._contexts: dict[tuple[int, str], str] = {}
        self._warm: dict[str, anyio.Event] = {}

    @property
    def usage(self) -> Usage:
        """Run-wide totals, including calls whose propose/realise ended in an exception."""
        return Usage.of(self.ledger.total)

    def _params(self, system: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
        return {"max_tokens": self.settings.max_tokens, "system": system, "tools": tools}

    async def _context(self, request: ProposalRequest, root: Any) -> str:
        key = (request.iteration, request.current_commit)
        if key not in self._contexts:
            built = await assemble(request, root, self.settings.token_budget)
            self._contexts = {key: redact(built.text)}  # only the current iteration's is needed
        return self._contexts[key]

    async def propose(self, request: ProposalRequest) -> Proposal:
        context_text = await self._context(request, request.scratch)
        (request.run_dir / "anthropic-context.md").write_text(context_text, encoding="utf-8")
        shape = request.strategy.shape
        wanted = request.n if shape == "distinct" else 1
        task = debugger.task_text(shape, wanted, request.strategy.guidance, request.strategy.template)
        transcript = Transcript(request.run_dir / "anthropic-debugger.jsonl")
        workspace = Workspace(request.scratch, test_patterns=request.test_patterns)
        async with self.client.open() as api:
            session = Session(
                self.client,
                api,
                "debugger",
                self.settings.debugger,
                self._params(debugger.SYSTEM, debugger.tools()),
                transcript,
            )
            try:
                result = await debugger.diagnose(
                    session, workspace, context_text, task, wanted, self.settings.debugger_max_turns, transcript
                )
                diagnoses = debugger.ranked(result.diagnoses)
                if diagnoses:
                    escalate(diagnoses[0])
            except ChainExhausted as exc:
                if exc.api_only:
                    raise charged(unavailable(exc), session) from None
                return Proposal(plans=[], reason=f"no usable diagnosis: {exc}", usage=Usage.of(session.usage))
            except Exception as exc:
                raise charged(exc, session)  # noqa: B904 (the same exception re-raised, its usage attached)
        if not diagnoses:
            return Proposal(
                plans=[], reason=result.note or "the debugger submitted no diagnosis", usage=Usage.of(session.usage)
            )
        plans = make_plans(diagnoses, request.n, shape)
        reason = None
        if len(plans) < request.n:
            reason = f"the debugger found {len(plans)} distinct hypothesis(es) of {request.n} asked"
        return Proposal(plans=plans, reason=reason, usage=Usage.of(session.usage))

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        request = context.request
        context_text = await self._context(request, context.workdir)
        task = coder.plan_text(
            plan.data.get("diagnosis", {"fix": plan.hypothesis}),
            int(plan.data.get("variant", 0)),
            int(plan.data.get("of", 1)),
            context.strategy.guidance,
            request.allow_test_edits,
        )
        workspace = Workspace(
            context.workdir,
            writable=True,
            allow_test_edits=request.allow_test_edits,
            test_patterns=request.test_patterns,
        )
        transcript = Transcript(context.files_dir / "anthropic-coder.jsonl")
        gate_key = hashlib.sha256(context_text.encode()).hexdigest()
        first = gate_key not in self._warm
        gate = self._warm.setdefault(gate_key, anyio.Event())

        async def opened() -> None:
            gate.set()

        if not first:  # let the first coder write the shared prompt cache, then read it
            with anyio.move_on_after(60):
                await gate.wait()
        try:
            async with self.client.open() as api:
                session = Session(
                    self.client,
                    api,
                    "coder",
                    self.settings.coder,
                    self._params(coder.SYSTEM, coder.tools()),
                    transcript,
                )
                try:
                    done = await coder.apply(
                        session,
                        workspace,
                        context_text,
                        task,
                        self.settings.max_turns,
                        transcript,
                        opened if first else None,
                    )
                except ChainExhausted as exc:
                    raise charged(
                        unavailable(exc) if exc.api_only else RuntimeError(f"coder: {exc}"), session
                    ) from None
                except Exception as exc:
                    raise charged(exc, session)  # noqa: B904 (the same exception re-raised, its usage attached)
        finally:
            if first:
                gate.set()
        if workspace.refused:
            transcript.write(event="refused", paths=workspace.refused)
        return Realised(
            confidence=done.confidence, hypothesis=done.summary or plan.hypothesis, usage=Usage.of(session.usage)
        )

    async def write_tests(self, request: TestWriteRequest) -> WrittenTests:
        """One test-writer sample of `--issue` (its own conversation, the coder's models)."""
        transcript = Transcript(request.files_dir / "anthropic-test-writer.jsonl")
        async with self.client.open() as api:
            session = Session(
                self.client,
                api,
                "test-writer",
                self.settings.coder,
                self._params(testwriter.SYSTEM, testwriter.TOOLS),
                transcript,
            )
            try:
                written = await testwriter.write(session, request, self.settings.max_turns, transcript)
            except ChainExhausted as exc:
                raise charged(
                    unavailable(exc) if exc.api_only else RuntimeError(f"test writer: {exc}"), session
                ) from None
            except Exception as exc:
                raise charged(exc, session)  # noqa: B904 (the same exception re-raised, its usage attached)
        if written.refused:
            transcript.write(event="refused", paths=written.refused)
        written.usage = Usage.of(session.usage)
        return written


def charged(exc: Exception, session: Session) -> Exception:
    """The exception, carrying what the conversation spent: the run books it even when it fails."""
    exc.usage = dict(session.usage)  # type: ignore[attr-defined]
    return exc


def make_plans(diagnoses: list[Diagnosis], n: int, shape: str) -> list[CandidatePlan]:
    """distinct: one hypothesis per coder; otherwise N coders on the top hypothesis."""
    chosen = diagnoses[:n] if shape == "distinct" else [diagnoses[0]] * n
    plans = []
    for index, diagnosis in enumerate(chosen):
        where = diagnosis.root_cause_location
        plans.append(
            CandidatePlan(
                hypothesis=diagnosis.summary()[:500],
                confidence=diagnosis.confidence_value,
                operator=f"anthropic:{shape}",
                location=f"{where.file}:{where.line}" if where.line else where.file,
                data={"diagnosis": diagnosis.model_dump(mode="json"), "variant": index, "of": len(chosen)},
            )
        )
    return plans


def escalate(diagnosis: Diagnosis) -> None:
    """escalate_immediately, task_spec_error and out_of_scope need a person (issue 4 §7)."""
    where = f"{diagnosis.root_cause_location.file}:{diagnosis.root_cause_location.line or '?'}"
    if diagnosis.escalate_immediately or diagnosis.failure_classification == "task_spec_error":
        category = EscalationCategory(diagnosis.escalation_category or "ambiguous_requirements")
        why = {
            EscalationCategory.ambiguous_requirements: "the tests or the task do not say unambiguously what the code should do",
            EscalationCategory.destructive: "the only fix found would destroy data or state",
            EscalationCategory.external_service: "the failure comes from a service outside this repository",
        }[category]
        raise Escalation(
            category,
            f"Claude's diagnosis: {diagnosis.root_cause} ({where}). A person is needed because {why}.",
            "Decide what the code should do and run `explore resume --hint '…'`; or skip these tests; or stop here.",
        )
    if diagnosis.out_of_scope:
        upstream = f" in {diagnosis.upstream_dependency}" if diagnosis.upstream_dependency else ""
        raise Escalation(
            EscalationCategory.out_of_scope,
            f"Claude's diagnosis: the fault lies outside this repository{upstream}: {diagnosis.out_of_scope_reason}.",
            "Fix or pin the dependency, then `explore resume`; or give a hint with `explore resume --hint '…'`.",
        )


def unavailable(exc: ChainExhausted) -> Unavailable:
    return Unavailable(
        f"The Anthropic API could not serve the request on any configured model: {'; '.join(exc.reasons)[:600]}.",
        "Wait and `explore resume`; check ANTHROPIC_BASE_URL or your gateway; or run with --agent mutate.",
    )
