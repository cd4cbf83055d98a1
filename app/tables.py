"""Tables a person can read: the one helper every page's st.dataframe goes through.

Use it in a page (or a page's helper) instead of st.dataframe:

    from app import tables
    tables.show(frame)                                   # readable headers, numbers, "–" with its reason
    tables.show(frame, stars={"tau_a": [0, 3]})          # a trailing " ★" on those rows' values
    tables.show(frame, missing={"p": "fewer than two prompts"})   # why a column has "–" (its help)
    st.dataframe(**tables.view(frame), hide_index=True)  # the same, when a call needs more options

and for an altair axis or legend, `alt.X("tie_prob:Q", title=tables.heading("tie_prob"))`.

What it does (each rule checked over every page and demo pool by tests/app/test_tables_demo.py):
- headers: `heading(col)`: app.reading.HEADINGS, then HEADINGS below (the columns the pages show: `prompt_id`
  is "prompt", `rank_raw` "rank without style"), else the name with spaces for underscores; the
  column's definition (app.reading.HELP, HELP below) is the header's tooltip;
- cells: `cell_text(x)`: three significant digits, thousands separators, never e-notation (a value
  below 1e-4 in size is "< 0.0001", below 1e-9 floating noise and "0"), "–" for a missing value
  (None or NaN) with the reason in the column's tooltip (`missing=`, MISSING below, else a general
  one);
- a missing cell reads "–" in the browser too: the grid draws its own placeholder ("None" unless
  told) over a missing value whatever the Styler says, so `view` gives st.dataframe placeholder="–";
- a list reads as text: "smollm2-demo, smollm2-local", never ['smollm2-demo', ...];
- a column that names a judge (NAMES: judge, members, a forest row's caption, ...) is as wide as its
  longest value (the grid sizes a column from its first rows only, and would cut "smollm2-demo-t0.7"
  to "smollm2-demo-t…", the same as "smollm2-demo-t1");
- up to app.reading.STYLED_CELLS cells the data stays numeric under a pandas Styler (a click on a
  header sorts by value); past that the table is sent as text.

A new column: add its heading to HEADINGS (and its definition to HELP) here; a new reason for "–"
to MISSING. Pure but for `show` (one st.dataframe call) and the column-config objects.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from app import reading

# headers of the columns the pages show beyond app.reading.HEADINGS (a reader's words, not column names)
HEADINGS = {
    # the Trust page (estimate) and the Judges page (the leaderboard)
    "n_labelled": "human labels", "n_unlabelled": "judged, unlabelled", "classical_value": "labels alone",
    "classical_lo": "labels alone low", "classical_hi": "labels alone high", "ppi_value": "PPI++",
    "ppi_lo": "PPI++ low", "ppi_hi": "PPI++ high", "ppi_lambda": "PPI++ λ", "effective_labels": "worth (labels)",
    "system": "system", "baseline": "baseline", "target": "target", "aggregate": "aggregate", "members": "members",
    "n_verdicts": "verdicts", "kappa": "κ", "length_excess": "length excess over humans", "tokens_in": "tokens in",
    "tokens_out": "tokens out", "cost_usd": "cost (USD)", "cost_per_1000": "cost per 1,000 verdicts (USD)",
    "n_top_prompts": "prompts with a top", "latency_ms_p50": "latency p50 (ms)", "latency_ms_p95": "latency p95 (ms)", "on_front": "on the front",
    "prompt_id": "prompt", "candidate_id": "candidate", "cand_idx": "candidate #", "prompt_idx": "prompt #",
    "rank_raw": "rank without style", "moved_up": "places up with style control", "strength_raw": "strength without style",
    "value_raw": "value without style", "excess": "judge − human", "excess_lo": "judge − human low",
    "excess_hi": "judge − human high", "judge_lo": "judge low", "judge_hi": "judge high", "human_lo": "human low",
    "human_hi": "human high", "dropped_judge": "judge left out", "n_judges": "judges", "n_formats": "formats",
    "share_format": "share: format", "share_judge": "share: judge", "share_residual": "share: neither",
    "ss_total": "total sum of squares", "probability_source": "probability from", "n_prob": "judgements with p",
    "ece_isotonic": "ECE after isotonic", "ece": "ECE", "brier": "Brier score", "n_items": "items",
    "n_labels": "labels", "n_boot": "bootstrap resamples", "flip_rate": "flip rate", "alpha": "α",
    "alpha_lo": "α low", "alpha_hi": "α high", "reference": "reference score", "response": "response",
    "prompt": "prompt text", "p": "p", "n_verdicts_judge": "judge verdicts", "boot_unconverged": "resamples without a fit",
    "rank_single": "rank (single order)", "shift": "places moved by slot bias", "games": "comparisons",
    "wins": "wins", "id": "item", "p_exact": "p (exact)", "p_cc": "p (continuity-corrected)",
    "n_pairs_judged": "pairs judged", "sd_diff": "sd of the difference", "mdd": "minimum detectable difference",
    "delta": "Δ", "delta_lo": "Δ low", "delta_hi": "Δ high", "bias_lo": "bias low", "bias_hi": "bias high",
    "share_changed": "share changed", "mean_shift": "mean shift", "old": "before",
    "new": "after", "rate": "rate", "overlap": "overlap", "jaccard": "Jaccard overlap",
    "agreement_lo": "agreement low", "agreement_hi": "agreement high", "samples_for_alpha_08": "samples for α ≥ 0.8",
    "expected_agreement": "expected agreement", "calls_per_verdict": "calls per verdict",
    "tokens_per_verdict": "tokens per verdict", "n_calls_single": "calls (single order)",
    "response_chars": "response length (characters)", "n_scored": "scored by both", "mean_abs_change": "mean |change|",
    "a_id": "candidate A", "b_id": "candidate B", "reading_old": "verdict before", "reading": "verdict after",
    "s_old": "score before", "s": "score after", "change": "score change", "n_changed": "calls changed",
    "n_moved": "calls moved",
    "n_no_ties": "pairs without a tie", "agreement_no_ties": "agreement without ties",
    "kappa_no_ties": "κ without ties", "kappa_no_ties_lo": "κ without ties low", "kappa_no_ties_hi": "κ without ties high",
    "n_pairs_needed": "pairs needed for the target width", "format_a": "format A", "format_b": "format B",
    "n_a": "picked by A", "n_b": "picked by B", "sample": "sample", "position": "position",
    "k": "candidates of its prompt", "model": "model", "split": "split", "cand_idx_a": "candidate A #",
    "top_tied_mean": "top tied (mean)", "tie_prob_mean": "tie probability (mean)",
    # the Probes page's mitigations and the Evaluate page's contrasts
    "n_paired": "calls both made", "n_blocks": "prompts (blocks)", "coef_log_len_ratio": "length coefficient (log ratio)",
    "coef_markdown": "markdown coefficient",
    # the Calibration page's human scale and the Align page (docs/metrics.md#scores-on-the-human-scale)
    "brier_raw": "Brier score of the score", "brier_mapped": "Brier score mapped", "n_flagged": "systems flagged",
    "residual": "human − mapped", "flagged": "map does not hold", "score": "score", "n": "items",
}
HELP = {
    "prompt_id": "The prompt's id in the pool.",
    "candidate_id": "The candidate's id in the pool (a system, when ids repeat across prompts).",
    "rank_raw": "The system's rank by the same Bradley-Terry model without style features.",
    "moved_up": "Places the system moves up once style is controlled (rank without style − rank).",
    "strength_raw": "Bradley-Terry strength without style features (centred to mean 0).",
    "share_format": "Share of the diagnostic's sum of squares over the cells that the format explains.",
    "share_judge": "Share of the diagnostic's sum of squares that the judge explains.",
    "share_residual": "Share that neither explains (the format × judge interaction, one value per cell).",
    "dropped_judge": "The judge left out of this decomposition (leave one judge out).",
    "excess": "The judge's coefficient minus the humans' on the same pairs (paired bootstrap over prompts).",
    "ece": "Expected calibration error over ten equal-width bins of the judge's probability.",
    "brier": "Mean of (p − y)² over the judgements with a probability.",
    "ece_isotonic": "ECE after isotonic recalibration, cross-fitted over 5 folds of prompts.",
    "residual": "Mean over the system's labelled items of the human value minus the cross-fitted mapped score.",
    "flagged": "The residual's 95% interval excludes 0: the map to the human scale does not hold for this system.",
}
# why a column's cell is "–" (the column's tooltip says it), beyond the general reason
MISSING = {
    "lo": "no interval: bootstrap resamples off, or too few prompts to resample",
    "hi": "no interval: bootstrap resamples off, or too few prompts to resample",
    "spearman": "undefined: no reference, or a constant score",
    "tau_a": "undefined: no prompt with two candidates that have a score and a reference",
    "tau_b": "undefined: no prompt with two candidates that have a score and a reference",
    "somers_d": "undefined: no prompt with two candidates that have a score and a reference",
    "human": "no human labels on these pairs", "excess": "no human labels on these pairs",
    "rank_single": "the item never appears in the forward order",
    "share_format": "undefined: the diagnostic is the same in every cell",
    "share_judge": "undefined: the diagnostic is the same in every cell",
    "share_residual": "undefined: the diagnostic is the same in every cell",
    "reference": "the pool has no reference score for this candidate",
}
GENERAL_MISSING = "no value here: not defined for this row (too few items, or nothing to compute it from)"
NOISE = reading.NOISE
SMALL = 1e-4       # below this in size a value is written "< 0.0001", never in e-notation
PLACEHOLDER = "–"  # what the grid draws in a missing cell
# columns that name a judge (alone, in a list, or in a caption with its format): sized to their longest value
NAMES = ("judge", "dropped_judge", "members", "cell", "row", "run")
CHAR_PX, PAD_PX = 8, 28     # the grid's 14 px font: under 8 px a character; both sides' padding and a sort arrow


SUFFIXES = {"_mean": "{} (mean)", "_lo": "{} low", "_hi": "{} high", "_sd": "{} (sd)"}


def heading(col: str) -> str:
    """The heading (header or axis title) of a column: app.reading's heading, then HEADINGS, then a known
    column with a suffix (d2_mean -> "D2 levels (mean)", tau_a_lo -> "τa low"), else the name with
    spaces for underscores."""
    known = reading.HEADINGS.get(col) or HEADINGS.get(col)
    if known:
        return known
    for suffix, words in SUFFIXES.items():
        base = col.removesuffix(suffix)
        if base != col and (base in reading.HEADINGS or base in HEADINGS or base in reading.HELP):
            return words.format(heading(base))
    return col.replace("_", " ")


def has_heading(col: str) -> bool:
    """Whether someone chose the column's heading (heading() does not fall back to the bare name)."""
    return heading(col) != col.replace("_", " ") or col in reading.HEADINGS or col in HEADINGS


