"""The fan-out's shared state while its candidates run: their test runs and patches, the twins
waiting on their original (`done`), and what the candidates found that stops the run."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from ..decide import escalation
from ..edges.worktrees import Captured
from ..model.testresults import TestRun
from .turns import Turns


@dataclass
class Board:
    """The fan-out's own bookkeeping while candidates run (never read outside the scheduler)."""

    runs: dict[str, TestRun] = field(default_factory=dict)
    patches: dict[str, str] = field(default_factory=dict)
    """The patch each candidate's test jobs apply (its exact bytes, surrogate-escaped)."""
    tested: dict[str, Captured] = field(default_factory=dict)
    """Each candidate's change as captured before its tests ran: what a winner's commit is built from."""
    whole: set[str] = field(default_factory=set)
    """Candidates whose last full-suite run was one unsharded job on exactly their tested tree: it was their final confirmation."""
    kept: dict[str, frozenset[str]] = field(default_factory=dict)
    """The ignored entries of each candidate's worktree before its generator ran (worktree_setup's)."""
    keys: dict[str, str] = field(default_factory=dict)
    first_by_key: dict[str, str] = field(default_factory=dict)
    estimates: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    """Candidates whose whole-suite first run never came: a validated one outranks them whatever it finds."""
    turns: Turns = field(default_factory=lambda: Turns(1))
    """The whole-suite first runs' turns (turns.py); fan_out sets the slots and the candidates."""
    deadlines: dict[str, anyio.CancelScope] = field(default_factory=dict)
    """Each running candidate's --branch-timeout scope: waiting for a turn or for its twin's tests is not its own time."""
    prospect: str | None = None
    """The candidate whose affected tests all passed and whose whole run is under way (testjobs.prospect)."""
    done: dict[str, anyio.Event] = field(default_factory=dict)
    running: int = 0
    infra_error: str | None = None
    stop: Exception | None = None
    destructive: dict[str, escalation.Pattern] = field(default_factory=dict)
    removals: dict[str, list[str]] = field(default_factory=dict)
    """The removals each candidate adds that were judged not destructive, with the rule that decided."""
    agent_escalation: dict[str, escalation.Pattern] = field(default_factory=dict)

    def agreement(self, cid: str) -> int:
        """How many candidates so far share cid's normalised patch (cid included)."""
        key = self.keys.get(cid)
        return sum(1 for other in self.keys.values() if other == key) if key is not None else 1

    def twin_of(self, cid: str) -> str | None:
        twin = self.first_by_key.get(self.keys.get(cid, ""))
        return twin if twin and twin != cid else None

    def forget(self, cid: str) -> None:
        """cid runs again from the start (a replay): nothing it left counts."""
        for table in (self.runs, self.patches, self.destructive, self.agent_escalation):
            table.pop(cid, None)
        key = self.keys.pop(cid, None)
        if key is not None and self.first_by_key.get(key) == cid:
            del self.first_by_key[key]
        self.estimates.discard(cid)
        self.skipped.discard(cid)
        self.turns.withdraw(cid)
        self.done[cid] = anyio.Event()
