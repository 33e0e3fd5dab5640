"""Source spans, minimal edits and the unified diffs they become.

Mutations are found on the AST but written back as replacements of exact source spans, so a
patch changes only the characters it means to and keeps the file's formatting.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass, field

from ...decide import parsing


@dataclass(frozen=True, order=True)
class Edit:
    """Replace source[start:end] (character offsets) with text."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Mutant:
    """One candidate change: one or more edits in one or more files, and how to describe it."""

    file: str
    line: int
    col: int
    operator: str
    family: str
    prior: float
    old: str
    new: str
    single_token: bool
    edits: tuple[tuple[str, Edit], ...]
    """(file, edit) pairs; a combination of mutants carries the edits of each."""
    parts: tuple[Mutant, ...] = field(default=(), compare=False)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def lines(self) -> tuple[tuple[str, int], ...]:
        return tuple((p.file, p.line) for p in self.parts) if self.parts else ((self.file, self.line),)

    def describe(self) -> str:
        if self.parts:
            return " + ".join(p.describe() for p in self.parts)
        return f"{self.operator} at {self.location}: `{self.old}` → `{self.new}`"


class Source:
    """A module's text with its AST and a map from (line, byte column) to character offset."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.tree = parsing.parse(text)
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col_bytes: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        col = len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return self.starts[lineno - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def col_of(self, offset: int) -> int:
        return offset - self.starts[self.line_of(offset) - 1]


_OPERATOR_RE = re.compile(
    r"not\s+in\b|is\s+not\b|<<=?|>>=?|\*\*=?|//=?|[-+*/%@&|^<>!=]=?|\band\b|\bor\b|\bin\b|\bis\b|\bnot\b"
)


def find_operator(source: Source, start: int, end: int) -> tuple[int, int] | None:
    """The operator token in the gap between two operands: only brackets, blanks and comments
    can share the gap with it, so the first operator-shaped run outside a comment is it."""
    gap = source.text[start:end]
    masked = re.sub(r"#[^\n]*", lambda m: " " * len(m.group()), gap)
    match = _OPERATOR_RE.search(masked)
    if match is None:
        return None
    return start + match.start(), start + match.end()


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (any order) to text."""
    out = text
    for edit in sorted(edits, reverse=True):
        out = out[: edit.start] + edit.text + out[edit.end :]
    return out


def overlaps(a: list[Edit], b: list[Edit]) -> bool:
    return any(x.start < y.end and y.start < x.end for x in a for y in b)


def mutated_sources(mutant: Mutant, originals: dict[str, str]) -> dict[str, str]:
    """File → full mutated text for every file the mutant touches."""
    by_file: dict[str, list[Edit]] = {}
    for file, edit in mutant.edits:
        by_file.setdefault(file, []).append(edit)
    return {file: apply_edits(originals[file], edits) for file, edits in sorted(by_file.items())}


def unified_diff(file: str, old: str, new: str) -> str:
    """A git-style diff of one file, applicable with `git apply` (handles a missing final newline)."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out = [f"diff --git a/{file} b/{file}\n"]
    for line in difflib.unified_diff(old_lines, new_lines, f"a/{file}", f"b/{file}", n=3):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
            continue
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def make_patch(mutant: Mutant, originals: dict[str, str]) -> str:
    return "".join(unified_diff(f, originals[f], text) for f, text in mutated_sources(mutant, originals).items())


def normalise_patch(patch: str) -> str:
    """Files and changed lines only, blanks trimmed: two diffs of the same change compare equal
    whatever their headers, hunk offsets or context."""
    out: list[str] = []
    for line in patch.splitlines():
        if line.startswith("+++ ") or line.startswith("--- "):
            name = line[4:].strip()
            out.append(line[:4] + (name[2:] if name[:2] in ("a/", "b/") else name))
        elif line.startswith(("+", "-")):
            out.append(line[0] + line[1:].strip())
    return "\n".join(out)


@dataclass(frozen=True)
class Change:
    """What one operator does at one node: the edits, and a short before/after for people."""

    edits: tuple[Edit, ...]
    old: str
    new: str
    anchor: int = 0
    """The line the change belongs to, when not the line its first edit starts on (an insertion
    belongs to the statement it follows)."""


def replace(source: Source, node: ast.AST, text: str) -> Change:
    """Replace a node's whole span."""
    start, end = source.span(node)
    return Change((Edit(start, end, text),), source.text[start:end], text)