def help_text(col: str, reason: str | None = None) -> str | None:
    """The column's definition, with why a cell may read "–" when `reason` is given."""
    text = reading.HELP.get(col) or HELP.get(col)
    if reason:
        text = (text + " " if text else "") + f"– : {reason}."
    return text


def cell_text(x) -> str:
    """How a table writes one value: app.reading.number_text (three significant digits, "–" when
    missing, separators, 0 for floating noise below 1e-9: 5e-10 -> "0"), but never in e-notation:
    3.17e-09 and 2.5e-05 -> "< 0.0001", -2.5e-05 -> "> −0.0001"."""
    if isinstance(x, (float, np.floating)) and not math.isnan(x) and NOISE <= abs(x) < SMALL:
        return "< 0.0001" if x > 0 else "> −0.0001"
    if isinstance(x, (list, tuple, np.ndarray, pl.Series)):      # a list as text: "a, b" (empty: "–")
        return ", ".join(cell_text(v) for v in x) or PLACEHOLDER
    if isinstance(x, dict):
        return ", ".join(f"{k}: {cell_text(v)}" for k, v in x.items()) or PLACEHOLDER
    return reading.number_text(x)


def name_width(frame: pl.DataFrame, col: str) -> int:
    """Pixels that show every value of a name column, and its heading, whole."""
    longest = max([len(cell_text(v)) for v in frame[col].to_list()] + [len(heading(col))], default=0)
    return int(CHAR_PX * longest + PAD_PX)


