"""Usage bookkeeping: what generators spent, per candidate, per iteration and per run."""

from __future__ import annotations

from typing import Any

from .models import RunState


def add(into: dict[str, float], usage: dict[str, float]) -> None:
    for key, value in usage.items():
        # rates are not additive: keep the latest; counts, tokens and dollars add up
        into[key] = value if key.endswith("_per_s") else into.get(key, 0) + value


def book_unrecorded(generator: Any, run: RunState) -> None:
    """Calls of candidates cancelled mid-conversation (Ctrl-C) are in the generator's own run total
    only: keep the larger figure, so a resumed run's budget counts them."""
    total = getattr(generator, "usage", None)
    if isinstance(total, dict):
        for key, value in total.items():
            if not key.endswith("_per_s") and value > run.usage.get(key, 0):
                run.usage[key] = value
