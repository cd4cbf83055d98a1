"""The Trainer of a fine-tune: the batch collator, LoRA on the model's projections, and
transformers' Trainer with the paper's settings, counting the tokens it trains on and grouping
batches by length. torch, peft and transformers are imported inside the functions only."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ._config import TrainConfig, accumulation_steps
from ._examples import IGNORE
from ._grouping import length_grouped_order
from ingest import settings


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


def _trainer_class():
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
    world = settings.distributed()[0]
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
        eval_steps=eval_steps, save_strategy="no", report_to=[] if cfg.report_to == "none" else [cfg.report_to], bf16=bf16, fp16=False,
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


# pragma: no mutate end
