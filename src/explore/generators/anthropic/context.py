"""What the model is shown, within a token budget (default 50k): the failing tests and their
output (~20%), the diff since the run's baseline (~20%), the code around the failures and one
hop of what it calls (~25%), and what earlier iterations tried (~15%). Long parts are cut by
keeping head and tail, and the context says what was cut — the failure may hide there."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from ...edges import gitrepo
from ..base import ProposalRequest
from ..prompt import head_tail

CHARS_PER_TOKEN = 4
SHARES = {"failures": 0.20, "diff": 0.20, "code": 0.25, "history": 0.15}
FRAME = re.compile(r'(?:File "([^"]+)", line (\d+))|(?:^([\w./\\-]+\.py):(\d+):)', re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
BLOCK = re.compile(r"\s*(?:(?:async\s+)?def|class)\s")
LEADING = 40
AROUND = 15


@dataclass
class Context:
    text: str
    cut: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return len(self.text) // CHARS_PER_TOKEN


async def git_diff(cwd: Path, *revs: str) -> str:
    try:
        done = await anyio.run_process([*gitrepo.DIFF, "--text", *revs], cwd=cwd, check=False)
    except OSError:
        return ""
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""


async def is_ancestor(cwd: Path, older: str, newer: str) -> bool:
    try:
        done = await anyio.run_process(
            [*gitrepo.GIT, "merge-base", "--is-ancestor", older, newer], cwd=cwd, check=False
        )
    except OSError:
        return False
    return done.returncode == 0


def failures_text(request: ProposalRequest) -> str:
    parts = [f"{len(request.failing)} failing test(s)."]
    for outcome in request.failing:
        parts.append(f"\n### {outcome.id} ({outcome.outcome})\n{outcome.longrepr or outcome.message or '(no output)'}")
    return "\n".join(parts)


def frames(request: ProposalRequest, root: Path) -> list[tuple[str, int]]:
    """Repository files and lines named by the failures' tracebacks, most recent last."""
    seen: list[tuple[str, int]] = []
    root = root.resolve()
    for outcome in request.failing:
        for match in FRAME.finditer(outcome.longrepr or outcome.message or ""):
            name, line = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
            path = Path(name)
            path = (path if path.is_absolute() else root / path).resolve()
            if root not in path.parents or "site-packages" in path.parts or not path.is_file():
                continue
            key = (path.relative_to(root).as_posix(), int(line))
            if key not in seen:
                seen.append(key)
    return seen


def _definitions(root: Path, names: set[str], skip: set[tuple[str, int]]) -> list[str]:
    """One hop: the source of functions and classes the failing lines call."""
    found: list[str] = []
    pattern = re.compile(r"^(\s*)(?:async\s+)?(?:def|class)\s+(" + "|".join(map(re.escape, sorted(names))) + r")\b")
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if any(
            p.startswith(".") or p in {"__pycache__", "venv", "site-packages"} for p in file.relative_to(root).parts
        ):
            continue
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for index, line in enumerate(lines):
            match = pattern.match(line)
            if not match or (rel, index + 1) in skip:
                continue
            indent = len(match.group(1))
            end = index + 1
            while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            body = "\n".join(f"{n + 1:5d}  {lines[n]}" for n in range(index, min(end, index + 60)))
            found.append(f"#### {rel}:{index + 1} — {match.group(2)}\n{body}")
    return found


def leading_lines(lines: list[str], line: int) -> list[str]:
    """The frame's line and the lines of its function before it (at most LEADING): a test usually
    calls the code under test on one line and asserts on the next, so that line alone names nothing."""
    if not 0 < line <= len(lines):
        return []
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    start = line - 1
    while indent and start > max(0, line - 1 - LEADING):
        start -= 1
        text = lines[start]
        if text.strip() and len(text) - len(text.lstrip()) < indent and (BLOCK.match(text) or not text[0].isspace()):
            return lines[start + 1 : line]  # the enclosing def/class, or a module-level statement
    return lines[start:line]


