"""Reading and validating a candidate pool file (docs/files.md#pool-file), vectorised with polars.

Returns frames ready for the store (ingest.store.import_pool): prompts (prompt_idx, prompt_id,
prompt, category) and candidates (cand_idx, prompt_idx, candidate_id, position, response, reference, model,
split).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from .._errors import UserError
from ._tables import Table, first_repeat, first_row, read_table, text_column

REQUIRED = ("prompt_id", "prompt", "candidate_id", "response")
SPLITS = ("pool", "heldout")


@dataclass
class PoolData:
    prompts: pl.DataFrame
    candidates: pl.DataFrame
    layout: str        # 'rows' | 'ultrafeedback'
    table: Table


def _ultrafeedback_rows(t: Table, offset: int = 0) -> Table:
    """One row per prompt with a `completions` list -> one row per candidate; a prompt without an
    id is named uf-N by its row N of the file (`offset`: the file's rows before this table's)."""
    df = t.frame.with_row_index("_row")
    dtype = df.schema["completions"]
    if not isinstance(dtype, pl.List) or not isinstance(dtype.inner, pl.Struct):
        bad = first_row(df["completions"].is_not_null())
        raise UserError(f"{t.at(bad or 0, 'completions')}: must be a list of objects "
                        "(model, response, overall_score or fine-grained ratings)")
    if "prompt_id" in df.columns:
        pid = pl.col("prompt_id").cast(pl.String)
    elif "id" in df.columns:
        pid = pl.col("id").cast(pl.String)
    else:
        pid = pl.lit("uf-") + (pl.col("_row") + offset + 1).cast(pl.String)
    # a prompt's category: its `category`, else UltraFeedback's `source` (the data set it came from)
    cat = next((name for name in ("category", "source") if name in df.columns), None)
    if cat is not None and isinstance(df.schema[cat], (pl.List, pl.Struct, pl.Array)):
        raise UserError(f"{t.at(first_row(df[cat].is_not_null()) or 0, cat)}: must be text, not {df.schema[cat]}")
    category = pl.col(cat).cast(pl.String) if cat is not None else pl.lit(None, pl.String)
    df = df.select(pid.alias("prompt_id"), pl.col("instruction").cast(pl.String).alias("prompt"),
                   "_row", category.alias("category"), "completions").explode("completions")
    df = df.filter(pl.col("completions").is_not_null())
    if df.height == 0:
        raise UserError(f"{t.path}: no completions in any row")
    item = dtype.inner
    fields = {f.name for f in item.fields}
    c = pl.col("completions")
    if "response" not in fields:
        raise UserError(f"{t.at(0, 'completions')}: completion items need a 'response'")
    ref = pl.lit(None, dtype=pl.Float64)
    if "annotations" in fields and isinstance(item.to_schema()["annotations"], pl.Struct):
        aspects = item.to_schema()["annotations"].fields
        ratings = [c.struct.field("annotations").struct.field(a.name).struct.field("Rating")
                   .cast(pl.String).cast(pl.Float64, strict=False)
                   for a in aspects if isinstance(a.dtype, pl.Struct)
                   and "Rating" in [f.name for f in a.dtype.fields]]
        if ratings:
            ref = pl.mean_horizontal(ratings)
    for name in ("fine-grained_score", "overall_score"):   # later entries take precedence
        if name in fields:
            ref = pl.coalesce(c.struct.field(name).cast(pl.Float64, strict=False), ref)
    model = c.struct.field("model").cast(pl.String) if "model" in fields else pl.lit(None, pl.String)
    out = df.select("prompt_id", "prompt", "_row", "category",
                    c.struct.field("response").cast(pl.String).alias("response"),
                    ref.alias("reference"), model.alias("model"))
    idx = pl.int_range(pl.len()).over("_row")
    unique_models = (pl.col("model").n_unique().over("_row") == pl.len().over("_row")) & \
        pl.col("model").is_not_null().all().over("_row")
    out = out.with_columns(pl.when(unique_models).then(pl.col("model"))
                           .otherwise(pl.lit("c") + idx.cast(pl.String)).alias("candidate_id"))
    lines = t.lines[out["_row"].to_numpy()]
    named = {"category": cat} if cat is not None and cat != "category" else {}
    return Table(t.path, t.kind, out.drop("_row"), lines, t.raw, {**t.fields, **named})


def pool_table(t: Table, offset: int = 0) -> tuple[Table, str]:
    """(the table with one row per candidate, its layout): an UltraFeedback file's rows (one per
    prompt) unrolled; `offset`: rows of the file before this table's (their ids count on)."""
    cols = set(t.frame.columns)
    if {"instruction", "completions"} <= cols and "response" not in cols:
        return _ultrafeedback_rows(t, offset), "ultrafeedback"
    return t, "rows"


