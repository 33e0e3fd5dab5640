"""A run's state, everything `explore resume` needs: its status (and the groups of final statuses),
why a person is needed, the `--issue` reproduction, why the search gave up, how the result reached
the user's tree."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from .candidates import IterationRecord
from .phase import RunPhase, Stage
from .testresults import Counts, EnvironmentFailure, HungTest
from .usage import Usage


class EscalationCategory(str, Enum):
    """Why a person is needed: the JSON summary's `escalation.category`."""

    infrastructure = "infrastructure"
    """The tests cannot run (command, interpreter, dependencies, collection, memory, setup)."""
    external_service = "external_service"
    destructive = "destructive"
    ambiguous_requirements = "ambiguous_requirements"
    out_of_scope = "out_of_scope"
    """The fault lies outside the repository (a dependency)."""

    def __str__(self) -> str:
        return self.value


RunStatus = Literal["running", "succeeded", "partial", "failed", "escalated", "interrupted"]
ENDED: frozenset[RunStatus] = frozenset({"succeeded", "partial", "failed"})
"""A run that is over: nothing to resume (a rollback makes it interrupted again)."""
PAUSED: frozenset[RunStatus] = frozenset({"interrupted", "escalated"})
"""A run stopped to be resumed: its branch and its result stay where they are."""
NEEDS_PERSON: frozenset[RunStatus] = frozenset({"escalated", "failed"})
"""A run that ended without a repair: the gate asks a person what to do."""
REPAIRED: frozenset[RunStatus] = frozenset({"succeeded", "partial"})
"""A run that met the quality gate (partial: within the targets only)."""
Criticality = Literal["high", "medium", "low"]
"""How much a failing test matters (criticality.py)."""


class SampleAttempt(BaseModel):
    """What one test-writer sample of `--issue` wrote, and whether its tests reproduce the report."""

    sample: str
    generator: str
    summary: str = ""
    files: list[str] = Field(default_factory=list)
    """Test files it wrote (kept from its diff)."""
    discarded: list[str] = Field(default_factory=list)
    """Writes refused or files dropped because they are not test files."""
    predicted: dict[str, str] = Field(default_factory=dict)
    """Test file → the failure message the writer predicted."""
    reproducing: list[str] = Field(default_factory=list)
    """Test ids that fail on today's code as predicted (or with an assertion, when nothing was predicted)."""
    signature: str = ""
    """The failure messages of its reproducing tests, normalised: equal signatures agree."""
    unpredicted: bool = False
    """Its reproducing tests fail with an assertion its writer did not predict: ranked below predicted ones."""
    why_not: str | None = None
    """Why none of its tests was kept (or why it lost the vote)."""
    usage: Usage = Field(default_factory=Usage)


class GaveUp(BaseModel):
    """Why the search stopped with no repair in sight (decide/stop.py), what it tried, and how to spend more."""

    why: Literal["search_budget", "search_complete"]
    """search_budget: the search budget ran out; search_complete: the generator had searched all it can."""
    search_s: float
    """Seconds of search since the baseline or the last merged improvement."""
    budget_s: float
    budget: str
    """The `search-budget` setting that gave budget_s (`10x`, `90s`)."""
    suite_s: float
    """The suite's time as this run measured it (its tests' seconds plus one process's start-up)."""
    iterations: int
    strategies: list[str] = Field(default_factory=list)
    candidates: int = 0
    mutants_screened: int = 0
    spend_more: list[str] = Field(default_factory=list)
    """Ways to search longer or differently: a command, a `[tool.explore]` line, another generator."""


class Reproduction(BaseModel):
    """Iteration 0 of `--issue`: the tests reproducing the report, committed before any repair."""

    samples: list[SampleAttempt] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)
    """Test ids kept (and made targets)."""
    files: list[str] = Field(default_factory=list)
    """Their files, which no later candidate may edit."""
    chosen: str | None = None
    """The sample whose tests were kept (the first of the largest agreeing group)."""
    commit: str | None = None


class EscalationInfo(BaseModel):
    category: EscalationCategory
    reason: str
    suggested_action: str
    options: list[str] = Field(default_factory=list)


class Application(BaseModel):
    """How a run's result reached the user's tree: what `explore undo` reverses."""

    mode: Literal["fast_forward", "working_tree"]
    """fast_forward: the user's branch moved to the run's result; working_tree: the repair was applied
    to the files, uncommitted, the branch unmoved."""
    branch: str
    before: str
    """The branch's commit before (the run's start for a fast-forward)."""
    after: str
    """The branch's commit after (the run's result for a fast-forward; `before` otherwise)."""
    patch: str | None = None
    """working_tree: the patch applied to the files (reversed by undo)."""


class SandboxUsed(BaseModel):
    """The confinement candidates ran in (DESIGN §2 `sandbox`)."""

    mechanism: Literal["bubblewrap", "landlock", "none"]
    why: str = ""
    """Why not a stronger one (bubblewrap missing, Landlock refused, `sandbox = "off"`)."""


