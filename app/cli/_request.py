"""A background run's request and its command line, both read off the click commands themselves, so
neither can drift from the CLI (docs/command-line.md#background-runs: a run records its request as
structured JSON; the command line a background process receives is derived from it).

    request = request_for("train", pool="mt", policy="random", rate=0.25, base="local:smollm2")
    command_line(request)   -> ["train", "--pool", "mt", "--policy", "random", "--rate", "0.25", ...]
    run_request(row)        -> the request a stored run records (or, for a run stored by an earlier
                               version as {"argv": [...]}, the one its command line says: legacy_request)

A request holds every parameter of the command but --db, as click parses it (defaults included);
its command line names only the options that differ from their defaults.
"""

from __future__ import annotations

import click

from ingest import UserError
from ingest.runs import RunRequest

from ._common import REQUEST_LEAVES_OUT, CommaList, request_of
from .align import align_cmd
from .distil import apply_cmd, distil_cmd
from .evaluate import evaluate_cmd
from .probes import probe_cmd
from .scoring import score_cmd
from .train import train_cmd

COMMANDS = {c.name: c for c in (score_cmd, probe_cmd, train_cmd, evaluate_cmd, align_cmd, distil_cmd,
                                 apply_cmd)}   # what the dashboard launches


def _command(name: str) -> click.Command:
    if name not in COMMANDS:
        raise UserError(f"{name!r} is not a command that runs in the background ({', '.join(COMMANDS)})")
    return COMMANDS[name]


def _words(option: click.Option, value) -> list[str]:
    """The words that give `option` this (plain JSON) value on a command line."""
    if option.is_flag:
        if option.secondary_opts:                    # --logprobs/--no-logprobs
            return [option.opts[0] if value else option.secondary_opts[0]]
        return [option.opts[0]] if value else []
    values = value if option.multiple else [value]
    if isinstance(option.type, CommaList):
        values = [",".join(map(str, v)) for v in values]
    return [word for v in values for word in (option.opts[0], str(v))]


def _options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if p.name not in REQUEST_LEAVES_OUT and isinstance(p, click.Option)]


def _arguments(command: click.Command) -> list[click.Argument]:
    """The command's positional arguments, in order; each one word (`apply DIR GLOB`)."""
    found = [p for p in command.params if isinstance(p, click.Argument)]
    if any(p.nargs != 1 for p in found):
        raise TypeError(f"judgeaudit {command.name}: a background command's arguments are one word each")
    return found


def _positional(command: click.Command, options: dict) -> list[str]:
    """The arguments' words after `--` (so that a value that starts with '-' stays a value)."""
    words = [str(options[a.name]) for a in _arguments(command) if options.get(a.name) is not None]
    return ["--", *words] if words else []


def defaults(command: str) -> dict:
    """Every option of the command at its default, as click's parser fills them in (required ones None)."""
    cmd = _command(command)
    return request_of(cmd, cmd.make_context(cmd.name, [], resilient_parsing=True).params).options


def command_line(request: RunRequest) -> list[str]:
    """The `judgeaudit` arguments (subcommand first) that ask for this request: each option that
    differs from its default, named and written as the command's own parameter expects (a flag
    alone or in its --no- form, a repeatable option once per value, a list joined by commas)."""
    cmd = _command(request.command)
    unset = defaults(request.command)
    argv = [cmd.name]
    for option in _options(cmd):
        value = request.options.get(option.name)
        if value is not None and value != unset.get(option.name) and value != []:
            argv += _words(option, value)
    return argv + _positional(cmd, request.options)


def _parsed(cmd: click.Command, argv: list[str]) -> RunRequest:
    ctx = cmd.make_context(cmd.name, list(argv))
    return request_of(cmd, ctx.params)


def request_for(command: str, **options) -> RunRequest:
    """The request of `judgeaudit COMMAND` with these options (click parameter names; None leaves
    one at its default), exactly as the command would parse them, the others at their defaults.
    UserError for a value the command refuses (e.g. not one of its choices)."""
    cmd = _command(command)
    known = {o.name: o for o in _options(cmd)}
    unknown = sorted(set(options) - set(known) - {a.name for a in _arguments(cmd)})
    if unknown:
        raise TypeError(f"judgeaudit {command}: no option {', '.join(unknown)}")
    argv = [w for name, value in options.items() if value is not None and name in known
            for w in _words(known[name], value)] + _positional(cmd, options)
    try:
        return _parsed(cmd, argv)
    except click.ClickException as exc:
        raise UserError(exc.format_message()) from None


def legacy_request(argv: list[str]) -> RunRequest | None:
    """The request of a command line that an earlier version stored as a run's config ({"argv":
    [...]}, subcommand first), read by the command's own click parser: the one place that reads
    flags of a stored run. None when it names no background command or does not parse."""
    words = [str(a) for a in argv or []]
    if not words or words[0] not in COMMANDS:
        return None
    try:
        return _parsed(COMMANDS[words[0]], words[1:])
    except click.ClickException:
        return None


def run_request(row: dict) -> RunRequest | None:
    """What a run (a row of ingest.runs.list_runs) was asked to do: the request its config records,
    or the one an earlier version's stored command line says; None for a run that recorded neither
    (read the fields its command recorded beside, e.g. `curation`)."""
    config = row.get("config") or {}
    return RunRequest.from_config(config) or legacy_request(config.get("argv"))
