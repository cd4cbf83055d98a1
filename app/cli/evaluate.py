"""`judgeaudit evaluate` and `judgeaudit contrasts`
(docs/command-line.md#curation-training-and-evaluation)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import polars as pl

from ._common import CommaList, db_option, emit_json, emit_table, json_option, run_command
from ingest import UserError
from ingest.runs import run_key, running


@click.command("evaluate")
@click.option("--runs", "runs", required=True, type=CommaList(),
              help="training runs, comma-separated: run ids (see `judgeaudit runs`) or run folders")
@click.option("--pool", required=True, help="the pool whose held-out prompts are answered")
@click.option("--judge", "judges", required=True, multiple=True,
              help="evaluation judge SPEC (repeatable): openai:MODEL@BASE_URL | local:smollm2 | fake:NAME")
@click.option("--max-new-tokens", default=256, show_default=True, help="answer length cap (tokens)")
@click.option("--batch-size", default=8, show_default=True, help="prompts generated at once")
@click.option("--study", default=None, help="name of the evaluation study (default: the pool's name)")
@click.option("--heldout-share", default=0.1, show_default=True,
              help="share of prompts set aside when the pool marks none as heldout")
@click.option("--heldout-seed", default=0, show_default=True)
@click.option("--max-prompts", default=None, type=int, help="answer only the first N held-out prompts")
@click.option("--concurrency", default=8, show_default=True, help="judge calls in flight at once")
@click.option("--timeout", default=60.0, show_default=True, help="seconds per judge call")
@click.option("--max-retries", default=4, show_default=True)
@click.option("--api-key-env", default=None, help="NAME of the environment variable holding the API key")
@click.option("--export", "export", type=click.Path(path_type=Path), default=None,
              help="write the study's outcomes as JSONL (the form `contrasts --outcomes` reads)")
@db_option
@json_option
@run_command
def evaluate_cmd(runs, pool, judges, max_new_tokens, batch_size, study, heldout_share, heldout_seed,
                 max_prompts, concurrency, timeout, max_retries, api_key_env, export, db, as_json):
    """Answer held-out prompts with each adapter and the base model; judge them against the
    reference-top answer in both orders. Re-running resumes."""
    from train.evaluate import EvalRequest, evaluate, export_outcomes
    req = EvalRequest(runs=list(runs), pool=pool, judges=list(judges),
                      db=db, study=study, max_new_tokens=max_new_tokens, batch_size=batch_size,
                      heldout_share=heldout_share, heldout_seed=heldout_seed, max_prompts=max_prompts,
                      concurrency=concurrency, timeout=timeout, max_retries=max_retries, api_key_env=api_key_env)
    req.check()
    with running(db, "evaluate", pool=pool, config={"study": req.study_name},     # beside the request: the study
                 key=run_key("evaluate", req.study_name)) as run:
        result = evaluate(req, run=run)
    if export:
        result["exported"] = export_outcomes(db, result["study"], export)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{result['status']}: study '{result['study']}': {result['n_prompts']} held-out prompts, "
                   f"{result['generated']} answers generated ({result['generations_stored']} stored), "
                   f"{result['judged']} outcomes judged, {result['unparsed']} without a verdict in both orders")
        if result.get("exported") is not None:
            click.echo(f"wrote {result['exported']} outcomes to {export}")


@click.command("contrasts")
@click.option("--outcomes", "outcomes", type=click.Path(path_type=Path), default=None,
              help="outcomes JSONL: {condition, seed, prompt_id, judge, outcome[, answer_len, ref_len, markdown]}")
@click.option("--study", default=None, help="an evaluation study in the database")
@click.option("--boot", default=10_000, show_default=True, help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="seed of the bootstrap")
@db_option
@json_option
def contrasts_cmd(outcomes, study, boot, seed, db, as_json):
    """Friedman, paired bootstrap contrasts with Holm, judge concurrence, adjusted contrasts, MDD."""
    from train.contrasts import analyse, read_outcomes
    if (outcomes is None) == (study is None):
        raise UserError("give exactly one of --outcomes FILE.jsonl or --study NAME")
    if boot < 1:
        raise UserError("--boot: at least 1")
    if outcomes is not None:
        frame = read_outcomes(outcomes)
    else:
        from ingest.store import ensure_current
        from audit import study_outcomes
        ensure_current(db)
        frame = study_outcomes(db, study)
        if frame.height == 0:
            raise UserError(f"--study {study}: no judged outcomes yet")
    doc = analyse(frame, boot=boot, seed=seed)
    if as_json:
        emit_json(doc)
        return
    emit_table(pl.DataFrame(doc["friedman"]), "Friedman (conditions, prompts as blocks)")
    show = ["judge", "a", "b", "diff", "lo", "hi", "p", "p_holm", "n_judges_agree"]
    if doc["contrasts"]:
        emit_table(pl.DataFrame(doc["contrasts"]).select(show), "\nContrasts a - b (paired bootstrap, Holm)")
    if doc["adjusted"]:
        emit_table(pl.DataFrame(doc["adjusted"]).select(show + ["coef_log_len_ratio", "coef_markdown"]),
                   "\nAdjusted for log length ratio and markdown (prompt fixed effects)")
    mdd = pl.DataFrame(doc["mdd"]["by_judge"]).with_columns(
        pl.col("seeds").map_elements(json.dumps, return_dtype=pl.String))
    emit_table(mdd, f"\nMinimum detectable difference (power {doc['mdd']['power']}, alpha {doc['mdd']['alpha']})")
    for note in doc["notes"]:
        click.echo(f"note: {note}")
