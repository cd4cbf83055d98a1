"""Curation, fine-tuning and downstream evaluation. `curate` is pure polars; `finetune` and
`_model` import torch, peft and transformers inside their functions only."""

from .curate import POLICIES, curate, keep_count, overlap, preview, select, to_messages

__all__ = ["POLICIES", "curate", "keep_count", "overlap", "preview", "select", "to_messages"]
