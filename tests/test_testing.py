"""testing: real pytest (and shell) subprocesses in small projects under tmp_path."""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from explore.edges.testing import PLUGIN_DIR, SUITE_ID, TestCommand, isolation_env, make_command, run_tests
from explore.model import testids

PY = sys.executable

SUITE = {
    "pytest.ini": "[pytest]\n",
    "tests/__init__.py": "",
    "tests/test_mod.py": """\
        import pytest

        def test_pass():
            assert True

        def test_fail():
            assert 1 == 2, "one is not two"

        @pytest.mark.skip(reason="not today")
        def test_skip():
            pass

        @pytest.fixture
        def broken():
            raise RuntimeError("fixture exploded")

        def test_error(broken):
            pass

        @pytest.mark.xfail(reason="known")
        def test_xfail():
            assert False

        @pytest.mark.parametrize("n", [1, 2])
        def test_param(n):
            assert n == 1

        class TestGroup:
            def test_in_class(self):
                assert True
        """,
}

ALL_IDS = {
    "tests/test_mod.py::test_pass",
    "tests/test_mod.py::test_fail",
    "tests/test_mod.py::test_skip",
    "tests/test_mod.py::test_error",
    "tests/test_mod.py::test_xfail",
    "tests/test_mod.py::test_param[1]",
    "tests/test_mod.py::test_param[2]",
    "tests/test_mod.py::TestGroup::test_in_class",
}


def project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return project(tmp_path / "proj", SUITE)


def outcomes(run) -> dict[str, str]:
    return {i: o.outcome for i, o in run.outcomes.items()}


# --- pytest with pytest-json-report ----------------------------------------------------------


@pytest.mark.anyio
async def test_json_report_outcomes_and_messages(suite: Path, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "full.log"
    run = await run_tests(TestCommand(python=PY), suite, log)
    assert run.infra_error is None, run.infra_error
    assert run.exit_code == 1
    assert run.per_test
    assert outcomes(run) == {
        "tests/test_mod.py::test_pass": "passed",
        "tests/test_mod.py::test_fail": "failed",
        "tests/test_mod.py::test_skip": "skipped",
        "tests/test_mod.py::test_error": "error",
        "tests/test_mod.py::test_xfail": "xfailed",
        "tests/test_mod.py::test_param[1]": "passed",
        "tests/test_mod.py::test_param[2]": "failed",
        "tests/test_mod.py::TestGroup::test_in_class": "passed",
    }
    fail = run.outcomes["tests/test_mod.py::test_fail"]
    assert "one is not two" in fail.message
    assert "assert 1 == 2" in fail.longrepr
    assert fail.file == "tests/test_mod.py"
    assert "fixture exploded" in run.outcomes["tests/test_mod.py::test_error"].message
    assert "not today" in run.outcomes["tests/test_mod.py::test_skip"].message
    assert run.outcomes["tests/test_mod.py::test_pass"].message == ""
    assert run.failing() == [
        "tests/test_mod.py::test_error",
        "tests/test_mod.py::test_fail",
        "tests/test_mod.py::test_param[2]",
    ]
    assert log.is_file() and "failed" in log.read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_teardown_error_after_a_pass_is_an_error(tmp_path: Path) -> None:
    root = project(
        tmp_path / "proj",
        {
            "pytest.ini": "[pytest]\n",
            "test_td.py": """\
            import pytest

            @pytest.fixture
            def res():
                yield 1
                raise OSError("teardown broke")

            def test_ok(res):
                assert res == 1
            """,
        },
    )
    run = await run_tests(TestCommand(python=PY), root, tmp_path / "td.log")
    result = run.outcomes["test_td.py::test_ok"]
    assert result.outcome == "error"
    assert "teardown broke" in result.message


@pytest.mark.anyio
@pytest.mark.parametrize("json_report", [pytest.param(True, id="json"), pytest.param(False, id="junit")])
async def test_select_runs_only_the_given_ids(suite: Path, tmp_path: Path, json_report: bool) -> None:
    chosen = ["tests/test_mod.py::test_fail", "tests/test_mod.py::TestGroup::test_in_class"]
    command = TestCommand(python=PY, json_report=json_report)
    run = await run_tests(command, suite, tmp_path / "sel.log", select=chosen)
    assert outcomes(run) == {chosen[0]: "failed", chosen[1]: "passed"}
    assert run.infra_error is None


# --- pytest with JUnit XML -------------------------------------------------------------------


@pytest.mark.anyio
async def test_junit_fallback_rebuilds_pytest_node_ids(suite: Path, tmp_path: Path) -> None:
    run = await run_tests(TestCommand(python=PY, json_report=False), suite, tmp_path / "junit.log")
    assert run.infra_error is None, run.infra_error
    assert set(run.outcomes) == ALL_IDS
    got = outcomes(run)
    assert got["tests/test_mod.py::test_pass"] == "passed"
    assert got["tests/test_mod.py::test_fail"] == "failed"
    assert got["tests/test_mod.py::test_skip"] == "skipped"
    assert got["tests/test_mod.py::test_error"] == "error"
    assert got["tests/test_mod.py::test_param[2]"] == "failed"
    assert got["tests/test_mod.py::TestGroup::test_in_class"] == "passed"
    assert got["tests/test_mod.py::test_xfail"] in ("skipped", "xfailed")  # JUnit says skipped
    assert "one is not two" in run.outcomes["tests/test_mod.py::test_fail"].message
    assert "not today" in run.outcomes["tests/test_mod.py::test_skip"].message


# --- infrastructure failures -----------------------------------------------------------------

BROKEN = {
    "pytest.ini": "[pytest]\n",
    "test_ok.py": "def test_ok():\n    assert True\n",
    "test_broken.py": "import no_such_module_for_explore\n\ndef test_never():\n    pass\n",
}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "json_report",
    [
        pytest.param(True, id="json"),
        pytest.param(False, id="junit"),
    ],
)
async def test_collection_error_is_an_infra_error(tmp_path: Path, json_report: bool) -> None:
    root = project(tmp_path / "proj", BROKEN)
    run = await run_tests(TestCommand(python=PY, json_report=json_report), root, tmp_path / "c.log")
    assert run.collection_errors, outcomes(run)
    assert any("test_broken" in e for e in run.collection_errors)
    assert run.infra_error is not None and "collection errors" in run.infra_error
    assert "test_broken" in run.infra_error


