"""Per-test coverage for a suite too big to trace whole before Python 3.12 (issue 40.3).

There coverage.py's trace function costs every instruction of every test, whatever files it measures
(1.6-2.6x networkx's suite): a baseline of TRACE_MOST tests or more stops tracing before its first test
(_worker.BIG_REASON), and mutate measures the failing tests' own files instead, in a run of its own —
their passing tests give the contrast. On 3.12+ sys.monitoring records the whole baseline cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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


def focus(failing: Iterable[str], passing: Iterable[str], root: Path) -> tuple[list[str], list[str]]:
    """(test files, their passing tests): what the per-test coverage run measures — the failing tests'
    own files, whose passing tests give the contrast. A failing id that names no file under root (a
    collection error, another rootdir, a name pytest would read as an option): ([], passing), the
    whole suite."""
    files = sorted({t.split("::")[0] for t in failing})
    if not files or not all((root / f).is_file() and not f.startswith("-") for f in files):
        return [], list(passing)
    return files, [t for t in passing if t.split("::")[0] in files]
