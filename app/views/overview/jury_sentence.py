"""The Overview headline's sentence on a jury: does the panel beat its best member against
humans, and what does its vote do to ties at the top of a prompt? Frames in, one sentence out."""

from __future__ import annotations

import polars as pl

from app import data
from app.views.overview.headline import pct


def _kappa(row: dict) -> str:
    return f"{row['kappa']:.2f} [{row['kappa_lo']:.2f}, {row['kappa_hi']:.2f}]"


def jury_sentence(jury: dict, cells: pl.DataFrame, calib: pl.DataFrame | None) -> str | None:
    """One sentence for `jury` (judge, vote, members) from the audit cells (label score) and, when the
    pool has labels, calibrate's cells: on the jury's cell with the most judgements on labelled pairs
    (else its cell with the most verdicts), its kappa against its best member's, and its top-tied share
    against that member's."""
    name, members = jury["judge"], list(jury["members"])
    mine = cells.filter((pl.col("judge") == name) & (pl.col("score") == "label"))
    if mine.height == 0:
        return None
    head = f"The jury **{name}** ({jury['vote']} of {', '.join(members)})"
    rated = calib.filter(pl.col("judge") == name).drop_nulls("kappa") if calib is not None and calib.height else None
    if rated is not None and rated.height:
        cell = rated.sort("n", descending=True).row(0, named=True)
        rivals = calib.filter(pl.col("judge").is_in(members) & (pl.col("format") == cell["format"])
                              & (pl.col("decoding") == cell["decoding"])).drop_nulls("kappa")
        if rivals.height:
            best = rivals.sort("kappa", descending=True).row(0, named=True)
            verb = "beats" if cell["kappa_lo"] > best["kappa_hi"] else \
                "falls below" if cell["kappa_hi"] < best["kappa_lo"] else \
                "is level with" if cell["kappa"] == best["kappa"] else \
                ("is above" if cell["kappa"] > best["kappa"] else "is below") + " (intervals overlapping)"
            text = (f"{head} {verb} its best member {best['judge']} against humans on {cell['format']}: "
                    f"kappa {_kappa(cell)} against {_kappa(best)}")
            return text + _ties(mine, cells, cell["format"], cell["decoding"], best["judge"]) + "."
    cell = mine.sort("n_verdicts", descending=True).row(0, named=True)
    others = cells.filter(pl.col("judge").is_in(members) & (pl.col("format") == cell["format"])
                          & (pl.col("decoding") == cell["decoding"]) & (pl.col("score") == "label")
                          & (pl.col("aggregate") == "single")).drop_nulls("top_tied")
    if others.height == 0 or cell["top_tied"] is None:
        return f"{head} votes on {cell['format']}; no human labels to compare it with its members."
    first = others.sort("top_tied").row(0, named=True)
    return f"{head} has no human labels to be judged by{_ties(mine, cells, cell['format'], cell['decoding'], first['judge'])}."


def _ties(mine: pl.DataFrame, cells: pl.DataFrame, fmt: str, decoding: str, member: str) -> str:
    pick = [c.filter((pl.col("judge") == j) & (pl.col("format") == fmt) & (pl.col("decoding") == decoding)
                     & (pl.col("score") == "label")) for c, j in ((mine, mine["judge"][0]), (cells, member))]
    if any(p.height == 0 or p["top_tied"][0] is None for p in pick):
        return ""
    jury, one = pick[0]["top_tied"][0], pick[1]["top_tied"][0]
    change = "breaks" if jury < one else "adds" if jury > one else "keeps"
    return (f"; its vote {change} ties: the top of a prompt is tied in {pct(jury)} of prompts, "
            f"against {pct(one)} for {member}")


def jury_sentences(pool: str) -> list[str]:
    """The sentence of each jury of the pool (none without juries), from the cached audit."""
    juries = data.juries(pool)
    if juries.height == 0:
        return []
    calib = data.calibrate(pool, None, 2000, 0, None, 0.2) if data.stored_labels(pool).height else None
    found = [jury_sentence(j, data.result("cells", pool), calib) for j in juries.to_dicts()]
    return [s for s in found if s]
