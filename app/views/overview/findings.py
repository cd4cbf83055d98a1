"""The Overview's findings in plain words: per judge, the headline (app/views/overview/headline.py), the agreement
with the reference, and the details grouped by format.

Pure: the audit's frames in (audit.audit_cells and audit.bias, the same cached frames the Formats
and Slot bias pages read, so the Overview costs no audit call of its own), an Overview per judge
out; no Streamlit and no database, so every sentence is unit-tested against hand-computed figures.
Only the parsed labels (`score == "label"`) are described; the expected scores stay on the Formats
page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from app.views.formats.repeats import repeat_effect, repeats_sentence
from app.views.overview.headline import agreement_sentence, headline, pct, signed
from audit import plural

FORMATS_PAGE = "views/formats/page.py"
SLOT_PAGE = "views/slot_bias/page.py"
CURATE_PAGE = "views/curate/page.py"

GLOSSARY = (
    "**Effective levels (D2)**: how many equally used scores would tie as often as these do (1 = the same "
    "score for every candidate), against the format's nominal levels. **Top shared**: two or more "
    "candidates hold the prompt's top score, so picking its best candidate is a coin flip (counted over the "
    "prompts with at least two scored candidates); the Curate & Train page shows what share of a "
    "curation's picks at a rate r are such coin flips. **τa**: Kendall's tau-a against the reference "
    "within each prompt (+1 = the reference's order, 0 = no relation; a tied pair counts as no agreement). "
    "**b**: slot bias, the part of a comparative verdict that stays when the two responses swap places "
    "(0 = none); **q**: the quality signal, the part that follows the responses.")


@dataclass(frozen=True)
class Finding:
    text: str          # one sentence (markdown), without the format's name (its group says it)
    page: str          # the page that shows it (a path for st.page_link)
    format: str
    decoding: str | None
    topic: str         # modes | parse | levels | mult5 | slot


@dataclass
class Overview:
    headline: list[str]                      # app.headline.headline
    agreement: str | None                    # app.headline.agreement_sentence
    by_format: dict[str, list[Finding]] = field(default_factory=dict)
    glossary: str = GLOSSARY                 # the terms of the details, for the caption above them


def _mode(decoding: str, modes: int) -> str:
    return f"*{decoding}*: " if modes > 1 else ""


def _of(a: int | None, b: int | None, noun: str) -> str:
    """' of 24 calls', ' of 24 → 30 calls' (each side's n), '' when neither is known."""
    if a is None and b is None:
        return ""
    if a == b:
        return f" of {plural(a, noun)}"
    return f" of {'?' if a is None else f'{a:,}'} → {'?' if b is None else f'{b:,}'} {noun}s"


def mode_finding(g: dict, k: dict) -> Finding:
    """Greedy against constrained for one format, each share with its n."""
    parts = [f"parsed {pct(g['parse_rate'])} → {pct(k['parse_rate'])}{_of(g.get('n_verdicts'), k.get('n_verdicts'), 'call')}"]
    if g["d2"] is not None and k["d2"] is not None:
        parts.append(f"D2 {g['d2']:.1f} → {k['d2']:.1f}")
    if g["top_tied"] is not None and k["top_tied"] is not None:
        parts.append(f"top shared in {pct(g['top_tied'])} → {pct(k['top_tied'])}"
                     f"{_of(g.get('n_top_prompts'), k.get('n_top_prompts'), 'prompt') or ' of prompts'}")
    return Finding("greedy → constrained decoding: " + ", ".join(parts) + ".", FORMATS_PAGE, g["format"], None,
                   "modes")


def cell_findings(c: dict, modes: int) -> list[Finding]:
    """One cell: its parse rate (when under 95%), then levels, ties and τa in one sentence, then
    multiples of 5."""
    out, who = [], _mode(c["decoding"], modes)
    ident = dict(format=c["format"], decoding=c["decoding"])
    if c["parse_rate"] is not None and c["parse_rate"] < 0.95:
        share = "none" if c["parse_rate"] == 0 else f"only {pct(c['parse_rate'])}"
        out.append(Finding(f"{who}{share} of the {plural(c['n_verdicts'], 'call')} parse to a label; the rest are answers "
                           "the format cannot read.", FORMATS_PAGE, topic="parse", **ident))
    parts = []
    if c["d2"] is not None:
        of = f" of {c['nominal_levels']}" if c["nominal_levels"] and c["kind"] == "pointwise" else ""
        parts.append(f"{plural(c['distinct'], 'distinct score')}, {c['d2']:.1f} effective levels (D2){of}")
    if c["top_tied"] is not None:
        n = c.get("n_top_prompts")
        parts.append(f"top score shared in {pct(c['top_tied'])} of the "
                     + (f"{plural(n, 'prompt')}" if n is not None else "prompts") + " with ≥ 2 scored candidates")
    if c["tau_a"] is not None:
        parts.append(f"τa = {signed(c['tau_a'])}" + (" (no agreement)" if c["tau_a"] <= 0 else ""))
    if parts:
        out.append(Finding(who + "; ".join(parts) + ".", FORMATS_PAGE, topic="levels", **ident))
    if c["mult5_share"] is not None and c["n_candidates"]:
        out.append(Finding(f"{who}{pct(c['mult5_share'])} of the {plural(c['n_candidates'], 'score')} are multiples of 5.", FORMATS_PAGE,
                           topic="mult5", **ident))
    return out


def slot_finding(b: dict, modes: int) -> Finding | None:
    if not b["n_pairs"] or b["b"] is None:
        return None
    ci = f" (95% CI {signed(b['b_lo'])} to {signed(b['b_hi'])})" if b["b_lo"] is not None else ""
    if b["b_lo"] is not None and b["b_lo"] <= 0 <= b["b_hi"]:
        lean = f"slot bias b = {signed(b['b'])}{ci}: no clear pull toward either slot"
    else:
        lean = f"slot bias b = {signed(b['b'])} toward slot {'A' if b['b'] > 0 else 'B'}{ci}"
    if b["q"] is not None:
        lean += f", quality signal q = {signed(b['q'])}"
    if b["consistency"] is not None:
        lean += f"; the same preference in both orders for {pct(b['consistency'])} of {plural(b['n_pairs'], 'pair')}"
    return Finding(_mode(b["decoding"], modes) + lean + ".", SLOT_PAGE, b["format"], b["decoding"], "slot")


def judge_overview(cells: pl.DataFrame, bias: pl.DataFrame | None) -> Overview:
    """One judge's Overview. cells: its label cells; bias: its audit.bias rows."""
    modes = cells["decoding"].n_unique()
    out = Overview(headline(cells, bias), agreement_sentence(cells))
    order = cells.with_columns((pl.col("decoding") != "greedy").alias("_g")).sort("format", "_g")
    for fmt in order["format"].unique(maintain_order=True).to_list():
        mine = order.filter(pl.col("format") == fmt)
        pair = {r["decoding"]: r for r in mine.iter_rows(named=True)}
        items = [mode_finding(pair["greedy"], pair["constrained"])] if {"greedy", "constrained"} <= set(pair) else []
        for c in mine.iter_rows(named=True):   # greedy (the paper's protocol) first
            items += cell_findings(c, modes)
        if bias is not None:
            for b in bias.filter(pl.col("format") == fmt).sort(pl.col("decoding") != "greedy").iter_rows(named=True):
                f = slot_finding(b, modes)
                if f is not None:
                    items.append(f)
        out.by_format[fmt] = items
    return out


def findings(cells: pl.DataFrame, bias: pl.DataFrame | None = None) -> dict[str, Overview]:
    """Per judge (in name order): its Overview, from audit.audit_cells and audit.bias frames."""
    every = labels = cells.filter(pl.col("score") == "label") if "score" in cells.columns else cells
    if "aggregate" in labels.columns:   # sample 0; the mean of repeated calls is on the Formats page
        labels = labels.filter(pl.col("aggregate") == "single")
    out = {}
    for judge in sorted(labels["judge"].unique().to_list()):
        mine_bias = bias.filter(pl.col("judge") == judge) if bias is not None and bias.height else None
        out[judge] = judge_overview(labels.filter(pl.col("judge") == judge), mine_bias)
        again = repeats_sentence(repeat_effect(every.filter(pl.col("judge") == judge)))
        if again:       # the judge's calls were asked several times: does averaging break the coin flips?
            out[judge].headline.append(again)
    return out
