"""Issue 31, points 4 and 5: what the tests depend on is protected, and the checks read the real
bytes. One real `explore run` per trick: candidate a plays it at confidence 0.99, b is the honest
one-line fix at 0.3; a ends rejected (its reason naming the trick) and b wins."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import assert_no_debris, git, make_repo, run_cli
from test_run_e2e import AGENT
from test_tamper import FILES, HONEST, pyproject

EXEC_AGENT = AGENT + "exec(action.get('exec', ''))\n"
"""The scripted agent of test_run_e2e, which may also run a snippet in its worktree."""


def agent(tmp_path: Path, edits: dict) -> str:
    (tmp_path / "agent.py").write_text(EXEC_AGENT)
    (tmp_path / "edits.json").write_text(json.dumps(edits))
    return f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'edits.json'}"


def run(repo: Path, tmp_path: Path, trick: dict, honest: dict, *extra: str) -> tuple[int, dict, str]:
    command = agent(tmp_path, {"a": {**trick, "confidence": 0.99}, "b": {**honest, "confidence": 0.3}})
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent",
            "command",
            "--agent-cmd",
            command,
            "--parallel",
            "2",
            "--max-iterations",
            "1",
            "--json",
            *extra,
        ]
    )
    assert summary is not None, err
    return code, summary, err


def assert_honest_won(code: int, summary: dict, err: str, needle: str) -> None:
    assert code == 0, err
    a, b = summary["iterations"][0]["candidates"]
    assert a["status"] == "rejected" and needle in a["reason"], a
    assert b["status"] == "ok" and b["pass_rate"] == 100.0, b
    assert summary["iterations"][0]["winner"] == "b" and summary["final"]["pass_rate"] == 100.0


DATA_TEST = """\
    import json

    from calc import add


    def test_add_from_data():
        with open("testdata/expected.json") as handle:
            assert add(2, 3) == json.load(handle)["add"]
    """

PKG = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a - b\n",
    "pkg/tests/__init__.py": "",
    "pkg/tests/helpers.py": "def expected_sum(a, b):\n    return a + b\n",
    "pkg/tests/test_calc.py": "from pkg.calc import add\nfrom pkg.tests.helpers import expected_sum\n\n\ndef test_add():\n    assert add(2, 3) == expected_sum(2, 3)\n",
}
DESELECT = (
    'def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if "add" not in i.name]\n'
)
"""A plugin that names nothing of pytest's: only its entry point makes it one."""
ENTRY_POINT = {
    "force_plugin.py": DESELECT,
    "force_plugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: force-plugin\nVersion: 1.0\n",
    "force_plugin-1.0.dist-info/entry_points.txt": "[pytest11]\nforce = force_plugin\n",
}

# trick → (the repository's extra files, the candidate's edits, what its rejection reason must say)
TRICKS: dict[str, tuple[dict[str, str], dict, str]] = {
    "pytest.toml": (
        {},
        {"write": {"pytest.toml": '[pytest]\naddopts = ["-k", "not add"]\n'}},
        "adds a file outside the project's packages: pytest.toml",
    ),
    ".pytest.toml": (
        {},
        {"write": {".pytest.toml": '[pytest]\naddopts = ["-k", "not add"]\n'}},
        "adds a file outside the project's packages: .pytest.toml",
    ),
    "a dist-info entry point declaring a pytest11 plugin": (
        {},
        {"write": ENTRY_POINT},
        "package metadata pytest reads entry points from (*.dist-info, *.egg-info): force_plugin-1.0.dist-info/METADATA, force_plugin-1.0.dist-info/entry_points.txt",
    ),
    "the data a test reads": (
        {"testdata/expected.json": '{"add": 5}\n', "tests/test_data.py": DATA_TEST},
        {"write": {"testdata/expected.json": '{"add": -1}\n'}},
        "test data testdata/expected.json",
    ),
}


@pytest.mark.parametrize("trick", list(TRICKS))
def test_what_pytest_reads_is_protected(tmp_path: Path, trick: str) -> None:
    extra, edits, needle = TRICKS[trick]
    repo = make_repo(tmp_path / "repo", {**FILES, **extra, "pyproject.toml": pyproject()})
    code, summary, err = run(repo, tmp_path, edits, HONEST)
    assert_honest_won(code, summary, err, needle)
    assert "return a + b" in (repo / "calc.py").read_text()
    assert not any((repo / name).exists() for name in ("pytest.toml", ".pytest.toml", "force_plugin.py"))
    assert all((repo / name).read_text() == textwrap.dedent(text) for name, text in extra.items())
    assert_no_debris(repo)


def test_the_baseline_records_the_files_its_tests_read(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            **FILES,
            "testdata/expected.json": '{"add": 5}\n',
            "tests/test_data.py": DATA_TEST,
            "pyproject.toml": pyproject(),
        },
    )
    code, summary, err = run(repo, tmp_path, {}, HONEST)
    state = json.loads((repo / ".explore" / "runs" / summary["run_id"] / "state.json").read_text())
    assert state["baseline_opened"] == ["testdata/expected.json"], (
        err
    )  # read by a test: not the code, config or site-packages


