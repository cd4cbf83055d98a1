"""score_values counts a pointwise cell's levels in SQL (every cell's values grouped in one read) and a
comparative cell's from its candidates' scores: against the way it counted before, every cell's
candidate scores tallied block by block (_scores.cell_levels, kept here as the reference), on random
pools with unparsed verdicts, label distributions (expected cells), repeated samples, tournament and
anchored calls (some reversed, some against another anchor too) and a constrained decoding."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from audit import score_values
from audit._scores import cell_levels
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


def reference_score_values(db, pool: str, block: int | None = None) -> pl.DataFrame:
    """score_values as it was: each cell's scored candidates tallied (cell_levels), cell by cell."""
    cells, levels = cell_levels(db, pool, block)
    frames = []
    for c, cell in enumerate(cells.iter_rows(named=True)):
        values, n = levels[c]
        counts = pl.DataFrame({"s": values, "n": n}, schema={"s": pl.Float64, "n": pl.UInt32})
        frames.append(counts.with_columns(
            pl.lit(cell["judge"]).alias("judge"), pl.lit(cell["format"]).alias("format"),
            pl.lit(cell["decoding"]).alias("decoding"), pl.lit(cell["score"]).alias("score"),
            (pl.when(pl.lit(bool(cell["scale_0_100"]))).then(((pl.col("s") * 100).round(6) % 5) == 0)
             .otherwise(None)).alias("mult5")))
    return pl.concat(frames).select("judge", "format", "decoding", "score", "s", "n", "mult5")


def extra_verdicts(rows, seed: int) -> list[dict]:
    """Anchored calls (each candidate against its prompt's first, a third of them reversed too, some
    against the second as well: a candidate with two forward calls), label distributions on likert5
    and numeric100, and beta's likert5 again under a constrained decoding."""
    rng = np.random.default_rng(seed)
    by_prompt: dict[str, list[dict]] = {}
    for row in rows:
        by_prompt.setdefault(row["prompt_id"], []).append(row)
    out = []
    labels = ["A++", "A+", "TIE", "B+", "B++", "maybe"]
    for pid, cands in by_prompt.items():
        anchors = [c["candidate_id"] for c in cands[:2]]
        for x, c in enumerate(cands):
            for i, anchor in enumerate(anchors):
                if i and (x < 2 or rng.random() < 0.7):    # the second anchor: only against the others
                    continue
                out.append({"judge": "alpha", "format": "anchored", "prompt_id": pid, "a_id": c["candidate_id"],
                            "b_id": anchor, "raw": str(rng.choice(labels))})
                if not i and x and rng.random() < 1 / 3:
                    out.append({"judge": "alpha", "format": "anchored", "prompt_id": pid, "a_id": anchor,
                                "b_id": c["candidate_id"], "raw": str(rng.choice(labels))})
            top = int(rng.integers(1, 6))
            out.append({"judge": "beta", "format": "likert5", "prompt_id": pid, "candidate_id": c["candidate_id"],
                        "raw": str(top), "decoding": "constrained",
                        **({"label_probs": {str(top): 0.55, "3" if top != 3 else "4": 0.45}} if rng.random() < 0.5 else {})})
    return out


@pytest.fixture(scope="module", params=[0, 1, 2])
def pool_db(request, tmp_path_factory):
    seed = request.param
    folder = tmp_path_factory.mktemp(f"values{seed}")
    db = folder / "audit.duckdb"
    rows = synthetic_pool(31, k_range=(1, 6), seed=seed, missing_ref=0.15)
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "p")
    verdicts = synthetic_verdicts(rows, seed=seed, unparsed=0.1)
    rng = np.random.default_rng(seed)
    for v in verdicts:     # label distributions: expected cells
        if v["format"] in ("likert5", "numeric100") and rng.random() < 0.4:
            v["label_probs"] = ({"2": 0.3, "4": 0.7} if v["format"] == "likert5" else {"35": 0.25, "80": 0.75})
    import_verdicts(db, write_jsonl(folder / "v.jsonl", verdicts), "p")
    import_verdicts(db, write_jsonl(folder / "x.jsonl", extra_verdicts(rows, seed)), "p")
    return db


@pytest.mark.parametrize("block", [None, 1, 9])
def test_score_values_equal_the_candidates_tallies(pool_db, block):
    want = reference_score_values(pool_db, "p", block)
    got = score_values(pool_db, "p", block)
    assert got.columns == want.columns and got.schema == want.schema
    assert got.drop("s").rows() == want.drop("s").rows()
    assert np.array_equal(got["s"].to_numpy(), want["s"].to_numpy())      # bit for bit
    cells = set(got.select("format", "decoding", "score").unique().rows())
    assert {("anchored", "greedy", "label"), ("tournament", "greedy", "label"), ("likert5", "constrained", "expected"),
            ("numeric100", "greedy", "expected")} <= cells


def test_a_pool_without_verdicts_has_no_values(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", synthetic_pool(3, k_range=(2, 2), seed=0)), "p")
    got = score_values(db, "p")
    assert got.height == 0 and got.columns == ["judge", "format", "decoding", "score", "s", "n", "mult5"]