def code_text(request: ProposalRequest, root: Path) -> str:
    parts: list[str] = []
    called: set[str] = set()
    shown: set[tuple[str, int]] = set()
    for rel, line in frames(request, root)[-12:]:
        lines = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
        lo, hi = max(1, line - AROUND), min(len(lines), line + AROUND)
        body = "\n".join(f"{'>' if n == line else ' '}{n:5d}  {lines[n - 1]}" for n in range(lo, hi + 1))
        parts.append(f"#### {rel}:{line}\n{body}")
        shown.update((rel, n) for n in range(lo, hi + 1))
        called.update(name for text in leading_lines(lines, line) for name in CALL.findall(text))
    called -= {"print", "len", "str", "int", "dict", "list", "set", "isinstance", "range", "super", "assert"}
    if called:
        parts.append("### What those lines call (one hop)")
        parts.extend(_definitions(root, called, shown)[:20])
    return "\n\n".join(parts) or "(no repository frames in the tracebacks: use read_file and search)"


def history_text(request: ProposalRequest) -> str:
    lines: list[str] = []
    for iteration in request.history:
        lines.append(f"- iteration {iteration.n} ({iteration.strategy}): pass rate after {iteration.pass_rate:.1f}%")
        for c in iteration.candidates:
            merged = "merged" if iteration.winner == c.id and iteration.commit else (c.reason or c.status.value)
            what = c.hypothesis or c.operator or "(no description)"
            lines.append(
                f"  - {c.id}: {what} [{', '.join(c.files_changed) or 'no files'}] → {f'{c.pass_rate:.1f}%' if c.tested else 'not tested'}, {merged}"
            )
    if request.tried_patches:
        lines.append("\nPatches already tried (never propose these again):")
        lines.extend(f"```diff\n{head_tail(p, 1500)}\n```" for p in request.tried_patches[-10:])
    return "\n".join(lines) or "(first iteration: nothing tried yet)"


def allot(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Each section's share of `total` characters; what a small section leaves goes to the others."""
    limits = {k: int(total * SHARES[k] / sum(SHARES.values())) for k in sizes}
    spare = sum(limits[k] - sizes[k] for k in sizes if sizes[k] < limits[k])
    hungry = [k for k in sizes if sizes[k] > limits[k]]
    for k in hungry:
        limits[k] += spare // len(hungry)
    return limits


async def assemble(request: ProposalRequest, root: Path, token_budget: int = 50_000) -> Context:
    diff = (
        await git_diff(root, request.base_commit, request.current_commit)
        if request.base_commit != request.current_commit
        else ""
    )
    regressed = ""
    if request.strategy.shape == "minimal" and request.regression:
        before, after = request.regression
        # only a change on the way to `after`: a commit explore never merged, or one rolled back, is not one
        change = await git_diff(root, before, after) if await is_ancestor(root, before, after) else ""
        if change:
            regressed = (
                f"### The change that regressed ({before[:10]}..{after[:10]}, after which the pass rate fell)\n"
                f"```diff\n{change}```\n\n"
            )
    sections = {
        "failures": failures_text(request),
        "diff": regressed + (f"```diff\n{diff}```" if diff else "(no changes since the baseline)"),
        "code": code_text(request, root),
        "history": history_text(request),
    }
    limits = allot({k: len(v) for k, v in sections.items()}, int(token_budget * CHARS_PER_TOKEN * sum(SHARES.values())))
    cut: list[str] = []
    for key, text in sections.items():
        if len(text) > limits[key]:
            cut.append(f"{key}: {len(text) - limits[key]:,} of {len(text):,} characters cut from the middle")
            sections[key] = head_tail(text, limits[key])
    titles = {
        "failures": "Failing tests and their output",
        "diff": "Diff since the run's baseline",
        "code": "Code around the failures",
        "history": "Earlier iterations: what was tried and what it did",
    }
    body = [f"# Repair context (iteration {request.iteration}, strategy {request.strategy.name})"]
    if cut:
        body.append(
            f"Parts were cut to fit a {token_budget:,}-token budget — the failure may be explained by what "
            "was cut; read the files to see it:\n" + "\n".join(f"- {c}" for c in cut)
        )
    if request.hint:
        body.append(f"## Guidance from a person\n{request.hint}")
    body += [f"## {titles[k]}\n{v}" for k, v in sections.items()]
    return Context("\n\n".join(body) + "\n", cut)
