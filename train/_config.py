"""A fine-tune's hyper-parameters (TrainConfig, whose defaults are the source paper's), the effective
batch's arithmetic, and the presets the Curate & Train page offers."""

from __future__ import annotations

from dataclasses import dataclass

from ingest import UserError
from ingest import settings


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
    method: str = "sft"                  # sft | dpo (train/_dpo.py: the file holds preference pairs)
    beta: float = 0.1                    # DPO's β
    report_to: str = "none"              # none | tensorboard | trackio | mlflow: the Trainer's loggers

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
        if self.method not in ("sft", "dpo"):
            raise UserError(f"--method {self.method}: choose sft or dpo")
        if self.beta <= 0:
            raise UserError("--beta must be positive")
        accumulation_steps(self.batch_size, self.micro_batch_size, settings.distributed()[0])


def accumulation_steps(batch_size: int, micro_batch_size: int, world: int = 1) -> int:
    """Micro-batches accumulated per optimiser step so that micro batch x steps x processes is the
    effective batch exactly; a batch that does not divide is refused rather than silently changed."""
    per_step = micro_batch_size * world
    if batch_size % per_step:
        raise UserError(f"--batch-size {batch_size} is not a multiple of --micro-batch-size {micro_batch_size}"
                        + (f" x {world} processes" if world > 1 else "")
                        + f" ({per_step}): choose a batch size that is, or a smaller micro batch")
    return batch_size // per_step


# The page's presets, by name: the source paper's settings (TrainConfig's defaults, with max_steps 0:
# train by epochs), and a quick one that finishes on the bundled model in a few minutes on a 2-core
# CPU (the same LoRA; 5 steps of 4 examples capped at 256 tokens).
PRESET_FIELDS = ("epochs", "max_steps", "learning_rate", "batch_size", "micro_batch_size", "lora_r", "lora_alpha",
                 "lora_dropout", "max_length")
PAPER = {**{name: getattr(TrainConfig, name) for name in PRESET_FIELDS}, "max_steps": 0}
QUICK = {**PAPER, "max_steps": 5, "batch_size": 4, "micro_batch_size": 2, "max_length": 256}
PRESETS = {"quick": QUICK, "paper": PAPER}
