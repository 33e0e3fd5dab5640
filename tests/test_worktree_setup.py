"""worktree_setup: one helper (`edges.worktrees.run_setup`) and one typed outcome (`SetupOutcome`)
that every caller reads — on real git worktrees with real setup commands."""

from __future__ import annotations

import sys
from pathlib import Path

import git
import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.edges import procs
from explore.edges.testing import TestCommand
from explore.edges.worktrees import SetupOutcome, WorktreePool, run_setup
from explore.executors.jobs import TestJob
from explore.executors.local import LocalExecutor
from explore.model.errors import SetupFailed
from explore.model.runstate import EscalationCategory
from test_escalation_e2e import last_line
from test_run_e2e import CALC

BROKEN = "echo 'installing deps'; echo 'error: no matching distribution for leftpadx' >&2; exit 7"
"""A setup command that fails as a real one does: output on both streams, a non-zero exit."""
SENTENCE = f"worktree_setup `{BROKEN}` failed with exit 7: "


@pytest.fixture
def pool(tmp_path: Path):
    repo = make_repo(tmp_path / "repo", CALC)
    pool = WorktreePool(git.Repo(repo), repo, tmp_path / "worktrees" / "run")
    yield pool
    pool.remove_all()
    assert_no_debris(repo)


@pytest.mark.anyio
async def test_a_failing_setup_is_one_outcome_that_names_the_command_exit_and_output(
    pool: WorktreePool, tmp_path: Path
) -> None:
    path, fresh = pool.acquire("a", pool.repo.head.commit.hexsha)
    assert fresh
    log = tmp_path / "logs" / "setup.log"
    outcome = await run_setup(BROKEN, path, log, tracker=procs.ProcessTracker())
    assert isinstance(outcome, SetupOutcome)
    assert not outcome.ok and outcome.exit_code == 7 and outcome.log_path == log
    assert outcome.reason.startswith(SENTENCE)
    assert "no matching distribution for leftpadx" in outcome.reason
    assert "no matching distribution for leftpadx" in log.read_text(encoding="utf-8")
    with pytest.raises(SetupFailed) as caught:
        outcome.check()
    assert str(caught.value) == caught.value.reason == outcome.reason
    assert caught.value.category == EscalationCategory.infrastructure and caught.value.exit_code == 3


@pytest.mark.anyio
async def test_a_succeeding_setup_runs_in_the_worktree_and_checks_clean(pool: WorktreePool, tmp_path: Path) -> None:
    path, _ = pool.acquire("a", pool.repo.head.commit.hexsha)
    outcome = await run_setup("pwd > made-by-setup.txt", path, tmp_path / "setup.log")
    assert outcome.ok and outcome.exit_code == 0
    outcome.check()  # nothing raised
    assert Path((path / "made-by-setup.txt").read_text().strip()).resolve() == path.resolve()


@pytest.mark.anyio
async def test_the_local_executor_stops_on_its_slots_failing_setup_with_the_same_outcome(
    pool: WorktreePool, tmp_path: Path
) -> None:
    executor = LocalExecutor(pool=pool, tracker=procs.ProcessTracker(), parallel=1, worktree_setup=BROKEN)
    job = TestJob(command=TestCommand(python=sys.executable), id="whole", commit=pool.repo.head.commit.hexsha)
    with pytest.raises(SetupFailed) as caught:
        await executor.run(job, tmp_path / "logs")
    assert caught.value.reason.startswith(SENTENCE)
    assert (tmp_path / "logs" / "setup-job1.log").is_file()


def test_a_run_whose_baseline_setup_fails_escalates_with_the_outcome(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC, explore_config=f'worktree-setup = "{BROKEN}"\n')
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json"])
    assert code == 3, err[-2000:]
    assert summary is not None and summary["status"] == "escalated"
    escalation = summary["escalation"]
    assert escalation["category"] == "infrastructure"
    assert escalation["reason"].startswith(SENTENCE) and "leftpadx" in escalation["reason"]
    assert escalation["suggested_action"].startswith("fix the test environment")
    assert summary["iterations"] == []
    assert last_line(err).startswith(f"escalated: baseline not measured: {SENTENCE}"), err[-1000:]  # issue 39.8
    assert "Traceback" not in err
    assert_no_debris(repo)
