"""The fan-out driven in this process: `fanout.scheduler.fan_out` over candidates that
`fanout.candidate` runs each in its own real git worktree, their tests real pytest processes of
the local executor, their changes made by a small generator that implements the generator protocol
with fixed changes (no mock: it is a generator, one that always proposes the same things)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import anyio
import psutil
import pytest

from conftest import git, make_repo
from explore.decide import aims, scoring
from explore.edges import gitrepo, procs
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import make_command
from explore.edges.worktrees import WorktreePool
from explore.executors.local import LocalExecutor
from explore.fanout.pending import Judged, Pending
from explore.fanout.scheduler import FanOutConfig, FanOutResult, fan_out
from explore.generators.base import CandidateContext, FixGenerator, ProposalRequest
from explore.model.candidates import CandidatePlan, CandidateStatus, Proposal, Realised
from explore.model.events import CandidateEvent, Phase

pytestmark = pytest.mark.anyio

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n\n\n"
        "def test_negative():\n    assert add(-1, 1) == 0\n"
    ),
}
IDS = frozenset(f"tests/test_calc.py::{name}" for name in ("test_add", "test_zero", "test_negative"))
FAILING = frozenset({"tests/test_calc.py::test_add", "tests/test_calc.py::test_negative"})

FIX = {"calc.py": "def add(a, b):\n    return a + b\n"}
WRONG = {"calc.py": "def add(a, b):\n    return a * b\n"}
"""Still fails test_add (2 * 3) and test_negative (-1 * 1): no better than the baseline."""
TAMPER = {"tests/test_calc.py": "def test_add():\n    assert True\n"}
"""Every test it leaves passes, by rewriting the tests: never to be merged."""


def hang(pid_file: Path) -> dict[str, str]:
    """add() records the pid of the pytest process calling it, then blocks for good."""
    return {
        "calc.py": (
            "import os\nimport threading\n\n\n"
            "def add(a, b):\n"
            f"    with open({str(pid_file)!r}, 'w') as out:\n"
            "        out.write(str(os.getpid()))\n"
            "    threading.Event().wait()\n"
        )
    }


class FixedChanges(FixGenerator):
    """A fix generator that proposes one candidate per entry of `changes` (file → new text) and
    realises it by writing those files; an entry that is an exception is raised by `realise`."""

    name = "fixed"

    def __init__(self, changes: list[dict[str, str] | Exception]) -> None:
        self.changes = changes

    async def propose(self, request: ProposalRequest) -> Proposal:
        plans = [CandidatePlan(hypothesis=f"change {i}", data={"index": i}) for i in range(len(self.changes))]
        return Proposal(plans=plans[: request.n])

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        change = self.changes[plan.data["index"]]
        if isinstance(change, Exception):
            raise change
        for name, text in change.items():
            path = context.workdir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return Realised(hypothesis=f"wrote {', '.join(sorted(change))}")


@dataclass
class Iteration:
    """One fan-out's inputs on a repository, as the loop builds them, and what it emitted."""

    repo: Path
    pool: WorktreePool
    tracker: procs.ProcessTracker
    config: FanOutConfig
    events: list[CandidateEvent]


def iteration(tmp_path: Path, generator: FixedChanges, branch_timeout: float = 60.0) -> Iteration:
    repo = make_repo(tmp_path / "repo", CALC)
    info = gitrepo.open_repo(repo)
    pool = WorktreePool(info.repo, repo, tmp_path / "worktrees" / "run")
    tracker = procs.ProcessTracker()
    command = make_command(None, None, sys.executable, test_timeout=600, root=repo)
    events: list[CandidateEvent] = []
    request = ProposalRequest(
        repo_root=repo,
        scratch=repo,
        current_commit=info.head,
        base_commit=info.head,
        n=len(generator.changes),
        iteration=1,
        strategy=load_strategies()["conservative"],
        failing=[],
        passing=sorted(IDS - FAILING),
        test_command=command,
        run_dir=tmp_path / "run" / "iteration-1",
        tracker=tracker,
    )
    config = FanOutConfig(
        generator=generator,
        request=request,
        pool=pool,
        executor=LocalExecutor(pool=pool, tracker=tracker, parallel=len(generator.changes)),
        commit=info.head,
        iteration_dir=request.run_dir,
        test_command=command,
        yardstick=scoring.Yardstick(IDS, frozenset()),
        current_passing=IDS - FAILING,
        current_rate=100 / 3,
        test_patterns=["tests/**", "**/test_*.py", "**/conftest.py"],
        allow_test_edits=False,
        branch_timeout=branch_timeout,
        worktree_setup=None,
        tracker=tracker,
        listener=events.append,
        progressive=False,
    )
    return Iteration(repo, pool, tracker, config, events)


