"""Strategies: what a strategy file says (typed, checked field by field), and the pure choice of
which one shapes the next iteration. Finding and reading the files: edges/strategy_io."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from ..model.errors import UsageError
from .history import Detection

BUILTIN_DIR = Path(__file__).parent / "strategies"
NAMES = ("conservative", "aggressive", "exploratory", "surgical")

Shape = Literal["variations", "batched", "distinct", "minimal"]
TestMode = Literal["auto", "affected-then-full", "full"]


class Table(BaseModel):
    """A table of a strategy file: a key it does not know is refused by name (a typo would
    otherwise change nothing, silently)."""

    model_config = ConfigDict(extra="forbid")


class Trigger(Table):
    max_iteration: int | None = None
    """conservative: used up to this iteration."""
    min_pass_rate: float | None = None
    """aggressive: used above this pass rate (percent) …"""
    min_similarity: float | None = None
    """… when the failures are at least this similar (0–1)."""
    min_locations: int | None = None
    """aggressive: also used, from the first iteration, when the failing tests point at this many
    distinct locations or more (several causes: one candidate combining their fixes)."""
    stuck_iterations: int | None = None
    """exploratory: a test failing in this many consecutive records is stuck."""
    min_iteration: int | None = None
    """exploratory: not before this iteration."""
    regression_drop: float | None = None
    """surgical: a pass-rate drop of more than this many points is a regression."""


class Candidates(Table):
    shape: Shape = "variations"
    """variations of one fix | one batched fix | distinct hypotheses | minimal diffs."""


class MutationPolicy(Table):
    max_edits: int = 1
    """How many mutations one candidate may combine."""
    distinct_lines: bool = False
    """Each candidate from a different line or operator family."""
    single_token: bool = False
    """Single-token changes first (mutate widens to every operator when none fixes every failing test)."""


class TestsPolicy(Table):
    __test__ = False  # not a pytest test class

    mode: TestMode = "auto"
    """affected-then-full: a candidate's affected tests first, the full suite for the best; full: the
    full suite for every candidate; auto: the full suite first, unsharded, for every candidate when
    it is cheap next to the affected tests (decide/first_run) — that run is the candidate's
    validation and final confirmation — else affected-then-full."""


class PromptPolicy(Table):
    guidance: str = ""
    """What a model-driven generator is told this strategy wants."""
    template: str | None = None
    """A task text put before the generated one (anthropic)."""


class Strategy(Table):
    name: str
    description: str = ""
    trigger: Trigger = Field(default_factory=Trigger)
    candidates: Candidates = Field(default_factory=Candidates)
    mutation: MutationPolicy = Field(default_factory=MutationPolicy)
    tests: TestsPolicy = Field(default_factory=TestsPolicy)
    prompt: PromptPolicy = Field(default_factory=PromptPolicy)
    source: str = ""
    """The file it was read from."""

    @property
    def shape(self) -> Shape:
        return self.candidates.shape

    @property
    def progressive(self) -> bool:
        """Candidates run their affected tests before any full-suite run."""
        return self.tests.mode != "full"

    @property
    def guidance(self) -> str:
        return self.prompt.guidance.strip()

    @property
    def template(self) -> str | None:
        return self.prompt.template


def parse(text: str, source: str, default_name: str) -> Strategy:
    """A strategy file's text as a Strategy (named after its file unless it says `name`); a
    UsageError (exit 2) naming the file, and the field and what is wrong with it."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"invalid strategy file {source}: not TOML: {exc}") from exc
    data.setdefault("name", default_name)
    try:
        return Strategy.model_validate({**data, "source": source})
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors(include_url=False))
        raise UsageError(f"invalid strategy file {source}: {problems}") from exc


def _problem(error: ErrorDetails) -> str:
    """One validation error as `table.field: what is wrong (got VALUE)`."""
    where = ".".join(str(part) for part in error["loc"]) or "(the file)"
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown key; {_known(error['loc'][:-1])}"
    got = f" (got {error['input']!r})" if "input" in error and not isinstance(error["input"], dict) else ""
    return f"{where}: {error['msg']}{got}"


@dataclass(frozen=True)
class Choice:
    name: str
    reason: str


def select(
    strategies: dict[str, Strategy], iteration: int, pass_rate: float, detection: Detection, forced: str = "auto"
) -> Choice:
    """DESIGN §1, in this order: regression → surgical; stuck tests → exploratory (from iteration 3,
    or at once when they were stuck in an earlier run too); failing tests pointing at several
    distinct locations → aggressive; iterations 1–2 conservative; pass rate >80% with similar
    failures → aggressive; otherwise conservative."""
    if forced != "auto":
        return Choice(forced, "forced by --strategy")
    surgical = strategies.get("surgical")
    limit = surgical.trigger.regression_drop if surgical else None
    regressed = detection.regression_drop > limit if limit is not None else detection.regression
    if surgical and regressed:
        return Choice("surgical", f"regression: pass rate fell {detection.regression_drop:.1f} points")
    exploratory = strategies.get("exploratory")
    if exploratory and detection.carried:
        return Choice(
            "exploratory", f"{len(detection.carried)} test(s) stuck since an earlier run, e.g. {detection.carried[0]}"
        )
    if exploratory and detection.stuck and iteration >= (exploratory.trigger.min_iteration or 3):
        return Choice("exploratory", f"{len(detection.stuck)} stuck test(s), e.g. {detection.stuck[0]}")
    aggressive = strategies.get("aggressive")
    spread = aggressive.trigger.min_locations if aggressive else None
    if aggressive and spread is not None and len(detection.locations) >= spread:
        shown = ", ".join(detection.locations[:3]) + (", …" if len(detection.locations) > 3 else "")
        return Choice(
            "aggressive",
            f"the failures point at {len(detection.locations)} distinct locations ({shown}): combine their fixes",
        )
    conservative = strategies["conservative"]
    if iteration <= (conservative.trigger.max_iteration or 2):
        return Choice("conservative", f"iteration {iteration}: start with targeted fixes")
    if aggressive:
        rate = aggressive.trigger.min_pass_rate if aggressive.trigger.min_pass_rate is not None else 80.0
        similar = aggressive.trigger.min_similarity if aggressive.trigger.min_similarity is not None else 0.5
        if pass_rate > rate and detection.similarity >= similar:
            return Choice(
                "aggressive", f"pass rate {pass_rate:.1f}% with similar failures ({detection.similarity:.2f})"
            )
    return Choice("conservative", "no trigger holds: targeted fixes")


def _known(table: tuple[int | str, ...]) -> str:
    """The keys the table at `table` (a path of table names, () for the top level) allows."""
    model: type[BaseModel] = Strategy
    for name in table:
        annotation = model.model_fields[str(name)].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return "a value here, not a table"
        model = annotation
    keys = [k for k in model.model_fields if k != "source"]
    return (
        f"[{'.'.join(map(str, table))}] allows {', '.join(keys)}"
        if table
        else f"a strategy file allows {', '.join(keys)}"
    )
