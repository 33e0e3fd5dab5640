"""Candidates and iterations: what a generator proposes (plans, proposal, what it realised), what
became of each candidate (its result, its status, where its tests ran), and each iteration's record
and phase timings."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from .usage import Usage


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
    `propose` is the generator's whole proposal (the first one's with the wait for the generator's
    warm-up after the baseline), of which `coverage`, `prepare` and `screening` are
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
    start: float = 0.0
    """Of a new run's first iteration: explore's own start before the baseline (its kit: the
    generator, the sandbox's probe, the worktree pool)."""
    end: float = 0.0
    """Of the last iteration: the run's end after it (its processes stopped, worktrees removed, the
    result applied)."""

    def total(self) -> float:
        return self.start + self.baseline + self.propose + self.fanout + self.validation + self.merge + self.end


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
    """Tests passing before that failed in this candidate's run and passed when rerun alone and again
    after the tests that ran before them: a flake, not a breakage (their rerun's outcome counts; the
    run records them as flaky)."""
    order_dependent: list[str] = Field(default_factory=list)
    """Tests passing before that failed in this candidate's run, passed alone and failed again
    after the tests that ran before them: a breakage that shows in order (never excused)."""
    machine_skips: list[str] = Field(default_factory=list)
    """Tests that ran at the baseline, skipped in this candidate's run and skip on the baseline's
    tree too when rerun beside it: the machine's condition, held to nothing either way."""
    failed_tests: list[str] = Field(default_factory=list)
    agreement: int = 1
    diff_lines: int = 0
    patch_path: str | None = None
    binary_files: list[str] = Field(default_factory=list)
    """Files its change adds or edits that git sees as binary (named in the report)."""
    usage: Usage = Field(default_factory=Usage)
    validated: bool = True
    """False while its pass rate is an estimate from its affected tests (never merged so)."""
    tested: bool = True
    """False when none of its tests ran (a validated candidate outranks it even if it passed every
    test, or it is the twin of such a one): its pass_rate is then no measurement."""
    progress: str | None = None
    """Human account of its test runs, e.g. "affected 12/12 → full 198/200"."""
    generator: str | None = None
    """The generator that produced it."""
    fallbacks: list[str] = Field(default_factory=list)
    """An `--agent A,B,C` chain: why the members before its generator were passed over for it."""
    executor: ExecutorName | None = None
    """Where its test jobs ran."""
    outside_writes: list[str] = Field(default_factory=list)
    removals: list[str] = Field(default_factory=list)
    """Directory removals its patch adds, judged not destructive, each with the rule that decided (decide/removal)."""
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
