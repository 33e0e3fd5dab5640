"""Environment failures — pure: failing tests no code edit in the repository can fix.

A missing distribution (its metadata not installed), a module that is not installed, a missing
environment variable or credential, a refused connection, a host name that does not resolve, a
network that cannot be reached. At the baseline they are named (with the line that shows why) and
left out of the targets, like pre-existing failures, so no iteration is spent on them.

Never environment: an `AssertionError`, or an exception the project's own code raises (a `raise`
in a file of the repository) — the code under repair may be the reason.

A test the run was to repair (no targets named, or named as one) that needs a service or a
credential (SERVICE) is set aside the same way while other failures are left to repair: the run
repairs them and then ends `external_service` naming it, since a green suite cannot be claimed
without it. When every failure to repair is of that kind, nothing is set aside: the run escalates
at once (run/baseline.external).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from ..model.testresults import EnvironmentFailure, EnvironmentKind, TestOutcome

SERVICE: frozenset[str] = frozenset({"connection_refused", "dns", "unreachable", "missing_env"})
"""Kinds a person must provide (a network, a service, a credential): a test to repair that fails for
one of them keeps the run from claiming success (it ends `external_service`)."""

WHY: dict[str, str] = {
    "missing_metadata": "the distribution's metadata is not installed (install the project, e.g. `pip install -e .`)",
    "missing_module": "a module the tests import is not installed",
    "missing_env": "an environment variable or credential the tests need is not set",
    "connection_refused": "a service the tests need refused the connection",
    "dns": "a host name the tests need could not be resolved",
    "unreachable": "a network or host the tests need could not be reached",
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
    (
        "unreachable",
        re.compile(r"Network is unreachable|No route to host|ENETUNREACH|EHOSTUNREACH|\[Errno (101|113)\]", re.I),
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


@dataclass(frozen=True)
class SetAside:
    """The environment failures left out of the repair, and among them the tests the run was to
    repair that need a service or credential (the run ends `external_service` while they fail)."""

    left_out: list[EnvironmentFailure]
    awaiting_service: list[str]
    kept: list[EnvironmentFailure]
    """SERVICE failures kept as failures to repair because nothing else is left: the run escalates at once."""


def set_aside(
    found: Iterable[EnvironmentFailure], failing: Collection[str], targets: Collection[str] | None
) -> SetAside:
    """Every environment failure leaves the repair — named targets or not — as long as some other
    failure is left to repair. When each failure to repair is a SERVICE one, those stay (the run
    escalates at once: there is nothing an edit could do)."""
    found = list(found)
    to_repair = set(failing) if targets is None else set(failing) & set(targets)
    service = sorted(f.test for f in found if f.kind in SERVICE and f.test in to_repair)
    rest = to_repair - {f.test for f in found}
    if service and not rest:
        return SetAside([f for f in found if f.test not in service], [], [f for f in found if f.test in service])
    return SetAside(found, service, [])


def describe(failure: EnvironmentFailure) -> str:
    return f"{failure.test} — {WHY[failure.kind]}: {failure.evidence}"


def awaiting_reason(failures: Iterable[EnvironmentFailure], awaiting: Collection[str]) -> str:
    """Why a run that repaired the rest still needs a person: the set-aside tests, by kind."""
    chosen = [f for f in failures if f.test in awaiting]
    kinds = sorted({f.kind for f in chosen}, key=list(WHY).index)
    why = "; ".join(WHY[k] for k in kinds)
    names = ", ".join(sorted(awaiting)[:5]) + (f" and {len(awaiting) - 5} more" if len(awaiting) > 5 else "")
    return f"{why} (in {len(awaiting)} failing test(s), set aside: {names}); every other failure was repaired"


SERVICE_ACTION = "make the service, network or credential the reason names available to the tests, then resume"


def service_reason(kept: list[EnvironmentFailure]) -> str:
    """Why a run whose every failure to repair needs a service escalates at once."""
    kinds = sorted({f.kind for f in kept}, key=list(WHY).index)
    return (
        f"{'; '.join(WHY[k] for k in kinds)} (in {len(kept)} failing test(s), e.g. {kept[0].test}: {kept[0].evidence})"
    )
