"""Bias probes and the mitigation comparison (docs/metrics.md#probes, docs/metrics.md#mitigations).

Probe pools (ingest/probes) hold one prompt per controlled pair, named by the pair's id, with the
candidates `treated` (the manipulated response) and `control`, judged in both orders. Per call the
judge prefers the treated response (+1), the control (-1) or neither (0, a TIE); a probe type's
bias is the mean of that over its parsed calls, P(treated) - P(control), with a 95% percentile
bootstrap interval over pairs. For `position` the treated response is the one in slot A.
"""

from __future__ import annotations

import json
import os

import numpy as np
import polars as pl

from ._bias import cell_rng
from ._read import reading
from ._stats import holm, mcnemar  # one implementation: audit/_stats.py

# pair id prefix -> probe type (first match wins), and what "treated" means for each type
PREFIXES = (("length_truncated", "truncation"), ("position", "position"), ("length", "length"),
            ("style", "markdown"), ("model_origin", "origin"))
TREATED = {"position": ("the response in slot A", "the response in slot B"),
           "length": ("the ~2x longer rewrite", "the original"),
           "truncation": ("the truncated response", "the complete response"),
           "markdown": ("the markdown version", "the plain-prose version"),
           "origin": ("a response from the judge's own model family", "one from another family")}
FAMILIES = {"gemini": ("gemini", "gemma"), "claude": ("claude", "anthropic"), "gpt": ("gpt", "openai"),
            "llama": ("llama", "meta")}
PROBE_COLUMNS = ["judge", "type", "n", "n_calls", "parse_rate", "bias", "lo", "hi", "accuracy", "acc_lo",
                 "acc_hi", "treated", "control"]
MITIGATION_COLUMNS = ["format", "judge", "baseline", "strategy", "n_calls", "agreement", "calls_per_verdict",
                      "calls", "tokens_in", "tokens_out", "tokens_per_verdict", "n_paired", "b", "c", "test",
                      "p_exact", "p_cc", "p", "p_holm", "frontier"]


def probe_type(prompt_id: str) -> str | None:
    return next((t for prefix, t in PREFIXES if prompt_id.startswith(prefix)), None)


def family(name: str | None) -> str | None:
    low = (name or "").lower()
    return next((f for f, keys in FAMILIES.items() if any(k in low for k in keys)), None)


def cluster_share(pair: np.ndarray, score: np.ndarray, n_boot: int, rng: np.random.Generator):
    """Mean of `score` over calls, and its 95% percentile-bootstrap interval resampling pairs
    (clusters of calls) with replacement: (mean, lo, hi)."""
    groups, inv = np.unique(pair, return_inverse=True)
    sums = np.bincount(inv, weights=score, minlength=len(groups))
    counts = np.bincount(inv, minlength=len(groups)).astype(float)
    est = sums.sum() / counts.sum()
    idx = rng.integers(0, len(groups), size=(n_boot, len(groups)))
    boot = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return float(est), float(lo), float(hi)


def _probe_row(judge: str, ptype: str, calls: pl.DataFrame, pref: pl.Expr, n_boot: int, rng) -> dict:
    """calls: one judge's calls of one probe type; pref: +1/-1/0 towards the treated response."""
    done = calls.with_columns(pref.alias("pref")).filter(pl.col("pref").is_not_null())
    treated, control = TREATED.get(ptype, (f"a response from {ptype.split(':', 1)[-1]}", "one from another model"))
    row = {"judge": judge, "type": ptype, "n": done["prompt_idx"].n_unique(), "n_calls": done.height,
           "parse_rate": done.height / calls.height if calls.height else None, "treated": treated,
           "control": control}
    if done.height:
        pair, pref_v = done["prompt_idx"].to_numpy(), done["pref"].to_numpy().astype(float)
        row["bias"], row["lo"], row["hi"] = cluster_share(pair, pref_v, n_boot, rng)
        if ptype == "truncation":      # accuracy: the complete response (the control) preferred
            row["accuracy"], row["acc_lo"], row["acc_hi"] = cluster_share(pair, (pref_v < 0).astype(float),
                                                                          n_boot, rng)
    return row


