"""Per-test outcomes read from what a pytest run wrote: pytest-json-report's JSON, JUnit XML, and
explore's plugin's record (failing subtests folded into their parent, tests that ignored the
per-test limit, the files the tests read). A test stopped by a time limit is `timeout`. Ids that
hold the tree's own path are made the same in every tree (`with_tree_ids`, model/testids)."""

from __future__ import annotations

import json
import linecache
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, cast

from ..model import testids
from ..model.testresults import PASSING, HungTest, Outcome, TestOutcome, TestRun

TIMEOUT_MARK = "ExploreTestTimeout"
"""Named in the message of every test explore's plugin stopped (kept in step with the plugin's MARK)."""
KNOWN_OUTCOMES: frozenset[str] = frozenset({"passed", "failed", "error", "skipped", "xfailed", "xpassed"})


def outcome_of(raw: str) -> tuple[Outcome, str]:
    """A runner's outcome string as explore's: pytest's, and the parent of subtests ("subtests
    passed", "subtests failed"…) as its own; an unknown one is an error that names it."""
    base = raw.strip().removeprefix("subtests ").strip()
    if base in KNOWN_OUTCOMES:
        return cast(Outcome, base), ""
    return "error", f"explore does not know the test outcome {raw!r}: counted as an error"


def _with_timeout(outcome: TestOutcome) -> TestOutcome:
    """explore's plugin's limit, or the project's own pytest-timeout, stopped the test."""
    stopped = (
        TIMEOUT_MARK in outcome.message
        or TIMEOUT_MARK in outcome.longrepr[:2000]
        or "from pytest-timeout" in outcome.message
    )
    if outcome.outcome not in PASSING and stopped:
        outcome.outcome = "timeout"
    return outcome


def tree_roots(workdir: Path) -> list[str]:
    """The spellings of the tree's root a test id may hold: absolute as given, and resolved."""
    return sorted({os.path.abspath(workdir), os.path.realpath(workdir)})


def with_tree_ids(run: TestRun, workdir: Path) -> TestRun:
    """run with every test id made the same in every tree (the tree's root replaced by
    testids.TREE): its outcomes, the tests its witness contradicts, its collection errors."""
    normal = testids.normaliser(tree_roots(workdir))
    if not any(normal(i) != i for i in [*run.outcomes, *run.unconfirmed, *run.collection_errors]):
        return run
    outcomes: dict[str, TestOutcome] = {}
    for test_id, outcome in run.outcomes.items():
        outcome.id = normal(test_id)
        outcomes[outcome.id] = outcome
    run.outcomes = outcomes
    run.unconfirmed = {normal(i): why for i, why in run.unconfirmed.items()}
    run.collection_errors = [normal(i) for i in run.collection_errors]
    return run


def fold_record(path: Path, run: TestRun) -> None:
    """The plugin's record: failing subtests into their parent, tests that ignored the limit."""
    subtests: dict[str, list[dict[str, str]]] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by the watchdog's exit
        nodeid = str(entry.get("nodeid") or "")
        if entry.get("kind") == "opened" and isinstance(entry.get("path"), str):
            run.opened.setdefault(entry["path"], []).append(str(entry.get("by", "")))
        if not nodeid:
            continue
        if entry.get("kind") == "hard_timeout":
            stack = stuck_stack(Path(str(entry["stack"]))) if entry.get("stack") else str(entry.get("longrepr", ""))
            run.outcomes[nodeid] = TestOutcome(
                id=nodeid,
                outcome="timeout",
                message=str(entry.get("message", "")),
                longrepr=stack[-6000:],
                file=nodeid.split("::", 1)[0],
                duration_s=float(entry.get("duration") or 0.0),
            )
        elif entry.get("kind") == "subtest":
            subtests.setdefault(nodeid, []).append(entry)
    for nodeid, failures in subtests.items():
        parent = run.outcomes.get(nodeid) or TestOutcome(id=nodeid, outcome="failed", file=nodeid.split("::", 1)[0])
        if parent.outcome in PASSING or parent.outcome == "skipped":
            parent.outcome = "failed"  # pytest-subtests under pytest 8 says "subtests passed" here
        parts = [f"subtest {f.get('subtest', '')}: {f.get('message', '')}" for f in failures]
        own = [
            m
            for m in parent.message.split("; ")
            if m and not m.startswith("contains ") and not any(m in p for p in parts)
        ]
        parent.message = "; ".join(own + parts)[:2000]
        if not all(str(f.get("message", "")) in parent.longrepr for f in failures):  # JUnit XML already has them
            longreprs = "\n\n".join(str(f.get("longrepr", "")) for f in failures)
            parent.longrepr = (longreprs + ("\n\n" + parent.longrepr if parent.longrepr else ""))[-6000:]
        run.outcomes[nodeid] = _with_timeout(parent)


def stuck_stack(path: Path) -> str:
    """The stack faulthandler wrote when the plugin's watchdog ended a test's process, read here
    (outside the dying process): each frame's source line added, innermost call last as in a
    traceback. (The watchdog is a process of its own: every thread in the file is the test's.)"""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no stack: the process ended before faulthandler wrote it)"
    blocks = [b.strip().replace("Current thread", "Thread", 1) for b in text.split("\n\n") if b.strip()]
    out = []
    for block in blocks:
        header, *frames = block.strip().splitlines()
        out.append(header.replace("(most recent call first)", "(most recent call last)"))
        for frame in reversed(frames):
            out.append(frame.rstrip())
            found = re.match(r'\s*File "(.+)", line (\d+)', frame)
            source = linecache.getline(found.group(1), int(found.group(2))).strip() if found else ""
            if source:
                out.append(f"    {source}")
    linecache.clearcache()
    return "\n".join(out) or text


