"""Issue 31: what is merged is exactly what was tested. Each trick is candidate a at confidence
0.99 beside the honest one-line fix b at 0.3, in the style of the tamper corpus (test_tamper.py):
the trick must not win, b must, and the user's branch must hold b's fix."""

from __future__ import annotations

import random
from pathlib import Path

from conftest import assert_no_debris, git, make_repo, run_cli
from test_run_e2e import scripted_agent
from test_tamper import FILES, pyproject

HONEST = {"replace": {"calc.py": ["return a - b", "return a + b"]}, "confidence": 0.3}


def run_two(tmp_path: Path, trick: dict, files: dict[str, str] | None = None, *flags: str) -> tuple[dict, dict, dict]:
    repo = make_repo(tmp_path / "repo", files or {**FILES, "pyproject.toml": pyproject()})
    agent = scripted_agent(tmp_path, {"a": {**trick, "confidence": 0.99}, "b": HONEST})
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent",
            "command",
            "--agent-cmd",
            agent,
            "--parallel",
            "2",
            "--max-iterations",
            "1",
            "--json",
            *flags,
        ]
    )
    assert code == 0, err
    assert summary is not None and summary["iterations"][0]["winner"] == "b", summary
    assert "return a + b" in (repo / "calc.py").read_text()
    assert_no_debris(repo)
    a, b = summary["iterations"][0]["candidates"]
    return summary, a, b


DOCTESTS = "".join(f'def f{k}():\n    """\n    >>> f{k}()\n    {k}\n    """\n    return {k}\n\n\n' for k in range(40))


def test_new_tests_and_doctests_never_raise_the_score(tmp_path: Path) -> None:
    """40 new passing doctests and a `.txt` doctest, no fix: counted as passes they would score
    42/45 = 93.3% against the honest fix's 3/4 (a test nobody fixes stays failing)."""
    files = {
        **FILES,
        # the change policy would reject the new module outright: widened, the score is the defence
        "pyproject.toml": pyproject() + 'allow-new-files = ["*"]\n',
        "tests/test_todo.py": "def test_todo():\n    assert False, 'not written yet'\n",
    }
    trick = {"write": {"calc_extra.py": DOCTESTS, "test_notes.txt": ">>> 1 + 1\n2\n"}}
    summary, a, b = run_two(tmp_path, trick, files, "--", "tests/test_calc.py::test_add")
    assert a["status"] == "ok" and a["pass_rate"] == summary["baseline"]["pass_rate"] == 25.0, a
    assert b["status"] == "ok" and b["pass_rate"] == 75.0, b
    assert summary["final"] == {"passed": 3, "failed": 1, "total": 4, "pass_rate": 75.0}


REWRITE_B = """\
import pathlib as _pathlib, time as _time
def _rewrite_the_winners_patch():
    gitdir = _pathlib.Path(_pathlib.Path(__file__).resolve().with_name(".git").read_text().split(":", 1)[1].strip())
    root, deadline = gitdir.parents[2], _time.monotonic() + 60
    while _time.monotonic() < deadline:
        for diff in root.glob(".explore/runs/*/iteration-1/candidate-b/candidate.diff"):
            if diff.stat().st_size:
                diff.write_text(_pathlib.Path(EVIL_PATH).read_text())
                return
        _time.sleep(0.05)
_rewrite_the_winners_patch()
"""


