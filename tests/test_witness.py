"""explore's own record of each test call (explore.decide.witness and the plugin): real pytest runs
whose report is honest are confirmed test for test; a report bent below the syntax tree's sight
is contradicted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import write_files
from explore.decide import witness
from explore.edges import witness_io
from explore.edges.testing import TestCommand, run_tests
from explore.model.testresults import TestOutcome

PY = sys.executable
KEY = "k" * 32


def line(nodeid: str, raised: bool, exception: str = "", key: str = KEY) -> str:
    return json.dumps(
        {
            "kind": "call",
            "nodeid": nodeid,
            "raised": raised,
            "exception": exception,
            "sig": witness.signature(key, nodeid, raised, exception),
        }
    )


def test_only_signed_lines_count_and_a_rerun_replaces_the_first_call() -> None:
    lines = [
        line("t.py::a", True, "AssertionError"),
        line("t.py::a", False),
        line("t.py::b", False, key="forged" * 6),
        json.dumps({"kind": "call", "nodeid": "t.py::c", "raised": False, "exception": "", "sig": "0" * 64}),
        '{"kind": "call", "nodeid": "t.py::d"',
        line("t.py::e", True, "DocTestFailure"),
        '{"kind": "subtest", "nodeid": "t.py::a"}',
    ]
    assert witness.parse(lines, KEY) == {"t.py::a": None, "t.py::e": "DocTestFailure"}


def test_a_record_file_is_made_beside_the_log_and_read_back_with_its_own_key(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "baseline.log"  # the folder does not exist yet
    secret, other = witness_io.beside(log), witness_io.beside(log)
    assert secret.path.parent == log.parent and secret.path.name.startswith("baseline.calls-")
    assert secret.key != other.key and secret.path != other.path
    assert json.loads(secret.env()[witness.ENV]) == {"key_file": str(secret.key_file), "record": str(secret.path)}
    assert secret.key_file.read_text() == secret.key and secret.key not in secret.env()[witness.ENV]
    assert (secret.key_file.stat().st_mode & 0o777) == 0o600
    assert witness_io.read(secret) == {}  # never written: no call recorded
    assert not secret.key_file.exists()  # a plugin that never ran left its key: gone once read
    secret.path.write_text(line("t.py::a", True, "ValueError", key=secret.key) + "\n" + line("t.py::b", False) + "\n")
    assert witness_io.read(secret) == {"t.py::a": "ValueError"}  # t.py::b was signed with another key


def test_a_pass_is_contradicted_by_a_raising_call_or_by_no_call() -> None:
    outcomes = {
        i: TestOutcome(id=i, outcome=o)
        for i, o in [
            ("t.py::raised", "passed"),
            ("t.py::absent", "passed"),
            ("t.py::fine", "passed"),
            ("t.py::failed", "failed"),
            ("t.py::xp", "xpassed"),
        ]
    }
    calls = {
        "t.py::raised": "AssertionError",
        "t.py::fine": None,
        "t.py::failed": "AssertionError",
        "t.py::xp": "ValueError",
    }
    assert witness.contradicted(outcomes, calls, ids_are_nodeids=True) == {
        "t.py::raised": "its call raised AssertionError",
        "t.py::absent": "it was never called",
        "t.py::xp": "its call raised ValueError",
    }
    assert "t.py::absent" not in witness.contradicted(
        outcomes, calls, ids_are_nodeids=False
    )  # ids rebuilt from JUnit XML
    assert witness.describe({"t.py::raised": "its call raised AssertionError"}) == (
        "reports 1 test(s) passed that explore's own record of the call contradicts: t.py::raised (its call raised AssertionError)"
    )


HONEST = {
    "calc.py": 'def add(a, b):\n    """\n    >>> add(2, 3)\n    5\n    """\n    return a + b\n',
    "tests/test_calc.py": """\
        import os
        import unittest

        import pytest

        from calc import add


        def test_add():
            assert add(2, 3) == 5


        def test_the_secret_is_not_in_the_environment():
            import json, sys
            assert not [k for k in os.environ if k.startswith("EXPLORE_CALLS")]
            with open("/proc/self/environ", "rb") as source:  # the process's first environment
                first = dict(v.split("=", 1) for v in source.read().decode().split("\\0") if "=" in v)
            if "EXPLORE_CALLS" in first:  # the main process (an xdist worker started without it)
                assert not os.path.exists(json.loads(first["EXPLORE_CALLS"])["key_file"])
            if "EXPLORE_REPORT_SEAL" in first:
                assert not os.path.exists(first["EXPLORE_REPORT_SEAL"])
            plugin = vars(sys.modules["explore_pytest_plugin"]).values()
            assert not [v for v in plugin if isinstance(v, str) and ".calls-" in v]
            seal = sys.modules.get("explore_report_seal")
            assert getattr(getattr(seal, "pytest_json_modifyreport", None), "__closure__", None) is None


        @pytest.mark.parametrize("n", [1, 2])
        def test_param(n):
            assert add(n, 0) == n


        def test_skipped():
            pytest.skip("not here")


        @pytest.mark.xfail(reason="known")
        def test_known():
            assert add(1, 1) == 3


        @pytest.mark.xfail(reason="fixed since")
        def test_xpass():
            assert add(1, 1) == 2


        class TestCase(unittest.TestCase):
            def test_unit(self):
                self.assertEqual(add(1, 2), 3)

            def test_unit_failing(self):
                self.assertEqual(add(1, 2), 4)
        """,
}
BENT = {
    "calc.py": """\
    import sys as _s
    if _s.modules.get("py" + "test") is not None:
        _reports = _s.modules["_py" + "test.reports"]
        _made = _reports.TestReport.from_item_and_call

        def _passed(cls, item, call):
            report = _made(item, call)
            report.outcome, report.longrepr = "passed", None
            return report

        _reports.TestReport.from_item_and_call = classmethod(_passed)


    def add(a, b):
        \"\"\"
        >>> add(2, 3)
        5
        \"\"\"
        return a - b
    """
}


@pytest.mark.anyio
@pytest.mark.parametrize("args", [[], ["-n", "2"]], ids=["one process", "xdist"])
@pytest.mark.parametrize("json_report", [True, False], ids=["json", "junit"])
async def test_an_honest_run_is_confirmed_test_for_test(tmp_path: Path, args: list[str], json_report: bool) -> None:
    write_files(tmp_path / "p", HONEST)
    run = await run_tests(
        TestCommand(python=PY, json_report=json_report),
        tmp_path / "p",
        tmp_path / "logs" / "t.log",
        select=["--doctest-modules", "-p", "no:randomly", *args],
    )
    outcomes = {i: o.outcome for i, o in run.outcomes.items()}
    assert outcomes["tests/test_calc.py::test_add"] == "passed" and outcomes["calc.py::calc.add"] == "passed", outcomes
    assert outcomes["tests/test_calc.py::TestCase::test_unit_failing"] == "failed"
    assert sum(o in ("passed", "xpassed") for o in outcomes.values()) == 7, outcomes
    assert run.unconfirmed == {}
    assert not list((tmp_path / "logs").glob("*.calls-*"))  # read, then gone


@pytest.mark.anyio
@pytest.mark.parametrize("json_report", [True, False], ids=["json", "junit"])
async def test_a_report_bent_from_library_code_is_contradicted(tmp_path: Path, json_report: bool) -> None:
    write_files(tmp_path / "p", {**HONEST, **BENT})
    run = await run_tests(
        TestCommand(python=PY, json_report=json_report),
        tmp_path / "p",
        tmp_path / "t.log",
        select=["--doctest-modules"],
    )
    assert all(
        o.outcome in ("passed", "xpassed", "skipped", "xfailed") for o in run.outcomes.values()
    )  # the report says green
    assert run.unconfirmed["tests/test_calc.py::test_add"] == "its call raised AssertionError"
    assert run.unconfirmed["calc.py::calc.add"] == "its call raised DocTestFailure"
    assert run.unconfirmed["tests/test_calc.py::TestCase::test_unit_failing"] == "its call raised AssertionError"
    assert "tests/test_calc.py::test_param[1]" not in run.unconfirmed


@pytest.mark.anyio
async def test_a_test_passed_without_being_called_is_contradicted(tmp_path: Path) -> None:
    """A hook that answers the run protocol itself (here a conftest; library code could register one
    through pytest's internals): the tests are reported passed, none was called."""
    conftest = """\
        from _pytest.reports import TestReport


        def pytest_runtest_protocol(item, nextitem):
            item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
            for when in ("setup", "call", "teardown"):
                item.ihook.pytest_runtest_logreport(report=TestReport(item.nodeid, item.location, {}, "passed", None, when))
            item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
            return True
        """
    write_files(tmp_path / "p", {**HONEST, "conftest.py": conftest})
    run = await run_tests(TestCommand(python=PY), tmp_path / "p", tmp_path / "t.log")
    assert run.outcomes["tests/test_calc.py::TestCase::test_unit_failing"].outcome == "passed"
    assert run.unconfirmed["tests/test_calc.py::TestCase::test_unit_failing"] == "it was never called"
