"""Worktree confinement of the file tools, and the Diagnosis schema."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import ValidationError

from explore.generators.anthropic.diagnosis import Diagnosis, submit_diagnosis_tool
from explore.generators.anthropic.tools import ToolError, Workspace


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text("from pkg.calc import add\n")
    (tmp_path / "outside.py").write_text("SECRET = 1\n")
    (root / "link_out").symlink_to(tmp_path)
    (root / "hosts_link").symlink_to("/etc/hosts")
    return root


@pytest.mark.parametrize(
    "path",
    ["../outside.py", "/etc/hosts", "link_out/outside.py", "hosts_link", "pkg/../../outside.py", ".git/config", "~/x"],
)
def test_escaping_paths_are_refused_and_logged(tree: Path, path: str, caplog: pytest.LogCaptureFixture) -> None:
    ws = Workspace(tree, writable=True)
    with caplog.at_level(logging.WARNING, logger="explore.generators.anthropic"):
        with pytest.raises(ToolError, match="refused"):
            ws.run("write_file", {"path": path, "content": "pwned"})
        with pytest.raises(ToolError, match="refused"):
            ws.run("read_file", {"path": path})
    assert ws.refused and "refused path" in caplog.text
    assert (tree.parent / "outside.py").read_text() == "SECRET = 1\n"
    assert not ws.changed


def test_inside_paths_work(tree: Path) -> None:
    ws = Workspace(tree, writable=True)
    assert "return a - b" in ws.run("read_file", {"path": "pkg/calc.py"})
    assert ws.run("replace_in_file", {"path": "pkg/./calc.py", "old": "a - b", "new": "a + b"}).startswith("replaced")
    assert "a + b" in (tree / "pkg" / "calc.py").read_text()
    ws.run("write_file", {"path": "pkg/new/mod.py", "content": "X = 1\n"})
    assert (tree / "pkg" / "new" / "mod.py").read_text() == "X = 1\n"
    assert ws.changed == {"pkg/calc.py", "pkg/new/mod.py"}
    listing = ws.run("list_files", {"path": "."})
    assert "pkg/calc.py" in listing and "outside.py" not in listing
    assert "pkg/calc.py:2:" in ws.run("search", {"pattern": r"a \+ b"})


def test_replace_needs_exactly_one_occurrence(tree: Path) -> None:
    ws = Workspace(tree, writable=True)
    (tree / "pkg" / "twice.py").write_text("x = 1\nx = 1\n")
    with pytest.raises(ToolError, match="occurs 2 times"):
        ws.run("replace_in_file", {"path": "pkg/twice.py", "old": "x = 1", "new": "x = 2"})
    with pytest.raises(ToolError, match="occurs 0 times"):
        ws.run("replace_in_file", {"path": "pkg/calc.py", "old": "nope", "new": "x"})


def test_replace_keeps_crlf_line_endings(tree: Path) -> None:
    ws = Workspace(tree, writable=True)
    (tree / "pkg" / "dos.py").write_bytes(b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2\r\n")
    shown = ws.run("read_file", {"path": "pkg/dos.py"})  # the model sees plain newlines and answers with them
    assert "def f():\n    return 1" in shown
    ws.run("replace_in_file", {"path": "pkg/dos.py", "old": "def f():\n    return 1", "new": "def f():\n    return 10"})
    assert (tree / "pkg" / "dos.py").read_bytes() == b"def f():\r\n    return 10\r\n\r\ndef g():\r\n    return 2\r\n"
    (tree / "pkg" / "mixed.py").write_bytes(b"a = 1\r\nb = 2\nc = 3\n")  # mixed endings: the text as given first
    ws.run("replace_in_file", {"path": "pkg/mixed.py", "old": "b = 2\nc = 3", "new": "b = 20\nc = 3"})
    assert (tree / "pkg" / "mixed.py").read_bytes() == b"a = 1\r\nb = 20\nc = 3\n"


def test_undecodable_files_are_tool_errors_not_exceptions(tree: Path) -> None:
    ws = Workspace(tree, writable=True)
    (tree / "pkg" / "latin.py").write_bytes(b"NAME = 'caf\xe9'\n")
    with pytest.raises(ToolError, match="not a UTF-8 text file"):
        ws.run("replace_in_file", {"path": "pkg/latin.py", "old": "NAME", "new": "TITLE"})
    with pytest.raises(ToolError, match="not a UTF-8 text file"):
        ws.run("read_file", {"path": "pkg/latin.py"})
    assert (tree / "pkg" / "latin.py").read_bytes() == b"NAME = 'caf\xe9'\n" and not ws.changed


def test_tests_are_read_only_unless_allowed(tree: Path) -> None:
    ws = Workspace(tree, writable=True, test_patterns=["tests/*"])
    assert "import add" in ws.run("read_file", {"path": "tests/test_calc.py"})
    with pytest.raises(ToolError, match="test file"):
        ws.run("write_file", {"path": "tests/test_calc.py", "content": ""})
    allowed = Workspace(tree, writable=True, allow_test_edits=True, test_patterns=["tests/*"])
    allowed.run("write_file", {"path": "tests/test_calc.py", "content": "# ok\n"})


def test_read_only_role_cannot_write(tree: Path) -> None:
    with pytest.raises(ToolError, match="read-only"):
        Workspace(tree).run("write_file", {"path": "pkg/x.py", "content": ""})


def valid_diagnosis(**over: object) -> dict:
    data = {
        "failure_classification": "test_failure",
        "root_cause": "add subtracts",
        "root_cause_location": {"file": "pkg/calc.py", "line": 2, "context": "return a - b"},
        "fix": {
            "description": "add instead",
            "changes": [{"file": "pkg/calc.py", "line": 2, "current": "a - b", "should_be": "a + b"}],
        },
        "confidence": {"level": "high", "reason": "obvious"},
    }
    data.update(over)
    return data


def test_diagnosis_schema_is_generated_from_the_model() -> None:
    tool = submit_diagnosis_tool()
    schema = tool["input_schema"]
    assert tool["name"] == "submit_diagnosis" and "$defs" not in schema and "$ref" not in str(schema)
    props = schema["properties"]
    assert set(props["failure_classification"]["enum"]) >= {"syntax_error", "task_spec_error", "missing_dependency"}
    assert props["root_cause_location"]["properties"]["file"]["type"] == "string"
    assert props["fix"]["properties"]["changes"]["items"]["required"] == ["file", "should_be"]
    assert {"confidence", "escalate_immediately", "escalation_category", "out_of_scope", "upstream_dependency"} <= set(
        props
    )
    assert Diagnosis.model_validate(valid_diagnosis()).confidence_value == 0.85


@pytest.mark.parametrize(
    "bad",
    [
        {"failure_classification": "gremlins"},
        {"confidence": {"level": "sure"}},
        {"escalate_immediately": True},
        {"out_of_scope": True},
    ],
)
def test_diagnosis_validation(bad: dict) -> None:
    with pytest.raises(ValidationError):
        Diagnosis.model_validate(valid_diagnosis(**bad))
