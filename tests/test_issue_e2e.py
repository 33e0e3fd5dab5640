"""Issue 16's acceptance: `explore run --issue` and `--agent A,B,C`, as a user runs them (a real
process), the real SDK against a scripted Messages API on 127.0.0.1, real git, real pytest."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_no_debris, git, make_repo, run_cli
from explore.generators.anthropic.scripted import Failure, ScriptedAPI, Step, serve

FILES = {
    "calc.py": "def parse(text):\n    if text.isdigit():\n        return float(text)\n    return text\n",
    "tests/test_calc.py": "from calc import parse\n\n\ndef test_parse_int():\n    assert parse('12') == 12.0\n",
}
ISSUE = "# parse('1e3') returns a string\n\nparse('1e3') gives back '1e3' instead of the number 1000.0.\n"
REPRO = "from calc import parse\n\n\ndef test_parse_exponent():\n    assert parse('1e3') == 1000.0\n"
PASSING = "from calc import parse\n\n\ndef test_parse_small():\n    assert parse('7') == 7.0\n"
PREDICTED = "assert '1e3' == 1000.0"
DIAGNOSIS = {
    "failure_classification": "test_failure",
    "root_cause": "parse only converts digit strings",
    "root_cause_location": {"file": "calc.py", "line": 2, "context": "if text.isdigit():"},
    "fix": {
        "description": "convert every number",
        "changes": [{"file": "calc.py", "line": 2, "current": "isdigit", "should_be": "float(text)"}],
    },
    "confidence": {"level": "high", "reason": "the test expects a float"},
}
FIX = [
    [
        (
            "replace_in_file",
            {
                "path": "calc.py",
                "old": "    if text.isdigit():\n        return float(text)\n    return text\n",
                "new": "    return float(text)\n",
            },
        )
    ],
    [("finish", {"summary": "parse converts every number", "confidence": 0.9})],
]
CHEAT = [
    [("write_file", {"path": "tests/test_issue.py", "content": REPRO.replace("1000.0", "'1e3'")})],
    [("finish", {"summary": "made the test agree with the code", "confidence": 0.9})],
]


def writes(path: str, content: str, expected: str) -> list[Step]:
    return [
        [("write_test", {"path": path, "content": content, "expected_failure": expected})],
        [("done", {"summary": f"wrote {path}"})],
    ]


def first_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


def by_number(scripts: dict[int, list[Step]], role: str, pattern: str):
    """An on_reply override: the script of test writer / coder k (the task says "k of N")."""

    def reply(seen: str, turn: int, body: dict[str, Any]) -> Step | None:
        found = re.search(pattern, first_text(body)) if seen == role else None
        script = scripts.get(int(found.group(1))) if found else None
        return script[turn] if script and turn < len(script) else None

    return reply


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedAPI]:
    scripted = ScriptedAPI(debugger=[[("submit_diagnosis", DIAGNOSIS)]], coder=list(FIX))
    with serve(scripted) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-issue-e2e")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield scripted


def issue_file(tmp_path: Path) -> Path:
    path = tmp_path / "issue.md"
    path.write_text(ISSUE)
    return path


def test_issue_reproduced_by_the_majority_committed_as_iteration_0_then_repaired(
    tmp_path: Path, api: ScriptedAPI
) -> None:
    writers = {
        1: writes("tests/test_issue.py", REPRO, PREDICTED),
        2: writes("tests/test_issue.py", PASSING, "assert 7 == 7.0"),
        3: writes("tests/test_issue.py", REPRO, PREDICTED),
    }
    coders = {1: CHEAT}
    pick_writer, pick_coder = (
        by_number(writers, "test_writer", r"test writer (\d) of"),
        by_number(coders, "coder", r"coder (\d) of"),
    )
    api.on_reply = lambda role, turn, body: pick_writer(role, turn, body) or pick_coder(role, turn, body)
    # test edits allowed: only the reproduction-test rule can reject the coder that rewrites it
    root = make_repo(tmp_path / "repo", FILES, explore_config="allow-test-edits = true\n")
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "anthropic", "--parallel", "3", "--json", "--issue", str(issue_file(tmp_path))]
    )
    assert code == 0 and summary and summary["status"] == "succeeded", stderr
    repro = summary["reproduction"]
    assert repro["kept"] == ["tests/test_issue.py::test_parse_exponent"] and repro["chosen"] == "a"
    samples = {s["sample"]: s for s in repro["samples"]}
    assert "passed on today's code" in samples["b"]["why_not"] and "agrees with sample a" in samples["c"]["why_not"]
    assert summary["targets"] == ["tests/test_issue.py::test_parse_exponent"]
    # iteration 0 is the commit before the repair, holding the kept test only
    log = git(root, "log", "--format=%s", "main").splitlines()
    assert log[1] == "reproduce: parse('1e3') returns a string" and log[0].startswith("explore: iteration 1")
    assert git(root, "show", "--name-only", "--format=", "main~1").split() == ["tests/test_issue.py"]
    assert (root / "tests/test_issue.py").read_text() == REPRO and "return float(text)" in (
        root / "calc.py"
    ).read_text()
    [iteration] = summary["iterations"]
    cheat = next(c for c in iteration["candidates"] if c["id"] == "a")
    assert cheat["status"] == "rejected" and "reproduction tests" in cheat["reason"]
    assert iteration["winner"] in ("b", "c") and all(c["generator"] == "anthropic" for c in iteration["candidates"])
    report = Path(summary["report"]).read_text()
    assert "## Iteration 0 — reproduce the report" in report and "passed on today's code" in report
    assert_no_debris(root)


def test_no_sample_reproduces_escalates_saying_what_each_tried(tmp_path: Path, api: ScriptedAPI) -> None:
    writers = {
        1: [
            [("write_test", {"path": "calc.py", "content": "pwned", "expected_failure": "x"})],
            [("done", {"summary": "tried the code"})],
        ],
        2: writes("tests/test_issue.py", PASSING, "assert 7 == 7.0"),
        3: writes("tests/test_issue.py", REPRO, "ZeroDivisionError"),
    }
    api.on_reply = by_number(writers, "test_writer", r"test writer (\d) of")
    root = make_repo(tmp_path / "repo", FILES)
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "anthropic", "--parallel", "3", "--json", "--issue", str(issue_file(tmp_path))]
    )
    assert code == 3 and summary and summary["escalation"]["category"] == "ambiguous_requirements", stderr
    samples = {s["sample"]: s for s in summary["reproduction"]["samples"]}
    # the write outside the test patterns was refused and reported; calc.py is untouched
    assert any(d.startswith("calc.py: not a test file") for d in samples["a"]["discarded"])
    assert (root / "calc.py").read_text() == FILES["calc.py"]
    assert "wrote no test file" in samples["a"]["why_not"]
    assert "passed on today's code" in samples["b"]["why_not"]
    assert "not the predicted 'ZeroDivisionError'" in samples["c"]["why_not"]
    reason = summary["escalation"]["reason"]
    assert all(f"sample {s}" in reason for s in "abc")
    report = Path(summary["report"]).read_text()
    assert "no test reproduces the report" in report and "calc.py: not a test file" in report
    assert git(root, "log", "--format=%s", "main").splitlines() == ["initial"]
    assert not [
        r
        for r in api.requests
        if r["body"]["tools"][0]["name"] != "read_file" or "write_test" not in str(r["body"]["tools"])
    ]
    assert_no_debris(root)


def test_chain_falls_back_to_mutate_when_the_api_answers_529(tmp_path: Path, api: ScriptedAPI) -> None:
    api.failures += [Failure(529) for _ in range(40)]
    root = make_repo(
        tmp_path / "repo",
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
    )
    code, summary, stderr = run_cli(["run", str(root), "--agent", "anthropic,mutate", "--parallel", "2", "--json"])
    assert code == 0 and summary and summary["status"] == "succeeded", stderr
    iteration = summary["iterations"][0]
    winner = next(c for c in iteration["candidates"] if c["id"] == iteration["winner"])
    assert winner["generator"] == "mutate"
    assert iteration["fallbacks"] and iteration["fallbacks"][0].startswith("anthropic unavailable:")
    assert "529" in iteration["fallbacks"][0]
    assert "fallback: anthropic unavailable" in stderr and "candidates by mutate" in stderr
    assert "Fallback: anthropic unavailable" in Path(summary["report"]).read_text()
    assert "return a + b" in (root / "calc.py").read_text()


def test_chain_escalates_at_once_on_401(tmp_path: Path, api: ScriptedAPI) -> None:
    api.failures.append(Failure(401))
    root = make_repo(
        tmp_path / "repo",
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
    )
    code, summary, stderr = run_cli(["run", str(root), "--agent", "anthropic,mutate", "--json"])
    assert code == 3 and summary and summary["escalation"]["category"] == "external_service", stderr
    assert "401" in summary["escalation"]["reason"]
    assert summary["iterations"] == [] and len(api.requests) == 1
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_issue_with_mutate_alone_is_a_usage_error(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "mutate", "--json", "--issue", str(issue_file(tmp_path))]
    )
    assert code == 2 and summary and "--issue needs a generator that can write tests" in summary["error"], stderr
    assert "anthropic or command" in stderr
    assert not (root / ".explore" / "runs").exists() or not list((root / ".explore" / "runs").iterdir())


AGENT = """import json, os, pathlib
assert os.environ["EXPLORE_ROLE"] == "test-writer"
assert "1e3" in pathlib.Path(os.environ["EXPLORE_ISSUE_FILE"]).read_text()
pathlib.Path("tests/test_issue.py").write_text({repro!r})
pathlib.Path("calc.py").write_text("def parse(text):\\n    return float(text)\\n")
pathlib.Path(os.environ["EXPLORE_RESULT_FILE"]).write_text(json.dumps({{"expected_failure": {predicted!r}}}))
"""


def test_command_test_writer_keeps_only_test_files(tmp_path: Path) -> None:
    """With --agent command the agent runs as the test writer; its code edit is discarded and reported."""
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT.format(repro=REPRO, predicted=PREDICTED))
    root = make_repo(tmp_path / "repo", FILES)
    code, summary, stderr = run_cli(
        [
            "run",
            str(root),
            "--agent",
            "command",
            "--agent-cmd",
            f"{sys.executable} {agent}",
            "--parallel",
            "1",
            "--max-iterations",
            "1",
            "--json",
            "--issue",
            str(issue_file(tmp_path)),
        ]
    )
    assert summary and summary["reproduction"]["kept"] == ["tests/test_issue.py::test_parse_exponent"], stderr
    [sample] = summary["reproduction"]["samples"]
    assert sample["discarded"] == ["calc.py: not a test file, discarded"] and sample["files"] == ["tests/test_issue.py"]
    assert git(root, "show", "--name-only", "--format=", summary["reproduction"]["commit"]).split() == [
        "tests/test_issue.py"
    ]
