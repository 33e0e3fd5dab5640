"""File tools confined to one worktree. Every path the model names is resolved inside the
root; `..` that escapes, absolute paths, symlinks pointing out and `.git` are refused and
logged. Test files are read-only unless the user allows test edits. Errors come back to the
model as `is_error` tool results (ToolError), never as exceptions out of the conversation."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ...model.testfiles import is_test_file
from ..prompt import head_tail

log = logging.getLogger("explore.generators.anthropic")

DEFAULT_TEST_PATTERNS = ["test_*.py", "*_test.py", "tests/*", "**/tests/*", "conftest.py", "**/conftest.py"]
SKIP_DIRS = {".git", "__pycache__", ".explore", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache", ".tox"}
MAX_READ_CHARS = 40_000
MAX_LIST = 400
MAX_MATCHES = 100


class ToolError(Exception):
    """A tool call that failed: its message goes back to the model with is_error true."""


def _schema(props: dict[str, str], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": doc} for name, doc in props.items()},
        "required": required,
    }


READ_FILE = {
    "name": "read_file",
    "description": "Read a text file of the repository.",
    "input_schema": _schema({"path": "Path relative to the repository root."}, ["path"]),
}
LIST_FILES = {
    "name": "list_files",
    "description": "List the files under a folder of the repository (recursively).",
    "input_schema": _schema({"path": "Folder relative to the repository root ('.' for all)."}, ["path"]),
}
SEARCH = {
    "name": "search",
    "description": "Search the repository's text files for a regular expression.",
    "input_schema": _schema(
        {"pattern": "A Python regular expression.", "path": "Optional folder or file to search."}, ["pattern"]
    ),
}
REPLACE_IN_FILE = {
    "name": "replace_in_file",
    "description": "Replace the exactly-one occurrence of `old` in a file with `new`.",
    "input_schema": _schema(
        {
            "path": "Path relative to the repository root.",
            "old": "Exact text, occurring once.",
            "new": "Replacement text.",
        },
        ["path", "old", "new"],
    ),
}
WRITE_FILE = {
    "name": "write_file",
    "description": "Write a file (a new file, or the whole content of an existing one).",
    "input_schema": _schema(
        {"path": "Path relative to the repository root.", "content": "The full file content."}, ["path", "content"]
    ),
}
FINISH = {
    "name": "finish",
    "description": "Declare the change complete.",
    "input_schema": {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "What you changed and why."},
            "confidence": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "How likely the change makes the failing tests pass (0-1).",
            },
        },
        "required": ["summary", "confidence"],
    },
}
READ_TOOLS = [READ_FILE, LIST_FILES, SEARCH]
CODER_TOOLS = [READ_FILE, REPLACE_IN_FILE, WRITE_FILE, FINISH]


@dataclass
class Workspace:
    """One worktree as the model sees it."""

    root: Path
    writable: bool = False
    allow_test_edits: bool = False
    test_patterns: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Every refused path, for the candidate's log."""
    changed: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.test_patterns = list(self.test_patterns) or list(DEFAULT_TEST_PATTERNS)

    def _refuse(self, path: str, why: str) -> ToolError:
        self.refused.append(f"{path}: {why}")
        log.warning("refused path %r outside the worktree: %s", path, why)
        return ToolError(f"refused: {path!r} {why}; use a path relative to the repository root, inside it")

    def resolve(self, path: Any) -> Path:
        """The real path inside the root, or ToolError (and a log line)."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string relative to the repository root")
        raw = path.strip()
        if raw.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", raw):
            raise self._refuse(raw, "is absolute")
        target = (self.root / raw).resolve()
        if target != self.root and self.root not in target.parents:
            why = (
                "points outside the worktree through a symlink"
                if ".." not in PurePosixPath(raw).parts
                else "escapes the worktree with '..'"
            )
            raise self._refuse(raw, why)
        rel = target.relative_to(self.root).as_posix()
        if rel.split("/")[0] == ".git":
            raise self._refuse(raw, "is inside .git")
        return target

    def rel(self, target: Path) -> str:
        return target.relative_to(self.root).as_posix() or "."

    def is_test(self, rel: str) -> bool:
        return is_test_file(rel, self.test_patterns)

    # -- read-only tools ------------------------------------------------------------------
    def read_file(self, path: Any) -> str:
        target = self.resolve(path)
        if not target.is_file():
            raise ToolError(f"{path!r} is not a file (list_files shows what exists)")
        try:
            text = target.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path!r} is not a UTF-8 text file") from None
        return head_tail(text, MAX_READ_CHARS)

    def list_files(self, path: Any = ".") -> str:
        base = self.resolve(path or ".")
        if not base.is_dir():
            raise ToolError(f"{path!r} is not a folder")
        found: list[str] = []
        for item in sorted(base.rglob("*")):
            parts = item.relative_to(self.root).parts
            if any(p in SKIP_DIRS or p.endswith(".egg-info") for p in parts) or not item.is_file():
                continue
            if item.is_symlink() and self.root not in item.resolve().parents:
                continue
            found.append(self.rel(item))
            if len(found) >= MAX_LIST:
                found.append(f"… (more than {MAX_LIST} files; list a subfolder)")
                break
        return "\n".join(found) or "(no files)"

    def search(self, pattern: Any, path: Any = None) -> str:
        try:
            regex = re.compile(str(pattern))
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        base = self.resolve(path or ".")
        files = [base] if base.is_file() else [p for p in sorted(base.rglob("*")) if p.is_file()]
        hits: list[str] = []
        for file in files:
            rel = file.relative_to(self.root)
            if any(p in SKIP_DIRS for p in rel.parts) or (
                file.is_symlink() and self.root not in file.resolve().parents
            ):
                continue
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(lines, 1):
                if regex.search(line):
                    hits.append(f"{rel.as_posix()}:{number}: {line.strip()[:200]}")
                    if len(hits) >= MAX_MATCHES:
                        return "\n".join(hits) + f"\n… (stopped at {MAX_MATCHES} matches)"
        return "\n".join(hits) or "(no matches)"

    # -- writing tools ---------------------------------------------------------------------
    def _writable(self, path: Any) -> Path:
        if not self.writable:
            raise ToolError("this role is read-only")
        target = self.resolve(path)
        rel = self.rel(target)
        if not self.allow_test_edits and self.is_test(rel):
            raise ToolError(f"{rel} is a test file: tests are read-only, change the code under test instead")
        return target

    def replace_in_file(self, path: Any, old: Any, new: Any) -> str:
        target = self._writable(path)
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise ToolError("old and new must be strings, and old must not be empty")
        if not target.is_file():
            raise ToolError(f"{path!r} does not exist (write_file creates files)")
        try:
            with target.open(encoding="utf-8", newline="") as handle:  # keep the file's line endings
                text = handle.read()
        except UnicodeDecodeError:
            raise ToolError(f"{path!r} is not a UTF-8 text file: replace_in_file cannot edit it") from None
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\n" in old and "\r" not in old:  # read_file showed CRLF as \n
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
        if count != 1:
            raise ToolError(
                f"`old` occurs {count} times in {self.rel(target)}; it must occur exactly once — "
                "include more surrounding lines"
            )
        target.write_text(text.replace(old, new, 1), encoding="utf-8", newline="")
        self.changed.add(self.rel(target))
        return f"replaced 1 occurrence in {self.rel(target)}"

    def write_file(self, path: Any, content: Any) -> str:
        target = self._writable(path)
        if not isinstance(content, str):
            raise ToolError("content must be a string")
        if target.is_dir():
            raise ToolError(f"{path!r} is a folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8", newline="")
        self.changed.add(self.rel(target))
        return f"wrote {len(content)} characters to {self.rel(target)}"

    def run(self, name: str, args: dict[str, Any]) -> str:
        """Dispatch one tool call by its contract name (issue 4 §9)."""
        if not isinstance(args, dict):
            raise ToolError("tool input must be an object")
        try:
            if name == "read_file":
                return self.read_file(args.get("path"))
            if name == "list_files":
                return self.list_files(args.get("path") or ".")
            if name == "search":
                return self.search(args.get("pattern", ""), args.get("path"))
            if name == "replace_in_file":
                return self.replace_in_file(args.get("path"), args.get("old"), args.get("new"))
            if name == "write_file":
                return self.write_file(args.get("path"), args.get("content"))
        except (OSError, UnicodeError) as exc:
            raise ToolError(f"{name} failed: {getattr(exc, 'strerror', None) or exc}") from None
        raise ToolError(f"unknown tool {name!r}")
