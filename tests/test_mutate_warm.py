"""The warm screening workers outlive an iteration: the next one reuses them when the files that
changed are not ones they imported, and restarts them when one is (a conftest imported it).
Real git repositories, real worktrees, real fork workers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import git, make_repo
from explore.edges import procs
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand, run_tests
from explore.generators.base import ProposalRequest
from explore.generators.mutate import MutateGenerator

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
