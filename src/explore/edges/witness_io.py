"""explore's record of each test call on disk: a fresh key and record file for one test run, and
the record read back (checked by decide/witness.parse)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from ..decide.witness import Secret, parse


def beside(log_path: Path) -> Secret:
    """A fresh key and a record file next to a run's log, its name holding a random token; the key
    written to a file of its own (owner-only) that the plugin deletes once it has read it."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(6)
    secret = Secret(
        secrets.token_hex(16),
        log_path.with_name(f"{log_path.stem}.calls-{token}"),
        log_path.with_name(f"{log_path.stem}.calls-{token}.key"),
    )
    fd = os.open(secret.key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secret.key)
    return secret


def read(secret: Secret) -> dict[str, str | None]:
    """The signed calls of the record (nodeid → the exception its call raised, or None); {} when
    the record was never written."""
    secret.key_file.unlink(missing_ok=True)  # a run that never loaded the plugin left it
    try:
        text = secret.path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return parse(text.splitlines(), secret.key)
