"""Stuck, regression, trend and similarity detection over the iteration history — pure.

History persists across runs of the same repository (`.explore/history.jsonl`), one record per
baseline and per iteration, so a nightly job knows what was stuck yesterday. It is validated on
read (`validated`): a record that is malformed, or that no run recorded in `.explore/runs/` could
have written (`implausible`), is ignored — it would otherwise call real failures flaky. Reading
and appending the file: edges/history_io.
"""

from __future__ import annotations

import builtins
import difflib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from ..model.runstate import RunState
from ..model.tally import AgentTally, tally
from ..model.testfiles import CONVENTIONS, is_test_file


class HistoryRecord(BaseModel):
    run_id: str
    n: int
    """0 for a run's baseline, then the iteration number."""
    pass_rate: float
    failing: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    strategy: str | None = None
    commit: str | None = None
    green: bool = False
    set_aside: list[str] = Field(default_factory=list)
    """Failing tests the run stopped working on: no candidate edit ever changed their outcome."""
    agents: dict[str, AgentTally] = Field(default_factory=dict)
    """The iteration's candidates per agent (model/tally.py): what `--deal auto` learns from."""
    branch: bool = False
    """What the user's branch holds at the run's end when the run merged a result and did not
    apply it (gate not met, kept back): the commit it started from and the baseline's pass rate
    and failures, so the next run's baseline does not read as a drop from a result it never had
    (`branch_record`). n: the run's last iteration then."""


def branch_record(run: RunState) -> HistoryRecord | None:
    """The closing record of a run that merged a result the user's branch does not hold (not
    applied: below its gate, kept back, paused), else None: the iteration records already end on
    what the branch holds. A resumed run adds its iterations after it, and a branch record of its
    own at its new end."""
    if run.applied or run.current_commit == run.base_commit:
        return None
    return HistoryRecord(
        run_id=run.run_id,
        n=len(run.iterations),
        pass_rate=run.baseline.pass_rate,
        failing=sorted(run.baseline_failing),
        flaky=run.flaky,
        commit=run.start_commit or run.base_commit,
        green=not run.baseline_failing,
        set_aside=list(run.set_aside),
        branch=True,
    )


@dataclass(frozen=True)
class Detection:
    stuck: list[str] = field(default_factory=list)
    regression: bool = False
    regression_drop: float = 0.0
    trend: str = "flat"
    """improving | flat | worsening over the last records."""
    similarity: float = 0.0
    regressed: tuple[str, str] | None = None
    """(before, after) commits of the latest drop: the change a surgical repair starts from."""
    carried: list[str] = field(default_factory=list)
    """Stuck tests whose streak began in an earlier run: stuck across runs, not just iterations."""
    locations: list[str] = field(default_factory=list)
    """Distinct places the failing tests' reports point at (source function, or the function the
    failing line calls): several mean several causes, as far as the reports tell."""


SET_ASIDE_AFTER = 2
"""Iterations running in which no screened edit moved a failing test before it is set aside."""


def unmoved_streaks(streaks: dict[str, int], unmoved: list[str], failing: list[str]) -> dict[str, int]:
    """Per failing test, iterations running in which the generator tried edits against it and
    none made it pass; a test that moved, or passes now, starts again from nothing."""
    still = set(failing)
    return {t: streaks.get(t, 0) + 1 for t in unmoved if t in still}


def to_set_aside(streaks: dict[str, int], already: list[str], after: int = SET_ASIDE_AFTER) -> list[str]:
    """Tests whose streak reached `after` and are not set aside yet."""
    return sorted(t for t, n in streaks.items() if n >= after and t not in already)


def set_aside_before(records: list[HistoryRecord]) -> set[str]:
    """Tests an earlier run set aside: a later run gives them one iteration, not two."""
    return {t for record in records for t in record.set_aside}


def stuck_tests(records: list[HistoryRecord], threshold: int = 3, flaky: frozenset[str] = frozenset()) -> list[str]:
    """Tests failing in each of the last `threshold` consecutive records (flaky ones excluded)."""
    if len(records) < threshold:
        return []
    recent = records[-threshold:]
    common = set(recent[0].failing)
    for record in recent[1:]:
        common &= set(record.failing)
    return sorted(common - flaky)


def carried_over(records: list[HistoryRecord], stuck: list[str], threshold: int = 3) -> list[str]:
    """The stuck tests when their window of `threshold` records spans more than one run: a
    previous run already failed to repair them (a later run should not repeat its approach)."""
    window = records[-threshold:]
    return list(stuck) if len({r.run_id for r in window}) > 1 else []


