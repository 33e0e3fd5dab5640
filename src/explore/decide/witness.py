"""explore's own record of each test call, kept below the report: outcomes confirmed, not believed.

A report can be bent from inside the test process (library code wrapping pytest's report factory,
a hook forcing `passed`), through indirections no reading of the source sees. explore's pytest plugin
wraps each test's call and writes whether it raised — before any report object exists — to a file
whose HMAC key only explore and the plugin know: the key is handed over in a file the plugin reads
and deletes when pytest registers it, before any conftest or library code is imported
(`EXPLORE_CALLS` names only that file and the record: `/proc/self/environ`, which keeps a process's
first environment, holds no key), and is kept in no module global and no closure, only in the
registered recorder. A test the report calls passed whose call raised,
or that was never called at all, is a test the report lies about.

Pure: the plugin's lines in, the tests the record contradicts out. Making a record's key and file
and reading it back: edges/witness_io.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..model.testresults import PASSING, TestOutcome

ENV = "EXPLORE_CALLS"
"""`{"key_file": …, "record": …}`: kept in step with explore_pytest_plugin.CALLS_ENV."""


@dataclass(frozen=True)
class Secret:
    """The HMAC key and record file of one test run (made by edges/witness_io.beside)."""

    key: str
    path: Path
    key_file: Path = field(default=Path())
    """Where the plugin reads the key from (and deletes it): written by edges/witness_io.beside."""

    def env(self) -> dict[str, str]:
        return {ENV: json.dumps({"key_file": str(self.key_file), "record": str(self.path)})}


def signature(key: str, nodeid: str, raised: bool, exception: str) -> str:
    body = json.dumps([nodeid, raised, exception])
    return hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()


def parse(lines: list[str], key: str) -> dict[str, str | None]:
    """The last signed call of each test (a rerun replaces the earlier one): nodeid → the name of
    the exception its call raised, None when it raised nothing. Unsigned lines are ignored."""
    calls: dict[str, str | None] = {}
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a process that died mid-write
        if not isinstance(entry, dict) or entry.get("kind") != "call":
            continue
        nodeid, raised, exception = entry.get("nodeid"), entry.get("raised"), entry.get("exception")
        if not (isinstance(nodeid, str) and isinstance(raised, bool) and isinstance(exception, str)):
            continue
        if hmac.compare_digest(str(entry.get("sig", "")), signature(key, nodeid, raised, exception)):
            calls[nodeid] = (exception or "an exception") if raised else None
    return calls


def contradicted(
    outcomes: dict[str, TestOutcome], calls: dict[str, str | None], ids_are_nodeids: bool
) -> dict[str, str]:
    """Tests reported passing that the record contradicts: id → what the record says. A test never
    called counts only when the report's ids are pytest's own node ids (JSON report), not ids
    rebuilt from JUnit XML."""
    found: dict[str, str] = {}
    for test_id, outcome in outcomes.items():
        if outcome.outcome not in PASSING:
            continue
        if test_id in calls and calls[test_id] is not None:
            found[test_id] = f"its call raised {calls[test_id]}"
        elif test_id not in calls and ids_are_nodeids:
            found[test_id] = "it was never called"
    return found


def describe(found: dict[str, str]) -> str:
    first = sorted(found)[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return f"reports {len(found)} test(s) passed that explore's own record of the call contradicts: {first} ({found[first]}){more}"
