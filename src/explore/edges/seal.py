"""A per-run seal on pytest's JSON report, so a report written by something else is not believed.

explore hands each pytest run a fresh random key through the environment; a tiny plugin, loaded
with `-p` before any conftest or library code is imported, takes the key out of the environment
and signs the report's tests and collectors with it (HMAC-SHA256). A candidate's code that writes
its own report (and exits before pytest does, or rewrites the file afterwards) cannot sign it.
This raises the bar against forged reports; it is no sandbox: code running inside pytest can
still reach the plugin's memory if it sets out to defeat explore in particular.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from pathlib import Path
from typing import Any

ENV = "EXPLORE_REPORT_SEAL"
PLUGIN = "explore_report_seal"
FIELD = "explore_seal"

PLUGIN_SOURCE = f'''\
"""Written by explore for one test run: signs pytest-json-report's report (see explore.edges.seal)."""
import hashlib, hmac, json, os


def _signer(key):
    def pytest_json_modifyreport(json_report):
        body = json.dumps([json_report.get("tests", []), json_report.get("collectors", [])], sort_keys=True, default=str)
        json_report["{FIELD}"] = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    return pytest_json_modifyreport


pytest_json_modifyreport = _signer(os.environ.pop("{ENV}", "").encode())
'''


def new_key() -> str:
    return secrets.token_hex(16)


def install(directory: Path) -> Path:
    """Write the plugin module into `directory` (put it on PYTHONPATH, load it with `-p PLUGIN`)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    return directory


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