@pytest.mark.anyio
async def test_no_tests_collected_is_an_infra_error(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"pytest.ini": "[pytest]\n", "helper.py": "X = 1\n"})
    run = await run_tests(TestCommand(python=PY), root, tmp_path / "none.log")
    assert run.exit_code == 5
    assert run.infra_error == "no tests collected"


@pytest.mark.anyio
async def test_pytest_usage_error_is_an_infra_error(suite: Path, tmp_path: Path) -> None:
    (suite / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option-for-explore\n", encoding="utf-8")
    run = await run_tests(TestCommand(python=PY), suite, tmp_path / "usage.log")
    assert run.exit_code == 4
    assert run.infra_error is not None and "usage error" in run.infra_error


@pytest.mark.anyio
async def test_missing_interpreter_is_an_infra_error(suite: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "python")
    run = await run_tests(TestCommand(python=missing), suite, tmp_path / "miss.log")
    assert run.exit_code == 127
    assert run.infra_error is not None and "not found" in run.infra_error
    assert missing in run.infra_error


@pytest.mark.anyio
async def test_interpreter_without_pytest_is_named(suite: Path, tmp_path: Path) -> None:
    # this interpreter without site-packages: a Python that has no pytest
    bare = tmp_path / "bin" / "python"
    bare.parent.mkdir()
    bare.write_text(f'#!/bin/sh\nexec {shlex.quote(PY)} -S "$@"\n', encoding="utf-8")
    bare.chmod(0o755)
    run = await run_tests(TestCommand(python=str(bare), json_report=False), suite, tmp_path / "bare.log")
    assert run.infra_error is not None
    assert "No module named pytest" in run.infra_error
    assert str(bare) in run.infra_error


# --- custom commands -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_custom_command_with_junit_placeholder(suite: Path, tmp_path: Path) -> None:
    cmd = f"{shlex.quote(PY)} -m pytest -q -p no:cacheprovider --junit-xml={{junit}} tests"
    run = await run_tests(TestCommand(shell=cmd), suite, tmp_path / "custom.log")
    assert run.per_test
    assert run.infra_error is None
    assert set(run.outcomes) == ALL_IDS
    assert run.outcomes["tests/test_mod.py::test_fail"].outcome == "failed"


@pytest.mark.anyio
async def test_custom_command_junit_from_another_runner(tmp_path: Path) -> None:
    xml = (
        '<testsuite name="s"><testcase classname="Suite.Widget" name="works"/>'
        '<testcase classname="Suite.Widget" name="breaks"><failure message="expected 2 got 3">trace</failure></testcase>'
        "</testsuite>"
    )
    root = project(tmp_path / "proj", {"report.xml.in": xml})
    cmd = "cp report.xml.in out.xml; echo ran; exit 1"
    run = await run_tests(TestCommand(shell=cmd, junit_xml="out.xml"), root, tmp_path / "other.log")
    assert outcomes(run) == {"Suite.Widget::works": "passed", "Suite.Widget::breaks": "failed"}
    assert run.outcomes["Suite.Widget::breaks"].message == "expected 2 got 3"
    assert run.per_test
    assert run.infra_error is None


@pytest.mark.anyio
async def test_stale_junit_file_is_not_read(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"out.xml": '<testsuite><testcase classname="S" name="ok"/></testsuite>'})
    run = await run_tests(TestCommand(shell="echo boom; exit 1", junit_xml="out.xml"), root, tmp_path / "stale.log")
    assert run.exit_code == 1
    assert outcomes(run) != {"S::ok": "passed"}