def config(frame: pl.DataFrame, missing: dict[str, str] | None = None) -> dict:
    """st.dataframe's column_config: every column with its heading, its help (definition, and the
    reason for "–" where the column has a missing value), identity columns pinned."""
    import streamlit as st     # the config objects only
    out = {}
    for col in frame.columns:
        s = frame[col]
        has_gap = s.null_count() > 0 or (s.dtype in (pl.Float32, pl.Float64) and bool(s.is_nan().any()))
        reason = ((missing or {}).get(col) or MISSING.get(col) or GENERAL_MISSING) if has_gap else None
        width = name_width(frame, col) if col in NAMES else None
        out[col] = st.column_config.Column(heading(col), help=help_text(col, reason), pinned=col in reading.PINNED,
                                           width=width)
    return out


def _text(frame: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame([pl.Series(c, [cell_text(v) for v in frame[c].to_list()], dtype=pl.String)
                         for c in frame.columns])


def view(frame: pl.DataFrame, stars: dict[str, list[int]] | None = None,
         missing: dict[str, str] | None = None) -> dict:
    """st.dataframe's `data`, `column_config` and `placeholder` for FRAME (see the module's rules)."""
    cfg = config(frame, missing)
    if frame.height * max(frame.width, 1) > reading.STYLED_CELLS:
        text = _text(frame)
        for col, rows in (stars or {}).items():
            text = text.with_columns(pl.when(pl.int_range(pl.len()).is_in(rows)).then(pl.col(col) + " ★")
                                     .otherwise(pl.col(col)).alias(col))
        return {"data": text, "column_config": cfg, "placeholder": PLACEHOLDER}
    nested = [c for c in frame.columns if isinstance(frame[c].dtype, (pl.List, pl.Array, pl.Struct, pl.Object))]
    df = frame.with_columns(pl.Series(c, [cell_text(v) for v in frame[c].to_list()], dtype=pl.String)
                            for c in nested).to_pandas()
    styler = df.style.format(cell_text, na_rep="–")
    for col, rows in (stars or {}).items():
        styler = styler.format(lambda v: cell_text(v) + " ★", subset=(list(rows), [col]), na_rep="–")
    return {"data": styler, "column_config": cfg, "placeholder": PLACEHOLDER}


def show(frame: pl.DataFrame, stars: dict[str, list[int]] | None = None, missing: dict[str, str] | None = None,
         **kwargs) -> None:
    """st.dataframe of view(frame), without the index, as wide as its container (kwargs override)."""
    import streamlit as st
    st.dataframe(**view(frame, stars, missing), **{"hide_index": True, "width": "stretch", **kwargs})
