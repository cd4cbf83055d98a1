"""`judgeaudit align`: a judge's instructions and demonstrations chosen on the human labels, as a
background run (docs/command-line.md#judgeaudit-align)."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import db_option, emit_json, json_option, run_command


@click.command("align")
@click.option("--pool", required=True)
@click.option("--judge", required=True, help="the judge's name in the database (a judge that was scored)")
@click.option("--format", "fmt", required=True, help="the format whose instructions and demonstrations are searched")
@click.option("--decoding", type=click.Choice(["greedy", "constrained"]), default="greedy", show_default=True)
@click.option("--constraint", default=None,
              help="with --decoding constrained and an openai: judge, the server's mechanism (grammar for llama.cpp, "
                   "structured_outputs for vLLM, response_format by default)")
@click.option("--demonstrations", default=2, show_default=True, help="K demonstrations from human-labelled items")
@click.option("--budget", default=200, show_default=True, help="judge calls the search may make")
@click.option("--held-out", default=0.3, show_default=True,
              help="share of the labelled prompts (besides the pool's held-out ones) kept out of the search")
@click.option("--instructions", "instructions_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="TOML with [[instructions]] tables (name, text): wordings to try beside the built-in one")
@click.option("--optimizer", type=click.Choice(["search", "gepa"]), default="search", show_default=True,
              help="search: the built-in search; gepa: GEPA evolves the wording first, with --reflection as its "
                   "reflection model (the optional extra: pip install 'judgeaudit[gepa]')")
@click.option("--reflection", default=None, help="with --optimizer gepa: the reflection model, openai:MODEL@BASE_URL")
@click.option("--reflection-max-tokens", default=1000, show_default=True,
              help="the most tokens the reflection model may answer a call")
@click.option("--reflection-api-key-env", default=None,
              help="the environment variable holding the reflection model's API key (the key is never stored)")
@click.option("--seed", default=0, show_default=True)
@click.option("--api-key-env", default=None, help="for an openai: judge, the variable holding its API key")
@click.option("--concurrency", default=4, show_default=True, help="calls in flight")
@db_option
@json_option
@run_command
def align_cmd(pool, judge, fmt, decoding, constraint, demonstrations, budget, held_out, instructions_file, optimizer,
              reflection, reflection_max_tokens, reflection_api_key_env, seed, api_key_env, concurrency, db, as_json):
    """Choose a judge's instructions and demonstrations on the human labels; store the winner as a judge."""
    from train import align
    doc = align(db, pool, judge, fmt, decoding=decoding, demonstrations=demonstrations, budget=budget,
                held_out=held_out, instructions_file=instructions_file, optimizer=optimizer, seed=seed,
                api_key_env=api_key_env, concurrency=concurrency, constraint=constraint, reflection=reflection,
                reflection_api_key_env=reflection_api_key_env, reflection_max_tokens=reflection_max_tokens)
    if as_json:
        emit_json(doc)
        return
    b, a, g = doc["before"], doc["after"], doc["gain"]
    click.echo(f"held-out agreement {b['value']:.3f} -> {a['value']:.3f} on {doc['n_heldout_items']} items of "
               f"{doc['n_heldout_prompts']} prompts; gain {g['value']:+.3f} [{g['lo']:+.3f}, {g['hi']:+.3f}]")
    click.echo(f"judge: {doc['judge']}" + ("" if doc["stored"] else " (the original: nothing better was found)"))
    click.echo(f"instructions ({doc['instructions_name']}): {doc['instructions']}")
    for d in doc["demonstrations"]:
        click.echo(f"demonstration: {d}")
