"""MutateGenerator end to end on real tiny git repositories: real coverage run, real fork
worker, real worktrees (created under tmp_path and removed)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import git, make_repo
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand, run_tests
from explore.generators.base import CandidateContext, ProposalRequest
from explore.generators.mutate import ApplyFailed, MutateGenerator
from explore.model.candidates import CandidatePlan
from explore.model.testresults import TestOutcome

BUGGY = {
    "shop.py": """\
        def total(prices, discount):
            subtotal = sum(prices)
            if subtotal > 100:
                subtotal = subtotal - discount
            return subtotal


        def count_until(limit):
            n = 0
            while n < limit:
                n += 1
            return n
        """,
    "tests/test_shop.py": """\
        from shop import count_until, total


        def test_small_order_no_discount():
            assert total([10, 20], 5) == 30


        def test_discount_at_threshold():
            assert total([60, 40], 5) == 95


        def test_big_order():
            assert total([100, 50], 10) == 140


        def test_count():
            assert count_until(3) == 3
        """,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    repo = make_repo(tmp_path / "repo", BUGGY)
    work = tmp_path / "scratch"
    git(repo, "worktree", "add", "--detach", str(work))
    yield repo, work
    git(repo, "worktree", "remove", "--force", str(work))


async def request_for(
    repo: Path, work: Path, tmp_path: Path, strategy: str = "conservative", **kw: object
) -> ProposalRequest:
    command = TestCommand(python=sys.executable)
    run = await run_tests(command, work, tmp_path / "logs" / "base.log")
    head = git(repo, "rev-parse", "HEAD")
    return ProposalRequest(
        repo_root=repo,
        scratch=work,
        current_commit=head,
        base_commit=head,
        n=kw.pop("n", 3),
        iteration=1,  # type: ignore[arg-type]
        strategy=load_strategies()[strategy],
        failing=[o for o in run.outcomes.values() if o.outcome == "failed"],
        passing=sorted(run.passing()),
        test_command=command,
        run_dir=tmp_path / "run",
        **kw,  # type: ignore[arg-type]
    )


@pytest.mark.anyio
async def test_propose_finds_the_fix_and_realise_applies_it(scratch: tuple[Path, Path], tmp_path: Path) -> None:
    repo, work = scratch
    request = await request_for(repo, work, tmp_path)
    assert [t.id for t in request.failing] == ["tests/test_shop.py::test_discount_at_threshold"]
    generator = MutateGenerator({"parallel": 2, "mutate": {"budget_seconds": 120}})
    proposal = await generator.propose(request)
    assert proposal.plans, proposal.reason
    best = proposal.plans[0]
    assert best.hypothesis == "comparison at shop.py:3: `subtotal > 100` → `subtotal >= 100`"
    assert best.operator == "comparison" and best.location == "shop.py:3" and best.confidence == 1.0
    assert "-    if subtotal > 100:\n+    if subtotal >= 100:\n" in best.patch
    assert proposal.usage.mutate.mutants_screened >= 1 and proposal.usage.mutate.mutants_per_s > 0
    assert git(work, "status", "--porcelain") == ""  # screening never touched the worktree's files

    again = await MutateGenerator({"parallel": 1}).propose(await request_for(repo, work, tmp_path))
    assert [p.patch for p in again.plans] == [p.patch for p in proposal.plans]  # deterministic

    candidate = tmp_path / "candidate"
    git(repo, "worktree", "add", "--detach", str(candidate))
    try:
        context = CandidateContext(candidate, "a", 1, request.strategy, tmp_path / "files", request)
        (tmp_path / "files").mkdir()
        realised = await generator.realise(best, context)
        assert realised.confidence == 1.0 and realised.hypothesis == best.hypothesis
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=candidate,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout
        with pytest.raises(ApplyFailed, match="git apply failed"):
            await generator.realise(best, context)  # already applied: does not apply again
    finally:
        git(repo, "worktree", "remove", "--force", str(candidate))


@pytest.mark.anyio
async def test_tried_patches_are_never_proposed_again(scratch: tuple[Path, Path], tmp_path: Path) -> None:
    repo, work = scratch
    request = await request_for(repo, work, tmp_path, n=1)
    first = await MutateGenerator({"parallel": 2}).propose(request)
    request.tried_patches = [first.plans[0].patch or ""]
    second = await MutateGenerator({"parallel": 2}).propose(request)
    assert second.plans and second.plans[0].patch != first.plans[0].patch


@pytest.mark.anyio
async def test_honest_failure_when_the_budget_finds_nothing(scratch: tuple[Path, Path], tmp_path: Path) -> None:
    repo, work = scratch
    request = await request_for(repo, work, tmp_path)
    fix = (await MutateGenerator({"parallel": 1}).propose(request)).plans[0].patch or ""
    request.tried_patches = [fix]  # the one fix is spent: the next-ranked mutant fixes nothing
    # the count binds only while something plausible is found (deepen.py): the seconds end this one
    proposal = await MutateGenerator({"parallel": 1, "mutate": {"budget_mutants": 1, "budget_seconds": 0.0}}).propose(
        request
    )
    assert proposal.plans == []
    assert proposal.reason and proposal.reason.startswith("no plausible mutant: screened 0 mutants")
    assert "(budget spent: 0s of screening (mutate's budget_seconds))" in proposal.reason  # which budget


@pytest.mark.anyio
async def test_a_mutant_that_loops_forever_is_killed(scratch: tuple[Path, Path], tmp_path: Path) -> None:
    from explore.generators.mutate.screen import Job, Screener

    repo, work = scratch
    looping = (work / "shop.py").read_text().replace("        n += 1\n", "        pass\n")
    async with Screener("fork", sys.executable, work, tmp_path / "run", 1) as screener:
        verdict = await screener.slots[0].screen(
            Job({str(work / "shop.py"): looping}, ["tests/test_shop.py::test_count"], [], 1.0)
        )
        assert verdict.status == "timeout"
        fine = await screener.slots[0].screen(Job({}, ["tests/test_shop.py::test_count"], [], 10.0))
        assert fine.status == "ok" and fine.outcomes == {"tests/test_shop.py::test_count": "passed"}


@pytest.mark.anyio
@pytest.mark.parametrize("design", ["fork", "fresh"])
async def test_both_screening_designs_agree(design: str, scratch: tuple[Path, Path], tmp_path: Path) -> None:
    from explore.generators.mutate.screen import Job, Screener

    repo, work = scratch
    fixed = (work / "shop.py").read_text().replace("subtotal > 100", "subtotal >= 100")
    ids = ["tests/test_shop.py::test_discount_at_threshold"], ["tests/test_shop.py::test_big_order"]
    async with Screener(design, sys.executable, work, tmp_path / "run", 1) as screener:
        verdict = await screener.slots[0].screen(Job({str(work / "shop.py"): fixed}, *ids, 30.0))
    assert verdict.status == "ok"
    assert verdict.fixed(ids[0]) == ids[0] and verdict.broken(ids[1]) == []


@pytest.mark.anyio
async def test_custom_test_command_gets_an_empty_proposal(tmp_path: Path) -> None:
    request = ProposalRequest(
        repo_root=tmp_path,
        scratch=tmp_path,
        current_commit="x",
        base_commit="x",
        n=3,
        iteration=1,
        strategy=load_strategies()["conservative"],
        failing=[TestOutcome(id="<suite>", outcome="failed")],
        passing=[],
        test_command=TestCommand(shell="make test"),
        run_dir=tmp_path / "run",
    )
    proposal = await MutateGenerator({}).propose(request)
    assert proposal.plans == [] and "mutate needs pytest" in (proposal.reason or "")


@pytest.mark.anyio
async def test_realise_without_patch_fails_clearly(tmp_path: Path) -> None:
    context = CandidateContext(tmp_path, "a", 1, load_strategies()["conservative"], tmp_path, None)  # type: ignore[arg-type]
    with pytest.raises(ApplyFailed, match="no patch"):
        await MutateGenerator({}).realise(CandidatePlan(patch=None), context)
