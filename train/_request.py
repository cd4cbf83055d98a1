"""What `judgeaudit evaluate` is asked to do (EvalRequest): the runs and pool, the evaluation
judges, the held-out rule and the generation and calling settings."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ingest import UserError


# pragma: no mutate start (make mutate: the evaluation's settings, tested with the model by the slow tests)
@dataclass
class EvalRequest:
    runs: list[str]
    pool: str
    judges: list[str]
    db: str | os.PathLike | None = None
    study: str | None = None
    max_new_tokens: int = 256
    batch_size: int = 8
    heldout_share: float = 0.1
    heldout_seed: int = 0
    max_prompts: int | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    api_key_env: str | None = None
    flush_every: int = 64

    @property
    def study_name(self) -> str:
        return self.study or self.pool

    def check(self) -> None:
        if self.max_new_tokens < 1 or self.batch_size < 1 or self.concurrency < 1:
            raise UserError("--max-new-tokens, --batch-size and --concurrency must be at least 1")
        if not 0 < self.heldout_share < 1:
            raise UserError("--heldout-share must be in (0, 1)")
        if self.max_prompts is not None and self.max_prompts < 1:
            raise UserError("--max-prompts must be at least 1")
        if not self.judges:
            raise UserError("--judge: at least one evaluation judge")


# pragma: no mutate end
