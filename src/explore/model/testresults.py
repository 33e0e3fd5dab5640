"""What the tests said: one test's outcome, one run of the test command, the pass counts, and the
failures the baseline sets apart (an environment no edit can fix, a test that hung)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "timeout"]
"""`timeout`: the test overran explore's per-test limit; it counts as failing."""
PASSING: frozenset[str] = frozenset({"passed", "xpassed"})
"""What passes by itself; `xfailed` passes only for a test already xfail at baseline (scoring.Yardstick)."""


class TestOutcome(BaseModel):
    """One test's result, with the failure text a generator needs to reason about it."""

    __test__ = False  # not a pytest test class

    id: str
    outcome: Outcome
    message: str = ""
    """Short failure text (exception line, assertion) — empty when passed."""
    longrepr: str = ""
    """The full failure report as the runner printed it."""
    file: str | None = None
    """Test file relative to the repository root, when the runner tells it."""
    markers: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    """Setup, call and teardown together, as the runner measured them."""


class TestRun(BaseModel):
    """What one execution of the test command produced."""

    __test__ = False

    outcomes: dict[str, TestOutcome] = Field(default_factory=dict)
    exit_code: int | None = None
    """None when the run was killed (timeout)."""
    infra_error: str | None = None
    """Set when the run could not tell anything about the code: command missing, crash,
    collection errors, nothing collected."""
    collection_errors: list[str] = Field(default_factory=list)
    oom: bool = False
    per_test: bool = True
    """False when only the exit code was available (custom command without JUnit XML)."""
    log_path: str | None = None
    duration_s: float = 0.0
    opened: dict[str, list[str]] = Field(default_factory=dict)
    """Files in the tree opened for reading → the files whose code opened them (explore's plugin, on
    request: the baseline)."""
    unconfirmed: dict[str, str] = Field(default_factory=dict)
    """Tests reported passing that explore's own record of the call contradicts: id → what it says (witness)."""

    def failing(self) -> list[str]:
        return sorted(
            i for i, o in self.outcomes.items() if o.outcome not in PASSING and o.outcome not in ("skipped", "xfailed")
        )

    def passing(self) -> set[str]:
        return {i for i, o in self.outcomes.items() if o.outcome in PASSING}


def percent(rate: float) -> str:
    """A pass rate as printed: one decimal, but never 100.0 % with a failure left nor 0.0 % with a
    pass (issue 40: "2455/2456 passed (100.0%)" for a run with one failure left): 99.9 % and 0.1 %."""
    if 99.95 <= rate < 100.0:
        return "99.9%"
    if 0.0 < rate < 0.05:
        return "0.1%"
    return f"{rate:.1f}%"


class Counts(BaseModel):
    passed: int = 0
    failed: int = 0
    total: int = 0
    pass_rate: float = 0.0


EnvironmentKind = Literal[
    "missing_metadata", "missing_module", "missing_env", "connection_refused", "dns", "unreachable"
]


class EnvironmentFailure(BaseModel):
    """A failing test no code edit can fix (environment.py), and the line that shows why."""

    test: str
    kind: EnvironmentKind
    evidence: str
    """The line of the failure that shows why (the exception as pytest printed it)."""


class HungTest(BaseModel):
    """A test the per-test limit stopped at the baseline (outcome `timeout`), and where it was stuck."""

    test: str
    stuck_at: str
    """The innermost frame of the project's code in its stack: `path:line` and that line's source."""
    message: str
    """The limit it overran (lowered after an earlier hang, or not; a hard timeout says it ignored the signal)."""
    stack: str
    """The innermost part of its stack (pytest's traceback, or faulthandler's for a hard timeout)."""
