"""LoRA fine-tuning of a causal LM on a curated subset, by transformers' Trainer
(docs/training.md#fine-tuning). torch, peft and transformers are imported inside functions only; the
parts live beside it: the hyper-parameters in train/_config.py, the examples in train/_examples.py, the
Trainer in train/_trainer.py (with length grouping from train/_grouping.py), progress and cancel in
train/_progress.py.

A run folder holds config.json (everything needed to reproduce it), progress.jsonl (one line per
logged step: step, epoch, loss, eval_loss, learning rate, tokens/s, ETA), train.log, metrics.json
and the adapter (adapter_config.json, adapter_model.safetensors; no modules_to_save, so vLLM
--enable-lora loads it). Cancelling stops at the next step and still saves the adapter.

Multi-GPU: `accelerate launch -m app.cli train ...` runs one process per GPU; the Trainer does
DDP, rank 0 writes the folder, and a cancel seen by rank 0 is broadcast so every rank stops at the
same step.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Callable

from ingest import UserError
from ingest.files import file_sha256

from ._config import TrainConfig
from ._examples import read_subset, split_eval, tokenize
from ._model import load_base
from ._progress import finish_run, iso_now, make_callback
from ._trainer import build_trainer, lora_config
from ingest import settings

VERSIONED = ("torch", "transformers", "peft", "accelerate", "judgeaudit", "polars", "duckdb")


# pragma: no mutate start (make mutate: the model and the Trainer, tested by test_train.py)
def versions() -> dict:
    """Python's version and those of the VERSIONED packages (None where one is not installed)."""
    out = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def fit(cfg: TrainConfig, model, tokenizer, *, cancelled: Callable[[], bool] = lambda: False,
        progress: Callable[[dict], None] = lambda rec: None, run_id: int | None = None,
        subset_record: dict | None = None) -> tuple[object, dict]:
    """Train a LoRA adapter on `model` (a loaded base; LoRA layers are injected into it) and write
    the run folder. Returns (the peft model, metrics)."""
    from peft import get_peft_model
    cfg.check()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    rank0 = settings.distributed()[1] == 0
    log_file = out / "train.log"

    def say(msg: str) -> None:
        if rank0:
            line = f"{iso_now()} {msg}"
            print(line, flush=True)
            with open(log_file, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    progress({"phase": "preparing"})
    rows = read_subset(cfg.subset)
    examples, data_stats = tokenize(rows, tokenizer, cfg.max_length)
    if not examples:
        raise UserError(f"--subset {cfg.subset}: every example's prompt fills --max-length {cfg.max_length}")
    train_rows, eval_rows = split_eval(examples, cfg.eval_share, cfg.seed)
    data_stats.update(n_train=len(train_rows), n_eval=len(eval_rows))
    say(f"{len(rows)} examples ({data_stats['n_cut']} cut at {cfg.max_length} tokens, "
        f"{100 * data_stats['share_cut']:.1f}%; {data_stats['n_dropped']} dropped), "
        f"{len(train_rows)} to train, {len(eval_rows)} to evaluate")
    model.config.use_cache = False
    peft_model = get_peft_model(model, lora_config(cfg, model))
    counter = {"tokens": 0}
    callback = make_callback(out, counter, cancelled, progress, say)
    trainer = build_trainer(cfg, peft_model, tokenizer, train_rows, eval_rows, [callback], counter)
    trainable, total = peft_model.get_nb_trainable_parameters()
    config = {"run_id": run_id, "created": iso_now(), "subset": {
        "path": str(Path(cfg.subset).resolve()), "sha256": file_sha256(cfg.subset), **(subset_record or {})},
        "base": cfg.base, "hyper_parameters": dataclasses.asdict(cfg),
        "effective_batch": trainer.args.per_device_train_batch_size * trainer.args.gradient_accumulation_steps
        * trainer.args.world_size, "gradient_accumulation_steps": trainer.args.gradient_accumulation_steps,
        "world_size": trainer.args.world_size, "device": str(trainer.args.device),
        "precision": "bf16" if trainer.args.bf16 else "fp32", "lora": {
            "r": cfg.lora_r, "alpha": cfg.lora_alpha, "dropout": cfg.lora_dropout,
            "target_modules": sorted(peft_model.peft_config["default"].target_modules)},
        "trainable_parameters": trainable, "total_parameters": total, "data": data_stats,
        "versions": versions(), "argv": sys.argv}
    if rank0:
        (out / "config.json").write_text(json.dumps(config, indent=2, default=str), encoding="utf-8")
        (out / "progress.jsonl").write_text("", encoding="utf-8")
    say(f"training {cfg.base}: {trainable:,} trainable of {total:,} parameters on {trainer.args.device} "
        f"({config['precision']}), effective batch {config['effective_batch']}")
    started = time.monotonic()
    result = trainer.train()
    if not eval_rows or callback.cancelled_at is not None:      # a cancelled run exits promptly
        final_eval = {"eval_loss": callback.last_eval[1]} if callback.last_eval else {}
    elif callback.last_eval and callback.last_eval[0] == trainer.state.global_step:
        final_eval = {"eval_loss": callback.last_eval[1]}      # evaluated at the last step already
    else:
        final_eval = trainer.evaluate()
    trainer.save_model(str(out))   # rank 0 writes adapter_config.json + adapter_model.safetensors
    seconds = time.monotonic() - started
    metrics = {"status": "cancelled" if callback.cancelled_at is not None else "finished",
               "steps": trainer.state.global_step, "max_steps": trainer.state.max_steps,
               "train_loss": result.training_loss, "eval_loss": final_eval.get("eval_loss"),
               "seconds": round(seconds, 2), "tokens": counter["tokens"] * trainer.args.world_size,
               "tokens_per_s": counter["tokens"] * trainer.args.world_size / seconds if seconds else None,
               "share_cut": data_stats["share_cut"], "adapter": str(out)}
    finish_run(trainer, out, metrics, seconds, rank0, say, progress)
    return peft_model, metrics


def train(cfg: TrainConfig, *, cancelled: Callable[[], bool] = lambda: False,
          progress: Callable[[dict], None] = lambda rec: None, run_id: int | None = None,
          subset_record: dict | None = None) -> dict:
    """Load the base (train._model.load_base) and `fit`; the metrics."""
    progress({"phase": "loading", "base": cfg.base})
    model, tokenizer = load_base(cfg.base)
    model.train()
    return fit(cfg, model, tokenizer, cancelled=cancelled, progress=progress, run_id=run_id,
               subset_record=subset_record)[1]
# pragma: no mutate end
