"""bench.json: one record per case × strategy, and the aggregates per strategy and defect class."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..model.runstate import RunStatus
from ..model.usage import Usage


class Verdict(BaseModel):
    """The judge's own findings on the tree explore left on the user's branch."""

    suite_passed: int = 0
    suite_total: int = 0
    plausible: bool = False
    """The visible suite is green on the final tree."""
    checks_passed: int = 0
    checks_total: int = 0
    checks_green: bool | None = None
    """None when the case has no checks."""
    tests_touched: list[str] = Field(default_factory=list)
    """Test files the final tree changed from the initial commit."""
    changed_files: list[str] = Field(default_factory=list)
    diff: str = ""
    """`git diff` from the initial commit to the judged tree: the repair, for re-checks and review."""
    correct: bool = False
    """Plausible, test files untouched and the reference checks green."""
    debris: list[str] = Field(default_factory=list)
    """Worktrees, empty explore/* branches or processes left behind."""


class CaseResult(BaseModel):
    case: str
    defect_class: str
    strategy: str
    agent: str = ""
    """The agent of the run, when the bench measures agents (`--agent A --agent B`)."""
    family: str = ""
    status: RunStatus | Literal["error"]
    """explore's own status, or `error` when its output could not be read."""
    exit_code: int | None
    repaired: bool = False
    """What explore claimed: exit 0 with a merge on the user's branch."""
    stop_reason: str | None = None
    iterations: int = 0
    candidates: int = 0
    strategies_used: list[str] = Field(default_factory=list)
    iteration_strategies: list[str] = Field(default_factory=list)
    """The strategy of each iteration in order, over every run of the case (to see `auto` switching)."""
    runs: int = 1
    run_iterations: list[int] = Field(default_factory=list)
    """Iterations of each explore run of the case, in order (a history case runs twice)."""
    duration_s: float = 0.0
    """Wall time of the explore process."""
    usage: Usage = Field(default_factory=Usage)
    """Every run of the case together (a history case runs twice)."""
    verdict: Verdict = Field(default_factory=Verdict)
    error: str | None = None

    @property
    def arm(self) -> str:
        """What was measured: the agent when agents are compared, else the strategy."""
        return self.agent or self.strategy

    @property
    def agrees(self) -> bool:
        """explore's claim matches the judge: repaired exactly when plausible."""
        return self.repaired == self.verdict.plausible

    @property
    def grade(self) -> str:
        v = self.verdict
        return (
            "correct" if v.correct else "plausible" if v.plausible else "repaired?" if self.repaired else "unrepaired"
        )


class Stats(BaseModel):
    runs: int = 0
    repaired: int = 0
    plausible: int = 0
    correct: int = 0
    tests_touched: int = 0
    disagreements: int = 0
    """Runs where explore's claim and the judge differ."""
    debris: int = 0
    errors: int = 0
    iterations: int = 0
    candidates: int = 0
    median_s: float = 0.0
    total_s: float = 0.0
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def rate(self) -> float:
        """Correct repairs in percent of runs."""
        return 100.0 * self.correct / self.runs if self.runs else 0.0

    @property
    def plausible_rate(self) -> float:
        return 100.0 * self.plausible / self.runs if self.runs else 0.0


class StrategyStats(Stats):
    by_class: dict[str, Stats] = Field(default_factory=dict)
    by_family: dict[str, Stats] = Field(default_factory=dict)


class BenchResult(BaseModel):
    """The content of bench.json."""

    version: int = 1
    cases_dir: str
    agent: str
    parallel: int
    jobs: int
    strategies: list[str]
    """What was measured, each a column of the tables: strategies, or agents (`measures`)."""
    started_at: str
    measures: Literal["strategy", "agent"] = "strategy"
    duration_s: float = 0.0
    results: list[CaseResult] = Field(default_factory=list)
    summary: dict[str, StrategyStats] = Field(default_factory=dict)

    def save(self, path: Path) -> None:
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> BenchResult:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def _stats(results: list[CaseResult], into: Stats) -> Stats:
    durations = [r.duration_s for r in results]
    into.runs = len(results)
    into.repaired = sum(r.repaired for r in results)
    into.plausible = sum(r.verdict.plausible for r in results)
    into.correct = sum(r.verdict.correct for r in results)
    into.tests_touched = sum(bool(r.verdict.tests_touched) for r in results)
    into.disagreements = sum(not r.agrees for r in results)
    into.debris = sum(bool(r.verdict.debris) for r in results)
    into.errors = sum(r.error is not None for r in results)
    into.iterations = sum(r.iterations for r in results)
    into.candidates = sum(r.candidates for r in results)
    into.median_s = round(statistics.median(durations), 2) if durations else 0.0
    into.total_s = round(sum(durations), 2)
    into.tokens = sum(r.usage.llm.tokens_in + r.usage.llm.output_tokens for r in results)
    into.cost_usd = round(sum(r.usage.llm.cost_usd for r in results), 4)
    return into


def aggregate(results: list[CaseResult], strategies: list[str]) -> dict[str, StrategyStats]:
    """Per strategy (in the order asked), each with its per-defect-class and per-family breakdown."""
    out: dict[str, StrategyStats] = {}
    for strategy in strategies:
        mine = [r for r in results if r.arm == strategy]
        stats = _stats(mine, StrategyStats())
        assert isinstance(stats, StrategyStats)
        for klass in sorted({r.defect_class for r in mine}):
            stats.by_class[klass] = _stats([r for r in mine if r.defect_class == klass], Stats())
        for family in sorted({r.family for r in mine if r.family}):
            stats.by_family[family] = _stats([r for r in mine if r.family == family], Stats())
        out[strategy] = stats
    return out
