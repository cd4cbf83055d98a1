"""The built-in probe set (README.md beside this file: source, licence, credit) and probe runs.

`probe_rows()` turns the controlled pairs into pool rows (one prompt per pair: `treated` listed
first, `control` second); `ensure_probe_pool()` imports them once through store.import_pool;
`run_probe()` scores the pool with the paper's comparative format in both orders through the
runner (`score()`), under an optional strategy. The statistics are audit.probes / audit.mitigations.
"""

from __future__ import annotations

import json
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np

from ..._errors import UserError
from .._request import ScoreRequest
from .._runner import score
from ...store import Database, import_pool, pool_names

PAIRS_FILE = "controlled_pairs.jsonl"
# bias_type of the source -> (probe type, which response is treated); style_ba mirrors style
TYPES = {"position": ("position", "a"), "length": ("length", "a"), "length_truncated": ("truncation", "b"),
         "style": ("markdown", "a"), "model_origin": ("origin", "a"), "model_origin_rr": ("origin", "a")}
PROBE_TYPES = ("position", "length", "truncation", "markdown", "origin")
FORMAT = "tournament"


def load_pairs() -> list[dict]:
    """The 375 controlled pairs, verbatim."""
    text = (resources.files("ingest.scoring.probes") / PAIRS_FILE).read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def probe_set() -> dict:
    """The probe set in numbers: {"source": the controlled pairs of the source file (375), "probed": those
    a probe run judges (325), "mirrored": the source's style_ba pairs (50), the style pairs with the slots
    reversed, left out since every pair is judged in both orders anyway (README.md beside this file)}."""
    pairs = load_pairs()
    probed = sum(p["bias_type"] in TYPES for p in pairs)
    return {"source": len(pairs), "probed": probed, "mirrored": sum(p["bias_type"] == "style_ba" for p in pairs)}


def probe_rows(sample: int | None = None, seed: int = 0) -> list[dict]:
    """Pool rows: per pair, `treated` then `control`; reference 1 / 0 for the complete / truncated
    response of a truncation pair, 0.5 for both elsewhere (a tie is the expected verdict); model =
    the source model where the pair names one. `sample`: that many seeded pairs per probe type."""
    pairs = [p for p in load_pairs() if p["bias_type"] in TYPES]
    if sample is not None:
        if sample < 1:
            raise UserError("--sample: at least 1 pair per probe type")
        rng = np.random.default_rng(seed)
        keep = set()
        for ptype in PROBE_TYPES:
            ids = [p["id"] for p in pairs if TYPES[p["bias_type"]][0] == ptype]
            keep.update(ids[i] for i in sorted(rng.choice(len(ids), size=min(sample, len(ids)), replace=False)))
        pairs = [p for p in pairs if p["id"] in keep]
    rows = []
    for p in pairs:
        ptype, treated = TYPES[p["bias_type"]]
        if ptype == "length":   # the treated response is the longer one, measured (see README)
            treated = "a" if len(p["response_a"]) >= len(p["response_b"]) else "b"
        meta = p.get("metadata") or {}
        sides = {"a": (p["response_a"], meta.get("model_a")), "b": (p["response_b"], meta.get("model_b"))}
        control = "b" if treated == "a" else "a"
        for cid, side in (("treated", treated), ("control", control)):
            ref = 0.5 if ptype != "truncation" else (0.0 if cid == "treated" else 1.0)
            rows.append({"prompt_id": p["id"], "prompt": p["question"], "candidate_id": cid,
                         "response": sides[side][0], "reference": ref, "model": sides[side][1]})
    return rows


def pool_name(sample: int | None, seed: int) -> str:
    return "probes" if sample is None else f"probes-{sample}-s{seed}"


def ensure_probe_pool(db, sample: int | None = None, seed: int = 0) -> str:
    """Import the probe pool (or its sample) under its fixed name unless it is there already."""
    name = pool_name(sample, seed)
    path = Database.of(db).path
    if name in pool_names(path):
        return name
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / f"{name}.jsonl"
        with open(file, "w", encoding="utf-8") as fh:
            for row in probe_rows(sample, seed):
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        try:
            import_pool(path, file, name)
        except UserError:                   # another process imported it meanwhile
            if name not in pool_names(path):
                raise
    return name


def run_probe(db, judge: str, strategy: str | None = None, sample: int | None = None, seed: int = 0,
              judge_name: str | None = None, concurrency: int = 4, api_key_env: str | None = None,
              timeout: float = 60.0, max_retries: int = 4, progress: bool = False) -> dict:
    """Score the probe pool with `judge` (SPEC) under `strategy` in both orders; resumes."""
    pool = ensure_probe_pool(db, sample, seed)
    req = ScoreRequest(pool=pool, judge=judge, formats=[FORMAT], db=db, schedule="both", seed=seed,
                       concurrency=concurrency, api_key_env=api_key_env, timeout=timeout,
                       max_retries=max_retries, judge_name=judge_name, logprobs=False, progress=progress,
                       strategy=strategy, run_kind="probe")
    summary = score(req)
    return {"pool": pool, **summary}


__all__ = ["FORMAT", "PROBE_TYPES", "TYPES", "ensure_probe_pool", "load_pairs", "pool_name", "probe_rows",
           "probe_set", "run_probe"]
