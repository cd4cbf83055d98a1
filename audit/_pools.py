"""The pools in the database, and the candidates of one."""

from __future__ import annotations

import os

import polars as pl

from ._read import reading


def pools(db: str | os.PathLike | None) -> pl.DataFrame:
    """One row per pool. Columns: name, n_prompts, n_candidates."""
    with reading(db) as read:
        return read.frame("pools").select("name", "n_prompts", "n_candidates")


def pool_candidates(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per candidate. Columns: prompt_idx, prompt_id, candidate_id, position, k (candidates
    of its prompt), reference, model, split, response_chars."""
    with reading(db) as read:
        return read.frame("pool_candidates", pool_id=read.pool_id(pool))


PLACEHOLDER_SHARE = 0.5      # a pool whose prompts or responses are placeholders this often is flagged


def placeholder_texts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row: whether the pool's texts are placeholders (ko-arena-hard's prompts read
    "[... text not distributed]" and its responses are 63-character notices, so style features and
    training on them mean nothing). Columns: n_prompts, placeholder_prompts, n_responses,
    placeholder_responses, min_chars, max_chars (of the placeholder responses), example (one), flagged (at least
    PLACEHOLDER_SHARE of the prompts or of the responses are placeholders: one-line bracketed notices
    that the text is not there, the pattern in audit/sql/placeholder_texts.sql)."""
    with reading(db) as read:
        row = read.frame("placeholder_texts", pool_id=read.pool_id(pool))
    share = lambda k, n: pl.when(pl.col(n) > 0).then(pl.col(k) / pl.col(n)).otherwise(0.0)   # noqa: E731
    return row.with_columns(((share("placeholder_prompts", "n_prompts") >= PLACEHOLDER_SHARE)
                             | (share("placeholder_responses", "n_responses") >= PLACEHOLDER_SHARE)).alias("flagged"))
