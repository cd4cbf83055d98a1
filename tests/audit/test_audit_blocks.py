"""The audit out of core (issue 21 §3): audit_cells reads a pool in blocks of whole prompts and adds
the blocks' parts up. The in-memory engine (compute_cells over the whole pool's Scores, loaded at
once by pool_scores) is kept as the reference: on random pools full of ties, unparsed verdicts,
missing references, uneven prompts, tournament matches and repeated samples with label
distributions, every number agrees to 1e-12 for any block size, and a pool of one block agrees bit
for bit."""

import math

import numpy as np
import polars as pl
import pytest

from audit import _scores as _blocks
from audit import _cells as cells_mod
from audit._cells import audit_cells, compute_cells
from audit._scores import pool_scores
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


def _repeats(pool_rows, seed):
    """likert5 samples 1 and 2 for a third of judge alpha's calls (sample 0 is in the fixture's
    rows), with a label distribution on some of them: mean cells, of labels and expected values."""
    rng = np.random.default_rng(seed)
    out = []
    for row in pool_rows:
        if rng.random() < 1 / 3:
            for sample in (1, 2):
                raw = str(int(rng.integers(1, 6))) if rng.random() > 0.1 else "no idea"
                extra = {"label_probs": {raw: 0.6, "3": 0.4}} if raw != "3" and raw.isdigit() and rng.random() < 0.5 else {}
                out.append({"judge": "alpha", "format": "likert5", "prompt_id": row["prompt_id"],
                            "candidate_id": row["candidate_id"], "raw": raw, "sample": sample, **extra})
    return out


@pytest.fixture(scope="module", params=[0, 1, 2])
def random_pool(request, tmp_path_factory):
    seed = request.param
    folder = tmp_path_factory.mktemp(f"blocks{seed}")
    db = folder / "audit.duckdb"
    rows = synthetic_pool(37, k_range=(1, 6), seed=seed, missing_ref=0.15)
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "p")
    verdicts = synthetic_verdicts(rows, seed=seed, unparsed=0.1)
    rng = np.random.default_rng(seed)
    for v in verdicts:   # a label distribution on some likert5 calls: expected cells
        if v["format"] == "likert5" and rng.random() < 0.4:
            top = str(int(rng.integers(1, 6)))
            v["label_probs"] = {top: 0.7, "3" if top != "3" else "4": 0.3}
    import_verdicts(db, write_jsonl(folder / "v.jsonl", verdicts), "p")
    import_verdicts(db, write_jsonl(folder / "r.jsonl", _repeats(rows, seed)), "p")
    return db


def _assert_close(got: pl.DataFrame, want: pl.DataFrame, tol: float = 1e-12) -> None:
    assert got.columns == want.columns and got.height == want.height
    for name in want.columns:
        a, b = got[name], want[name]
        assert a.is_null().to_list() == b.is_null().to_list(), name
        if b.dtype == pl.Float64:
            x, y = a.drop_nulls().to_numpy(), b.drop_nulls().to_numpy()
            assert np.all(np.abs(x - y) <= tol), (name, np.abs(x - y).max())
        else:
            assert a.to_list() == b.to_list(), name


@pytest.mark.parametrize("block", [1, 4, 23, 60])
def test_blocks_give_the_in_memory_engines_numbers(random_pool, block):
    want = compute_cells(pool_scores(random_pool, "p", repeats=True), seed=5)
    assert set(want["aggregate"]) == {"single", "mean"} and set(want["score"]) == {"label", "expected"}
    assert set(want["format"]) == {"binary", "likert5", "numeric100", "tournament"}
    _assert_close(audit_cells(random_pool, "p", seed=5, block=block), want)


def test_one_block_is_the_in_memory_engine_bit_for_bit(random_pool):
    want = compute_cells(pool_scores(random_pool, "p", repeats=True), seed=2)
    assert audit_cells(random_pool, "p", seed=2).equals(want)             # the default block holds it
    assert audit_cells(random_pool, "p", seed=2, block=10 ** 6).equals(want)


