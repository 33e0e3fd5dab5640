"""One call to the Messages API, made robust: our own retries with backoff that honour
`retry-after` on 429/529/5xx/408/409 and timeouts, then the next model of the role's fallback
chain; 401/403 escalate at once. The SDK builds the client from the environment exactly as it
always does (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, …): we never pass a key or a URL.

Tests inject an `httpx2.AsyncClient(transport=MockTransport(handler))` through
`http_client_factory` — the only fake, under the real SDK."""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import anyio
import httpx2

from ...model.errors import Escalation
from ...model.runstate import EscalationCategory
from .cost import Ledger, usage_of

log = logging.getLogger("explore.generators.anthropic")

HttpClientFactory = Callable[[], httpx2.AsyncClient]
RETRYABLE_STATUS = {408, 409, 429}


class ModelFailed(Exception):
    """This model cannot serve the call (retries spent, overloaded, invalid output): try the next."""


class ChainExhausted(Exception):
    """Every model of the chain failed; `reasons` says why, per model."""

    def __init__(self, role: str, reasons: list[str], kinds: list[str]) -> None:
        super().__init__(f"{role}: every model failed — " + "; ".join(reasons))
        self.reasons = reasons
        self.api_only = all(kind == "api" for kind in kinds)
        """True when no model could be reached at all (an external-service problem)."""


@dataclass
class RetryPolicy:
    max_retries: int = 3
    """Retries per model on 429/5xx/408/409/timeouts before falling back."""
    overloaded_fallback_after: int = 2
    """Consecutive 529 (overloaded) answers after which the next model is tried at once."""
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    """A `retry-after` longer than this falls back instead of waiting."""
    timeout: float = 600.0


def retry_after(headers: httpx2.Headers | None) -> float | None:
    """Seconds the server asks us to wait (`retry-after-ms`, then `retry-after`)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


class ModelClient:
    """Makes calls for one generator; keeps no state between calls but the shared ledger."""

    def __init__(
        self, ledger: Ledger, policy: RetryPolicy, http_client_factory: HttpClientFactory | None = None
    ) -> None:
        self.ledger = ledger
        self.policy = policy
        self.http_client_factory = http_client_factory

    def open(self) -> anthropic.AsyncAnthropic:
        """A fresh SDK client per conversation (closed by `async with`), reading the environment itself."""
        kwargs: dict[str, Any] = {"max_retries": 0, "timeout": self.policy.timeout}
        if self.http_client_factory is not None:
            kwargs["http_client"] = self.http_client_factory()
        return anthropic.AsyncAnthropic(**kwargs)

    async def create(
        self, api: anthropic.AsyncAnthropic, model: str, params: dict[str, Any]
    ) -> tuple[Any, dict[str, float]]:
        """One model, with retries. Returns (message, usage) or raises ModelFailed / Escalation."""
        overloaded = 0
        attempt = 0
        prompt_chars = len(json.dumps(params, default=str))
        cached_chars, key = cached_prefix(model, params)
        while True:
            hold = self.ledger.reserve(model, prompt_chars, cached_chars, key in self.ledger.warm)
            try:
                message = await api.messages.create(model=model, **params)
            except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
                raise Escalation(
                    EscalationCategory.external_service,
                    f"The Anthropic API refused the request ({exc.status_code}): the key is missing, invalid "
                    "or lacks access to the model.",
                    "Check ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL when using a gateway), then "
                    "`explore resume`; or run with --agent mutate.",
                ) from None
            except anthropic.APIStatusError as exc:
                status = exc.status_code
                if status not in RETRYABLE_STATUS and status < 500:
                    raise ModelFailed(f"{model}: HTTP {status}: {_short(exc)}") from None
                overloaded = overloaded + 1 if status == 529 else 0
                if overloaded >= self.policy.overloaded_fallback_after:
                    raise ModelFailed(f"{model}: overloaded (529) {overloaded} times") from None
                delay = self._delay(attempt, exc.response.headers, f"{model}: HTTP {status}")
            except anthropic.APIConnectionError as exc:  # includes APITimeoutError
                overloaded = 0
                delay = self._delay(attempt, None, f"{model}: {type(exc).__name__}")
            else:
                usage = self.ledger.record(model, usage_of(message.usage))
                if cached_chars:
                    self.ledger.warm.add(key)
                return message, usage
            finally:
                self.ledger.release(hold)
            attempt += 1
            log.info("retrying %s in %.2fs (attempt %d)", model, delay, attempt + 1)
            await anyio.sleep(delay)

    def _delay(self, attempt: int, headers: httpx2.Headers | None, what: str) -> float:
        if attempt >= self.policy.max_retries:
            raise ModelFailed(f"{what} after {attempt + 1} attempts")
        asked = retry_after(headers)
        if asked is not None:
            if asked > self.policy.max_retry_after:
                raise ModelFailed(f"{what}: retry-after {asked:g}s is too long")
            return asked
        backoff = min(self.policy.base_delay * 2.0**attempt, self.policy.max_delay)
        return backoff * (1 - 0.25 * random.random())


def cached_prefix(model: str, params: dict[str, Any]) -> tuple[int, str]:
    """Characters up to the last cache_control block (tools, system, then messages), and its key."""
    parts = [json.dumps(params.get("tools"), default=str), json.dumps(params.get("system"), default=str)]
    cached = 0
    for message in params.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            parts.append(json.dumps(block, default=str))
            if isinstance(block, dict) and block.get("cache_control"):
                cached = len(parts)
    if not cached:
        return 0, ""
    prefix = "".join(parts[:cached])
    return len(prefix), hashlib.sha256((model + prefix).encode()).hexdigest()


def _short(exc: anthropic.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return str(message or exc.message)[:300]


def strip_thinking(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Thinking blocks are bound to the model that wrote them: drop them when another model takes over."""
    out = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and isinstance(content, list):
            content = [b for b in content if b.get("type") not in ("thinking", "redacted_thinking")]
        out.append({**message, "content": content})
    return out
