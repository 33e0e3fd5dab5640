"""Target tests — pure: which failing tests a run repairs, and what holds every other test.

Without targets every failing test is repaired. With targets (`-- IDS`, `--tests PATTERN`,
`--since REF`) only they are handed to the generators; every other test that passed at the
baseline is protected (a candidate breaking one is never merged), and the failures that are not
targets are left alone: the run succeeds when every target passes and nothing else regressed.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable

from ..model.errors import UsageError
from ..model.testresults import PASSING, TestRun
from .history import HistoryRecord

LAST_GREEN = "last-green"


def matches(selector: str, test_id: str, glob: bool) -> bool:
    """An exact id, a file, folder or class the id lies under, or (for patterns) a glob."""
    selector = selector.removeprefix("./")
    if (
        test_id == selector
        or test_id.startswith(selector.rstrip("/") + "::")
        or test_id.startswith(selector.rstrip("/") + "/")
    ):
        return True
    return glob and fnmatch.fnmatchcase(test_id, selector)


def select(baseline_ids: Collection[str], ids: Iterable[str], patterns: Iterable[str]) -> list[str]:
    """The baseline tests named by ids (`-- IDS`) or patterns (`--tests`); a selector that names
    none of them is a usage error, so a typo never turns into a run that repairs nothing."""
    chosen: set[str] = set()
    unmatched: list[str] = []
    for selector, glob in [(i, False) for i in ids] + [(p, True) for p in patterns]:
        found = {t for t in baseline_ids if matches(selector, t, glob)}
        if not found:
            unmatched.append(selector)
        chosen |= found
    if unmatched:
        example = f"; ids look like {min(baseline_ids)}" if baseline_ids else ""
        raise UsageError(
            f"no test of the baseline ({len(baseline_ids)} tests ran) matches {', '.join(repr(u) for u in unmatched)}{example}"
        )
    return sorted(chosen)


def went_red(failing_now: Iterable[str], then: TestRun) -> list[str]:
    """Tests failing now that passed at the earlier commit (new tests and skipped ones did not)."""
    return sorted(i for i in failing_now if i in then.outcomes and then.outcomes[i].outcome in PASSING | {"xfailed"})


def since_ref(since: str, records: list[HistoryRecord]) -> str:
    """The git revision `--since` names: itself, or for `last-green` the commit of the last green
    record of `.explore/history.jsonl`."""
    if since != LAST_GREEN:
        return since
    for record in reversed(records):
        if record.green and record.commit:
            return record.commit
    raise UsageError(
        "--since last-green: no green run is recorded in .explore/history.jsonl; name a commit with --since REF, or the tests with -- IDS"
    )


def preexisting(baseline_failing: Iterable[str], targets: Collection[str] | None) -> list[str]:
    """Failures at the baseline that are not targets: left alone, reported as such."""
    return [] if targets is None else sorted(set(baseline_failing) - set(targets))


def protected(
    baseline_ids: Iterable[str],
    targets: Collection[str] | None,
    preexisting_failures: Iterable[str],
    flaky: Iterable[str],
) -> frozenset[str]:
    """Tests a candidate may not break: those passing at the baseline that are not targets (flaky
    ones are counted neither way). Empty without targets, where the pass rate alone decides."""
    if targets is None:
        return frozenset()
    return frozenset(baseline_ids) - set(targets) - set(preexisting_failures) - set(flaky)


def to_repair(current_failing: list[str], targets: Collection[str] | None) -> list[str]:
    """What the generators are told is failing."""
    if targets is None:
        return list(current_failing)
    chosen = set(targets)
    return [i for i in current_failing if i in chosen]


def blocking(
    current_failing: list[str], targets: Collection[str] | None, preexisting_failures: Collection[str]
) -> list[str]:
    """Failures that keep the run from succeeding: every one without targets; with targets, the
    failing targets and any other test that did not fail at the baseline."""
    if targets is None:
        return list(current_failing)
    chosen, left_alone = set(targets), set(preexisting_failures)
    return [i for i in current_failing if i in chosen or i not in left_alone]
