"""Run options: defaults, `[tool.explore]` in the target repo's pyproject.toml, then flags."""

from __future__ import annotations

import os
import re
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from .errors import UsageError
from .testfiles import DEFAULT_TEST_PATTERNS

MAX_PARALLEL = 64


class Options(BaseModel):
    """Everything a run needs to know; stored in state.json so `resume` continues alike."""

    model_config = ConfigDict(extra="forbid")

    parallel: int = 3
    """Candidates explored concurrently per iteration."""
    max_iterations: int = 10
    strategy: str = "auto"
    agent: str | list[str] = "auto"
    """One generator or chain (`A,B`), or the fleet: one slot per `--agent` (generators/fleet.py)."""
    deal: Literal["auto", "even"] = "auto"
    """How a fleet's candidates are dealt to its slots: by what wins here (auto), or in turn (even)."""
    agent_cmd: str | None = None
    test_cmd: str | None = None
    junit_xml: str | None = None
    branch_timeout: float = 600.0
    """Seconds per candidate, generator and tests together."""
    target_pass_rate: float = 100.0
    no_apply: bool = False
    apply_partial: bool = False
    """Move the user's branch to what a run merged even when it ended below its gate (by default only a met gate does)."""
    python: str | None = None
    """Interpreter for the default pytest command."""
    strategies_dir: str | None = None
    worktree_include: list[str] = Field(default_factory=list)
    """Ignored files (`.env`, local config) copied into every worktree."""
    worktree_setup: str | None = None
    """A shell command run once per worktree; its failure is an infrastructure escalation."""
    worktree_dir: str | None = None
    """Where worktrees live (default: a cache folder outside the work tree)."""
    test_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_TEST_PATTERNS))
    allow_test_edits: bool = False
    allow_new_files: list[str] = Field(default_factory=list)
    """Globs of new files the change policy admits beyond new modules in existing packages (`docs/**`)."""
    criticality: dict[str, list[str]] = Field(default_factory=dict)
    """{low|medium|high: [path globs or marker:NAME]}; a gate below 100% may leave only low failures."""
    no_progress_limit: int = 3
    """Iterations in a row without a merged improvement that end the run."""
    baseline_timeout: float | None = None
    test_timeout: float | None = None
    """Seconds per test (pytest); default: BASELINE_TEST_TIMEOUT for the baseline, then derived from it."""
    branch_memory: str | None = None
    """Memory cap per candidate's process tree, e.g. 512M or 2G (default: half the RAM / parallel)."""
    disk_floor: str = "1G"
    """No new worktree is created when free disk falls under this."""
    max_patch_size: str = "5M"
    """A candidate whose patch is larger is rejected (its patch is not read further)."""
    flaky_reruns: int = 1
    """How often failing baseline tests are rerun to tell flaky ones apart."""
    budget_usd: float | None = None
    budget_tokens: int | None = None
    search_budget: str | None = None
    """How long the search goes on with no repair in sight: a multiple of the suite's time (`10x`, at
    least 30 s) or a duration (`90s`, `5m`, `1h`); the clock restarts at every merged improvement.
    Unset: 10x for a generator whose search grows with the suite (mutate), none for model-driven ones."""
    reports_dir: str | None = None
    """Debug reports by topic, one per iteration, under this folder of the repository (e.g. debug)."""
    commit_reports: bool = False
    """Commit the debug reports on the run branch with each iteration's commit."""
    mutate: dict[str, Any] = Field(default_factory=dict)
    anthropic: dict[str, Any] = Field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """`[tool.explore.agents.NAME]`: model, args, bin, env, price of a named agent, or `cmd` to define one."""
    test_ids: list[str] = Field(default_factory=list)
    """Target tests named on the command line after `--` (ids, files or classes)."""
    tests: list[str] = Field(default_factory=list)
    """Target tests by glob over node ids; with test_ids and since, only targets are repaired."""
    since: str | None = None
    """Targets = tests failing now that passed at this git revision, or at `last-green`."""
    issue: str | None = None
    """`--issue`: the text of a bug report; reproduction tests are written and committed first."""

    sandbox: Literal["auto", "require", "off"] = "auto"
    """Candidates' agents, setup and tests in a bubblewrap sandbox that writes only their worktree:
    auto (when bwrap works here), require (refuse to run without it), off."""
    sandbox_writable: list[str] = Field(default_factory=list)
    """More paths a sandboxed agent may write (e.g. ~/.claude for an agent's own state)."""

    executor: Literal["local", "ray"] = "local"
    """Where test jobs run: this machine's worktrees, or a Ray cluster (RAY_ADDRESS, else a local Ray)."""
    shards: int | None = None
    """Full-suite runs split over this many shards by test file (1 = off; default: the free slots the suite's time fills)."""
    ray_num_cpus: float = 1.0
    """CPUs a Ray test job asks for."""
    ray_memory: str | None = None
    """Memory a Ray test job asks for (Ray's scheduling resource), e.g. 2G."""
    ray_runtime_env: dict[str, Any] = Field(default_factory=dict)
    """Ray runtime_env for the workers (pip, py_modules, env_vars…) when no image provides the project."""

    @field_validator("tests", "test_ids", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def has_targets(self) -> bool:
        return bool(self.test_ids or self.tests or self.since)

    @field_validator("agent", mode="before")
    @classmethod
    def _slots(cls, value: Any) -> Any:
        """`--agent` given once (or a one-item list) is that generator; several: the fleet's slots."""
        if isinstance(value, (list, tuple)):
            return value[0] if len(value) == 1 else list(value)
        return value

    @field_validator("parallel")
    @classmethod
    def _parallel(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value

    @field_validator("max_iterations", "no_progress_limit")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value

    @field_validator("test_timeout")
    @classmethod
    def _test_timeout(cls, value: float | None) -> float | None:
        if value is not None and value <= 0:
            raise ValueError("must be a positive number of seconds")
        return value

    @field_validator("branch_timeout")
    @classmethod
    def _timeout(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("must be a positive number of seconds")
        return value

    @field_validator("shards")
    @classmethod
    def _shards(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError("must be at least 1 (1 turns sharding off)")
        return value

    @field_validator("ray_num_cpus")
    @classmethod
    def _cpus(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("must be a positive number of CPUs")
        return value

    @field_validator("branch_memory", "disk_floor", "ray_memory", "max_patch_size")
    @classmethod
    def _size(cls, value: str | None) -> str | None:
        if value is not None:
            parse_size(value)
        return value

    def memory_cap(self) -> int:
        if self.branch_memory:
            return parse_size(self.branch_memory)
        import psutil

        return psutil.virtual_memory().total // 2 // self.parallel

    @field_validator("search_budget", mode="before")
    @classmethod
    def _search_budget(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str):
            raise ValueError(f"write it as text: {value}x for {value} times the suite's time, or {value}s for seconds")
        return parse_search_budget(value).text

    def search_budget_spec(self) -> SearchBudget | None:
        return parse_search_budget(self.search_budget) if self.search_budget else None

    @field_validator("criticality")
    @classmethod
    def _levels(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = set(value) - {"high", "medium", "low"}
        if unknown:
            raise ValueError(f"levels are high, medium and low (got {', '.join(sorted(unknown))})")
        return value

    @field_validator("target_pass_rate")
    @classmethod
    def _rate(cls, value: float) -> float:
        if not 0 <= value <= 100:
            raise ValueError("must be a percentage between 0 and 100")
        return value

    @field_validator("commit_reports")
    @classmethod
    def _reports(cls, value: bool, info: ValidationInfo) -> bool:
        if value and not info.data.get("reports_dir"):
            raise ValueError("it needs reports-dir, the folder for the reports (e.g. --reports-dir debug)")
        return value

    @field_validator("strategy")
    @classmethod
    def _strategy(cls, value: str) -> str:
        return value.strip().lower()


class SearchBudget(BaseModel):
    """A parsed `search-budget`: exactly one of factor (times the suite's time) and seconds."""

    model_config = ConfigDict(frozen=True)

    text: str
    """As the user would write it again (`10x`, `90s`)."""
    factor: float | None = None
    seconds: float | None = None


DURATION_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_SEARCH_BUDGET = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(x|s|m|h)")


def parse_search_budget(text: str) -> SearchBudget:
    """`10x` → 10 times the suite's time; `90s`, `5m`, `1h` → that many seconds."""
    raw = text.strip().lower().replace("×", "x")
    found = _SEARCH_BUDGET.fullmatch(raw)
    if found is None:
        raise ValueError(
            f"{text!r} is not a search budget: use a multiple of the suite's time such as 10x, "
            "or a duration such as 90s, 5m or 1h"
        )
    number, unit = float(found.group(1)), found.group(2)
    if number <= 0:
        raise ValueError("must be more than 0 (10x = ten times the suite's time, 90s = ninety seconds)")
    if unit == "x":
        return SearchBudget(text=f"{number:g}x", factor=number)
    return SearchBudget(text=f"{number:g}{unit}", seconds=number * DURATION_UNITS[unit])


def parse_size(text: str | int) -> int:
    """`512M`, `2G`, `1.5GiB`, `300000000` → bytes."""
    raw = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    try:
        value = float(raw[:-1]) * units[raw[-1]] if raw and raw[-1] in units else float(raw)
    except ValueError:
        raise ValueError(f"{text!r} is not a size (use e.g. 512M or 2G)") from None
    if value <= 0:
        raise ValueError("must be a positive size")
    return int(value)


def read_repo_config(root: Path) -> dict[str, Any]:
    """`[tool.explore]` of root/pyproject.toml with dashes turned into underscores."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc
    tool = data.get("tool", {})
    table = tool.get("explore", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        raise UsageError(f"[tool.explore] in {path} must be a table")
    return {key.replace("-", "_"): value for key, value in table.items()}


SANDBOX_ENV = "EXPLORE_SANDBOX"
"""auto | require | off: the sandbox mode for this run, over `[tool.explore] sandbox` (CI, a one-off run)."""


def build_options(root: Path, flags: dict[str, Any]) -> Options:
    """Defaults < `[tool.explore]` < $EXPLORE_SANDBOX < flags (None means the flag was not given)."""
    merged = read_repo_config(root)
    if os.environ.get(SANDBOX_ENV):
        merged["sandbox"] = os.environ[SANDBOX_ENV].strip().lower()
    given = {key: value for key, value in flags.items() if value is not None}
    merged.update(given)
    try:
        options = Options.model_validate(merged)
    except ValidationError as exc:
        raise UsageError(describe_validation(exc, root, _written_names(root), set(given))) from exc
    return options


def _written_names(root: Path) -> dict[str, str]:
    """Normalised key → the key as the user wrote it, to name it back the same way."""
    try:
        table = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("tool", {}).get("explore", {})
        return {key.replace("-", "_"): key for key in table}
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        return {}


def describe_validation(
    exc: ValidationError, root: Path, written: dict[str, str] | None = None, flags: set[str] | None = None
) -> str:
    """The first error, naming where the value came from: the flag, or the file, key and value."""
    first = exc.errors()[0]
    name = ".".join(str(part) for part in first["loc"]) or "(options)"
    key = (written or {}).get(name, name)
    if first["type"] == "extra_forbidden":
        allowed = ", ".join(sorted(name.replace("_", "-") for name in Options.model_fields))
        return f"unknown option {key!r} in [tool.explore] of {root / 'pyproject.toml'}; allowed keys: {allowed}"
    why = str(first["msg"]).removeprefix("Value error, ")
    value = first.get("input")
    if name.split(".")[0] in (flags or set()):
        return f"--{name.split('.')[0].replace('_', '-')} {value}: {why}"
    return f"{key} = {value!r} in [tool.explore] of {root / 'pyproject.toml'}: {why}"
