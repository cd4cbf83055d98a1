"""LoRA fine-tuning of a causal LM on a curated subset, by transformers' Trainer (DESIGN.md
'Curation and training'). torch, peft and transformers are imported inside functions only.

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
import hashlib
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Callable

from ingest import UserError

IGNORE = -100
VERSIONED = ("torch", "transformers", "peft", "accelerate", "judgeaudit", "polars", "duckdb")


@dataclass
class TrainConfig:
    """Hyper-parameters; the defaults are the source paper's."""
    subset: str
    base: str
    out: str
    epochs: float = 2.0
    max_steps: int = -1                  # > 0 overrides epochs (the "quick" preset)
    learning_rate: float = 2e-4
    batch_size: int = 8                  # effective: micro batch x accumulation x processes
    micro_batch_size: int = 4
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    max_length: int = 1024
    eval_share: float = 0.05
    eval_steps: int = 0                  # 0: about five evaluations over the run
    group_by_length: bool = True
    seed: int = 0

    def check(self) -> None:
        for name in ("batch_size", "micro_batch_size", "lora_r", "lora_alpha", "max_length"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name.replace('_', '-')} must be at least 1")
        if not 0 <= self.lora_dropout < 1:
            raise UserError("--lora-dropout must be in [0, 1)")
        if not 0 <= self.eval_share < 0.5:
            raise UserError("--eval-share must be in [0, 0.5)")
        if self.learning_rate <= 0 or (self.max_steps <= 0 and self.epochs <= 0):
            raise UserError("--learning-rate and --epochs (or --max-steps) must be positive")
        accumulation_steps(self.batch_size, self.micro_batch_size, int(os.environ.get("WORLD_SIZE", "1")))


