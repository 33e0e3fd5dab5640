"""`[tool.explore.mutate]`: the search's own settings, read once by the generator."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from . import localise


class MutateOptions(BaseModel):
    """`[tool.explore.mutate]` (or options["mutate"]): the search's own settings."""

    budget_mutants: int = 600
    """Most mutants screened per iteration while something plausible has been found; a search that
    has found nothing widens until budget_seconds is spent (deepen.py)."""
    budget_seconds: float = 60.0
    """Most seconds spent screening per iteration."""
    formula: str = localise.DEFAULT_FORMULA
    """ochiai | dstar | tarantula."""
    design: str = "fork"
    """fork (pre-imported worker, forks per mutant) | fresh (a new pytest per mutant)."""
    lanes: int | None = None
    """Mutants screened at once (default: min(parallel, CPUs))."""
    mutant_timeout: float | None = None
    """Seconds per mutant (default: from the coverage run's duration, 2–30 s)."""
    memory_mb: int = 512
    """Address space a mutant may add before it is stopped."""
    patience: int = 10
    """Mutants ranked below the first full fix (one that fixes every failing test) screened past
    it before settling for what was found (those ranked as high as it are all screened)."""
    partial_patience: int = 120
    """Mutants screened past the latest partial fix, when there is no full one, before settling."""
    giveup: int = 3
    """Failing tests a mutant may fail, fixing none, before it is dropped."""
    max_lines: int = 40
    """Most suspicious lines mutated."""
    extra: dict[str, Any] = Field(default_factory=dict)
