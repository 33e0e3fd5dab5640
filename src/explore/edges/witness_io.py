"""explore's record of each test call on disk: a fresh key and record file for one test run, and
the record read back (checked by decide/witness.parse)."""

from __future__ import annotations

import secrets
from pathlib import Path

from ..decide.witness import Secret, parse


def beside(log_path: Path) -> Secret:
    """A fresh key and a record file next to a run's log, its name holding a random token."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    return Secret(secrets.token_hex(16), log_path.with_name(f"{log_path.stem}.calls-{secrets.token_hex(6)}"))


def read(secret: Secret) -> dict[str, str | None]:
    """The signed calls of the record (nodeid → the exception its call raised, or None); {} when
    the record was never written."""
    try:
        text = secret.path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return parse(text.splitlines(), secret.key)
