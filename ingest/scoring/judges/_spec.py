"""A judge SPEC string parsed into what to store about the judge and a factory of clients; each
provider's module is imported only when its client is made (torch only for `local:`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit, urlunsplit

from ..._errors import UserError
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


def public_endpoint(url: str) -> str:
    """The endpoint as stored and shown: no credentials, query string or fragment, no final '/'."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def parse_judge(spec: str, formats: dict, name: str | None = None, api_key_env: str | None = None,
                timeout: float = 60.0) -> JudgeSpec:
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

