"""explore's own record of each test call, kept below the report: outcomes confirmed, not believed.

A report can be bent from inside the test process (library code wrapping pytest's report factory,
a hook forcing `passed`, a report file rewritten at exit), through indirections no reading of the
source sees. explore's pytest plugin wraps each test's run and call and streams what happened —
before any report object exists — into a FIFO that explore made and reads while the run goes
(`EXPLORE_CALLS` names it; its mode lets the test process write it, not read it). The stream holds
no secret and the test process keeps none: nothing in it can be read to sign a line explore
believes. What makes the stream trustworthy is its shape, checked here:

- the plugin opens it when pytest registers it, before any conftest or library code is imported,
  and says `hello` first;
- each test is a window: `start` before its setup, `end` after its teardown with the call's verdict
  (called, raised, the exception), both from the outermost wrapper of the test's run, so nothing of
  the test runs outside its window. A line library code adds while the test runs comes before the
  plugin's `end` and breaks the window; a whole window added between two tests does not replace
  the plugin's (the worst window of a test counts);
- a line outside the shape (a second `hello`, an `end` of a test not running, a window inside
  another, anything after `finish`) is a forgery: the run is not believed;
- `finish` comes when the session has ended, after the plugin checked that its descriptor is still
  the FIFO it opened: a run whose main process (the first to say hello; xdist's controller) never
  says it (it ended itself, or was ended) has no confirmed test. A worker xdist lost and replaced
  need not finish: its unended window confirms nothing.

Code that ends or replaces its own process behind pytest's back after writing a whole stream and a
report of its own is beyond what the stream sees: library code gets no such capability
(edges/harness_refs rejects it, as it rejects reading the running program).

Pure: the stream's lines in, the verdict out. Making the FIFO and reading it: edges/witness_io.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..model.testresults import PASSING, TestOutcome

ENV = "EXPLORE_CALLS"
"""The FIFO's path: kept in step with explore_pytest_plugin.CALLS_ENV."""
TAMPERED_EXIT = 87
"""The plugin's exit status when its descriptor no longer is the FIFO it opened (kept in step)."""


@dataclass
class Record:
    """What the stream says: each test's call (nodeid → the exception its call raised, None when it
    raised nothing; a test whose window has no call is absent), whether the main process finished,
    and the first line that does not fit the stream's shape."""

    calls: dict[str, str | None] = field(default_factory=dict)
    finished: bool = False
    forged: str | None = None


@dataclass
class _Writer:
    finished: bool = False
    window: str | None = None


def parse(lines: list[str]) -> Record:
    """The stream's verdict (see the module docstring)."""
    record = Record()
    writers: dict[int, _Writer] = {}
    windows: dict[str, list[str | bool | None]] = {}
    """nodeid → each window's verdict: None (a clean call), the exception, False (never called)."""
    for number, line in enumerate(lines, 1):
        problem = _step(line, writers, windows)
        if problem is not None:
            record.forged = f"line {number} {problem}"
            break
    for nodeid, verdicts in windows.items():
        raised = next((v for v in verdicts if isinstance(v, str)), None)
        if raised is not None:
            record.calls[nodeid] = raised
        elif all(v is None for v in verdicts):
            record.calls[nodeid] = None
    main = next(iter(writers.values()), None)  # the first hello: pytest's own process (xdist's controller)
    record.finished = main is not None and main.finished
    return record


def _step(line: str, writers: dict[int, _Writer], windows: dict[str, list[str | bool | None]]) -> str | None:
    """One line into the writers' state; why it does not fit, or None."""
    try:
        entry = json.loads(line)
    except json.JSONDecodeError:
        return "is not a line the plugin writes"
    if not (isinstance(entry, list) and len(entry) >= 2 and isinstance(entry[0], int)):
        return "is not a line the plugin writes"
    pid, kind, rest = entry[0], entry[1], entry[2:]
    writer = writers.get(pid)
    if kind == "hello" and not rest:
        if writer is not None:
            return f"says hello again for process {pid}"
        writers[pid] = _Writer()
        return None
    if writer is None:
        return f"comes from process {pid}, which never said hello"
    if writer.finished:
        return f"comes after process {pid} finished"
    nodeid = rest[0] if rest and isinstance(rest[0], str) else None
    if kind == "start" and nodeid is not None and len(rest) == 1:
        if writer.window is not None:
            return f"starts {nodeid} inside {writer.window}"
        writer.window = nodeid
        return None
    if kind == "end" and nodeid is not None and len(rest) == 4 and all(isinstance(v, bool) for v in rest[1:3]):
        if writer.window != nodeid:
            return f"ends {nodeid}, which is not running"
        called, raised, name = rest[1], rest[2], str(rest[3])
        windows.setdefault(nodeid, []).append((name or "an exception") if raised else None if called else False)
        writer.window = None
        return None
    if kind == "finish" and not rest:
        if writer.window is not None:
            return f"finishes while {writer.window} is running"
        writer.finished = True
        return None
    return f"is a {kind!r} line the plugin does not write"


def contradicted(
    outcomes: dict[str, TestOutcome], record: Record, ids_are_nodeids: bool, ended_early: bool = False
) -> dict[str, str]:
    """Tests reported passing that the record contradicts: id → what the record says. A test never
    called counts only when the report's ids are pytest's own node ids (JSON report), not ids
    rebuilt from JUnit XML. A record that never finished confirms nothing, unless the run was ended
    by the per-test limit's watchdog (ended_early), which explore itself reads."""
    found: dict[str, str] = {}
    calls = record.calls
    for test_id, outcome in outcomes.items():
        if outcome.outcome not in PASSING:
            continue
        if test_id in calls and calls[test_id] is not None:
            found[test_id] = f"its call raised {calls[test_id]}"
        elif not record.finished and not ended_early and (test_id in calls or ids_are_nodeids):
            found[test_id] = "its process ended before explore's record of the run did"
        elif test_id not in calls and ids_are_nodeids:
            found[test_id] = "it was never called"
    return found


def describe(found: dict[str, str]) -> str:
    first = sorted(found)[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return f"reports {len(found)} test(s) passed that explore's own record of the call contradicts: {first} ({found[first]}){more}"
