"""Downstream statistics (docs/metrics.md#downstream-contrasts): Friedman per evaluation
judge, paired bootstrap contrasts with Holm, judge concurrence, length- and markdown-adjusted
contrasts, and the minimum detectable difference. Pure numpy/scipy on an outcomes frame.

Outcome rows (the `--export` / `--outcomes` JSONL, one per condition x seed x prompt x judge):
    condition  str    'base' or a training condition (e.g. 'judge/format@0.25')
    seed       int    the training seed (the base model: 0)
    prompt_id  str    a held-out prompt
    judge      str    the evaluation judge
    outcome    1 | 0.5 | 0   the student's answer vs the reference-top answer, judged in both orders
    answer_len int    optional: characters of the student's answer       (for `adjusted`)
    ref_len    int    optional: characters of the reference-top answer   (for `adjusted`)
    markdown   bool   optional: the student's answer uses markdown        (for `adjusted`)

Per judge, only prompts with an outcome for every (condition, seed) of that judge are used
(complete blocks; the rest are counted in `notes`). Conditions are ordered by name with `base`
last, and every pair i < j is a contrast a - b (so each condition is contrasted with `base`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

from audit import cell_rng, holm
from ingest import UserError, where
from ingest.files import jsonl_objects

ALPHA = 0.05
POWER = 0.80
CHUNK = 1000                       # bootstrap replicates drawn at a time (bounds memory)
REQUIRED = {"condition": str, "seed": int, "prompt_id": str, "judge": str, "outcome": float}
COVARIATES = ("answer_len", "ref_len", "markdown")
SCHEMA = {"condition": pl.String, "seed": pl.Int64, "prompt_id": pl.String, "judge": pl.String,
          "outcome": pl.Float64, "answer_len": pl.Int64, "ref_len": pl.Int64, "markdown": pl.Boolean}


# -- reading ---------------------------------------------------------------------------------------

def read_outcomes(path: str | Path) -> pl.DataFrame:
    """Read and check an outcomes JSONL file; errors name the file, line and field."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: no such file")
    rows, seen = [], {}
    for n, obj in jsonl_objects(p):
        rows.append(_check_row(obj, lambda f, n=n: where(p, n, f)))
        key = tuple(rows[-1][k] for k in ("condition", "seed", "prompt_id", "judge"))
        if key in seen:
            raise UserError(f"{where(p, n)}: repeats the outcome of line {seen[key]} "
                            f"(condition, seed, prompt_id, judge = {key})")
        seen[key] = n
    if not rows:
        raise UserError(f"{p}: no outcome rows")
    return pl.DataFrame(rows, schema=SCHEMA)


def _check_row(obj: dict, at) -> dict:
    out = {}
    for name, kind in REQUIRED.items():
        value = obj.get(name)
        if name == "outcome":
            if value is None or isinstance(value, bool) or value not in (0, 0.5, 1):
                raise UserError(f"{at(name)}: must be 1, 0.5 or 0, not {value!r}")
            out[name] = float(value)
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise UserError(f"{at(name)}: required, an integer, not {value!r}")
            out[name] = value
        else:
            if not isinstance(value, str) or not value:
                raise UserError(f"{at(name)}: required, a non-empty string, not {value!r}")
            out[name] = value
    for name in ("answer_len", "ref_len"):
        value = obj.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise UserError(f"{at(name)}: a character count (integer >= 0), not {value!r}")
        out[name] = value
    md = obj.get("markdown")
    if md is not None and md not in (True, False, 0, 1):
        raise UserError(f"{at('markdown')}: true or false, not {md!r}")
    out["markdown"] = None if md is None else bool(md)
    return out


# -- the pieces, each checkable on its own -----------------------------------------------------------

def bootstrap_p(diffs: np.ndarray) -> float:
    """Two-sided bootstrap p: twice the smaller share of resampled differences <= 0 or >= 0, at most 1."""
    d = np.round(np.asarray(diffs, dtype=float), 12)
    return float(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))


