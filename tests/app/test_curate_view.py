"""The Curate & Train page flat in the pool's size: its preview is a stored derived result
(train/curation_view.py, train.DERIVED_RESULTS 'curation' and 'curation_overlap') that equals what the
page drew from the in-memory curation before, and a second session (a restarted server) runs no
curation."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import audit
from audit import derived
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from train.curate import curate, overlap
from train.curation_view import bins, curation_overlap, curation_view, first_choice, split_view, view_args
from train.derived_results import DERIVED_RESULTS


@pytest.fixture
def pool(db, tmp_path):
    rows = synthetic_pool(30, seed=8, missing_ref=0.1)
    for i, r in enumerate(rows):
        r["response"] = "y" * (5 + (i * 13) % 40)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, ("alpha", "beta"), seed=8)), "s")
    return db


def test_bins_by_hand():
    # 5 distinct values (<= 40): a bin each, starting at the value; kept 0.75 and 1.0 (twice)
    values, kept = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.0]), np.array([False, False, False, True, True, True])
    got = bins(values, kept, 40)
    assert got.filter(pl.col("set") == "kept").rows() == [("kept", 0.75, 1.0, 1), ("kept", 1.0, 1.25, 2)]
    assert got.filter(pl.col("set") == "dropped")["n"].to_list() == [1, 1, 1]
    # 100 distinct values over [0, 99] in 10 equal bins of width 9.9: 10 in each
    wide = bins(np.arange(100.0), np.zeros(100, bool), 10)
    assert wide["n"].to_list() == [10] * 10 and wide["lo"][1] == pytest.approx(9.9)
    assert bins(np.array([3.0, 3.0]), np.array([True, False]), 30).rows() == [("kept", 3.0, 4.0, 1), ("dropped", 3.0, 4.0, 1)]


def test_the_stored_view_equals_the_in_memory_curation(pool):
    cands, cells = audit.pool_candidates(pool, "s"), audit.scored_cells(pool, "s")
    assert first_choice(cells) == ("judge", "alpha", "binary")
    for args in ((), ("judge", "beta", "likert5", None, 0.5, 3), ("length", None, None, None, 0.1, 0),
                 ("full", None, None, None, 1.0, 1)):
        policy, judge, fmt, decoding, rate, seed = args or ("judge", "alpha", "binary", None, 0.25, 0)
        scores = audit.candidate_scores(pool, "s", judge=judge, fmt=fmt) if policy == "judge" else None
        picks, summary = curate(cands, scores, policy, rate, seed, judge, fmt, decoding=decoding)
        s, values, chars, examples = split_view(curation_view(pool, "s", *args))
        assert s == json.loads(json.dumps(summary))
        for part, col, n_bins in ((values, "value", 40), (chars, "chars", 30)):
            full = picks.join(cands.with_row_index("cand_idx").select(pl.col("cand_idx").cast(pl.Int64),
                                                                      pl.col("response_chars").alias("chars")),
                              on="cand_idx")
            for name, keep in (("kept", True), ("dropped", False)):
                want = full.filter(pl.col("kept") == keep)[col].to_numpy()
                got = part.filter(pl.col("set") == name)
                assert got["n"].sum() == want.size                 # every pick in one bin
                assert all(((want >= lo) & (want < hi)).sum() == n or (hi == got["hi"].max() and n == (
                    (want >= lo) & (want <= hi)).sum()) for lo, hi, n in got.select("lo", "hi", "n").rows())
        assert examples.filter(pl.col("set") == "kept")["cand_idx"].to_list() == picks.filter("kept").tail(3)["cand_idx"].to_list()
        assert examples.filter(pl.col("set") == "dropped")["cand_idx"].to_list() == \
            picks.filter(~pl.col("kept")).head(3)["cand_idx"].to_list()
        texts = audit.candidate_texts(pool, "s", examples["cand_idx"].to_list())
        assert examples.select("prompt_id", "prompt", "response").rows() == \
            texts.select("prompt_id", "prompt", "response").rows()
        assert examples.height == min(3, s["n_selected"]) + min(3, s["n_eligible"] - s["n_selected"]) >= 3


def test_the_stored_overlap_equals_train_overlap(pool):
    cands, scores = audit.pool_candidates(pool, "s"), audit.candidate_scores(pool, "s", judge="beta")
    fmts = ["binary", "likert5", "numeric100", "tournament"]
    for seed in (0, 4):
        want = overlap(cands, scores, "beta", fmts, [0.1, 0.25, 0.5], seed)
        assert_frame_equal(curation_overlap(pool, "s", "beta", tuple(fmts), None, (0.1, 0.25, 0.5), seed), want)
        assert want["jaccard"].drop_nulls().n_unique() > 2
    first = overlap(cands, audit.candidate_scores(pool, "s", judge="alpha"), "alpha", fmts, [0.1, 0.25, 0.5], 0)
    assert_frame_equal(curation_overlap(pool, "s"), first)


def test_view_args_are_empty_for_the_first_view_alone(pool):
    cells = audit.scored_cells(pool, "s")
    assert view_args(cells, "judge", "alpha", "binary", None, 0.25, 0) == ()
    assert view_args(cells, "judge", "alpha", "binary", None, 0.5, 0) == ("judge", "alpha", "binary", None, 0.5, 0)
    assert view_args(cells.head(0), "random", None, None, None, 0.25, 0) == ()


def test_a_second_session_runs_no_curation_for_the_page(pool, monkeypatch):
    """The page in one session, then in another after the server's caches are cleared (a restart):
    the second draws the same numbers and tables without one call of the curation, the overlap or
    any audit function behind them (counted through the store's derived results)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    calls = {"curation": 0, "curation_overlap": 0, "scored_cells": 0, "placeholders": 0, "preview_picks": 0}
    for name in ("curation", "curation_overlap", "scored_cells", "placeholders"):
        fn = DERIVED_RESULTS[name].compute
        monkeypatch.setitem(DERIVED_RESULTS, name, replace(DERIVED_RESULTS[name], compute=lambda *a, _n=name, _f=fn: calls.__setitem__(_n, calls[_n] + 1) or _f(*a)))
    import train.curation_view
    real = train.curation_view.preview_picks
    monkeypatch.setattr(train.curation_view, "preview_picks",
                        lambda *a, **k: calls.__setitem__("preview_picks", calls["preview_picks"] + 1) or real(*a, **k))
    derived.forget()

    def session():
        at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
        at.sidebar.selectbox[0].select("s").run()
        at.switch_page("views/curate/page.py").run()
        assert not at.exception, [e.value for e in at.exception]
        return [m.value for m in at.metric], [d.value for d in at.dataframe]

    metrics, tables = session()
    assert calls["curation"] == calls["curation_overlap"] == calls["scored_cells"] == calls["placeholders"] == 1, calls
    assert calls["preview_picks"] == 1, calls      # the preview (the overlap reads alpha's 4 formats in one pass)
    cands, scores = audit.pool_candidates(pool, "s"), audit.candidate_scores(pool, "s", judge="alpha", fmt="binary")
    _, s = curate(cands, scores, "judge", 0.25, 0, "alpha", "binary")
    assert metrics[:2] == [str(s["n_eligible"]), str(s["n_selected"])]
    computed = dict(calls)
    st.cache_data.clear()
    derived.forget()
    metrics2, tables2 = session()
    assert calls == computed                   # nothing curated, no cell counted: all read from the store
    assert metrics2 == metrics and len(tables2) == len(tables) and all(a.equals(b) for a, b in zip(tables, tables2))


def test_the_held_out_share_is_shown_where_curation_sets_it_aside(pool, monkeypatch):
    """Curation sets aside a seeded 10% of a pool's prompts when it marks none as held out (train/heldout.py):
    the Curate page says so beside its counts, and the Pool page's count of marked candidates says what it
    means (it read 0 while 3 of 30 prompts were held out)."""
    from streamlit.testing.v1 import AppTest

    from app.pool_summary import heldout_help
    from app.views.curate.preview import heldout_words
    from tests.conftest import REPO
    from train.heldout import SHARE, heldout_count
    # 30 prompts: round(0.1 x 30) = 3 held out; 25 prompts: 2.5 rounds half up to 3; one prompt: at least one
    assert SHARE == 0.1 and [heldout_count(n) for n in (30, 25, 24, 1, 0)] == [3, 3, 2, 1, 0]
    assert heldout_words(3, 0) == ("Held out for evaluation: 3 prompts, a seeded 10% of this pool's prompts, since it "
                                   "marks none as held out (split = heldout); never curated, and the prompts the "
                                   "Evaluate page answers.")
    assert heldout_words(1, 4).startswith("Held out for evaluation: 1 prompt, the prompts this pool marks as held out")
    assert heldout_help(30, 0).endswith("a seeded 10% of the prompts instead: 3 of 30, never curated, answered by "
                                        "Evaluate.")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(pool))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.sidebar.selectbox[0].select("s").run()
    at.switch_page("views/curate/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert heldout_words(3, 0) in [c.value for c in at.caption]
    at.switch_page("views/pool/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    marked = next(m for m in at.metric if m.label == "marked held out")
    assert marked.value == "0" and "3 of 30" in marked.help
