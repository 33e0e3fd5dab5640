"""Credentials in explore's environment (API keys, tokens, secrets, passwords) never reach a file
explore writes, and a candidate whose patch holds one is rejected (`leaked`).

The user's tests and agents still run with the environment they always have — running them
differently would change what is being repaired — so what they print is redacted instead:
test logs as they are written, test reports before they are read, and every file of a run's
folder once more when the run ends (a mutate worker or a plugin may write its own files)."""

from __future__ import annotations

import os
from pathlib import Path

SECRET_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""Named always; any variable matching SECRET_SUFFIXES or SECRET_PARTS counts as well (the agents'
keys: OPENAI_API_KEY, GEMINI_API_KEY, DASHSCOPE_API_KEY, GITHUB_TOKEN…)."""
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_ACCESS_KEY", "_AUTH_KEY")
SECRET_PARTS = ("PASSWORD", "PASSWD")
REDACTED = "[redacted]"
MIN_LENGTH = 8
"""Shorter values are placeholders, not keys: replacing them would mangle ordinary text."""
MIN_FRAGMENT = 6


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return name in SECRET_VARS or upper.endswith(SECRET_SUFFIXES) or any(part in upper for part in SECRET_PARTS)


def secrets_in_environment() -> dict[str, str]:
    """name → value of every credential in explore's environment (values long enough to be keys)."""
    return {
        name: value for name, value in sorted(os.environ.items()) if is_secret_name(name) and len(value) >= MIN_LENGTH
    }


def secret_values() -> list[str]:
    return sorted(set(secrets_in_environment().values()), key=len, reverse=True)


def leaked(data: bytes) -> list[str]:
    """The names of the credentials whose value data holds (a candidate's patch): never the values."""
    return [name for name, value in secrets_in_environment().items() if value.encode() in data]


def redact(text: str) -> str:
    for value in secret_values():
        text = text.replace(value, REDACTED)
    return text


def redact_around_cut(before: str, after: str) -> tuple[str, str]:
    """Redact both sides of a cut in a log: the piece of a credential the cut split (its start
    at the end of `before`, its end at the start of `after`) as well as whole ones."""
    for value in secret_values():
        for size in range(len(value) - 1, MIN_FRAGMENT - 1, -1):
            if before.endswith(value[:size]):
                before = before[:-size] + REDACTED
                break
        for size in range(len(value) - 1, MIN_FRAGMENT - 1, -1):
            if after.startswith(value[-size:]):
                after = REDACTED + after[size:]
                break
    return redact(before), redact(after)


def scrub_file(path: Path) -> bool:
    """Redact a file in place; True when it held a credential."""
    values = [v.encode() for v in secret_values()]
    if not values:
        return False
    try:
        data = path.read_bytes()
    except OSError:
        return False
    cleaned = data
    for value in values:
        cleaned = cleaned.replace(value, REDACTED.encode())
    if cleaned == data:
        return False
    path.write_bytes(cleaned)
    return True


def scrub_tree(folder: Path) -> int:
    """Redact every file under folder; how many held a credential."""
    if not secret_values() or not folder.is_dir():
        return 0
    return sum(scrub_file(p) for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
