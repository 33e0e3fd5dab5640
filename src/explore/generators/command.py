"""Any external coding agent (`claude -p`, `aider`, a script) run in the candidate's worktree;
the worktree's diff after it exits is the candidate."""

from __future__ import annotations

import json

from pydantic import BaseModel, ValidationError

from ..edges import procs
from ..model.candidates import CandidatePlan, Proposal, Realised
from ..model.errors import GeneratorFailed
from .base import CandidateContext, FixGenerator, ProposalRequest, TestWriter, TestWriteRequest, WrittenTests
from .prompt import build_prompt


class AgentResult(BaseModel):
    confidence: float = 0.5
    hypothesis: str | None = None


class WriterResult(BaseModel):
    """EXPLORE_RESULT_FILE of the test-writer role: the predicted failure, for every test file
    written (`expected_failure`) or per file (`tests`: {path: expected failure})."""

    expected_failure: str | None = None
    tests: dict[str, str] = {}
    summary: str = ""


WRITER_TASK = """# Reproduce this bug report with a failing test (role: test-writer)

Write one small test file (matching {patterns}) that FAILS on today's code for the reason the
report describes. Do not fix the code: only test files are kept, anything else is discarded.
Then write JSON to $EXPLORE_RESULT_FILE: {{"expected_failure": "<the assertion or error text the
test fails with today>", "summary": "<what it checks>"}}.

## Bug report

{issue}
"""


class CommandGenerator(FixGenerator, TestWriter):
    name = "command"
    agent_in_realise = True
    """Its proposal reads nothing: an `--agent A,B` chain can hand it a candidate mid-iteration."""

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
            confine=context.confine,
        )
        if done.exit_code != 0:
            last = done.output_tail.strip().splitlines()[-1:] or ["(no output)"]
            raise GeneratorFailed(f"agent exited with {done.exit_code}: {last[0][:300]}")
        result = AgentResult()
        if result_file.exists():
            try:
                result = AgentResult.model_validate(json.loads(result_file.read_text(encoding="utf-8")))
            except (ValueError, ValidationError):
                pass
        return Realised(confidence=min(1.0, max(0.0, result.confidence)), hypothesis=result.hypothesis)

    async def write_tests(self, request: TestWriteRequest) -> WrittenTests:
        """The agent in the sample's worktree with EXPLORE_ROLE=test-writer and the report; the
        caller keeps only test files from its diff."""
        prompt = WRITER_TASK.format(patterns=", ".join(request.test_patterns), issue=request.issue.strip())
        prompt_file, issue_file = request.files_dir / "prompt.md", request.files_dir / "issue.md"
        result_file = request.files_dir / "result.json"
        prompt_file.write_text(prompt, encoding="utf-8")
        issue_file.write_text(request.issue, encoding="utf-8")
        result_file.unlink(missing_ok=True)
        env = {
            "EXPLORE_ROLE": "test-writer",
            "EXPLORE_PROMPT_FILE": str(prompt_file),
            "EXPLORE_ISSUE_FILE": str(issue_file),
            "EXPLORE_RESULT_FILE": str(result_file),
            "EXPLORE_CANDIDATE": request.sample,
        }
        done = await procs.run(
            self.agent_cmd,
            request.workdir,
            env=env,
            stdin=prompt.encode(),
            log_path=request.files_dir / "agent.log",
            tracker=request.tracker,
            confine=request.confine,
        )
        if done.exit_code != 0:
            last = done.output_tail.strip().splitlines()[-1:] or ["(no output)"]
            raise GeneratorFailed(f"agent exited with {done.exit_code}: {last[0][:300]}")
        try:
            result = WriterResult.model_validate(json.loads(result_file.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError):
            return WrittenTests(
                summary=f"no valid JSON in EXPLORE_RESULT_FILE ({result_file.name}): no predicted failure"
            )
        predicted = dict(result.tests)
        if result.expected_failure:
            predicted["*"] = result.expected_failure
        return WrittenTests(predicted=predicted, summary=result.summary)