FRAME = re.compile(r"^(\S+\.py):(\d+): (?:in (\w+)|\w)", re.MULTILINE)
FAILING_LINE = re.compile(r"^>\s+(.*)$", re.MULTILINE)
CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*\(")


def _project_code(file: str) -> bool:
    """A frame of the project's code: not its tests, nor a file pytest names by an absolute path
    (outside the project: the standard library, site-packages, explore's own plugin)."""
    return not (file.startswith("/") or "site-packages/" in file or is_test_file(file, CONVENTIONS))


def failure_location(report: str) -> str | None:
    """Where a failure report points: the innermost frame of the project's code (`file:function`),
    else the first non-builtin function the failing test line calls (`call:name`), else None."""
    frames = [(f, line, func) for f, line, func in FRAME.findall(report) if _project_code(f.replace("\\", "/"))]
    if frames:
        file, line, func = frames[-1]
        return f"{file}:{func or line}"
    for statement in FAILING_LINE.findall(report):
        for name in CALL.findall(statement):
            if name.split(".")[0] not in ("pytest", "self") and not hasattr(builtins, name):
                return f"call:{name}"
    return None


def failure_locations(reports: list[str]) -> list[str]:
    """Distinct locations of the reports that point somewhere, sorted."""
    return sorted({loc for r in reports if (loc := failure_location(r))})


def regression_drop(records: list[HistoryRecord]) -> float:
    """Points lost by the latest record against the one before it (0 when it did not drop)."""
    if len(records) < 2:
        return 0.0
    return max(0.0, records[-2].pass_rate - records[-1].pass_rate)


def regressed_commits(records: list[HistoryRecord]) -> tuple[str, str] | None:
    """The commits of the last two records (either side of a drop), when both are known and differ."""
    if len(records) < 2:
        return None
    before, after = records[-2].commit, records[-1].commit
    return (before, after) if before and after and before != after else None


def trend(records: list[HistoryRecord], window: int = 3) -> str:
    recent = [r.pass_rate for r in records[-window:]]
    if len(recent) < 2 or recent[-1] == recent[0]:
        return "flat"
    return "improving" if recent[-1] > recent[0] else "worsening"


def failure_similarity(messages: list[str]) -> float:
    """Mean pairwise likeness (0–1) of failure messages: high when one cause likely explains them."""
    texts = [m.strip().splitlines()[-1] if m.strip() else "" for m in messages]
    if len(texts) < 2:
        return 0.0
    pairs = [(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :]][:200]
    return sum(difflib.SequenceMatcher(None, a, b).ratio() for a, b in pairs) / len(pairs)


def detect(
    records: list[HistoryRecord],
    messages: list[str],
    stuck_threshold: int = 3,
    regression_points: float = 10.0,
    flaky: frozenset[str] = frozenset(),
    reports: Sequence[str] = (),
) -> Detection:
    """`reports`: the failing tests' full failure reports (tracebacks), for their locations."""
    drop = regression_drop(records)
    stuck = stuck_tests(records, stuck_threshold, flaky)
    return Detection(
        stuck=stuck,
        carried=carried_over(records, stuck, stuck_threshold),
        locations=failure_locations(list(reports)),
        regression=drop > regression_points,
        regression_drop=drop,
        trend=trend(records),
        similarity=failure_similarity(messages),
        regressed=regressed_commits(records) if drop > regression_points else None,
    )


def implausible(record: HistoryRecord, run: RunState | None, seen: set[tuple[str, int, bool]]) -> str | None:
    """Why `record` cannot have been written by its run (`run`: its state, None when no run of
    that id is recorded), or None. `seen`: the (run, n, branch) of the records already read."""
    if run is None:
        return f"run {record.run_id!r} is not recorded in .explore/runs/"
    if record.n > len(run.iterations) or record.n < 0:
        return f"run {record.run_id} has no iteration {record.n}"
    commits = {run.base_commit, run.start_commit, run.current_commit, *(i.commit for i in run.iterations)}
    if run.reproduction and run.reproduction.commit:
        commits.add(run.reproduction.commit)
    if record.commit and record.commit not in commits:
        return f"commit {record.commit[:10]} is none of run {record.run_id}'s"
    if not set(record.flaky) <= set(run.flaky):
        return (
            f"flaky tests run {record.run_id} never found: {', '.join(sorted(set(record.flaky) - set(run.flaky))[:3])}"
        )
    if record.branch:
        if sorted(record.failing) != sorted(run.baseline_failing):
            return f"a branch record that is not run {record.run_id}'s baseline at its end"
    elif record.n and sorted(record.failing) != sorted(run.iterations[record.n - 1].failed_tests):
        return f"failing tests that are not iteration {record.n} of run {record.run_id}'s"
    if record.n and record.agents and record.agents != tally(run.iterations[record.n - 1 : record.n]):
        return f"agent tallies that are not iteration {record.n} of run {record.run_id}'s"
    if (record.run_id, record.n, record.branch) in seen:
        what = "the branch at the end" if record.branch else f"iteration {record.n}"
        return f"a second record for {what} of run {record.run_id}"
    return None


def validated(
    lines: Iterable[str], recorded_run: Callable[[str], RunState | None]
) -> tuple[list[HistoryRecord], list[tuple[str, str]]]:
    """The records of history.jsonl's lines, in order, and the (line, why) of each well-formed one
    ignored because no recorded run could have written it (`implausible`). A damaged line (a run
    killed mid-write) is skipped without a word. recorded_run: a run's saved state by its id, None
    when no run of that id is recorded (asked once per id)."""
    records: list[HistoryRecord] = []
    ignored: list[tuple[str, str]] = []
    runs: dict[str, RunState | None] = {}
    seen: set[tuple[str, int, bool]] = set()
    for line in lines:
        try:
            record = HistoryRecord.model_validate(json.loads(line))
        except (ValueError, ValidationError):
            continue
        if record.run_id not in runs:
            runs[record.run_id] = recorded_run(record.run_id)
        why = implausible(record, runs[record.run_id], seen)
        if why:
            ignored.append((line, why))
            continue
        seen.add((record.run_id, record.n, record.branch))
        records.append(record)
    return records, ignored
