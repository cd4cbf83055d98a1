"""`judgeaudit train` as a background run (ingest.runs): rank 0 holds the run (queue 'train', one at
a time), polls its cancel and reports progress; other ranks of `accelerate launch` just train.
With a curation instead of a subset file, the run curates first, into its own folder."""

from __future__ import annotations

from pathlib import Path

from audit import subset_by_hash
from ingest import UserError
from ingest import settings
from ingest.files import file_sha256
from ingest.runs import running

from ._config import TrainConfig
from ._dpo import read_pairs, train_dpo
from ._model import resolve_base
from ._pairs_file import make_pairs, read_rule
from .finetune import train
from .subsets import make_subset

RECORD_KEYS = ("subset_id", "pool", "name", "policy", "judge", "format", "decoding", "score", "rate", "seed", "n_selected",
               "n_pick_tied", "n_cut_tied", "heldout")     # heldout: the rule evaluation must match
PAIRS_KEYS = ("method", "pool", "judge", "format", "decoding", "kind", "min_margin", "both_orders", "pairs", "prompts",
              "lost", "heldout")                          # a DPO run's data rule (train/_pairs_file.py)


def _pairs_record(rule: dict | None) -> dict:
    return {k: v for k, v in {**(rule or {}), "method": "dpo"}.items() if k in PAIRS_KEYS}


def _run_dpo(db, *, base: str, subset=None, curation: dict | None = None, out=None, **hyper) -> dict:
    """run_training for --method dpo: the subset is a pairs file (its rule read from beside it),
    or the run builds the pairs from a cell (curation: pool, judge, format, decoding, min_margin,
    both_orders) into DIR/pairs.jsonl."""
    record = {}
    if subset is not None:
        subset = Path(subset)
        read_pairs(subset)                          # an SFT subset or a bad line fails before the run is recorded
        record = _pairs_record(read_rule(subset))
    if settings.distributed()[1] != 0:
        if out is None or subset is None:
            raise UserError("with more than one process (accelerate launch) give --out and --subset")
        return train_dpo(TrainConfig(subset=str(subset), base=base, out=str(out), **hyper), subset_record=record)
    pool = curation["pool"] if curation else record.get("pool")
    config = {"base": base, "out": str(Path(out).resolve()) if out else None, **hyper,
              **({"subset": str(subset.resolve()), "subset_record": record} if subset is not None
                 else {"curation": {**curation, "method": "dpo"}})}
    with running(db, "train", pool=pool, config=config, queue="train") as run:
        folder = Path(out) if out is not None else run.out_dir
        if curation:
            run.progress({"phase": "pairing"})
            record = _pairs_record(make_pairs(db, curation["pool"], curation["judge"], curation["format"],
                                              folder / "pairs.jsonl", decoding=curation.get("decoding"),
                                              min_margin=curation.get("min_margin") or 0.0,
                                              both_orders=bool(curation.get("both_orders")),
                                              seed=hyper.get("seed", 0)))
            subset = folder / "pairs.jsonl"
        cfg = TrainConfig(subset=str(subset), base=base, out=str(folder), **hyper)
        return train_dpo(cfg, cancelled=run.cancelled, progress=run.progress, run_id=run.id, subset_record=record)


def run_training(db, *, base: str, subset=None, curation: dict | None = None, out=None, **hyper) -> dict:
    """Train under `ingest.runs.running(db, "train", queue="train")`; the metrics.

    Either `subset` (a TRL JSONL file; its stored record is found by hash) or `curation`
    ({pool, policy, judge, format, rate}: curated with the training seed into DIR/subset.jsonl).
    """
    if (subset is None) == (curation is None):
        raise UserError("give either --subset FILE or --pool NAME (with --policy/--judge/--format/--rate)")
    resolve_base(base)                              # a bad --base fails before the run is recorded
    if hyper.get("method", "sft") == "dpo":
        return _run_dpo(db, base=base, subset=subset, curation=curation, out=out, **hyper)
    record = {}
    if subset is not None:
        subset = Path(subset)
        if not subset.is_file():
            raise UserError(f"--subset {subset}: no such file")
        record = subset_by_hash(db, file_sha256(subset)) or {}
    rank0 = settings.distributed()[1] == 0
    if not rank0:
        if out is None or subset is None:
            raise UserError("with more than one process (accelerate launch) give --out and --subset")
        return train(TrainConfig(subset=str(subset), base=base, out=str(out), **hyper),
                     subset_record={k: record.get(k) for k in RECORD_KEYS if k in record})
    pool = curation["pool"] if curation else record.get("pool")
    config = {"base": base, "out": str(Path(out).resolve()) if out else None, **hyper,
              **({"subset": str(subset.resolve()), "subset_record": {k: record.get(k) for k in RECORD_KEYS if k in record}}
                 if subset is not None else {"curation": curation})}
    with running(db, "train", pool=pool, config=config, queue="train") as run:
        folder = Path(out) if out is not None else run.out_dir
        if curation:
            run.progress({"phase": "curating"})
            record = make_subset(db, curation["pool"], curation.get("policy") or "judge", curation["rate"],
                                 folder / "subset.jsonl", seed=hyper.get("seed", 0), judge=curation.get("judge"),
                                 fmt=curation.get("format"), decoding=curation.get("decoding"),
                                 score=curation.get("score") or "label")
            subset = folder / "subset.jsonl"
        cfg = TrainConfig(subset=str(subset), base=base, out=str(folder), **hyper)
        return train(cfg, cancelled=run.cancelled, progress=run.progress, run_id=run.id,
                     subset_record={k: record.get(k) for k in RECORD_KEYS if k in record})
