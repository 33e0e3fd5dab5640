"""A per-run seal on pytest's JSON report, so a report written by something else is not believed.

explore hands each pytest run a fresh random key in a file the environment names; a tiny plugin,
loaded with `-p`, reads the key and deletes the file when pytest registers it (before any conftest
or library code is imported), and signs the report's tests and collectors with it (HMAC-SHA256).
The key is in no module global, no closure and not in the environment (nor in /proc/self/environ,
which keeps a process's first environment): only in the registered signer. A candidate's code that
writes its own report (and exits before pytest does, or rewrites the file afterwards) cannot sign
it. This raises the bar against forged reports; it is no sandbox: code running inside pytest that
reads the running program (live objects, frames) could still reach the signer, which is why such
reads in library code are rejected (edges/harness_refs).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

ENV = "EXPLORE_REPORT_SEAL"
PLUGIN = "explore_report_seal"
FIELD = "explore_seal"

PLUGIN_SOURCE = f'''\
"""Written by explore for one test run: signs pytest-json-report's report (see explore.edges.seal)."""
import hashlib, hmac, json, os


class _Seal:
    def __init__(self, key):
        self.key = key

    def pytest_json_modifyreport(self, json_report):
        body = json.dumps([json_report.get("tests", []), json_report.get("collectors", [])], sort_keys=True, default=str)
        json_report["{FIELD}"] = hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()


def pytest_plugin_registered(plugin, manager):
    if getattr(plugin, "__name__", None) != __name__ or "{ENV}" not in os.environ:
        return
    path = os.environ.pop("{ENV}")
    try:
        with open(path, "rb") as source:
            key = source.read().strip()
        os.unlink(path)
    except OSError:
        return
    manager.register(_Seal(key), "explore-seal-" + os.urandom(6).hex())
'''


def new_key() -> str:
    return secrets.token_hex(16)


def install(directory: Path) -> Path:
    """Write the plugin module into `directory` (put it on PYTHONPATH, load it with `-p PLUGIN`)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    return directory


def env(key: str, directory: Path) -> dict[str, str]:
    """The environment that hands `key` to the plugin: a file of its own (owner-only) in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"seal-{secrets.token_hex(6)}.key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(key)
    return {ENV: str(path)}


def signature(report: dict[str, Any], key: str) -> str:
    body = json.dumps([report.get("tests", []), report.get("collectors", [])], sort_keys=True, default=str)
    return hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()


def read(path: Path) -> dict[str, Any] | None:
    """The report at `path` as JSON (None: unreadable, or not a JSON object)."""
    try:
        report = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None


def verify(path: Path, key: str) -> bool:
    """True when the report at `path` was signed with `key` by the plugin."""
    report = read(path)
    return report is not None and verified(report, key)


def verified(report: dict[str, Any], key: str) -> bool:
    """True when the report (as read) was signed with `key` by the plugin."""
    claimed = report.get(FIELD)
    return isinstance(claimed, str) and hmac.compare_digest(claimed, signature(report, key))
