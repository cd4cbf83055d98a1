"""levels and stability out of core (issue 29): they hold each cell's value counts alone, read in
blocks of whole prompts, and equal what the whole score matrix gives (the reference below reads it
whole: pool_scores, then the counts of each row's distinct values)."""

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal
import pytest

from audit import effective_levels, stability
from audit._scores import pool_scores
from tests.fixtures import build_db


@pytest.fixture
def pool(db, tmp_path):
    build_db(db, tmp_path, n_prompts=40, seed=5)
    return db


def _reference_counts(db):
    sc = pool_scores(db, "synth")
    out = {}
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):
        row = sc.S[c][~np.isnan(sc.S[c])]
        _, counts = np.unique(row, return_counts=True)      # numpy's own, not the audit's m.levels
        out[(cell["judge"], cell["format"], cell["decoding"], cell["score"])] = counts
    return out


@pytest.mark.parametrize("block", [None, 7, 60])   # one block; blocks of ~7 and ~60 candidates
def test_levels_in_blocks_equal_the_whole_matrix(pool, block):
    ref = _reference_counts(pool)
    got = effective_levels(pool, "synth", alphas=(0, 1, 2, float("inf")), block=block)
    assert got.height == 4 * len(ref) and len(ref) >= 8
    for row in got.iter_rows(named=True):
        counts = ref[(row["judge"], row["format"], row["decoding"], row["score"])]
        p = counts / counts.sum()
        expect = {0: counts.size, 1: np.exp(-(p * np.log(p)).sum()), 2: 1 / (p ** 2).sum(),
                  float("inf"): 1 / p.max()}[row["alpha"]]
        assert row["d_alpha"] == pytest.approx(expect, rel=1e-12)
        assert row["n_candidates"] == counts.sum()


def test_stability_in_blocks_equals_one_block(pool):
    whole = stability(pool, "synth", n_boot=50)
    assert whole.height > 0
    assert_frame_equal(stability(pool, "synth", n_boot=50, block=9), whole)
    ref = _reference_counts(pool)
    for row in whole.filter(pl.col("metric") == "distinct").iter_rows(named=True):
        assert row["full"] == ref[(row["judge"], row["format"], row["decoding"], row["score"])].size


def _positions_whole(db, seed):
    """The reference: the whole score matrix in memory (the engine positions used before issue 29)."""
    from audit import _metrics as m
    from audit._cells import PoolView
    sc = pool_scores(db, "synth")
    view = PoolView(sc, seed)
    position = sc.position[sc.order]
    out = []
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):
        if cell["pairing"] != "tournament":
            continue
        s = view.scores(sc.S[c])
        idx, g = view.tie_layout(~np.isnan(s))
        chosen = idx[m.selected_member(g, s[idx], view.key[idx])]
        starts = m.group_starts(g)
        sizes = np.diff(np.append(starts, g.size))
        out.append((cell["judge"], cell["format"], int(sizes.size),
                    float(np.mean(position[chosen] == position[idx][starts])),
                    float(np.mean(position[chosen] == position[idx][starts + sizes - 1])),
                    float(np.mean(1.0 / sizes))))
    return out


@pytest.mark.parametrize("block", [None, 7, 60])
def test_positions_in_blocks_equal_the_whole_matrix(pool, block):
    from audit import position_selection
    ref = _positions_whole(pool, seed=3)
    got = position_selection(pool, "synth", seed=3, block=block)
    assert len(ref) == got.height >= 2
    for want, row in zip(ref, got.iter_rows(named=True)):
        assert (row["judge"], row["format"], row["n_prompts"]) == want[:3]
        for key, value in zip(("first_rate", "last_rate", "uniform_rate"), want[3:]):
            assert row[key] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("block", [None, 7])
def test_candidate_scores_of_one_cell_in_blocks_equal_the_whole_matrix(pool, block):
    from audit import candidate_scores, scored_cells
    sc = pool_scores(pool, "synth")
    every = candidate_scores(pool, "synth", block=block)
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):   # the reference: each row of the whole matrix
        idx = np.flatnonzero(~np.isnan(sc.S[c]))
        got = every.filter((pl.col("judge") == cell["judge"]) & (pl.col("format") == cell["format"])
                           & (pl.col("decoding") == cell["decoding"]) & (pl.col("score") == cell["score"]))
        assert got["cand_idx"].to_list() == idx.tolist()
        assert got["s"].to_list() == sc.S[c][idx].tolist()
        assert got["prompt_idx"].to_list() == sc.prompt[idx].tolist()
    one = candidate_scores(pool, "synth", judge="beta", fmt="likert5", block=block)
    assert_frame_equal(one, every.filter((pl.col("judge") == "beta") & (pl.col("format") == "likert5")))
    assert one.height > 0 and candidate_scores(pool, "synth", judge="nobody").height == 0
    # the Curate page's list of cells, from the counts alone: the cells candidate_scores has rows for
    listed = scored_cells(pool, "synth").select("judge", "format", "decoding", "score")
    assert sorted(listed.rows()) == sorted(every.select("judge", "format", "decoding", "score").unique().rows())


def test_candidate_scores_of_a_pool_listed_out_of_prompt_order(db, tmp_path):
    # rows shuffled: candidate order is not prompt order, so the blocks' rows need sorting
    import random
    from audit import candidate_scores
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
    rows = synthetic_pool(30, seed=2)
    random.Random(1).shuffle(rows)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "synth")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=2)), "synth")
    sc = pool_scores(db, "synth")
    got = candidate_scores(db, "synth", judge="alpha", block=9)
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):
        if cell["judge"] != "alpha":
            continue
        idx = np.flatnonzero(~np.isnan(sc.S[c]))
        part = got.filter((pl.col("format") == cell["format"]) & (pl.col("score") == cell["score"])
                          & (pl.col("decoding") == cell["decoding"]))
        assert part["cand_idx"].to_list() == idx.tolist() and part["s"].to_list() == sc.S[c][idx].tolist()
