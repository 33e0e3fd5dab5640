"""The read-only debugger: explores the worktree with read_file / list_files / search and
answers through `submit_diagnosis`, once per hypothesis. Invalid diagnoses are re-asked once
with the validation error, then count as a failure of that model (fallback); so do
low-confidence ones when a next model exists."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .diagnosis import Diagnosis, submit_diagnosis_tool
from .session import ReAsk, Session, Transcript, answer_tools
from .tools import READ_TOOLS, ToolError, Workspace

SYSTEM = """You are the debugger of explore, a tool that repairs failing test suites.
You only read: use read_file, list_files and search to find why the tests fail, then call
submit_diagnosis with a precise diagnosis (file and line of the root cause, the exact change).
Tests encode the requirement: fix the code, not the tests. If the tests contradict each other
or the task is unclear, classify it as task_spec_error and set escalate_immediately with
escalation_category ambiguous_requirements. If the only fix would destroy data or the failure
comes from an external service, escalate with that category. If the fault is in a dependency
outside this repository, set out_of_scope and upstream_dependency. Never propose a fix that
was already tried."""

SHAPES = {
    "variations": "Find the single most likely root cause and submit one diagnosis with a targeted fix.",
    "batched": "The failures look alike: find their common cause and submit one diagnosis whose fix repairs "
    "the whole family at once (list every change).",
    "distinct": "Submit {n} DISTINCT diagnoses (call submit_diagnosis {n} times): different root causes or "
    "different locations, each not tried before. Question the obvious explanation.",
    "minimal": "The pass rate regressed. Start from the change that regressed and submit one diagnosis with the "
    "smallest possible fix — undo or correct the smallest part of that change.",
}


@dataclass
class DebugResult:
    diagnoses: list[Diagnosis] = field(default_factory=list)
    note: str | None = None


def task_text(shape: str, n: int, guidance: str, template: str | None) -> str:
    ask = SHAPES.get(shape, SHAPES["variations"]).format(n=n)
    parts = [template.strip()] if template else []
    parts += [guidance, ask, "Read the code before you diagnose; cite exact current text in fix.changes."]
    return "\n\n".join(p for p in parts if p)


async def diagnose(
    session: Session,
    workspace: Workspace,
    context_text: str,
    task: str,
    wanted: int,
    max_turns: int,
    transcript: Transcript,
) -> DebugResult:
    """Run the conversation until `wanted` diagnoses, the model stops, or turns run out."""
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": context_text, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": task},
            ],
        }
    ]
    result = DebugResult()
    reask = ReAsk(session, "submit_diagnosis")
    nudged = False

    async def run(name: str, args: dict[str, Any]) -> tuple[str, bool]:
        if name == "submit_diagnosis":
            try:
                diagnosis = Diagnosis.model_validate(args)
            except ValidationError as exc:
                reask.invalid()
                return f"invalid diagnosis, fix it and call submit_diagnosis again:\n{exc}", True
            result.diagnoses.append(diagnosis)
            reask.valid()  # each diagnosis gets its own re-ask
            left = wanted - len(result.diagnoses)
            return (
                f"recorded ({len(result.diagnoses)} of {wanted}); submit the next distinct one"
                if left > 0
                else "recorded; you are done"
            ), False
        try:
            return workspace.run(name, args), False
        except ToolError as exc:
            return str(exc), True

    low_retried = False
    for _ in range(max_turns):
        model_before = session.model
        message = await session.turn(messages)
        results = await answer_tools(message, run, transcript)
        if session.model != model_before:
            nudged = False
        done = len(result.diagnoses) >= wanted or (not results and bool(result.diagnoses))
        if done and weak(result) and not low_retried and session.index + 1 < len(session.chain):
            # low confidence falls back: the next model reviews with everything seen so far
            low_retried = True
            session.fail_model(f"{session.model}: low confidence", "output")
            wanted = len(result.diagnoses) + 1
            results.append(
                {
                    "type": "text",
                    "text": "That diagnosis has low confidence. Investigate further and "
                    "submit a better-founded diagnosis.",
                }
            )
            messages.append({"role": "user", "content": results})
            continue
        if done:
            break
        if results:
            messages.append({"role": "user", "content": results})
            continue
        if nudged:
            session.fail_model(f"{session.model}: ended without submit_diagnosis", "output")
        nudged = not nudged
        messages.append({"role": "user", "content": "Call submit_diagnosis now with your best diagnosis."})
    else:
        result.note = f"debugger reached its {max_turns}-turn limit with {len(result.diagnoses)} diagnosis(es)"
    return result


def weak(result: DebugResult) -> bool:
    return bool(result.diagnoses) and all(d.confidence.level == "low" for d in result.diagnoses)


def ranked(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """Most confident first; duplicates (same location and fix) dropped."""
    seen: set[tuple[str, str]] = set()
    out = []
    for d in sorted(diagnoses, key=lambda d: -d.confidence_value):
        key = (f"{d.root_cause_location.file}:{d.root_cause_location.line}", d.fix.description.strip().lower())
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def tools() -> list[dict[str, Any]]:
    return [*READ_TOOLS, submit_diagnosis_tool()]
