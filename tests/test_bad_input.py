"""Issue 6's bad input: each a clear one-line error with the documented exit code, never a
traceback — or, where the input is odd but workable, a run that succeeds and says what it did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GIT_ID, git, make_repo, run_cli, write_files
from test_run_e2e import CALC, FIX_ADD
from test_safety_faults import assert_nothing_left, kill_everything_under, scripted_agent

GREEN = dict(CALC, **{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"})
ONE_BUG = dict(CALC, **{"calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"})


def assert_one_line_error(code: int, err: str, expected_code: int, *needles: str) -> None:
    assert code == expected_code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("explore: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def assert_nothing_started(repo: Path) -> None:
    assert not (repo / ".explore" / "runs").exists()
    assert (
        subprocess.run(
            ["git", "branch", "--list", "explore/*"], cwd=repo, capture_output=True, text=True
        ).stdout.strip()
        == ""
    )


# ------------------------------------------------------------------------------- the repository


def test_not_a_git_repo_also_as_json(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    code, summary, err = run_cli(["run", str(tmp_path / "plain"), "--json"])
    assert_one_line_error(code, err, 2, "not a git repository")
    assert (
        summary == {"status": "error", "exit_code": 2, "error": summary["error"]}
        and "not a git repository" in summary["error"]
    )


def test_missing_path(tmp_path: Path) -> None:
    code, _, err = run_cli(["run", str(tmp_path / "nowhere")])
    assert_one_line_error(code, err, 2, "no such directory")


def test_repo_without_commits(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_files(repo, CALC)
    git(repo, "init", "-q", "-b", "main")
    code, _, err = run_cli(["run", str(repo), "--agent-cmd", "true"])
    assert_one_line_error(code, err, 2, "no commits")
    assert not (repo / ".explore").exists()


def test_bare_repo(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "repo", CALC)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(source), str(tmp_path / "bare.git")], check=True, capture_output=True
    )
    code, _, err = run_cli(["run", str(tmp_path / "bare.git"), "--agent-cmd", "true"])
    assert_one_line_error(code, err, 2, "bare repository")
    assert not (tmp_path / "bare.git" / ".explore").exists()


def test_detached_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    git(repo, "checkout", "-q", "--detach")
    code, _, err = run_cli(["run", str(repo), "--agent-cmd", "true"])
    assert_one_line_error(code, err, 2, "detached HEAD")
    assert_nothing_started(repo)


def _conflicting_branches(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", CALC)
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "calc.py").write_text((repo / "calc.py").read_text().replace("a - b", "b + a"))
    git(repo, "commit", "-q", "-am", "feature fix")
    git(repo, "checkout", "-q", "main")
    (repo / "calc.py").write_text((repo / "calc.py").read_text().replace("a - b", "a + b"))
    git(repo, "commit", "-q", "-am", "main fix")
    return repo


@pytest.mark.parametrize(
    ("operation", "needle"),
    [
        ("merge", "a merge in progress"),
        pytest.param("rebase", "a rebase in progress"),
    ],
)
def test_merge_or_rebase_in_progress(tmp_path: Path, operation: str, needle: str) -> None:
    repo = _conflicting_branches(tmp_path)
    if operation == "rebase":
        git(repo, "checkout", "-q", "feature")
        args = ["rebase", "main"]
    else:
        args = ["merge", "feature"]
    conflicted = subprocess.run(["git", *GIT_ID, *args], cwd=repo, capture_output=True, text=True)
    assert conflicted.returncode != 0 and "CONFLICT" in conflicted.stdout + conflicted.stderr
    code, _, err = run_cli(["run", str(repo), "--agent-cmd", "true"])
    assert_one_line_error(code, err, 2, needle)
    assert_nothing_started(repo)


def test_no_tests_collected_escalates_as_infrastructure(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC["calc.py"]})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", "true", "--json"])
    assert code == 3, err
    assert summary["status"] == "escalated" and summary["iterations"] == []
    assert (
        summary["escalation"]["category"] == "infrastructure"
        and "no tests collected" in summary["escalation"]["reason"]
    )
    assert "HELP NEEDED (infrastructure)" in err and "Traceback" not in err
    assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))


# ------------------------------------------------------------------------------- configuration and options


@pytest.mark.parametrize(
    ("config", "needles"),
    [
        ("paralel = 3\n", ["unknown option 'paralel'", "allowed keys:", "parallel", "max-iterations"]),
        ("max-iteration = 3\n", ["unknown option 'max-iteration'", "max-iterations"]),
        ("target-pass-rate = 150\n", ["target-pass-rate", "between 0 and 100", "150"]),
        ('max-iterations = "many"\n', ["max-iterations", "'many'"]),
        ("branch-timeout = -1\n", ["branch-timeout", "positive", "-1"]),
        ('strategy = "bogus"\n', ["unknown strategy 'bogus'", "conservative"]),
        ('agent = "bogus"\n', ["unknown agent 'bogus'"]),
    ],
    ids=[
        "unknown-key",
        "unknown-dashed-key",
        "rate-out-of-range",
        "wrong-type",
        "negative-timeout",
        "strategy",
        "agent",
    ],
)
def test_invalid_tool_explore_config_is_named(tmp_path: Path, config: str, needles: list[str]) -> None:
    repo = make_repo(tmp_path / "repo", CALC, explore_config=config)
    code, summary, err = run_cli(["run", str(repo), "--json"])
    assert_one_line_error(code, err, 2, *needles)
    assert summary["status"] == "error" and summary["exit_code"] == 2
    assert_nothing_started(repo)


def test_unreadable_pyproject_is_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", dict(CALC, **{"pyproject.toml": "[tool.explore\nparallel = \n"}))
    code, _, err = run_cli(["run", str(repo)])
    assert_one_line_error(code, err, 2, "pyproject.toml")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--strategy", "bogus"], ["unknown strategy 'bogus'"]),
        (["--agent", "bogus"], ["unknown agent 'bogus'"]),
        (["--parallel", "0"], ["parallel", "at least 1"]),
        (["--parallel", "-2"], ["parallel", "at least 1"]),
        (["--max-iterations", "0"], ["max-iterations", "at least 1"]),
    ],
)
def test_bad_flags_without_json(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    code, summary, err = run_cli(["run", str(repo), *args])
    assert summary is None
    assert_one_line_error(code, err, 2, *needles)
    assert_nothing_started(repo)


def test_parallel_above_what_the_machine_runs_is_capped_and_said(tmp_path: Path) -> None:
    cores = os.cpu_count() or 1
    if 4 * cores + 1 > 64:
        pytest.skip("this machine runs every --parallel explore accepts")
    repo = make_repo(tmp_path / "repo", GREEN)
    code, summary, err = run_cli(["run", str(repo), "--parallel", str(4 * cores + 1), "--agent-cmd", "true", "--json"])
    assert code == 0, err
    assert f"--parallel {4 * cores + 1} capped to {4 * cores}" in err and "Traceback" not in err


def test_absurd_parallel_is_capped_not_refused(tmp_path: Path) -> None:
    cores = os.cpu_count() or 1
    repo = make_repo(tmp_path / "repo", GREEN)
    code, summary, err = run_cli(["run", str(repo), "--parallel", "100000", "--agent-cmd", "true", "--json"])
    assert code == 0, err
    assert "--parallel 100000 capped to" in err and summary["status"] == "succeeded"
    assert f"capped to {min(4 * cores, 64)}" in err


def test_unwritable_explore_dir(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    if os.geteuid() == 0:  # root writes through permissions: make .explore a file, so mkdir fails
        (repo / ".explore").write_text("not a folder\n")
    else:
        (repo / ".explore").mkdir()
        (repo / ".explore").chmod(0o555)
    try:
        code, summary, err = run_cli(["run", str(repo), "--agent-cmd", "true", "--json"])
        assert_one_line_error(code, err, 2, "cannot write", str(repo / ".explore"))
        assert summary["exit_code"] == 2
        assert (
            subprocess.run(
                ["git", "branch", "--list", "explore/*"], cwd=repo, capture_output=True, text=True
            ).stdout.strip()
            == ""
        )
    finally:
        if (repo / ".explore").is_dir():
            (repo / ".explore").chmod(0o755)


# ------------------------------------------------------------------------------- odd but workable input


def test_paths_with_spaces_and_non_ascii_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLORE_WORKTREES_DIR", str(tmp_path / "work trees ü"))
    files = {
        "größe.py": "def doppelt(x):\n    return x + 2\n",
        "tests/test_größe.py": "from größe import doppelt\n\n\ndef test_doppelt():\n    assert doppelt(3) == 6\n\n\ndef test_null():\n    assert doppelt(0) == 0\n",
    }
    repo = make_repo(tmp_path / "mein Projekt é 项目", files)
    agent = scripted_agent(tmp_path, {"a": {"replace": {"größe.py": ["x + 2", "x * 2"]}}})
    try:
        code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
        assert code == 0, err[-3000:]
        assert summary["status"] == "succeeded" and summary["applied"] is True
        assert "x * 2" in (repo / "größe.py").read_text()
        assert Path(summary["report"]).is_file() and str(repo) in summary["report"]
        assert_nothing_left(repo, tmp_path / "work trees ü", keep_branches=(summary["branch"],))
    finally:
        kill_everything_under(tmp_path / "work trees ü")


def test_non_ascii_file_names_in_files_changed(tmp_path: Path) -> None:
    files = {
        "größe.py": "def doppelt(x):\n    return x + 2\n",
        "tests/test_größe.py": "from größe import doppelt\n\n\ndef test_doppelt():\n    assert doppelt(3) == 6\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    agent = scripted_agent(tmp_path, {"a": {"replace": {"größe.py": ["x + 2", "x * 2"]}}})
    code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
    assert code == 0, err[-3000:]
    assert summary["iterations"][0]["candidates"][0]["files_changed"] == ["größe.py"]


def test_fifty_megabytes_of_test_output_stay_bounded(tmp_path: Path) -> None:
    noisy = dict(
        ONE_BUG,
        **{
            "tests/test_noise.py": (
                "import sys\n\n\ndef test_noise():\n"
                "    line = 'x' * 1023 + '\\n'\n"
                "    for _ in range(50 * 1024):\n"
                "        sys.stdout.write(line)\n"
            )
        },
    )
    repo = make_repo(tmp_path / "repo", noisy)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}})
    test_cmd = f"{sys.executable} -m pytest -s -q -p no:cacheprovider --junit-xml={{junit}}"
    try:
        code, summary, err = run_cli(
            ["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--test-cmd", test_cmd, "--json"]
        )
        assert code == 0, err[-3000:]
        assert summary["final"]["pass_rate"] == 100.0
        files = [p for p in (repo / ".explore").rglob("*") if p.is_file()]
        sizes = {str(p.relative_to(repo)): p.stat().st_size for p in files}
        assert max(sizes.values()) <= 5 * 2**20, sizes
        assert sum(sizes.values()) <= 20 * 2**20, sizes
        baseline_log = (repo / ".explore" / "runs" / summary["run_id"] / "baseline.log").read_text()
        assert "explore cut" in baseline_log and "passed" in baseline_log.splitlines()[-1]  # head and tail kept
    finally:
        kill_everything_under(tmp_path / "worktrees")


BLOB = bytes(range(256)) * 8 + b"\x00\xff\x00binary tail"
NEW_BLOB = bytes(reversed(range(256))) * 5 + b"\x00\x01\x02"


def test_binary_files_in_a_candidate_diff_merge_byte_identical(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "assets").mkdir(parents=True)
    (repo / "assets" / "logo.bin").write_bytes(BLOB)
    make_repo(repo, ONE_BUG, explore_config='allow-new-files = ["assets/*"]\n')  # the policy's widening
    changed = BLOB[:100] + b"\x00changed\x00" + BLOB[200:]
    agent = scripted_agent(
        tmp_path,
        {"a": {"replace": FIX_ADD, "write_hex": {"assets/logo.bin": changed.hex(), "assets/new.bin": NEW_BLOB.hex()}}},
    )
    try:
        code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
        assert code == 0, err[-3000:]
        assert sorted(summary["iterations"][0]["candidates"][0]["files_changed"]) == [
            "assets/logo.bin",
            "assets/new.bin",
            "calc.py",
        ]
        for name, expected in (("assets/logo.bin", changed), ("assets/new.bin", NEW_BLOB)):
            blob = subprocess.run(
                ["git", "cat-file", "blob", f"{summary['branch']}:{name}"], cwd=repo, capture_output=True, check=True
            ).stdout
            assert blob == expected, name
            assert (repo / name).read_bytes() == expected  # the user's branch was fast-forwarded to it
        assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))
    finally:
        kill_everything_under(tmp_path / "worktrees")


def test_non_utf8_text_file_in_a_candidate_diff(tmp_path: Path) -> None:
    """A Latin-1 file has no NUL byte, so git diffs it as text with raw non-UTF-8 bytes."""
    repo = make_repo(tmp_path / "repo", ONE_BUG, explore_config='allow-new-files = ["notes/*"]\n')
    latin1 = "café crème, déjà vu\n".encode("latin-1")
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD, "write_hex": {"notes/latin1.txt": latin1.hex()}}})
    try:
        code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
        assert code == 0, err[-3000:]
        assert summary["iterations"][0]["candidates"][0]["status"] == "ok", summary["iterations"][0]["candidates"][0]
        blob = subprocess.run(
            ["git", "cat-file", "blob", f"{summary['branch']}:notes/latin1.txt"],
            cwd=repo,
            capture_output=True,
            check=True,
        ).stdout
        assert blob == latin1
        assert "caf\ufffd cr\ufffdme" in summary["diff"]  # the change shown, readable; repair.diff keeps the bytes
        assert latin1.rstrip() in (repo / ".explore" / "runs" / summary["run_id"] / "repair.diff").read_bytes()
    finally:
        kill_everything_under(tmp_path / "worktrees")


@pytest.mark.parametrize(
    "command", [["run", "{repo}", "--agent", "anthropic"], ["bench", "{cases}", "--agent", "anthropic"]]
)
def test_anthropic_without_a_key_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    repo = make_repo(tmp_path / "repo", ONE_BUG)
    args = [a.format(repo=repo, cases=Path(__file__).parent.parent / "benchmarks" / "cases") for a in command]
    code, _, err = run_cli(args, cwd=tmp_path)
    assert_one_line_error(code, err, 2, "--agent anthropic needs ANTHROPIC_API_KEY", "--agent mutate")
    assert_nothing_started(repo)
    assert not (tmp_path / ".explore").exists()  # bench wrote no result folder either
