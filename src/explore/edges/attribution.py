"""`Watch` attributes a change the guard found to candidates: every candidate that ran since the
last clean check is a suspect. One suspect is the culprit; several are `ambiguous` and the fan-out
replays them one at a time (without the sandbox, concurrent candidates cannot be told apart
otherwise)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import anyio

from explore.edges.guard import Change, Fingerprint, Guard


@dataclass
class Watch:
    """One fan-out's attribution of changes: who ran since the last clean check."""

    guard: Guard
    baseline: Fingerprint
    label: str
    clean_at: float = field(default_factory=time.monotonic)
    spans: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    ambiguous: set[str] = field(default_factory=set)
    named: dict[str, list[str]] = field(default_factory=dict)
    """Files outside the repository that changed while each candidate ran."""
    restored: list[Change] = field(default_factory=list)
    """Every restore this watch made, attributed or not: a fan-out cut short before its candidates'
    results are recorded still names them (run/loop.Runner._put_back)."""
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    @classmethod
    async def start(cls, guard: Guard, label: str) -> Watch:
        return cls(guard, await anyio.to_thread.run_sync(guard.fingerprint), label)

    def enter(self, cid: str) -> None:
        self.spans[cid] = (time.monotonic(), None)

    async def leave(self, cid: str) -> Change | None:
        """cid's processes are done: the change it alone is suspected of, if any. A change in the
        repository with several suspects marks them all ambiguous (see `ambiguous`) and returns
        None; a change elsewhere (never put back) is only named, on every suspect."""
        began, _ = self.spans.get(cid, (time.monotonic(), None))
        self.spans[cid] = (began, time.monotonic())
        async with self.lock:
            now = time.monotonic()
            after = await anyio.to_thread.run_sync(self.guard.fingerprint)
            suspects = sorted(
                c for c, (start, end) in self.spans.items() if start <= now and (end is None or end >= self.clean_at)
            )
            elsewhere = self.guard.elsewhere(self.baseline, after)
            if elsewhere:
                for suspect in suspects:
                    self.named.setdefault(suspect, []).extend(
                        p for p in elsewhere if p not in self.named.get(suspect, [])
                    )
                self.baseline = Fingerprint(
                    self.baseline.git_files, self.baseline.tree, after.elsewhere, self.baseline.objects
                )
            if self.guard.compare(self.baseline, after):
                change = await anyio.to_thread.run_sync(
                    self.guard.restore, self.baseline, after, f"{self.label}-{'-'.join(suspects)}"
                )
                self.restored.append(change)
            else:
                change = None
            self.clean_at = time.monotonic()
        if change is not None and suspects != [cid]:
            self.ambiguous.update(suspects)
            return None
        named = self.named.pop(cid, [])
        if change is None and not named:
            return None
        return Change(
            change.paths if change else [],
            change.restored if change else True,
            change.quarantine if change else None,
            named,
        )

    def forget(self, cid: str) -> None:
        """cid is about to be replayed alone."""
        self.ambiguous.discard(cid)
        self.spans.pop(cid, None)


def reason(change: Change) -> str | None:
    """The rejection reason of a candidate that changed what it must not in the repository."""
    if not change.paths:
        return None
    shown = ", ".join(change.paths[:8]) + (f" (+{len(change.paths) - 8} more)" if len(change.paths) > 8 else "")
    kept = f"; what it wrote is kept in {change.quarantine}" if change.quarantine else ""
    held = (
        "restored byte for byte"
        if change.restored
        else "restore attempted, but they changed again (a process still writing?)"
    )
    return f"wrote outside its worktree: {shown} — {held}{kept}"
