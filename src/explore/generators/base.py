"""The fix-generator seam: propose candidate plans once per iteration, then realise each plan
inside its own worktree under the candidate's deadline; every optional capability (usage totals,
the baseline's environment, the warm-up, the baseline's rerun, test writing, closing) declared on
`FixGenerator` with its default."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ..decide.strategy import Strategy
from ..edges.procs import ProcessTracker
from ..edges.sandbox import Confinement
from ..edges.testing import TestCommand
from ..model import agentnames
from ..model.candidates import CandidatePlan, IterationRecord, Proposal, Realised
from ..model.testresults import TestOutcome
from ..model.usage import Usage

SEPARATOR = agentnames.SLOTS
"""Between the slots in a fleet's resolved name (`claude-code,mutate + codex`): generators/fleet.py;
read such a name with model/agentnames."""


@dataclass
class ProposalRequest:
    """What a generator knows when it proposes the candidates of one iteration."""

    repo_root: Path
    """The user's repository: read it, never write it."""
    scratch: Path
    """A worktree at the current commit the generator may use freely (reset afterwards)."""
    current_commit: str
    base_commit: str
    n: int
    iteration: int
    strategy: Strategy
    failing: list[TestOutcome]
    passing: list[str]
    test_command: TestCommand
    run_dir: Path
    """`.explore/runs/<id>/iteration-<n>/`: where the generator may keep its files."""
    history: list[IterationRecord] = field(default_factory=list)
    tried_patches: list[str] = field(default_factory=list)
    """Normalised patches tried by earlier iterations: never propose one again."""
    test_patterns: list[str] = field(default_factory=list)
    """Globs of test files, which a generator must not edit unless allow_test_edits."""
    allow_test_edits: bool = False
    hint: str | None = None
    tracker: ProcessTracker | None = None
    regression: tuple[str, str] | None = None
    """(before, after) commits of the pass-rate drop that made this a regression, from the history."""
    time_limit: float | None = None
    """Seconds a whole-suite run of the generator's own may take (mutate's coverage run): from the
    baseline's time, within the suite's own limit."""
    deadline: float | None = None
    """`time.monotonic()` at which the run's search budget runs out: a generator that searches (mutate)
    stops there and proposes what it found; one that cannot stop early may ignore it."""
    durations: dict[str, float] = field(default_factory=dict)
    """Seconds each test took (setup, call and teardown) in the run that found the failures: what
    mutate sizes a mutant's timeout from instead of running the tests once more."""


@dataclass
class WarmUpRequest:
    """What a generator may start while the baseline runs, so that its first proposal finds it ready."""

    scratch: Path
    """The worktree the first iteration proposes in, at the base commit: the baseline runs in it
    meanwhile, so read it, never write it."""
    commit: str
    test_command: TestCommand
    run_dir: Path
    """`.explore/runs/<id>/warm-up/`: where the warm-up may keep its files (what it starts may go
    on writing there in later iterations). Not an iteration's folder: a green or escalated
    baseline leaves the run without iteration 1."""
    tracker: ProcessTracker | None = None


@dataclass
class RerunRequest:
    """The baseline's failing tests, to run once more on the unchanged tree, alone, in a fresh
    process (the flaky rerun: a test that passes then is flaky, not a target)."""

    failing: list[str]
    """pytest node ids, in the order they run."""
    commit: str
    """The baseline's commit: the tree they failed in, unchanged since."""
    test_timeout: float | None
    """The per-test limit: a test that hangs is stopped there (outcome `timeout`), and the tests
    after it still run."""
    memory_limit: int | None
    """Bytes the run's tests may use (None: no cap)."""
    log_path: Path
    """Where to write what ran and how each test ended, for a person to read."""


@dataclass
class CandidateContext:
    """One candidate's worktree and files, handed to `realise`."""

    workdir: Path
    candidate_id: str
    iteration: int
    strategy: Strategy
    files_dir: Path
    """Outside the worktree: prompt and result files live here."""
    request: ProposalRequest
    tracker: ProcessTracker | None = None
    confine: Confinement | None = None
    """How an agent process of this candidate runs (its sandbox, the marker of its daemons)."""
    git: Callable[..., bytes] | None = None
    """explore's own git in this worktree, through the git dir explore recorded (never the `.git`
    file, which an agent can rewrite): what undoes what an agent left."""
    base: str | None = None
    """The commit explore checked out in workdir (what a chain's member that gave up is reset to)."""


