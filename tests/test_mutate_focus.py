"""Issue 40.3: mutate's per-test coverage without a second suite and without a tracer on the whole
baseline. Before Python 3.12 (no sys.monitoring) the baseline runs as it would without mutate, and
propose measures the failing tests' own files alone — real `explore run` processes, real pytest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.generators.mutate import localise

BUG = {
    "calc.py": "def area(w, h):\n    return w + h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n",
    "tests/test_area.py": "from calc import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n\n\n"
    "def test_square():\n    assert area(2, 2) == 4\n",
    "tests/test_perimeter.py": "from calc import perimeter\n\n\ndef test_perimeter():\n    assert perimeter(2, 3) == 10\n\n\n"
    "def test_line():\n    assert perimeter(0, 4) == 8\n",
}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+: the baseline records through sys.monitoring")
def test_before_3_12_the_baseline_runs_untraced_and_propose_measures_the_failing_tests_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", BUG)
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--parallel", "2", "--json"])
    assert code == 0 and summary is not None and summary["status"] == "succeeded", err
    assert "return w * h" in (repo / "calc.py").read_text()
    run_dir = repo / ".explore" / "runs" / summary["run_id"]
    carried = json.loads((run_dir / "mutate-baseline" / "coverage-run.json").read_text())
    assert carried["status"] == "skipped" and "sys.monitoring" in carried["reason"] and "trace" not in carried
    measured = json.loads((run_dir / "iteration-1" / "mutate" / "coverage-run.json").read_text())
    tests = {t for info in measured["trace"]["files"].values() for ts in info["contexts"].values() for t in ts}
    assert tests - {localise.IMPORT_TIME} == {"tests/test_area.py::test_area", "tests/test_area.py::test_square"}
    assert_no_debris(repo)


def test_the_focus_is_the_failing_tests_files_with_their_passing_tests(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / "tests" / name).write_text("")
    passing = ["tests/test_a.py::test_ok", "tests/test_b.py::test_ok", "tests/test_a.py::TestX::test_y[1]"]
    files, contrast = localise.focus(["tests/test_a.py::TestX::test_z[2]"], passing, tmp_path)
    assert files == ["tests/test_a.py"]
    assert contrast == ["tests/test_a.py::test_ok", "tests/test_a.py::TestX::test_y[1]"]
    # a failing id that names no file (a collection error elsewhere): the whole suite, as before
    assert localise.focus(["tests/test_a.py::t", "<collection>"], passing, tmp_path) == ([], passing)
