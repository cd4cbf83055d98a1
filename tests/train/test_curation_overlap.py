"""curation_overlap reads the cells once (audit.cells_values lists them and picks the page's first judge
and its formats): its table against the way it was computed before (the scored cells read first, then
first_choice's judge and formats, kept here as the reference), for the first view and for a judge, formats
and decoding given."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import audit
from ingest.store import import_pool
from tests.fixtures import build_db, synthetic_pool
from train.curate import keep_count, select
from train.curation_view import OVERLAP_RATES, OVERLAP_SCHEMA, curation_overlap, first_choice, held_out


def reference_overlap(db, pool, judge=None, formats=None, decoding=None, rates=OVERLAP_RATES, seed=0):
    """curation_overlap as it was: the scored cells read for the first judge and its formats."""
    cells = audit.scored_cells(db, pool)
    if judge is None:
        judge = first_choice(cells)[1]
    if formats is None:
        formats = sorted(cells.filter(pl.col("judge") == judge)["format"].unique().to_list()) if judge else []
    formats = list(formats)
    ranked = {}
    if formats:
        held, _ = held_out(db, pool)
        n_cands, n_prompts = audit.pool_extent(db, pool)
        mask = np.zeros(max(n_prompts, 1), dtype=bool)
        mask[held.to_numpy()] = True
        for fmt, (values, _) in audit.cells_values(db, pool, judge, formats, decoding).items():
            values = values.filter(pl.Series(~mask[values["prompt_idx"].to_numpy()]))
            ranked[fmt] = select(values, 1.0, seed, n_cands, n_prompts)["cand_idx"].to_numpy()
    rows = []
    for rate in rates:
        kept = {f: r[:keep_count(rate, r.size)] for f, r in ranked.items()}
        for i, a in enumerate(formats):
            for b in formats[i + 1:]:
                both = len(set(kept[a].tolist()) & set(kept[b].tolist()))
                union = kept[a].size + kept[b].size - both
                rows.append({"rate": float(rate), "format_a": a, "format_b": b, "n_a": int(kept[a].size),
                             "n_b": int(kept[b].size), "jaccard": both / union if union else None})
    return pl.DataFrame(rows, schema=OVERLAP_SCHEMA)


@pytest.fixture(scope="module", params=[0, 1])
def pool_db(request, tmp_path_factory):
    seed = request.param
    folder = tmp_path_factory.mktemp(f"overlap{seed}")
    db = folder / "audit.duckdb"
    build_db(db, folder, 40, seed=seed, pool="p", judges=("zeta", "alpha"), k_range=(1, 5), unparsed=0.2)
    return db


@pytest.mark.parametrize("args", [{}, {"judge": "zeta"}, {"formats": ["numeric100", "binary"]},
                                  {"judge": "zeta", "formats": ["likert5", "tournament", "nope"]},
                                  {"judge": "nobody"}, {"decoding": "greedy"}])
def test_overlap_equals_the_reference(pool_db, args):
    got = curation_overlap(pool_db, "p", **args)
    assert got.height > 0 or args == {"judge": "nobody"}
    assert got.equals(reference_overlap(pool_db, "p", **args))


def test_a_pool_without_verdicts(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", synthetic_pool(3, k_range=(2, 2), seed=0)), "p")
    assert curation_overlap(db, "p").equals(pl.DataFrame(schema=OVERLAP_SCHEMA))
    assert audit.cells_values(db, "p", None) == {}


@pytest.mark.parametrize("n_prompts", [1, 7, 1000])
def test_by_prompt_key_is_the_stable_argsort(n_prompts):
    from train.curate import by_prompt_key, prompt_key
    rng = np.random.default_rng(n_prompts)
    for seed in (0, 3):
        key = prompt_key(n_prompts, seed)
        for share in (0.0, 0.2, 0.9, 1.0):
            p_idx = np.flatnonzero(rng.random(n_prompts) < share)          # ascending, each once
            want = np.argsort(-key[p_idx], kind="stable")
            assert np.array_equal(by_prompt_key(p_idx, n_prompts, seed), want)
        twice = np.sort(rng.integers(0, n_prompts, 50))                    # a prompt picked twice: sorted
        assert np.array_equal(by_prompt_key(twice, n_prompts, seed), np.argsort(-key[twice], kind="stable"))