class FixGenerator(ABC):
    """What every generator is: `propose` and `realise`, and the capabilities a run may use, each
    declared here with what it means for a generator that lacks it, so no caller probes for one.
    A generator that writes tests from a bug report (`--issue`) also subclasses `TestWriter`."""

    name: str
    agent_in_realise: ClassVar[bool] = False
    """A coding agent, whose proposal reads nothing: an `--agent A,B` chain can hand it a candidate
    mid-iteration when the member before it is unavailable."""
    suite_bound: ClassVar[bool] = False
    """Its search's time grows with the suite's (mutate: every mutant runs tests): the run's search
    budget applies to it by default (decide/stop.py); to others only when the user sets one."""

    @abstractmethod
    async def propose(self, request: ProposalRequest) -> Proposal:
        """Up to request.n plans; fewer (or none) with `reason` when there are no better ideas."""

    @abstractmethod
    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        """Make the plan's change in context.workdir (and only there)."""

    @property
    def usage(self) -> Usage:
        """The run-wide totals the generator keeps itself, calls that ended in an exception included
        (the run keeps the larger of this and its own booking): none by default."""
        return Usage()

    def baseline_env(self, run_dir: Path, commit: str, test_patterns: list[str]) -> dict[str, str]:
        """What the baseline's pytest run carries for the generator (mutate: per-test coverage, so
        its first iteration needs no second run of the suite): nothing by default."""
        return {}

    async def warm_up(self, request: WarmUpRequest) -> None:
        """Start, while the baseline runs (on a core it leaves idle), what the first `propose`
        would start itself (mutate: its screening workers). The run cancels it when the
        baseline ends the run or fails, and `aclose` ends whatever it left running; it never
        raises (a warm-up that fails leaves `propose` to start afresh). Nothing by default."""
        return None

    async def rerun_failing(self, request: RerunRequest) -> dict[str, str] | None:
        """The baseline's flaky rerun, served by what `warm_up` started when it is ready for it
        (mutate: a fresh fork of a warm worker, pytest configured, runs the failing tests alone):
        each test's outcome as pytest's report names it (`passed`, `failed`, `skipped`,
        `xfailed`, `xpassed`, or `timeout`; a test with no outcome did not run). The run trusts
        only its failures (`failed`, `error`, `timeout`): every other test is rerun in a pytest
        process of its own, which alone can make it flaky. None: not ready, or not for this
        commit: the run starts a pytest process for them all, as it does for a generator without
        one. Never raises. None by default."""
        return None

    def header(self) -> str | None:
        """A line for the run's header (a fleet: how its candidates are dealt, and why): none by default."""
        return None

    def test_writer(self) -> TestWriter | None:
        """What writes the tests of `--issue`: the generator itself when it is a `TestWriter`
        (a chain: its first member that is), else None."""
        return self if isinstance(self, TestWriter) else None

    async def aclose(self) -> None:
        """Release what the generator keeps warm between iterations (mutate's workers); the run
        calls it once, at its end, shielded from cancellation."""
        return None  # nothing kept warm by default


@dataclass
class TestWriteRequest:
    """One test-writer sample of `explore run --issue`: write tests reproducing the report in workdir."""

    __test__ = False  # not a pytest test class

    issue: str
    workdir: Path
    sample: str
    index: int
    of: int
    files_dir: Path
    """Outside the worktree: prompt, result and transcript files live here."""
    test_patterns: list[str]
    test_command: TestCommand
    tracker: ProcessTracker | None = None
    confine: Confinement | None = None


@dataclass
class WrittenTests:
    """What a test writer says about the tests it wrote (the files themselves are in the worktree)."""

    __test__ = False

    predicted: dict[str, str] = field(default_factory=dict)
    """Test file → the failure message it predicts on today's code ("*": every file it wrote)."""
    summary: str = ""
    refused: list[str] = field(default_factory=list)
    """Writes refused (paths outside the test patterns), with why."""
    usage: Usage = field(default_factory=Usage)


class TestWriter(ABC):
    """A generator that can also write tests from a bug report (the test-writer role of `--issue`):
    declared by subclassing this beside `FixGenerator`."""

    __test__ = False
    name: str

    @abstractmethod
    async def write_tests(self, request: TestWriteRequest) -> WrittenTests:
        """Write test files in request.workdir that fail today as the report describes."""