def test_blocks_cover_every_candidate_once_in_whole_prompts(random_pool, monkeypatch):
    sc = pool_scores(random_pool, "p")
    seen = []
    real = _blocks.read_candidates

    def spy(con, pid, prompts=None):
        cand = real(con, pid, prompts)
        seen.append((prompts, cand["cand_idx"], cand["prompt_idx"]))
        return cand
    monkeypatch.setattr(_blocks, "read_candidates", spy)
    audit_cells(random_pool, "p", block=30)
    # 37 prompts of 1..6 candidates: ceil(n / 30) blocks of ceil(37 / blocks) prompts each
    n = sc.prompt.size
    n_blocks = math.ceil(n / 30)
    step = math.ceil(37 / n_blocks)
    assert [p for p, _, _ in seen] == [(lo, min(lo + step - 1, 36)) for lo in range(0, 37, step)]
    assert np.array_equal(np.sort(np.concatenate([c for _, c, _ in seen])), np.arange(n))
    for (lo, hi), _, prompt in seen:
        assert prompt.min() >= lo and prompt.max() <= hi


def test_interleaved_prompts_place_each_candidate(tmp_path):
    # the file lists prompts interleaved, so a prompt's cand_idx are not contiguous (q: 0, 2; r: 1, 3)
    rows = [{"prompt_id": p, "prompt": p, "candidate_id": c, "response": c + p, "reference": ref}
            for p, c, ref in [("q", "a", 1), ("r", "a", 3), ("q", "b", 2), ("r", "b", 2), ("q", "c", 2)]]
    db = tmp_path / "i.duckdb"
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    raws = {("q", "a"): "2", ("q", "b"): "5", ("q", "c"): "5", ("r", "a"): "4", ("r", "b"): "1"}
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", [
        {"judge": "j", "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": raw}
        for (p, c), raw in raws.items()]), "p")
    cell = audit_cells(db, "p", block=1).to_dicts()[0]
    # q: s (2, 5, 5) vs r (1, 2, 2): concordant a-b, a-c; b-c tied in both: tau_a = 2/3
    # r: s (4, 1) vs r (3, 2): concordant: tau_a = 1; mean (2/3 + 1) / 2 = 5/6
    assert cell["tau_a"] == pytest.approx(5 / 6)
    # judge-top of q: b, c, both reference-top: top1_expected 1; r: a is both tops: 1
    assert (cell["top1_expected"], cell["top_tied"]) == (1.0, 0.5)
    assert audit_cells(db, "p", block=1).equals(audit_cells(db, "p"))


def test_a_block_needs_a_candidate(random_pool):
    with pytest.raises(ValueError, match="block"):
        audit_cells(random_pool, "p", block=0)


def test_pairs_layout_is_dense_groups_on_the_views_prompts(random_pool):
    from audit._cells import PoolView, dense_groups
    sc = pool_scores(random_pool, "p")
    view = PoolView(sc, 0)
    rng = np.random.default_rng(4)
    for share in (0.0, 0.3, 0.8, 1.0):
        mask = rng.random(view.prompt.size) < share
        idx = np.flatnonzero(mask)
        keep, g = dense_groups(view.prompt[idx], 2)             # the obvious reference
        got_idx, got_g = view.pairs_layout(mask)
        assert np.array_equal(got_idx, idx[keep]) and np.array_equal(got_g, g)
    assert view.n_prompts == 37


@pytest.mark.parametrize("block", [1, 7])
def test_score_values_in_blocks_are_the_pools_histograms(random_pool, block):
    from audit import score_values
    sc = pool_scores(random_pool, "p")
    want = []
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):   # the whole matrix at once: the reference
        values, n = np.unique(sc.S[c][~np.isnan(sc.S[c])], return_counts=True)
        want += [(cell["judge"], cell["format"], cell["score"], v, int(k)) for v, k in zip(values, n)]
    got = score_values(random_pool, "p", block=block)
    assert got.select("judge", "format", "score", "s", "n").rows() == want
    assert got.equals(score_values(random_pool, "p"))
    # mult5 only on the 0-100 scale: 0.35 is 35/100, a multiple of 5
    assert set(got.filter(pl.col("format") != "numeric100")["mult5"].to_list()) == {None}
    assert got.filter(pl.col("format") == "numeric100")["mult5"].all()


def test_an_error_midway_ends_the_read_under_way(random_pool, monkeypatch):
    import threading
    before = threading.active_count()
    calls = []
    real = cells_mod.cell_parts

    def failing(view, s):
        calls.append(1)
        if len(calls) > 10:           # partway: the next block is being read meanwhile
            raise RuntimeError("boom")
        return real(view, s)
    monkeypatch.setattr(cells_mod, "cell_parts", failing)
    with pytest.raises(RuntimeError, match="boom"):
        audit_cells(random_pool, "p", block=5)
    assert threading.active_count() == before            # the reader thread has ended
    monkeypatch.setattr(cells_mod, "cell_parts", real)
    assert audit_cells(random_pool, "p", block=5).height > 0
