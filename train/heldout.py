"""Which prompts are held out from curation and answered in evaluation (the split of
docs/glossary.md#what-is-judged): the prompts a pool marks (any candidate with split = 'heldout'); in a
pool that marks none, a seeded share set aside: the round(share x n) prompts (at least one, halves up)
with the smallest key blake2b('heldout|SEED|PROMPT_ID'). The key depends on the prompt id alone, so the
choice does not move when rows are reordered, and curation and evaluation pick the same prompts.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import polars as pl

SHARE = 0.1
SEED = 0


# the last share's answer, with the prompt ids it was for (a pool of 2.5M prompts takes seconds of keys)
_LAST: dict = {}


def _key(prompt_id: str, seed: int) -> bytes:
    return hashlib.blake2b(f"heldout|{seed}|{prompt_id}".encode(), digest_size=8).digest()


def heldout_count(n_prompts: int, share: float = SHARE) -> int:
    """How many prompts a pool of n_prompts that marks none sets aside: round(share x n), halves up, at
    least one (none of an empty pool)."""
    return min(n_prompts, max(1, math.floor(share * n_prompts + 0.5))) if n_prompts else 0


def heldout_prompt_ids(prompts: pl.DataFrame, share: float = SHARE, seed: int = SEED) -> tuple[list[str], dict]:
    """(held-out prompt ids, the rule used). `prompts` has prompt_id and marked_heldout (bool)."""
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1), not {share}")
    marked = prompts.filter(pl.col("marked_heldout").fill_null(False))["prompt_id"].to_list()
    if marked:
        return sorted(marked), {"rule": "split", "n": len(marked)}
    column = prompts["prompt_id"]
    last = _LAST.get((share, seed))
    if last is not None and last[0].len() == column.len() and last[0].equals(column):
        return list(last[1]), dict(last[2])      # curation asks twice (its picks, its rule): one pass of keys
    ids = column.to_list()
    n = heldout_count(len(ids), share)
    prefix = f"heldout|{seed}|".encode()
    blake = hashlib.blake2b
    keys = b"".join([blake(prefix + p.encode(), digest_size=8).digest() for p in ids])   # = _key(p, seed)
    # the 8-byte keys compared as bytes = as big-endian integers; a stable sort, as sorted() was
    order = np.argsort(np.frombuffer(keys, dtype=">u8"), kind="stable")[:n]
    chosen = sorted(ids[i] for i in order.tolist())
    rule = {"rule": "share", "share": share, "seed": seed, "n": n}
    _LAST.clear()
    _LAST[(share, seed)] = (column, tuple(chosen), dict(rule))
    return chosen, rule
