"""DPO on preference pairs (docs/command-line.md#judgeaudit-train): a LoRA adapter trained by TRL's
DPOTrainer with β 0.1, the reference being the base with the adapter disabled (a peft model and
ref_model=None), the other settings the SFT run's (train/_config.py). The run folder is SFT's:
config.json, progress.jsonl (loss, rewards/chosen, rewards/rejected, rewards/margins, accuracy),
train.log, metrics.json and the adapter; a cancel stops at the next step and saves the adapter.
torch, peft, transformers and trl are imported inside the functions only."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Callable

from ingest import UserError
from ingest.files import file_sha256

from ._config import TrainConfig, accumulation_steps
from ._examples import jsonl_lines, split_eval
from ._model import load_base
from ._progress import finish_run, iso_now, make_callback
from ._trainer import lora_config
from .finetune import versions
from ingest import settings

MESSAGE_FIELDS = ("prompt", "chosen", "rejected")
REPORT_TO = ("none", "tensorboard", "trackio", "mlflow")


def read_pairs(path: str | os.PathLike) -> list[dict]:
    """The rows of a TRL conversational preference JSONL file (prompt, chosen, rejected: lists of
    {role, content} messages; chosen and rejected end with an assistant message). An SFT subset is
    refused naming the command that makes pairs; every other error names its line and field."""
    p, rows = Path(path), []
    for p, n, row in jsonl_lines(path):
        if not isinstance(row, dict):
            raise UserError(f"{p} line {n}: not a JSON object")
        if "completion" in row and "chosen" not in row:
            raise UserError(f"--subset {p} is an SFT subset (prompt-completion rows), not preference pairs: "
                            "--method dpo needs pairs; make them with `judgeaudit pairs`")
        for field in MESSAGE_FIELDS:
            if field not in row:
                raise UserError(f"{p} line {n}: field '{field}' is missing")
            msgs = row[field]
            if isinstance(msgs, list) and not msgs:
                raise UserError(f"{p} line {n}: field '{field}' is empty")
            if not isinstance(msgs, list) or not all(
                    isinstance(m, dict) and isinstance(m.get("content"), str) and isinstance(m.get("role"), str)
                    for m in msgs):
                raise UserError(f"{p} line {n}: field '{field}' must be a list of "
                                "{\"role\", \"content\"} messages")
            if field != "prompt" and msgs[-1]["role"] != "assistant":
                raise UserError(f"{p} line {n}: field '{field}' must end with an assistant message")
        rows.append({k: row[k] for k in MESSAGE_FIELDS})
    if not rows:
        raise UserError(f"--subset {p}: no pairs")
    return rows


def report_list(report_to: str) -> list[str]:
    """The Trainer's report_to for --report-to: [] for none, else [NAME]."""
    if report_to not in REPORT_TO:
        raise UserError(f"--report-to {report_to}: choose one of {', '.join(REPORT_TO)}")
    return [] if report_to == "none" else [report_to]


