"""Pass rates against the baseline yardstick, tamper checks and candidate ranking — pure."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Collection
from dataclasses import dataclass, replace

from ..model.candidates import CandidateResult
from ..model.testresults import PASSING, Counts, TestRun
from . import parsing, witness


@dataclass(frozen=True)
class Yardstick:
    """The baseline's test ids (skipped-at-baseline left out): tests that vanish still count."""

    ids: frozenset[str]
    skipped: frozenset[str]
    xfailed: frozenset[str] = frozenset()
    """Tests xfail at baseline: the only ones whose `xfailed` counts as passing."""
    unconfirmed: frozenset[str] = frozenset()
    """Tests whose passing explore's record contradicted at baseline: the project's own harness, not a candidate's doing."""

    def passes(self, run: TestRun, test_id: str) -> bool:
        outcome = run.outcomes[test_id].outcome if test_id in run.outcomes else None
        return outcome in PASSING or (outcome == "xfailed" and test_id in self.xfailed)

    def aligned(self, run: TestRun) -> TestRun:
        """The run with its drifted ids renamed to the baseline's (see `drifted`)."""
        return renamed(run, drifted(self.ids, run, self.skipped))

    def considered(self, run: TestRun) -> set[str]:
        """The ids a pass rate counts in an aligned run: the baseline's, and a new id only when it
        fails — a test that did not exist at the baseline (a new test, a new doctest, a `.txt`
        doctest) can show a regression, never lift the score."""
        new = set(run.outcomes) - self.skipped - self.ids
        return set(self.ids) | {i for i in new if not self.passes(run, i)}

    def counts(self, run: TestRun) -> Counts:
        run = self.aligned(run)
        considered = self.considered(run)
        passed = sum(1 for i in considered if self.passes(run, i))
        total = len(considered)
        return Counts(passed=passed, failed=total - passed, total=total, pass_rate=pass_rate(passed, total))

    def failing(self, run: TestRun) -> list[str]:
        run = self.aligned(run)
        return sorted(i for i in self.considered(run) if not self.passes(run, i))


def pass_rate(passed: int, total: int) -> float:
    """The one way a pass rate is computed (rounded as the JSON shows it), so that a bound compared
    with a measured rate is never above or below it by rounding: a cap of 66.666…67 read below a
    rival's 66.6667 stopped a candidate that outranked it on confidence."""
    return round(100.0 * passed / total, 4) if total else 100.0


def _base(test_id: str) -> str | None:
    """A parametrised id's function part (`t.py::test_x[...]` → `t.py::test_x`), else None."""
    head, bracket, _ = test_id.partition("[")
    return head if bracket else None


def drifted(expected: Collection[str], run: TestRun, ignore: Collection[str] = ()) -> dict[str, str]:
    """Parametrised ids that changed between runs without a test going missing: a parameter
    that is the time of day (`test_x[01:30:50 2026-11-23]`) names the same test differently in
    every run. For each test function, the expected ids missing from the run are matched, in
    order, with the run's new ids of that function — only when there are as many of each, so a
    test that truly vanished still does. Returns {the run's id: the expected id}."""
    known = set(expected) | set(ignore)
    missing: dict[str, list[str]] = {}
    for test_id in expected:
        if test_id not in run.outcomes and (base := _base(test_id)) is not None:
            missing.setdefault(base, []).append(test_id)
    if not missing:
        return {}
    appeared: dict[str, list[str]] = {}
    for test_id in run.outcomes:
        if test_id not in known and (base := _base(test_id)) in missing:
            appeared.setdefault(base, []).append(test_id)
    out: dict[str, str] = {}
    for base, new in appeared.items():
        if len(new) == len(missing[base]):
            out.update(zip(sorted(new), sorted(missing[base])))
    return out


def renamed(run: TestRun, names: dict[str, str]) -> TestRun:
    if not names:
        return run
    outcomes = {}
    for test_id, outcome in run.outcomes.items():
        new = names.get(test_id, test_id)
        outcomes[new] = outcome.model_copy(update={"id": new}) if new != test_id else outcome
    unconfirmed = {names.get(test_id, test_id): why for test_id, why in run.unconfirmed.items()}
    return run.model_copy(update={"outcomes": outcomes, "unconfirmed": unconfirmed})


def yardstick_of(baseline: TestRun) -> Yardstick:
    skipped = frozenset(i for i, o in baseline.outcomes.items() if o.outcome == "skipped")
    xfailed = frozenset(i for i, o in baseline.outcomes.items() if o.outcome == "xfailed")
    return Yardstick(ids=frozenset(baseline.outcomes) - skipped, skipped=skipped, xfailed=xfailed)


def excusing(yardstick: Yardstick, machine_skips: Collection[str]) -> Yardstick:
    """The yardstick a candidate is held to when some tests that ran at the baseline skip on the
    baseline's tree too, rerun beside the candidate's (fanout/testjobs.confirm_skips): they count as
    skipped at the baseline, neither tamper nor a pass."""
    if not machine_skips:
        return yardstick
    excused = frozenset(machine_skips) & yardstick.ids
    return replace(yardstick, ids=yardstick.ids - excused, skipped=yardstick.skipped | excused)