async def fan(it: Iteration) -> FanOutResult:
    proposal = await it.config.generator.propose(it.config.request)
    for letter, plan in zip("abcdefgh", proposal.plans):  # the loop names them so
        plan.id = letter
    try:
        return await fan_out(proposal.plans, it.config, len(proposal.plans))
    finally:
        await anyio.to_thread.run_sync(it.pool.remove_all)  # the loop's cleanup


def assert_cleaned_up(it: Iteration) -> None:
    """No worktree, no branch and no process of the fan-out left behind."""
    assert git(it.repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (it.repo / ".git" / "worktrees").exists() or not any((it.repo / ".git" / "worktrees").iterdir())
    assert git(it.repo, "branch", "--format=%(refname:short)").splitlines() == ["main"]
    assert not it.pool.root.exists()
    assert not it.tracker.pids
    assert git(it.repo, "status", "--porcelain") == ""


async def test_the_winner_among_a_failing_and_a_tampering_candidate_is_ranked_first(tmp_path: Path) -> None:
    it = iteration(tmp_path, FixedChanges([WRONG, TAMPER, FIX, RuntimeError("the generator broke")]))
    outcome = await fan(it)

    by_id = {c.id: c for c in outcome.candidates}
    assert [c.id for c in outcome.candidates] == ["a", "b", "c", "d"]
    assert outcome.ranking == ["c", "a"]
    best = outcome.best()
    assert best is not None and best.id == "c"
    assert best.status == CandidateStatus.ok and best.validated and best.pass_rate == 100.0
    assert best.files_changed == ["calc.py"] and not best.newly_failing
    assert outcome.runs["c"].outcomes.keys() == IDS
    # what reaches the merge: the tree the winner's tests ran on
    assert git(it.repo, "show", f"{outcome.tested['c'].tree}:calc.py") == FIX["calc.py"].strip()

    wrong = by_id["a"]
    assert wrong.status == CandidateStatus.ok and wrong.pass_rate == pytest.approx(100 / 3, abs=1e-3)
    assert sorted(wrong.failed_tests) == sorted(FAILING)
    assert not scoring.is_improvement(wrong.pass_rate, it.config.current_rate)

    tamper = by_id["b"]
    assert tamper.status == CandidateStatus.rejected and tamper.score == 0.0
    assert tamper.reason == "edits test files: tests/test_calc.py"
    assert "b" not in outcome.runs  # rejected before any of its tests ran

    crashed = by_id["d"]
    assert crashed.status == CandidateStatus.crashed and crashed.reason == "RuntimeError: the generator broke"
    assert outcome.findings.escalation(4) is None

    for cid in "abcd":  # each candidate's life, as the live view and the checkpoints see it
        phases = [e.phase for e in it.events if e.candidate == cid]
        assert phases[0] == Phase.starting and phases[-1] == Phase.finished, (cid, phases)
        assert [e.result for e in it.events if e.candidate == cid and e.phase == Phase.finished][-1] == by_id[cid]
    assert_cleaned_up(it)


async def test_a_candidate_past_its_deadline_is_killed_and_ranked_out(tmp_path: Path) -> None:
    pid_file = tmp_path / "hanging.pid"
    # 15 s: the honest candidate's own pytest must end within the same limit on a CI machine at load 15
    # (at 5 s it timed out too there: ranking [])
    it = iteration(tmp_path, FixedChanges([hang(pid_file), FIX]), branch_timeout=15.0)
    outcome = await fan(it)

    hung, fixed = outcome.candidates
    assert hung.status == CandidateStatus.timeout and hung.score == 0.0
    assert hung.reason is not None and hung.reason.startswith(
        "exceeded --branch-timeout 15s; its process tree was killed"
    )
    assert 15.0 <= hung.duration_s < 45.0
    assert outcome.ranking == ["b"] and fixed.status == CandidateStatus.ok and fixed.pass_rate == 100.0
    # the pytest process that ran the hanging code was reached, and is gone
    pid = int(pid_file.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not any(str(it.pool.root) in " ".join(_cmdline(p)) for p in psutil.process_iter())
    assert_cleaned_up(it)


def _cmdline(proc: psutil.Process) -> list[str]:
    """The process's command line and working folder (nothing when it is gone or not ours to read)."""
    try:
        return [*proc.cmdline(), proc.cwd()]
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return []


class Aimed(FixedChanges):
    """FixedChanges whose plans each name the failing tests they fix (as mutate's screening does)."""

    def __init__(self, changes: list[dict[str, str] | Exception], aims: list[list[str]]) -> None:
        super().__init__(changes)
        self.aims = aims

    async def propose(self, request: ProposalRequest) -> Proposal:
        proposal = await super().propose(request)
        for plan, fixed in zip(proposal.plans, self.aims):
            plan.data["fixed"] = fixed
        return proposal


async def _fan_beside_rerun(it: Iteration, flake: str, parallel: int, ends_when: Callable[[], bool]) -> FanOutResult:
    """The fan-out of it's plans (ids a, b, …) with the baseline's flaky rerun still going; the rerun
    ends, finding flake flaky, once ends_when() holds (polled: a state of the candidates' own run)."""
    pending = Pending()
    config = replace(it.config, pending=pending)
    proposal = await config.generator.propose(config.request)
    for letter, plan in zip("abcdef", proposal.plans):
        plan.id = letter
    found: list[FanOutResult] = []

    async def rerun_ends() -> None:
        with anyio.fail_after(60):
            while not ends_when():
                await anyio.sleep(0.05)
        judged = Judged(scoring.Yardstick(IDS - {flake}, frozenset({flake})), IDS - FAILING, 50.0, frozenset())
        pending.end(judged, aims.withdrawn(proposal.plans, sorted(FAILING), frozenset({flake})))

    async def fans() -> None:
        found.append(await fan_out(proposal.plans, config, parallel))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(rerun_ends)
            group.start_soon(fans)
    finally:
        await anyio.to_thread.run_sync(it.pool.remove_all)
    [outcome] = found
    return outcome


async def test_the_baseline_rerun_ending_withdraws_a_running_candidate_aimed_only_at_a_flake(tmp_path: Path) -> None:
    """Issue 40.4: the baseline's flaky rerun goes on beside the fan-out (fanout/pending). a, aimed only
    at test_negative, is running its tests (they hang: its pid file) when the rerun ends finding
    test_negative flaky: a is withdrawn, its test process killed; b, aimed at test_add too, is kept and
    scored as the rerun left the yardstick (test_negative counted neither way: 2/2, above 1/2)."""
    pid_file, flake = tmp_path / "hanging.pid", "tests/test_calc.py::test_negative"
    it = iteration(tmp_path, Aimed([hang(pid_file), FIX], [[flake], sorted(FAILING)]))
    outcome = await _fan_beside_rerun(it, flake, 2, pid_file.exists)  # once a's tests are running
    a, b = outcome.candidates
    assert a.status == CandidateStatus.rejected and not a.tested and not a.validated and a.score == 0.0
    assert a.reason is not None and a.reason.startswith(f"withdrawn: aimed only at {flake}, found flaky")
    assert [e.phase for e in it.events if e.candidate == "a"][-2:] == [Phase.full, Phase.finished]  # stopped running
    pid = int(pid_file.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert outcome.ranking == ["b"] and b.status == CandidateStatus.ok and b.validated and b.pass_rate == 100.0
    assert sorted(b.failed_tests) == [] and "a" not in outcome.runs
    assert_cleaned_up(it)


async def test_a_twin_of_a_candidate_withdrawn_for_its_aims_is_tested_as_itself(tmp_path: Path) -> None:
    """a and b make the same patch; a is aimed only at test_negative, b at both failures. One at a
    time (parallel 1): a runs first, the rerun ends finding test_negative flaky while a's tests run,
    a is withdrawn; b, a's twin, must not end as "a did not finish": its aims are not a's, so the
    patch is tested as b's own (before: crashed, 'same patch as candidate a, which did not finish')."""
    flake = "tests/test_calc.py::test_negative"
    it = iteration(tmp_path, Aimed([FIX, FIX], [[flake], sorted(FAILING)]))
    outcome = await _fan_beside_rerun(  # once a's tests have begun
        it, flake, 1, lambda: any(e.candidate == "a" and e.phase == Phase.full for e in it.events)
    )
    a, b = outcome.candidates
    assert a.status == CandidateStatus.rejected and a.reason is not None and a.reason.startswith("withdrawn")
    assert b.status == CandidateStatus.ok and b.tested and b.validated and b.pass_rate == 100.0, (b.status, b.reason)
    assert outcome.ranking == ["b"] and "b" in outcome.runs
    assert_cleaned_up(it)
