"""How much a failing test matters: high, medium or low — pure.

From `[tool.explore] criticality = {low = [...], medium = [...], high = [...]}` (path globs,
or `marker:NAME`), else the defaults: tests marked or kept under integration / e2e / slow are
medium, everything else high. Only low-criticality failures may be left by a quality gate
below 100% (status `partial`).
"""

from __future__ import annotations

import fnmatch

from ..model.runstate import Criticality, RunStatus
from ..model.testresults import TestOutcome

LEVELS = ("high", "medium", "low")
MEDIUM_BY_DEFAULT = ("integration", "e2e", "slow")


def _matches(pattern: str, path: str, markers: set[str]) -> bool:
    if pattern.startswith("marker:"):
        return pattern[len("marker:") :] in markers
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.split("::", 1)[0], pattern)


def classify(test_id: str, outcome: TestOutcome | None, configured: dict[str, list[str]]) -> Criticality:
    markers = set(outcome.markers) if outcome else set()
    level: Criticality
    for level in ("low", "medium", "high"):
        if any(_matches(p, test_id, markers) for p in configured.get(level, [])):
            return level
    folders = set(test_id.split("::", 1)[0].split("/")[:-1])
    if markers & set(MEDIUM_BY_DEFAULT) or folders & set(MEDIUM_BY_DEFAULT):
        return "medium"
    return "high"


def gate(pass_rate: float, failing: dict[str, Criticality], target: float) -> RunStatus | None:
    """'succeeded' (green), 'partial' (at or above target with only low failures left), or None."""
    if not failing:
        return "succeeded"
    if target < 100 and pass_rate + 1e-9 >= target and all(level == "low" for level in failing.values()):
        return "partial"
    return None
