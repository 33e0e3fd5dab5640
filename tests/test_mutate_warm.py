"""The warm screening workers outlive an iteration: the next one reuses them when the files that
changed are not ones they imported, and restarts them when one is (a conftest imported it).
Real git repositories, real worktrees, real fork workers."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from conftest import assert_no_debris, git, make_repo, run_locked
from explore import generators
from explore.edges import procs
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand, run_tests
from explore.generators.base import CandidateContext, FixGenerator, ProposalRequest, WarmUpRequest
from explore.generators.chain import ChainGenerator
from explore.generators.mutate import MutateGenerator
from explore.generators.mutate.screen import ForkWorker
from explore.model.candidates import CandidatePlan, Proposal, Realised
from explore.model.config import build_options
from explore.model.runstate import RunState
from explore.run import state
from test_safety_signals import Ready

LIB = "def area(w, h):\n    return w + h\n"
HELPER = "LIMIT = 10\n"
TESTS = "from lib import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n\n\ndef test_square():\n    assert area(2, 2) == 4\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def request_at(root: Path, work: Path, run_dir: Path, tracker: procs.ProcessTracker) -> ProposalRequest:
    commit = git(work, "rev-parse", "HEAD")
    run = await run_tests(TestCommand(python=sys.executable), work, run_dir / "tests.log")
    failing = [o for o in run.outcomes.values() if o.outcome not in ("passed", "skipped")]
    return ProposalRequest(
        repo_root=root,
        scratch=work,
        current_commit=commit,
        base_commit=commit,
        n=1,
        iteration=1,
        strategy=load_strategies()["conservative"],
        failing=failing,
        passing=sorted(run.passing()),
        test_command=TestCommand(python=sys.executable),
        run_dir=run_dir,
        tracker=tracker,
    )


@pytest.mark.anyio
async def test_workers_are_reused_unless_they_imported_a_changed_file(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {
            "lib.py": LIB,
            "helper.py": HELPER,
            "tests/test_lib.py": TESTS,
            "conftest.py": "import helper  # the worker's pytest start-up imports it\n",
        },
    )
    work = tmp_path / "work"
    git(root, "worktree", "add", "-q", "--detach", str(work), "HEAD")
    tracker = procs.ProcessTracker()
    generator = MutateGenerator({"parallel": 1})
    try:
        first = await generator.propose(await request_at(root, work, tmp_path / "it1", tracker))
        assert first.plans and "w * h" in (first.plans[0].patch or "")
        rows = json.loads((tmp_path / "it1" / "mutate" / "search.json").read_text())["screened"]
        fix = next(r for r in rows if "`w * h`" in r["mutant"])
        assert fix["swapped"] and fix["fixed"] == 1  # into the worker's imported lib.area: no import, no collection
        assert generator._screener is not None
        pids = generator._screener.pids()
        assert pids and all(p in tracker.pids for p in pids)

        # a commit that changes a test file only: the same workers screen the next iteration
        (work / "tests" / "test_lib.py").write_text(TESTS + "\n\ndef test_zero():\n    assert area(0, 5) == 0\n")
        git(work, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qam", "more tests")
        second = await generator.propose(await request_at(root, work, tmp_path / "it2", tracker))
        assert second.plans and generator._screener.pids() == pids

        # a commit that changes a module the worker imported (through conftest): fresh workers
        (work / "helper.py").write_text("LIMIT = 20\n")
        git(work, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qam", "helper")
        third = await generator.propose(await request_at(root, work, tmp_path / "it3", tracker))
        assert third.plans and generator._screener.pids() and not set(generator._screener.pids()) & set(pids)
    finally:
        await generator.aclose()
        assert generator._screener is None
        tracker.kill_all()
        git(root, "worktree", "remove", "--force", str(work))


@pytest.mark.anyio
async def test_without_a_run_tracker_the_workers_end_with_the_proposal(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    work = tmp_path / "work"
    git(root, "worktree", "add", "-q", "--detach", str(work), "HEAD")
    try:
        request = await request_at(root, work, tmp_path / "it1", procs.ProcessTracker())
        request.tracker = None
        generator = MutateGenerator({"parallel": 1})
        assert (await generator.propose(request)).plans
        assert generator._screener is None
    finally:
        git(root, "worktree", "remove", "--force", str(work))


@pytest.mark.anyio
async def test_workers_warmed_while_the_baseline_runs_screen_the_first_proposal(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    work = tmp_path / "work"
    git(root, "worktree", "add", "-q", "--detach", str(work), "HEAD")
    tracker = procs.ProcessTracker()
    generator = MutateGenerator({"parallel": 2})
    warmed: list[int] = []
    try:
        commit = git(work, "rev-parse", "HEAD")
        await generator.warm_up(
            WarmUpRequest(work, commit, TestCommand(python=sys.executable), tmp_path / "it1", tracker)
        )
        assert generator._screener is not None
        warmed = generator._screener.pids()
        assert len(warmed) == 2 and all(psutil.pid_exists(p) and p in tracker.pids for p in warmed)
        proposal = await generator.propose(await request_at(root, work, tmp_path / "it1", tracker))
        assert proposal.plans and "w * h" in (proposal.plans[0].patch or "")
        # the same workers, none started by propose (one busy with a mutant when a fix ended the
        # search is killed, and started again only by the next job: there may be one fewer)
        assert generator._screener.pids() and set(generator._screener.pids()) <= set(warmed)
    finally:
        await generator.aclose()
        tracker.kill_all()
        git(root, "worktree", "remove", "--force", str(work))
    assert warmed and not any(psutil.pid_exists(p) for p in warmed)


PACKAGED = {"geo/__init__.py": "", "geo/lib.py": LIB, "tests/test_lib.py": TESTS.replace("from lib", "from geo.lib")}


class Warming(MutateGenerator):
    """mutate, noting what its warm-up was given and started, and whether propose screened on it."""

    hold = False
    """Keep the warm-up going after the workers are up, until cancelled."""

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.warmed: list[int] = []
        self.scratch: Path | None = None
        self.cancelled = False
        self.proposed_on: list[int] | None = None

    async def warm_up(self, request: WarmUpRequest) -> None:
        self.scratch = request.scratch
        try:
            await super().warm_up(request)
            self.warmed = self._screener.pids() if self._screener else []
            if self.hold:
                await anyio.Event().wait()
        except anyio.get_cancelled_exc_class():  # held, or still starting its workers
            self.cancelled = True
            raise

    async def propose(self, request: ProposalRequest) -> Proposal:
        assert request.scratch == self.scratch  # the worktree the baseline ran in
        proposal = await super().propose(request)
        self.proposed_on = self._screener.pids() if self._screener else []
        return proposal


async def repair(repo: Path, generator: Warming, monkeypatch: pytest.MonkeyPatch) -> RunState:
    monkeypatch.setattr(generators, "create", lambda name, options: generator)
    return await run_locked(repo, build_options(repo, {"agent": "mutate", "parallel": 2, "flaky_reruns": 0}))


@pytest.mark.anyio
async def test_the_run_warms_the_workers_during_its_baseline_and_the_first_proposal_uses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", PACKAGED)
    generator = Warming({"parallel": 2})
    run = await repair(repo, generator, monkeypatch)
    assert run.status == "succeeded"
    assert len(generator.warmed) == 2 and generator.proposed_on  # none started by propose (maybe one killed)
    assert set(generator.proposed_on) <= set(generator.warmed)
    assert not any(psutil.pid_exists(p) for p in generator.warmed)  # ended with the run
    folder = state.run_dir(repo, run.run_id)
    assert (folder / "warm-up" / "mutate" / "worker.log").is_file()  # the workers' log, where they started
    assert (folder / "iteration-1" / "mutate" / "search.json").is_file()  # the proposal's own account
    assert_no_debris(repo)


@pytest.mark.anyio
async def test_a_green_baseline_cancels_the_warm_up_and_leaves_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"lib.py": LIB.replace("w + h", "w * h"), "tests/test_lib.py": TESTS})
    spawned: list[int] = []  # every worker started, those cancelled half-way too
    start = ForkWorker.start

    async def noting(self: ForkWorker) -> None:
        try:
            await start(self)
        finally:
            if self.process is not None:
                spawned.append(self.process.pid)

    monkeypatch.setattr(ForkWorker, "start", noting)
    generator = Warming({"parallel": 2})
    generator.hold = True  # without the cancellation, the run would wait for it forever
    with anyio.fail_after(120):
        run = await repair(repo, generator, monkeypatch)
    assert run.status == "succeeded" and not run.iterations
    assert generator.cancelled and generator.proposed_on is None
    assert spawned and not any(psutil.pid_exists(p) for p in spawned)
    folder = state.run_dir(repo, run.run_id)
    assert (folder / "warm-up" / "mutate").is_dir()
    assert not (folder / "iteration-1").exists()  # the run had no iteration: status and the gate read these names
    assert_no_debris(repo)


HALTING = (
    "import os\n\n"
    "if 'EXPLORE_MUTATE_PRELOAD' in os.environ:  # a screening worker's pytest start-up: it never says hello\n"
    "    fd = os.open({ready!r}, os.O_WRONLY)\n"
    "    os.write(fd, f'worker-{{os.getpid()}} {{os.getpid()}}\\n'.encode())\n"
    "    open({gate!r}).read()\n"
)


@pytest.mark.anyio
async def test_a_warm_up_cancelled_before_the_workers_hello_kills_them_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The baseline ended the run while the workers were still configuring pytest: they have
    nothing to finish, so they are killed, not given their graceful end (up to two seconds each,
    one after the other, while the run waits)."""
    ready = Ready(tmp_path)
    conftest = HALTING.format(ready=str(ready.path), gate=str(ready.gate))
    root = make_repo(tmp_path / "repo", {"lib.py": LIB, "tests/test_lib.py": TESTS, "conftest.py": conftest})
    work = tmp_path / "work"
    git(root, "worktree", "add", "-q", "--detach", str(work), "HEAD")
    ended: list[tuple[int, bool]] = []
    close = ForkWorker.aclose

    async def noting(self: ForkWorker, at_once: bool = False) -> None:
        if self.process is not None:
            ended.append((self.process.pid, at_once))
        await close(self, at_once)

    monkeypatch.setattr(ForkWorker, "aclose", noting)
    tracker = procs.ProcessTracker()
    generator = MutateGenerator({"parallel": 2, "mutate": {"lanes": 2}})
    started: dict[str, int] = {}
    try:
        warm = WarmUpRequest(
            work, git(work, "rev-parse", "HEAD"), TestCommand(python=sys.executable), tmp_path, tracker
        )
        with anyio.fail_after(120), caplog.at_level(logging.WARNING, logger="asyncio"):
            async with anyio.create_task_group() as group:
                group.start_soon(generator.warm_up, warm)
                started = await anyio.to_thread.run_sync(ready.wait, 2)  # both inside their conftest
                group.cancel_scope.cancel()
        pids = sorted(started.values())
        assert len(pids) == 2 and generator._screener is None
        assert sorted(ended) == [(pid, True) for pid in pids]  # killed, never ended on end of input
        assert not any(psutil.pid_exists(p) for p in pids) and not tracker.pids
        assert "Unknown child" not in caplog.text  # reaped by their owner, not behind asyncio's back
    finally:
        ready.close()
        await generator.aclose()
        tracker.kill_all()
        git(root, "worktree", "remove", "--force", str(work))


