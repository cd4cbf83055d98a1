"""Intransitivity read as the prompts' kinds counted in DuckDB (intransitive_kinds.sql) against the
per-prompt reading it replaced (kept here: tournament_triads.sql's row per prompt, then pooled_share
per cell), on random tournaments with ties, both orders, orders that disagree, repeated samples and
two judges: the same frame (the same kinds in the same order, so the same bootstrap draws)."""

import numpy as np
import polars as pl
import pytest

from audit import intransitivity
from audit._bias import cell_rng
from audit._intransitive import INTRANSITIVE_SCHEMA, RANDOM_SHARE, kinds_share, pooled_share
from audit._read import reading
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import write_jsonl


def per_prompt_intransitivity(db, pool: str, seed: int = 0, n_boot: int = 500) -> pl.DataFrame:
    with reading(db) as read:
        triads = read.frame("tournament_triads", pool_id=read.pool_id(pool))
    rows = []
    for (judge, fmt, dec), g in triads.group_by(["judge", "format", "decoding"], maintain_order=True):
        got = pooled_share(g["n_cycles"].to_numpy(), g["n_triads"].to_numpy(), n_boot, cell_rng(seed, judge, fmt, dec))
        rows.append({"judge": judge, "format": fmt, "decoding": dec, "intransitive_prompts": g.height,
                     "intransitive_triads": int(g["n_triads"].sum()), "intransitive_cycles": int(g["n_cycles"].sum()),
                     "intransitive_share": got["share"], "intransitive_lo": got["lo"], "intransitive_hi": got["hi"],
                     "intransitive_random": RANDOM_SHARE})
    return pl.DataFrame(rows, schema=INTRANSITIVE_SCHEMA)


RAWS = ["A++", "A+", "TIE", "B+", "B++", "huh"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_kinds_equal_the_per_prompt_reading(tmp_path, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 7, size=40)
    db = tmp_path / "t.duckdb"
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", [
        {"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": f"c{c}", "response": f"{c} to {p}"}
        for p, k in enumerate(sizes) for c in range(k)]), "t")
    rows = []
    for judge in ("j1", "j2"):
        for p, k in enumerate(sizes):
            for a in range(k):
                for b in range(k):
                    if a == b or rng.random() < 0.3:
                        continue
                    # mostly a transitive order, some noise: few cycles, many repeated kinds of prompt
                    raw = ("A+" if a < b else "B+") if rng.random() < 0.8 else RAWS[int(rng.integers(0, len(RAWS)))]
                    for sample in range(int(rng.integers(1, 3))):
                        rows.append({"judge": judge, "format": "tournament", "prompt_id": f"p{p}", "a_id": f"c{a}",
                                     "b_id": f"c{b}", "raw": raw if sample == 0 else RAWS[int(rng.integers(0, 6))],
                                     "sample": sample})
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", rows), "t")
    new, old = intransitivity(db, "t", seed=seed, n_boot=500), per_prompt_intransitivity(db, "t", seed=seed, n_boot=500)
    assert new.height == 2 and new["intransitive_cycles"].sum() > 0
    assert new.equals(old)


def test_kinds_share_by_hand():
    # kinds (0 cycles, 1 triad) x 3 prompts and (1, 4) x 1: share = 1 / (3 + 4) = 1/7, as pooled_share
    # of the four prompts listed one by one; the same draws from the same generator
    got = kinds_share(np.array([[0, 1], [1, 4]]), np.array([3, 1]), 300, np.random.default_rng(5))
    assert got["share"] == pytest.approx(1 / 7)
    assert got == pooled_share(np.array([0, 1, 0, 0]), np.array([1, 4, 1, 1]), 300, np.random.default_rng(5))
    assert kinds_share(np.zeros((0, 2)), np.zeros(0, np.int64), 10, np.random.default_rng(0))["share"] is None