def probes(db: str | os.PathLike | None, pool: str = "probes", judge: str | None = None, seed: int = 0,
           n_boot: int = 2000) -> pl.DataFrame:
    """One row per (judge, probe type) of a probe pool: judge, type (position, length, truncation,
    markdown, origin = self-preference where the judge's model is of a source family, then
    origin:<model> = preference for that model's responses), n (pairs with a parsed call),
    n_calls (parsed calls), parse_rate, bias, lo, hi (P(treated) - P(control), 95% bootstrap over
    pairs), accuracy, acc_lo, acc_hi (truncation: share of calls preferring the complete response),
    treated, control (what they are)."""
    with reading(db) as read:
        calls = read.frame("probe_calls", pool_id=read.pool_id(pool))
    calls = calls.with_columns(pl.col("prompt_id").map_elements(probe_type, return_dtype=pl.String).alias("type"))
    calls = calls.filter(pl.col("type").is_not_null() & pl.col("a_id").is_in(["treated", "control"]))
    if judge is not None:
        calls = calls.filter(pl.col("judge") == judge)
    sign = pl.col("value").sign()
    toward_treated = pl.when(pl.col("a_id") == "treated").then(sign).otherwise(-sign)
    rows = []
    for (name,), part in calls.partition_by("judge", as_dict=True, maintain_order=True).items():
        def rng(ptype: str) -> np.random.Generator:   # per (judge, probe type): other judges change nothing
            return cell_rng(seed, name, ptype)
        for ptype in ("position", "length", "truncation", "markdown"):
            sub = part.filter(pl.col("type") == ptype)
            if sub.height:
                rows.append(_probe_row(name, ptype, sub, sign if ptype == "position" else toward_treated,
                                       n_boot, rng(ptype)))
        origin = part.filter(pl.col("type") == "origin")
        if not origin.height:
            continue
        own = family(part["judge_model"][0]) or family(name)
        fam_a = pl.col("a_model").map_elements(family, return_dtype=pl.String)
        fam_b = pl.col("b_model").map_elements(family, return_dtype=pl.String)
        mine = origin.filter((fam_a == own) != (fam_b == own)) if own else origin.clear()
        rows.append(_probe_row(name, "origin", mine, pl.when(fam_a == own).then(sign).otherwise(-sign), n_boot,
                                rng("origin"))
                    if mine.height else {"judge": name, "type": "origin", "n": 0, "n_calls": 0,
                                         "treated": TREATED["origin"][0], "control": TREATED["origin"][1]})
        models = sorted(set(origin["a_model"].drop_nulls()) | set(origin["b_model"].drop_nulls()))
        for model in models:
            sub = origin.filter((pl.col("a_model") == model) != (pl.col("b_model") == model))
            pref = pl.when(pl.col("a_model") == model).then(sign).otherwise(-sign)
            rows.append(_probe_row(name, f"origin:{model}", sub, pref, n_boot, rng(f"origin:{model}")))
    schema = {c: pl.Float64 for c in PROBE_COLUMNS}
    schema.update(judge=pl.String, type=pl.String, n=pl.Int64, n_calls=pl.Int64, treated=pl.String,
                  control=pl.String)
    return pl.DataFrame(rows, schema=schema).select(PROBE_COLUMNS)


# -- the mitigation comparison -------------------------------------------------------------------
def pareto(cost: list[float], quality: list[float]) -> list[bool]:
    """True where no other point costs no more and agrees at least as well, one of them strictly."""
    out = []
    for i, (ci, qi) in enumerate(zip(cost, quality)):
        dominated = any(cj <= ci and qj >= qi and (cj < ci or qj > qi)
                        for j, (cj, qj) in enumerate(zip(cost, quality)) if j != i)
        out.append(not dominated)
    return out