@pytest.mark.anyio
@pytest.mark.parametrize(("code", "outcome"), [(0, "passed"), (1, "failed"), (3, "failed")])
async def test_custom_command_without_junit_is_all_or_nothing(tmp_path: Path, code: int, outcome: str) -> None:
    run = await run_tests(TestCommand(shell=f"echo checking; exit {code}"), tmp_path, tmp_path / "plain.log")
    assert run.per_test is False
    assert outcomes(run) == {SUITE_ID: outcome}
    assert run.exit_code == code
    assert run.infra_error is None
    assert "checking" in run.outcomes[SUITE_ID].message


@pytest.mark.anyio
async def test_missing_custom_command_is_an_infra_error(tmp_path: Path) -> None:
    run = await run_tests(TestCommand(shell="explore-no-such-test-runner --all"), tmp_path, tmp_path / "m.log")
    assert run.exit_code == 127
    assert run.outcomes == {}
    assert run.infra_error is not None and "not found" in run.infra_error


def test_make_command() -> None:
    custom = make_command("make test", "out.xml", None)
    assert (custom.shell, custom.junit_xml, custom.is_pytest) == ("make test", "out.xml", False)
    default = make_command(None, None, PY)
    assert default.is_pytest and default.python == PY
    assert default.json_report is True  # pytest-json-report is installed here
    assert default.describe() == f"{PY} -m pytest"


# --- isolation -------------------------------------------------------------------------------


def test_isolation_env_puts_src_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    plugin = str(PLUGIN_DIR)
    assert isolation_env(tmp_path)["PYTHONPATH"] == os.pathsep.join([str(tmp_path), plugin, "/elsewhere"])
    (tmp_path / "src").mkdir()
    assert isolation_env(tmp_path)["PYTHONPATH"] == os.pathsep.join(
        [str(tmp_path / "src"), str(tmp_path), plugin, "/elsewhere"]
    )
    monkeypatch.delenv("PYTHONPATH")
    assert isolation_env(tmp_path)["PYTHONPATH"] == os.pathsep.join([str(tmp_path / "src"), str(tmp_path), plugin])


@pytest.mark.anyio
async def test_worktree_code_shadows_an_installed_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an "installed" copy of the package that must not win over the worktree's src/
    project(tmp_path / "site", {"calc/__init__.py": "def answer():\n    return 'installed copy'\n"})
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    worktree = project(
        tmp_path / "wt",
        {
            "pytest.ini": "[pytest]\n",
            "src/calc/__init__.py": "def answer():\n    return 'worktree'\n",
            "tests/test_calc.py": "import calc\n\ndef test_answer():\n    assert calc.answer() == 'worktree'\n",
        },
    )
    run = await run_tests(TestCommand(python=PY), worktree, tmp_path / "iso.log")
    assert outcomes(run) == {"tests/test_calc.py::test_answer": "passed"}, run.outcomes


# --- ids that hold the tree's path -------------------------------------------------------------

PATH_IDS = {
    "tests/test_docs.py": """\
        from pathlib import Path

        import pytest

        @pytest.mark.parametrize("name", [str(Path(__file__).parent / "README.rst")], ids=str)
        def test_rst(name):
            assert name.endswith(".txt")
        """,
}


@pytest.mark.anyio
async def test_an_id_holding_the_trees_path_is_the_same_in_every_tree(tmp_path: Path) -> None:
    """httpie's test_docs.py: its ids hold each worktree's absolute path. Selected by its id as explore
    keeps it (the tree written `<repo>`, as a rerun selects it) in a tree reached through a link (the
    tests see it resolved), the test runs and reads back under that same id."""
    first = project(tmp_path / "first", PATH_IDS)
    (tmp_path / "link").symlink_to(first, target_is_directory=True)
    wanted = "tests/test_docs.py::test_rst[<repo>/tests/README.rst]"
    run = await run_tests(TestCommand(python=PY), tmp_path / "link", tmp_path / "first.log", select=[wanted])
    assert outcomes(run) == {wanted: "failed"} and run.outcomes[wanted].id == wanted, run.infra_error
    assert run.infra_error is None


def test_a_tree_is_replaced_as_a_whole_path_and_put_back() -> None:
    roots = ["/w/a", "/real/w/a/"]
    assert testids.normalise("t.py::test[/w/a/x.rst-/real/w/a]", roots) == "t.py::test[<repo>/x.rst-<repo>]"
    assert testids.normalise("t.py::test[/w/ab/x.rst]", roots) == "t.py::test[/w/ab/x.rst]"  # another folder
    assert testids.normalise("t.py::test[/w/a.bak]", roots) == "t.py::test[/w/a.bak]"
    assert testids.normalise("t.py::test[/w/a]", []) == "t.py::test[/w/a]"
    assert testids.normalise("t.py::test[1.5-a]", [".", "a", "/"]) == "t.py::test[1.5-a]"  # never relative
    assert testids.localise("t.py::test[<repo>/x.rst]", "/w/b/") == "t.py::test[/w/b/x.rst]"
    assert testids.localise("t.py::test[1]", "/w/b") == "t.py::test[1]"
