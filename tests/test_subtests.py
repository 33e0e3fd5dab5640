"""Issue 12: subtests fold into their parent test; unknown outcome strings are errors that name them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import assert_no_debris, built_once, fresh_venv, make_repo, run_cli
from explore.edges.outcomes import fold_record, outcome_of, read_json_report, read_junit
from explore.edges.testing import TestCommand, run_tests
from explore.model.testresults import TestOutcome, TestRun

TABLE = {
    "calc.py": """\
        def add(a, b):
            return a - b
        """,
    "tests/test_calc.py": """\
        import unittest

        from calc import add


        class TestAdd(unittest.TestCase):
            def test_table(self):
                for a, b, want in [(0, 0, 0), (1, 0, 1), (1, 1, 2), (2, 3, 5)]:
                    with self.subTest(a=a, b=b):
                        self.assertEqual(add(a, b), want)

            def test_zero(self):
                self.assertEqual(add(0, 0), 0)
        """,
}


def _has(python: str, module: str) -> bool:
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


# --- parsing (pure) ----------------------------------------------------------------------------


def test_outcome_strings() -> None:
    assert outcome_of("passed") == ("passed", "")
    assert outcome_of("subtests passed") == ("passed", "")
    assert outcome_of("subtests failed") == ("failed", "")
    assert outcome_of("xfailed") == ("xfailed", "")
    outcome, message = outcome_of("rerun")
    assert outcome == "error" and "'rerun'" in message


def test_an_unknown_outcome_in_a_json_report_is_an_error_that_names_it(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    report.write_text(
        json.dumps(
            {
                "tests": [
                    {"nodeid": "t.py::a", "outcome": "subtests passed", "call": {"outcome": "passed", "duration": 0.5}},
                    {"nodeid": "t.py::b", "outcome": "weird", "call": {"outcome": "passed", "duration": 0.1}},
                ]
            }
        )
    )
    run = TestRun()
    read_json_report(report, run)
    assert run.outcomes["t.py::a"].outcome == "passed" and run.outcomes["t.py::a"].duration_s == 0.5
    assert run.outcomes["t.py::b"].outcome == "error" and "'weird'" in run.outcomes["t.py::b"].message


def test_failing_subtests_fold_into_a_parent_that_claims_to_pass(tmp_path: Path) -> None:
    """pytest-subtests under pytest 8 reports the parent `subtests passed` even when one failed."""
    record = tmp_path / "r.record"
    record.write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {
                    "kind": "subtest",
                    "nodeid": "t.py::f",
                    "subtest": "(i=1)",
                    "message": "assert 1 != 1",
                    "longrepr": "E  assert 1 != 1",
                },
                {
                    "kind": "subtest",
                    "nodeid": "t.py::f",
                    "subtest": "(i=2)",
                    "message": "assert 2 != 2",
                    "longrepr": "E  assert 2 != 2",
                },
                {
                    "kind": "hard_timeout",
                    "nodeid": "t.py::h",
                    "message": "ExploreTestTimeout: ignored",
                    "longrepr": "stack",
                    "duration": 3,
                },
            ]
        )
        + '\n{"kind": "subt'
    )  # a line cut short by the watchdog's exit
    run = TestRun(
        outcomes={
            "t.py::f": TestOutcome(id="t.py::f", outcome="passed"),
            "t.py::g": TestOutcome(id="t.py::g", outcome="passed"),
        }
    )
    fold_record(record, run)
    f = run.outcomes["t.py::f"]
    assert f.outcome == "failed"
    assert f.message == "subtest (i=1): assert 1 != 1; subtest (i=2): assert 2 != 2"
    assert "assert 2 != 2" in f.longrepr
    assert run.outcomes["t.py::g"].outcome == "passed"
    assert run.outcomes["t.py::h"].outcome == "timeout" and run.outcomes["t.py::h"].duration_s == 3


def test_junit_with_several_failures_in_one_testcase(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("")
    xml = tmp_path / "r.xml"
    xml.write_text(
        textwrap.dedent("""\
        <testsuites><testsuite>
        <testcase classname="t" name="test_f" time="0.25"><failure message="assert 1 != 1">tb1</failure>
          <failure message="contains 1 failed subtest">contains 1 failed subtest</failure></testcase>
        <testcase classname="t" name="test_g" time="0.01" />
        </testsuite></testsuites>""")
    )
    run = TestRun()
    read_junit(xml, run, tmp_path)
    assert run.outcomes["t.py::test_f"].outcome == "failed" and run.outcomes["t.py::test_f"].message == "assert 1 != 1"
    assert run.outcomes["t.py::test_f"].duration_s == 0.25 and run.outcomes["t.py::test_g"].outcome == "passed"


# --- real pytest runs --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("json_report", [True, False], ids=["json-report", "junit"])
async def test_fifty_tests_with_passing_subtests_count_one_failure(tmp_path: Path, json_report: bool) -> None:
    """Acceptance: 50 tests, 20 with all-passing subtests, one plain failing test → exactly 1 failing."""
    sub_unittest = "".join(
        f"    def test_sub_{n}(self):\n        for i in range(4):\n            with self.subTest(i=i):\n                self.assertGreaterEqual(i, 0)\n\n"
        for n in range(10)
    )
    sub_fixture = "".join(
        f"def test_fix_{n}(subtests):\n    for i in range(3):\n        with subtests.test(i=i):\n            assert i >= 0\n\n\n"
        for n in range(10)
    )
    plain = "".join(f"def test_plain_{n}():\n    assert {n} == {n}\n\n\n" for n in range(29))
    repo = make_repo(
        tmp_path / "repo",
        {
            "tests/test_many.py": "import unittest\n\n\nclass TestSub(unittest.TestCase):\n"
            + sub_unittest
            + "\n"
            + sub_fixture
            + plain
            + "def test_broken():\n    assert 1 == 2\n",
        },
    )
    run = await run_tests(TestCommand(python=sys.executable, json_report=json_report), repo, tmp_path / "run.log")
    assert run.infra_error is None
    assert len(run.outcomes) == 50
    assert run.failing() == ["tests/test_many.py::test_broken"]


@pytest.mark.anyio
@pytest.mark.parametrize("json_report", [True, False], ids=["json-report", "junit"])
async def test_a_table_with_two_failing_subtests_is_one_failing_test(tmp_path: Path, json_report: bool) -> None:
    repo = make_repo(tmp_path / "repo", TABLE)
    run = await run_tests(TestCommand(python=sys.executable, json_report=json_report), repo, tmp_path / "run.log")
    table = run.outcomes["tests/test_calc.py::TestAdd::test_table"]
    assert table.outcome == "failed"
    assert table.message == "subtest (a=1, b=1): AssertionError: 0 != 2; subtest (a=2, b=3): AssertionError: -1 != 5"
    assert run.failing() == ["tests/test_calc.py::TestAdd::test_table"]


def _subtests_e2e(tmp_path: Path, python: str) -> None:
    repo = make_repo(tmp_path / "repo", TABLE, python=python)
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded"
    assert (
        summary["baseline"]["failed"] == 1 and summary["baseline"]["total"] == 2
    )  # not green, and one test, not two subtests
    assert "return a + b" in (repo / "calc.py").read_text()
    assert_no_debris(repo)


def test_mutate_repairs_a_subtest_table(tmp_path: Path) -> None:
    """Acceptance: pytest's native subtests (pytest 9), the fix merged, exit 0."""
    _subtests_e2e(tmp_path, sys.executable)