def mitigations(db: str | os.PathLike | None, pool: str, baseline: str | None = None) -> pl.DataFrame:
    """Each judge (a strategy is a judge named '<judge>+<strategy>') against its baseline (or every
    judge against `baseline` when one is named, e.g. imported verdicts of prompting strategies) on the
    pool's comparative calls between candidates with references; one row per (format, judge):
    format, judge, baseline, strategy, n_calls, agreement (share of calls whose preferred slot,
    or TIE, is the references' order; unparsed calls count as disagreeing), calls_per_verdict,
    calls (judge calls made for them), tokens_in, tokens_out, tokens_per_verdict, n_paired (calls
    both made), b (baseline agrees, this judge not), c (the reverse), test, p_exact, p_cc, p
    (McNemar, see mcnemar), p_holm (Holm over the format's comparisons), frontier (on the
    cost-versus-agreement frontier: no judge costs fewer tokens per verdict and agrees more)."""
    with reading(db) as read:
        calls = read.frame("probe_calls", pool_id=read.pool_id(pool))
    calls = calls.filter(pl.col("a_ref").is_not_null() & pl.col("b_ref").is_not_null()).with_columns(
        ((pl.col("value").sign() == (pl.col("a_ref") - pl.col("b_ref")).sign()).fill_null(False)).alias("ok"))
    key = ["prompt_idx", "a_idx", "b_idx", "sample"]
    rows = []
    for (fmt,), cell in calls.partition_by("format", as_dict=True, maintain_order=True).items():
        judges = {}
        for (name,), part in cell.partition_by("judge", as_dict=True, maintain_order=True).items():
            settings = json.loads(part["judge_settings"][0] or "{}")
            judges[name] = (part, settings)
        plain = [n for n, (_, s) in judges.items() if not s.get("strategy")]
        out = []
        for name, (part, settings) in judges.items():
            per = int(settings.get("calls_per_verdict") or 1)
            tok_in, tok_out = part["tokens_in"].sum(), part["tokens_out"].sum()
            row = {"format": fmt, "judge": name, "strategy": settings.get("strategy") or "baseline",
                   "n_calls": part.height, "agreement": float(part["ok"].mean()), "calls_per_verdict": per,
                   "calls": part.height * per, "tokens_in": int(tok_in or 0), "tokens_out": int(tok_out or 0),
                   "tokens_per_verdict": float((tok_in or 0) + (tok_out or 0)) / part.height}
            base = baseline or (settings.get("base_judge") if settings.get("base_judge") in judges else None) \
                or (plain[0] if plain else None)
            if (settings.get("strategy") or baseline) and base in judges and base != name:
                paired = part.select(*key, "ok").join(judges[base][0].select(*key, pl.col("ok").alias("ok_base")),
                                                      on=key)
                b = int((paired["ok_base"] & ~paired["ok"]).sum())
                c = int((~paired["ok_base"] & paired["ok"]).sum())
                row.update(baseline=base, n_paired=paired.height, b=b, c=c, **mcnemar(b, c))
            out.append(row)
        tested = [r for r in out if "p" in r]
        for r, adj in zip(tested, holm([r["p"] for r in tested])):
            r["p_holm"] = adj
        for r, front in zip(out, pareto([r["tokens_per_verdict"] for r in out], [r["agreement"] for r in out])):
            r["frontier"] = front
        rows.extend(out)
    schema = {c: pl.Float64 for c in MITIGATION_COLUMNS}
    schema.update(format=pl.String, judge=pl.String, baseline=pl.String, strategy=pl.String, test=pl.String,
                  n_calls=pl.Int64, calls_per_verdict=pl.Int64, calls=pl.Int64, tokens_in=pl.Int64,
                  tokens_out=pl.Int64, n_paired=pl.Int64, b=pl.Int64, c=pl.Int64, frontier=pl.Boolean)
    return pl.DataFrame(rows, schema=schema).select(MITIGATION_COLUMNS)