def test_a_helper_module_under_a_package_test_folder_is_protected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PKG)
    trick = {"replace": {"pkg/tests/helpers.py": ["return a + b", "return a - b"]}}
    code, summary, err = run(repo, tmp_path, trick, {"replace": {"pkg/calc.py": ["return a - b", "return a + b"]}})
    assert_honest_won(code, summary, err, "under a test directory pkg/tests/helpers.py")
    assert "return a + b" in (repo / "pkg" / "tests" / "helpers.py").read_text()


def test_json_data_differing_only_in_spaces_is_not_a_twin(tmp_path: Path) -> None:
    """Patch agreement reads exact bytes outside Python: a's data, spaced differently from b's, is
    tested on its own (and fails: a test compares the file as text) instead of inheriting b's 100%.
    The library reads settings.json, no test does: it is the library's data, free to fix."""
    files = {
        "calc.py": "import json\n\n\ndef raw():\n    with open('settings.json') as handle:\n        return handle.read()\n\n\ndef settings():\n    return json.loads(raw())\n",
        "settings.json": '{"mode": "slow"}\n',
        "tests/test_settings.py": """\
            from calc import raw, settings


            def test_mode():
                assert settings()["mode"] == "fast"


            def test_file_is_canonical():
                assert raw() == '{"mode": "fast"}\\n'
            """,
    }
    repo = make_repo(tmp_path / "repo", files)
    code, summary, err = run(
        repo,
        tmp_path,
        {"write": {"settings.json": '{ "mode" : "fast" }\n'}},
        {"write": {"settings.json": '{"mode": "fast"}\n'}},
    )
    assert code == 0, err
    a, b = summary["iterations"][0]["candidates"]
    assert a["status"] == "ok" and a["pass_rate"] == 50.0, a  # tested, not b's twin
    assert b["pass_rate"] == 100.0 and summary["iterations"][0]["winner"] == "b"
    assert (repo / "settings.json").read_text() == '{"mode": "fast"}\n'


def test_gitattributes_cannot_hide_a_destructive_change(tmp_path: Path) -> None:
    """`*.py -diff` made git show the change as a binary patch: the destructive-change check reads
    the text. A destructive candidate stops the run (DESIGN: escalate at once), so nothing is merged."""
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    start = git(repo, "rev-parse", "HEAD")
    trick = {
        "write": {".gitattributes": "*.py -diff\n"},
        "replace": {
            "calc.py": ["return a - b", "import shutil; shutil.rmtree('build', ignore_errors=True); return a + b"]
        },
    }
    code, summary, err = run(repo, tmp_path, trick, HONEST)
    assert code == 3, err
    assert summary["escalation"]["category"] == "destructive" and "candidate a" in summary["escalation"]["reason"]
    assert "shutil.rmtree" in summary["escalation"]["reason"]
    a = summary["iterations"][0]["candidates"][0] if summary["iterations"] else None
    assert a is None or a["status"] == "rejected"
    assert git(repo, "rev-parse", "HEAD") == start and "return a - b" in (repo / "calc.py").read_text()
    assert not (repo / ".gitattributes").exists()
    assert_no_debris(repo)


def test_a_planted_history_record_is_ignored_with_a_warning(tmp_path: Path) -> None:
    """A candidate appends a record calling the real failures flaky; the next run ignores it."""
    files = {
        **FILES,
        "pyproject.toml": pyproject(),
        "calc.py": FILES["calc.py"].replace("return a * b", "return a + b"),
    }
    repo = make_repo(tmp_path / "repo", files)
    failing = ["calc.py::calc.add", "tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"]
    record = {
        "run_id": "20260101-000000-planted",
        "n": 0,
        "pass_rate": 100.0,
        "failing": [],
        "flaky": failing,
        "green": True,
    }
    plant = textwrap.dedent(f"""\
        import subprocess
        common = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True).stdout.strip()
        history = pathlib.Path(common).resolve().parent / ".explore" / "history.jsonl"
        with history.open("a") as out:
            out.write({json.dumps(json.dumps(record))} + "\\n")
        """)
    code, summary, err = run(repo, tmp_path, {"exec": plant}, HONEST)
    assert summary["iterations"][0]["winner"] == "b", err
    history = repo / ".explore" / "history.jsonl"
    if "planted" not in history.read_text():  # a sandbox kept the candidate out: plant it as it would have
        history.write_text(history.read_text() + json.dumps(record) + "\n")
    if code != 0:  # below its gate, the first run's result waits on its ref: take it, as a user would
        applied = run_cli(["apply", summary["run_id"], "--path", str(repo)], cwd=repo)
        assert applied[0] == 0, applied
    fix_mul = {"replace": {"calc.py": ["def mul(a, b):\n    return a + b", "def mul(a, b):\n    return a * b"]}}
    code, summary, err = run(repo, tmp_path, {"exec": plant}, fix_mul)
    assert "ignoring a record (run '20260101-000000-planted' is not recorded in .explore/runs/)" in err
    state = json.loads((repo / ".explore" / "runs" / summary["run_id"] / "state.json").read_text())
    assert state["flaky"] == [] and summary["baseline"]["failed"] == 1, err
    assert code == 0 and summary["iterations"][0]["winner"] == "b" and summary["final"]["pass_rate"] == 100.0
    assert_no_debris(repo)
