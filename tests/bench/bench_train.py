"""Fine-tuning throughput on the bundled model (SmolLM2-135M, CPU unless a GPU is visible).

    python tests/bench/bench_train.py [--examples 96] [--steps 3] [--repeats 3] [--max-length 256]

Prints, for a subset built from the bundled MT-Bench demo pool (one response per prompt):
- non-padding tokens/s of `transformers.Trainer` (LoRA, the paper's settings, length grouping);
- the padding share of the training batches with and without length grouping;
- the ratio of the Trainer's tokens/s to a bare forward + backward + optimiser step over batches
  of the same sampler and collator on the same model, measured in the same process (target: >= 0.8, i.e. at most 20%
  Trainer overhead), and the padding share with grouping (target: <= 10%).
Medians over --repeats; each repeat runs --steps optimiser steps (x accumulation micro-batches).

    python tests/bench/bench_train.py --dpo [--examples 32] [--steps 3] [--repeats 3] [--max-length 256]

DPO instead (train/_dpo.py): pairs from the same pool (per prompt, its first two listed responses as
chosen and rejected), TRL's DPOTrainer's non-padding tokens/s (chosen and rejected sequences) against
a bare loop over the same collated batches: the reference's forward (adapter disabled, no grad), the
policy's forward + backward, the sigmoid DPO loss and the optimiser step (target: >= 0.8).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from train._config import TrainConfig  # noqa: E402
from train._examples import tokenize  # noqa: E402
from train._trainer import build_trainer, lora_config  # noqa: E402


def demo_rows(n: int) -> list[dict]:
    """One response per prompt of the demo MT-Bench pool (the first listed), as TRL rows."""
    seen, rows = set(), []
    with open(ROOT / "ingest" / "demo" / "mtbench-pool.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            key = r["prompt_id"]
            if key in seen:
                continue
            seen.add(key)
            rows.append({"prompt": [{"role": "user", "content": r["prompt"]}],
                         "completion": [{"role": "assistant", "content": r["response"]}]})
            if len(rows) == n:
                break
    return rows


def demo_pairs(n: int) -> list[dict]:
    """Per prompt of the demo MT-Bench pool, its first two listed responses as chosen and rejected."""
    by: dict[str, list] = {}
    with open(ROOT / "ingest" / "demo" / "mtbench-pool.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            by.setdefault(r["prompt_id"], []).append(r)
    rows = [{"prompt": [{"role": "user", "content": c[0]["prompt"]}],
             "chosen": [{"role": "assistant", "content": c[0]["response"]}],
             "rejected": [{"role": "assistant", "content": c[1]["response"]}]} for c in by.values() if len(c) >= 2]
    return rows[:n]


def dpo_bench(args) -> None:
    """DPOTrainer's tokens/s against the bare loop (module docstring), medians over --repeats."""
    import torch
    import torch.nn.functional as F
    from transformers import TrainerCallback

    from train._dpo import dpo_trainer
    from train._model import load_base
    t = time.perf_counter()
    model, tok = load_base(args.base)
    print(f"loaded {args.base} in {time.perf_counter() - t:.1f} s on {next(model.parameters()).device}, "
          f"{torch.get_num_threads()} threads")
    rows = demo_pairs(args.examples)
    tmp = Path(tempfile.mkdtemp(prefix="bench_dpo_"))
    cfg = TrainConfig(subset="-", base=args.base, out=str(tmp / "run"), max_steps=args.steps, eval_share=0,
                      batch_size=args.batch_size, micro_batch_size=args.micro_batch_size, max_length=args.max_length,
                      method="dpo")
    model.config.use_cache = False

    class Clock(TrainerCallback):
        def on_train_begin(self, a, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_train_end(self, a, state, control, **kw):
            self.t1 = time.perf_counter()

    clock, counter = Clock(), {"tokens": 0}
    trainer = dpo_trainer(cfg, model, tok, rows, [], [clock], counter)
    policy = trainer.model
    accum = trainer.args.gradient_accumulation_steps
    device = next(policy.parameters()).device
    bf16 = trainer.args.bf16

    def logps(ids, mask, completion):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            logits = policy(input_ids=ids, attention_mask=mask).logits[:, :-1]
        lp = torch.log_softmax(logits.float(), -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        return (lp * completion[:, 1:]).sum(1)

    def bare(batches) -> float:
        opt = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=cfg.learning_rate)
        policy.train()
        t0 = time.perf_counter()
        for i, b in enumerate(batches):
            ids, mask, comp = (b[k].to(device) for k in ("input_ids", "attention_mask", "completion_mask"))
            with torch.no_grad(), policy.disable_adapter():
                ref_c, ref_r = logps(ids, mask, comp).chunk(2)
            pol_c, pol_r = logps(ids, mask, comp).chunk(2)
            loss = -F.logsigmoid(cfg.beta * ((pol_c - ref_c) - (pol_r - ref_r))).mean() / accum
            loss.backward()
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    dpo_rates, bare_rates = [], []
    for rep in range(args.repeats):
        batches = []
        for b in trainer.get_train_dataloader():
            batches.append(b)
            if len(batches) == args.steps * accum:
                break
        tokens = sum(int(b["attention_mask"].sum()) for b in batches)
        bare_s = bare(batches) if rep % 2 else None
        counter["tokens"] = 0
        trainer.train()
        if bare_s is None:
            bare_s = bare(batches)
        dpo_rates.append(counter["tokens"] / (clock.t1 - clock.t0))
        bare_rates.append(tokens / bare_s)
        print(f"repeat {rep + 1} ({'bare' if rep % 2 else 'DPOTrainer'} first): DPOTrainer {dpo_rates[-1]:.2f} "
              f"tokens/s, bare {bare_rates[-1]:.2f} tokens/s ({tokens} non-padding tokens in {len(batches)} "
              "micro-batches of chosen + rejected)", flush=True)
    ratios = [a / b for a, b in zip(dpo_rates, bare_rates)]
    print(f"\nDPO non-padding tokens/s (DPOTrainer, median): {statistics.median(dpo_rates):.2f}")
    print(f"bare reference forward + policy forward+backward+step tokens/s (median): {statistics.median(bare_rates):.2f}")
    print(f"ratio DPOTrainer / bare: median {statistics.median(ratios):.3f} (per repeat: "
          f"{', '.join(f'{r:.3f}' for r in ratios)}); target >= 0.8")
    if torch.cuda.is_available():
        print(f"GPU {torch.cuda.get_device_name()}: precision {'bf16' if bf16 else 'fp32'}, "
              f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


def padding_share(batches) -> float:
    real = sum(int(b["attention_mask"].sum()) for b in batches)
    return 1 - real / sum(b["attention_mask"].numel() for b in batches)


def padding_only(args) -> None:
    """Padding shares from the tokenizer and the samplers alone: length grouping (ours) against a
    random order, over one epoch of micro-batches."""
    import numpy as np

    from train._model import load_tokenizer
    from train._grouping import length_grouped_order
    tok = load_tokenizer(args.base)
    for n in (args.examples, 80):
        lengths = [len(e["input_ids"]) for e in tokenize(demo_rows(n), tok, args.max_length)[0]]
        shares = {}
        for name, order in (("grouped", length_grouped_order(lengths, args.batch_size, np.random.default_rng(0))),
                            ("random", np.random.default_rng(0).permutation(len(lengths)).tolist())):
            real = total = 0
            for k in range(0, len(order), args.micro_batch_size):
                batch = [lengths[i] for i in order[k:k + args.micro_batch_size]]
                real, total = real + sum(batch), total + max(batch) * len(batch)
            shares[name] = 1 - real / total
        print(f"{len(lengths)} examples (cap {args.max_length}): padding {100 * shares['grouped']:.1f}% with length "
              f"grouping, {100 * shares['random']:.1f}% without (micro-batch {args.micro_batch_size})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=96)
    ap.add_argument("--steps", type=int, default=3, help="optimiser steps per repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--micro-batch-size", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--base", default="local:smollm2")
    ap.add_argument("--padding-only", action="store_true", help="only the padding shares (no model, no training)")
    ap.add_argument("--dpo", action="store_true", help="DPO's throughput instead (DPOTrainer against the bare loop)")
    args = ap.parse_args()
    if args.padding_only:
        return padding_only(args)
    if args.dpo:
        return dpo_bench(args)

    import torch
    from peft import get_peft_model
    from transformers import TrainerCallback

    from train._model import load_base
    t = time.perf_counter()
    model, tok = load_base(args.base)
    print(f"loaded {args.base} in {time.perf_counter() - t:.1f} s on {next(model.parameters()).device}, "
          f"{torch.get_num_threads()} threads")
    examples, stats = tokenize(demo_rows(args.examples), tok, args.max_length)
    print(f"{len(examples)} examples, {stats['n_tokens']} tokens, {100 * stats['share_cut']:.0f}% cut at "
          f"{args.max_length}")
    tmp = Path(tempfile.mkdtemp(prefix="bench_train_"))

    def cfg(grouped=True, steps=args.steps):
        return TrainConfig(subset="-", base=args.base, out=str(tmp / "run"), max_steps=steps, eval_share=0,
                           batch_size=args.batch_size, micro_batch_size=args.micro_batch_size,
                           max_length=args.max_length, group_by_length=grouped)

    # padding over a whole epoch, with and without length grouping
    model.config.use_cache = False
    peft_model = get_peft_model(model, lora_config(cfg(), model))
    pad = {g: padding_share(list(build_trainer(cfg(g), peft_model, tok, examples, []).get_train_dataloader()))
           for g in (True, False)}

    class Clock(TrainerCallback):
        """on_train_begin .. on_train_end, and each optimiser step's own time (from the end of the
        previous step: the data loading and the callbacks between steps count)."""
        def on_train_begin(self, a, state, control, **kw):
            self.t0 = self.t_step = time.perf_counter()
            self.steps = []

        def on_step_end(self, a, state, control, **kw):
            now = time.perf_counter()
            self.steps.append(now - self.t_step)
            self.t_step = now

        def on_train_end(self, a, state, control, **kw):
            self.t1 = time.perf_counter()

    print(f"padding share: {100 * pad[True]:.1f}% with length grouping, {100 * pad[False]:.1f}% without "
          f"(micro-batch {args.micro_batch_size}, {len(examples)} examples)", flush=True)
    def bare(batches, accum, bf16) -> float:
        """The same batches through forward + backward + AdamW step, nothing else; seconds."""
        opt = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=2e-4)
        peft_model.train()
        device = next(peft_model.parameters()).device
        t0 = time.perf_counter()
        for i, b in enumerate(batches):
            b = {k: v.to(device) for k, v in b.items()}
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                loss = peft_model(**b).loss / accum
            loss.backward()
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    trainer_rates, bare_rates, step_rates = [], [], []
    for rep in range(args.repeats):
        clock, counter = Clock(), {"tokens": 0}
        trainer = build_trainer(cfg(), peft_model, tok, examples, [], [clock], counter)
        accum = trainer.args.gradient_accumulation_steps
        batches = []
        for b in trainer.get_train_dataloader():     # batches as the Trainer makes them (its own draw
            batches.append(b)                        # may order them differently: each side counts its own)
            if len(batches) == args.steps * accum:
                break
        tokens = sum(int(b["attention_mask"].sum()) for b in batches)
        # which side runs first alternates, so that neither always finds the caches warm
        bare_s = bare(batches, accum, trainer.args.bf16) if rep % 2 else None
        trainer.train()
        if bare_s is None:
            bare_s = bare(batches, accum, trainer.args.bf16)
        trainer_rates.append(counter["tokens"] / (clock.t1 - clock.t0))
        step_rates.append(counter["tokens"] / sum(clock.steps))
        bare_rates.append(tokens / bare_s)
        print(f"repeat {rep + 1} ({'bare' if rep % 2 else 'Trainer'} first): Trainer {trainer_rates[-1]:.2f} "
              f"tokens/s over the whole train() ({step_rates[-1]:.2f} over its steps: "
              f"{', '.join(f'{x:.2f}' for x in clock.steps)} s; {clock.t1 - clock.t0 - sum(clock.steps):.2f} s "
              f"outside them), bare {bare_rates[-1]:.2f} tokens/s "
              f"({tokens} non-padding tokens in {len(batches)} micro-batches)", flush=True)

    tr, br = statistics.median(trainer_rates), statistics.median(bare_rates)
    ratios = [a / b for a, b in zip(trainer_rates, bare_rates)]
    print(f"\nnon-padding tokens/s (Trainer, median): {tr:.2f}")
    print(f"bare forward+backward+step tokens/s (median): {br:.2f}")
    print(f"ratio Trainer / bare: median {statistics.median(ratios):.3f} (per repeat: "
          f"{', '.join(f'{r:.3f}' for r in ratios)}); target >= 0.8")
    step_ratios = [a / b for a, b in zip(step_rates, bare_rates)]
    print(f"ratio over the Trainer's steps only (no start-up or wind-down): median {statistics.median(step_ratios):.3f}")
    print(f"padding share: {100 * pad[True]:.1f}% with length grouping, {100 * pad[False]:.1f}% without "
          f"(micro-batch {args.micro_batch_size}); target <= 10% with grouping")
    if torch.cuda.is_available():
        print(f"GPU {torch.cuda.get_device_name()}: precision {'bf16' if trainer.args.bf16 else 'fp32'}, "
              f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
