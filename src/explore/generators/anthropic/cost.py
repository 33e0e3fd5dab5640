"""Token accounting, dollar cost from a price table, and the run-wide budget.

One `Ledger` lives on the generator for the whole run, so `--budget-usd` / `--budget-tokens`
hold across iterations and across the N concurrent coders (in-flight calls reserve their
estimate, so concurrent calls cannot overshoot together)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...model.errors import BudgetExhausted

USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")

# Dollars per million tokens: input, output, 5-minute cache write, cache read.
# From the Claude pricing pages (2026); override or extend with [tool.explore.anthropic.prices].
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "claude-fable-5-2": {"input": 8.0, "output": 40.0, "cache_write": 10.0, "cache_read": 0.80},
    "claude-opus-5-5": {"input": 4.0, "output": 20.0, "cache_write": 5.0, "cache_read": 0.20},
    "claude-sonnet-5-5": {"input": 2.0, "output": 10.0, "cache_write": 2.50, "cache_read": 0.20},
    "claude-haiku-5-5": {"input": 0.10, "output": 0.50, "cache_write": 0.125, "cache_read": 0.01},
    "claude-opus-5": {"input": 5.0, "output": 25.0, "cache_write": 6.25, "cache_read": 0.50},
    "claude-sonnet-5": {"input": 2.0, "output": 10.0, "cache_write": 2.50, "cache_read": 0.20},
    "claude-haiku-4-5": {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_read": 0.10},
}


def price_for(model: str, prices: dict[str, dict[str, float]]) -> dict[str, float]:
    """The model's row; an unknown model is priced at the dearest row so a budget is never undercounted."""
    row = prices[model] if model in prices else max(prices.values(), key=lambda r: r.get("input", 0.0))
    inp = float(row.get("input", 0.0))
    return {
        "input": inp,
        "output": float(row.get("output", inp * 5)),
        "cache_write": float(row.get("cache_write", inp * 1.25)),
        "cache_read": float(row.get("cache_read", inp * 0.1)),
    }


def empty_usage() -> dict[str, float]:
    return {**{k: 0 for k in USAGE_KEYS}, "cost_usd": 0.0, "calls": 0}


def usage_of(response_usage: Any) -> dict[str, float]:
    """The four token counts of one API response (`anthropic.types.Usage`)."""
    return {k: int(getattr(response_usage, k, 0) or 0) for k in USAGE_KEYS}


def cost_of(model: str, tokens: dict[str, float], prices: dict[str, dict[str, float]]) -> float:
    row = price_for(model, prices)
    dollars = (
        tokens.get("input_tokens", 0) * row["input"]
        + tokens.get("output_tokens", 0) * row["output"]
        + tokens.get("cache_creation_input_tokens", 0) * row["cache_write"]
        + tokens.get("cache_read_input_tokens", 0) * row["cache_read"]
    )
    return dollars / 1_000_000


def total_tokens(usage: dict[str, float]) -> float:
    """What --budget-tokens counts: every token processed, cached or not."""
    return sum(usage.get(k, 0) for k in USAGE_KEYS)


def add(into: dict[str, float], other: dict[str, float]) -> dict[str, float]:
    for key, value in other.items():
        into[key] = into.get(key, 0) + value
    return into


@dataclass
class Ledger:
    """Run-wide totals and the budget check made before every call."""

    prices: dict[str, dict[str, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    budget_usd: float | None = None
    budget_tokens: int | None = None
    total: dict[str, float] = field(default_factory=empty_usage)
    reserved_usd: float = 0.0
    reserved_tokens: float = 0.0
    mean_output: float = 0.0
    recorded: int = 0
    """Calls recorded by this process (a resumed run's earlier calls are in `total` only)."""
    warm: set[str] = field(default_factory=set)
    """Cached prefixes already written (model + prefix hash): later calls read them."""

    def estimate(self, model: str, prompt_chars: int, cached_chars: int = 0, warm: bool = False) -> tuple[float, float]:
        """(dollars, tokens) a call will likely cost: ~4 characters a token for the prompt — its
        cached prefix priced as a cache read when warm, else as a cache write — and the mean
        output of earlier calls (1,000 tokens before any)."""
        fresh_in, cached_in = max(0, prompt_chars - cached_chars) / 4, cached_chars / 4
        tokens_out = self.mean_output if self.recorded else 1000.0
        row = price_for(model, self.prices)
        dollars = (
            fresh_in * row["input"]
            + cached_in * row["cache_read" if warm else "cache_write"]
            + tokens_out * row["output"]
        )
        return dollars / 1_000_000, fresh_in + cached_in + tokens_out

    def resume(self, spent: dict[str, float]) -> None:
        """Start from what earlier sessions of the run spent (its saved usage), so the budget spans them."""
        add(self.total, {k: spent[k] for k in (*USAGE_KEYS, "cost_usd", "calls") if k in spent})

    def reserve(self, model: str, prompt_chars: int, cached_chars: int = 0, warm: bool = False) -> tuple[float, float]:
        """Raise BudgetExhausted when the call would go over; otherwise hold its estimate."""
        dollars, tokens = self.estimate(model, prompt_chars, cached_chars, warm)
        spent_usd = self.total["cost_usd"] + self.reserved_usd
        spent_tokens = total_tokens(self.total) + self.reserved_tokens
        if self.budget_usd is not None and spent_usd + dollars > self.budget_usd:
            raise BudgetExhausted(
                f"${spent_usd:.4f} of --budget-usd {self.budget_usd:g} spent; the next call "
                f"(~${dollars:.4f}) would exceed it"
            )
        if self.budget_tokens is not None and spent_tokens + tokens > self.budget_tokens:
            raise BudgetExhausted(
                f"{int(spent_tokens)} of --budget-tokens {self.budget_tokens} used; the next call "
                f"(~{int(tokens)} tokens) would exceed it"
            )
        self.reserved_usd += dollars
        self.reserved_tokens += tokens
        return dollars, tokens

    def release(self, hold: tuple[float, float]) -> None:
        self.reserved_usd = max(0.0, self.reserved_usd - hold[0])
        self.reserved_tokens = max(0.0, self.reserved_tokens - hold[1])

    def record(self, model: str, tokens: dict[str, float]) -> dict[str, float]:
        """Account one finished call; returns its usage dict (tokens, cost_usd, calls=1)."""
        usage = {**tokens, "cost_usd": cost_of(model, tokens, self.prices), "calls": 1}
        self.mean_output = (self.mean_output * self.recorded + tokens.get("output_tokens", 0)) / (self.recorded + 1)
        self.recorded += 1
        add(self.total, usage)
        return usage