class RunState(BaseModel):
    """Everything `explore resume` needs; written atomically after every step that matters."""

    run_id: str
    repo: str
    status: RunStatus = "running"
    phase: RunPhase = Field(default_factory=lambda: RunPhase.at(Stage.start))
    """The step of the last checkpoint (on disk as before: "iteration-3-scored-b")."""
    pid: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    start_branch: str | None = None
    start_commit: str = ""
    base_commit: str = ""
    """The commit the run repairs: start_commit, or a snapshot of a dirty tree."""
    dirty: bool = False
    current_commit: str = ""
    branch: str | None = None
    baselined: bool = False
    """The baseline was measured to its end (its flaky reruns included): the yardstick exists. A run
    interrupted before that measures it again on resume; nothing is scored without it."""
    sandbox: SandboxUsed | None = None
    baseline_ids: list[str] = Field(default_factory=list)
    baseline_skipped: list[str] = Field(default_factory=list)
    baseline_xfailed: list[str] = Field(default_factory=list)
    """Expected failures at baseline: the only tests whose `xfailed` still counts as passing."""
    baseline_opened: list[str] = Field(default_factory=list)
    """Files the tests read at the baseline (their data): edits to them are test edits."""
    baseline_unconfirmed: list[str] = Field(default_factory=list)
    """Tests whose passing the record contradicted at the baseline already (the project's own harness)."""
    baseline: Counts = Field(default_factory=Counts)
    current: Counts = Field(default_factory=Counts)
    current_failing: list[str] = Field(default_factory=list)
    failure_messages: dict[str, str] = Field(default_factory=dict)
    """Short failure text of each currently failing test (for reports and JUnit output)."""
    flaky: list[str] = Field(default_factory=list)
    known_failures: list[str] = Field(default_factory=list)
    """Failing tests a person skipped (.explore/known-failures.json): not targets, left alone."""
    criticality: dict[str, Criticality] = Field(default_factory=dict)
    """Remaining failing test → high | medium | low."""
    iterations: list[IterationRecord] = Field(default_factory=list)
    no_progress: int = 0
    unmoved_streak: dict[str, int] = Field(default_factory=dict)
    """Failing test → iterations running in which no tried edit made it pass."""
    set_aside: list[str] = Field(default_factory=list)
    """Failing tests the run stopped spending iterations on (no edit ever moved them)."""
    escalation: EscalationInfo | None = None
    stop_reason: str | None = None
    hints: list[str] = Field(default_factory=list)
    test_timeout: float | None = None
    """The per-test limit derived from the baseline (when not configured), kept for `explore resume`."""
    slowest_pass_s: float | None = None
    """The baseline's slowest passing test: after a hang the lowered limit stays above a multiple of it."""
    worktrees: list[str] = Field(default_factory=list)
    pids: list[int] = Field(default_factory=list)
    merged_commit: str | None = None
    applied: bool = False
    application: Application | None = None
    """Set while the result is in the user's tree (by the final fast-forward or `explore apply`)."""
    finished: bool = False
    """True once the end of the run (fast-forward, report) is done; a terminal status without it
    means the run was killed on its way out and `resume` finishes it."""
    started_at: float = 0.0
    duration_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    targets: list[str] | None = None
    """The tests this run repairs (None: every failing test), chosen once at the baseline."""
    preexisting_failures: list[str] = Field(default_factory=list)
    """Tests failing at the baseline that are not targets: left alone."""
    environment_failures: list[EnvironmentFailure] = Field(default_factory=list)
    """Failures at the baseline no code edit can fix (environment.py): left out like pre-existing ones."""
    awaiting_service: list[str] = Field(default_factory=list)
    """Tests to repair set aside at the baseline for a service or credential no edit can provide
    (environment.SERVICE): the rest is repaired, and while they still fail the run ends
    `external_service` naming them."""
    baseline_failing: list[str] = Field(default_factory=list)
    """The tests failing at the baseline: what a result fixed and did not fix is read against them."""
    baseline_timeouts: list[HungTest] = Field(default_factory=list)
    """Tests the per-test limit stopped at the baseline, each with where it was stuck."""
    baseline_slow: list[str] = Field(default_factory=list)
    """Tests that overran the per-test limit at the baseline and passed rerun alone with a generous
    limit: slow, not failing (not targets; the run's limit raised for them)."""
    reproduction: Reproduction | None = None
    """`--issue`: the reproduction tests of iteration 0."""
    gave_up: GaveUp | None = None
    """Set when the search stopped with no repair in sight (the search budget, or nothing left to try)."""
    restored: list[str] = Field(default_factory=list)
    """What a candidate had written outside its worktree and the run put back on its way out (an
    interruption, an error): paths as a person finds them."""
    restored_kept: str | None = None
    """Where what that restore replaced was copied."""

    @model_validator(mode="before")
    @classmethod
    def _older_state(cls, data: Any) -> Any:
        """A state file written before `baselined` existed: measured when it holds any baseline test."""
        if isinstance(data, dict) and "baselined" not in data:
            data = {**data, "baselined": bool(data.get("baseline_ids") or data.get("baseline_skipped"))}
        return data
