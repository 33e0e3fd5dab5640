"""Pydantic models at explore's boundaries: test results, candidates, iterations, run state, summary."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, Field

from .phase import RunPhase, Stage
from .usage import Usage

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "timeout"]
"""`timeout`: the test overran explore's per-test limit; it counts as failing."""
PASSING: frozenset[str] = frozenset({"passed", "xpassed"})
"""What passes by itself; `xfailed` passes only for a test already xfail at baseline (scoring.Yardstick)."""


class TestOutcome(BaseModel):
    """One test's result, with the failure text a generator needs to reason about it."""

    __test__ = False  # not a pytest test class

    id: str
    outcome: Outcome
    message: str = ""
    """Short failure text (exception line, assertion) — empty when passed."""
    longrepr: str = ""
    """The full failure report as the runner printed it."""
    file: str | None = None
    """Test file relative to the repository root, when the runner tells it."""
    markers: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    """Setup, call and teardown together, as the runner measured them."""


class TestRun(BaseModel):
    """What one execution of the test command produced."""

    __test__ = False

    outcomes: dict[str, TestOutcome] = Field(default_factory=dict)
    exit_code: int | None = None
    """None when the run was killed (timeout)."""
    infra_error: str | None = None
    """Set when the run could not tell anything about the code: command missing, crash,
    collection errors, nothing collected."""
    collection_errors: list[str] = Field(default_factory=list)
    oom: bool = False
    per_test: bool = True
    """False when only the exit code was available (custom command without JUnit XML)."""
    log_path: str | None = None
    duration_s: float = 0.0
    opened: dict[str, list[str]] = Field(default_factory=dict)
    """Files in the tree opened for reading → the files whose code opened them (explore's plugin, on
    request: the baseline)."""
    unconfirmed: dict[str, str] = Field(default_factory=dict)
    """Tests reported passing that explore's own record of the call contradicts: id → what it says (witness)."""

    def failing(self) -> list[str]:
        return sorted(
            i for i, o in self.outcomes.items() if o.outcome not in PASSING and o.outcome not in ("skipped", "xfailed")
        )

    def passing(self) -> set[str]:
        return {i for i, o in self.outcomes.items() if o.outcome in PASSING}


class Counts(BaseModel):
    passed: int = 0
    failed: int = 0
    total: int = 0
    pass_rate: float = 0.0


class CandidateStatus(str, Enum):
    ok = "ok"
    timeout = "timeout"
    oom = "oom"
    crashed = "crashed"
    rejected = "rejected"
    apply_failed = "apply_failed"


class ExecutorName(str, Enum):
    """Where test jobs run."""

    local = "local"
    ray = "ray"


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


class CandidatePlan(BaseModel):
    """What a generator intends for one candidate; realised later inside the candidate's worktree."""

    id: str = ""
    """Letter a, b, c… — assigned by the runner."""
    hypothesis: str = ""
    patch: str | None = None
    """A unified diff to apply (mutate); None when the generator edits the worktree itself."""
    confidence: float = 0.5
    operator: str | None = None
    """Which mutation operator or technique made it (for the JSON summary)."""
    location: str | None = None
    """file:line the candidate changes, when the generator knows it."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Generator-private details carried from propose to realise (JSON-serialisable)."""
    generator: str | None = None
    """The generator that proposed it (a member of an `--agent A,B,C` chain)."""


class PhaseTiming(BaseModel):
    """Seconds an iteration spent per phase (wall clock). `baseline` is the full-suite run before
    the first iteration (or a resumed run's re-test), booked on the iteration that follows it;
    `propose` is the generator's whole proposal, of which `coverage`, `prepare` and `screening` are
    mutate's per-test coverage run, mutant generation and preparation, and mutant screening; `fanout` is the candidates' worktrees, patches and
    first test runs; `validation` the full-suite runs of the best candidates and the winner's final confirmation; `merge` the commit."""

    baseline: float = 0.0
    propose: float = 0.0
    coverage: float = 0.0
    screening: float = 0.0
    prepare: float = 0.0
    fanout: float = 0.0
    validation: float = 0.0
    merge: float = 0.0
    confirmation: float = 0.0
    """Of `validation`: the final confirmation of the winner (0 when its scored run already was one)."""

    def total(self) -> float:
        return self.baseline + self.propose + self.fanout + self.validation + self.merge


