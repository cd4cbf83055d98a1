"""One judge's calls with a per-call timeout and retries (exponential backoff with jitter, the
server's Retry-After honoured): what a scoring run and a downstream evaluation share. A judge with
several endpoints retries a failed attempt on another one at once (judges/openai_compat), and
raises EndpointsDown, past every retry, when none of them is up (_endpoints)."""

from __future__ import annotations

import asyncio
import random

from ._endpoints import EndpointsDown
from .formats import Format
from .judges import CallHints, JudgeError, JudgeSpec


def messages(fmt: Format, call: dict, texts: dict) -> list[dict]:
    prompt = texts["prompt"][call["prompt_idx"]]
    if fmt.template is None:      # a format of imported verdicts, asked of a distilled student alone
        return [{"role": "user", "content": f"{prompt}\n\n{texts['response'][call['a_idx']]}"}]
    if fmt.kind == "pointwise":
        content = fmt.render(prompt, response=texts["response"][call["a_idx"]])
    else:
        content = fmt.render(prompt, a=texts["response"][call["a_idx"]], b=texts["response"][call["b_idx"]])
    return [{"role": "user", "content": content}]


class Caller:
    """Makes calls of one judge: `req` gives the timeout, retries and backoff (a ScoreRequest),
    `settings` the decoding sent with every call."""

    def __init__(self, req, spec: JudgeSpec, formats: dict[str, Format], settings: dict):
        self.req, self.spec, self.formats = req, spec, formats
        self.settings = settings   # the decoding sent with every call, as recorded on the runs

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.req.retry_cap_s * 4)
        return min(self.req.retry_cap_s, self.req.retry_base_s * 2 ** attempt) * random.uniform(0.5, 1.5)

    async def call(self, judge, call: dict, texts: dict, hints: CallHints):
        """(reply, None, attempts) or (None, error, attempts): a call that still fails after the
        retries is an error to record, never an exception."""
        fmt = self.formats[call["format"]]
        chat = messages(fmt, call, texts)
        last_error = None
        # a strategy's verdict may take several calls
        limit = self.req.timeout * self.spec.settings.get("calls_per_verdict", 1)
        # several endpoints: an attempt may wait for a slot until a drained endpoint's cool-down ends
        waiting = 2 * self.spec.settings.get("cooldown_s", 0)
        for attempt in range(self.req.max_retries + 1):
            try:
                reply = await asyncio.wait_for(judge.complete(chat, self.settings, hints), timeout=limit + 5 + waiting)
                return reply, None, attempt + 1
            except EndpointsDown:
                raise                   # no call was made: the run stops, and this call stays to do
            except JudgeError as exc:
                last_error = str(exc)
                if not exc.retryable or attempt == self.req.max_retries:
                    return None, last_error, attempt + 1
                await asyncio.sleep(self.backoff(attempt, exc.retry_after))
            except asyncio.TimeoutError:
                last_error = f"timeout after {limit:.0f} s"
                if attempt == self.req.max_retries:
                    return None, last_error, attempt + 1
                await asyncio.sleep(self.backoff(attempt, None))
            except Exception as exc:  # a provider bug must become a recorded failure, not a gap
                return None, f"{type(exc).__name__}: {exc}", attempt + 1
        return None, last_error, self.req.max_retries + 1
