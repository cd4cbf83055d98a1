"""Downstream evaluation in the store (schema 007): studies, generated answers and judged outcomes.

The only module that writes those tables. Each write is one short transaction; re-running an
evaluation skips answers and outcomes already stored, and a failed judge call is replaced by the
next attempt, never a parsed one.
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources

import polars as pl

from . import _db
from ._errors import UserError
from .store import _next_id, pool_id

GENERATION_SCHEMA = {"condition": pl.String, "seed": pl.Int64, "train_run": pl.String, "base_model": pl.String,
                     "prompt_idx": pl.Int64, "answer": pl.String, "answer_len": pl.Int64, "ref_idx": pl.Int64,
                     "ref_len": pl.Int64, "markdown": pl.Boolean, "tokens_out": pl.Int64,
                     "truncated": pl.Boolean}
EVALUATION_SCHEMA = {"condition": pl.String, "seed": pl.Int64, "prompt_idx": pl.Int64, "judge_id": pl.Int64,
                     "raw_ab": pl.String, "value_ab": pl.Float64, "status_ab": pl.String, "error_ab": pl.String,
                     "raw_ba": pl.String, "value_ba": pl.Float64, "status_ba": pl.String, "error_ba": pl.String,
                     "outcome": pl.Float64}
KEY = ["condition", "seed", "prompt_idx"]


@cache
def _sql(name: str) -> str:
    return (resources.files("ingest") / "sql" / f"{name}.sql").read_text(encoding="utf-8")


def _pool(con, pool: str) -> int:
    pid = pool_id(con, pool)
    if pid is None:
        raise UserError(f"no pool named '{pool}' (see `judgeaudit pools`)")
    return pid


def eval_prompts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """Every prompt of the pool: prompt_idx, prompt_id, prompt, marked_heldout, ref_idx, ref_answer."""
    with _db.reader(db) as con:
        return _db.frame(con, _sql("eval_prompts"), {"pool_id": _pool(con, pool)})


def ensure_study(db: str | os.PathLike | None, name: str, pool: str, heldout: dict) -> int:
    """The study's id, created on first use. A name already used for another pool, or with another
    held-out rule (heldout's rule, share and seed; n is not compared), is refused."""
    with _db.writer(db) as con, _db.transaction(con):
        pid = _pool(con, pool)
        row = _db.one(con, "SELECT study_id, pool_id, heldout FROM studies WHERE name = $n", {"n": name})
        if row:
            if row[1] != pid:
                raise UserError(f"--study {name}: that study belongs to another pool; choose another name")
            stored = json.loads(row[2]) if isinstance(row[2], str) else (row[2] or {})
            if _rule(stored) != _rule(heldout):
                raise UserError(f"--study {name}: that study's held-out rule is {_rule(stored)}, not "
                                f"{_rule(heldout)}; use the same --heldout-share/--heldout-seed or another name")
            return row[0]
        sid = _next_id(con, "studies", "study_id")
        con.execute("INSERT INTO studies (study_id, name, pool_id, heldout) VALUES ($id, $n, $p, $h)",
                    {"id": sid, "n": name, "p": pid, "h": json.dumps(heldout)})
        return sid


def _rule(heldout: dict) -> dict:
    return {k: heldout.get(k) for k in ("rule", "share", "seed") if heldout.get(k) is not None}


def eval_judge_id(db: str | os.PathLike | None, spec, decoding: dict) -> int:
    """The evaluation judge's id in `judges`, bound to its identity as scoring binds it (a name
    already standing for another judge is refused)."""
    from .runner import identity_decoding
    from .store import ensure_judge, judge_identity
    identity = judge_identity(spec.provider, spec.model, spec.endpoint,
                              params=spec.settings if spec.provider == "fake" else None,
                              decoding=identity_decoding(decoding))
    with _db.writer(db) as con, _db.transaction(con):
        return ensure_judge(con, spec.name, spec.provider, spec.model, spec.endpoint, spec.settings, identity)


def stored_generations(db: str | os.PathLike | None, study_id: int) -> pl.DataFrame:
    """The study's answers so far: condition, seed, prompt_idx, answer, ref_idx."""
    with _db.reader(db) as con:
        return _db.frame(con, "SELECT condition, seed::BIGINT AS seed, prompt_idx::BIGINT AS prompt_idx, answer, "
                              "ref_idx FROM generations WHERE study_id = $s", {"s": study_id})


def judged(db: str | os.PathLike | None, study_id: int, judge_id: int) -> pl.DataFrame:
    """What this judge has stored, one row per (condition, seed, prompt_idx): raw_, value_, status_
    and error_ of both orders (ab, ba); an order whose call failed has status 'failed'."""
    with _db.reader(db) as con:
        return _db.frame(con, "SELECT condition, seed::BIGINT AS seed, prompt_idx::BIGINT AS prompt_idx, "
                              "raw_ab, value_ab, status_ab, error_ab, raw_ba, value_ba, status_ba, error_ba "
                              "FROM evaluations WHERE study_id = $s AND judge_id = $j",
                         {"s": study_id, "j": judge_id})


def insert_generations(db: str | os.PathLike | None, study_id: int, rows: list[dict],
                       job_id: int | None = None) -> int:
    """Store answers (one transaction); answers already stored for a key are kept."""
    if not rows:
        return 0
    frame = pl.DataFrame(rows, schema=GENERATION_SCHEMA).with_columns(
        pl.lit(study_id, pl.Int64).alias("study_id"), pl.lit(job_id, pl.Int64).alias("job_id"))
    with _db.writer(db) as con, _db.transaction(con):
        con.register("gen_df", frame.to_arrow())
        count = "SELECT count(*) FROM generations WHERE study_id = $s"
        before = _db.one(con, count, {"s": study_id})[0]
        con.execute("INSERT INTO generations (study_id, condition, seed, train_run, base_model, prompt_idx, answer, "
                    "answer_len, ref_idx, ref_len, markdown, tokens_out, truncated, job_id) "
                    "SELECT study_id, condition, seed, train_run, base_model, prompt_idx, answer, answer_len, "
                    "ref_idx, ref_len, markdown, tokens_out, truncated, job_id FROM gen_df "
                    "ON CONFLICT DO NOTHING")
        after = _db.one(con, count, {"s": study_id})[0]
    return after - before


def insert_evaluations(db: str | os.PathLike | None, study_id: int, rows: list[dict],
                       job_id: int | None = None) -> int:
    """Store outcomes (one transaction), replacing a stored row only where it had a failed call."""
    if not rows:
        return 0
    frame = pl.DataFrame(rows, schema=EVALUATION_SCHEMA).with_columns(
        pl.lit(study_id, pl.Int64).alias("study_id"), pl.lit(job_id, pl.Int64).alias("job_id"))
    with _db.writer(db) as con, _db.transaction(con):
        con.register("eval_df", frame.to_arrow())
        con.execute("DELETE FROM evaluations e USING eval_df n WHERE e.study_id = n.study_id "
                    "AND e.condition = n.condition AND e.seed = n.seed AND e.prompt_idx = n.prompt_idx "
                    "AND e.judge_id = n.judge_id AND (e.status_ab = 'failed' OR e.status_ba = 'failed')")
        con.execute("INSERT INTO evaluations (study_id, condition, seed, prompt_idx, judge_id, raw_ab, value_ab, "
                    "status_ab, error_ab, raw_ba, value_ba, status_ba, error_ba, outcome, job_id) "
                    "SELECT study_id, condition, seed, prompt_idx, judge_id, raw_ab, value_ab, status_ab, error_ab, "
                    "raw_ba, value_ba, status_ba, error_ba, outcome, job_id FROM eval_df ON CONFLICT DO NOTHING")
    return frame.height


def _study_frame(db, study: str, query: str) -> pl.DataFrame:
    with _db.reader(db) as con:
        if _db.one(con, "SELECT 1 FROM studies WHERE name = $n", {"n": study}) is None:
            raise UserError(f"--study {study}: no such evaluation study (run `judgeaudit evaluate` first)")
        return _db.frame(con, _sql(query), {"study": study})


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
    with _db.reader(db) as con:
        return _db.frame(con, _sql("studies"))
