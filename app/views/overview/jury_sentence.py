"""The Overview headline's sentence on a jury: does the panel beat its best member against humans,
and what does its vote do to ties at the top of a prompt? Frames in, one sentence out.

A jury is said to be a jury, and what it is judged by is said as it stands: κ against humans with
the labelled pairs it rests on (too few to say under audit.MIN_N, the one rule); undefined where
the pool holds labels but they cannot give this jury a κ (its formats are pointwise, no labelled
pair is one it judged, or one category throughout), never "no human labels" when some are stored."""

from __future__ import annotations

import polars as pl

from app import data
from app.views.overview.headline import pct
from audit import MIN_N, minus, plural, too_few


def _kappa(row: dict) -> str:
    return minus(f"{row['kappa']:.2f} [{row['kappa_lo']:.2f}, {row['kappa_hi']:.2f}]") \
        + f" on {plural(row['n_pairs'], 'labelled pair')}"


def jury_sentence(jury: dict, cells: pl.DataFrame, calib: pl.DataFrame | None, n_labels: int = 0) -> str | None:
    """One sentence for `jury` (judge, vote, members) from the audit cells (label score), calibrate's
    cells when the pool has labels (else None) and the count of the pool's stored human labels: on
    the jury's cell with the most judgements on labelled pairs (else its cell with the most verdicts),
    its kappa against its best member's, and its top-tied share against that member's."""
    name, members = jury["judge"], list(jury["members"])
    mine = cells.filter((pl.col("judge") == name) & (pl.col("score") == "label"))
    if mine.height == 0:
        return None
    head = f"The jury **{name}** ({jury['vote']} of {', '.join(members)})"
    ours = calib.filter(pl.col("judge") == name) if calib is not None and calib.height else None
    rated = ours.drop_nulls("kappa") if ours is not None else None
    if rated is not None and rated.height:
        cell = rated.sort("n", descending=True).row(0, named=True)
        ties = _ties(mine, cells, cell["format"], cell["decoding"], members, None)
        if too_few(cell["n_pairs"]):
            return (f"{head}: too few to say how it agrees with humans on {cell['format']} "
                    f"({plural(cell['n_pairs'], 'labelled pair')}; at least {MIN_N} needed){ties}.")
        rivals = calib.filter(pl.col("judge").is_in(members) & (pl.col("format") == cell["format"])
                              & (pl.col("decoding") == cell["decoding"])).drop_nulls("kappa")
        if rivals.height == 0:
            return (f"{head} agrees with humans on {cell['format']} at kappa {_kappa(cell)}; none of its members "
                    f"has a kappa on that format to compare{ties}.")
        best = rivals.sort("kappa", descending=True).row(0, named=True)
        verb = "beats" if cell["kappa_lo"] > best["kappa_hi"] else \
            "falls below" if cell["kappa_hi"] < best["kappa_lo"] else \
            "is level with" if cell["kappa"] == best["kappa"] else \
            ("is above" if cell["kappa"] > best["kappa"] else "is below") + " (intervals overlapping)"
        text = (f"{head} {verb} its best member {best['judge']} against humans on {cell['format']}: "
                f"kappa {_kappa(cell)} against {_kappa(best)}")
        return text + _ties(mine, cells, cell["format"], cell["decoding"], members, best["judge"]) + "."
    cell = mine.sort("n_verdicts", descending=True).row(0, named=True)
    ties = _ties(mine, cells, cell["format"], cell["decoding"], members, None)
    if n_labels:
        return f"{head}: {_why_no_kappa(mine, ours, n_labels)}{ties}."
    return f"{head} votes on {cell['format']}; the pool has no human labels to hold it or its members to{ties}."


def _why_no_kappa(mine: pl.DataFrame, ours: pl.DataFrame | None, n_labels: int) -> str:
    """Why the pool's stored labels give this jury no kappa (its κ is undefined, not absent)."""
    stored = plural(n_labels, "human label")
    if "kind" in mine.columns and not (mine["kind"] == "comparative").any():
        return (f"its kappa against the {stored} stored is undefined: kappa compares pair labels with comparative "
                f"verdicts, and the jury votes only on pointwise formats ({', '.join(sorted(set(mine['format'])))})")
    if ours is not None and ours.height:
        n = int(ours["n_pairs"].max())
        return (f"its kappa against the {stored} stored is undefined: on the {plural(n, 'labelled pair')} it "
                "judged, its verdicts or the labels fall in one category throughout")
    return f"its kappa is undefined: none of the {stored} stored is on a pair it judged"


def _prompts(row: dict) -> str:
    return f" of {plural(row['n_top_prompts'], 'prompt')}" if row.get("n_top_prompts") is not None else ""


def _ties(mine: pl.DataFrame, cells: pl.DataFrame, fmt: str, decoding: str, members: list[str],
          member: str | None) -> str:
    """'; its vote breaks ties: the top of a prompt is tied in 28% of 80 prompts, against 46% of 80 for
    GPT-4' (member: the one compared; None: the member least often tied on that cell)."""
    def cell_of(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter((pl.col("format") == fmt) & (pl.col("decoding") == decoding) & (pl.col("score") == "label"))
    jury_cell = cell_of(mine).drop_nulls("top_tied")
    others = cell_of(cells).filter(pl.col("judge").is_in(members) & (pl.col("aggregate") == "single")) \
        .drop_nulls("top_tied").sort("top_tied", "judge")
    if member is not None:
        others = others.filter(pl.col("judge") == member)
    if jury_cell.height == 0 or others.height == 0:
        return ""
    jury, one = jury_cell.row(0, named=True), others.row(0, named=True)
    if jury["top_tied"] == 0 and one["top_tied"] == 0:
        return (f"; no prompt's top is tied, neither in the jury's verdicts{_prompts(jury)} nor in "
                f"{one['judge']}'s{_prompts(one)}")
    change = "breaks" if jury["top_tied"] < one["top_tied"] else "adds" if jury["top_tied"] > one["top_tied"] else "keeps"
    return (f"; its vote {change} ties: the top of a prompt is tied in {pct(jury['top_tied'])}{_prompts(jury)}, "
            f"against {pct(one['top_tied'])}{_prompts(one)} for {one['judge']}")


def jury_sentences(pool: str) -> list[str]:
    """The sentence of each jury of the pool (none without juries), from the cached audit."""
    juries = data.juries(pool)
    if juries.height == 0:
        return []
    n_labels = data.stored_labels(pool).height
    calib = data.calibrate(pool, None, 2000, 0, None, 0.2) if n_labels else None
    found = [jury_sentence(j, data.result("cells", pool), calib, n_labels) for j in juries.to_dicts()]
    return [s for s in found if s]
