"""A seeded builder of synthetic pools and verdicts, written through the real import path.

    python tests/fixtures.py OUT.duckdb [--prompts N]

also makes a demo-sized database from it. Scores are full of ties, unparsed verdicts and missing
references, the cases the metrics must get right.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest.store import import_pool
from ingest.scoring import import_verdicts  # noqa: E402

LIKERT_RAW = ["{}", "Score: {}", "**{}**", "{}/5", "I'd rate it {}."]


def synthetic_pool(n_prompts: int, k_range=(2, 6), seed: int = 0, missing_ref: float = 0.1):
    """Rows of a pool: references on a coarse grid (ties), some missing."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_prompts):
        k = int(rng.integers(k_range[0], k_range[1] + 1))
        for c in range(k):
            ref = None if rng.random() < missing_ref else float(rng.integers(0, 5))
            rows.append({"prompt_id": f"p{p:05d}", "prompt": f"Prompt number {p}",
                         "candidate_id": f"c{c}", "response": f"Answer {c} to prompt {p}",
                         "reference": ref})
    return rows


def synthetic_verdicts(pool_rows, judges=("alpha", "beta"), seed: int = 0, unparsed: float = 0.05,
                       swap_rate: float = 0.5, slot_bias: float = 0.6):
    """Verdict rows for binary, likert5, numeric100 (pointwise) and tournament (comparative)."""
    rng = np.random.default_rng(seed)
    by_prompt: dict[str, list[dict]] = {}
    for row in pool_rows:
        by_prompt.setdefault(row["prompt_id"], []).append(row)
    out = []
    for j, judge in enumerate(judges):
        noise = 0.6 + 0.6 * j
        for pid, cands in by_prompt.items():
            latent = {c["candidate_id"]: (c["reference"] if c["reference"] is not None else 2.0)
                      + rng.normal(0, noise) for c in cands}
            for c in cands:
                q = latent[c["candidate_id"]]
                for fmt, raw in (("binary", "ACCEPT" if q > 1.5 else "REJECT"),
                                 ("likert5", rng.choice(LIKERT_RAW).format(int(np.clip(round(q) + 1, 1, 5)))),
                                 ("numeric100", str(int(np.clip(5 * round(q * 5), 0, 100))))):
                    if rng.random() < unparsed:
                        raw = rng.choice(["", "I cannot judge this.", "3 or 4"])
                    out.append({"judge": judge, "format": fmt, "prompt_id": pid,
                                "candidate_id": c["candidate_id"], "raw": raw})
            for x in range(len(cands)):
                for y in range(x + 1, len(cands)):
                    a, b = cands[x]["candidate_id"], cands[y]["candidate_id"]
                    orders = [(a, b)] + ([(b, a)] if rng.random() < swap_rate else [])
                    for first, second in orders:
                        margin = latent[first] - latent[second] + slot_bias + rng.normal(0, 0.5)
                        label = ("A++" if margin > 1.5 else "A+" if margin > 0.5 else
                                 "TIE" if margin > -0.5 else "B+" if margin > -1.5 else "B++")
                        out.append({"judge": judge, "format": "tournament", "prompt_id": pid,
                                    "a_id": first, "b_id": second, "raw": label})
    return out


def write_jsonl(path: Path, rows) -> Path:
    """One line per row: dicts as JSON, strings verbatim (for malformed-input tests)."""
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


def build_db(db: Path, folder: Path, n_prompts: int = 60, seed: int = 0, pool: str = "synth",
             judges=("alpha", "beta"), k_range=(2, 6), missing_ref: float = 0.1, unparsed: float = 0.05,
             edit=None) -> dict:
    """Write a synthetic pool and its verdicts to files and import both into `db` (synthetic_pool's and
    synthetic_verdicts' arguments; `edit(verdicts, rng)`, with a generator seeded by `seed`, changes the
    verdicts before they are written: a label distribution on some, for instance)."""
    rows = synthetic_pool(n_prompts, k_range=k_range, seed=seed, missing_ref=missing_ref)
    pool_file = write_jsonl(folder / f"{pool}-pool.jsonl", rows)
    verdicts = synthetic_verdicts(rows, judges, seed, unparsed=unparsed)
    if edit is not None:
        edit(verdicts, np.random.default_rng(seed))
    verdict_file = write_jsonl(folder / f"{pool}-verdicts.jsonl", verdicts)
    import_pool(db, pool_file, pool)
    return import_verdicts(db, verdict_file, pool)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--prompts", type=int, default=200)
    args = parser.parse_args()
    print(build_db(args.db, args.db.parent, args.prompts))
