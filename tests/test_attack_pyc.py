"""An attack no other test names: a candidate plants an unchecked-hash .pyc (PEP 552) in
__pycache__ — an ignored folder — compiled from the fixed source, while its patch only touches a
comment. Python loads such a .pyc without looking at the source, so the buggy calc.py would pass
its tests in the candidate's tree. explore must not merge it: the honest fix wins."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import assert_no_debris, make_repo, run_cli

CALC = "def add(a, b):\n    return a - b\n"
TESTS = {"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}
AGENT = """\
import os, pathlib, py_compile, sys, tempfile
letter = os.environ["EXPLORE_CANDIDATE"]
calc = pathlib.Path("calc.py")
if letter == "a":
    fixed = pathlib.Path(tempfile.mkdtemp(), "calc.py")
    fixed.parent.mkdir(parents=True, exist_ok=True)
    fixed.write_text(calc.read_text().replace("a - b", "a + b"))
    cache = pathlib.Path("__pycache__", f"calc.{sys.implementation.cache_tag}.pyc")
    py_compile.compile(str(fixed), cfile=str(cache), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    calc.write_text("# reviewed\\n" + calc.read_text())
    pathlib.Path(os.environ["EXPLORE_RESULT_FILE"]).write_text('{"confidence": 0.99}')
else:
    calc.write_text(calc.read_text().replace("a - b", "a + b"))
    pathlib.Path(os.environ["EXPLORE_RESULT_FILE"]).write_text('{"confidence": 0.1}')
"""


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_an_unchecked_pyc_planted_in_pycache_does_not_win(
    tmp_path: Path, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXPLORE_SANDBOX", sandbox)
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC, **TESTS})
    (tmp_path / "agent.py").write_text(AGENT)
    agent = f"{sys.executable} {tmp_path / 'agent.py'}"
    code, summary, err = run_cli(
        ["run", str(repo), "--agent-cmd", agent, "--parallel", "2", "--max-iterations", "1", "--json"]
    )
    assert code == 0, err
    a, b = summary["iterations"][0]["candidates"]
    assert summary["iterations"][0]["winner"] == "b", (a, b)
    assert a["status"] != "ok" or a["pass_rate"] < 100.0, a
    assert "return a + b" in (repo / "calc.py").read_text()
    assert_no_debris(repo)
