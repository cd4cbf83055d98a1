"""Reading aids for the dashboard's tables and charts (pure: no Streamlit calls).

- HELP: each diagnostic's definition, condensed from DESIGN.md 'Metric definitions', for column
  tooltips;
- column_config(): Streamlit column settings for a frame: the definitions as help, judge and
  format (and decoding) pinned so wide tables keep them in view;
- binned_means(): y averaged within bins of x, with a normal 95% interval, for plots where a raw
  scatter overplots (q_i against the reference gap on binary references has six distinct points).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

HELP = {
    "judge": "The judge's name in the store.",
    "format": "The scoring format: binary, likert5, numeric100, anchored, tournament, or one defined in TOML.",
    "decoding": "greedy: the judge's own answer, parsed (the paper's protocol); constrained: the answer "
                "restricted to the format's labels.",
    "score": "label: the parsed verdict; expected: the label distribution's probability-weighted value.",
    "n_verdicts": "Judge calls in the cell (retries are attempts of one call, not more calls).",
    "n_candidates": "Candidates with a score.",
    "n_prompts": "Prompts with at least one scored candidate.",
    "parse_rate": "Parsed calls / all calls.",
    "nominal_levels": "How many values the format can express.",
    "distinct": "Number of distinct score values among the scored candidates.",
    "tie_prob": "Σ p_v²: the probability that two candidates drawn with replacement share a score.",
    "d1": "exp(Shannon entropy) of the score distribution: the effective number of levels.",
    "d2": "1 / tie_prob: the effective number of levels, weighted toward the common ones.",
    "mult5_share": "0-100 scales: the share of scores that are multiples of 5.",
    "top_tied": "Share of prompts (≥ 2 scored candidates) whose maximum score is held by ≥ 2 candidates: "
                "selecting the top is then a coin flip.",
    "spearman": "Spearman correlation of the score and the reference over all candidates with both.",
    "tau_a": "Within prompts: (C − D) / all pairs; ties in the score stay in the denominator. Mean over prompts.",
    "tau_b": "Within prompts: (C − D) / √((n0 − n1)(n0 − n2)); divides by the untied pairs, so it flatters "
             "coarse formats. Mean over prompts.",
    "somers_d": "Within prompts: (C − D) / (pairs not tied in the reference); equals scipy.stats.somersd(r, s). "
                "Mean over prompts.",
    "top1": "Share of prompts whose judge-top candidate (one seeded tie-break) is reference-top.",
    "top1_expected": "The same, in expectation under random tie-breaking: judge-top ∩ reference-top / judge-top.",
    "top1_uniform": "What picking a candidate uniformly at random gets: reference-top / n, averaged.",
    "n_ranked_prompts": "Prompts with ≥ 2 candidates that have both a score and a reference.",
    "pairing": "pointwise, anchored (each candidate against the prompt's anchor) or tournament (pairs).",
    "n_calls": "Comparative calls in the cell.",
    "n_reverse_calls": "Calls made with the item's candidates in the reverse order.",
    "n_pairs": "Items with a parsed verdict in both orders.",
    "q": "The quality signal: mean over items of (v_fwd − v_rev) / 2.",
    "q_lo": "95% percentile-bootstrap interval of q over items (lower end).",
    "q_hi": "95% percentile-bootstrap interval of q over items (upper end).",
    "b": "The slot bias: mean over items of (v_fwd + v_rev) / 2; > 0 pulls toward slot A.",
    "b_lo": "95% percentile-bootstrap interval of b over items (lower end).",
    "b_hi": "95% percentile-bootstrap interval of b over items (upper end).",
    "consistency": "Share of items whose preferred candidate is the same in both orders (a tie in both "
                   "orders is consistent, a tie in one order only is not).",
    "self_tie_rate": "Share of TIE among parsed calls that compare a candidate with itself.",
    "n_self": "Self-comparison calls (the anchor against itself).",
    "q_gap_corr": "Pearson correlation of q_i with the reference gap r_x − r_y.",
    "first_rate": "How often the selected candidate is the first-listed one.",
    "last_rate": "How often the selected candidate is the last-listed one.",
    "uniform_rate": "The rate without position effects: mean of 1/k.",
}
PINNED = ("judge", "format", "decoding")


def column_config(columns: list[str]) -> dict:
    """st.dataframe's column_config for these columns: help from HELP, identity columns pinned."""
    import streamlit as st   # only the config objects; no page call
    out = {}
    for col in columns:
        if col in PINNED:
            out[col] = st.column_config.Column(col, help=HELP.get(col), pinned=True)
        elif col in HELP:
            out[col] = st.column_config.Column(col, help=HELP[col])
    return out


def binned_means(frame: pl.DataFrame, x: str, y: str, group: str, n_bins: int = 6) -> pl.DataFrame:
    """Per group: bins of x (each distinct value when there are at most n_bins, else quantile bins),
    with x = the mean of x in the bin, y = the mean of y, lo/hi = y ± 1.96 sd/√n (null for n < 2),
    n = items. Columns: group, x, y, lo, hi, n."""
    rows = []
    for (g,), part in frame.drop_nulls([x, y]).group_by(group, maintain_order=True):
        xs, ys = part[x].to_numpy().astype(float), part[y].to_numpy().astype(float)
        values = np.unique(xs)
        if len(values) <= n_bins:
            codes = np.searchsorted(values, xs)
        else:
            edges = np.unique(np.quantile(xs, np.linspace(0, 1, n_bins + 1))[1:-1])
            codes = np.searchsorted(edges, xs, side="right")
        for code in np.unique(codes):
            yy, xx = ys[codes == code], xs[codes == code]
            n, mean = len(yy), float(yy.mean())
            half = 1.96 * float(yy.std(ddof=1)) / math.sqrt(n) if n >= 2 else None
            rows.append({group: g, x: float(xx.mean()), y: mean, "lo": None if half is None else mean - half,
                         "hi": None if half is None else mean + half, "n": n})
    return pl.DataFrame(rows, schema={group: pl.String, x: pl.Float64, y: pl.Float64, "lo": pl.Float64,
                                      "hi": pl.Float64, "n": pl.Int64})
