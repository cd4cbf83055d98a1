"""Which models an evaluation answers with (conditions): each training run's adapter, named from
its run folder, then each base model itself.

A training run's folder holds config.json (`base`; the condition comes from `condition` or from
the subset record: 'JUDGE/FORMAT@RATE' (with '+expected' for expected scores, '~constrained'
for constrained decoding), 'POLICY@RATE' or 'full'; the seed from
hyper_parameters.seed) and the adapter. The base model is condition 'base', seed 0 (with several
bases: 'base:NAME').
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from audit import plural
from ingest import UserError
from ingest.runs import RunRequest, get_run


# pragma: no mutate start (make mutate: database lookups, tested with the model by the slow tests)
@dataclass
class Condition:
    name: str
    seed: int
    base: str
    adapter: Path | None = None         # None: the base model itself
    run: str | None = None
    heldout: dict | None = None         # the training run's held-out rule (config.json's subset.heldout)
    data_rule: str = "the base model, untrained"   # what the student was trained on (data_rule)


def _folder_of(db, ref: str) -> Path:
    """A run id (the runs table) or a folder."""
    if ref.isdigit():
        row = get_run(db, int(ref))
        if row is None:
            raise UserError(f"--runs {ref}: no such run (see `judgeaudit runs`)")
        if row["kind"] != "train":
            raise UserError(f"--runs {ref}: run {ref} is a {row['kind']} run, not a training run")
        config = row.get("config") or {}
        asked = RunRequest.from_config(config)       # --out as asked; `out`: the folder the run resolved
        options = [config.get("out"), asked.get("out") if asked else None, row["out_dir"]]
        for option in options:
            if option and (Path(option) / "adapter_config.json").is_file():
                return Path(option)
        raise UserError(f"--runs {ref}: run {ref} ({row['status']}) has no saved adapter in "
                        f"{', '.join(str(o) for o in options if o)}")
    path = Path(ref).expanduser()
    if not path.is_dir():
        raise UserError(f"--runs {ref}: neither a run id nor a run folder")
    return path


# pragma: no mutate end
def condition_name(config: dict) -> str:
    if config.get("condition"):
        return str(config["condition"])
    subset = config.get("subset") or {}
    if subset.get("method") == "dpo":
        return dpo_condition(subset)
    policy, rate = subset.get("policy"), subset.get("rate")
    if policy == "full":
        return "full"
    if policy in (None, "judge") and subset.get("judge") and subset.get("format"):
        cell = f"{subset['judge']}/{subset['format']}"
        cell += "+expected" if subset.get("score") == "expected" else ""
        cell += f"~{subset['decoding']}" if subset.get("decoding") not in (None, "greedy") else ""
        return f"{cell}@{rate:g}" if rate is not None else cell
    if policy:
        return f"{policy}@{rate:g}" if rate is not None else str(policy)
    return Path(subset.get("path") or "adapter").stem


def dpo_condition(rule: dict) -> str:
    """A DPO student's name from its pairs' rule (train/_pairs_file.py): 'dpo:JUDGE/FORMAT' with
    '~DECODING' (not greedy), '·both' (pairs judged alike in both orders) and '≥M' (a margin > 0)."""
    if not rule.get("judge") or not rule.get("format"):
        return "dpo:" + Path(rule.get("path") or "pairs").stem
    name = f"dpo:{rule['judge']}/{rule['format']}"
    name += f"~{rule['decoding']}" if rule.get("decoding") not in (None, "greedy") else ""
    name += "·both" if rule.get("both_orders") else ""
    return name + (f"≥{rule['min_margin']:g}" if rule.get("min_margin") else "")


def data_rule(config: dict) -> str:
    """What a student was trained on, in words: for DPO its pairs, margin and orders ('DPO on 41
    pairs of j × tournament, margin ≥ 1, both orders'); for SFT its subset's rule."""
    subset = config.get("subset") or {}
    if subset.get("method") == "dpo":
        cell = f"{subset.get('judge')} × {subset.get('format')}" if subset.get("judge") else "a pairs file"
        n = plural(subset["pairs"], "pair") if subset.get("pairs") is not None else "pairs"
        return (f"DPO on {n} of {cell}, margin ≥ {subset.get('min_margin') or 0:g}, "
                f"{'both orders' if subset.get('both_orders') else 'any order'}")
    return f"SFT on {condition_name(config)}"


# pragma: no mutate start (make mutate: database lookups, tested with the model by the slow tests)
def resolve_runs(db, refs: list[str]) -> list[Condition]:
    """The adapters to evaluate, then one base condition per base model."""
    conds, seen = [], {}
    for ref in refs:
        folder = _folder_of(db, ref)
        where = folder / "config.json"
        if not where.is_file() or not (folder / "adapter_config.json").is_file():
            raise UserError(f"--runs {ref}: {folder} lacks config.json or adapter_config.json (not a finished "
                            "training run)")
        try:
            config = json.loads(where.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not JSON ({exc.msg})") from None
        if not config.get("base"):
            raise UserError(f"{where}, field 'base': the base model is not recorded")
        seed = config.get("seed", (config.get("hyper_parameters") or {}).get("seed", 0))
        rule = (config.get("subset") or {}).get("heldout") or config.get("heldout")
        cond = Condition(condition_name(config), int(seed), str(config["base"]), folder, ref,
                         dict(rule) if isinstance(rule, dict) else None, data_rule(config))
        key = (cond.name, cond.seed)
        if key in seen:
            raise UserError(f"--runs: {ref} and {seen[key]} are both condition '{cond.name}' with seed {cond.seed}")
        seen[key] = ref
        conds.append(cond)
    bases = sorted({c.base for c in conds})
    for b in bases:
        conds.append(Condition("base" if len(bases) == 1 else f"base:{b}", 0, b))
    return conds


# pragma: no mutate end