def read_json_report(path: Path, run: TestRun, data: dict[str, Any] | None = None) -> None:
    """The outcomes of the pytest-json-report at path into run; data: the file as already read."""
    if data is None:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    for collector in data.get("collectors", []):
        if collector.get("outcome") == "failed" and collector.get("nodeid"):
            run.collection_errors.append(collector["nodeid"])
    for test in data.get("tests", []):
        nodeid = test["nodeid"]
        outcome, message = outcome_of(str(test.get("outcome", "")))
        longrepr, duration = "", 0.0
        for phase in ("setup", "call", "teardown"):
            stage = test.get(phase) or {}
            duration += float(stage.get("duration") or 0.0)
            if stage.get("outcome") == "failed":
                if outcome == "passed":  # a teardown error after a passing call
                    outcome = "error"
                crash = stage.get("crash") or {}
                message = message or crash.get("message", "")
                longrepr = longrepr or str(stage.get("longrepr", ""))
                if phase == "setup":
                    outcome = "error"
            elif stage.get("outcome") == "skipped" and not message:
                message = str(stage.get("longrepr", ""))[-300:]
        run.outcomes[nodeid] = _with_timeout(
            TestOutcome(
                id=nodeid,
                outcome=outcome,
                message=message,
                longrepr=longrepr[-6000:],
                file=nodeid.split("::", 1)[0],
                markers=[k for k in test.get("keywords", []) if k and k.isidentifier()][:20],
                duration_s=round(duration, 4),
            )
        )


def read_junit(path: Path, run: TestRun, workdir: Path) -> None:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        run.collection_errors.append(f"unreadable JUnit XML {path.name}: {exc}")
        return
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        file = case.get("file")
        test_id = (_pytest_id(classname, name, workdir) if classname else None) or f"{classname}::{name}"
        outcome: Outcome = "passed"
        messages: list[str] = []
        longreprs: list[str] = []
        for child in case:  # several failures: a test's failing subtests, each its own element
            if child.tag in ("failure", "error"):
                outcome = "error" if child.tag == "error" and outcome != "failed" else "failed"
                text = child.get("message", "") or ""
                if text and text not in messages and not (messages and text.startswith("contains ")):
                    messages.append(text)
                longreprs.append(child.text or "")
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
                messages.append(child.get("message", "") or "")
        if not classname and outcome == "error":
            run.collection_errors.append(name)
        try:
            duration = float(case.get("time") or 0.0)
        except ValueError:
            duration = 0.0
        if test_id in run.outcomes:  # the same id twice (pytest-subtests' reports): the worse one stands
            previous = run.outcomes[test_id]
            if outcome in PASSING or outcome == "skipped":
                continue
            messages = [m for m in [previous.message] if m and previous.outcome not in PASSING] + messages
        run.outcomes[test_id] = _with_timeout(
            TestOutcome(
                id=test_id,
                outcome=outcome,
                message="; ".join(messages)[:2000],
                longrepr="\n\n".join(longreprs)[-6000:],
                file=file,
                duration_s=duration,
            )
        )


def _pytest_id(classname: str, name: str, workdir: Path) -> str | None:
    """Rebuild a pytest node id from pytest's own JUnit XML (dotted module path + classes)."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = Path(*parts[:cut]).with_suffix(".py")
        if (workdir / candidate).is_file():
            return "::".join([candidate.as_posix(), *parts[cut:], name])
    return None


STACK_TAIL = 1500
"""Characters of a hung test's stack kept in the run's state, the innermost part."""
_PYTEST_LOCATION = re.compile(r"^([^\s/<][^\s:]*\.py):(\d+):(?: in (\S+))?")
_FAULTHANDLER_FRAME = re.compile(r'^\s*File "(.+)", line (\d+) in (\S+)')
_NOT_PROJECT = ("site-packages", "dist-packages", "/lib/python", "_explore_test_limit", "explore_pytest_plugin")


def hung_tests(run: TestRun) -> list[HungTest]:
    """The tests a per-test limit stopped, in id order, each with where it was stuck."""
    return [
        HungTest(
            test=o.id,
            stuck_at=stuck_at(o.longrepr),
            message=o.message.split("\n")[0][:300],
            stack=o.longrepr[-STACK_TAIL:],
        )
        for o in sorted(run.outcomes.values(), key=lambda o: o.id)
        if o.outcome == "timeout"
    ]


def stuck_at(stack: str) -> str:
    """The innermost frame of the project's code in a timed-out test's stack: pytest's traceback
    (relative paths, the source line marked `>`) or faulthandler's (read by stuck_stack)."""
    found, source = "", ""
    lines = stack.splitlines()
    for n, line in enumerate(lines):
        if line.startswith(">"):
            source = line[1:].strip()
        pytest_frame = _PYTEST_LOCATION.match(line)
        if pytest_frame and not any(p in line for p in _NOT_PROJECT):
            path, number, function = pytest_frame.groups()
            if function:  # a frame pytest shows short: its location, then its line
                source = lines[n + 1].strip() if n + 1 < len(lines) else ""
            where = f"{path}:{number}" + (f" in {function}" if function else "")
            found = where + (f" `{source}`" if source else "")
        fault = _FAULTHANDLER_FRAME.match(line)
        if fault and not any(p in fault.group(1) for p in _NOT_PROJECT):
            nxt = lines[n + 1].strip() if n + 1 < len(lines) and not lines[n + 1].lstrip().startswith("File ") else ""
            found = f"{fault.group(1)}:{fault.group(2)} in {fault.group(3)}" + (f" `{nxt}`" if nxt else "")
    return found or "(no frame of the project's code in its stack)"
