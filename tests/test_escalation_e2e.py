"""Issue 6's acceptance: every escalation category end to end — exit 3, the `escalation` block of the
JSON summary, "HELP NEEDED" with the exact commands that can help (resume, with a hint where code can
help, rollback once something was merged) on stderr and in report.md, and no iteration spent on it."""

from __future__ import annotations

import json
import re
import venv
from pathlib import Path

from conftest import git, make_repo, run_cli
from test_run_e2e import CALC, FIX_ADD, FIX_MUL
from test_safety_faults import assert_nothing_left, cli, kill_everything_under, scripted_agent, write_edits


def assert_help_needed(
    code: int, summary: dict | None, err: str, category: str, needle: str, iterations: int = 0
) -> dict:
    assert code == 3, err[-3000:]
    assert summary is not None and summary["status"] == "escalated" and summary["exit_code"] == 3
    escalation = summary["escalation"]
    assert escalation["category"] == category, escalation
    assert needle in escalation["reason"], escalation["reason"]
    assert escalation["suggested_action"].strip()
    assert len(summary["iterations"]) == iterations, "an escalation must not spend an iteration"
    run_id = summary["run_id"]
    assert "Traceback" not in err
    assert f"HELP NEEDED ({category})" in err
    # only what can help: no hint when no code edit can (environment, service), no rollback before a merge
    hint = category not in ("infrastructure", "external_service")
    rollback = hint and any(i["commit"] for i in summary["iterations"])
    report = Path(summary["report"]).read_text(encoding="utf-8")
    assert "## Help needed" in report and f"HELP NEEDED ({category})" in report and needle in report and needle in err
    for text in (err, report):
        assert f"explore resume {run_id}" in text
        assert (f"explore resume {run_id} --hint" in text) == hint and (
            f"explore rollback {run_id} --to" in text
        ) == rollback
    return escalation


def last_line(err: str) -> str:
    """The run's result line on stderr (`STATUS: COUNTS — WHY`), without the live view's clock."""
    line = next(line for line in reversed(err.splitlines()) if " — " in line)
    return re.sub(r"^\s*[\d.]+s ", "", line).strip()


# ------------------------------------------------------------------------------- infrastructure


def test_missing_test_command(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    code, summary, err = run_cli(
        ["run", str(repo), "--test-cmd", "no-such-test-runner-xyz --junit-xml={junit}", "--agent-cmd", "true", "--json"]
    )
    assert_help_needed(code, summary, err, "infrastructure", "no-such-test-runner-xyz")
    assert "not found" in summary["escalation"]["reason"]
    assert last_line(err).startswith("escalated: baseline not measured: the baseline test run failed: test command not")
    assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))


def test_pytest_missing_in_the_configured_interpreter(tmp_path: Path) -> None:
    env_dir = tmp_path / "bare-venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)  # an interpreter without pytest
    python = env_dir / "bin" / "python"
    repo = make_repo(tmp_path / "repo", CALC, python=str(python))
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", "true", "--json"])
    escalation = assert_help_needed(code, summary, err, "infrastructure", "No module named pytest")
    assert str(python) in escalation["reason"], "the message must name the interpreter"
    assert last_line(err).startswith("escalated: baseline not measured: the baseline test run failed: pytest is not")
    assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))


def test_collection_error_in_a_test_file(tmp_path: Path) -> None:
    files = dict(CALC, **{"tests/test_broken.py": "import no_such_module_xyz\n\n\ndef test_x():\n    pass\n"})
    repo = make_repo(tmp_path / "repo", files)
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", "true", "--json"])
    assert_help_needed(code, summary, err, "infrastructure", "tests/test_broken.py")
    assert "collection" in summary["escalation"]["reason"]
    assert last_line(err) == (  # issue 39 point 8 (PySnooper-2): never "0/0 passed (0.0%)"
        "escalated: baseline not measured: the baseline test run failed: collection errors in tests/test_broken.py"
        " — escalated (infrastructure)"
    )
    assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))


# ------------------------------------------------------------------------------- external service


def test_connection_refused_in_a_failing_test(tmp_path: Path) -> None:
    files = dict(
        CALC,
        **{
            "tests/test_service.py": (
                "def fetch():\n"
                "    raise ConnectionRefusedError(111, 'Connection refused')\n\n\n"
                "def test_fetch():\n"
                "    assert fetch() == 'ok'\n"
            )
        },
    )
    repo = make_repo(tmp_path / "repo", files)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--json"])
    assert_help_needed(code, summary, err, "external_service", "refused the connection")
    assert (
        "tests/test_service.py::test_fetch" in summary["escalation"]["reason"]
        or "failing test" in summary["escalation"]["reason"]
    )
    assert not list((repo / ".explore" / "runs" / summary["run_id"]).glob("iteration-*"))  # no candidate was tried
    assert git(repo, "log", "--format=%s") == "initial"
    assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))


def test_agent_saying_401_unauthorized_on_every_candidate(tmp_path: Path) -> None:
    say = {"say": "Error: HTTP 401 Unauthorized: invalid x-api-key", "exit": 1}
    repo = make_repo(tmp_path / "repo", CALC)
    agent = scripted_agent(tmp_path, {"a": say, "b": say})
    try:
        code, summary, err = run_cli(["run", str(repo), "--parallel", "2", "--agent-cmd", agent, "--json"])
        assert_help_needed(code, summary, err, "external_service", "401")
        assert "the agent failed" in summary["escalation"]["reason"]
        assert git(repo, "log", "--format=%s") == "initial"
        assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))
    finally:
        kill_everything_under(tmp_path / "worktrees")


