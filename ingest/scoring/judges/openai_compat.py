"""OpenAI chat-completions over httpx: vLLM, llama.cpp's server, Ollama, hosted APIs.

The API key is read from the environment variable whose *name* is given, sent as a Bearer token,
and kept nowhere else: not in settings, errors, logs or the database.
"""

from __future__ import annotations

import functools
import json
import ssl
import time

import httpx

from ..._errors import UserError
from ..._redact import redact
from . import _constraint
from .base import CallHints, JudgeError, JudgeReply
from ... import settings

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verified TLS context for all clients: loading the CA store costs ~50 ms per client."""
    return ssl.create_default_context()


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def request_body(model: str, messages: list[dict], settings: dict, labels: list[str] | None = None,
                 sample: int = 0) -> dict:
    """The chat-completions request of one call: what an online run posts and what a batch file
    holds (ingest.scoring._batch), built here once so the two cannot drift. `labels` are the
    format's (needed under constrained decoding); sample N sends the run's seed + N, so repeated
    samples at a temperature above 0 differ and each is reproducible."""
    body = {"model": model, "messages": messages,
            "temperature": settings.get("temperature", 0.0),
            "max_tokens": settings.get("max_tokens", 16)}
    if settings.get("logprobs"):
        body["logprobs"] = True
        body["top_logprobs"] = settings.get("top_logprobs", 20)
    if settings.get("seed") is not None:
        body["seed"] = settings["seed"] + sample
    constraint = settings.get("constraint") if settings.get("mode") == "constrained" else None
    if constraint is not None:
        body.update(_constraint.request_fields(constraint, list(labels or [])))
    return body


def reply_from_body(data: dict, constraint: dict | None, latency_ms: float | None = None,
                    endpoint: str | None = None) -> JudgeReply:
    """A chat-completions response body as a JudgeReply (KeyError, IndexError, TypeError or
    AttributeError when it is not one): the online answer's path and a batch result's."""
    choice = data["choices"][0]
    text = choice["message"].get("content") or ""
    if constraint is not None:
        text = _constraint.verdict_text(constraint, text)
    usage = data.get("usage") or {}
    top = tokens = None
    content = (choice.get("logprobs") or {}).get("content")
    if isinstance(content, list) and content:
        tokens = [item.get("token", "") for item in content]
        top = [{alt["token"]: alt["logprob"] for alt in (item.get("top_logprobs") or [])}
               or {item.get("token", ""): item.get("logprob", 0.0)} for item in content]
    return JudgeReply(text=text, model=data.get("model"), tokens_in=usage.get("prompt_tokens"),
                      tokens_out=usage.get("completion_tokens"), latency_ms=latency_ms,
                      tokens=tokens, top_logprobs=top, endpoint=endpoint, raw=data)


class OpenAIJudge:
    provider = "openai"

    def __init__(self, model: str, base_url: str, name: str | None = None,
                 api_key_env: str | None = None, timeout: float = 60.0,
                 client: httpx.AsyncClient | None = None, formats: dict | None = None):
        self.model = model
        self.formats = formats or {}   # format name -> Format: the labels of constrained decoding
        self.name = name or model
        self.endpoint = base_url.rstrip("/")
        self._url = self.endpoint + "/chat/completions"
        key = settings.api_key(api_key_env)
        if api_key_env and not key:
            raise UserError(f"--api-key-env: the environment variable {api_key_env} is not set")
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._secrets = (key,) if key else ()   # redacted from any error text, wherever it appears
        # one connection per client: httpx slows down as one client's pool grows, so the runner
        # gives every worker its own
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeout), verify=_ssl_context(),
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
        self._owns_client = client is None

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        constraint = settings.get("constraint") if settings.get("mode") == "constrained" else None
        labels = list(self.formats[hints.format_name].answer_values()) if constraint is not None else None
        body = request_body(self.model, messages, settings, labels, hints.sample)
        started = time.perf_counter()
        try:
            response = await self._client.post(self._url, json=body, headers=self._headers)
        except httpx.TimeoutException as exc:
            raise JudgeError(f"timeout: {type(exc).__name__}") from None
        except httpx.TransportError as exc:
            raise JudgeError(redact(f"transport error: {type(exc).__name__}: {exc}", self._secrets)) from None
        latency = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            # a server's error body may echo a key: redact before cutting, so no key is half-cut
            snippet = redact(response.text[:2000].replace("\n", " "), self._secrets)[:200]
            raise JudgeError(f"HTTP {response.status_code}: {snippet}",
                             retryable=response.status_code in RETRYABLE_STATUS,
                             retry_after=_retry_after(response))
        try:
            return reply_from_body(response.json(), constraint, latency, self.endpoint)
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
            body = redact(response.text[:2000], self._secrets)[:120]
            raise JudgeError(f"malformed response: {type(exc).__name__}: {body!r}") from None

    async def check_constraint(self, fmt, settings: dict) -> None:
        """One call under the run's constraint, before any call of the run: a UserError when the
        server refuses the constraint or ignores it (answers something other than a label)."""
        constraint = settings["constraint"]
        hints = CallHints(format_name=fmt.name, kind=fmt.kind, key="constraint-check")
        formats, self.formats = self.formats, {**self.formats, fmt.name: fmt}
        try:
            reply = await self.complete([{"role": "user", "content": _constraint.CHECK_PROMPT}],
                                        {**settings, "logprobs": False}, hints)
        except JudgeError as exc:    # its text is redacted already
            _constraint.check_reply(self.endpoint, constraint, fmt, error=str(exc))
            return
        finally:
            self.formats = formats
        _constraint.check_reply(self.endpoint, constraint, fmt, answer=reply.text)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


class MultiEndpointJudge:
    """One worker's judge over several endpoints of one model (`openai:MODEL@URL1,URL2,...`): each
    attempt goes to the endpoint the run's shared EndpointSet hands out (ingest.scoring._endpoints),
    through this worker's client for it (one per endpoint, made on first use). A failed attempt
    counts against its endpoint and, when another endpoint is up, is retried there at once; the
    reply names the endpoint that answered."""
    provider = "openai"

    def __init__(self, model: str, base_urls: list[str], pool, name: str | None = None, endpoint: str | None = None,
                 api_key_env: str | None = None, timeout: float = 60.0, formats: dict | None = None):
        self.model, self.name, self.pool = model, name or model, pool
        self.endpoint = endpoint            # the public set, as the judge is stored
        self.formats = formats or {}
        self._urls = list(base_urls)        # in the set's order
        self._options = {"name": name, "api_key_env": api_key_env, "timeout": timeout}
        self._clients: dict[int, OpenAIJudge] = {}
        self._avoid: tuple = (None, None)   # (call, endpoint that just failed it)

    def _client(self, i: int) -> OpenAIJudge:
        if i not in self._clients:
            self._clients[i] = OpenAIJudge(self.model, self._urls[i], formats=self.formats, **self._options)
        self._clients[i].formats = self.formats
        return self._clients[i]

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        call = (hints.key, hints.sample, hints.format_name)
        i = await self.pool.acquire(self._avoid[1] if self._avoid[0] == call else None)
        where = self.pool.health[i].url
        try:
            reply = await self._client(i).complete(messages, settings, hints)
        except JudgeError as exc:
            if not exc.retryable:               # the server answered, with a refusal: it is up
                self.pool.release(i, "refused")
                raise JudgeError(f"{where}: {exc}", retryable=False) from None
            self.pool.release(i, "failed", str(exc))
            self._avoid = (call, i)
            raise JudgeError(f"{where}: {exc}", retryable=True,
                             retry_after=0.0 if self.pool.elsewhere(i) else exc.retry_after) from None
        except BaseException:                   # cancelled: no answer in time
            self.pool.release(i, "failed", "no answer in time")
            self._avoid = (call, i)
            raise
        self.pool.release(i, "answered")
        return reply

    async def check_constraint(self, fmt, settings: dict) -> None:
        """The constraint check on every endpoint: each must honour it."""
        for url in self._urls:
            judge = OpenAIJudge(self.model, url, formats=self.formats, **self._options)
            try:
                await judge.check_constraint(fmt, settings)
            finally:
                await judge.aclose()

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()


class ChatModel:
    """A chat model behind an OpenAI-compatible endpoint, asked one prompt at a time for free text
    (align's reflection model under --optimizer gepa): `model(prompt) -> str`. Its API key comes from
    the environment variable whose name is given, and is kept nowhere else."""

    def __init__(self, model: str, base_url: str, api_key_env: str | None = None, max_tokens: int = 400,
                 temperature: float = 0.7, timeout: float = 120.0):
        key = settings.api_key(api_key_env)
        if api_key_env and not key:
            raise UserError(f"--reflection-api-key-env: the environment variable {api_key_env} is not set")
        self.model, self.endpoint = model, base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._secrets = (key,) if key else ()
        self._body = {"max_tokens": max_tokens, "temperature": temperature}
        self._timeout = timeout
        self.calls = 0

    def __call__(self, prompt: str | list[dict]) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        self.calls += 1
        try:
            response = httpx.post(self.endpoint + "/chat/completions", headers=self._headers, timeout=self._timeout,
                                  verify=_ssl_context(), json={"model": self.model, "messages": messages, **self._body})
        except httpx.HTTPError as exc:
            raise JudgeError(redact(f"reflection model: {type(exc).__name__}: {exc}", self._secrets)) from None
        if response.status_code != 200:
            snippet = redact(response.text[:2000].replace("\n", " "), self._secrets)[:200]
            raise JudgeError(f"reflection model: HTTP {response.status_code}: {snippet}")
        try:
            return response.json()["choices"][0]["message"].get("content") or ""
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError):
            raise JudgeError("reflection model: malformed response") from None
