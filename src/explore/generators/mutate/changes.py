"""What git says changed: the lines and hunks surgical mutates nearest to, and the files a warm
screening worker must reload."""

from __future__ import annotations

import re

from ...edges import gitrepo, procs
from ..base import ProposalRequest
from . import revert


async def changed_lines(request: ProposalRequest) -> dict[str, set[int]]:
    """Lines (new side) changed since the run's base commit — else by the last commit — for
    surgical's "nearest to the change"."""
    ranges = [[request.base_commit, request.current_commit], ["HEAD~1", "HEAD"]]
    for commits in ranges:
        if commits[0] == commits[1]:
            continue
        done = await procs.run(
            [*gitrepo.DIFF, "--text", "-U0", *commits, "--", "*.py"], request.scratch, tracker=request.tracker
        )
        found = parse_changed(done.output_tail) if done.exit_code == 0 else {}
        if found:
            return found
    return {}


async def regressing_hunks(request: ProposalRequest) -> list[revert.Hunk]:
    """The hunks of the change after which the pass rate fell (the history's two commits), when
    the later descends from the earlier: a commit explore never merged, or rolled back, is none."""
    if request.regression is None:
        return []
    before, after = request.regression
    ancestor = await procs.run(
        [*gitrepo.GIT, "merge-base", "--is-ancestor", before, after], request.scratch, tracker=request.tracker
    )
    if ancestor.exit_code != 0:
        return []
    done = await procs.run(
        [*gitrepo.DIFF, "--text", "-U0", before, after, "--", "*.py"], request.scratch, tracker=request.tracker
    )
    return revert.parse_hunks(done.output_tail) if done.exit_code == 0 else []


def changed_in(hunks: list[revert.Hunk]) -> dict[str, set[int]]:
    """Lines (after side) the regressing change touched: surgical's "nearest to the change"."""
    out: dict[str, set[int]] = {}
    for hunk in hunks:
        out.setdefault(hunk.file, set()).update(range(hunk.new_start, hunk.new_start + max(len(hunk.new), 1)))
    return out


async def changed_files(request: ProposalRequest, since: str) -> list[str] | None:
    """Absolute paths of the files that differ between `since` and the current commit (None when
    git cannot tell: the caller starts afresh)."""
    if since == request.current_commit:
        return []
    done = await procs.run(
        [*gitrepo.DIFF, "--name-only", since, request.current_commit], request.scratch, tracker=request.tracker
    )
    if done.exit_code != 0:
        return None
    return [str(request.scratch / name) for name in done.output_tail.splitlines() if name.strip()]


def parse_changed(diff: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    file = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:].strip()
            file = name[2:] if name.startswith("b/") else None
        elif line.startswith("@@") and file:
            match = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or 1)
                out.setdefault(file, set()).update(range(start, start + max(count, 1)))
    return out
