"""explore's own record of each test call (explore.decide.witness and the plugin): real pytest runs
whose report is honest are confirmed test for test; a report bent below the syntax tree's sight
is contradicted."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from conftest import write_files
from explore.decide import witness
from explore.edges import witness_io
from explore.edges.testing import TestCommand, run_tests
from explore.model.testresults import TestOutcome

PY = sys.executable


def stream(*entries: list) -> list[str]:
    return [json.dumps(entry) for entry in entries]


def window(pid: int, nodeid: str, called: bool = True, raised: str = "") -> list[list]:
    return [[pid, "start", nodeid], [pid, "end", nodeid, called, bool(raised), raised]]


def test_each_window_carries_its_verdict_and_the_worst_window_of_a_test_counts() -> None:
    lines = stream(
        [7, "hello"],
        *window(7, "t.py::a"),
        *window(7, "t.py::b"),
        *window(7, "t.py::b", raised="ValueError"),  # a later window says it raised: raised
        *window(7, "t.py::c", raised="ValueError"),
        *window(7, "t.py::c"),  # a clean window after one that raised: still raised
        *window(7, "t.py::d", called=False),  # never called (its setup failed)
        *window(7, "t.py::e"),
        *window(7, "t.py::e", called=False),
        [8, "hello"],  # an xdist worker
        *window(8, "t.py::f"),
        [8, "finish"],
        [7, "finish"],
    )
    record = witness.parse(lines)
    assert record.forged is None and record.finished
    assert record.calls == {"t.py::a": None, "t.py::b": "ValueError", "t.py::c": "ValueError", "t.py::f": None}
    assert not witness.parse(lines[:-1]).finished  # the main process never finished
    assert witness.parse([*lines[:-3], lines[-1]]).finished  # a worker xdist lost need not


@pytest.mark.parametrize(
    ("entries", "why"),
    [
        ([[7, "hello"], [7, "hello"]], "line 2 says hello again for process 7"),
        ([[7, "hello"], [9, "start", "t.py::a"]], "line 2 comes from process 9, which never said hello"),
        ([[7, "hello"], [7, "end", "t.py::a", True, False, ""]], "line 2 ends t.py::a, which is not running"),
        (  # library code in the test's teardown ends the window with a verdict of its own: the plugin's end follows
            [
                [7, "hello"],
                *window(7, "t.py::a"),
                [7, "start", "t.py::b"],
                [7, "end", "t.py::b", True, False, ""],
                [7, "end", "t.py::b", True, True, "AssertionError"],
            ],
            "line 6 ends t.py::b, which is not running",
        ),
        ([[7, "hello"], [7, "start", "t.py::a"], [7, "start", "t.py::b"]], "line 3 starts t.py::b inside t.py::a"),
        ([[7, "hello"], [7, "finish"], *window(7, "t.py::a")], "line 3 comes after process 7 finished"),
        ([[7, "hello"], [7, "start", "t.py::a"], [7, "finish"]], "line 3 finishes while t.py::a is running"),
        ([[7, "hello"], [7, "passed", "t.py::a"]], "line 2 is a 'passed' line the plugin does not write"),
        ([[7, "hello"], [7, "end", "t.py::a", "yes", False, ""]], "line 2 is a 'end' line the plugin does not write"),
        ([[7, "hello"], {"kind": "call"}], "line 2 is not a line the plugin writes"),
    ],
)
def test_a_line_out_of_the_streams_shape_is_a_forgery(entries: list, why: str) -> None:
    record = witness.parse(stream(*entries))
    assert record.forged is not None and record.forged.startswith(why), record.forged


def test_a_pass_is_contradicted_by_a_raising_call_by_no_call_or_by_an_unfinished_record() -> None:
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
    record = witness.Record(calls=calls, finished=True)
    assert witness.contradicted(outcomes, record, ids_are_nodeids=True) == {
        "t.py::raised": "its call raised AssertionError",
        "t.py::absent": "it was never called",
        "t.py::xp": "its call raised ValueError",
    }
    assert "t.py::absent" not in witness.contradicted(
        outcomes, record, ids_are_nodeids=False
    )  # ids rebuilt from JUnit XML
    unfinished = witness.Record(calls=calls, finished=False)  # the process ended itself before pytest did
    assert witness.contradicted(outcomes, unfinished, ids_are_nodeids=True)["t.py::fine"] == (
        "its process ended before explore's record of the run did"
    )
    assert "t.py::fine" not in witness.contradicted(outcomes, unfinished, ids_are_nodeids=True, ended_early=True)
    assert witness.describe({"t.py::raised": "its call raised AssertionError"}) == (
        "reports 1 test(s) passed that explore's own record of the call contradicts: t.py::raised (its call raised AssertionError)"
    )


def test_the_stream_is_a_fifo_the_test_process_may_write_not_read(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "baseline.log"  # the folder does not exist yet
    channel, other = witness_io.beside(log), witness_io.beside(log)
    try:
        assert channel.path.parent == log.parent and channel.path.name.startswith("baseline.calls-")
        assert channel.path != other.path and channel.env() == {witness.ENV: str(channel.path)}
        assert stat.S_ISFIFO(channel.path.stat().st_mode) and (channel.path.stat().st_mode & 0o777) == 0o200
        if os.geteuid() != 0:  # root reads any file: the mode is no bar to it
            with pytest.raises(PermissionError):
                os.open(channel.path, os.O_RDONLY | os.O_NONBLOCK)
        fd = os.open(channel.path, os.O_WRONLY)
        body = "".join(f"{line}\n" for line in stream([7, "hello"], *window(7, "t.py::a"), [7, "finish"]))
        for n in range(2000):  # more than a pipe holds: read while written
            os.write(fd, body.replace("t.py::a", f"t.py::a{n}").encode())
        os.close(fd)
    finally:
        record, _ = channel.close(), other.close()
    assert record.forged == "line 5 says hello again for process 7" and record.calls == {"t.py::a0": None}
    assert not list(log.parent.iterdir())  # both FIFOs gone


HONEST = {
    "calc.py": 'def add(a, b):\n    """\n    >>> add(2, 3)\n    5\n    """\n    return a + b\n',
    "tests/test_calc.py": """\
        import os
        import unittest

        import pytest

        from calc import add


        def test_add():
            assert add(2, 3) == 5


        def test_the_process_holds_no_secret_and_cannot_read_the_stream():
            import gc
            assert "EXPLORE_CALLS" not in os.environ
            recorders = [o for o in gc.get_objects() if type(o).__name__ == "_Calls"]
            assert recorders and all(sorted(vars(r)) == ["call", "fd", "identity", "path", "pid"] for r in recorders)
            if os.geteuid() != 0:  # root reads any file
                with pytest.raises(PermissionError):
                    os.open(recorders[0].path, os.O_RDONLY | os.O_NONBLOCK)  # only explore reads it


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
@pytest.mark.parametrize(
    ("json_report", "args"),
    [(True, []), (False, []), (True, ["-n", "2"])],  # xdist's stream is the same whatever the report
    ids=["json-one process", "junit-one process", "json-xdist"],
)
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


