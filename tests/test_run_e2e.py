"""Issue 2's acceptance: `explore run` end to end with real git, worktrees and pytest processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import venv
import xml.etree.ElementTree as ET
from pathlib import Path

import psutil
import pytest

from conftest import assert_no_debris, git, make_repo, run_cli

CALC = {
    "calc.py": """\
        def add(a, b):
            return a - b


        def mul(a, b):
            return a + b
        """,
    "tests/test_calc.py": """\
        from calc import add, mul


        def test_add():
            assert add(2, 3) == 5


        def test_mul():
            assert mul(2, 3) == 6


        def test_identity():
            assert add(0, 0) == 0
        """,
}

# The scripted agent: a small program run in each candidate's worktree; what it does is chosen by
# the candidate letter, as an external coding agent's varying answers would be.
AGENT = """\
import json, os, pathlib, sys
edits = json.loads(pathlib.Path(sys.argv[1]).read_text())
cid = os.environ["EXPLORE_CANDIDATE"]
action = edits.get(os.environ["EXPLORE_ITERATION"] + cid, edits.get(cid))  # "1a": candidate a of iteration 1 only
assert pathlib.Path(os.environ["EXPLORE_PROMPT_FILE"]).is_file()
assert "Failing tests" in sys.stdin.read()
if action is None:
    sys.exit(0)
for name, (old, new) in action.get("replace", {}).items():
    path = pathlib.Path(name)
    text = path.read_text()
    if old in text:
        path.write_text(text.replace(old, new, 1))
for name, text in action.get("write", {}).items():
    pathlib.Path(name).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(name).write_text(text)
for name in action.get("delete", []):
    pathlib.Path(name).unlink(missing_ok=True)
if "confidence" in action:
    pathlib.Path(os.environ["EXPLORE_RESULT_FILE"]).write_text(json.dumps({"confidence": action["confidence"], "hypothesis": action.get("why", "")}))
if action.get("hang"):
    import subprocess, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    pathlib.Path(action["hang"]).write_text(f"{os.getpid()} {child.pid}")
    time.sleep(300)
