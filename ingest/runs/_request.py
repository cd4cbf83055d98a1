"""A run's request: the `judgeaudit` subcommand and its options, as structured JSON
(docs/command-line.md#background-runs). It is the run's `config`; the command line a launched process
receives is derived from it by the CLI, off its commands' own parameters, and nothing parses flags back
out of a stored command line.

    RunRequest("train", {"pool": "mt", "policy": "judge", "judge": "sim", "fmt": "likert5", ...})
    .to_config()  ->  {"command": "train", "options": {...}}

`options` are keyed by the click parameter's name (`fmt` for --format), every value plain JSON, and
never a secret: an API key is named by its variable (`api_key_env`). What a command resolves on its
own (the judge's provider and model, a subset's record, ...) is stored beside them in the config,
each under its own key, never in place of `command` or `options`.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator

REQUEST_KEYS = ("command", "options")


@dataclass(frozen=True)
class RunRequest:
    command: str                                        # a judgeaudit subcommand: score, probe, train, evaluate
    options: dict[str, Any] = field(default_factory=dict)   # click parameter name -> plain JSON value

    def get(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value

    def to_config(self) -> dict:
        return {"command": self.command, "options": dict(self.options)}

    @classmethod
    def from_config(cls, config: dict | None) -> RunRequest | None:
        """The request a run's config records; None for a config without one (a run recorded by an
        earlier version: the CLI's one legacy adapter reads those)."""
        if not config or not isinstance(config.get("command"), str):
            return None
        return cls(config["command"], dict(config.get("options") or {}))


_ASKED: ContextVar[RunRequest | None] = ContextVar("judgeaudit_run_request", default=None)


@contextlib.contextmanager
def asked(request: RunRequest) -> Iterator[RunRequest]:
    """The request of the command this process is doing (the CLI sets it from click's parsed
    parameters): `running()` inside records it as the run's config."""
    token = _ASKED.set(request)
    try:
        yield request
    finally:
        _ASKED.reset(token)


def current_request() -> RunRequest | None:
    return _ASKED.get()