def tamper_reason(run: TestRun, yardstick: Yardstick) -> str | None:
    """Why a candidate's test run must be rejected whatever its raw pass rate, or None (what its
    patch may change is decide/policy's, decided before it ran)."""
    run = yardstick.aligned(run)
    if run.collection_errors:
        return f"breaks collection: {', '.join(run.collection_errors[:3])}"
    if run.infra_error:
        return f"breaks the test run: {run.infra_error}"
    contradicted = {i: why for i, why in run.unconfirmed.items() if i not in yardstick.unconfirmed}
    if contradicted:
        return witness.describe(contradicted)
    vanished = sorted(i for i in yardstick.ids if i not in run.outcomes)
    if vanished and run.per_test:
        return f"makes {len(vanished)} test(s) vanish or deselects them, e.g. {vanished[0]}"
    skipped = sorted(i for i in yardstick.ids if i in run.outcomes and run.outcomes[i].outcome == "skipped")
    if skipped:  # reproduced: a skip that the baseline's tree shows too has left the yardstick (excusing)
        return f"skips {len(skipped)} test(s) that ran at baseline, e.g. {skipped[0]}"
    return xfail_reason(run, yardstick)


def outside_targets_reason(run: TestRun, protected: frozenset[str]) -> str | None:
    """With target tests, every other test passing at the baseline is held to "no new failures":
    a candidate that breaks one is never merged, whatever it does for the targets."""
    broken = sorted(i for i in protected if i not in run.outcomes or run.outcomes[i].outcome not in PASSING)
    if not broken:
        return None
    return f"breaks {len(broken)} test(s) outside the targets that passed at the baseline: {', '.join(broken[:3])}"


def xfail_reason(run: TestRun, yardstick: Yardstick) -> str | None:
    """A test that was not xfail at baseline and now xfails (a `pytest.xfail` call in library code,
    a marker from a plugin) is a failure dressed as expected."""
    xfailed = sorted(
        i
        for i, o in run.outcomes.items()
        if o.outcome == "xfailed" and i in yardstick.ids and i not in yardstick.xfailed
    )
    if not xfailed:
        return None
    return f"turns failing tests into xfail: {', '.join(xfailed[:3])}" + (
        f" and {len(xfailed) - 3} more" if len(xfailed) > 3 else ""
    )


def newly_failing(current_passing: set[str], run: TestRun, yardstick: Yardstick | None = None) -> list[str]:
    stick = yardstick or Yardstick(frozenset(), frozenset())
    run = renamed(run, drifted(current_passing, run, stick.ids | stick.skipped))
    return sorted(i for i in current_passing if not stick.passes(run, i))


@dataclass(frozen=True)
class Ranked:
    id: str
    pass_rate: float
    newly_failing: int
    agreement: int
    confidence: float
    diff_lines: int

    def key(self) -> tuple[float, int, int, float, int, str]:
        """DESIGN §1: pass rate, fewer newly failing, agreement, confidence, smaller diff; then id
        so equal candidates rank the same way every time."""
        return (
            self.pass_rate,
            -self.newly_failing,
            self.agreement,
            self.confidence,
            -self.diff_lines,
            _reverse(self.id),
        )


def ranked_result(
    result: CandidateResult,
    pass_rate: float | None = None,
    newly_failing: int | None = None,
    agreement: int | None = None,
) -> Ranked:
    """A candidate's result as it ranks (DESIGN §1); a pass rate, a count of newly failing tests or
    an agreement given in its place (a prospect: as it would rank passing every test)."""
    return Ranked(
        result.id,
        result.pass_rate if pass_rate is None else pass_rate,
        len(result.newly_failing) if newly_failing is None else newly_failing,
        result.agreement if agreement is None else agreement,
        result.confidence,
        result.diff_lines,
    )


def _reverse(text: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


def rank(candidates: list[Ranked]) -> list[Ranked]:
    return sorted(candidates, key=Ranked.key, reverse=True)


def is_improvement(candidate_rate: float, current_rate: float) -> bool:
    return candidate_rate > current_rate + 1e-9


def diff_size(patch: str) -> int:
    return sum(1 for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))


def normalise_source(path: str, data: bytes) -> bytes:
    """What patch agreement compares: a file's exact bytes, except Python source that parses, which
    is compared by its syntax tree (parsed from the bytes, so a coding cookie counts; layout and
    comments gone, as the interpreter ignores them — only code that reads its own source text,
    `inspect.getsource` or a line number in a message, could tell such twins apart). No other
    language is taken as whitespace-insensitive: JSON, YAML, INI, text data compare byte for byte,
    since a test may well compare them as text."""
    if path.endswith(".py"):
        try:
            return b"ast:" + ast.dump(parsing.parse(data)).encode()
        except (SyntaxError, ValueError):
            pass
    return b"bytes:" + data


def patch_key(files: dict[str, bytes | None]) -> str:
    """Identity of a candidate's result: its changed files' normalised contents (None = deleted)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        content = files[path]
        normal = normalise_source(path, content) if content is not None else b"<deleted>"
        digest.update(path.encode(errors="surrogateescape") + b"\0" + hashlib.sha256(normal).digest())
    return digest.hexdigest()


RULES = (
    "pass rate",
    "fewer newly failing tests",
    "agreement between candidates",
    "confidence",
    "smaller diff",
    "candidate order",
)


def deciding_rule(winner: Ranked, other: Ranked) -> str:
    """The first rule of Ranked.key on which the winner beat a candidate."""
    for rule, mine, theirs in zip(RULES, winner.key(), other.key()):
        if mine != theirs:
            return rule
    return RULES[-1]
