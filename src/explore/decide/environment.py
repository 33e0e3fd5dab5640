"""Environment failures — pure: failing tests no code edit in the repository can fix.

A missing distribution (its metadata not installed), a module that is not installed, a missing
environment variable or credential, a refused connection, a host name that does not resolve. At
the baseline they are named (with the line that shows why) and left out of the targets, like
pre-existing failures, so no iteration is spent on them.

Never environment: an `AssertionError`, or an exception the project's own code raises (a `raise`
in a file of the repository) — the code under repair may be the reason. A refused connection or
an unresolvable host is environment only outside the targets: when the tests being repaired need
a service, the run escalates `external_service` (escalation.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from ..model.testresults import EnvironmentFailure, EnvironmentKind, TestOutcome

NETWORK: frozenset[str] = frozenset({"connection_refused", "dns"})
"""Kinds that stay targets when named as such (a target that needs a service escalates)."""

WHY: dict[str, str] = {
    "missing_metadata": "the distribution's metadata is not installed (install the project, e.g. `pip install -e .`)",
    "missing_module": "a module the tests import is not installed",
    "missing_env": "an environment variable or credential the tests need is not set",
    "connection_refused": "a service the tests need refused the connection",
    "dns": "a host name the tests need could not be resolved",
}


PATTERNS: tuple[tuple[EnvironmentKind, re.Pattern[str]], ...] = (
    ("missing_metadata", re.compile(r"PackageNotFoundError|DistributionNotFound|No package metadata was found")),
    ("missing_module", re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")),
    (
        "missing_env",
        re.compile(
            r"NoCredentialsError|Unable to locate credentials|DefaultCredentialsError|"
            r"Could not automatically determine credentials"
        ),
    ),
    ("connection_refused", re.compile(r"ConnectionRefusedError|Connection refused|ECONNREFUSED|\[Errno 111\]", re.I)),
    (
        "dns",
        re.compile(
            r"Name or service not known|Temporary failure in name resolution|nodename nor servname|"
            r"getaddrinfo failed|gaierror|\[Errno -[23]\]",
            re.I,
        ),
    ),
)
RAISED_AT = re.compile(r"^(\S.*?):(\d+): (\w+)\s*$", re.M)
"""pytest's last line of a long traceback: where the exception was raised, and its type."""
ENVIRON = ("<frozen os>", "/os.py")
"""`os.environ[...]` raises its KeyError there."""


def _exception_lines(text: str) -> list[str]:
    return [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]


def _raised_by_project(text: str, exception: str, project_files: Collection[str]) -> bool:
    """The last frame is a file of the repository and its line is a `raise`."""
    found = RAISED_AT.findall(text)
    if not found:
        return False
    file, _, _ = found[-1]
    if file.removeprefix("./") not in project_files:
        return False
    marked = [line for line in text.splitlines() if line.startswith(">")]
    return bool(marked) and marked[-1][1:].strip().startswith("raise") and exception != "ModuleNotFoundError"


def classify(
    outcome: TestOutcome, local_modules: Collection[str], project_files: Collection[str]
) -> EnvironmentFailure | None:
    """Why outcome's failure is the environment's, or None. local_modules: top-level names the
    repository itself provides (a ModuleNotFoundError for one of them is a code bug);
    project_files: the repository's Python files, relative (an error raised there is the code's)."""
    text = outcome.longrepr or outcome.message
    if not text or outcome.outcome not in ("failed", "error"):
        return None
    raised = RAISED_AT.findall(text)
    exception = (
        raised[-1][2] if raised else (outcome.message.split(":", 1)[0].rsplit(".", 1)[-1] if outcome.message else "")
    )
    if exception == "AssertionError" or outcome.message.lstrip().startswith("assert "):
        return None
    if _raised_by_project(text, exception, project_files):
        return None
    lines = _exception_lines(text) or [outcome.message]
    for kind, pattern in PATTERNS:
        for line in lines:
            match = pattern.search(line)
            if match is None:
                continue
            if kind == "missing_module" and match.group(1).split(".")[0] in local_modules:
                return None  # the repository's own module: an import the code can fix
            return EnvironmentFailure(test=outcome.id, kind=kind, evidence=line[:300])
    if exception == "KeyError" and raised and raised[-1][0].endswith(ENVIRON):
        line = next((x for x in lines if "KeyError" in x), lines[0])
        return EnvironmentFailure(test=outcome.id, kind="missing_env", evidence=line[:300])
    return None


def local_modules(files: Iterable[str]) -> frozenset[str]:
    """Top-level module names the repository's Python files provide (at its root or under src/)."""
    names = set()
    for file in files:
        parts = file.split("/")
        if parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        names.add(parts[0].removesuffix(".py"))
    return frozenset(names)


def left_out(found: Iterable[EnvironmentFailure], targets: Collection[str] | None) -> list[EnvironmentFailure]:
    """Those left out of the repair: every kind but the network ones, which only outside named
    targets (a target that needs a service escalates)."""
    return [f for f in found if f.kind not in NETWORK or (targets is not None and f.test not in targets)]


def describe(failure: EnvironmentFailure) -> str:
    return f"{failure.test} — {WHY[failure.kind]}: {failure.evidence}"
