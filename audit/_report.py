"""The reporting checklist (docs/command-line.md#judgeaudit-report): per judge x format, the format
verbatim with its decoding rule, tie probability and D2 beside the distinct values and pool size, the
slot scheme and b for comparative formats, and the parse rate. Built from the database alone."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from importlib import metadata

import polars as pl

from ._decision import decision_markdown
from ._bias import bias
from ._cells import audit_cells
from ._consistency import consistency
from ._jury import juries_of
from ._read import reading
from ._pools import pools
from ._words import MIN_N, number, plural, too_few


def _slot_scheme(run: dict | None, b_row: dict | None) -> str:
    if run is None:
        return "unknown"
    swaps = ""
    if b_row is not None:
        swaps = (f"; {b_row['n_reverse_calls']} of {plural(b_row['n_calls'], 'call')} in the reverse order, "
                 f"{plural(b_row['n_pairs'], 'item')} seen in both orders")
    if run["source"] == "import":
        return "imported verdicts" + swaps
    if run["source"] == "jury":
        return "a jury's verdicts, its members' calls combined" + swaps
    return {"anchored": "candidate in slot A against the prompt's anchor",
            "listing": "tournament, earlier-listed candidate always Response A",
            "balanced": "tournament, each candidate in slot A as often as in B",
            "both": "tournament, every pair in both orders"}.get(run["schedule"] or "", run["schedule"] or "") + swaps


DECODING_RULES = {
    "greedy": "greedy: the judge's own answer (temperature 0, at most 16 new tokens), parsed against "
              "the format's labels; an answer that names no label is an unparsed verdict",
    "sampled": "sampled: the judge's own answer drawn at a temperature above 0 (at most 16 new tokens), "
               "parsed against the format's labels; an answer that names no label is an unparsed verdict",
    "constrained": "constrained: the answer restricted to the format's labels while decoding, so "
                   "every verdict parses",
}
REPEAT_KEYS = ("samples", "n_items", "flip_rate", "agreement", "alpha", "alpha_lo", "alpha_hi", "level",
               "samples_for_alpha_08")
ALPHA_TARGET = 0.8      # the α a mean of samples is asked to reach (samples_for_alpha_08)
MEMBERS_CALLS = "its members' calls, "     # a jury's decoding is its members'


def decoding_rule(mode: str, temperature: float | None, samples: int) -> str | None:
    """The decoding in words: the mode's rule, then the temperature (where recorded) and the samples
    asked of each call."""
    rule = DECODING_RULES.get(mode)
    if rule is None:
        return None
    if mode == "sampled":
        rule += (f"; temperature {temperature:g}" if temperature else
                 "; temperature not recorded (imported verdicts)")
    elif mode == "constrained" and temperature:
        rule += f"; temperature {temperature:g}"
    if samples > 1:
        rule += (f"; each call asked {samples} times (samples 0 to {samples - 1}): the cell's figures are "
                 "sample 0's, the summary's `mean` row scores each call by the mean of its parsed samples")
    return rule


SCORE_RULES = {"label": "the parsed label's value",
               "expected": "the probability-weighted value over the format's labels (expected score)"}


SIMULATED = ("a simulated judge (`fake`): deterministic answers drawn from the pool's reference with seeded "
             "noise and slot bias; no model, so temperature, max_tokens and log-probabilities do not apply")
NOT_FOR_SIMULATED = ("max_tokens", "logprobs", "top_logprobs", "temperature")


def _version() -> str | None:
    try:
        return metadata.version("judgeaudit")
    except metadata.PackageNotFoundError:
        return None


def _curations(read, pool: str) -> dict:
    """(judge, format, decoding, score) -> the newest stored curation subset of that cell."""
    out = {}
    for r in read.frame("subsets", pool=pool, sha256=None).to_dicts():
        if r["policy"] == "judge":
            out[(r["judge"], r["format"], r["decoding"] or "greedy", r["score"] or "label")] = r
    return out


def _summary(entry: dict, cell: dict, curation: dict | None) -> dict:
    """One row of the table across formats: the diagnostics a reader compares first."""
    n = curation["n_selected"] if curation else 0
    return {"judge": entry["judge"], "format": entry["format"], "decoding": entry["decoding"]["mode"],
            "score": entry["score"], "tie_prob": cell["tie_prob"], "d2": cell["d2"], "top_tied": cell["top_tied"],
            "curation_rate": curation["rate"] if curation else None,
            "coin_flip_share": curation["n_pick_tied"] / n if n else None,
            "cut_tied_share": curation["n_cut_tied"] / n if n else None,
            "tau_a": cell["tau_a"], "top1": cell["top1"], "parse_rate": cell["parse_rate"],
            "b": entry["slot"]["b"] if entry["slot"] else None, "aggregate": cell.get("aggregate", "single")}


def _run_row(r: dict) -> dict:
    config = json.loads(r["config"]) if isinstance(r["config"], str) else (r["config"] or {})
    keep = ("curation", "base", "seed", "max_steps", "study", "subset", "argv")
    return {"run_id": r["run_id"], "kind": r["kind"], "status": r["status"],
            "created_at": str(r["created_at"])[:19] if r["created_at"] else None,      # to the second
            "finished_at": str(r["finished_at"])[:19] if r["finished_at"] else None,
            "config": {k: config[k] for k in keep if k in config}, "error": r["error"]}


def checklist(db: str | os.PathLike | None, pool: str, seed: int = 0, cells: pl.DataFrame | None = None,
              slots: pl.DataFrame | None = None, repeats: pl.DataFrame | None = None) -> dict:
    """The checklist as the JSON document of docs/command-line.md#judgeaudit-report; a cell is (judge,
    format, decoding, score), and its `decoding` holds the recorded settings with the mode (greedy |
    sampled | constrained) as `mode`, `samples` (the most samples of any call in the cell) and `rule`
    (the decoding in words, with the temperature and samples where they are known).

    Keys beyond the ones that page lists (added, never renamed): `generated_at` (UTC), `version` (the
    tool's), `summary` (one row per cell: tie_prob, d2, top_tied, the coin_flip_share and cut_tied_share
    of the cell's newest stored curation at its curation_rate, tau_a, top1, parse_rate, b, and
    `aggregate` single; a cell whose calls were repeated has a second row, aggregate mean: the same
    diagnostics of the mean of its samples), `runs` (the pool's curation-and-training, evaluation and
    probe runs) and `studies` (its evaluation studies); per cell `template_sha256`, `provider`,
    `simulated` and `repeats` (null for a cell whose calls were asked once; else audit.consistency's
    flip_rate, agreement, alpha, alpha_lo, alpha_hi, level, n_items and samples_for_alpha_08).

    `cells`, `slots`, `repeats`: audit_cells, bias and consistency of the pool at this seed when the
    caller has them already (the derived results' stored frames), else computed here."""
    info = pools(db).filter(pl.col("name") == pool)
    every = audit_cells(db, pool, seed=seed) if cells is None else cells
    cells = every.filter(pl.col("aggregate").is_in(["single", "jury"]))     # a jury's cells are its own
    means = {(r["judge"], r["format"], r["decoding"], r["score"]): r
             for r in every.filter(pl.col("aggregate") == "mean").to_dicts()}
    slots = {(r["judge"], r["format"], r["decoding"]): r
             for r in (bias(db, pool, seed=seed) if slots is None else slots).to_dicts()}
    repeats = {(r["judge"], r["format"], r["decoding"]): r
               for r in (consistency(db, pool, seed=seed) if repeats is None else repeats).to_dicts()}
    with reading(db) as read:
        pid = read.pool_id(pool)
        runs = {(r["judge"], r["format"], r["decoding"]): r for r in read.frame("cell_runs", pool_id=pid).to_dicts()}
        judges = {r["judge"]: r for r in read.frame("report_judges", pool_id=pid).to_dicts()}
        curations = _curations(read, pool)
        panels = {r["judge"]: r for r in juries_of(read, pid).to_dicts()}
        background = [_run_row(r) for r in read.frame("report_runs", pool=pool).to_dicts()]
        studies = [{**s, "created_at": str(s["created_at"])} for s in read.frame("studies").to_dicts()
                   if s["pool"] == pool]
    out, summary = [], []
    for cell in cells.to_dicts():
        key = (cell["judge"], cell["format"], cell["decoding"])
        run = runs.get(key)
        settings = json.loads(run["settings"]) if run and run["settings"] else {}
        again = repeats.get(key)
        n_samples = again["samples"] if again and again["samples"] else 1
        decoding = {**settings, "mode": cell["decoding"], "samples": n_samples,
                    "rule": decoding_rule(cell["decoding"], settings.get("temperature"), n_samples)}
        provider = (judges.get(cell["judge"]) or {}).get("provider")
        template = run["template"] if run else None
        entry = {"judge": cell["judge"], "format": cell["format"], "score": cell["score"],
                 "score_rule": SCORE_RULES[cell["score"]],
                 "template": template, "decoding": decoding,
                 "source": run["source"] if run else None, "judge_model": run["judge_model"] if run else None,
                 "tie_prob": cell["tie_prob"], "d2": cell["d2"], "distinct": cell["distinct"],
                 "n_candidates": cell["n_candidates"], "parse_rate": cell["parse_rate"], "slot": None,
                 "template_sha256": hashlib.sha256(template.encode("utf-8")).hexdigest() if template else None,
                 "provider": provider, "simulated": provider == "fake",
                 "repeats": {k: again[k] for k in REPEAT_KEYS} if again and n_samples > 1 else None}
        if cell["judge"] in panels:      # a jury: its vote and members (it has no prompt of its own)
            entry["jury"] = {"vote": panels[cell["judge"]]["vote"], "members": list(panels[cell["judge"]]["members"])}
        if cell["kind"] == "comparative":
            b = slots.get(key)
            entry["slot"] = {"scheme": _slot_scheme(run, b), "b": b["b"] if b else None,
                             "b_lo": b["b_lo"] if b else None, "b_hi": b["b_hi"] if b else None}
        out.append(entry)
        summary.append(_summary(entry, cell, curations.get((*key, cell["score"]))))
        mean = means.get((*key, cell["score"]))
        if mean is not None:        # repeated calls: the mean of their samples, beside sample 0
            summary.append({**_summary(entry, mean, None), "aggregate": "mean", "b": None})
    row = info.to_dicts()[0]
    return {"pool": {"name": pool, "n_prompts": row["n_prompts"], "n_candidates": row["n_candidates"]},
            "cells": out, "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "version": _version(), "summary": summary, "runs": background, "studies": studies}


def _num(x, digits=3) -> str:
    return number(x, digits)


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _summary_table(rows: list[dict]) -> list[str]:
    """The table across formats; with repeated calls, a `samples` column tells sample 0 (`first`)
    from the mean of the samples (`mean`)."""
    repeats = any(r.get("aggregate") == "mean" for r in rows)
    head = ["judge", "format", "decoding", "score", *(["samples"] if repeats else []), "tie prob.", "D2", "top tied",
            "coin flips (rate)", "τa", "top-1", "parse rate", "b"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        flips = "n/a" if r["coin_flip_share"] is None else f"{_pct(r['coin_flip_share'])} (@{r['curation_rate']:g})"
        samples = (["mean" if r.get("aggregate") == "mean" else "first"] if repeats else [])
        out.append("| " + " | ".join([r["judge"], r["format"], r["decoding"], r["score"], *samples, _num(r["tie_prob"]),
                                      _num(r["d2"], 2), _pct(r["top_tied"]), flips, _num(r["tau_a"]),
                                      _num(r["top1"]), _num(r["parse_rate"]), _num(r["b"])]) + " |")
    return out


def _runs_lines(doc: dict) -> list[str]:
    out = []
    for r in doc.get("runs") or []:
        c = r["config"].get("curation") or {}
        what = (f"{c.get('judge')} × {c.get('format')} at rate {c.get('rate')}" if c.get("policy") == "judge"
                else (f"{c.get('policy')} baseline" if c else ""))
        out.append(f"- run {r['run_id']}: {r['kind']}" + (f" ({what})" if what else "") + f", {r['status']}, "
                   f"started {r['created_at']}" + (f", ended {r['finished_at']}" if r["finished_at"] else ""))
    for s in doc.get("studies") or []:
        out.append(f"- evaluation study `{s['study']}`: {s['n_conditions']} conditions, {s['n_prompts']} held-out "
                   f"prompts, {s['n_outcomes']} outcomes ({s['created_at']})")
    return out or ["None yet: no curation, training or evaluation run of this pool is recorded."]


def checklist_markdown(doc: dict) -> str:
    """The same checklist as Markdown: the summary across formats first, the runs of the pool, then
    each cell's details."""
    p = doc["pool"]
    lines = [f"# Reporting checklist: pool `{p['name']}`", "",
             f"{plural(p['n_prompts'], 'prompt')}, {plural(p['n_candidates'], 'candidate')}.", ""]
    if doc.get("generated_at"):
        lines += [f"Generated {doc['generated_at']} by judgeaudit {doc.get('version') or '(version unknown)'}, "
                  "from the database alone.", ""]
    if doc.get("summary"):
        lines += ["## Summary across formats", "", *_summary_table(doc["summary"]), "",
                  "Tie prob.: the chance two scored candidates tie; D2: effective levels; top tied: prompts whose "
                  "top score is shared (picking the best is a coin flip); coin flips (rate): the share of the "
                  "newest stored curation's picks that were such coin flips, at its rate; τa: Kendall's tau-a "
                  "against the reference; top-1: the reference-top candidate picked; b: slot bias."
                  + (" Samples: `first` scores each call by its first answer (sample 0), `mean` by the mean of "
                     "its parsed samples (the calls were asked several times; b is measured on sample 0 only)."
                     if any(r.get("aggregate") == "mean" for r in doc["summary"]) else ""), ""]
    if "runs" in doc:
        lines += ["## Curation, training and evaluation runs", "", *_runs_lines(doc), ""]
    for c in doc["cells"]:
        d = c["decoding"]
        mode = d.get("mode", "greedy")
        expected = " (expected score)" if c["score"] == "expected" else ""
        lines += [f"## {c['judge']} × {c['format']} × {mode}{expected}", ""]
        if c["template"]:
            lines += ["1. Format, verbatim:", "", "```", c["template"].rstrip(), "```", ""]
        elif c.get("jury"):
            j = c["jury"]
            lines += [f"1. Format: a jury of {', '.join(j['members'])} ({j['vote']} vote): each call's verdict "
                      f"combines its members' verdicts on that call, so the jury has no prompt of its own; "
                      f"each member's template is under its own cells.", ""]
        else:
            lines += ["1. Format: verdicts imported; the prompt template was not recorded.", ""]
        many = d.get("samples") or 1
        lines.append(f"   Decoding: {mode} (a simulated judge decodes nothing: it draws its answer"
                     + (f"; each call asked {many} times, the figures are sample 0's" if many > 1 else "") + ")."
                     if c.get("simulated") else f"   Decoding: {MEMBERS_CALLS if c.get('jury') else ''}"
                     f"{d.get('rule') or mode}.")
        settings = {k: v for k, v in d.items() if k not in ("mode", "rule", "samples")   # samples: in the rule
                    and not (c.get("simulated") and k in NOT_FOR_SIMULATED)}
        lines += [f"   Settings: `{json.dumps(settings)}`." if settings else "   Settings: not recorded.",
                  f"   Score: {c['score_rule']}."]
        if c.get("simulated"):
            lines.append(f"   Judge: {SIMULATED}.")
        if c.get("template_sha256"):
            lines.append(f"   Template SHA-256: `{c['template_sha256']}`.")
        lines.append("")
        lines.append(f"2. Tie probability {_num(c['tie_prob'])}, D2 = {_num(c['d2'], 2)} effective levels; "
                     f"{plural(c['distinct'], 'distinct value')} over {plural(c['n_candidates'], 'scored candidate')}.")
        if c["slot"] is not None:
            s = c["slot"]
            lines.append(f"3. Slots: {s['scheme']}. Estimated slot bias b = {_num(s['b'])} "
                         f"(95% CI {_num(s['b_lo'])} to {_num(s['b_hi'])}).")
        else:
            lines.append("3. Slots: pointwise format, no slot bias.")
        lines.append(f"4. Parse rate {_num(c['parse_rate'])}.")
        if c.get("repeats"):
            lines.append(f"5. Repeats: {_repeats_line(c['repeats'])}")
        lines.append("")
    lines += decision_markdown(doc.get("decisions") or [])     # added by the report command and page
    return "\n".join(lines)


def _repeats_line(r: dict) -> str:
    """Flip rate and Krippendorff's alpha of a cell whose calls were asked several times."""
    if not r["n_items"]:
        return f"up to {r['samples']} samples per call, but no call has two parsed samples: no flip rate or α."
    if too_few(r["n_items"]):
        return (f"up to {r['samples']} samples per call; too few to say: {plural(r['n_items'], 'call')} with ≥ 2 "
                f"parsed samples, at least {MIN_N} needed for a flip rate or α.")
    alpha = ("α not defined (a single value throughout)" if r["alpha"] is None else
             f"Krippendorff's α ({r['level']}) = {_num(r['alpha'])} (95% CI {_num(r['alpha_lo'])} to "
             f"{_num(r['alpha_hi'])})")
    return (f"up to {r['samples']} samples per call; over {plural(r['n_items'], 'call')} with ≥ 2 parsed samples, "
            f"the flip rate (calls whose samples disagree) is {_pct(r['flip_rate'])}, pairwise agreement "
            f"{_num(r['agreement'])}, {alpha}{alpha_need(r)}.")


def alpha_need(r: dict) -> str:
    """'; a mean of 4 samples would reach α 0.8', said only while α is below that target and a mean of
    samples can reach it (samples_for_alpha_08 is null when α ≤ 0)."""
    alpha, k = r.get("alpha"), r.get("samples_for_alpha_08")
    if alpha is None or alpha >= ALPHA_TARGET or not k:
        return ""
    return f"; a mean of {plural(k, 'sample')} would reach α {ALPHA_TARGET:g}"
