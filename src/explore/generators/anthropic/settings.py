"""`[tool.explore.anthropic]`: models per role (first = preferred, the rest = fallback chain),
turn limits, retries, the context budget and the price table."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from ...model.errors import UsageError
from .cost import DEFAULT_PRICES


class Settings(BaseModel):
    debugger: list[str] = Field(default_factory=lambda: ["claude-opus-5-5", "claude-sonnet-5-5"])
    """Debugger models, strongest first: the rest are its fallback chain."""
    coder: list[str] = Field(default_factory=lambda: ["claude-sonnet-5-5", "claude-haiku-5-5"])
    """Coder models and their fallback chain."""
    token_budget: int = 50_000
    """Tokens of repair context shown to each conversation (failures, diff, code, history)."""
    max_turns: int = 20
    """Turns a coder may take before its candidate is judged as it stands."""
    debugger_max_turns: int = 12
    max_tokens: int = 8192
    """Output tokens per model turn."""
    max_retries: int = 3
    """Retries per model on 429 / 5xx / 408 / 409 / timeouts before the next model."""
    overloaded_fallback_after: int = 2
    """Consecutive 529 answers after which the next model is tried."""
    max_retry_after: float = 120.0
    """Longer `retry-after` waits fall back instead."""
    timeout: float = 600.0
    """Seconds per HTTP request."""
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Dollars per million tokens, per model: input, output, cache_write, cache_read (merged over the defaults)."""

    @field_validator("debugger", "coder", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def price_table(self) -> dict[str, dict[str, float]]:
        return {**DEFAULT_PRICES, **self.prices}


def load(options: dict[str, Any]) -> Settings:
    raw = dict(options.get("anthropic") or {})
    models = raw.pop("models", None)
    if isinstance(models, dict):  # also accept models = {debugger = [...], coder = [...]}
        raw.update({k: v for k, v in models.items() if k in ("debugger", "coder")})
    raw = {key.replace("-", "_"): value for key, value in raw.items()}
    try:
        settings = Settings.model_validate(raw)
    except ValueError as exc:
        raise UsageError(f"invalid [tool.explore.anthropic] settings: {exc}".splitlines()[0]) from exc
    if not settings.debugger or not settings.coder:
        raise UsageError("[tool.explore.anthropic]: debugger and coder need at least one model each")
    return settings
