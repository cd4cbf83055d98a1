"""`judgeaudit distil` and `judgeaudit apply`: a student classifier trained on a judge's verdicts, and
applied to Parquet shards (docs/command-line.md#judgeaudit-distil). Both are background runs
(`judgeaudit runs` lists them: kinds `distil` and `apply`), done in the command's own process when
typed in a terminal, launched by the dashboard otherwise; both print progress lines on stderr."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import db_option, emit_json, json_option, run_command


def _say(line: str) -> None:
    click.echo(line, err=True)


@click.command("distil")
@click.option("--pool", required=True)
@click.option("--judge", required=True, help="the teacher: a judge's name in the database")
@click.option("--format", "fmt", required=True, help="the teacher's pointwise format")
@click.option("--features", type=click.Choice(["hashing", "model"]), default="hashing", show_default=True,
              help="hashing: a hashed bag of word 1- and 2-grams of prompt and response; model: the bundled "
                   "model's mean-pooled hidden states (slow: a forward pass a candidate)")
@click.option("--held-out", default=0.2, show_default=True, help="share of the prompts held out to measure agreement")
@click.option("--decoding", default=None, help="the teacher cell's decoding (its only one, or greedy)")
@click.option("--seed", default=0, show_default=True)
@click.option("--out", "out", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="the student's folder (default: the run's own folder beside the database)")
@db_option
@json_option
@run_command
def distil_cmd(pool, judge, fmt, features, held_out, decoding, seed, out, db, as_json):
    """Train a student on a cell's verdicts; write its model, model card and threshold rule to --out."""
    from train.distil import distil
    card = distil(db, pool, judge, fmt, out, features=features, held_out=held_out, seed=seed, decoding=decoding,
                  progress=_say)
    out = Path(card["folder"])
    if as_json:
        emit_json(card)
        return
    click.echo((out / "card.md").read_text(encoding="utf-8"), nl=False)
    click.echo(f"score it as a judge: judgeaudit score --pool {pool} --judge distilled:{out} --formats {fmt}")


@click.command("apply")
@click.argument("model_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.argument("shards")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: in this process; ray: Ray Data on RAY_ADDRESS's cluster, or a local one")
@click.option("--judge-name", default=None, help="the judge column's value (default distilled-<model hash>)")
@click.option("--batch-rows", default=65536, show_default=True, help="rows scored at a time")
@click.option("--attach", "attach", default=None, metavar="POOL",
              help="once every shard is scored, attach the output shards to POOL (as attach-verdicts does: "
                   "it replaces the pool's attached files)")
@db_option
@json_option
@run_command
def apply_cmd(model_dir, shards, out, engine, judge_name, batch_rows, attach, db, as_json):
    """Score Parquet shards of pool rows with a student into verdict shards that attach-verdicts reads."""
    from train.apply import apply_run
    doc = apply_run(db, model_dir, shards, out, engine=engine, judge=judge_name, batch_rows=batch_rows,
                    attach=attach, progress=_say)
    if as_json:
        emit_json(doc)
        return
    rate = f", {doc['rows_per_s']:,.0f} candidates/s" if doc["rows_per_s"] else ""
    then = (f"attached to pool {attach}" if doc.get("attached") else
            f"judgeaudit attach-verdicts '{out}/**/*.parquet' --pool POOL")
    click.echo(f"{doc['scored']} shards scored ({doc['rows']:,} rows{rate}), {doc['skipped']} already scored"
               f"{', stopped on request' if doc['stopped'] else ''}; judge {doc['judge']}, format {doc['format']}: "
               f"{then}")