def mdd(sd_diff: float, n_prompts: int, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """Minimum detectable mean paired difference: (z_{1-alpha/2} + z_power) * sd / sqrt(n)."""
    if n_prompts < 2 or sd_diff is None or not math.isfinite(sd_diff):
        return None
    return float((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * sd_diff / math.sqrt(n_prompts))


@dataclass
class Design:
    """One judge's complete blocks: per condition an array seeds x prompts of outcomes."""
    judge: str
    conditions: list[str]
    prompts: list[str]
    seeds: dict[str, list[int]]
    values: dict[str, np.ndarray]         # condition -> (n_seeds, n_prompts)
    dropped: int                          # prompts left out for missing (condition, seed) outcomes

    def means(self) -> np.ndarray:
        """(n_conditions, n_prompts): outcomes averaged over seeds per (condition, prompt)."""
        return np.stack([self.values[c].mean(axis=0) for c in self.conditions])


def condition_order(conditions) -> list[str]:
    return sorted(set(conditions), key=lambda c: (c == "base", c))


def design(frame: pl.DataFrame, judge: str, value: str = "outcome") -> Design:
    """Arrange one judge's outcomes (or another value column) as complete blocks."""
    rows = frame.filter(pl.col("judge") == judge)
    conditions = condition_order(rows["condition"].to_list())
    seeds = {c: sorted(set(rows.filter(pl.col("condition") == c)["seed"].to_list())) for c in conditions}
    needed = sum(len(s) for s in seeds.values())
    per_prompt = rows.group_by("prompt_id").agg(pl.len().alias("n"))
    all_prompts = sorted(per_prompt["prompt_id"].to_list())
    prompts = sorted(per_prompt.filter(pl.col("n") == needed)["prompt_id"].to_list())
    index = {p: i for i, p in enumerate(prompts)}
    values = {}
    for c in conditions:
        arr = np.full((len(seeds[c]), len(prompts)), np.nan)
        sub = rows.filter((pl.col("condition") == c) & pl.col("prompt_id").is_in(prompts))
        s_index = {s: i for i, s in enumerate(seeds[c])}
        for s, p, v in zip(sub["seed"].to_list(), sub["prompt_id"].to_list(), sub[value].to_list()):
            arr[s_index[s], index[p]] = v
        values[c] = arr
    return Design(judge, conditions, prompts, seeds, values, len(all_prompts) - len(prompts))


def boot_condition_means(d: Design, boot: int, rng: np.random.Generator) -> np.ndarray:
    """(boot, n_conditions): per replicate, the prompt-resampled mean of each condition's
    seed-resampled per-prompt means. Prompts are resampled once per replicate for every condition
    (the pairing); seeds are resampled within each condition. A contrast's replicate is then the
    difference of two columns (the mean of paired differences is the difference of means)."""
    n = len(d.prompts)
    out = np.empty((boot, len(d.conditions)))
    for start in range(0, boot, CHUNK):
        b = min(CHUNK, boot - start)
        w = rng.multinomial(n, np.full(n, 1 / n), size=b) / n                  # prompt weights
        for j, c in enumerate(d.conditions):
            s = d.values[c].shape[0]
            v = rng.multinomial(s, np.full(s, 1 / s), size=b) / s              # seed weights
            out[start:start + b, j] = np.einsum("bp,bs,sp->b", w, v, d.values[c])
    return out


def friedman(d: Design) -> dict:
    """scipy's Friedman test over conditions with prompts as blocks (needs >= 3 conditions)."""
    row = {"judge": d.judge, "statistic": None, "p": None, "n_blocks": len(d.prompts), "k": len(d.conditions)}
    if len(d.conditions) >= 3 and len(d.prompts) >= 2:
        with warnings.catch_warnings():          # every block tied: 0/0, reported as None below
            warnings.simplefilter("ignore", RuntimeWarning)
            res = stats.friedmanchisquare(*d.means())
        if math.isfinite(res.statistic):
            row.update(statistic=float(res.statistic), p=float(res.pvalue))
    return row


def pair_contrasts(d: Design, boot: int, rng: np.random.Generator) -> list[dict]:
    """Every pair a - b (a listed before b): diff, percentile interval, bootstrap p, Holm."""
    k = len(d.conditions)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if not pairs or not d.prompts:
        return []
    means = d.means()
    reps = boot_condition_means(d, boot, rng)
    rows = []
    for i, j in pairs:
        paired = means[i] - means[j]
        dist = np.round(reps[:, i] - reps[:, j], 12)     # equal sums tie whatever the order
        lo, hi = np.quantile(dist, [0.025, 0.975])
        sd = float(np.std(paired, ddof=1)) if paired.size > 1 else None
        rows.append({"judge": d.judge, "a": d.conditions[i], "b": d.conditions[j],
                     "diff": float(paired.mean()), "lo": float(lo), "hi": float(hi),
                     "p": bootstrap_p(dist), "n_prompts": len(d.prompts), "sd_diff": sd})
    for row, ph in zip(rows, holm(np.array([r["p"] for r in rows]))):
        row["p_holm"] = float(ph)
    return rows


def concurrence(rows: list[dict]) -> None:
    """n_judges_agree: judges whose contrast a - b has the same sign and p_holm < 0.05 (in place)."""
    for row in rows:
        sign = np.sign(round(row["diff"], 12))
        row["n_judges_agree"] = sum(1 for o in rows if (o["a"], o["b"]) == (row["a"], row["b"])
                                    and np.sign(round(o["diff"], 12)) == sign and o["p_holm"] < ALPHA)


# -- length- and markdown-adjusted outcomes ---------------------------------------------------------

def covariates(frame: pl.DataFrame) -> pl.DataFrame:
    """log_len_ratio = log(max(answer_len, 1) / max(ref_len, 1)); md = markdown as 0/1."""
    return frame.with_columns(
        (pl.max_horizontal(pl.col("answer_len"), 1).cast(pl.Float64).log()
         - pl.max_horizontal(pl.col("ref_len"), 1).cast(pl.Float64).log()).alias("log_len_ratio"),
        pl.col("markdown").cast(pl.Float64).alias("md"))


def _two_way_residual(x: np.ndarray, cond: np.ndarray, prompt: np.ndarray) -> np.ndarray:
    """x minus its OLS fit on condition and prompt fixed effects. The blocks are complete with the
    same seeds for every prompt (a proportional design), where that fit is row mean + column mean
    - grand mean."""
    def group_mean(g):
        sums = np.bincount(g, weights=x)
        return (sums / np.bincount(g))[g]
    return x - group_mean(cond) - group_mean(prompt) + x.mean()


def adjust(frame: pl.DataFrame, judge: str, prompts: list[str]) -> tuple[pl.DataFrame, dict]:
    """One judge's rows with `adjusted` = outcome - gamma . covariates, gamma from OLS of outcome on
    prompt fixed effects, condition effects, log_len_ratio and md (Frisch-Waugh: both sides
    residualised on the fixed effects). A covariate with no variation left is dropped (coef None)."""
    rows = covariates(frame.filter((pl.col("judge") == judge) & pl.col("prompt_id").is_in(prompts)))
    cond = np.unique(rows["condition"].to_numpy(), return_inverse=True)[1]
    prompt = np.unique(rows["prompt_id"].to_numpy(), return_inverse=True)[1]
    y = rows["outcome"].to_numpy().astype(float)
    coefs, kept, cols = {"log_len_ratio": None, "markdown": None}, [], []
    for name, col in (("log_len_ratio", "log_len_ratio"), ("markdown", "md")):
        r = _two_way_residual(rows[col].to_numpy().astype(float), cond, prompt)
        if np.linalg.norm(r) > 1e-9 * (1 + np.linalg.norm(rows[col].to_numpy())):
            kept.append(name)
            cols.append((col, r))
    adjusted = y.copy()
    if cols:
        gamma = np.linalg.lstsq(np.column_stack([r for _, r in cols]),
                                _two_way_residual(y, cond, prompt), rcond=None)[0]
        for (col, _), name, g in zip(cols, kept, gamma):
            coefs[name] = float(g)
            adjusted -= g * rows[col].to_numpy().astype(float)
    return rows.with_columns(pl.Series("adjusted", adjusted)), coefs


# -- everything --------------------------------------------------------------------------------------

def analyse(frame: pl.DataFrame, boot: int = 10_000, seed: int = 0) -> dict:
    """{"friedman", "contrasts", "adjusted", "mdd", "notes"} as `contrasts` prints them
    (docs/metrics.md#downstream-contrasts).

    friedman: [{judge, statistic, p, n_blocks, k}] (statistic and p None with < 3 conditions);
    contrasts: [{judge, a, b, diff, lo, hi, p, p_holm, n_judges_agree, n_prompts, sd_diff}];
    adjusted: the same keys plus coef_log_len_ratio and coef_markdown (None: dropped, no variation);
    mdd: {alpha, power, by_judge: [{judge, n_prompts, seeds: {condition: n}, sd_diff (root mean
    square over the judge's contrasts), mdd}], contrasts: [{judge, a, b, n_prompts, sd_diff, mdd}]};
    notes: prompts left out, missing covariates."""
    if boot < 1:
        raise ValueError("boot must be at least 1")
    frame = frame.filter(pl.col("outcome").is_not_null())
    judges = sorted(frame["judge"].unique().to_list())
    has_cov = all(c in frame.columns for c in COVARIATES) and frame.height > 0 \
        and frame.select(pl.all_horizontal(pl.col(c).is_not_null() for c in COVARIATES).all()).item()
    out = {"friedman": [], "contrasts": [], "adjusted": [],
           "mdd": {"alpha": ALPHA, "power": POWER, "by_judge": [], "contrasts": []}, "notes": []}
    for judge in judges:
        d = design(frame, judge)
        if d.dropped:
            out["notes"].append(f"{judge}: {d.dropped} prompt(s) left out (an outcome missing for some "
                                f"condition or seed)")
        out["friedman"].append(friedman(d))
        # per judge its own stream, keyed by its name (not its position: adding a judge changes no
        # other judge's interval), the same stream for `adjusted`
        rows = pair_contrasts(d, boot, cell_rng(seed, judge))
        out["contrasts"] += rows
        sds = [r["sd_diff"] for r in rows if r["sd_diff"] is not None]
        rms = math.sqrt(sum(s * s for s in sds) / len(sds)) if sds else None
        out["mdd"]["by_judge"].append({"judge": judge, "n_prompts": len(d.prompts),
                                       "seeds": {c: len(s) for c, s in d.seeds.items()},
                                       "sd_diff": rms, "mdd": mdd(rms, len(d.prompts))})
        out["mdd"]["contrasts"] += [{"judge": judge, "a": r["a"], "b": r["b"], "n_prompts": r["n_prompts"],
                                     "sd_diff": r["sd_diff"], "mdd": mdd(r["sd_diff"], r["n_prompts"])}
                                    for r in rows]
        if has_cov and d.prompts:
            adj_frame, coefs = adjust(frame, judge, d.prompts)
            adj = pair_contrasts(design(adj_frame, judge, "adjusted"), boot, cell_rng(seed, judge))
            for r in adj:
                r.update(coef_log_len_ratio=coefs["log_len_ratio"], coef_markdown=coefs["markdown"])
            out["adjusted"] += adj
    if not has_cov:
        out["notes"].append("adjusted: no answer_len, ref_len and markdown on every row; nothing to adjust for")
    concurrence(out["contrasts"])
    concurrence(out["adjusted"])
    return out


def prompt_differences(frame: pl.DataFrame, judge: str, a: str, b: str) -> pl.DataFrame:
    """One judge's contrast a - b prompt by prompt (complete blocks): prompt_id, mean_a, mean_b
    (outcomes averaged over seeds) and diff = mean_a - mean_b, largest first."""
    d = design(frame.filter(pl.col("outcome").is_not_null()), judge)
    if a not in d.conditions or b not in d.conditions:
        return pl.DataFrame(schema={"prompt_id": pl.String, "mean_a": pl.Float64, "mean_b": pl.Float64,
                                    "diff": pl.Float64})
    m = d.means()
    i, j = d.conditions.index(a), d.conditions.index(b)
    return pl.DataFrame({"prompt_id": d.prompts, "mean_a": m[i], "mean_b": m[j], "diff": m[i] - m[j]}) \
        .sort(["diff", "prompt_id"], descending=[True, False])
