"""`judgeaudit curate` and `judgeaudit train` (docs/command-line.md#curation-training-and-evaluation)."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import db_option, emit_json, json_option, run_command
from ingest import UserError


@click.command("curate")
@click.option("--pool", required=True)
@click.option("--policy", type=click.Choice(["judge", "random", "length", "full"]), default="judge",
              show_default=True, help="judge = the judge x format's scores; or a baseline")
@click.option("--judge", default=None, help="judge name (policy judge)")
@click.option("--format", "fmt", default=None, help="format name (policy judge)")
@click.option("--decoding", type=click.Choice(["greedy", "sampled", "constrained"]), default=None,
              help="the cell's decoding (default: its only one, else greedy)")
@click.option("--score", "score_kind", type=click.Choice(["label", "expected"]), default="label", show_default=True,
              help="the parsed labels' scores or the probability-weighted (expected) ones")
@click.option("--by", type=click.Choice(["score", "calibrated"]), default="score", show_default=True,
              help="select by the cell's score, or by P(a human accepts) under its isotonic map on the accept labels")
@click.option("--rate", type=float, default=None, help="share of eligible prompts to keep, in (0, 1] (full: 1)")
@click.option("--seed", default=0, show_default=True, help="seed of the tie-breaks (the audit's top-1 key)")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="the subset as TRL conversational prompt-completion JSONL")
@db_option
@json_option
def curate_cmd(pool, policy, judge, fmt, decoding, score_kind, by, rate, seed, out, db, as_json):
    """Select one response per prompt, keep the top share of prompts; store and export the subset."""
    from train.subsets import make_subset
    if rate is None:
        if policy != "full":
            raise UserError("--rate is required (except for --policy full)")
        rate = 1.0
    result = make_subset(db, pool, policy, rate, out, seed=seed, judge=judge, fmt=fmt, decoding=decoding,
                         score=score_kind, by=by)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"subset {result['name']} (id {result['subset_id']}): {result['n_selected']} of "
                   f"{result['n_eligible']} eligible prompts; tie-broken picks: {result['n_pick_tied']} "
                   f"within a prompt, {result['n_cut_tied']} at the cut; {result['n_heldout_prompts']} "
                   f"held-out prompts left out -> {result['out']}")


@click.command("train")
@click.option("--subset", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="TRL prompt-completion JSONL (from `judgeaudit curate`); with --method dpo, preference "
                   "pairs (from `judgeaudit pairs`)")
@click.option("--pool", default=None, help="instead of --subset: curate from this pool first, into the run folder "
              "(with --policy, --judge, --format, --rate; the tie-breaks use --seed)")
@click.option("--policy", type=click.Choice(["judge", "random", "length", "full"]), default="judge", show_default=True)
@click.option("--judge", default=None)
@click.option("--format", "fmt", default=None)
@click.option("--decoding", type=click.Choice(["greedy", "sampled", "constrained"]), default=None)
@click.option("--score", "score_kind", type=click.Choice(["label", "expected"]), default="label", show_default=True)
@click.option("--rate", type=float, default=None)
@click.option("--base", required=True, help="local:smollm2 (the bundled model), a model folder or a hub id")
@click.option("--out", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="run folder for config, progress, log and adapter (default: the run's own folder)")
@click.option("--max-steps", default=-1, show_default=True, help="stop after N optimiser steps (> 0: overrides epochs)")
@click.option("--epochs", default=2.0, show_default=True)
@click.option("--learning-rate", "--lr", "learning_rate", default=2e-4, show_default=True)
@click.option("--batch-size", default=8, show_default=True, help="effective batch (micro batch x accumulation x GPUs)")
@click.option("--micro-batch-size", default=4, show_default=True, help="examples per forward pass and device")
@click.option("--lora-r", default=16, show_default=True)
@click.option("--lora-alpha", default=32, show_default=True)
@click.option("--lora-dropout", default=0.05, show_default=True)
@click.option("--max-length", default=1024, show_default=True, help="token cap; longer examples are cut")
@click.option("--eval-share", default=0.05, show_default=True, help="validation share for eval_loss")
@click.option("--eval-steps", default=0, show_default=True, help="evaluate every N steps (0: about five times)")
@click.option("--group-by-length/--no-group-by-length", default=True, show_default=True,
              help="batch examples of similar length (little padding)")
@click.option("--seed", default=0, show_default=True)
@click.option("--method", type=click.Choice(["sft", "dpo"]), default="sft", show_default=True,
              help="sft: a prompt-completion subset; dpo: preference pairs (from `judgeaudit pairs`) by TRL's DPOTrainer")
@click.option("--beta", default=0.1, show_default=True, help="DPO's beta")
@click.option("--min-margin", type=float, default=0.0, show_default=True,
              help="with --pool and --method dpo: the pairs' least margin (see `judgeaudit pairs`)")
@click.option("--both-orders", is_flag=True, help="with --pool and --method dpo: pairs judged alike in both orders only")
@click.option("--report-to", type=click.Choice(["none", "tensorboard", "trackio", "mlflow"]), default="none",
              show_default=True, help="the Trainer's loggers (tensorboard writes into the run folder)")
@db_option
@json_option
@run_command
def train_cmd(subset, pool, policy, judge, fmt, decoding, score_kind, rate, base, out, max_steps, epochs, learning_rate, batch_size, micro_batch_size, lora_r,
              lora_alpha, lora_dropout, max_length, eval_share, eval_steps, group_by_length, seed, method, beta,
              min_margin, both_orders, report_to, db, as_json):
    """Fine-tune a LoRA adapter on a subset (SFT) or on preference pairs (DPO), as a background run."""
    from train import run_training
    curation = None
    if pool is not None and method == "dpo":
        if not judge or not fmt:
            raise UserError("--method dpo with --pool needs --judge and --format (the cell whose verdicts make the pairs)")
        curation = {"pool": pool, "judge": judge, "format": fmt, "decoding": decoding, "min_margin": min_margin,
                    "both_orders": both_orders}
    elif pool is not None:
        if rate is None and policy != "full":
            raise UserError("--rate is required with --pool (except for --policy full)")
        curation = {"pool": pool, "policy": policy, "judge": judge, "format": fmt, "decoding": decoding,
                    "score": score_kind, "rate": rate or 1.0}
    metrics = run_training(db, subset=subset, curation=curation, base=base, out=out, max_steps=max_steps,
                           epochs=epochs, learning_rate=learning_rate, batch_size=batch_size,
                           micro_batch_size=micro_batch_size, lora_r=lora_r, lora_alpha=lora_alpha,
                           lora_dropout=lora_dropout, max_length=max_length, eval_share=eval_share,
                           eval_steps=eval_steps, group_by_length=group_by_length, seed=seed, method=method,
                           beta=beta, report_to=report_to)
    if as_json:
        emit_json(metrics)
    else:
        click.echo(f"{metrics['status']}: {metrics['steps']} steps, train loss {metrics['train_loss']:.4f}"
                   + (f", eval loss {metrics['eval_loss']:.4f}" if metrics.get("eval_loss") is not None else "")
                   + (f", reward margin {metrics['rewards/margins']:.4f}" if metrics.get("rewards/margins") is not None
                      else "")
                   + f"; adapter in {metrics['adapter']}")
