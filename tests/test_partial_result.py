"""Issue 39 point 6: only a met gate moves the user's branch. A run that ends below its gate keeps
what it merged on its own ref, says how to take it and what it did and did not fix; `explore apply`
then takes it, and `--apply-partial` moves the branch at once. Real git, real runs through the CLI
with a scripted agent that repairs one of two bugs."""

from __future__ import annotations

from pathlib import Path

from conftest import assert_no_debris, git, make_repo, run_cli
from explore.edges import history_io
from test_apply import explore, tree_bytes
from test_run_e2e import CALC, FIX_ADD, scripted_agent

ADD = ["tests/test_calc.py::test_add"]


def half_repair(tmp_path: Path, *flags: str) -> tuple[Path, str, dict[str, bytes], int, dict, str]:
    """One iteration, one candidate that fixes add and leaves mul broken: merged, gate not met."""
    repo = make_repo(tmp_path / "repo", CALC)
    start, before = git(repo, "rev-parse", "HEAD"), tree_bytes(repo)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}})
    code, summary, err = run_cli(
        ["run", str(repo), "--agent-cmd", agent, "--parallel", "1", "--max-iterations", "1", "--json", *flags]
    )
    assert summary is not None, err
    assert summary["status"] == "failed" and summary["iterations"][0]["winner"] == "a", err
    return repo, start, before, code, summary, err


def test_a_run_below_its_gate_leaves_the_branch_and_tree_and_apply_takes_it(tmp_path: Path) -> None:
    repo, start, before, code, summary, err = half_repair(tmp_path)
    run_id = summary["run_id"]
    assert code == 1 and summary["merged_commit"] and summary["applied"] is False
    assert git(repo, "rev-parse", "HEAD") == start and tree_bytes(repo) == before  # as the run found them
    assert git(repo, "status", "--porcelain") == ""
    assert summary["branch"] == f"explore/{run_id}"
    assert git(repo, "rev-parse", f"explore/{run_id}") == summary["merged_commit"]
    assert f"take it with: explore apply {run_id}" in err and "below its gate" in err
    assert "return a + b" in summary["diff"]  # the partial result's diff, in the summary and the report
    report = Path(summary["report"]).read_text()
    assert (
        f"## What the result fixes (not applied: your branch is as the run found it; take it with `explore apply {run_id}`)"
        in report
    )
    for test in ADD:
        assert f"- fixed: `{test}`" in report
    assert "- not fixed: `tests/test_calc.py::test_mul`" in report
    assert "## Change" in report and "+    return a + b" in report
    # the history ends on what the branch holds (the baseline), not on the result it does not hold:
    # the next run's baseline must not read as a drop from it (a false regression, a surgical run)
    records = history_io.load(repo / ".explore" / "history.jsonl")
    assert [(r.n, r.branch, r.pass_rate) for r in records] == [
        (0, False, summary["baseline"]["pass_rate"]),
        (1, False, summary["final"]["pass_rate"]),
        (1, True, summary["baseline"]["pass_rate"]),
    ]
    assert records[-1].commit == start and records[-1].failing == sorted(summary["iterations"][0]["failed_tests"] + ADD)

    done = explore(repo, "apply", run_id)
    assert done.returncode == 0, done.stderr
    assert git(repo, "rev-parse", "HEAD") == summary["merged_commit"]
    assert "return a + b" in (repo / "calc.py").read_text()
    assert_no_debris(repo)


def test_apply_partial_moves_the_branch_to_a_result_below_the_gate(tmp_path: Path) -> None:
    repo, start, _, code, summary, err = half_repair(tmp_path, "--apply-partial")
    assert code == 1 and summary["applied"] is True, err  # the exit code follows the gate, applied or not
    assert git(repo, "rev-parse", "HEAD") == summary["merged_commit"] != start
    assert "return a + b" in (repo / "calc.py").read_text()
    assert "## What the result fixes (applied to your branch)" in Path(summary["report"]).read_text()
    assert_no_debris(repo)


def test_the_last_line_never_reads_zero_of_zero() -> None:
    """Issue 39 point 8: a run stopped before its baseline finished says so; after it, the counts."""
    from explore.model.runstate import RunState
    from explore.model.testresults import Counts
    from explore.run import reports

    early = RunState(run_id="r", repo="/x", status="interrupted", stop_reason="interrupted by a signal")
    assert (
        reports.result_line(early)
        == "interrupted: baseline not measured: interrupted before it ended — interrupted by a signal"
    )
    measured = early.model_copy(
        update={"baseline_ids": ["t::a", "t::b"], "current": Counts(passed=1, failed=1, total=2, pass_rate=50.0)}
    )
    assert reports.result_line(measured).startswith("interrupted: 1/2 passed (50.0%) — ")
    assert "- **Baseline:** baseline not measured: interrupted before it ended" in reports.markdown(early)
