"""The gate that asks: when a run escalates or ends below the quality gate and a person sits at
the terminal, say why in one sentence and offer the choices — retry with a hint, roll back, skip,
abort (and, for a destructive fix, apply it after an explicit yes naming what it destroys).

Deciding whether to ask and what to offer is pure; `ask` does the talking through two callables
so the caller owns the terminal. Acting on the choice is the caller's (cli) job."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..decide import escalation
from ..model.runstate import NEEDS_PERSON, EscalationCategory, RunState

Choice = Literal["hint", "rollback", "skip", "abort", "apply"]


class Decision(BaseModel):
    choice: Choice
    hint: str | None = None
    to: int | None = None
    """The iteration to roll back to (0 = before any merge)."""


class Destructive(BaseModel):
    """A destructive candidate a person may still choose to apply."""

    cid: str
    patch: Path
    what: str
    """What it would destroy, quoted from the patch."""


def should_ask(
    run: RunState,
    *,
    as_json: bool,
    no_input: bool,
    stdin_tty: bool,
    stderr_tty: bool,
    env: dict[str, str] | None = None,
) -> bool:
    """Only a person at a terminal is asked; never under --json, --no-input or CI=true."""
    env = dict(os.environ) if env is None else env
    if as_json or no_input or env.get("CI", "").lower() in ("true", "1") or not (stdin_tty and stderr_tty):
        return False
    return run.status in NEEDS_PERSON


def why(run: RunState) -> str:
    """The category and the reason in one sentence, as the HELP NEEDED block says them."""
    if run.escalation:
        e = run.escalation
        return f"The run needs a person ({e.category}): {e.reason}."
    rate = run.current.pass_rate
    left = len(run.current_failing)
    return f"The run ended below the quality gate ({rate:.1f}%, {left} test(s) still failing): {run.stop_reason or 'no fix found'}."


def rollback_points(run: RunState) -> list[tuple[int, float]]:
    """(iteration, pass rate after it) of every point the run branch can move back to."""
    points = [(0, run.baseline.pass_rate)]
    points += [(r.n, r.pass_rate) for r in run.iterations if r.commit]
    return points


def destructive_candidate(run: RunState, run_dir: Path) -> Destructive | None:
    """The candidate a destructive escalation stopped at, with the lines that destroy."""
    if not run.escalation or run.escalation.category != EscalationCategory.destructive:
        return None
    found = re.match(r"candidate (\w+): ", run.escalation.reason)
    if not found:
        return None
    patch = run_dir / f"iteration-{len(run.iterations) + 1}" / f"candidate-{found.group(1)}" / "candidate.diff"
    if not patch.is_file():
        return None
    added = escalation.added_lines(patch.read_text(encoding="utf-8", errors="replace"))
    pattern = escalation.match(added, (EscalationCategory.destructive,))
    lines = [line.strip() for line in added.splitlines() if pattern and pattern.regex.search(line)]
    return Destructive(cid=found.group(1), patch=patch, what="; ".join(lines[:3]) or run.escalation.reason)


def menu(run: RunState, destructive: Destructive | None, generator: str = "") -> list[tuple[str, Choice, str]]:
    """(key, choice, label) of what is offered: only what can help for the category and the generator."""
    items: list[tuple[str, Choice, str]] = [
        ("h", "hint", "retry with a hint (the run resumes with it)"),
        ("r", "rollback", "roll back the run branch to an earlier iteration"),
        ("s", "skip", "skip: record the remaining failures as known; later runs leave them out"),
        ("a", "abort", "abort: clean up and exit"),
    ]
    environment = run.escalation is not None and run.escalation.category in escalation.ENVIRONMENT
    if not escalation.uses_hints(generator) or environment:
        items = [i for i in items if i[1] != "hint"]
    if not any(r.commit for r in run.iterations) or environment:
        items = [i for i in items if i[1] != "rollback"]
    if not run.current_failing:
        items = [i for i in items if i[1] != "skip"]
    if destructive:
        items.append(("y", "apply", f"apply candidate {destructive.cid} anyway (destroys: {destructive.what})"))
    return items


def ask(
    run: RunState,
    say: Callable[[str], None],
    read: Callable[[str], str],
    destructive: Destructive | None = None,
    generator: str = "",
) -> Decision:
    """Show why and the choices; read until a valid answer. EOF (Ctrl-D) counts as abort."""
    say(why(run))
    if run.escalation is not None and run.escalation.category in escalation.ENVIRONMENT:
        say(f"  no code edit can help here: fix what the reason names, then `explore resume {run.run_id}`")
    elif not escalation.uses_hints(generator):
        say(f"  ({generator} cannot use a hint; with ANTHROPIC_API_KEY or --agent-cmd a new run can take one)")
    items = menu(run, destructive, generator)
    for key, _, label in items:
        say(f"  [{key}] {label}")
    keys = {key: choice for key, choice, _ in items}
    while True:
        try:
            answer = read(f"choose {'/'.join(keys)}: ").strip().lower()[:1]
        except EOFError:
            return Decision(choice="abort")
        choice = keys.get(answer)
        if choice is None:
            say(f"  please type one of {', '.join(keys)}")
        elif choice == "hint":
            text = _read(read, "hint (what the fix should do): ")
            if text:
                return Decision(choice="hint", hint=text)
        elif choice == "rollback":
            points = rollback_points(run)
            for n, rate in points:
                say(f"  {n}: " + ("before any merge" if n == 0 else f"after iteration {n}") + f" — {rate:.1f}%")
            picked = _read(read, f"roll back to ({', '.join(str(n) for n, _ in points)}): ")
            if picked.isdigit() and int(picked) in {n for n, _ in points}:
                return Decision(choice="rollback", to=int(picked))
            say("  not one of the listed iterations")
        elif choice == "apply":
            assert destructive is not None
            say(f"  candidate {destructive.cid} would destroy: {destructive.what}")
            if _read(read, "type yes to apply it: ") == "yes":
                return Decision(choice="apply")
            say("  not applied")
        else:
            return Decision(choice=choice)


def _read(read: Callable[[str], str], prompt: str) -> str:
    try:
        return read(prompt).strip()
    except EOFError:
        return ""