# ------------------------------------------------------------------------------- destructive

DESTRUCTIVE = {
    "calc.py": [
        "def add(a, b):\n    return a - b",
        "import shutil\n\n\ndef add(a, b):\n    shutil.rmtree('/tmp/cache', ignore_errors=True)\n    return a + b",
    ]
}


def test_destructive_candidate_escalates_then_resume_with_a_hint_finishes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    agent = scripted_agent(tmp_path, {"a": {"replace": DESTRUCTIVE}})
    try:
        code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
        assert_help_needed(code, summary, err, "destructive", "shutil.rmtree")
        assert summary["merged_commit"] is None and git(repo, "log", "--format=%s") == "initial"
        assert "def add(a, b):\n    return a - b" in (repo / "calc.py").read_text()  # nothing applied
        assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))

        # retry with a hint, as the block says: the generator hears it, the report records it
        write_edits(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}, "2a": {"replace": FIX_MUL}})
        hint = "fix add without touching the file system"
        code, resumed, err = run_cli(["resume", summary["run_id"], "--hint", hint, "--json"], cwd=repo)
        assert code == 0, err[-3000:]
        assert resumed["status"] == "succeeded" and resumed["escalation"] is None
        report = Path(resumed["report"]).read_text()
        assert hint in report
        prompts = list((repo / ".explore" / "runs" / summary["run_id"]).glob("iteration-1/candidate-a/prompt.md"))
        assert prompts and hint in prompts[0].read_text()
        assert "rmtree" not in (repo / "calc.py").read_text() and "return a * b" in (repo / "calc.py").read_text()
    finally:
        kill_everything_under(tmp_path / "worktrees")


DESTRUCTIVE_MUL = {
    "calc.py": [
        "def mul(a, b):\n    return a + b",
        "def mul(a, b):\n    import shutil; shutil.rmtree('data')\n    return a * b",
    ]
}


def test_destructive_after_a_merge_then_rollback_as_suggested(tmp_path: Path) -> None:
    """Iteration 1 merges; iteration 2's candidate is destructive: exit 3 with one iteration
    recorded (the escalated one is not spent); `explore rollback RUN --to 0` as printed works."""
    repo = make_repo(tmp_path / "repo", CALC)
    start = git(repo, "rev-parse", "HEAD")
    agent = scripted_agent(tmp_path, {"1a": {"replace": FIX_ADD}, "2a": {"replace": DESTRUCTIVE_MUL}})
    try:
        code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
        assert_help_needed(code, summary, err, "destructive", "rmtree", iterations=1)
        run_id, first = summary["run_id"], summary["iterations"][0]["commit"]
        assert summary["merged_commit"] == first and git(repo, "rev-parse", f"explore/{run_id}") == first
        assert "rmtree" not in git(repo, "show", f"explore/{run_id}:calc.py")
        assert f"explore rollback {run_id} --to 0" in err

        done = cli(["rollback", run_id, "--to", "0"], cwd=repo)
        assert done.returncode == 0, done.stderr
        assert f"explore resume {run_id}" in done.stdout
        assert git(repo, "rev-parse", f"explore/{run_id}") == start
        status = json.loads(cli(["status", "--json"], cwd=repo).stdout)
        (row,) = status["runs"]
        assert row["iterations"] == 0 and row["merged_commit"] is None
        bad = cli(["rollback", run_id, "--to", "7"], cwd=repo)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    finally:
        kill_everything_under(tmp_path / "worktrees")


def test_resume_after_an_escalation_applies_the_final_result(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    agent = scripted_agent(tmp_path, {"1a": {"replace": FIX_ADD}, "2a": {"replace": DESTRUCTIVE_MUL}})
    try:
        code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
        assert code == 3, err
        write_edits(tmp_path, {"1a": {"replace": FIX_ADD}, "2a": {"replace": FIX_MUL}})
        code, resumed, err = run_cli(["resume", summary["run_id"], "--json"], cwd=repo)
        assert code == 0, err[-3000:]
        assert resumed["status"] == "succeeded"
        assert resumed["applied"] is True and git(repo, "rev-parse", "main") == resumed["merged_commit"], err[-1000:]
    finally:
        kill_everything_under(tmp_path / "worktrees")


# ------------------------------------------------------------------------------- ambiguous requirements


def test_ambiguous_requirements_in_a_failing_test(tmp_path: Path) -> None:
    files = dict(
        CALC,
        **{
            "tests/test_rounding.py": (
                "def test_rounding():\n"
                "    raise AssertionError('requirements are ambiguous: round half up or half to even?')\n"
            )
        },
    )
    repo = make_repo(tmp_path / "repo", files)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--json"])
    assert_help_needed(code, summary, err, "ambiguous_requirements", "undecided")
    assert (
        "explore resume" in summary["escalation"]["suggested_action"]
        and "--hint" in summary["escalation"]["suggested_action"]
    )
    assert git(repo, "log", "--format=%s") == "initial"
    assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))
