"""The run's `--json` summary (DESIGN §2)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .candidates import IterationRecord
from .runstate import Criticality, EscalationInfo, GaveUp, Reproduction, RunStatus, SandboxUsed
from .tally import AgentTally, tally
from .testresults import Counts, EnvironmentFailure, HungTest
from .usage import Usage


class Summary(BaseModel):
    """The `--json` object of DESIGN §2: fields may be added, never renamed."""

    run_id: str
    status: RunStatus
    exit_code: int
    baseline: Counts
    final: Counts
    iterations: list[IterationRecord]
    branch: str | None
    merged_commit: str | None
    applied: bool
    escalation: EscalationInfo | None
    report: str | None
    duration_s: float
    flaky: list[str] = Field(default_factory=list)
    remaining_failures: list[str] = Field(default_factory=list)
    criticality: dict[str, Criticality] = Field(default_factory=dict)
    stop_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    targets: list[str] | None = None
    preexisting_failures: list[str] = Field(default_factory=list)
    environment_failures: list[EnvironmentFailure] = Field(default_factory=list)
    baseline_timeouts: list[HungTest] = Field(default_factory=list)
    set_aside: list[str] = Field(default_factory=list)
    reproduction: Reproduction | None = None
    diff: str | None = None
    """The repair's unified diff against the starting commit (a dirty tree's snapshot excluded)."""
    gave_up: GaveUp | None = None
    """Why the search stopped with no repair in sight, what it tried, and how to spend more."""
    agents: dict[str, AgentTally] = Field(default_factory=dict)
    """Per agent (each candidate's `generator`): candidates, ok, wins, time, cost (model/tally.py)."""

    sandbox: SandboxUsed | None = None
    """The confinement candidates ran in: bubblewrap, landlock or none, and why."""

    def model_post_init(self, context: Any) -> None:
        if not self.agents:
            self.agents = tally(self.iterations)
