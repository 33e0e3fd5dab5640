"""Where a run is: the step its last checkpoint recorded (`RunState.phase`), typed.

On disk it stays the string it always was ("start", "baseline", "iterating",
"iteration-3-scored-b", "succeeded"…): `explore resume` reads older state files, and the
fault-injection points of the crash-safety tests are named after it (`saved:iteration-1-merged`)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from pydantic import BaseModel, model_serializer, model_validator


class Stage(str, Enum):
    start = "start"
    """The state is written; no ref yet, no test run."""
    baseline = "baseline"
    iterating = "iterating"
    """The baseline is done: iterations follow."""
    propose = "propose"
    fanout = "fanout"
    scored = "scored"
    """One candidate of the fan-out has its result."""
    merged = "merged"
    done = "done"
    running = "running"
    succeeded = "succeeded"
    partial = "partial"
    failed = "failed"
    escalated = "escalated"
    interrupted = "interrupted"
    """The last five (and running): the run's status when it ended."""


ITERATION_STAGES = frozenset({Stage.propose, Stage.fanout, Stage.scored, Stage.merged, Stage.done})
_ITERATION = re.compile(r"iteration-(\d+)-([a-z]+)(?:-(.+))?")


class RunPhase(BaseModel, frozen=True):
    stage: Stage
    iteration: int | None = None
    """Set for the stages of an iteration, and only for them."""
    candidate: str | None = None
    """Set for `scored` only: the candidate that has its result."""

    @model_validator(mode="after")
    def _consistent(self) -> RunPhase:
        if (self.iteration is not None) != (self.stage in ITERATION_STAGES):
            raise ValueError(f"phase {self.stage.value}: an iteration number goes with {sorted(ITERATION_STAGES)}")
        if (self.candidate is not None) != (self.stage == Stage.scored):
            raise ValueError("phase: a candidate goes with `scored` only")
        return self

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if not isinstance(data, str):
            return data
        found = _ITERATION.fullmatch(data)
        if found:
            return {"stage": found.group(2), "iteration": int(found.group(1)), "candidate": found.group(3)}
        return {"stage": data}

    @model_serializer
    def _to_text(self) -> str:
        return str(self)

    def __str__(self) -> str:
        if self.iteration is None:
            return self.stage.value
        return f"iteration-{self.iteration}-{self.stage.value}" + (f"-{self.candidate}" if self.candidate else "")

    @classmethod
    def at(cls, stage: Stage | str, iteration: int | None = None, candidate: str | None = None) -> RunPhase:
        return cls(stage=Stage(stage), iteration=iteration, candidate=candidate)
