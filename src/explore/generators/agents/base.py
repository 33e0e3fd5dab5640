"""A named coding agent (Claude Code, Codex, Gemini CLI, Qwen Code, Aider) as a fix generator: one
`Adapter` per CLI knows its non-interactive invocation and reads its structured output; `CLIAgent`
runs it through the command runner in the candidate's worktree (prompt on stdin, transcript in the
candidate folder), books what it spent, and turns its failures into explore's: a refused key is an
`external_service` escalation, a rate limit or overload is `Unavailable` (a chain's next member
takes over), anything else a crashed candidate."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...edges import procs
from ...model.candidates import CandidatePlan, Proposal, Realised
from ...model.errors import BudgetExhausted, Escalation, GeneratorFailed, Unavailable, UsageError
from ...model.runstate import EscalationCategory
from ...model.usage import LLMUsage, Usage
from ..base import CandidateContext, FixGenerator, ProposalRequest, TestWriter, TestWriteRequest, WrittenTests
from ..command import WriterResult
from ..prompt import build_prompt
from .versions import Capabilities, Support, check, fit, learn

Role = Literal["coder", "test-writer"]
Failure = Literal["auth", "rate_limit"]


class Price(BaseModel):
    """USD per million tokens, for CLIs that report tokens but no cost (Codex, Gemini, Qwen)."""

    model_config = ConfigDict(extra="forbid")
    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0


class AgentSettings(BaseModel):
    """`[tool.explore.agents.NAME]`: how explore runs one named agent."""

    model_config = ConfigDict(extra="forbid")
    model: str | None = None
    """The model the CLI uses (its own model flag); None: the CLI's default."""
    args: list[str] = Field(default_factory=list)
    """Flags added after explore's (a string is split as a shell would)."""
    bin: str | None = None
    """The executable: a name on PATH or a path (default: the CLI's usual name)."""
    cmd: str | None = None
    """A shell command that defines a named command agent (as --agent-cmd does), usable in chains."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for the agent's process (e.g. a gateway's base URL)."""
    price: Price | None = None
    """What a million tokens cost, when the CLI reports tokens only."""

    @field_validator("args", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value


@dataclass
class Outcome:
    """What one run of a CLI reported in its structured output."""

    text: str = ""
    """Its final message."""
    session_id: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    """The error the CLI itself reported, if any."""
    status: int | None = None
    """The HTTP status of the model service's error, when the CLI says it."""


class Adapter(Protocol):
    name: str
    install: str
    """The command that installs the CLI (said when it is missing)."""
    default_bin: str
    support: Support
    """What a release must accept, what may be left out, the oldest supported (versions.py)."""

    @property
    def state(self) -> tuple[str, ...]:
        """Where the CLI keeps its own state (login, settings): writable inside the sandbox."""
        ...

    def argv(self, settings: AgentSettings, role: Role, prompt_file: Path, budget_usd: float | None) -> list[str]:
        """The flags after the executable (the prompt also arrives on stdin)."""
        ...

    def env(self, settings: AgentSettings) -> dict[str, str]: ...

    def parse(self, output: str) -> Outcome: ...


AUTH = re.compile(
    r"\b40[13]\b|unauthori[sz]ed|authentication[_ ]?(error|failed)|failed to authenticate|invalid[_ ](x-)?api[_ -]?key|"
    r"api key not valid|permission_error|PERMISSION_DENIED|UNAUTHENTICATED|AuthenticationError",
    re.IGNORECASE,
)
BUSY = re.compile(
    r"\b(429|529|503)\b|rate[_ -]?limit|too many requests|overloaded|quota|RESOURCE_EXHAUSTED|"
    r"RateLimitError|ServiceUnavailable|capacity",
    re.IGNORECASE,
)


def classify(outcome: Outcome, tail: str) -> Failure | None:
    """Why a run failed, from the status the CLI reported, else its error text, else its last output."""
    if outcome.status in (401, 403):
        return "auth"
    if outcome.status in (429, 503, 529):
        return "rate_limit"
    text = outcome.error or tail[-3000:]
    if AUTH.search(text):
        return "auth"
    if BUSY.search(text):
        return "rate_limit"
    return None


def json_objects(output: str) -> list[Any]:
    """Every JSON value that starts a line of output (JSONL, or a pretty-printed object among log lines)."""
    found, decoder, position = [], json.JSONDecoder(), 0
    while position < len(output):
        start = min((i for i in (output.find("{", position), output.find("[", position)) if i >= 0), default=-1)
        if start < 0:
            break
        if start == 0 or output[start - 1] == "\n":
            try:
                value, end = decoder.raw_decode(output, start)
                found.append(value)
                position = end
                continue
            except ValueError:
                pass
        position = start + 1
    return found


def last_result(output: str) -> dict[str, Any] | None:
    """The last `{"type": "result", …}` message (Claude Code's and Qwen Code's format), in JSONL or a JSON array."""
    results = [
        v
        for value in json_objects(output)
        for v in (value if isinstance(value, list) else [value])
        if isinstance(v, dict) and v.get("type") == "result"
    ]
    return results[-1] if results else None


def last_object(text: str) -> dict[str, Any] | None:
    """The last JSON object in a free text (an agent's final message)."""
    decoder, end = json.JSONDecoder(), len(text)
    while (start := text.rfind("{", 0, end)) >= 0:
        try:
            value = decoder.raw_decode(text, start)[0]
            if isinstance(value, dict):
                return value
        except ValueError:
            pass
        end = start
    return None


def priced(tokens: LLMUsage, price: Price | None) -> LLMUsage:
    if price is None or tokens.cost_usd:
        return tokens
    dollars = (
        tokens.input_tokens * price.input
        + tokens.cache_read_input_tokens * price.cached_input
        + tokens.output_tokens * price.output
    ) / 1_000_000
    return tokens.model_copy(update={"cost_usd": round(dollars, 6)})


WRITER_TASK = """# Reproduce this bug report with a failing test (role: test-writer)

Write one small test file (matching {patterns}) that FAILS on today's code for the reason the report
describes. Do not fix the code and do not edit anything but test files: only test files are kept.
End your final message with one line of JSON: {{"expected_failure": "<the assertion or error text the
test fails with today>", "summary": "<what it checks>"}}.

## Bug report

{issue}
"""


class CLIAgent(FixGenerator, TestWriter):
    """One named agent for the run; it keeps the run's totals for the budget."""

    agent_in_realise = True
    """Its proposal reads nothing: an `--agent A,B` chain can hand it a candidate mid-iteration."""

    def __init__(self, adapter: Adapter, settings: AgentSettings, options: dict[str, Any]) -> None:
        self.adapter, self.settings, self.name = adapter, settings, adapter.name
        self.budget_usd: float | None = options.get("budget_usd")
        self.budget_tokens: int | None = options.get("budget_tokens")
        self.spent_before = Usage.of(options.get("spent"))
        self.total = Usage()
        self.runs = 0
        self.running = 0

    @property
    def usage(self) -> Usage:
        return self.total

    async def propose(self, request: ProposalRequest) -> Proposal:
        """The agent decides what to change: each of the N runs gets the same task."""
        return Proposal(plans=[CandidatePlan(hypothesis="", operator=self.name) for _ in range(request.n)])

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        prompt = build_prompt(context.request, plan.hypothesis or None)
        env = {
            "EXPLORE_CANDIDATE": context.candidate_id,
            "EXPLORE_ITERATION": str(context.iteration),
            "EXPLORE_STRATEGY": context.strategy.name,
            "EXPLORE_ROLE": "coder",
        }
        outcome = await self._run(
            "coder", prompt, context.workdir, context.files_dir, env, context.tracker, context.confine
        )
        return Realised(hypothesis=outcome.text.strip()[:500] or None, usage=outcome.usage)

    async def write_tests(self, request: TestWriteRequest) -> WrittenTests:
        """The test-writer role of `--issue`: told to write test files only (explore keeps only those)."""
        prompt = WRITER_TASK.format(patterns=", ".join(request.test_patterns), issue=request.issue.strip())
        env = {"EXPLORE_CANDIDATE": request.sample, "EXPLORE_ROLE": "test-writer"}
        outcome = await self._run(
            "test-writer", prompt, request.workdir, request.files_dir, env, request.tracker, request.confine
        )
        result = None
        claim = last_object(outcome.text)
        if claim is not None:
            try:
                result = WriterResult.model_validate(claim)
            except ValidationError:
                pass
        if result is None:
            return WrittenTests(
                summary="its final message held no JSON line: no predicted failure", usage=outcome.usage
            )
        predicted = dict(result.tests)
        if result.expected_failure:
            predicted["*"] = result.expected_failure
        return WrittenTests(predicted=predicted, summary=result.summary, usage=outcome.usage)

    def executable(self) -> str:
        """The CLI's path; a UsageError (exit 2) naming the install command when it is missing."""
        wanted = self.settings.bin or self.adapter.default_bin
        found = shutil.which(str(Path(wanted).expanduser()))
        if not found:
            raise UsageError(
                f"--agent {self.name}: the executable {wanted!r} was not found (PATH or "
                f"[tool.explore.agents.{self.name}] bin); install it with `{self.adapter.install}`"
            )
        return found

    def capabilities(self) -> Capabilities:
        """What the installed release accepts (asked once per binary); a UsageError (exit 2) when it is
        too old to run safely."""
        binary = self.executable()
        found = learn(binary, self.adapter.support.help_args, {**self.adapter.env(self.settings), **self.settings.env})
        check(self.name, found, self.adapter.support, binary)
        return found

    def argv(self, role: Role, prompt_file: Path, budget_usd: float | None) -> list[str]:
        """The command line for one run: the adapter's flags this release knows, then the settings' own."""
        flags = self.adapter.argv(self.settings, role, prompt_file, budget_usd)
        return [self.executable(), *fit(flags, self.capabilities(), self.adapter.support), *self.settings.args]

    def _remaining_usd(self) -> float | None:
        """Dollars left under --budget-usd; BudgetExhausted when the next run would likely exceed a budget
        (spent so far, plus the mean of earlier runs for every run under way and the next)."""
        spent = self.spent_before + self.total
        ahead = (self.running + 1) / self.runs if self.runs else 0.0
        if self.budget_usd is not None and spent.llm.cost_usd + ahead * self.total.llm.cost_usd >= self.budget_usd:
            raise BudgetExhausted(
                f"${spent.llm.cost_usd:.4f} of --budget-usd {self.budget_usd:g} spent; another "
                f"{self.name} run (~${self.total.llm.cost_usd / max(1, self.runs):.4f}) would exceed it"
            )
        tokens = spent.llm.tokens_in + spent.llm.output_tokens
        if (
            self.budget_tokens is not None
            and tokens + ahead * (self.total.llm.tokens_in + self.total.llm.output_tokens) >= self.budget_tokens
        ):
            raise BudgetExhausted(
                f"{tokens} of --budget-tokens {self.budget_tokens} used; another {self.name} run would exceed it"
            )
        return None if self.budget_usd is None else self.budget_usd - spent.llm.cost_usd

    async def _run(
        self,
        role: Role,
        prompt: str,
        workdir: Path,
        files_dir: Path,
        env: dict[str, str],
        tracker: procs.ProcessTracker | None,
        confine: procs.Confinement | None = None,
    ) -> Outcome:
        remaining = self._remaining_usd()
        prompt_file = files_dir / "prompt.md"
        prompt_file.write_text(prompt, encoding="utf-8")
        argv = self.argv(role, prompt_file, remaining)
        env = {**self.adapter.env(self.settings), **self.settings.env, **env, "EXPLORE_PROMPT_FILE": str(prompt_file)}
        self.running += 1
        try:
            done = await procs.run(
                argv,
                workdir,
                env=env,
                stdin=prompt.encode(),
                log_path=files_dir / "agent.log",
                tracker=tracker,
                confine=confine.with_writable(*self.adapter.state) if confine else None,
            )
        finally:
            self.running -= 1
        output = (files_dir / "agent.log").read_text(encoding="utf-8", errors="replace")
        outcome = self.adapter.parse(output)
        outcome.usage = Usage(llm=priced(outcome.usage.llm, self.settings.price))
        self.total += outcome.usage
        self.runs += 1
        (files_dir / "agent.json").write_text(
            json.dumps(
                {  # what explore read from the transcript
                    "agent": self.name,
                    "exit_code": done.exit_code,
                    "session_id": outcome.session_id,
                    "result": outcome.text,
                    "error": outcome.error,
                    "usage": outcome.usage.model_dump(),
                },
                indent=2,
            ),
            encoding="utf-8",
        )
        kind = classify(outcome, output) if done.exit_code != 0 or outcome.error else None
        if done.exit_code == 0 and kind is None:
            return outcome  # an error it finished with anyway (turns, its own budget): its edits are scored
        raise self._failure(outcome, done, output, kind)

    def _failure(self, outcome: Outcome, done: procs.ProcResult, output: str, kind: Failure | None) -> Exception:
        last = (
            outcome.error
            or next((line for line in reversed(output.strip().splitlines()) if line.strip()), "(no output)")
        )[:300]
        exc: Exception
        if kind == "auth":
            exc = Escalation(
                EscalationCategory.external_service,
                f"{self.name}: the model service refused its credentials: {last}",
                f"check the key or login {self.name} uses (run it once by hand), then `explore resume`",
            )
        elif kind == "rate_limit":
            exc = Unavailable(
                f"{self.name} is rate-limited or overloaded: {last}",
                f"wait and `explore resume`, or chain another agent after it (--agent {self.name},mutate)",
            )
        else:
            return GeneratorFailed(f"{self.name} exited with {done.exit_code}: {last}", outcome.usage)
        exc.usage = outcome.usage  # type: ignore[attr-defined]
        return exc
