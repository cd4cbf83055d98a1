"""What every judge provider offers: one async call from chat messages to a JudgeReply."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class JudgeReply:
    text: str
    model: str | None = None                 # the model id the provider reported
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    tokens: list[str] | None = None                      # the generated tokens, where reported
    top_logprobs: list[dict[str, float]] | None = None   # per generated token: token -> logprob
    answer_probs: dict[str, float] | None = None          # set by providers that score labels directly
    endpoint: str | None = None              # the server that answered, as the client was given it
                                             # (stored through public_endpoint: no credentials)
    raw: dict | None = field(default=None, repr=False)


class JudgeError(Exception):
    """A failed call. `retryable` errors are retried by the runner; `retry_after` (seconds) is the
    server's own wish (HTTP 429 / 503 Retry-After)."""

    def __init__(self, message: str, retryable: bool = True, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass
class CallHints:
    """Facts about a call that only a simulated judge may look at (never sent to real judges)."""
    format_name: str = ""
    kind: str = "pointwise"
    reference_a: float | None = None
    reference_b: float | None = None
    key: str = ""                            # a stable id of the call, for deterministic fakes
    sample: int = 0                          # which of the call's repeated samples (--samples)
    texts: dict | None = None                # {"prompt", "a", "b"}: for strategy wrappers that re-render the call


class Judge(Protocol):
    name: str            # the judge's name in the store
    provider: str        # 'openai' | 'local' | 'fake' | 'distilled'
    model: str | None
    endpoint: str | None

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply: ...

    async def aclose(self) -> None: ...
