"""Downstream evaluation studies as stored (schema 007; ingest.store writes them): the prompts a
study answers, the answers and outcomes so far, and the studies of the database."""

from __future__ import annotations

import os

import polars as pl

from ._read import AuditError, reading


def eval_prompts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """Every prompt of the pool: prompt_idx, prompt_id, prompt, marked_heldout, ref_idx, ref_answer."""
    with reading(db) as read:
        return read.frame("eval_prompts", pool_id=read.pool_id(pool))


def stored_generations(db: str | os.PathLike | None, study_id: int) -> pl.DataFrame:
    """The study's answers so far: condition, seed, prompt_idx, answer, ref_idx."""
    with reading(db) as read:
        return read.frame("stored_generations", study_id=study_id)


def judged(db: str | os.PathLike | None, study_id: int, judge_id: int) -> pl.DataFrame:
    """What this judge has stored, one row per (condition, seed, prompt_idx): raw_, value_, status_
    and error_ of both orders (ab, ba); an order whose call failed has status 'failed'."""
    with reading(db) as read:
        return read.frame("judged", study_id=study_id, judge_id=judge_id)


def _study_frame(db, study: str, name: str) -> pl.DataFrame:
    with reading(db) as read:
        if read.frame("study_exists", study=study).height == 0:
            raise AuditError(f"--study {study}: no such evaluation study (run `judgeaudit evaluate` first)")
        return read.frame(name, study=study)


def study_outcomes(db: str | os.PathLike | None, study: str) -> pl.DataFrame:
    """The study's outcome rows as `contrasts` reads them: condition, seed, prompt_id, judge,
    outcome, answer_len, ref_len, markdown."""
    return _study_frame(db, study, "study_outcomes").with_columns(
        pl.col("seed").cast(pl.Int64), pl.col("answer_len").cast(pl.Int64), pl.col("ref_len").cast(pl.Int64))


def study_generations(db: str | os.PathLike | None, study: str) -> pl.DataFrame:
    """The study's answers: condition, seed, train_run, base_model, prompt_id, prompt, answer,
    reference_answer, answer_len, ref_len, markdown, tokens_out, truncated, outcomes (JSON)."""
    return _study_frame(db, study, "study_generations")


def studies(db: str | os.PathLike | None) -> pl.DataFrame:
    """study, pool, created_at, n_conditions, n_prompts, n_generations, n_outcomes."""
    with reading(db) as read:
        return read.frame("studies")
