"""Label-constrained decoding on OpenAI-compatible servers, by the server's own mechanism.

Each mechanism restricts the verdict to the format's labels with one request field:
    structured_outputs  vLLM >= 0.10.2: {"structured_outputs": {"choice": [labels]}}
    guided_choice       vLLM before 0.12: {"guided_choice": [labels]}
    grammar             llama.cpp's server and llama-cpp-python's: {"grammar": GBNF of the labels}
    json_schema         llama.cpp's server: {"json_schema": an object whose "verdict" is an enum}
    response_format     OpenAI structured outputs: {"response_format": {"type": "json_schema", ...}}
The JSON mechanisms answer `{"verdict": LABEL}`: the label is read from it (the reply's raw JSON
is the answer's only other content). A server that does not know a field may reject the request
or silently ignore it; `check_reply` tells both apart from a constrained answer.
"""

from __future__ import annotations

import asyncio
import json

from ..._errors import UserError
from ._urls import public_endpoint

MECHANISMS = {
    "structured_outputs": "vLLM >= 0.10.2 (structured_outputs.choice)",
    "guided_choice": "vLLM before 0.12 (guided_choice)",
    "grammar": "llama.cpp server or llama-cpp-python server (GBNF grammar)",
    "json_schema": "llama.cpp server (json_schema field)",
    "response_format": "OpenAI structured outputs (response_format json_schema with an enum)",
}
DEFAULT = "response_format"
JSON_MECHANISMS = ("json_schema", "response_format")
JSON_MAX_TOKENS = 32      # '{"verdict": "100"}' and its whitespace need more than a bare label's 16
CHECK_PROMPT = "Reply with the single word hello, and nothing else."


def settings_for(mechanism: str | None) -> dict:
    """What a run records about the mechanism (no labels: they are the format's, recorded with it)."""
    mechanism = mechanism or DEFAULT
    if mechanism not in MECHANISMS:
        raise UserError(f"--constraint: one of {', '.join(MECHANISMS)}, not {mechanism!r}")
    out = {"mechanism": mechanism, "server": MECHANISMS[mechanism],
           "restricts_to": "the format's labels (a range's integers as strings)"}
    if mechanism in JSON_MECHANISMS:
        out.update(answer='{"verdict": LABEL}, the label read from it', max_tokens=JSON_MAX_TOKENS)
    return out


def _gbnf_literal(label: str) -> str:
    return '"' + label.replace("\\", "\\\\").replace('"', '\\"') + '"'


def grammar(labels: list[str]) -> str:
    """A GBNF grammar whose only sentences are the labels."""
    return "root ::= " + " | ".join(_gbnf_literal(label) for label in labels)


def schema(labels: list[str]) -> dict:
    return {"type": "object", "properties": {"verdict": {"type": "string", "enum": labels}},
            "required": ["verdict"], "additionalProperties": False}


def request_fields(constraint: dict, labels: list[str]) -> dict:
    """The fields to merge into a chat-completions body."""
    mechanism = constraint.get("mechanism", DEFAULT)
    if mechanism == "structured_outputs":
        return {"structured_outputs": {"choice": labels}}
    if mechanism == "guided_choice":
        return {"guided_choice": labels}
    if mechanism == "grammar":
        return {"grammar": grammar(labels)}
    if mechanism == "json_schema":
        return {"json_schema": schema(labels), "max_tokens": JSON_MAX_TOKENS}
    if mechanism == "response_format":
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "verdict", "strict": True, "schema": schema(labels)}},
                "max_tokens": JSON_MAX_TOKENS}
    raise ValueError(f"unknown constraint mechanism {mechanism!r}")


def verdict_text(constraint: dict, text: str) -> str:
    """The verdict in a constrained answer: the text itself, or the JSON answer's "verdict"."""
    if constraint.get("mechanism", DEFAULT) not in JSON_MECHANISMS:
        return text
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text
    return value["verdict"] if isinstance(value, dict) and isinstance(value.get("verdict"), str) else text


def check_reply(endpoint: str, constraint: dict, fmt, error: str | None = None, answer: str | None = None) -> None:
    """Raise a UserError unless the check call came back constrained to the format's labels.

    error: the failed call's message (already redacted; 'HTTP 400: ...' when the server answered
    with an error); answer: otherwise, the verdict read from the answer."""
    mechanism = constraint.get("mechanism", DEFAULT)
    endpoint = public_endpoint(endpoint)         # a message never carries the URL's credentials
    advice = (f"no call of the run was made. Try --constraint with one of "
              f"{', '.join(m for m in MECHANISMS if m != mechanism)}, or --decoding greedy.")
    if error is not None and error.startswith("HTTP "):
        raise UserError(f"--decoding constrained: the server at {endpoint} refused the '{mechanism}' "
                        f"constraint ({error}); {advice}")
    if error is not None:
        raise UserError(f"--decoding constrained: the check call to {endpoint} failed ({error}); "
                        "no call of the run was made.")
    if fmt.parse(answer).answer is None:
        raise UserError(f"--decoding constrained: the server at {endpoint} accepted the '{mechanism}' "
                        f"constraint but ignored it (asked to say hello under format '{fmt.name}', it "
                        f"answered {(answer or '')[:60]!r}, not one of its labels); {advice}")


def check_server(spec, fmt, settings: dict) -> None:
    """Make the one check call of a constrained run (OpenAIJudge.check_constraint) with a client of
    its own; a UserError when the server refuses or ignores the constraint."""
    async def run() -> None:
        judge = spec.factory()
        base = judge
        while not hasattr(base, "check_constraint") and hasattr(base, "base"):   # a strategy wrapper
            base = base.base
        try:
            await base.check_constraint(fmt, settings)
        finally:
            await judge.aclose()
    asyncio.run(run())