"""


def scripted_agent(tmp_path: Path, edits: dict) -> str:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "edits.json").write_text(json.dumps(edits))
    return f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'edits.json'}"


FIX_ADD = {"calc.py": ["return a - b", "return a + b"]}
FIX_MUL = {"calc.py": ["def mul(a, b):\n    return a + b", "def mul(a, b):\n    return a * b"]}
BREAK = {"write": {"calc.py": "def add(:\n"}}


def test_two_bugs_three_candidates_green_in_two_iterations(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    start = git(repo, "rev-parse", "HEAD")
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}, "c": BREAK})
    junit = tmp_path / "out" / "results.xml"
    code, summary, err = run_cli(
        ["run", str(repo), "--parallel", "3", "--agent-cmd", agent, "--json", "--junit-out", str(junit)]
    )
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded" and summary["exit_code"] == 0
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "3" and suite.get("failures") == "0" and len(suite.findall("testcase")) == 3
    assert len(summary["iterations"]) == 2
    first, second = summary["iterations"]
    assert [c["status"] for c in first["candidates"]] == ["ok", "ok", "rejected"]
    assert first["winner"] == "a" and second["winner"] == "b"
    assert first["pass_rate"] == pytest.approx(200 / 3, abs=0.01) and second["pass_rate"] == 100.0
    assert summary["baseline"] == {"passed": 1, "failed": 2, "total": 3, "pass_rate": pytest.approx(100 / 3, abs=0.01)}
    assert summary["final"]["pass_rate"] == 100.0 and summary["applied"] is True
    # the user's clean branch was fast-forwarded to the run's result
    assert git(repo, "rev-parse", "HEAD") == summary["merged_commit"] != start
    assert git(repo, "rev-parse", summary["branch"]) == summary["merged_commit"]
    assert "return a * b" in (repo / "calc.py").read_text()
    log = git(repo, "log", "--format=%s", f"{start}..HEAD").splitlines()
    assert len(log) == 2 and "iteration 2 (conservative) candidate b" in log[0]
    assert Path(summary["report"]).is_file() and "Iteration 2" in Path(summary["report"]).read_text()
    assert_no_debris(repo)
    assert not (tmp_path / "worktrees").exists() or not any((tmp_path / "worktrees").rglob("*.py"))


def test_candidates_that_delete_or_skip_tests_are_rejected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    skip_all = "import pytest\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.skip('no'))\n"
    keep_passing = "from calc import add\n\ndef test_identity():\n    assert add(0, 0) == 0\n"
    agent = scripted_agent(
        tmp_path,
        {
            "a": {"write": {"tests/test_calc.py": keep_passing}, "confidence": 0.99},
            "b": {"write": {"conftest.py": skip_all}, "confidence": 0.99},
            "c": {"replace": FIX_ADD, "confidence": 0.1},
        },
    )
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--max-iterations", "1", "--json"])
    assert code == 1, err
    a, b, c = summary["iterations"][0]["candidates"]
    assert a["status"] == "rejected" and "test files" in a["reason"]
    assert b["status"] == "rejected" and "conftest.py" in b["reason"]
    assert c["status"] == "ok" and summary["iterations"][0]["winner"] == "c"
    assert (repo / "tests" / "test_calc.py").read_text() == textwrap.dedent(CALC["tests/test_calc.py"])
    assert not (repo / "conftest.py").exists()
    assert_no_debris(repo)


def test_deleting_tests_is_rejected_even_when_test_edits_are_allowed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC, explore_config="allow-test-edits = true\n")
    agent = scripted_agent(
        tmp_path,
        {
            "a": {
                "delete": ["tests/test_calc.py"],
                "write": {"tests/test_other.py": "def test_x():\n    pass\n"},
                "confidence": 1.0,
            }
        },
    )
    code, summary, err = run_cli(
        ["run", str(repo), "--agent-cmd", agent, "--parallel", "1", "--max-iterations", "1", "--json"]
    )
    assert code == 1, err
    (a,) = summary["iterations"][0]["candidates"]
    assert a["status"] == "rejected" and "vanish" in a["reason"]
    assert summary["merged_commit"] is None and summary["branch"] is None
    assert git(repo, "branch", "--list", "explore/*") == ""


def test_hanging_agent_is_killed_with_its_whole_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    pids = tmp_path / "hang.pids"
    # b fixes both bugs, c one: the run ends green in one iteration (a second showed nothing more)
    fixed = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
    agent = scripted_agent(
        tmp_path, {"a": {"hang": str(pids)}, "b": {"write": {"calc.py": fixed}}, "c": {"replace": FIX_MUL}}
    )
    code, summary, err = run_cli(
        ["run", str(repo), "--agent-cmd", agent, "--branch-timeout", "20", "--max-iterations", "1", "--json"]
    )
    first = summary["iterations"][0]["candidates"]
    assert first[0]["status"] == "timeout" and "branch-timeout" in first[0]["reason"]
    assert summary["iterations"][0]["winner"] == "b"  # 100 % against c's 66.7 %
    assert code == 0 and summary["final"]["pass_rate"] == 100.0, err
    for pid in map(int, pids.read_text().split()):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert_no_debris(repo)


def test_editable_src_layout_candidate_sees_its_own_code(tmp_path: Path) -> None:
    """The project is installed in editable mode from the user's checkout; each worktree must
    still import its own files, or the fix would look like it changed nothing."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = subprocess.run(
        [sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "explore_test_deps.pth").write_text(ours + "\n")  # pytest from explore's environment
    files = {
        "src/shop/__init__.py": "",
        "src/shop/money.py": "def cents(euros):\n    return int(euros * 10)\n",
        "tests/test_money.py": "from shop.money import cents\n\ndef test_cents():\n    assert cents(2) == 200\n\ndef test_zero():\n    assert cents(0) == 0\n",
        "pyproject.toml": (
            '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
            '[project]\nname = "shop"\nversion = "0"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n\n'
            f'[tool.explore]\npython = "{python}"\n'
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(repo)],
        check=True,
        capture_output=True,
    )
    git(repo, "status")  # the editable install wrote only ignored or external files
    probe = subprocess.run(
        [str(python), "-c", "import shop.money; print(shop.money.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert str(repo / "src") in probe.stdout
    agent = scripted_agent(tmp_path, {"a": {"replace": {"src/shop/money.py": ["euros * 10", "euros * 100"]}}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--parallel", "1", "--json"])
    assert code == 0, err
    assert summary["iterations"][0]["candidates"][0]["pass_rate"] == 100.0
    assert_no_debris(repo)


def test_dirty_tree_is_never_touched(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    (repo / "calc.py").write_text(
        (repo / "calc.py").read_text().replace("return a + b", "return a * b")
    )  # user's own fix of mul, uncommitted
    (repo / "notes.txt").write_text("my untracked notes\n")
    before = {p: p.read_bytes() for p in (repo / "calc.py", repo / "notes.txt", repo / "tests" / "test_calc.py")}
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--parallel", "1", "--json"])
    assert code == 0, err
    assert summary["applied"] is False and summary["merged_commit"]
    assert {p: p.read_bytes() for p in before} == before
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == status
    fixed = git(repo, "show", f"{summary['branch']}:calc.py")
    assert "return a + b" in fixed and "return a * b" in fixed
    assert git(repo, "show", f"{summary['branch']}:notes.txt") == "my untracked notes"
    assert_no_debris(repo)


def test_no_git_identity_still_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "empty-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--parallel", "2", "--json"])
    assert code == 0, err
    assert git(repo, "log", "-1", "--format=%an <%ae>") == "explore <explore@localhost>"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--parallel", "0"], "parallel"),
        (["--strategy", "bogus"], "unknown strategy 'bogus'"),
        (["--agent", "bogus"], "unknown agent 'bogus'"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    code, summary, err = run_cli(["run", str(repo), *args, "--json"])
    assert code == 2
    assert summary == {"status": "error", "exit_code": 2, "error": summary["error"]} and needle in summary["error"]
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    assert git(repo, "branch", "--list", "explore/*") == "" and not (repo / ".explore" / "runs").exists()


def test_not_a_git_repo_exits_2(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    code, _, err = run_cli(["run", str(tmp_path / "plain")])
    assert code == 2 and "not a git repository" in err and len(err.strip().splitlines()) == 1


def test_already_green_exits_0_without_iterations(tmp_path: Path) -> None:
    files = dict(CALC, **{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"})
    repo = make_repo(tmp_path / "repo", files)
    head = git(repo, "rev-parse", "HEAD")
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", "false", "--json"])
    assert code == 0, err
    assert summary["status"] == "succeeded" and summary["iterations"] == [] and summary["branch"] is None
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "branch", "--list", "explore/*") == ""
    assert_no_debris(repo)


def test_missing_test_command_escalates_as_infrastructure(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    code, summary, err = run_cli(
        ["run", str(repo), "--test-cmd", "no-such-test-runner-xyz", "--agent-cmd", "true", "--json"]
    )
    assert code == 3, err
    assert summary["status"] == "escalated" and summary["iterations"] == []
    assert summary["escalation"]["category"] == "infrastructure" and "not found" in summary["escalation"]["reason"]
    assert "HELP NEEDED" in err and "explore resume" in err
    assert_no_debris(repo)


def test_custom_test_command_with_junit_placeholder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}})
    test_cmd = f"{sys.executable} -m pytest -q -p no:cacheprovider --junit-xml={{junit}}"
    code, summary, err = run_cli(
        ["run", str(repo), "--agent-cmd", agent, "--test-cmd", test_cmd, "--parallel", "2", "--json"]
    )
    assert code == 0, err
    assert summary["baseline"]["total"] == 3 and summary["final"]["pass_rate"] == 100.0
    assert (
        any(t.startswith("tests/test_calc.py::") for t in summary["iterations"][0]["failed_tests"])
        or summary["iterations"][0]["failed_tests"] == []
    )


def test_a_credential_printed_by_the_tests_is_in_no_file_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tests run with the user's environment; what they print of the key is redacted everywhere
    explore writes: test logs and reports, the mutate worker's files, state and report."""
    key = "sk-ant-mutate-run-0123456789-SECRET"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    files = {
        **CALC,
        "tests/test_env.py": """\
        import os
        import sys


        def test_env_is_the_users():
            print("stdout", os.environ["ANTHROPIC_API_KEY"])
            print("stderr", os.environ["ANTHROPIC_API_KEY"], file=sys.stderr)
            assert os.environ["ANTHROPIC_API_KEY"].endswith("SECRET")
            assert os.environ["ANTHROPIC_API_KEY"] == "a different key"
        """,
    }
    repo = make_repo(tmp_path / "repo", files)
    code, summary, err = run_cli(
        ["run", str(repo), "--agent", "mutate", "--parallel", "2", "--max-iterations", "1", "--json"]
    )
    assert summary is not None and summary["iterations"], err
    assert "tests/test_env.py::test_env_is_the_users" in summary["remaining_failures"]
    written = [p for p in (repo / ".explore").rglob("*") if p.is_file()]
    assert any("[redacted]" in p.read_text(errors="replace") for p in written)  # the output was there, redacted
    assert [str(p) for p in written if key in p.read_text(errors="replace")] == []
    assert key not in json.dumps(summary) + err
    assert_no_debris(repo)
