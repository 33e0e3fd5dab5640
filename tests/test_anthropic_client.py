"""Retries, fallback, 401/403, budget and cost accounting — the real SDK over a scripted transport."""

from __future__ import annotations

import time

import httpx2
import pytest

from explore.generators.anthropic.client import ChainExhausted, ModelClient, RetryPolicy, retry_after
from explore.generators.anthropic.cost import DEFAULT_PRICES, Ledger, cost_of
from explore.generators.anthropic.scripted import Failure, ScriptedAPI
from explore.generators.anthropic.session import Session, Transcript
from explore.model.errors import BudgetExhausted, Escalation

KEY = "sk-ant-test-0123456789-SECRET"
PARAMS = {"max_tokens": 100, "system": "s", "tools": [{"name": "finish", "input_schema": {"type": "object"}}]}
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def make(api: ScriptedAPI, ledger: Ledger | None = None, **policy: float) -> ModelClient:
    settings = {"base_delay": 0.001, **policy}
    return ModelClient(
        ledger or Ledger(), RetryPolicy(**settings), lambda: httpx2.AsyncClient(transport=api.transport())
    )


async def session_turn(client: ModelClient, chain: list[str]) -> tuple[Session, object]:
    async with client.open() as sdk:
        session = Session(client, sdk, "coder", chain, PARAMS, Transcript(None))
        return session, await session.turn(list(MESSAGES))


@pytest.mark.anyio
async def test_429_retry_after_is_honoured_then_success() -> None:
    api = ScriptedAPI(coder=["ok"], failures=[Failure(429, {"retry-after": "0.2"})])
    start = time.monotonic()
    session, message = await session_turn(make(api), ["m1", "m2"])
    assert time.monotonic() - start >= 0.2
    assert [r["model"] for r in api.requests] == ["m1", "m1"]
    assert session.model == "m1" and session.usage["calls"] == 1
    sent = api.requests[0]["headers"]  # the SDK read the key from the environment, and sends it as it wants
    assert KEY in sent.get("x-api-key", "") + sent.get("authorization", "")


@pytest.mark.anyio
async def test_529_twice_falls_back_to_the_next_model() -> None:
    api = ScriptedAPI(
        coder=["ok"], failures=[Failure(529, {"retry-after": "0.01"}), Failure(529, {"retry-after": "0.01"})]
    )
    session, _ = await session_turn(make(api), ["m1", "m2"])
    assert [r["model"] for r in api.requests] == ["m1", "m1", "m2"]
    assert session.model == "m2" and "overloaded" in session.failures[0]


@pytest.mark.anyio
async def test_5xx_retries_are_bounded_then_chain_exhausted() -> None:
    api = ScriptedAPI(coder=["ok"], failures=[Failure(500, {"retry-after": "0.01"}) for _ in range(10)])
    with pytest.raises(ChainExhausted) as info:
        await session_turn(make(api, max_retries=1), ["m1", "m2"])
    assert [r["model"] for r in api.requests] == ["m1", "m1", "m2", "m2"]
    assert info.value.api_only


@pytest.mark.anyio
@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_escalate_without_retry(status: int) -> None:
    api = ScriptedAPI(coder=["ok"], failures=[Failure(status)])
    with pytest.raises(Escalation) as info:
        await session_turn(make(api), ["m1", "m2"])
    assert info.value.category == "external_service" and len(api.requests) == 1
    assert KEY not in str(info.value) + info.value.suggested_action


@pytest.mark.anyio
@pytest.mark.parametrize(
    "error", [httpx2.ConnectError("refused"), httpx2.ReadTimeout("timed out")], ids=["refused", "timeout"]
)
async def test_connection_errors_and_timeouts_are_retried(error: Exception) -> None:
    calls = []
    api = ScriptedAPI(coder=["ok"])

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return api.handle_httpx(request)

    client = ModelClient(
        Ledger(), RetryPolicy(base_delay=0.001), lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    )
    session, _ = await session_turn(client, ["m1"])
    assert len(calls) == 2 and session.usage["calls"] == 1


def test_retry_after_parsing() -> None:
    assert retry_after(httpx2.Headers({"retry-after-ms": "250"})) == 0.25
    assert retry_after(httpx2.Headers({"retry-after": "2"})) == 2.0
    assert retry_after(httpx2.Headers({})) is None


@pytest.mark.anyio
async def test_cost_accounting_matches_token_counts() -> None:
    api = ScriptedAPI(coder=["ok", "ok"])
    ledger = Ledger()
    session, message = await session_turn(make(api, ledger), ["claude-sonnet-5-5"])
    usage = message.usage
    tokens = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens or 0,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens or 0,
    }
    expected = (tokens["input_tokens"] * 2.0 + tokens["output_tokens"] * 10.0) / 1e6
    assert session.usage["cost_usd"] == pytest.approx(expected)
    assert ledger.total["input_tokens"] == usage.input_tokens and ledger.total["calls"] == 1


def test_cost_of_cache_and_unknown_model() -> None:
    tokens = {
        "input_tokens": 1_000_000,
        "output_tokens": 0,
        "cache_read_input_tokens": 1_000_000,
        "cache_creation_input_tokens": 1_000_000,
    }
    assert cost_of("claude-opus-5-5", tokens, DEFAULT_PRICES) == pytest.approx(4.0 + 0.2 + 5.0)
    # an unknown model is priced at the dearest row: a budget is never undercounted
    assert cost_of("claude-unknown", {"input_tokens": 1_000_000}, DEFAULT_PRICES) == pytest.approx(8.0)


@pytest.mark.anyio
async def test_budget_stops_before_a_call_that_would_exceed_it() -> None:
    api = ScriptedAPI(coder=["ok"])
    ledger = Ledger(budget_usd=1e-9)
    with pytest.raises(BudgetExhausted, match="budget-usd"):
        await session_turn(make(api, ledger), ["claude-sonnet-5-5"])
    assert api.requests == []
    tokens = Ledger(budget_tokens=10)
    with pytest.raises(BudgetExhausted, match="budget-tokens"):
        await session_turn(make(api, tokens), ["claude-sonnet-5-5"])


def test_concurrent_reservations_count_against_the_budget() -> None:
    ledger = Ledger(budget_usd=0.05)
    holds = []
    with pytest.raises(BudgetExhausted):
        for _ in range(100):
            holds.append(ledger.reserve("claude-opus-5-5", 4000))
    assert 0 < len(holds) < 100
    for hold in holds:
        ledger.release(hold)
    assert ledger.reserved_usd == pytest.approx(0.0)
