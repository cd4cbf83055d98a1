"""Findings in plain words, computed from the audit's frames (the Overview page's sentences).

Pure: polars frames in (audit_cells, bias, candidate_scores), a list of Finding out; no Streamlit
and no database, so every sentence is unit-tested against hand-computed figures. Only the parsed
labels (`score == "label"`) are described; the expected scores stay on the Formats page.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from train.curate import heldout_prompts, keep_count, select

FORMATS_PAGE = "views/formats.py"
SLOT_PAGE = "views/slot_bias.py"
CURATE_PAGE = "views/curate.py"
RATES = (0.1, 0.25, 0.5)     # the coin-flip figure uses the first rate that keeps >= MIN_PICKS prompts
MIN_PICKS = 3


@dataclass(frozen=True)
class Finding:
    text: str          # one sentence (markdown)
    page: str          # the page that shows it (a path for st.page_link)
    judge: str
    format: str | None
    decoding: str | None
    topic: str         # ties | levels | parse | mult5 | slot | modes | agreement


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def coin_flip_share(scores: pl.DataFrame, rate: float, held=None, seed: int = 0) -> tuple[float, int] | None:
    """`judgeaudit curate` by one cell at `rate` (train.curate.select: the top candidate of each
    prompt, then the top `rate` of prompts by that score), the `held` prompts (prompt_idx) left out
    as curation leaves them out: the share of the kept picks that were tie-breaks (a tied top, or
    kept by the coin at the prompt cut: curate's n_tie_broken / n_selected, which does not depend
    on the seed) and how many prompts are kept.

    scores: prompt_idx, s, cand_idx (the candidates of one cell; row order when absent)."""
    if "cand_idx" not in scores.columns:
        scores = scores.with_row_index("cand_idx")
    if held is not None:
        scores = scores.filter(~pl.col("prompt_idx").is_in(pl.Series(held, dtype=pl.Int64).implode()))
    cands = scores.select(pl.col("prompt_idx").cast(pl.Int64), pl.col("cand_idx").cast(pl.Int64),
                          pl.col("s").cast(pl.Float64).alias("value")) \
        .filter(pl.col("value").is_not_null() & pl.col("value").is_not_nan())
    if cands.height == 0 or keep_count(rate, cands["prompt_idx"].n_unique()) == 0:
        return None
    picks = select(cands, rate, seed, int(cands["cand_idx"].max()) + 1, int(cands["prompt_idx"].max()) + 1)
    kept = picks.filter("kept")
    return float((kept["pick_tied"] | kept["cut_tied"]).sum() / kept.height), kept.height


def _label(fmt: str, decoding: str, modes: int) -> str:
    return f"**{fmt}**" + (f" ({decoding})" if modes > 1 else "")


def _cell_findings(c: dict, modes: int, scores: pl.DataFrame | None, held=None) -> list[Finding]:
    """parse rate (when under 95%), then ties and levels in one sentence, then multiples of 5."""
    out = []
    name = _label(c["format"], c["decoding"], modes)
    ident = dict(judge=c["judge"], format=c["format"], decoding=c["decoding"])
    if c["parse_rate"] is not None and c["parse_rate"] < 0.95:
        share = "none" if c["parse_rate"] == 0 else f"only {pct(c['parse_rate'])}"
        out.append(Finding(f"{name}: {share} of the {c['n_verdicts']} verdicts parse to a label; the rest "
                           "are answers the format cannot read.", FORMATS_PAGE, topic="parse", **ident))
    parts, page = [], FORMATS_PAGE
    if c["top_tied"] is not None and c["n_ranked_prompts"]:
        parts.append(f"the top score is tied in {pct(c['top_tied'])} of prompts")
        flip = None
        if scores is not None and c["top_tied"] > 0:
            mine = scores.filter((pl.col("judge") == c["judge"]) & (pl.col("format") == c["format"])
                                 & (pl.col("decoding") == c["decoding"]) & (pl.col("score") == "label"))
            for rate in RATES:
                flip = coin_flip_share(mine, rate, held)
                if flip is not None and flip[1] >= MIN_PICKS:
                    break
            if flip is not None:
                parts[-1] += f" (at r = {pct(rate)}, {pct(flip[0])} of the picks are coin flips)"
                page = CURATE_PAGE if flip[0] > 0 else FORMATS_PAGE
    if c["d2"] is not None:
        of = f" of {c['nominal_levels']}" if c["nominal_levels"] and c["kind"] == "pointwise" else ""
        plural = "" if c["distinct"] == 1 else "s"
        parts.append(f"{c['distinct']} distinct score{plural}, {c['d2']:.1f} effective levels (D2){of}")
    if parts:
        out.append(Finding(f"{name}: " + "; ".join(parts) + ".", page, topic="ties", **ident))
    if c["mult5_share"] is not None and c["n_candidates"]:
        out.append(Finding(f"{name}: {pct(c['mult5_share'])} of scores are multiples of 5.", FORMATS_PAGE,
                           topic="mult5", **ident))
    return out


def _slot_findings(b: dict, modes: int) -> Finding | None:
    if not b["n_pairs"] or b["b"] is None:
        return None
    name = _label(b["format"], b["decoding"], modes)
    ci = (f" (95% CI {b['b_lo']:+.2f} to {b['b_hi']:+.2f})" if b["b_lo"] is not None else "")
    if b["b_lo"] is not None and b["b_lo"] <= 0 <= b["b_hi"]:
        lean = f"b = {b['b']:+.2f}{ci}: no clear pull toward either slot"
    else:
        lean = f"b = {b['b']:+.2f} toward slot {'A' if b['b'] > 0 else 'B'}{ci}"
    text = f"{name}: {lean}"
    if b["consistency"] is not None:
        text += f"; the same preference in both orders for {pct(b['consistency'])} of {b['n_pairs']} pairs"
    return Finding(text + ".", SLOT_PAGE, judge=b["judge"], format=b["format"], decoding=b["decoding"],
                   topic="slot")


def _mode_findings(judge: str, cells: pl.DataFrame) -> list[Finding]:
    """Greedy against constrained, per format that has both."""
    out = []
    for fmt in sorted(cells["format"].unique().to_list()):
        pair = {r["decoding"]: r for r in cells.filter(pl.col("format") == fmt).iter_rows(named=True)}
        if not {"greedy", "constrained"} <= set(pair):
            continue
        g, k = pair["greedy"], pair["constrained"]
        parts = [f"parse rate {pct(g['parse_rate'])} → {pct(k['parse_rate'])}"]
        if g["d2"] is not None and k["d2"] is not None:
            parts.append(f"D2 {g['d2']:.1f} → {k['d2']:.1f}")
        if g["top_tied"] is not None and k["top_tied"] is not None:
            parts.append(f"tied top {pct(g['top_tied'])} → {pct(k['top_tied'])}")
        out.append(Finding(f"**{fmt}**, greedy → constrained decoding: " + ", ".join(parts) + ".",
                           FORMATS_PAGE, judge=judge, format=fmt, decoding=None, topic="modes"))
    return out


def _agreement_finding(judge: str, cells: pl.DataFrame, modes: int) -> Finding | None:
    ranked = cells.filter(pl.col("tau_a").is_not_null()).sort("tau_a", descending=True)
    if ranked.height < 2:
        return None
    best, worst = ranked.row(0, named=True), ranked.row(-1, named=True)
    return Finding(f"Against the reference, {_label(best['format'], best['decoding'], modes)} agrees best "
                   f"within prompts (τa = {best['tau_a']:+.2f}) and {_label(worst['format'], worst['decoding'], modes)} "
                   f"least (τa = {worst['tau_a']:+.2f}).", FORMATS_PAGE, judge=judge, format=None,
                   decoding=None, topic="agreement")


def findings(cells: pl.DataFrame, bias: pl.DataFrame | None = None,
             scores: pl.DataFrame | None = None, pool_cands: pl.DataFrame | None = None) -> dict[str, list[Finding]]:
    """Per judge (in name order): its findings, mode comparisons first, then per cell (by format,
    greedy before constrained) parse rate, ties and levels, multiples of 5; then slot bias, then
    agreement. With `pool_cands` (audit.pool_candidates), the coin-flip share leaves out the
    held-out prompts as `judgeaudit curate` does (train.curate.heldout_prompts)."""
    held = heldout_prompts(pool_cands) if pool_cands is not None else None
    labels = cells.filter(pl.col("score") == "label") if "score" in cells.columns else cells
    out: dict[str, list[Finding]] = {}
    for judge in sorted(labels["judge"].unique().to_list()):
        mine = labels.filter(pl.col("judge") == judge)
        modes = mine["decoding"].n_unique()
        items = _mode_findings(judge, mine)
        order = mine.with_columns((pl.col("decoding") != "greedy").alias("_g")).sort("format", "_g")
        for c in order.iter_rows(named=True):     # by format, greedy (the paper's protocol) first
            items += _cell_findings(c, modes, scores, held)
        if bias is not None and bias.height:
            for b in bias.filter(pl.col("judge") == judge).iter_rows(named=True):
                f = _slot_findings(b, modes)
                if f is not None:
                    items.append(f)
        agreement = _agreement_finding(judge, mine, modes)
        if agreement is not None:
            items.append(agreement)
        out[judge] = items
    return out
