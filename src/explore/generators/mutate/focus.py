"""Per-test coverage for a suite too big to trace whole before Python 3.12 (issue 40.3).

There coverage.py's trace function costs every instruction of every test, whatever files it measures
(1.6-2.6x networkx's suite): a baseline of TRACE_MOST tests or more stops tracing before its first test
(_worker.BIG_REASON), and mutate measures the failing tests' own files instead, in a run of its own —
their passing tests give the contrast. On 3.12+ sys.monitoring records the whole baseline cheaply.

Those files can be heavy (networkx: six test files, 346-384 s of a loaded machine for a handful of
failing tests): the run measures the failing tests and, of those files' passing tests, the ones
nearest them (their classes first, then the rest of their files, the cheapest first) up to a time
bound from the baseline's own per-test seconds (`contrast`); the others are left out by exact id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .localise import shard_parts

BIG_ENV = "EXPLORE_MUTATE_TRACE_MOST"
"""_worker.BIG_ENV: the baseline's plugin reads TRACE_MOST from it."""
TRACE_MOST = 500
"""Tests from which a baseline without sys.monitoring runs untraced (_worker.BIG_ENV). Below it,
about a second of tests, the tracer costs less than the pytest process of its own that `focus` needs."""
BIG_REASON = "a big suite without sys.monitoring: coverage.py's tracer would slow every test of the baseline"
"""_worker.BIG_REASON (the plugin runs in the project's interpreter, without explore)."""


def too_big(result_path: Path) -> bool:
    """The baseline (or one of its shards) stopped tracing for its size."""
    for path in [result_path] if result_path.exists() else shard_parts(result_path):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(raw, dict) and raw.get("reason") == BIG_REASON:
            return True
    return False


CONTRAST_SHARE = 2.0
"""The contrast's recorded seconds, at most this many times the failing tests' own..."""
CONTRAST_FLOOR_S = 5.0
"""...or this many seconds, whichever is more: a suite of quick tests keeps its files' contrast whole."""


@dataclass(frozen=True)
class Focus:
    """What the per-test coverage run measures: the test files to collect (none: the whole suite),
    the passing tests that give the contrast, and the passing tests of those files it leaves out."""

    files: list[str]
    contrast: list[str]
    left_out: list[str] = field(default_factory=list)


def _scope(test: str) -> str:
    """A test's class (or module): `tests/t.py::TestX::test_y[1]` -> `tests/t.py::TestX`."""
    return test.split("[")[0].rpartition("::")[0]


def contrast(failing: Iterable[str], passing: list[str], durations: Mapping[str, float]) -> list[str]:
    """The passing tests (of the failing tests' files) the run measures: those of the failing tests'
    classes first, then the rest, the cheapest first within each, each that still fits: their seconds
    recorded at the baseline within CONTRAST_SHARE x the failing tests' own (at least CONTRAST_FLOOR_S).
    All of them when a test has no recorded time (nothing to bound by)."""
    failing = list(failing)
    if any(t not in durations for t in [*failing, *passing]):
        return list(passing)
    near = {_scope(t) for t in failing}
    bound = max(CONTRAST_FLOOR_S, CONTRAST_SHARE * sum(durations[t] for t in failing))
    chosen: set[str] = set()
    spent = 0.0
    for test in sorted(passing, key=lambda t: (_scope(t) not in near, durations[t])):
        if spent + durations[test] > bound:
            continue
        chosen.add(test)
        spent += durations[test]
    return [t for t in passing if t in chosen]


def focus(
    failing: Iterable[str], passing: Iterable[str], root: Path, durations: Mapping[str, float] | None = None
) -> Focus:
    """The failing tests' own files, their passing tests bounded by `contrast` (durations: the
    baseline's seconds per test; None keeps the files' passing tests whole). A failing id that names
    no file under root (a collection error, another rootdir, a name pytest would read as an option):
    the whole suite, every passing test."""
    failing = list(failing)
    files = sorted({t.split("::")[0] for t in failing})
    if not files or not all((root / f).is_file() and not f.startswith("-") for f in files):
        return Focus([], list(passing))
    near = [t for t in passing if t.split("::")[0] in files]
    kept = near if durations is None else contrast(failing, near, durations)
    kept_set = set(kept)
    return Focus(files, kept, [t for t in near if t not in kept_set])