# pragma: no mutate start (the model and the Trainer, tested by tests/train/test_dpo.py)
def dpo_trainer(cfg: TrainConfig, model, tokenizer, train_rows: list[dict], eval_rows: list[dict],
                callbacks: list | None = None, counter: dict | None = None):
    """TRL's DPOTrainer with LoRA (train._trainer.lora_config) on the base `model`, which it wraps
    into a peft model (trainer.model); ref_model None, so the reference is that model with the
    adapter disabled (a peft model handed in instead would get a "ref" adapter copy). Counts the
    tokens it trains on (chosen and rejected sequences, padding excluded)."""
    import torch
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from trl import DPOConfig, DPOTrainer

    world = settings.distributed()[0]
    accum = accumulation_steps(cfg.batch_size, cfg.micro_batch_size, world)
    steps_per_epoch = max(1, math.ceil(math.ceil(len(train_rows) / (cfg.micro_batch_size * world)) / accum))
    total = cfg.max_steps if cfg.max_steps > 0 else math.ceil(steps_per_epoch * cfg.epochs)
    cuda = torch.cuda.is_available()
    bf16 = bool(cuda and torch.cuda.is_bf16_supported())
    if cfg.report_to == "tensorboard":        # the Trainer's default folder is inside trainer/, removed at the end
        settings.tensorboard_dir(Path(cfg.out) / "tensorboard")
    args = DPOConfig(
        output_dir=str(Path(cfg.out) / "trainer"), per_device_train_batch_size=cfg.micro_batch_size,
        per_device_eval_batch_size=cfg.micro_batch_size, gradient_accumulation_steps=accum,
        num_train_epochs=cfg.epochs, max_steps=cfg.max_steps if cfg.max_steps > 0 else -1,
        learning_rate=cfg.learning_rate, lr_scheduler_type="linear", warmup_steps=0, weight_decay=0.0,
        optim="adamw_torch_fused" if cuda else "adamw_torch", logging_steps=1,
        eval_strategy="steps" if eval_rows else "no", eval_steps=cfg.eval_steps or max(1, total // 5),
        save_strategy="no", report_to=report_list(cfg.report_to), bf16=bf16, fp16=False, seed=cfg.seed,
        data_seed=cfg.seed, disable_tqdm=True, dataloader_num_workers=0, use_cpu=not cuda,
        beta=cfg.beta, max_length=cfg.max_length, ddp_find_unused_parameters=False if world > 1 else None)
    tokens = counter if counter is not None else {"tokens": 0}

    class CountingDPOTrainer(DPOTrainer):
        def compute_loss(self, model, inputs, *a, **kw):
            if model.training:
                tokens["tokens"] += int(inputs["attention_mask"].sum())
            return super().compute_loss(model, inputs, *a, **kw)

    trainer = CountingDPOTrainer(model=model, ref_model=None, peft_config=lora_config(cfg, model), args=args,
                                 processing_class=tokenizer,
                                 train_dataset=Dataset.from_list(train_rows),
                                 eval_dataset=Dataset.from_list(eval_rows) if eval_rows else None,
                                 callbacks=callbacks or [])
    trainer.remove_callback(PrinterCallback)
    return trainer


def fit_dpo(cfg: TrainConfig, model, tokenizer, *, cancelled: Callable[[], bool] = lambda: False,
            progress: Callable[[dict], None] = lambda rec: None, run_id: int | None = None,
            subset_record: dict | None = None) -> tuple[object, dict]:
    """Train a LoRA adapter on `model` (a loaded base) by DPO on the pairs file cfg.subset and
    write the run folder. Returns (the peft model, metrics)."""
    cfg.check()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    rank0 = settings.distributed()[1] == 0

    def say(msg: str) -> None:
        if rank0:
            line = f"{iso_now()} {msg}"
            print(line, flush=True)
            with open(out / "train.log", "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    rows = read_pairs(cfg.subset)
    train_rows, eval_rows = split_eval(rows, cfg.eval_share, cfg.seed)
    say(f"{len(rows)} pairs, {len(train_rows)} to train, {len(eval_rows)} to evaluate (DPO, beta {cfg.beta})")
    model.config.use_cache = False
    counter = {"tokens": 0}
    callback = make_callback(out, counter, cancelled, progress, say)
    trainer = dpo_trainer(cfg, model, tokenizer, train_rows, eval_rows, [callback], counter)
    peft_model = trainer.model
    n_kept = len(trainer.train_dataset)      # TRL drops a pair whose prompt alone fills max_length
    if n_kept == 0:
        raise UserError(f"--subset {cfg.subset}: every pair's prompt fills --max-length {cfg.max_length}")
    trainable, total = peft_model.get_nb_trainable_parameters()
    config = {"run_id": run_id, "created": iso_now(), "method": "dpo", "subset": {
        "path": str(Path(cfg.subset).resolve()), "sha256": file_sha256(cfg.subset), **(subset_record or {})},
        "base": cfg.base, "hyper_parameters": dataclasses.asdict(cfg), "reference": "the base (adapter disabled)",
        "effective_batch": trainer.args.per_device_train_batch_size * trainer.args.gradient_accumulation_steps
        * trainer.args.world_size, "gradient_accumulation_steps": trainer.args.gradient_accumulation_steps,
        "world_size": trainer.args.world_size, "device": str(trainer.args.device),
        "precision": "bf16" if trainer.args.bf16 else "fp32", "lora": {
            "r": cfg.lora_r, "alpha": cfg.lora_alpha, "dropout": cfg.lora_dropout,
            "target_modules": sorted(peft_model.peft_config["default"].target_modules)},
        "trainable_parameters": trainable, "total_parameters": total,
        "data": {"n_pairs": len(rows), "n_train": n_kept, "n_eval": len(eval_rows),
                 "n_dropped": len(train_rows) - n_kept},
        "versions": {**versions(), "trl": _version("trl")}, "argv": sys.argv}
    if rank0:
        (out / "config.json").write_text(json.dumps(config, indent=2, default=str), encoding="utf-8")
        (out / "progress.jsonl").write_text("", encoding="utf-8")
    say(f"DPO {cfg.base}: {trainable:,} trainable of {total:,} parameters on {trainer.args.device} "
        f"({config['precision']}), effective batch {config['effective_batch']}")
    started = time.monotonic()
    result = trainer.train()
    final_eval = {"eval_loss": callback.last_eval[1]} if callback.last_eval else {}
    if eval_rows and callback.cancelled_at is None and not (callback.last_eval and
                                                             callback.last_eval[0] == trainer.state.global_step):
        final_eval = trainer.evaluate()
    trainer.save_model(str(out))
    seconds = time.monotonic() - started
    last = _last_train_line(out / "progress.jsonl")
    metrics = {"status": "cancelled" if callback.cancelled_at is not None else "finished", "method": "dpo",
               "steps": trainer.state.global_step, "max_steps": trainer.state.max_steps,
               "train_loss": result.training_loss, "eval_loss": final_eval.get("eval_loss"),
               "rewards/margins": last.get("rewards/margins"), "accuracy": last.get("accuracy"),
               "seconds": round(seconds, 2), "tokens": counter["tokens"] * trainer.args.world_size,
               "tokens_per_s": counter["tokens"] * trainer.args.world_size / seconds if seconds else None,
               "adapter": str(out)}
    finish_run(trainer, out, metrics, seconds, rank0, say, progress)
    return peft_model, metrics


def train_dpo(cfg: TrainConfig, *, cancelled: Callable[[], bool] = lambda: False,
              progress: Callable[[dict], None] = lambda rec: None, run_id: int | None = None,
              subset_record: dict | None = None) -> dict:
    """Load the base (train._model.load_base) and `fit_dpo`; the metrics."""
    read_pairs(cfg.subset)                    # a bad file fails before the model loads
    progress({"phase": "loading", "base": cfg.base})
    model, tokenizer = load_base(cfg.base)
    model.train()
    return fit_dpo(cfg, model, tokenizer, cancelled=cancelled, progress=progress, run_id=run_id,
                   subset_record=subset_record)[1]


# pragma: no mutate end
def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _last_train_line(progress_file: Path) -> dict:
    """The last progress.jsonl line with a training loss ({} when none)."""
    last = {}
    if progress_file.is_file():
        for line in progress_file.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("loss") is not None:
                last = rec
    return last
