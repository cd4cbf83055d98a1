"""Curation, fine-tuning and downstream evaluation. `curate` is pure polars; the model modules
(`finetune`, `_trainer`, `_progress`, `_model`) import torch, peft and transformers inside their
functions only, so importing this package loads none of them."""

from ._config import PRESETS
from .background import run_training
from .curate import POLICIES, curate, keep_count, overlap, select, to_messages

__all__ = ["POLICIES", "PRESETS", "curate", "keep_count", "overlap", "run_training", "select",
           "to_messages"]
from ._pairs_file import make_pairs, pair_cell, pair_table, read_rule
from .pairs import LOST, comparative_pairs, pointwise_pairs

__all__ += ["LOST", "comparative_pairs", "make_pairs", "pair_cell", "pair_table", "pointwise_pairs", "read_rule"]