def test_the_commit_is_built_from_the_tested_bytes_not_the_patch_file(tmp_path: Path) -> None:
    """a's library code, imported by its tests, rewrites b's candidate.diff on disk into b's fix
    plus a conftest.py and a weakened test: the commit is b's patch as it was tested."""
    scratch = make_repo(tmp_path / "scratch", {**FILES, "pyproject.toml": pyproject()})
    (scratch / "calc.py").write_text((scratch / "calc.py").read_text().replace("return a - b", "return a + b"))
    (scratch / "conftest.py").write_text("def pytest_report_header():\n    return 'planted'\n")
    test_file = scratch / "tests" / "test_calc.py"
    test_file.write_text(test_file.read_text().replace("assert mul(2, 3) == 6", "assert True"))
    git(scratch, "add", "-A")
    evil = tmp_path / "evil.diff"
    evil.write_text(git(scratch, "diff", "--cached", "--binary") + "\n")
    trick = {
        "replace": {
            "calc.py": ["def add(a, b):", REWRITE_B.replace("EVIL_PATH", repr(str(evil))) + "\n\ndef add(a, b):"]
        }
    }
    # the sandbox (issue 23) would stop this write; what is committed must not depend on it
    summary, a, b = run_two(tmp_path, trick, {**FILES, "pyproject.toml": pyproject() + 'sandbox = "off"\n'})
    repo = tmp_path / "repo"
    rewritten = list((repo / ".explore" / "runs").glob("*/iteration-1/candidate-b/candidate.diff"))
    assert rewritten and rewritten[0].read_text() == evil.read_text()  # the trick did rewrite the file
    assert not (repo / "conftest.py").exists()
    assert "assert mul(2, 3) == 6" in (repo / "tests" / "test_calc.py").read_text()
    assert git(repo, "show", "--stat", "--format=", "HEAD").split("\n")[0].strip().startswith("calc.py")
    assert b["status"] == "ok" and b["pass_rate"] == 100.0


SELF_IGNORING = {
    "calc/.gitignore": "*\n",
    "calc/__init__.py": """\
import pathlib
_source = pathlib.Path(__file__).resolve().parent.parent / "calc.py"
exec(compile(_source.read_text(), str(_source), "exec"))


def add(a, b):
    return a + b
""",
}
"""A package that shadows calc.py (a package wins over a module of the same name) and ignores itself."""


def test_ignored_files_a_candidate_leaves_are_gone_when_its_tests_run(tmp_path: Path) -> None:
    """a changes a docstring and leaves a self-ignoring package that shadows the module with a
    fixed `add`: its tests run without it. The user's included ignored file is there for every
    candidate's tests."""
    files = {
        "calc.py": 'def add(a, b):\n    """Add two numbers."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
        "tests/test_calc.py": MONEY["tests/test_calc.py"],
        ".gitignore": "__pycache__/\nlocal.cfg\n",
        "tests/test_local.py": "from pathlib import Path\n\n\ndef test_local_config():\n    assert Path('local.cfg').read_text() == 'ok\\n'\n",
    }
    trick = {"replace": {"calc.py": ['"""Add two numbers.', '"""Add two numbers (checked).']}, "write": SELF_IGNORING}
    repo = make_repo(tmp_path / "repo", files, explore_config='worktree-include = ["local.cfg"]\n')
    (repo / "local.cfg").write_text("ok\n")
    agent = scripted_agent(tmp_path, {"a": {**trick, "confidence": 0.99}, "b": HONEST})
    # --shards 1: every full run is one job in the candidate's own worktree, where it left the package
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent",
            "command",
            "--agent-cmd",
            agent,
            "--parallel",
            "2",
            "--max-iterations",
            "1",
            "--shards",
            "1",
            "--json",
        ]
    )
    assert code == 0, err
    a, b = summary["iterations"][0]["candidates"]
    assert summary["iterations"][0]["winner"] == "b", summary
    # a's tests ran without its package (its docstring change alone: the baseline's rate), unless b's
    # affected tests passed first and stopped a's whole run (b then outranks it whatever it finds)
    assert (
        a["pass_rate"] == summary["baseline"]["pass_rate"] == 66.6667 if a["tested"] else "b outranks" in a["reason"]
    ), a
    assert b["status"] == "ok" and b["pass_rate"] == 100.0, b
    assert (
        summary["iterations"][0]["timing"]["confirmation"] == 0
    )  # b's scored run was one unsharded job: the confirmation
    assert "return a + b" in (repo / "calc.py").read_text() and (repo / "local.cfg").read_text() == "ok\n"
    assert_no_debris(repo)


MONEY = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "tests/test_money.py": "from decimal import Decimal\n\n\ndef test_a_third():\n    assert Decimal(1) / Decimal(3) == Decimal('0.3333333333333333333333333333')\n",
}


