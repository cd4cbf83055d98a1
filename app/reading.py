"""Reading aids for the dashboard's tables and charts (pure: no Streamlit calls).

- HELP: each diagnostic's definition, condensed from docs/metrics.md, for column
  tooltips;
- HEADINGS, PINNED: readable column headings and the identity columns kept in view, which
  app/tables.py (the one table helper every page uses) applies;
- number_text(): how a table shows a value: "–" where it is missing, three significant digits,
  zero for floating noise below 1e-9;
- binned_means(): y averaged within bins of x, with a normal 95% interval, for plots where a raw
  scatter overplots (qᵢ against the reference gap on binary references has six distinct points);
- merged_bins(): a reliability diagram's adjacent bins merged until each holds enough items to
  draw (a bin of one or two judgements is a coin, and the line zigzags through it).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from audit import MINUS, minus

HELP = {
    "judge": "The judge's name in the store.",
    "format": "The scoring format: binary, likert5, numeric100, anchored, tournament, or one defined in TOML.",
    "decoding": "greedy: the judge's own answer at temperature 0, parsed (the paper's protocol); sampled: the "
                "same drawn at a temperature above 0; constrained: the answer restricted to the format's labels.",
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
    "pairing": "a comparative format's pairing: anchored (each candidate against the prompt's anchor) or tournament (pairs); none for a pointwise format.",
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
    "q_gap_corr": "Pearson correlation of qᵢ with the reference gap r_x − r_y.",
    "first_rate": "How often the selected candidate is the first-listed one.",
    "last_rate": "How often the selected candidate is the last-listed one.",
    "uniform_rate": "The rate without position effects: mean of 1/k.",
}
HELP.update({
    "rank": "1 = strongest (Bradley-Terry).",
    "strength": "log p from the Bradley-Terry MM fit (ties half a win each), centred to mean 0 over the items.",
    "kappa": "Cohen's kappa over A / B / tie: (p_o − p_e) / (1 − p_e).",
    "agreement": "Raw agreement: share of judgements with the human label.",
    "p_holm": "Holm's step-down adjustment of p over the judge's contrasts.",
    "n_judges_agree": "Evaluation judges whose contrast has the same sign and p_holm < 0.05.",
    "diff": "Mean over prompts of the paired difference of outcomes (a − b).",
})
# headers as a reader says them; a column not named here shows its name with spaces for underscores
HEADINGS = {
    "n_verdicts": "verdicts", "n_candidates": "candidates", "n_prompts": "prompts", "parse_rate": "parse rate",
    "nominal_levels": "nominal levels", "distinct": "distinct values", "tie_prob": "tie probability",
    "d1": "D1 levels", "d2": "D2 levels", "mult5_share": "multiples of 5", "top_tied": "top tied",
    "spearman": "Spearman ρ", "tau_a": "τa", "tau_b": "τb", "somers_d": "Somers' D", "top1": "top-1",
    "top1_expected": "top-1 expected", "top1_uniform": "top-1 at random", "n_ranked_prompts": "ranked prompts",
    "n_calls": "calls", "n_reverse_calls": "reverse-order calls", "n_pairs": "pairs in both orders",
    "q_lo": "q low", "q_hi": "q high", "b_lo": "b low", "b_hi": "b high", "self_tie_rate": "self-TIE rate",
    "n_self": "self calls", "q_gap_corr": "q vs reference gap", "first_rate": "first-listed picked",
    "last_rate": "last-listed picked", "uniform_rate": "1/k", "rank_single": "rank (single order)",
    "lo": "low", "hi": "high", "kappa": "κ", "kappa_lo": "κ low", "kappa_hi": "κ high", "p_holm": "p (Holm)",
    "n_judges_agree": "judges agreeing", "acc_lo": "accuracy low", "acc_hi": "accuracy high",
}
PINNED = ("judge", "format", "decoding")
NOISE = 1e-9   # |x| below this shows as 0: floating noise of sums that cancel (lo -0.0000000008)


def number_text(x) -> str:
    """How a table writes one value: "–" when missing (None or NaN); an integer with thousands
    separators (1234 -> "1,234"); a float to three significant digits without trailing zeros
    (0.992352 -> "0.992", 0.5 -> "0.5"), as 0 below 1e-9 in size (-8e-10 -> "0"), and from 999.5 up
    rounded to a whole number with separators, never in e-notation (1234.5 -> "1,235": a count or a
    latency reads better whole); below 1e-4 in e-notation (1.234e-05 -> "1.23e-05"). A negative number
    with the minus sign U+2212 (-0.0278 -> "−0.0278"), as the charts and sentences write it. Text as is."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, bool) or isinstance(x, str):
        return str(x)
    if isinstance(x, (int, np.integer)):
        return minus(f"{int(x):,}")
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if abs(x) < NOISE:
            return "0"
        if abs(x) >= 999.5:
            whole = math.floor(abs(x) + 0.5)          # half away from zero, as a reader rounds
            return f"{MINUS if x < 0 else ''}{whole:,}"
        return minus(f"{x:.3g}")
    return str(x)


def card_count(n: int) -> str:
    """A count as a metric card shows it, short enough for a fifth of a laptop's width: up to
    999,999 with separators (583 -> "583"); from a million in millions to three significant digits
    (10,000,000 -> "10M", 2,500,000 -> "2.5M", 123,456,789 -> "123M")."""
    return f"{n:,}" if n < 1_000_000 else f"{n / 1e6:.3g}M"


STYLED_CELLS = 40_000   # past this many cells a table is sent as text (pandas' Styler is slow and capped)


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


MIN_BIN = 10      # a reliability diagram's point rests on at least this many judgements


def merged_bins(bins: list[dict], min_n: int = MIN_BIN) -> list[dict]:
    """Reliability bins (lo, hi, n, mean_p, mean_y; audit.confidence's `reliability`), adjacent ones
    merged from the left until each holds at least min_n items; a last group short of min_n joins the
    bin before it (all of them make one bin when they hold fewer than min_n together). A merged bin
    spans its parts (lo of the first, hi of the last), n is their sum, mean_p and mean_y their
    n-weighted means: the means over the merged bin's items. Sorted by lo."""
    out, group = [], []
    for b in sorted(bins, key=lambda b: b["lo"]):
        group.append(b)
        if sum(g["n"] for g in group) >= min_n:
            out.append(group)
            group = []
    if group:
        if out:
            out[-1] = out[-1] + group
        else:
            out.append(group)
    return [{"lo": g[0]["lo"], "hi": g[-1]["hi"], "n": sum(b["n"] for b in g),
             "mean_p": sum(b["n"] * b["mean_p"] for b in g) / sum(b["n"] for b in g),
             "mean_y": sum(b["n"] * b["mean_y"] for b in g) / sum(b["n"] for b in g)} for g in out]
