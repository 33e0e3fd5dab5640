"""The generator seam (issue 25.4): every capability a run uses is declared on `FixGenerator` with
its default, test writing by subclassing `TestWriter`; an agent or command that fails raises the
error tree's `GeneratorFailed` — checked with real generators and a real failing agent process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import assert_no_debris, git, make_repo, run_cli
from explore import generators
from explore.cli.demo import create_demo
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand
from explore.generators.base import CandidateContext, FixGenerator, ProposalRequest, TestWriter
from explore.generators.chain import ChainGenerator
from explore.generators.command import CommandGenerator
from explore.generators.mutate import MutateGenerator
from explore.model.candidates import CandidatePlan, Proposal, Realised
from explore.model.errors import ExploreError, GeneratorFailed, UsageError
from explore.model.usage import Usage


class Bare(FixGenerator):
    """A generator declaring nothing beyond propose and realise."""

    name = "bare"

    async def propose(self, request: ProposalRequest) -> Proposal:
        return Proposal()

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        return Realised()


@pytest.mark.anyio
async def test_a_generator_declaring_nothing_more_gets_the_declared_defaults(tmp_path: Path) -> None:
    bare = Bare()
    assert bare.usage == Usage() and bare.baseline_env(tmp_path, "c0ffee", ["test_*.py"]) == {}
    assert bare.test_writer() is None and bare.agent_in_realise is False and bare.suite_bound is False
    assert await bare.aclose() is None
    with pytest.raises(TypeError, match="abstract"):
        FixGenerator()  # type: ignore[abstract]


def test_the_test_writer_is_found_by_its_declared_type_alone_or_in_a_chain() -> None:
    command = CommandGenerator("true")
    mutate = MutateGenerator({})
    assert isinstance(command, TestWriter) and not isinstance(mutate, TestWriter)
    assert generators.test_writer(command) is command
    assert generators.test_writer(ChainGenerator([mutate, command])) is command
    assert command.agent_in_realise and not mutate.agent_in_realise
    assert mutate.suite_bound and not command.suite_bound
    with pytest.raises(UsageError, match="--issue needs a generator that can write tests"):
        generators.test_writer(mutate)


@pytest.mark.anyio
async def test_a_failing_agent_command_raises_generator_failed_with_its_last_words(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    head = git(repo, "rev-parse", "HEAD")
    request = ProposalRequest(
        repo_root=repo,
        scratch=repo,
        current_commit=head,
        base_commit=head,
        n=1,
        iteration=1,
        strategy=load_strategies()["conservative"],
        failing=[],
        passing=[],
        test_command=TestCommand(python=sys.executable),
        run_dir=tmp_path / "run",
    )
    files = tmp_path / "candidate-a"
    files.mkdir()
    context = CandidateContext(repo, "a", 1, request.strategy, files, request)
    agent = CommandGenerator("echo 'thinking'; echo 'fatal: the model refused the task' >&2; exit 4")
    with pytest.raises(GeneratorFailed) as caught:
        await agent.realise(CandidatePlan(hypothesis=""), context)
    assert str(caught.value) == "agent exited with 4: fatal: the model refused the task"
    assert isinstance(caught.value, ExploreError) and caught.value.exit_code == 1
    assert caught.value.usage == Usage()


def test_a_chain_headed_by_mutate_localises_from_the_baseline_run(tmp_path: Path) -> None:
    """`--agent mutate,command`: the baseline records the head's per-test coverage, and mutate's
    first proposal reads it instead of running the suite again under its tracer."""
    target = create_demo(tmp_path / "demo")
    code, summary, err = run_cli(
        ["run", str(target), "--agent", "mutate,command", "--agent-cmd", "exit 1", "--parallel", "2", "--json"]
    )
    assert code == 0 and summary is not None, err
    assert {c["generator"] for c in summary["iterations"][0]["candidates"]} == {"mutate"}
    folder = target / ".explore" / "runs" / summary["run_id"]
    assert (folder / "mutate-baseline" / "coverage-run.json").is_file()  # written by the baseline's pytest
    assert not (folder / "iteration-1" / "mutate" / "coverage-run.json").exists()  # no run of its own
    assert_no_debris(target)