class Proposal(BaseModel):
    plans: list[CandidatePlan] = Field(default_factory=list)
    reason: str | None = None
    """Why there are fewer plans than asked (or none): the generator's honest account."""
    usage: Usage = Field(default_factory=Usage)
    timing: PhaseTiming = Field(default_factory=PhaseTiming)
    """The generator's own phases (coverage, screening); the loop adds the rest."""
    unmoved: list[str] = Field(default_factory=list)
    """Failing tests the generator tried edits against without any making them pass."""
    fallbacks: list[str] = Field(default_factory=list)
    """An `--agent A,B,C` chain: why each generator before the one that proposed was passed over."""
    exhausted: bool = False
    """The generator searched all it can on this commit and found nothing (mutate: "search complete"
    with no plausible mutant): asked again with the same inputs, it would find nothing again."""


class Realised(BaseModel):
    """What a generator reports after editing a candidate's worktree."""

    confidence: float | None = None
    hypothesis: str | None = None
    usage: Usage = Field(default_factory=Usage)
    generator: str | None = None
    """Set by an `--agent A,B,C` chain when a later member realised the candidate."""
    fallbacks: list[str] = Field(default_factory=list)
    """Why the chain passed over the members before it, for this candidate."""


class CandidateResult(BaseModel):
    id: str
    status: CandidateStatus
    pass_rate: float = 0.0
    confidence: float = 0.0
    score: float = 0.0
    duration_s: float = 0.0
    files_changed: list[str] = Field(default_factory=list)
    reason: str | None = None
    hypothesis: str = ""
    operator: str | None = None
    location: str | None = None
    newly_failing: list[str] = Field(default_factory=list)
    rerun_passed: list[str] = Field(default_factory=list)
    """Tests passing before that failed in this candidate's run and passed when rerun alone: a
    flake, not a breakage (their rerun's outcome counts; the run records them as flaky)."""
    failed_tests: list[str] = Field(default_factory=list)
    agreement: int = 1
    diff_lines: int = 0
    patch_path: str | None = None
    binary_files: list[str] = Field(default_factory=list)
    """Files its change adds or edits that git sees as binary (named in the report)."""
    usage: Usage = Field(default_factory=Usage)
    validated: bool = True
    """False while its pass rate is an estimate from its affected tests (never merged so)."""
    progress: str | None = None
    """Human account of its test runs, e.g. "affected 12/12 → full 198/200"."""
    generator: str | None = None
    """The generator that produced it."""
    fallbacks: list[str] = Field(default_factory=list)
    """An `--agent A,B,C` chain: why the members before its generator were passed over for it."""
    executor: ExecutorName | None = None
    """Where its test jobs ran."""
    outside_writes: list[str] = Field(default_factory=list)
    """What it changed outside its worktree (the shared git dir, the user's files): put back, and the reason it is rejected."""


class IterationRecord(BaseModel):
    n: int
    strategy: str
    strategy_reason: str = ""
    pass_rate: float = 0.0
    failed_tests: list[str] = Field(default_factory=list)
    candidates: list[CandidateResult] = Field(default_factory=list)
    winner: str | None = None
    commit: str | None = None
    usage: Usage = Field(default_factory=Usage)
    """What the generator spent this iteration: its proposal and every candidate."""
    generator_note: str | None = None
    timing: PhaseTiming = Field(default_factory=PhaseTiming)
    fallbacks: list[str] = Field(default_factory=list)
    """Why the `--agent` chain moved past each generator it passed over this iteration."""
    search_complete: bool = False
    """The generator's proposal was `exhausted`: its whole search found nothing on this commit."""


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


EnvironmentKind = Literal["missing_metadata", "missing_module", "missing_env", "connection_refused", "dns"]


class EnvironmentFailure(BaseModel):
    """A failing test no code edit can fix (environment.py), and the line that shows why."""

    test: str
    kind: EnvironmentKind
    evidence: str
    """The line of the failure that shows why (the exception as pytest printed it)."""


class HungTest(BaseModel):
    """A test the per-test limit stopped at the baseline (outcome `timeout`), and where it was stuck."""

    test: str
    stuck_at: str
    """The innermost frame of the project's code in its stack: `path:line` and that line's source."""
    message: str
    """The limit it overran (lowered after an earlier hang, or not; a hard timeout says it ignored the signal)."""
    stack: str
    """The innermost part of its stack (pytest's traceback, or faulthandler's for a hard timeout)."""


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
    baseline_timeouts: list[HungTest] = Field(default_factory=list)
    """Tests the per-test limit stopped at the baseline, each with where it was stuck."""
    reproduction: Reproduction | None = None
    """`--issue`: the reproduction tests of iteration 0."""
    gave_up: GaveUp | None = None
    """Set when the search stopped with no repair in sight (the search budget, or nothing left to try)."""


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