SWAPPED = """\
import os, stat

for fd in range(3, 64):  # explore's FIFO, found without a name: /dev/null put in its place
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    except OSError:
        pass
"""
ENDED = """\
import json, os, sys

path = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--json-report-file="))
with open(path, "w") as out:
    json.dump({"tests": [{"nodeid": "tests/test_calc.py::test_add", "outcome": "passed"}]}, out)
os._exit(0)
"""


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("prelude", "what"),
    [
        (SWAPPED, "explore's record of the test calls was tampered with: the plugin's descriptor of it was closed"),
        (ENDED, "its process ended before explore's record of the run did"),
    ],
    ids=["descriptor replaced", "process ended with a report of its own"],
)
async def test_a_stream_cut_from_the_plugin_confirms_nothing(tmp_path: Path, prelude: str, what: str) -> None:
    """Library code that puts another file in place of the plugin's descriptor, or writes a report
    and ends its process before pytest does: no test it reports passing is believed."""
    tests = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    write_files(
        tmp_path / "p", {"calc.py": prelude + "\n\ndef add(a, b):\n    return a - b\n", "tests/test_calc.py": tests}
    )
    run = await run_tests(TestCommand(python=PY), tmp_path / "p", tmp_path / "t.log")
    said = [run.infra_error or "", *run.unconfirmed.values()]
    assert any(what in text for text in said), (run.exit_code, said, run.outcomes)
