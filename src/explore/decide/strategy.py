"""Strategy files and the pure choice of which one shapes the next iteration."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from ..model.errors import UsageError
from .history import Detection

BUILTIN_DIR = Path(__file__).parent / "strategies"
NAMES = ("conservative", "aggressive", "exploratory", "surgical")


class Trigger(BaseModel):
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


class MutationPolicy(BaseModel):
    max_edits: int = 1
    """How many mutations one candidate may combine."""
    distinct_lines: bool = False
    """Each candidate from a different line or operator family."""
    single_token: bool = False
    """Single-token changes first (mutate widens to every operator when none fixes every failing test)."""


class Strategy(BaseModel):
    name: str
    description: str = ""
    trigger: Trigger = Field(default_factory=Trigger)
    candidates: dict[str, Any] = Field(default_factory=lambda: {"shape": "variations"})
    mutation: MutationPolicy = Field(default_factory=MutationPolicy)
    tests: dict[str, Any] = Field(default_factory=lambda: {"mode": "affected-then-full"})
    prompt: dict[str, Any] = Field(default_factory=dict)
    source: str = ""

    @property
    def shape(self) -> Literal["variations", "batched", "distinct", "minimal"]:
        return self.candidates.get("shape", "variations")  # type: ignore[no-any-return]  # unchecked until strategy files are parsed into models (issue 25 point 3)

    @property
    def guidance(self) -> str:
        return str(self.prompt.get("guidance", "")).strip()

    @property
    def template(self) -> str | None:
        return self.prompt.get("template")


def load_strategies(extra_dirs: Sequence[Path] = ()) -> dict[str, Strategy]:
    """Built-in strategies, then the repo's own (which may override by name)."""
    found: dict[str, Strategy] = {}
    for folder in [BUILTIN_DIR, *extra_dirs]:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
                data.setdefault("name", path.stem)
                strategy = Strategy.model_validate({**data, "source": str(path)})
            except (tomllib.TOMLDecodeError, ValidationError, UnicodeDecodeError) as exc:
                raise UsageError(f"invalid strategy file {path}: {exc}".splitlines()[0]) from exc
            found[strategy.name] = strategy
    return found


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
