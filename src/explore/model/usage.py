"""Usage bookkeeping: what generators spent, per candidate, per iteration and per run.

Two kinds, typed and kept apart: model calls (`LLMUsage`: tokens, dollars, calls) and mutate's
search (`MutateUsage`: mutants screened, seconds). Counters add up; rates are derived from them,
never summed. Serialised flat, with the key names the JSON summary and state files have always
used (`cost_usd`, `calls`, `input_tokens`…, `mutants_screened`, `mutants_per_s`, `mutate_s`); that
flat form — also the dict generators hand over — is what `Usage` reads back."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_serializer, model_validator


class LLMUsage(BaseModel):
    """What model calls cost."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(**{k: getattr(self, k) + getattr(other, k) for k in LLMUsage.model_fields})

    @property
    def tokens_in(self) -> int:
        """Every input token, cached or not."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    @property
    def empty(self) -> bool:
        return not any(getattr(self, k) for k in LLMUsage.model_fields)


class MutateUsage(BaseModel):
    """What mutate's search did."""

    mutants_screened: int = 0
    screening_s: float = 0.0
    """Seconds the proposals spent after their coverage run (preparing and screening mutants)."""
    mutate_s: float = 0.0
    """Seconds of the whole proposals, coverage run included."""

    def __add__(self, other: MutateUsage) -> MutateUsage:
        return MutateUsage(
            mutants_screened=self.mutants_screened + other.mutants_screened,
            screening_s=round(self.screening_s + other.screening_s, 3),
            mutate_s=round(self.mutate_s + other.mutate_s, 3),
        )

    @property
    def mutants_per_s(self) -> float:
        """The screening rate, derived: mutants screened over the seconds they took."""
        return round(self.mutants_screened / self.screening_s, 2) if self.screening_s > 0 else 0.0

    @property
    def empty(self) -> bool:
        return not (self.mutants_screened or self.screening_s or self.mutate_s)


_LLM_KEYS = frozenset(LLMUsage.model_fields)
_MUTATE_KEYS = frozenset(MutateUsage.model_fields) | {"mutants_per_s"}


class Usage(BaseModel):
    """What a generator spent: its model calls and its mutant search, apart."""

    llm: LLMUsage = Field(default_factory=LLMUsage)
    mutate: MutateUsage = Field(default_factory=MutateUsage)

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        """The flat dict (state files, the JSON summary, what generators hand over): each key to
        its part; a rate is not kept but derived (an old `mutants_per_s` gives the seconds)."""
        if not isinstance(data, dict) or "llm" in data or "mutate" in data:
            return data
        unknown = set(data) - _LLM_KEYS - _MUTATE_KEYS
        if unknown:
            raise ValueError(
                f"unknown usage key(s) {', '.join(sorted(unknown))}: expected {', '.join(sorted(_LLM_KEYS | _MUTATE_KEYS))}"
            )
        mutate = {k: v for k, v in data.items() if k in _MUTATE_KEYS and k != "mutants_per_s"}
        rate = float(data.get("mutants_per_s") or 0)
        if "screening_s" not in mutate and rate > 0:  # written before screening_s was kept
            mutate["screening_s"] = round(float(data.get("mutants_screened") or 0) / rate, 3)
        return {"llm": {k: v for k, v in data.items() if k in _LLM_KEYS}, "mutate": mutate}

    @model_serializer
    def _to_flat(self) -> dict[str, int | float]:
        flat: dict[str, int | float] = {}
        if not self.llm.empty:
            flat.update(self.llm.model_dump())
        if not self.mutate.empty:
            flat.update(self.mutate.model_dump(), mutants_per_s=self.mutate.mutants_per_s)
        return flat

    @classmethod
    def of(cls, spent: Usage | dict[str, float] | None) -> Usage:
        """A generator's figure (a Usage, its flat dict, or none) as a Usage."""
        return spent if isinstance(spent, Usage) else cls.model_validate(spent or {})

    def __add__(self, other: Usage) -> Usage:
        return Usage(llm=self.llm + other.llm, mutate=self.mutate + other.mutate)

    @property
    def empty(self) -> bool:
        return self.llm.empty and self.mutate.empty

    def text(self) -> str:
        """Dollars, calls and tokens of the model calls; mutants screened and at what rate."""
        parts = []
        if not self.llm.empty:
            llm = self.llm
            parts.append(
                f"${llm.cost_usd:.4f}, {llm.calls} calls, {llm.tokens_in:,} tokens in "
                f"({llm.cache_read_input_tokens:,} cache reads), {llm.output_tokens:,} out"
            )
        if not self.mutate.empty:
            mutate = self.mutate
            parts.append(
                f"{mutate.mutants_screened} mutants screened ({mutate.mutants_per_s:g}/s), mutate {mutate.mutate_s:.1f}s"
            )
        return " + ".join(parts)

    def at_least(self, other: Usage) -> Usage:
        """Each counter the larger of the two."""
        return Usage(
            llm=LLMUsage(**{k: max(getattr(self.llm, k), getattr(other.llm, k)) for k in _LLM_KEYS}),
            mutate=MutateUsage(
                **{k: max(getattr(self.mutate, k), getattr(other.mutate, k)) for k in MutateUsage.model_fields}
            ),
        )


def unrecorded(total: Usage, booked: Usage) -> Usage:
    """Calls of candidates cancelled mid-conversation (Ctrl-C) are in the generator's own run total
    (`FixGenerator.usage`) only: the larger figure of the two, so a resumed run's budget counts them."""
    return booked.at_least(total)