@pytest.fixture(scope="module")
def subtests_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with the pytest-subtests plugin: this one if it has it, else a venv with
    pytest 8 (where the plugin does the work, not pytest's native subtests); skipped when pip
    cannot install it here."""
    if _has(sys.executable, "pytest_subtests"):
        return sys.executable
    packages = ("pytest>=8,<9", "pytest-subtests", "pytest-json-report")
    return built_once(
        "subtests", tmp_path_factory, lambda folder: fresh_venv(sys.executable, packages, folder / "venv")
    )


def test_mutate_repairs_a_subtest_table_with_pytest_subtests(tmp_path: Path, subtests_python: str) -> None:
    _subtests_e2e(tmp_path, subtests_python)


@pytest.mark.anyio
async def test_pytest_subtests_failing_fixture_subtest_is_counted(tmp_path: Path, subtests_python: str) -> None:
    """Under pytest 8 the plugin reports this parent as `subtests passed`: it must count as failing."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "tests/test_f.py": """\
        def test_f(subtests):
            for i in range(3):
                with subtests.test(i=i):
                    assert i != 1
        """
        },
        python=subtests_python,
    )
    for json_report in (True, False):
        run = await run_tests(
            TestCommand(python=subtests_python, json_report=json_report), repo, tmp_path / f"run{json_report}.log"
        )
        assert run.failing() == ["tests/test_f.py::test_f"]
        assert run.outcomes["tests/test_f.py::test_f"].message == "subtest (i=1): assert 1 != 1"
