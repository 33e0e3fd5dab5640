"""Issue 31: what is merged is exactly what was tested. Each trick is candidate a at confidence
0.99 beside the honest one-line fix b at 0.3, in the style of the tamper corpus (test_tamper.py):
the trick must not win, b must, and the user's branch must hold b's fix."""

from __future__ import annotations

from pathlib import Path

from conftest import assert_no_debris, make_repo, run_cli
from test_run_e2e import scripted_agent
from test_tamper import FILES, pyproject

HONEST = {"replace": {"calc.py": ["return a - b", "return a + b"]}, "confidence": 0.3}


def run_two(tmp_path: Path, trick: dict, files: dict[str, str] | None = None, *flags: str) -> tuple[dict, dict, dict]:
    repo = make_repo(tmp_path / "repo", files or {**FILES, "pyproject.toml": pyproject()})
    agent = scripted_agent(tmp_path, {"a": {**trick, "confidence": 0.99}, "b": HONEST})
    code, summary, err = run_cli(["run", str(repo), "--agent", "command", "--agent-cmd", agent, "--parallel", "2",
                                  "--max-iterations", "1", "--json", *flags])
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
    files = {**FILES, "pyproject.toml": pyproject(), "tests/test_todo.py": "def test_todo():\n    assert False, 'not written yet'\n"}
    trick = {"write": {"calc_extra.py": DOCTESTS, "test_notes.txt": ">>> 1 + 1\n2\n"}}
    summary, a, b = run_two(tmp_path, trick, files, "--", "tests/test_calc.py::test_add")
    assert a["status"] == "ok" and a["pass_rate"] == summary["baseline"]["pass_rate"] == 25.0, a
    assert b["status"] == "ok" and b["pass_rate"] == 75.0, b
    assert summary["final"] == {"passed": 3, "failed": 1, "total": 4, "pass_rate": 75.0}
