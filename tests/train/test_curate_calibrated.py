"""`curate --by calibrated` (docs/metrics.md#scores-on-the-human-scale): the picks and the cut by
P(a human accepts) under the cell's isotonic map, checked against scikit-learn's map fitted on the same
labels, on the planted pool of tests/audit/test_human_scale.py."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.isotonic import IsotonicRegression

from ingest import UserError
from tests.audit.conftest import main_json
from tests.audit.test_human_scale import planted_pool


def test_curate_by_calibrated_selects_by_the_mapped_probability(db, tmp_path, capsys):
    from audit import candidate_texts
    from train.subsets import curate_pool
    truth, scores = planted_pool(db, tmp_path)
    iso = IsotonicRegression(out_of_bounds="clip").fit([v[0] for v in truth.values()],
                                                       [v[1] for v in truth.values()])
    picks, summary, _ = curate_pool(db, "hs", "judge", 0.5, judge="j", fmt="likert5", by="calibrated")
    assert picks.height >= 100
    ids = candidate_texts(db, "hs", picks["cand_idx"].to_list()).select("cand_idx", "prompt_id", "candidate_id")
    picks = picks.join(ids, on="cand_idx")
    for r in picks.iter_rows(named=True):
        mine = iso.predict([scores[(r["prompt_id"], r["candidate_id"])]])[0]
        best = max(iso.predict([scores[(r["prompt_id"], s)]])[0] for s in ("s0", "s1", "s2"))
        assert r["value"] == pytest.approx(mine, abs=1e-12) and mine == pytest.approx(best, abs=1e-12)
    kept, dropped = picks.filter("kept"), picks.filter(~pl.col("kept"))
    assert kept["value"].min() >= dropped["value"].max()
    # the map is flat where the humans' rate does not rise: more ties than the raw scores give
    raw, _, _ = curate_pool(db, "hs", "judge", 0.5, judge="j", fmt="likert5")
    assert picks["pick_tied"].sum() >= raw["pick_tied"].sum()
    doc = main_json(capsys, "curate", "--pool", "hs", "--judge", "j", "--format", "likert5", "--by", "calibrated",
                    "--rate", "0.5", "--out", str(tmp_path / "s.jsonl"), "--json")
    assert doc["by"] == "calibrated" and doc["name"] == "j×likert5·calibrated@0.5#s0"
    assert doc["n_selected"] == kept.height


def test_curate_by_calibrated_needs_accept_labels(db, tmp_path):
    from tests.fixtures import build_db
    from train.subsets import make_subset
    build_db(db, tmp_path, n_prompts=20, pool="nolab")
    with pytest.raises(UserError, match="--by calibrated: no accept labels"):
        make_subset(db, "nolab", "judge", 0.5, tmp_path / "s.jsonl", judge="alpha", fmt="likert5", by="calibrated")
