"""Pure decisions of explore.decide.testcode and the outcome rules of scoring: what is test code, what passes."""

from __future__ import annotations

import pytest

from explore.decide import scoring, testcode
from explore.model.testresults import TestOutcome, TestRun

PYPROJECT = '[project]\nname = "calc"\nversion = "1"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "deep/er/conftest.py",
        "pytest.ini",
        "tox.ini",
        "noxfile.py",
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        "pytest.toml",
        "sub/.pytest.toml",
    ],
)
def test_whole_harness_files(path: str) -> None:
    assert testcode.harness_kind(path, "x", "y")


@pytest.mark.parametrize(
    ("new", "needle"),
    [
        (PYPROJECT.replace('"-q"', "\"-q -k 'not add'\""), "[tool.pytest.ini_options.addopts = \"-q -k 'not add'\"]"),
        (PYPROJECT + '\n[project.entry-points.pytest11]\nfake = "fake"\n', "pytest11"),
        (PYPROJECT + "\n[tool.explore]\nallow-test-edits = true\n", "tool.explore"),
        ("[[broken", "pyproject.toml [unparseable]"),
        ('[project]\nname = "calc"\n', "tool.pytest.ini_options.addopts removed"),
    ],
)
def test_pyproject_sections_that_decide_the_tests(new: str, needle: str) -> None:
    assert needle in (testcode.harness_kind("pyproject.toml", PYPROJECT, new) or "")


def test_other_pyproject_changes_are_not_harness() -> None:
    assert (
        testcode.harness_kind("pyproject.toml", PYPROJECT, PYPROJECT.replace('version = "1"', 'version = "2"')) is None
    )
    assert (
        testcode.harness_kind("pyproject.toml", PYPROJECT, PYPROJECT + "\n[tool.pytest-watch]\nclear = true\n") is None
    )


def test_setup_cfg_pytest_section_only() -> None:
    old = "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n"
    assert testcode.harness_kind("setup.cfg", old, old.replace("-q", "-q --deselect t.py::a"))
    assert testcode.harness_kind("setup.cfg", old, old.replace("name = x", "name = y")) is None
    assert testcode.harness_kind("setup.py", "setup()", "setup(entry_points={'pytest11': ['x = x']})")
    assert testcode.harness_kind("setup.py", "setup()", "setup(name='y')") is None