def pool_rows(t: Table) -> pl.DataFrame:
    """The table's candidates checked one by one (required fields, ids, reference, split), as
    (_row, prompt_id, prompt, candidate_id, response, reference, model, split, category); a category
    is text, stripped, an empty one none."""
    cols = set(t.frame.columns)
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        head = f"{t.path}, line 1" if t.kind == "csv" else str(t.path)
        raise UserError(f"{head}: missing required field(s) {', '.join(repr(m) for m in missing)} "
                        f"(found: {', '.join(sorted(cols)) or 'none'})")
    text = {name: text_column(t, name) for name in REQUIRED}
    for name in REQUIRED:
        bad = first_row(text[name].is_null())
        if bad is not None:
            raise UserError(f"{t.at(bad, name)}: missing or null")
    for name in ("prompt_id", "candidate_id"):
        bad = first_row(text[name].str.strip_chars() == "")
        if bad is not None:
            raise UserError(f"{t.at(bad, name)}: empty id")
    n = t.frame.height
    reference = (_reference(t) if "reference" in cols
                 else pl.repeat(None, n, dtype=pl.Float64, eager=True).alias("reference"))
    model = text_column(t, "model")
    split = text_column(t, "split").fill_null("pool")
    bad = first_row(~split.is_in(SPLITS))
    if bad is not None:
        raise UserError(f"{t.at(bad, 'split')}: must be 'pool' or 'heldout', not {split[bad]!r}")
    category = text_column(t, "category").str.strip_chars().replace("", None)
    return pl.DataFrame({**text, "reference": reference, "model": model, "split": split,
                         "category": category}).with_row_index("_row")


def _reference(t: Table) -> pl.Series:
    col = t.frame["reference"]
    if col.dtype == pl.String:
        cast = col.str.strip_chars().cast(pl.Float64, strict=False)
        bad = first_row(col.is_not_null() & (col.str.strip_chars() != "") & cast.is_null())
        if bad is not None:
            raise UserError(f"{t.at(bad, 'reference')}: not a number: {col[bad]!r}")
        col = cast
    elif col.dtype == pl.Boolean or not col.dtype.is_numeric():
        if col.dtype != pl.Null:
            bad = first_row(col.is_not_null())
            raise UserError(f"{t.at(bad or 0, 'reference')}: not a number: {col[bad or 0]!r}")
    col = col.cast(pl.Float64)
    bad = first_row(col.is_nan() | col.is_infinite())
    if bad is not None:
        raise UserError(f"{t.at(bad, 'reference')}: not a finite number: {col[bad]}")
    return col


def read_pool(path: str | Path, capped: bool = True) -> PoolData:
    """Read and validate a pool file; raises UserError naming the file, line and field. `capped`:
    within the upload limits (files._tables.limits); the command line passes False."""
    t, layout = pool_table(read_table(path, capped=capped))
    df = pool_rows(t)
    dup = first_repeat(df, ["prompt_id", "candidate_id"])
    if dup:
        row, first = dup
        raise UserError(f"{t.at(row, 'candidate_id')}: duplicate candidate "
                        f"{df['candidate_id'][row]!r} for prompt {df['prompt_id'][row]!r} "
                        f"(first at line {t.line_of(first)})")
    first_text = pl.col("prompt").first().over("prompt_id", order_by="_row")
    clash = df.filter(pl.col("prompt") != first_text)
    if clash.height:
        row = clash["_row"][0]
        first = df.filter(pl.col("prompt_id") == clash["prompt_id"][0])["_row"][0]
        raise UserError(f"{t.at(row, 'prompt')}: prompt {clash['prompt_id'][0]!r} has a different "
                        f"text here than at line {t.line_of(first)}")
    first_category = pl.col("category").first().over("prompt_id", order_by="_row")
    clash = df.filter(pl.col("category").ne_missing(first_category))
    if clash.height:
        row = clash["_row"][0]
        first = df.filter(pl.col("prompt_id") == clash["prompt_id"][0])["_row"][0]
        raise UserError(category_clash(t.at(row, "category"), clash["prompt_id"][0], clash["category"][0],
                                       df["category"][first], t.line_of(first)))

    prompt_order = df.group_by("prompt_id").agg(pl.col("_row").min().alias("_first"),
                                                 pl.col("prompt").first(), pl.col("category").first()) \
        .sort("_first").with_row_index("prompt_idx")
    candidates = df.join(prompt_order.select("prompt_id", "prompt_idx"), on="prompt_id") \
        .sort("_row").with_columns(
            pl.col("_row").cast(pl.Int32).alias("cand_idx"),
            pl.int_range(pl.len()).over("prompt_idx").cast(pl.Int32).alias("position"),
            pl.col("prompt_idx").cast(pl.Int32)) \
        .select("cand_idx", "prompt_idx", "candidate_id", "position", "response", "reference",
                "model", "split")
    prompts = prompt_order.select(pl.col("prompt_idx").cast(pl.Int32), "prompt_id", "prompt", "category")
    return PoolData(prompts, candidates, layout, t)


def category_clash(at: str, prompt: str, here: str | None, first: str | None, first_line: int) -> str:
    """The message for a prompt whose candidates name different categories (a category is the prompt's)."""
    def said(c):
        return "none" if c is None else repr(c)
    return (f"{at}: prompt {prompt!r} has category {said(here)} here but {said(first)} at line {first_line} "
            "(a category is the prompt's: the same on every candidate of a prompt)")


def pool_shape(candidates: pl.DataFrame) -> dict:
    """Counts for messages: prompts, candidates, candidates per prompt."""
    per = candidates.group_by("prompt_idx").len()["len"].to_numpy()
    return {"n_prompts": int(len(per)), "n_candidates": int(candidates.height),
            "k_min": int(per.min()) if len(per) else 0, "k_max": int(per.max()) if len(per) else 0,
            "k_mean": float(np.mean(per)) if len(per) else 0.0}
