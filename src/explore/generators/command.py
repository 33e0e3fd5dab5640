"""Any external coding agent (`claude -p`, `aider`, a script) run in the candidate's worktree;
the worktree's diff after it exits is the candidate."""

from __future__ import annotations

import json

from pydantic import BaseModel, ValidationError

from .. import procs
from ..models import CandidatePlan, Proposal, Realised
from .base import CandidateContext, ProposalRequest
from .prompt import build_prompt


class AgentCrashed(Exception):
    """The agent exited non-zero: the candidate is `crashed`."""


class AgentResult(BaseModel):
    confidence: float = 0.5
    hypothesis: str | None = None


class CommandGenerator:
    name = "command"

    def __init__(self, agent_cmd: str) -> None:
        self.agent_cmd = agent_cmd

    async def propose(self, request: ProposalRequest) -> Proposal:
        """The agent decides what to change; each of the N runs gets the same task."""
        return Proposal(plans=[CandidatePlan(hypothesis="") for _ in range(request.n)])

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        prompt = build_prompt(context.request, plan.hypothesis or None)
        prompt_file = context.files_dir / "prompt.md"
        result_file = context.files_dir / "result.json"
        prompt_file.write_text(prompt, encoding="utf-8")
        result_file.unlink(missing_ok=True)
        env = {
            "EXPLORE_PROMPT_FILE": str(prompt_file),
            "EXPLORE_RESULT_FILE": str(result_file),
            "EXPLORE_CANDIDATE": context.candidate_id,
            "EXPLORE_ITERATION": str(context.iteration),
            "EXPLORE_STRATEGY": context.strategy.name,
        }
        done = await procs.run(
            self.agent_cmd,
            context.workdir,
            env=env,
            stdin=prompt.encode(),
            log_path=context.files_dir / "agent.log",
            tracker=context.tracker,
        )
        if done.exit_code != 0:
            last = done.output_tail.strip().splitlines()[-1:] or ["(no output)"]
            raise AgentCrashed(f"agent exited with {done.exit_code}: {last[0][:300]}")
        result = AgentResult()
        if result_file.exists():
            try:
                result = AgentResult.model_validate(json.loads(result_file.read_text(encoding="utf-8")))
            except (ValueError, ValidationError):
                pass
        return Realised(confidence=min(1.0, max(0.0, result.confidence)), hypothesis=result.hypothesis)