def test_global_state_changed_at_import_is_caught_by_the_unsharded_validation(tmp_path: Path) -> None:
    """a fixes `add` and sets the `decimal` context at import: tests/test_money.py, which does not
    import calc, passes in its own shard and fails in one pytest process, as the user runs it. With
    --shards 2 the baseline shards, but a candidate's validation is one unsharded job on its tree
    (issue 40: the winner's suite runs once): a's trick fails there when a runs it (b's affected
    tests pass too, and whichever's end first runs its whole suite at once; when b's, a cannot
    beat its 100 % and is not run again). Either way b, honest, is merged, with no confirmation."""
    repo = make_repo(tmp_path / "repo", MONEY)
    trick = {
        "replace": {
            "calc.py": [
                "def add(a, b):\n    return a - b",
                "import decimal\n\ndecimal.getcontext().prec = 6\n\n\ndef add(a, b):\n    return a + b",
            ]
        }
    }
    agent = scripted_agent(tmp_path, {"a": {**trick, "confidence": 0.99}, "b": HONEST})
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent",
            "command",
            "--agent-cmd",
            agent,
            "--parallel",
            "2",
            "--max-iterations",
            "1",
            "--shards",
            "2",
            "--json",
        ]
    )
    assert code == 0, err
    a, b = summary["iterations"][0]["candidates"]
    assert "baseline: the suite split into" in err, err
    assert a["id"] == "a" and "decimal" not in b.get("hypothesis", "")
    assert b["status"] == "ok" and summary["iterations"][0]["winner"] == "b", summary
    assert summary["final"]["pass_rate"] == 100.0 and "decimal" not in (repo / "calc.py").read_text()
    assert summary["iterations"][0]["timing"]["confirmation"] == 0
    assert_no_debris(repo)


def test_a_patch_over_the_size_limit_is_rejected_and_its_binary_named(tmp_path: Path) -> None:
    """a is the honest fix plus 1.5 MB of incompressible binary data, over `max-patch-size = "1M"`."""
    rng = random.Random(31)
    blob = "\x00" + "".join(chr(rng.randrange(1, 127)) for _ in range(1_500_000))
    files = {**FILES, "pyproject.toml": pyproject() + 'max-patch-size = "1M"\n'}
    trick = {**HONEST, "write": {"assets/blob.bin": blob}}
    summary, a, b = run_two(tmp_path, trick, files)
    assert (
        a["status"] == "rejected" and "over max-patch-size (1 MiB)" in a["reason"] and "assets/blob.bin" in a["reason"]
    ), a
    assert not (tmp_path / "repo" / "assets").exists()
    assert "assets/blob.bin" in Path(summary["report"]).read_text()


SLOW_SUITE = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    **{
        f"tests/test_slow_{k}.py": "import time\n\nfrom calc import add\n\n\n"
        + "".join(
            f"def test_{k}_{n}():\n    time.sleep(0.3)\n    assert add({n}, 1) == {n + 1}\n\n\n" for n in range(5)
        )
        for k in range(2)
    },
}


def test_the_winners_validation_is_one_unsharded_job_and_so_its_confirmation(tmp_path: Path) -> None:
    """3 s of tests in two files: worth two shards by the baseline's durations. The winner's full
    suite still runs as one job on its exact tree (its twin's, the same change, counts too), which
    is the final confirmation: no second run of the suite (issue 27.5)."""
    repo = make_repo(tmp_path / "repo", SLOW_SUITE)
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent",
            "command",
            "--agent-cmd",
            "sed -i 's/a - b/a + b/' calc.py",
            "--parallel",
            "2",
            "--max-iterations",
            "1",
            "--json",
        ]
    )
    assert code == 0, err
    assert summary["status"] == "succeeded" and "return a + b" in (repo / "calc.py").read_text()
    iteration = summary["iterations"][0]
    assert iteration["timing"]["confirmation"] == 0, iteration["timing"]
    iteration_dir = repo / ".explore" / "runs" / summary["run_id"] / "iteration-1"
    logs = sorted(p.relative_to(iteration_dir).as_posix() for p in iteration_dir.glob("candidate-*/*.log"))
    assert "tests.log" in {Path(p).name for p in logs}, logs  # the full suite ran (in a twin's folder, if any)
    assert not [p for p in logs if "shard" in p or "confirmation" in p], logs
    assert_no_debris(repo)
