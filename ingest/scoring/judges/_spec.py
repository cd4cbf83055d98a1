"""A judge SPEC string parsed into what to store about the judge and a factory of clients; each
provider's module is imported only when its client is made (torch only for `local:`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from ..._errors import UserError
from .._endpoints import EndpointSet
from ._urls import public_endpoint
from .base import Judge
from ... import settings


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


@dataclass(frozen=True)
class JudgeOptions:
    """What a SPEC string leaves to the command line: the stored name, the API key's variable, the
    timeout, and for a judge with several endpoints its calls in flight per endpoint, the failed
    attempts in a row that drain one, and its cool-down (ingest.scoring._endpoints)."""
    formats: dict
    name: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    concurrency: int = 8
    drain_after: int = 3
    cooldown_s: float = 30.0


def _openai(rest: str, opts: JudgeOptions) -> JudgeSpec:
    """openai:MODEL@BASE_URL[,URL2,...]: any OpenAI-compatible chat-completions server (or several)."""
    cut = min((i for i in (rest.find("@http://"), rest.find("@https://")) if i >= 0), default=-1)
    model, base = (rest[:cut], rest[cut + 1:]) if cut >= 0 else (rest, "")
    if not model or not base:
        raise UserError("--judge: expected openai:MODEL@BASE_URL with an http(s) URL, e.g. "
                        "openai:my-model@http://localhost:8000/v1")
    if opts.api_key_env and not settings.api_key(opts.api_key_env):  # fail before any run is recorded
        raise UserError(f"--api-key-env: the environment variable {opts.api_key_env} is not set")
    urls = _base_urls(base)
    if len(urls) > 1:
        return _several_endpoints(model, urls, opts)

    def make():
        from .openai_compat import OpenAIJudge
        return OpenAIJudge(model, base, name=opts.name, api_key_env=opts.api_key_env, timeout=opts.timeout,
                           formats=opts.formats)
    return JudgeSpec(opts.name or model, "openai", model, public_endpoint(base),
                     {"api_key_env": opts.api_key_env, "timeout": opts.timeout}, make)


def _local(rest: str, opts: JudgeOptions) -> JudgeSpec:
    """local:smollm2: the bundled SmolLM2-135M-Instruct GGUF, in-process (torch loads on first use)."""
    if rest != "smollm2":
        raise UserError(f"--judge 'local:{rest}': the bundled local model is local:smollm2")

    def make():
        from .local import LocalJudge
        return LocalJudge(name=opts.name or "smollm2", formats=opts.formats)
    return JudgeSpec(opts.name or "smollm2", "local", "SmolLM2-135M-Instruct.Q4_1.gguf", None, {}, make, shared=True)


def _fake(rest: str, opts: JudgeOptions) -> JudgeSpec:
    """fake:NAME[?noise=&slot_bias=&...]: a deterministic simulated judge."""
    from .fake import FakeJudge, parse_fake_spec
    fake_name, params = parse_fake_spec(rest)
    name = opts.name or fake_name
    return JudgeSpec(name, "fake", f"fake-{fake_name}", None, params, lambda: FakeJudge(name, params, opts.formats))


def _distilled(rest: str, opts: JudgeOptions) -> JudgeSpec:
    """distilled:DIR: a classifier `judgeaudit distil` wrote; its identity binds the model files' hash."""
    from .distilled import DistilledJudge, Student
    student = Student.load(rest)
    if set(opts.formats) != {student.format_name}:
        raise UserError(f"--judge distilled:{rest}: the student answers the format {student.format_name!r} alone; "
                        f"score it with --formats {student.format_name}")
    name = opts.name or f"distilled-{student.sha256[:12]}"
    return JudgeSpec(name, "distilled", f"distilled-{student.sha256[:16]}", None,
                     {"sha256": student.sha256, "teacher": student.spec.get("teacher")},
                     lambda: DistilledJudge(name, student), shared=True)


# The providers by SPEC prefix: one small factory each, whose client module is imported only when a
# client is made (inspect_ai's model/_providers/providers.py). A new provider is one entry here.
PROVIDERS: dict[str, Callable[[str, JudgeOptions], JudgeSpec]] = {
    "openai": _openai,
    "local": _local,
    "fake": _fake,
    "distilled": _distilled,
}


def parse_judge(spec: str, formats: dict, name: str | None = None, api_key_env: str | None = None,
                timeout: float = 60.0, concurrency: int = 8, drain_after: int = 3,
                cooldown_s: float = 30.0) -> JudgeSpec:
    """The judge a SPEC string names (PROVIDER:REST), built by its provider's factory. `concurrency`,
    `drain_after` and `cooldown_s` apply to a judge with several endpoints (JudgeOptions)."""
    provider, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise UserError(f"--judge {spec!r}: expected PROVIDER:..., one of " + ", ".join(_EXAMPLES))
    factory = PROVIDERS.get(provider)
    if factory is None:
        raise UserError(f"--judge {spec!r}: unknown provider '{provider}' (known: {', '.join(sorted(PROVIDERS))})")
    return factory(rest, JudgeOptions(formats, name, api_key_env, timeout, concurrency, drain_after, cooldown_s))


_EXAMPLES = ("openai:MODEL@BASE_URL", "local:smollm2", "fake:NAME", "distilled:DIR")


def _several_endpoints(model: str, urls: list[str], opts: JudgeOptions) -> JudgeSpec:
    """One judge over several endpoints: its identity's endpoint is the sorted set of their public
    forms (joined by ','), so the order they are given in does not matter; every worker's client
    shares one EndpointSet (made with the first client)."""
    urls = sorted(urls, key=public_endpoint)
    public = [public_endpoint(u) for u in urls]
    shared = []

    def make():
        from .openai_compat import MultiEndpointJudge
        if not shared:
            shared.append(EndpointSet(public, opts.concurrency, opts.drain_after, opts.cooldown_s))
        return MultiEndpointJudge(model, urls, shared[0], name=opts.name, endpoint=",".join(public),
                                 api_key_env=opts.api_key_env, timeout=opts.timeout, formats=opts.formats)
    return JudgeSpec(opts.name or model, "openai", model, ",".join(public),
                     {"api_key_env": opts.api_key_env, "timeout": opts.timeout, "drain_after": opts.drain_after,
                      "cooldown_s": opts.cooldown_s}, make)
