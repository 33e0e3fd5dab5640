"""The test writer of `explore run --issue`: its own conversation with read-only tools over the
repository plus `write_test(path, content, expected_failure)`, which writes only paths matching
the test patterns and refuses (and records) any other. It ends with `done`."""

from __future__ import annotations

from typing import Any

from ...decide.redaction import redact
from ..base import TestWriteRequest, WrittenTests
from .session import Session, Transcript, converse
from .tools import READ_TOOLS, ToolError, Workspace

SYSTEM = """You are a test writer working for explore, a tool that repairs code against failing tests.
You get a bug report. Read the repository with read_file, list_files and search, then write one
small pytest test file with write_test that reproduces the report: it must FAIL on today's code,
for the reason the report describes, and pass once the bug is fixed. Do not fix the code. With
each file, state the failure you expect (expected_failure): the exact assertion or error text
pytest will show, e.g. "assert '1e3' == 1000.0" or "ValueError: bad input". Then call done."""

WRITE_TEST = {
    "name": "write_test",
    "description": "Write a test file (only paths matching the project's test patterns are allowed).",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Test file path relative to the repository root, e.g. tests/test_issue.py.",
            },
            "content": {"type": "string", "description": "The full file content."},
            "expected_failure": {
                "type": "string",
                "description": "The assertion or error text the test fails with on today's code.",
            },
        },
        "required": ["path", "content", "expected_failure"],
    },
}
DONE = {
    "name": "done",
    "description": "Declare the reproduction tests written.",
    "input_schema": {
        "type": "object",
        "properties": {"summary": {"type": "string", "description": "What the tests check and why they fail today."}},
        "required": ["summary"],
    },
}
TOOLS = [*READ_TOOLS, WRITE_TEST, DONE]


def task_text(request: TestWriteRequest) -> str:
    return "\n".join(
        [
            "# Bug report",
            "",
            request.issue.strip(),
            "",
            f"Test files must match one of: {', '.join(request.test_patterns)}.",
            f"The tests run with: {request.test_command.describe()}.",
            f"You are test writer {request.index + 1} of {request.of}, working independently.",
            "Write the reproduction test now, then call done.",
        ]
    )


async def write(session: Session, request: TestWriteRequest, max_turns: int, transcript: Transcript) -> WrittenTests:
    workspace = Workspace(request.workdir, writable=True, allow_test_edits=True, test_patterns=request.test_patterns)
    written = WrittenTests()
    messages: list[dict[str, Any]] = [{"role": "user", "content": redact(task_text(request))}]
    finished = False

    async def run(name: str, args: dict[str, Any]) -> tuple[str, bool]:
        nonlocal finished
        if name == "done":
            written.summary = str(args.get("summary") or "")
            finished = True
            return "done", False
        try:
            if name == "write_test":
                return write_test(workspace, written, args), False
            if name in ("read_file", "list_files", "search"):
                return workspace.run(name, args), False
            raise ToolError(f"unknown tool {name!r}: use read_file, list_files, search, write_test or done")
        except ToolError as exc:
            return str(exc), True

    await converse(
        session,
        messages,
        run,
        transcript,
        max_turns,
        lambda: finished,
        "Use write_test to write the reproduction test, then call done.",
    )
    if not written.summary:
        written.summary = f"stopped without done; wrote {', '.join(sorted(written.predicted)) or 'nothing'}"
    written.refused = list(workspace.refused)
    return written


def write_test(workspace: Workspace, written: WrittenTests, args: dict[str, Any]) -> str:
    """Write one test file; a path outside the test patterns is refused and recorded."""
    path, expected = args.get("path"), args.get("expected_failure")
    target = workspace.resolve(path)
    rel = workspace.rel(target)
    if not workspace.is_test(rel):
        workspace.refused.append(f"{rel}: not a test file (test patterns: {', '.join(workspace.test_patterns)})")
        raise ToolError(
            f"refused: {rel} does not match the test patterns ({', '.join(workspace.test_patterns)}); "
            "write_test writes test files only"
        )
    if not isinstance(expected, str) or not expected.strip():
        raise ToolError("expected_failure must say which assertion or error the test fails with today")
    done = workspace.write_file(rel, args.get("content"))
    written.predicted[rel] = expected.strip()
    return done
