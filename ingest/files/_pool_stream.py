"""A pool file read in batches (files of any size from the command line): each batch of
candidates is checked as read_pool checks a whole file and numbered as it would be (prompts in the
order they first appear, a candidate's position within its prompt, its row in the file), from what
the batches before it left: each prompt's index, first line, text hash, category and candidate count. A
candidate named twice in two batches is found from one hash a row, the file read again only to name
the two lines. Nothing here touches the database: ingest.store.import_pool stores each batch."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import polars as pl

from .._errors import UserError
from ._pool_file import category_clash, pool_rows, pool_table
from ._streams import table_batches
from ._tables import Table, first_repeat

STATE = {"prompt_id": pl.String, "prompt_idx": pl.Int32, "_h": pl.UInt64, "_line": pl.Int64, "_n": pl.Int64,
         "_c": pl.String}     # _c: the prompt's category (at its first line)


class PoolStream:
    """Iterate for (new prompts, candidates) frames, a batch at a time, ready for the store (the
    columns of read_pool's PoolData); then `layout` and shape() describe the whole file."""

    def __init__(self, path: str | Path, capped: bool = True, rows: int | None = None):
        self.path, self.capped, self.rows = path, capped, rows
        self.tables = table_batches(path, capped=capped, rows=rows)
        self.layout = None
        self.state = pl.DataFrame(schema=STATE)     # one row per prompt met so far
        self.hashes: list[pl.Series] = []
        self.n_rows = 0                             # the file's rows read so far (before unrolling)

    def __iter__(self) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
        n_candidates = 0
        for t in self.tables:
            t, df = self._rows(t)
            yield self._batch(t, df.with_columns(pl.col("_row") + n_candidates))
            n_candidates += df.height
        if self.state.height == 0:
            raise UserError(f"{self.path}: empty file (no rows)")
        hashes = pl.concat(self.hashes)
        if hashes.n_unique() < hashes.len():
            self._repeats(hashes.filter(hashes.is_duplicated()).unique())

    def _rows(self, t: Table) -> tuple[Table, pl.DataFrame]:
        height = t.frame.height
        t, layout = pool_table(t, self.n_rows)
        self.n_rows += height
        if self.layout is None:
            self.layout = layout
        elif layout != self.layout:
            raise UserError(f"{t.at(0)}: this part of the file is in the {layout} layout, the rows before it "
                            f"in the {self.layout} layout")
        return t, pool_rows(t)

    def _batch(self, t: Table, df: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """`df` (its _row the candidate's row in the whole file) checked against itself and the
        batches before it, numbered; the state moved on."""
        local = pl.int_range(pl.len())
        df = df.with_columns(local.alias("_i"), pl.col("prompt").hash().alias("_h"),
                             pl.struct("prompt_id", "candidate_id").hash().alias("_key"))
        if df["_key"].n_unique() < df.height:
            dup = first_repeat(df.select("_i", "prompt_id", "candidate_id").rename({"_i": "_row"}),
                               ["prompt_id", "candidate_id"])
            if dup:
                row, first = dup
                raise UserError(_duplicate(t.at(row, "candidate_id"), df["candidate_id"][row], df["prompt_id"][row],
                                           t.line_of(first)))
        self.hashes.append(df["_key"])
        df = df.with_columns(pl.Series("_line", t.lines, pl.Int64))
        met = df.group_by("prompt_id").agg(pl.col("_i").min().alias("_first_i"), pl.col("_h").first(),
                                           pl.col("_line").first().alias("_first_line"), pl.len().alias("_k"),
                                           pl.col("category").first().alias("_c")) \
            .sort("_first_i")
        met = met.join(self.state, on="prompt_id", how="left", suffix="_seen", maintain_order="left")
        # a prompt's text: the same as at its first line, in this batch or an earlier one
        seen = pl.col("prompt_idx").is_not_null()
        ref = df.join(met.select("prompt_id", pl.coalesce("_h_seen", "_h").alias("_h0"),
                                 pl.coalesce("_line", "_first_line").alias("_line0"),
                                 pl.when(seen).then(pl.col("_c_seen")).otherwise(pl.col("_c")).alias("_c0")),
                      on="prompt_id", how="left", maintain_order="left")
        clash = ref.filter(pl.col("_h") != pl.col("_h0"))
        if clash.height:
            i = int(clash["_i"][0])
            raise UserError(f"{t.at(i, 'prompt')}: prompt {clash['prompt_id'][0]!r} has a different "
                            f"text here than at line {int(clash['_line0'][0])}")
        # a prompt's category: the same on each of its candidates, as at its first line
        clash = ref.filter(pl.col("category").ne_missing(pl.col("_c0")))
        if clash.height:
            raise UserError(category_clash(t.at(int(clash["_i"][0]), "category"), clash["prompt_id"][0],
                                           clash["category"][0], clash["_c0"][0], int(clash["_line0"][0])))
        new = met.filter(pl.col("prompt_idx").is_null())
        new = new.with_columns((pl.int_range(pl.len()) + self.state.height).cast(pl.Int32).alias("prompt_idx"))
        known = met.filter(pl.col("prompt_idx").is_not_null())
        self.state = pl.concat([
            self.state.join(known.select("prompt_id", "_k"), on="prompt_id", how="left", maintain_order="left")
            .with_columns(pl.col("_n") + pl.col("_k").fill_null(0)).drop("_k"),
            new.select("prompt_id", "prompt_idx", "_h", pl.col("_first_line").alias("_line"),
                       pl.col("_k").cast(pl.Int64).alias("_n"), "_c")])
        index = pl.concat([known.select("prompt_id", "prompt_idx", pl.col("_n").alias("_before")),
                           new.select("prompt_id", "prompt_idx", pl.lit(0, pl.Int64).alias("_before"))])
        candidates = df.join(index, on="prompt_id", how="left", maintain_order="left").with_columns(
            pl.col("_row").cast(pl.Int32).alias("cand_idx"),
            (pl.int_range(pl.len()).over("prompt_id") + pl.col("_before")).cast(pl.Int32).alias("position")) \
            .select("cand_idx", "prompt_idx", "candidate_id", "position", "response", "reference", "model", "split")
        prompts = df.filter(pl.col("_i").is_in(new["_first_i"].implode())) \
            .join(new.select("prompt_id", "prompt_idx"), on="prompt_id", maintain_order="left") \
            .sort("prompt_idx").select("prompt_idx", "prompt_id", "prompt", "category")
        return prompts, candidates

    def _repeats(self, hashes: pl.Series) -> None:
        """Two candidates of different batches share a hash: read the file again and name the first
        that repeats an earlier one (hashes can meet by chance: then nothing is raised)."""
        kept, self.n_rows = [], 0
        for t in table_batches(self.path, capped=self.capped, rows=self.rows):
            t, df = self._rows(t)
            df = df.filter(pl.struct("prompt_id", "candidate_id").hash().is_in(hashes.implode()))
            kept.append(df.select("prompt_id", "candidate_id").with_columns(
                pl.Series("_where", [t.at(i, "candidate_id") for i in df["_row"].to_list()], pl.String),
                pl.Series("_line", t.lines[df["_row"].to_numpy()], pl.Int64)))
        rows = pl.concat(kept).with_row_index("_row")
        dup = first_repeat(rows, ["prompt_id", "candidate_id"])
        if dup:
            row, first = dup
            raise UserError(_duplicate(rows["_where"][row], rows["candidate_id"][row], rows["prompt_id"][row],
                                       rows["_line"][first]))

    def shape(self) -> dict:
        """pool_shape's counts for the whole file."""
        per = self.state["_n"].to_numpy()
        return {"n_prompts": int(len(per)), "n_candidates": int(per.sum()),
                "k_min": int(per.min()) if len(per) else 0, "k_max": int(per.max()) if len(per) else 0,
                "k_mean": float(np.mean(per)) if len(per) else 0.0}


def _duplicate(at: str, candidate: str, prompt: str, first_line: int) -> str:
    return f"{at}: duplicate candidate {candidate!r} for prompt {prompt!r} (first at line {first_line})"