def read_subset(path: str | os.PathLike) -> list[dict]:
    """The rows of a TRL conversational prompt-completion JSONL file; errors name line and field."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"--subset {p}: no such file")
    rows = []
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{p} line {n}: not JSON ({exc.msg})") from None
            for field, role in (("prompt", None), ("completion", "assistant")):
                msgs = row.get(field) if isinstance(row, dict) else None
                if not isinstance(msgs, list) or not msgs or not all(
                        isinstance(m, dict) and isinstance(m.get("content"), str) and isinstance(m.get("role"), str)
                        for m in msgs):
                    raise UserError(f"{p} line {n}: field '{field}' must be a list of "
                                    "{\"role\", \"content\"} messages")
                if role and msgs[-1]["role"] != role:
                    raise UserError(f"{p} line {n}: field '{field}' must end with an {role} message")
            rows.append({"prompt": row["prompt"], "completion": row["completion"]})
    if not rows:
        raise UserError(f"--subset {p}: no examples")
    return rows


def tokenize(rows: list[dict], tokenizer, max_length: int) -> tuple[list[dict], dict]:
    """input_ids and labels per example: labels are IGNORE (-100) on the prompt's tokens (chat
    template with the generation prompt), the token ids on the completion's. Sequences longer
    than max_length are cut there; an example whose prompt alone fills the cap is dropped.

    Returns (examples, stats) with stats n_examples, n_cut, share_cut, n_dropped, n_tokens,
    n_completion_tokens.
    """
    out, n_cut, n_dropped, n_tokens, n_comp = [], 0, 0, 0, 0
    for row in rows:
        prompt = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True,
                                               return_dict=False)
        full = tokenizer.apply_chat_template(row["prompt"] + row["completion"], tokenize=True, return_dict=False)
        if full[:len(prompt)] == prompt and len(full) > len(prompt):
            completion = full[len(prompt):]
        else:   # a template that renders the turns differently: the completion's text and EOS
            text = "".join(m["content"] for m in row["completion"])
            completion = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        ids = list(prompt) + list(completion)
        if len(ids) > max_length:
            n_cut += 1
            ids = ids[:max_length]
        if len(prompt) >= len(ids):
            n_dropped += 1
            continue
        labels = [IGNORE] * len(prompt) + ids[len(prompt):]
        out.append({"input_ids": ids, "labels": labels})
        n_tokens += len(ids)
        n_comp += len(ids) - len(prompt)
    stats = {"n_examples": len(rows), "n_cut": n_cut, "share_cut": n_cut / len(rows) if rows else 0.0,
             "n_dropped": n_dropped, "n_tokens": n_tokens, "n_completion_tokens": n_comp}
    return out, stats


def split_eval(examples: list[dict], share: float, seed: int) -> tuple[list[dict], list[dict]]:
    """(train, eval): a seeded share (at least one example when share > 0 and there are >= 2)."""
    import numpy as np
    n = len(examples)
    n_eval = 0 if share <= 0 or n < 2 else max(1, int(round(share * n)))
    order = np.random.default_rng([seed, 5]).permutation(n)
    held = set(order[:n_eval].tolist())
    return ([e for i, e in enumerate(examples) if i not in held], [examples[i] for i in sorted(held)])


def pad_batch(features: list[dict], pad_id: int) -> dict:
    """Right-pad a batch: input_ids with pad_id, attention_mask 0 and labels IGNORE on the pads."""
    import torch
    width = max(len(f["input_ids"]) for f in features)
    ids = torch.full((len(features), width), pad_id, dtype=torch.long)
    labels = torch.full((len(features), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(features), width), dtype=torch.long)
    for i, f in enumerate(features):
        n = len(f["input_ids"])
        ids[i, :n] = torch.tensor(f["input_ids"])
        labels[i, :n] = torch.tensor(f["labels"])
        mask[i, :n] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def accumulation_steps(batch_size: int, micro_batch_size: int, world: int = 1) -> int:
    """Micro-batches accumulated per optimiser step so that micro batch x steps x processes is the
    effective batch exactly; a batch that does not divide is refused rather than silently changed."""
    per_step = micro_batch_size * world
    if batch_size % per_step:
        raise UserError(f"--batch-size {batch_size} is not a multiple of --micro-batch-size {micro_batch_size}"
                        + (f" x {world} processes" if world > 1 else "")
                        + f" ({per_step}): choose a batch size that is, or a smaller micro batch")
    return batch_size // per_step


# pragma: no mutate start (make mutate: the model and the Trainer, tested by test_train.py)
def projection_names(model) -> list[str]:
    """The short names of the model's linear layers inside its blocks (attention and MLP
    projections: q_proj, ..., down_proj), not the output head."""
    import torch
    head = model.get_output_embeddings()
    return sorted({name.rsplit(".", 1)[-1] for name, mod in model.named_modules()
                   if isinstance(mod, torch.nn.Linear) and mod is not head and "." in name})


def lora_config(cfg: TrainConfig, model):
    """LoRA on the attention and MLP projections, named by their short names (as vLLM expects),
    no modules_to_save."""
    from peft import LoraConfig
    return LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=projection_names(model), bias="none", task_type="CAUSAL_LM")


def versions() -> dict:
    out = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def make_callback(out: Path, counter: dict, cancelled: Callable[[], bool], progress: Callable[[dict], None],
                  say: Callable[[str], None]):
    """A TrainerCallback: a progress.jsonl line at every log (rank 0), the run's progress, and a
    cancel check after every optimiser step (rank 0 decides, every rank stops)."""
    import torch
    from transformers import TrainerCallback

    class Progress(TrainerCallback):
        def __init__(self):
            self.t0 = self.t_last = time.monotonic()
            self.tokens_last = 0
            self.last_check = 0.0
            self.cancelled_at = None
            self.last_eval = None

        def on_train_begin(self, args, state, control, **kw):
            self.t0 = self.t_last = time.monotonic()

        def on_step_end(self, args, state, control, **kw):
            now = time.monotonic()
            stop = False
            if state.is_world_process_zero and now - self.last_check >= 1.0:
                self.last_check = now
                stop = bool(cancelled())
            if torch.distributed.is_available() and torch.distributed.is_initialized():
                flag = torch.tensor([1 if stop else 0], device=args.device)
                torch.distributed.broadcast(flag, src=0)
                stop = bool(flag.item())
            if stop and self.cancelled_at is None:
                self.cancelled_at = state.global_step
                control.should_training_stop = True
                if state.is_world_process_zero:
                    say(f"cancel requested: stopping after step {state.global_step}, saving the adapter")

        def on_log(self, args, state, control, logs=None, **kw):
            if not state.is_world_process_zero or not logs or ("loss" not in logs and "eval_loss" not in logs):
                return
            now = time.monotonic()
            world = max(1, args.world_size)
            tokens = counter["tokens"] * world
            rate = (tokens - self.tokens_last) / max(now - self.t_last, 1e-9)
            if "loss" in logs:
                self.t_last, self.tokens_last = now, tokens
            if "eval_loss" in logs:
                self.last_eval = (state.global_step, logs["eval_loss"])
            elapsed = now - self.t0
            step, total = state.global_step, state.max_steps
            eta = elapsed / step * (total - step) if step and total else None
            rec = {"time": _now(), "step": step, "max_steps": total, "epoch": state.epoch,
                   "loss": logs.get("loss"), "eval_loss": logs.get("eval_loss"),
                   "learning_rate": logs.get("learning_rate"),
                   "tokens_per_s": rate if "loss" in logs else None, "tokens": tokens,
                   "elapsed_s": round(elapsed, 3), "eta_s": round(eta, 1) if eta is not None else None}
            with open(out / "progress.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
            progress({"phase": "train", **rec, "done": step, "total": total,   # done/total: the runs panel's bar
                      "out": str(out)})
            parts = [f"step {step}/{total}"] + [f"{k} {rec[k]:.4g}" for k in ("loss", "eval_loss", "learning_rate",
                                                                           "tokens_per_s") if rec[k] is not None]
            if rec["eta_s"] is not None:
                parts.append(f"ETA {rec['eta_s']:.0f} s")
            say(", ".join(parts))

    return Progress()


# pragma: no mutate end
MEGA_BATCHES = 50     # length grouping sorts this many batches at a time (transformers' largest)


def length_grouped_order(lengths: list[int], batch: int, rng) -> list[int]:
    """Example order for batches of similar length: a random permutation, sorted by length within
    mega-batches of MEGA_BATCHES x batch examples, cut into batches of `batch`, whose order is then
    shuffled with the longest batch first (an out-of-memory error shows at once).

    transformers' LengthGroupedSampler keeps four mega-batches even on a small subset, so on a
    curated subset of a few dozen examples it sorts only within each batch; sorting larger groups
    and shuffling the batches instead keeps padding small at any size."""
    import numpy as np
    lengths = np.asarray(lengths)
    perm = rng.permutation(lengths.size)
    size = MEGA_BATCHES * batch
    order = np.concatenate([m[np.argsort(-lengths[m], kind="stable")] for m in
                            np.array_split(perm, range(size, lengths.size, size))]) if lengths.size else perm
    batches = [order[i:i + batch] for i in range(0, order.size, batch)]
    if not batches:
        return []
    first = int(np.argmax([lengths[b].max() for b in batches]))
    rest = [b for i, b in enumerate(batches) if i != first]
    return [int(i) for b in [batches[first]] + [rest[j] for j in rng.permutation(len(rest))] for i in b]


# pragma: no mutate start (make mutate: the model and the Trainer, tested by test_train.py)
def _trainer_class():
    import numpy as np
    import torch
    from transformers import Trainer

    class LengthGroupedOrder(torch.utils.data.Sampler):
        def __init__(self, lengths: list[int], batch: int, seed: int):
            self.lengths, self.batch, self.seed, self.epoch = lengths, batch, seed, 0

        def __len__(self):
            return len(self.lengths)

        def __iter__(self):
            self.epoch += 1
            return iter(length_grouped_order(self.lengths, self.batch, np.random.default_rng([self.seed, self.epoch])))

    class CountingTrainer(Trainer):
        """Trainer that counts the non-padding tokens it trains on (for tokens/s), and groups
        batches by length with `length_grouped_order` when length grouping is on."""
        token_counter: dict = {"tokens": 0}
        group_by_length: bool = True

        def _get_train_sampler(self, train_dataset=None):
            dataset = train_dataset if train_dataset is not None else self.train_dataset
            if not self.group_by_length or dataset is None:
                return super()._get_train_sampler(train_dataset)
            batch = self.args.train_batch_size * self.args.gradient_accumulation_steps
            seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
            return LengthGroupedOrder([len(x["input_ids"]) for x in dataset], batch, seed)

        def compute_loss(self, model, inputs, *args, **kwargs):
            if model.training:
                self.token_counter["tokens"] += int(inputs["attention_mask"].sum())
            return super().compute_loss(model, inputs, *args, **kwargs)

    return CountingTrainer


def build_trainer(cfg: TrainConfig, model, tokenizer, train_rows: list[dict], eval_rows: list[dict],
                  callbacks: list | None = None, counter: dict | None = None):
    """A Trainer for a (peft) model on tokenised examples, with the paper's settings."""
    import torch
    from transformers import TrainingArguments
    world = int(os.environ.get("WORLD_SIZE", "1"))
    accum = accumulation_steps(cfg.batch_size, cfg.micro_batch_size, world)
    steps_per_epoch = max(1, math.ceil(math.ceil(len(train_rows) / (cfg.micro_batch_size * world)) / accum))
    total = cfg.max_steps if cfg.max_steps > 0 else math.ceil(steps_per_epoch * cfg.epochs)
    eval_steps = cfg.eval_steps or max(1, total // 5)
    cuda = torch.cuda.is_available()
    bf16 = bool(cuda and torch.cuda.is_bf16_supported())
    args = TrainingArguments(
        output_dir=str(Path(cfg.out) / "trainer"), per_device_train_batch_size=cfg.micro_batch_size,
        per_device_eval_batch_size=cfg.micro_batch_size, gradient_accumulation_steps=accum,
        num_train_epochs=cfg.epochs, max_steps=cfg.max_steps if cfg.max_steps > 0 else -1,
        learning_rate=cfg.learning_rate, lr_scheduler_type="linear", warmup_steps=0, weight_decay=0.0,
        optim="adamw_torch_fused" if cuda else "adamw_torch", logging_steps=1, eval_strategy="steps" if eval_rows else "no",
        eval_steps=eval_steps, save_strategy="no", report_to=[], bf16=bf16, fp16=False,
        seed=cfg.seed, data_seed=cfg.seed, disable_tqdm=True,
        remove_unused_columns=False, dataloader_num_workers=0, use_cpu=not cuda,
        ddp_find_unused_parameters=False if world > 1 else None)
    from transformers.trainer_callback import PrinterCallback
    trainer_cls = _trainer_class()
    trainer_cls.token_counter = counter if counter is not None else {"tokens": 0}
    trainer_cls.group_by_length = cfg.group_by_length
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    trainer = trainer_cls(model=model, args=args, train_dataset=train_rows, eval_dataset=eval_rows or None,
                          data_collator=lambda feats: pad_batch(feats, pad_id), callbacks=callbacks or [])
    trainer.remove_callback(PrinterCallback)    # the progress callback says it once, in the log
    return trainer


def fit(cfg: TrainConfig, model, tokenizer, *, cancelled: Callable[[], bool] = lambda: False,
        progress: Callable[[dict], None] = lambda rec: None, run_id: int | None = None,
        subset_record: dict | None = None) -> tuple[object, dict]:
    """Train a LoRA adapter on `model` (a loaded base; LoRA layers are injected into it) and write
    the run folder. Returns (the peft model, metrics)."""
    from peft import get_peft_model
    cfg.check()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    rank0 = int(os.environ.get("RANK", "0")) == 0
    log_file = out / "train.log"

    def say(msg: str) -> None:
        if rank0:
            line = f"{_now()} {msg}"
            print(line, flush=True)
            with open(log_file, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

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
    config = {"run_id": run_id, "created": _now(), "subset": {
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
    if rank0:
        (out / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
        if trainer.args.output_dir and Path(trainer.args.output_dir).is_dir():
            import shutil
            shutil.rmtree(trainer.args.output_dir, ignore_errors=True)
    say(f"{metrics['status']} after {metrics['steps']} steps in {seconds:.1f} s; adapter saved in {out}")
    progress({"phase": "done", "step": metrics["steps"], "max_steps": metrics["max_steps"], "done": metrics["steps"],
              "total": metrics["max_steps"], "eval_loss": metrics["eval_loss"], "status": metrics["status"],
              "out": str(out)})
    return peft_model, metrics


def train(cfg: TrainConfig, *, cancelled: Callable[[], bool] = lambda: False,
          progress: Callable[[dict], None] = lambda rec: None, run_id: int | None = None,
          subset_record: dict | None = None) -> dict:
    """Load the base (train._model.load_base) and `fit`; the metrics."""
    from ._model import load_base
    progress({"phase": "loading", "base": cfg.base})
    model, tokenizer = load_base(cfg.base)
    model.train()
    return fit(cfg, model, tokenizer, cancelled=cancelled, progress=progress, run_id=run_id,
               subset_record=subset_record)[1]
# pragma: no mutate end
