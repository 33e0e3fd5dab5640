"""Failures a person chose to skip: recorded in .explore/known-failures.json, left out of later
runs' targets (like flaky tests: counted neither way) and named when they are."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ..model.errors import UsageError
from .state import atomic_write, explore_dir


class KnownFailure(BaseModel):
    message: str = ""
    run_id: str = ""
    recorded_at: float = 0.0


class KnownFailures(BaseModel):
    tests: dict[str, KnownFailure] = Field(default_factory=dict)


def path(root: Path) -> Path:
    return explore_dir(root) / "known-failures.json"


def load(root: Path) -> KnownFailures:
    file = path(root)
    if not file.is_file():
        return KnownFailures()
    try:
        return KnownFailures.model_validate(json.loads(file.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        raise UsageError(f"cannot read {file}: {exc}; fix or delete it") from exc


def record(root: Path, failures: dict[str, str], run_id: str) -> Path:
    """Add failing test id → message to the file (earlier entries are kept)."""
    known = load(root)
    for test_id, message in failures.items():
        known.tests[test_id] = KnownFailure(message=message, run_id=run_id, recorded_at=time.time())
    atomic_write(path(root), known.model_dump_json(indent=2) + "\n")
    return path(root)


def leave_out(targets: list[str], known: KnownFailures) -> tuple[list[str], list[str]]:
    """(targets without the known failures, the known failures left out)."""
    kept = [t for t in targets if t not in known.tests]
    return kept, [t for t in targets if t in known.tests]
