"""Curation, fine-tuning and downstream evaluation. `curate` is pure polars; the model modules
(`finetune`, `_trainer`, `_progress`, `_model`) import torch, peft and transformers inside their
functions only, so importing this package loads none of them."""

from ._config import PRESETS
from .align import align
from ._pairs_file import make_pairs, pair_cell, pair_table, read_rule
from .background import run_training
from .curate import POLICIES, curate, keep_count, overlap, select, to_messages
from .pairs import LOST, comparative_pairs, pointwise_pairs

__all__ = ["LOST", "POLICIES", "PRESETS", "align", "comparative_pairs", "curate", "keep_count", "make_pairs", "overlap",
           "pair_cell", "pair_table", "pointwise_pairs", "read_rule", "run_training", "select", "to_messages"]
