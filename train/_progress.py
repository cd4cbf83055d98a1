"""A fine-tune's progress and cancel: the Trainer callback that writes progress.jsonl, reports the
run's progress and stops every rank at the step after a cancel. torch and transformers are imported
inside the function only."""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable


# DPO's logged figures (TRL's DPOTrainer), as progress.jsonl names them
DPO_KEYS = {"rewards/chosen": "rewards/chosen", "rewards/rejected": "rewards/rejected",
            "rewards/margins": "rewards/margins", "accuracy": "rewards/accuracies"}


# pragma: no mutate start (make mutate: the model and the Trainer, tested by test_train.py)
def iso_now() -> str:
    """The UTC time to the second, ISO 8601: the stamp of log and progress lines."""
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
            if state.is_world_process_zero:        # the card's bar from the start, before the first log
                progress({"phase": "train", "step": 0, "max_steps": state.max_steps, "done": 0,
                          "total": state.max_steps, "out": str(out)})

        def on_step_end(self, args, state, control, **kw):
            now = time.monotonic()
            stop = False
            if state.is_world_process_zero and (now - self.last_check >= 1.0 or state.global_step == 1):
                self.last_check = now
                stop = bool(cancelled())
                step, total = state.global_step, state.max_steps   # an ETA between logs (the first step's too)
                eta = (now - self.t0) / step * (total - step) if step and total else None
                progress({"phase": "train", "step": step, "max_steps": total, "done": step, "total": total,
                          "elapsed_s": round(now - self.t0, 3), "eta_s": round(eta, 1) if eta is not None else None,
                          "out": str(out)})
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
            rec = {"time": iso_now(), "step": step, "max_steps": total, "epoch": state.epoch,
                   "loss": logs.get("loss"), "eval_loss": logs.get("eval_loss"),
                   "learning_rate": logs.get("learning_rate"),
                   "tokens_per_s": rate if "loss" in logs else None, "tokens": tokens,
                   "elapsed_s": round(elapsed, 3), "eta_s": round(eta, 1) if eta is not None else None}
            rec.update({name: logs[key] for name, key in DPO_KEYS.items() if key in logs})
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


def finish_run(trainer, out: Path, metrics: dict, seconds: float, rank0: bool, say, progress) -> None:
    """The end of a training run (SFT or DPO): its metrics.json in the run's folder (rank 0), the
    Trainer's scratch folder removed, one line on how it ended, and the last progress record."""
    if rank0:
        (out / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
        if trainer.args.output_dir and Path(trainer.args.output_dir).is_dir():
                    shutil.rmtree(trainer.args.output_dir, ignore_errors=True)
    say(f"{metrics['status']} after {metrics['steps']} steps in {seconds:.1f} s; adapter saved in {out}")
    progress({"phase": "done", "step": metrics["steps"], "max_steps": metrics["max_steps"], "done": metrics["steps"],
              "total": metrics["max_steps"], "eval_loss": metrics["eval_loss"], "status": metrics["status"],
              "out": str(out)})
