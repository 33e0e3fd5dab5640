"""Surgical's first candidates: undo the change after which the pass rate fell — pure.

The history names the commits on either side of the drop; `git diff -U0 before after` (read at
the edge, by the generator) gives the regressing hunks. Each becomes one mutant that puts the
hunk's old lines back, then, smaller, one mutant per line of a hunk that replaced as many lines
as it removed, and, when there are several hunks, one that reverts them all. They are screened
before the ordinary mutants and ranked before them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .edits import Edit, Mutant

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
PRIOR = 1.0
"""A revert outranks every operator: the history, not a guess, says this change broke the tests."""
MOST = 12
"""Most revert mutants proposed: a large regressing change is cut down by the ordinary search."""


@dataclass(frozen=True)
class Hunk:
    """`-U0` hunk of `before..after`: lines new_start..new_start+len(new)-1 of the after side
    replaced old (at old_start on the before side)."""

    file: str
    old_start: int
    old: tuple[str, ...]
    new_start: int
    new: tuple[str, ...]


def parse_hunks(diff: str) -> list[Hunk]:
    """The hunks of a `git diff -U0` of Python files; a file created or deleted, a binary one or
    one without a final newline is left out (nothing line-wise to put back)."""
    hunks: list[Hunk] = []
    file: str | None = None
    current: dict[str, Any] | None = None

    def close() -> None:
        nonlocal current
        if current is not None and file is not None and not current["odd"]:
            hunks.append(Hunk(file, current["os"], tuple(current["old"]), current["ns"], tuple(current["new"])))
        current = None

    for line in diff.splitlines():
        if line.startswith("diff --git"):
            close()
            file = None
        elif line.startswith("--- "):
            close()
            file = "" if line.strip() == "--- /dev/null" else None
        elif line.startswith("+++ "):
            name = line[4:].strip()
            file = None if file == "" or not name.startswith("b/") or not name.endswith(".py") else name[2:]
        elif (match := HUNK.match(line)) is not None:
            close()
            os_, oc, ns, nc = match.groups()
            current = {
                "os": int(os_),
                "ns": int(ns),
                "old": [],
                "new": [],
                "odd": False,
                "oc": 1 if oc is None else int(oc),
                "nc": 1 if nc is None else int(nc),
            }
        elif current is not None:
            if line.startswith("-"):
                current["old"].append(line[1:] + "\n")
            elif line.startswith("+"):
                current["new"].append(line[1:] + "\n")
            elif line.startswith("\\"):
                current["odd"] = True
    close()
    return [h for h in hunks if h.file]


def line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def undo(hunk: Hunk, text: str, starts: list[int]) -> Edit | None:
    """The edit that puts hunk.old back in place of hunk.new in `text` (the after side); None
    when the text there is no longer what the hunk left (changed since)."""
    if hunk.new:
        first = hunk.new_start - 1
        if first + len(hunk.new) >= len(starts):
            return None
        start, end = starts[first], starts[first + len(hunk.new)]
        if text[start:end] != "".join(hunk.new):
            return None
    else:  # lines were deleted after line new_start: insert them back after it
        if hunk.new_start >= len(starts):
            return None
        start = end = starts[hunk.new_start]
    return Edit(start, end, "".join(hunk.old))


def _short(lines: tuple[str, ...]) -> str:
    text = lines[0].strip() if lines else "(nothing)"
    return text + (" …" if len(lines) > 1 else "")


def _mutant(operator: str, parts: list[tuple[Hunk, Edit]]) -> Mutant:
    hunk = parts[0][0]
    line = max(hunk.new_start, 1) if hunk.new else hunk.new_start + 1
    return Mutant(
        file=hunk.file,
        line=line,
        col=0,
        operator=operator,
        family="revert",
        prior=PRIOR,
        old=_short(hunk.new),
        new=_short(hunk.old),
        single_token=False,
        edits=tuple(sorted(((h.file, e) for h, e in parts), key=lambda fe: (fe[0], fe[1]))),
    )


def reverts(hunks: list[Hunk], sources: dict[str, str]) -> list[Mutant]:
    """Revert mutants in the order they are tried: each hunk; all hunks together (when several);
    then each line of a hunk that replaced lines one for one (the smaller diffs)."""
    undone: list[tuple[Hunk, Edit]] = []
    for hunk in hunks:
        text = sources.get(hunk.file)
        if text is None:
            continue
        edit = undo(hunk, text, line_starts(text))
        if edit is not None:
            undone.append((hunk, edit))
    found = [_mutant("revert_hunk", [pair]) for pair in undone]
    if len(undone) >= 2:
        found.append(_mutant("revert_change", undone))
    for hunk, _ in undone:
        if len(hunk.new) < 2 or len(hunk.old) != len(hunk.new):
            continue
        for i, (old, new) in enumerate(zip(hunk.old, hunk.new)):
            one = Hunk(hunk.file, hunk.old_start + i, (old,), hunk.new_start + i, (new,))
            edit = undo(one, sources[hunk.file], line_starts(sources[hunk.file]))
            if edit is not None:
                found.append(_mutant("revert_line", [(one, edit)]))
    return found[:MOST]