def test_plugin_names_from_addopts_and_conftest() -> None:
    configs = {
        "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p helpers.plug -p no:cacheprovider -pother -q"\n',
        "tox.ini": "[pytest]\naddopts = -p=third\n",
    }
    conftests = ['pytest_plugins = ["fixtures.db", "fixtures.web"]\n', "pytest_plugins = 'single'\n", "def (:"]
    assert testcode.plugin_names(configs, conftests) == {
        "helpers.plug",
        "other",
        "third",
        "fixtures.db",
        "fixtures.web",
        "single",
    }
    assert testcode.plugin_names({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = ["-p", "lst"]\n'}, []) == {
        "lst"
    }
    assert "helpers/plug.py" in testcode.module_paths(
        "helpers.plug"
    ) and "src/helpers/plug/__init__.py" in testcode.module_paths("helpers.plug")


def test_plugin_names_from_pytest_9_toml_configs() -> None:
    assert testcode.plugin_names({"pytest.toml": '[pytest]\naddopts = ["-p", "plug"]\n'}, []) == {"plug"}
    assert testcode.plugin_names({"pyproject.toml": '[tool.pytest]\naddopts = ["-pnative"]\n'}, []) == {"native"}


def test_files_under_a_test_directory_and_test_data_are_test_code() -> None:
    found = testcode.edits_to_test_code(
        ["pkg/tests/helpers.py", "test/data/x.csv", "testdata/expected.json", "pkg/testing.py", "contest/tests.py"],
        lambda _: "old",
        lambda _: "new",
        {},
        set(),
        set(),
        test_data={"testdata/expected.json"},
    )
    assert found == [
        "under a test directory pkg/tests/helpers.py",
        "under a test directory test/data/x.csv",
        "test data testdata/expected.json (the tests read it at the baseline)",
    ]


def test_script_paths_of_a_custom_command() -> None:
    assert testcode.script_paths("bash ci/test.sh --fast {junit}") == {"ci/test.sh"}
    assert testcode.script_paths("./run_tests.sh") == {"run_tests.sh"}
    assert testcode.script_paths("python -m pytest -q") == set()
    assert testcode.script_paths("make test") == {"Makefile"}
    assert testcode.script_paths(None) == set()


def test_collected_files_tell_doctests_from_test_modules() -> None:
    ids = [
        "calc.py::calc",
        "calc.py::calc.add",
        "pkg/mod.py::pkg.mod.K.m",
        "README.md::README.md",
        "checks.py::test_it",
        "tests/test_a.py::TestX::test_y",
        "<suite>",
    ]
    assert testcode.collected_files(ids) == {
        "calc.py": True,
        "pkg/mod.py": True,
        "README.md": True,
        "checks.py": False,
        "tests/test_a.py": False,
    }


CALC = '''\
def add(a, b):
    """Sum.

    >>> add(2, 3)
    5
    """
    return a - b
'''


def test_doctest_expected_value_change_is_a_test_edit() -> None:
    assert testcode.changed_doctests("calc.py", CALC, CALC.replace("    5\n", "    -1\n")) == ["add"]
    assert testcode.changed_doctests(
        "calc.py", CALC, CALC.replace(">>> add(2, 3)", ">>> add(2, 3)  # doctest: +SKIP")
    ) == ["add"]


def test_code_and_prose_changes_beside_doctests_are_allowed() -> None:
    assert (
        testcode.changed_doctests("calc.py", CALC, CALC.replace("a - b", "a + b").replace("Sum.", "Add two numbers."))
        == []
    )
    doc = "# Title\n\nSome words.\n\n>>> 2 * 3\n6\n"
    assert testcode.changed_doctests("README.md", doc, doc.replace("Some words.", "Other words.")) == []
    assert testcode.changed_doctests("README.md", doc, doc.replace("6\n", "7\n")) == ["README.md"]


def test_edits_to_test_code_names_what_changed() -> None:
    old = {"calc.py": CALC, "helpers.py": "", "lib.py": "x = 1\n", "ci/run.sh": "pytest\n"}
    new = {
        "calc.py": CALC.replace("    5\n", "    -1\n"),
        "helpers.py": "import os\n",
        "lib.py": "x = 2\n",
        "ci/run.sh": "true\n",
    }
    found = testcode.edits_to_test_code(
        sorted(old), old.get, new.get, {"calc.py": True}, plugin_files={"helpers.py"}, scripts={"ci/run.sh"}
    )
    assert found == ["doctest calc.py (add)", "test command script ci/run.sh", "pytest plugin helpers.py"]
    honest = {"calc.py": CALC.replace("a - b", "a + b")}
    assert testcode.edits_to_test_code(["calc.py"], old.get, honest.get, {"calc.py": True}, set(), set()) == []
    assert testcode.edits_to_test_code(["calc.py"], old.get, honest.get, {"calc.py": False}, set(), set()) == [
        "collected test module calc.py"
    ]


def _run(**outcomes: str) -> TestRun:
    return TestRun(outcomes={i: TestOutcome(id=i, outcome=o) for i, o in outcomes.items()})  # type: ignore[arg-type]


def test_xfailed_passes_only_for_tests_xfail_at_baseline() -> None:
    stick = scoring.yardstick_of(_run(a="passed", b="xfailed", c="failed"))
    assert stick.xfailed == {"b"}
    assert stick.counts(_run(a="passed", b="xfailed", c="xfailed")).passed == 2
    assert stick.failing(_run(a="passed", b="xfailed", c="xfailed")) == ["c"]
    assert scoring.newly_failing({"a"}, _run(a="xfailed", b="xfailed", c="passed"), stick) == ["a"]


def test_a_new_xfail_is_tampering_an_old_one_is_not() -> None:
    stick = scoring.yardstick_of(_run(a="passed", b="xfailed", c="failed"))
    reason = scoring.tamper_reason(_run(a="passed", b="xfailed", c="xfailed"), stick)
    assert reason == "turns failing tests into xfail: c"
    assert scoring.tamper_reason(_run(a="passed", b="xfailed", c="passed"), stick) is None


def test_baseline_xfail_is_not_a_failure_to_repair() -> None:
    assert _run(a="passed", b="xfailed", c="failed", d="skipped").failing() == ["c"]
