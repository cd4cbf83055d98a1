"""A judge SPEC string parsed into what to store about the judge and a factory of clients; each
provider's module is imported only when its client is made (torch only for `local:`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from ..._errors import UserError
from ._urls import public_endpoint
from .base import Judge


@dataclass
class JudgeSpec:
    """A parsed SPEC: what to store about the judge, and a factory for one client per worker."""
    name: str
    provider: str
    model: str | None
    endpoint: str | None
    settings: dict                      # stored with the judge; never holds a secret
    factory: Callable[[], Judge]
    shared: bool = False                # one instance for all workers (the in-process model)

    @property
    def endpoints(self) -> list[str]:
        """The public endpoints of an openai: judge, sorted (several for openai:MODEL@URL1,URL2,...:
        `endpoint` stores them joined by ','); [] for the others."""
        return self.endpoint.split(",") if self.provider == "openai" and self.endpoint else []


def _base_urls(base: str) -> list[str]:
    """The endpoints of openai:MODEL@URL1,URL2,...: each an http(s) URL, none twice."""
    urls = base.split(",")
    for url in urls:
        if not url.startswith(("http://", "https://")) or not urlsplit(url).hostname:
            shown = public_endpoint(url) if url.startswith(("http://", "https://")) else url
            raise UserError(f"--judge: {shown!r} is not an http(s) URL; several endpoints are "
                            "openai:MODEL@URL1,URL2,... (comma-separated, no spaces)")
    seen: dict[str, str] = {}
    for url in urls:
        if public_endpoint(url) in seen:
            raise UserError(f"--judge: the endpoint {public_endpoint(url)} is given twice")
        seen[public_endpoint(url)] = url
    return urls


def parse_judge(spec: str, formats: dict, name: str | None = None, api_key_env: str | None = None,
                timeout: float = 60.0, concurrency: int = 8, drain_after: int = 3,
                cooldown_s: float = 30.0) -> JudgeSpec:
    """`concurrency`, `drain_after` and `cooldown_s` apply to a judge with several endpoints:
    calls in flight per endpoint, failed attempts in a row that drain one, and its cool-down
    (ingest.scoring._endpoints)."""
    provider, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise UserError(f"--judge {spec!r}: expected openai:MODEL@BASE_URL, local:smollm2 or fake:NAME")
    if provider == "openai":
        cut = min((i for i in (rest.find("@http://"), rest.find("@https://")) if i >= 0), default=-1)
        model, base = (rest[:cut], rest[cut + 1:]) if cut >= 0 else (rest, "")
        if not model or not base:
            raise UserError("--judge: expected openai:MODEL@BASE_URL with an http(s) URL, e.g. "
                            "openai:my-model@http://localhost:8000/v1")

        if api_key_env and not os.environ.get(api_key_env):  # fail before any run is recorded
            raise UserError(f"--api-key-env: the environment variable {api_key_env} is not set")
        urls = _base_urls(base)
        if len(urls) > 1:
            return _pooled(model, urls, name, api_key_env, timeout, formats, concurrency, drain_after, cooldown_s)

        def make():
            from .openai_compat import OpenAIJudge
            return OpenAIJudge(model, base, name=name, api_key_env=api_key_env, timeout=timeout, formats=formats)
        return JudgeSpec(name or model, "openai", model, public_endpoint(base),
                         {"api_key_env": api_key_env, "timeout": timeout}, make)
    if provider == "local":
        if rest != "smollm2":
            raise UserError(f"--judge {spec!r}: the bundled local model is local:smollm2")

        def make_local():
            from .local import LocalJudge
            return LocalJudge(name=name or "smollm2", formats=formats)
        return JudgeSpec(name or "smollm2", "local", "SmolLM2-135M-Instruct.Q4_1.gguf", None, {},
                         make_local, shared=True)
    if provider == "fake":
        from .fake import FakeJudge, parse_fake_spec
        fake_name, params = parse_fake_spec(rest)
        return JudgeSpec(name or fake_name, "fake", f"fake-{fake_name}", None, params,
                         lambda: FakeJudge(name or fake_name, params, formats))
    raise UserError(f"--judge {spec!r}: unknown provider '{provider}' (openai, local, fake)")



def _pooled(model: str, urls: list[str], name: str | None, api_key_env: str | None, timeout: float,
            formats: dict, concurrency: int, drain_after: int, cooldown_s: float) -> JudgeSpec:
    """One judge over several endpoints: its identity's endpoint is the sorted set of their public
    forms (joined by ','), so the order they are given in does not matter; every worker's client
    shares one EndpointPool (made with the first client)."""
    urls = sorted(urls, key=public_endpoint)
    public = [public_endpoint(u) for u in urls]
    pool = []

    def make():
        from .._endpoints import EndpointPool
        from .openai_compat import PooledOpenAIJudge
        if not pool:
            pool.append(EndpointPool(public, concurrency, drain_after, cooldown_s))
        return PooledOpenAIJudge(model, urls, pool[0], name=name, endpoint=",".join(public),
                                 api_key_env=api_key_env, timeout=timeout, formats=formats)
    return JudgeSpec(name or model, "openai", model, ",".join(public),
                     {"api_key_env": api_key_env, "timeout": timeout, "drain_after": drain_after,
                      "cooldown_s": cooldown_s}, make)
