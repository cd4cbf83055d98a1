"""`judgeaudit pairs` (docs/command-line.md#judgeaudit-pairs): preference pairs from one cell."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import current, db_option, emit_json, json_option


@click.command("pairs")
@click.option("--pool", required=True)
@click.option("--judge", required=True, help="judge name")
@click.option("--format", "fmt", required=True, help="format name (comparative or pointwise)")
@click.option("--decoding", type=click.Choice(["greedy", "constrained"]), default=None,
              help="the cell's decoding (default: its only one, else greedy)")
@click.option("--min-margin", type=float, default=0.0, show_default=True,
              help="least margin for the chosen response: the verdict margin (comparative) or the "
                   "normalised score difference (pointwise); a tie is never a pair")
@click.option("--both-orders", is_flag=True, help="comparative: only pairs judged in both orders that "
              "prefer the same response in both (the mean margin counts)")
@click.option("--seed", default=0, show_default=True, help="seed of the tie-breaks (pointwise; the audit's key)")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="the pairs as TRL conversational preference JSONL (FILE.rule.json is written beside)")
@db_option
@json_option
def pairs_cmd(pool, judge, fmt, decoding, min_margin, both_orders, seed, out, db, as_json):
    """Preference pairs (chosen, rejected) for DPO from a judge's comparisons or scores."""
    from train import make_pairs
    result = make_pairs(current(db), pool, judge, fmt, out, decoding=decoding, min_margin=min_margin,
                        both_orders=both_orders, seed=seed)
    if as_json:
        emit_json(result)
    else:
        lost = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in result["lost"].items() if v)
        click.echo(f"{result['format']}{', both orders' if both_orders else ''}: {result['pairs']} pairs from "
                   f"{result['prompts']} prompts; lost: {lost or 'none'}; {result['n_heldout_prompts']} held-out "
                   f"prompts left out -> {result['out']}")
