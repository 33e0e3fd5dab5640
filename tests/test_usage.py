"""The usage model: model calls and mutate's counters apart, counters added, rates derived, the
flat form of state files and the JSON summary read and written alike."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from explore.generators.base import CandidateContext, FixGenerator, ProposalRequest
from explore.generators.chain import ChainGenerator
from explore.model.candidates import CandidatePlan, IterationRecord, Proposal, Realised
from explore.model.runstate import RunState
from explore.model.usage import LLMUsage, MutateUsage, Usage, unrecorded

CALL = {
    "input_tokens": 100,
    "output_tokens": 20,
    "cache_read_input_tokens": 300,
    "cache_creation_input_tokens": 0,
    "cost_usd": 0.0012,
    "calls": 1,
}


def test_counters_add_and_the_rate_is_derived_from_the_sums() -> None:
    first = Usage(mutate=MutateUsage(mutants_screened=100, screening_s=10.0, mutate_s=12.0))
    second = Usage(mutate=MutateUsage(mutants_screened=20, screening_s=10.0, mutate_s=11.0))
    total = first + second
    assert (total.mutate.mutants_screened, total.mutate.screening_s, total.mutate.mutate_s) == (120, 20.0, 23.0)
    assert total.mutate.mutants_per_s == 6.0  # 120 mutants in 20 s: neither 10 nor 2 (the parts' rates) nor their sum
    assert total.llm.empty


def test_model_calls_and_mutants_are_kept_apart() -> None:
    chained = Usage.of(CALL) + Usage(mutate=MutateUsage(mutants_screened=5, screening_s=1.0, mutate_s=2.0))
    assert chained.llm == LLMUsage(**CALL) and chained.mutate.mutants_screened == 5
    assert (chained + chained).llm.calls == 2 and (chained + chained).llm.cost_usd == pytest.approx(0.0024)
    assert chained.llm.tokens_in == 400
    assert (
        chained.text()
        == "$0.0012, 1 calls, 400 tokens in (300 cache reads), 20 out + 5 mutants screened (5/s), mutate 2.0s"
    )


def test_the_serialised_form_keeps_the_flat_key_names_and_reads_back() -> None:
    usage = Usage.of(CALL) + Usage(mutate=MutateUsage(mutants_screened=30, screening_s=4.0, mutate_s=5.0))
    flat = usage.model_dump()
    assert flat == {**CALL, "mutants_screened": 30, "screening_s": 4.0, "mutate_s": 5.0, "mutants_per_s": 7.5}
    assert Usage.model_validate(flat) == usage
    assert Usage.model_validate_json(usage.model_dump_json()) == usage
    assert (
        '"calls":1,' in usage.model_dump_json() and '"mutants_screened":30,' in usage.model_dump_json()
    )  # counts stay integers
    assert Usage().model_dump() == {} and Usage.of(CALL).model_dump() == CALL  # a part that spent nothing is left out


def test_a_state_file_written_with_the_old_usage_dict_still_loads() -> None:
    """Before the model: floats everywhere, the rate stored (and kept as the latest, never summed)."""
    old = {
        "run_id": "r1",
        "repo": "/x",
        "usage": {"mutants_screened": 120.0, "mutants_per_s": 12.5, "mutate_s": 14.2},
        "iterations": [
            {
                "n": 1,
                "strategy": "conservative",
                "usage": {**{k: float(v) for k, v in CALL.items()}},
                "candidates": [{"id": "a", "status": "ok", "usage": {"cost_usd": 0.0003, "calls": 1.0}}],
            }
        ],
    }
    run = RunState.model_validate(old)
    assert run.usage.mutate == MutateUsage(mutants_screened=120, screening_s=9.6, mutate_s=14.2)
    assert run.usage.mutate.mutants_per_s == 12.5
    assert run.iterations[0].usage.llm == LLMUsage(**CALL)
    assert run.iterations[0].candidates[0].usage.llm.calls == 1
    assert RunState.model_validate_json(run.model_dump_json()) == run


def test_an_unknown_usage_key_is_refused_by_name() -> None:
    with pytest.raises(ValidationError, match=r"unknown usage key.*tokens_total"):
        IterationRecord.model_validate({"n": 1, "strategy": "s", "usage": {"tokens_total": 3}})


def test_the_runs_total_keeps_calls_only_the_generator_saw() -> None:
    class Member(FixGenerator):
        """A generator that keeps its own run total (as anthropic and the named agents do)."""

        def __init__(self, name: str) -> None:
            self.name = name

        @property
        def usage(self) -> Usage:
            return Usage.of({**CALL, "calls": 3, "cost_usd": 0.01})

        async def propose(self, request: ProposalRequest) -> Proposal:
            raise NotImplementedError

        async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
            raise NotImplementedError

    run = RunState(
        run_id="r", repo="/x", usage=Usage.of(CALL) + Usage(mutate=MutateUsage(mutants_screened=7, screening_s=1.0))
    )
    run.usage = unrecorded(ChainGenerator([Member("one"), Member("two")]).usage, run.usage)
    assert run.usage.llm.calls == 6 and run.usage.llm.cost_usd == pytest.approx(0.02)
    assert run.usage.mutate.mutants_screened == 7  # the booked figure is larger: kept
