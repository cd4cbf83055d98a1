"""Curation, fine-tuning and downstream evaluation. `curate` is pure polars; fine-tuning (torch,
peft, transformers) will live in its own module and import those only inside its functions."""

from .curate import preview, select_top

__all__ = ["preview", "select_top"]
