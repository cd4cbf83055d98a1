"""How many calls a run's plan holds and how many characters they give the judge, counted without
building the plan or reading a text: from each candidate's response length and its prompt's
(the store's candidate_lengths), what plan_calls would plan and plan_chars would count.

A call's characters are its format's template, the prompt and the response in slot A (and B). So a
pointwise format's are the sum over candidates of (template + prompt + response); a tournament's, per
prompt of k candidates, k(k-1)/2 pairs of (template + prompt) plus each response k - 1 times (it meets
every other candidate once); an anchored format's, per candidate, template + prompt + its response +
its anchor's (a reversed call gives the same texts in the other order). Where the calls asked twice are
a seeded sample of a tournament's pairs, or a prompt lists two candidates at one position, the pairs
are planned (tournament_plan, on the lengths) and their characters summed.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ._schedule import reversed_anchored, tournament_plan, with_anchors
from .formats import Format

N_PROMPT, N_RESPONSE = pl.col("n_prompt").fill_null(0), pl.col("n_response").fill_null(0)


def plan_size(cands: pl.DataFrame, fmt: Format, schedule: str = "listing", swap_sample: int | str = 0,
              seed: int = 0) -> tuple[int, int]:
    """(calls, characters) of `fmt`'s calls in plan_calls' plan over `cands` (cand_idx, prompt_idx,
    position, reference, n_prompt, n_response; by prompt and position), with plan_chars' characters."""
    template = len(fmt.template or "")
    if fmt.kind == "pointwise":
        return cands.height, _total(cands, N_PROMPT + N_RESPONSE) + cands.height * template
    if fmt.pairing == "anchored":
        joined, _ = with_anchors(cands, seed)
        anchor = cands.select(pl.col("cand_idx").alias("anchor_idx"), N_RESPONSE.alias("n_anchor"))
        joined = joined.join(anchor, on="anchor_idx", how="left", maintain_order="left").with_columns(
            (N_PROMPT + N_RESPONSE + pl.col("n_anchor").fill_null(0) + template).alias("chars"))
        others = joined.filter(pl.col("cand_idx") != pl.col("anchor_idx"))["chars"].to_numpy()
        back = reversed_anchored(others.size, swap_sample, seed)
        return joined.height + int(back.sum()), _total(joined, pl.col("chars")) + int(others[back].sum())
    twice = schedule == "both" or swap_sample == "all"
    if (twice or not swap_sample) and _distinct_positions(cands):
        per = cands.group_by("prompt_idx").agg(pl.len().cast(pl.Int64).alias("k"), N_PROMPT.first().alias("p"),
                                               N_RESPONSE.sum().alias("r"))
        pairs = pl.col("k") * (pl.col("k") - 1) // 2
        calls, chars = _total(per, pairs), _total(per, pairs * (pl.col("p") + template) + (pl.col("k") - 1) * pl.col("r"))
        return (2 * calls, 2 * chars) if twice else (calls, chars)
    plan = tournament_plan(cands.select("prompt_idx", "cand_idx", "position"), fmt, schedule, swap_sample, seed)
    return plan.height, call_chars(plan, cands, template)


def call_chars(plan: pl.DataFrame, cands: pl.DataFrame, template: int) -> int:
    """The characters of a plan's calls of one format (plan_chars' sum, from the lengths in `cands`)."""
    prompt = cands.select("prompt_idx", N_PROMPT.alias("n_p")).unique("prompt_idx")
    text = cands.select("cand_idx", N_RESPONSE.alias("n"))
    calls = (plan.select("prompt_idx", "a_idx", "b_idx")
             .join(prompt, on="prompt_idx", how="left")
             .join(text.rename({"cand_idx": "a_idx", "n": "n_a"}), on="a_idx", how="left")
             .join(text.rename({"cand_idx": "b_idx", "n": "n_b"}), on="b_idx", how="left"))
    return _total(calls, pl.sum_horizontal(pl.col("n_p", "n_a", "n_b").fill_null(0))) + plan.height * template


def _total(frame: pl.DataFrame, expr: pl.Expr) -> int:
    return int(frame.select(expr.cast(pl.Int64).sum()).item() or 0) if frame.height else 0


def _distinct_positions(cands: pl.DataFrame) -> bool:
    """Whether no prompt lists two candidates at one position (cands by prompt and position): then a
    prompt of k candidates makes k(k-1)/2 pairs."""
    prompt, position = cands["prompt_idx"].to_numpy(), cands["position"].to_numpy()
    return bool(np.all((np.diff(prompt) != 0) | (np.diff(position) != 0)))