class Second(FixGenerator):
    """A chain's second member, noting whether the chain warmed or closed it."""

    name = "second"

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def propose(self, request: ProposalRequest) -> Proposal:
        return Proposal()

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        return Realised()

    async def warm_up(self, request: WarmUpRequest) -> None:
        self.calls.append("warm_up")

    async def aclose(self) -> None:
        self.calls.append("aclose")


@pytest.mark.anyio
async def test_a_chain_warms_its_head_and_closes_every_member(tmp_path: Path) -> None:
    """`--agent mutate,…`: the chain passes the warm-up to the member the first iteration asks
    first, and its end to every member (mutate's workers ended by it, not only by the run's kill)."""
    root = make_repo(tmp_path / "repo", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    work = tmp_path / "work"
    git(root, "worktree", "add", "-q", "--detach", str(work), "HEAD")
    tracker = procs.ProcessTracker()
    mutate, second = MutateGenerator({"parallel": 1}), Second()
    chain = ChainGenerator([mutate, second])
    warmed: list[int] = []
    try:
        commit = git(work, "rev-parse", "HEAD")
        await chain.warm_up(WarmUpRequest(work, commit, TestCommand(python=sys.executable), tmp_path, tracker))
        assert mutate._screener is not None and second.calls == []
        warmed = mutate._screener.pids()
        assert warmed and all(psutil.pid_exists(p) for p in warmed)
        await chain.aclose()
        assert mutate._screener is None and second.calls == ["aclose"]
        assert not any(psutil.pid_exists(p) for p in warmed) and not tracker.pids
    finally:
        await mutate.aclose()
        tracker.kill_all()
        git(root, "worktree", "remove", "--force", str(work))


@pytest.mark.anyio
async def test_a_worker_busy_past_its_graceful_end_is_killed_and_reaped_by_asyncio(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40.6: a worker busy with a mutant that hangs does not end on end of its input; it is
    killed after its two seconds, and asyncio alone reaps it. Fails without: kill_tree waited for
    the worker itself (psutil.wait_procs), racing asyncio's child watcher, which then logged
    "WARNING asyncio: Unknown child process pid …" in the middle of screening when it lost."""
    waited: list[int] = []
    wait_procs = procs.psutil.wait_procs

    def noting(members: list[psutil.Process], timeout: float | None = None) -> Any:
        waited.extend(m.pid for m in members)
        return wait_procs(members, timeout=timeout)

    monkeypatch.setattr(procs.psutil, "wait_procs", noting)
    hangs = "import time\n\n\ndef test_hang():\n    time.sleep(60)\n"
    work = make_repo(tmp_path / "repo", {"lib.py": LIB, "tests/test_lib.py": hangs})
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    tracker = procs.ProcessTracker()
    worker = ForkWorker(sys.executable, work, run_dir, [], tracker)
    with anyio.fail_after(60), caplog.at_level(logging.WARNING, logger="asyncio"):
        await worker.start()
        assert worker.process is not None and worker.process.stdin is not None
        pid = worker.process.pid
        job = {"files": {}, "phase1": ["tests/test_lib.py::test_hang"], "phase2": [], "stop": True, "timeout": 30}
        await worker.process.stdin.send((json.dumps({**job, "giveup": 3, "memory_mb": 1024}) + "\n").encode())
        await worker.aclose()  # it reads the request before the end of input: it forks, and waits 30 s
    assert worker.process is None and not psutil.pid_exists(pid) and not tracker.pids
    assert pid not in waited and "Unknown child" not in caplog.text
