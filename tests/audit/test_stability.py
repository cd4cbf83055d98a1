"""audit.stability (audit/_stability.py): the effective levels of subsamples of a cell's scores, against
the hypergeometric law (scipy), a constant scale, the sample sd and the cells' own generators."""

import math

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss

from audit import stability
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.audit.conftest import candidate, pointwise

pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def test_stability_on_varying_scores_matches_the_hypergeometric_law(db, write_jsonl):
    """32 candidates (not a multiple of 3), 20 ACCEPT and 12 REJECT. Subsamples hold
    floor(32/3) = 10 (rounding would give 11). The ACCEPT count X of a subsample is
    Hypergeometric(32, 20, 10); distinct = 2 unless X in {0, 10}; D2 = 1/((X/10)^2 + (1-X/10)^2).
    Full pool: p = (12/32, 20/32) = (.375, .625), D2 = 1/(.140625 + .390625) = 1.882353,
    D1 = exp(-(.375 ln .375 + .625 ln .625)) = exp(0.36781 + 0.29375) = 1.937819."""
    n, n_accept, size = 32, 20, 10
    _pool = [candidate(f"q{i:02d}", "a", 1) for i in range(n)]
    import_pool(db, write_jsonl("p.jsonl", _pool), "p")
    raws = [(f"q{i:02d}", "a", "ACCEPT" if i < n_accept else "REJECT") for i in range(n)]
    import_verdicts(db, write_jsonl("v.jsonl", pointwise("j", "binary", raws)), "p")
    n_boot = 4000
    rows = {r["metric"]: r for r in stability(db, "p", n_boot=n_boot).to_dicts()}
    x = np.arange(size + 1)
    pmf = ss.hypergeom.pmf(x, n, n_accept, size)
    p = x / size
    exact = {"distinct": 2 - pmf[0] - pmf[-1],
             "d2": 1 / (p ** 2 + (1 - p) ** 2),
             "d1": np.exp(-(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)
                            + np.where(p < 1, (1 - p) * np.log(np.where(p < 1, 1 - p, 1)), 0)))}
    full = {"distinct": 2.0, "d2": 1 / (0.375 ** 2 + 0.625 ** 2), "d1": 1.937819}
    for metric in ("distinct", "d1", "d2"):
        r = rows[metric]
        assert r["sub_size"] == 10
        assert r["full"] == pytest.approx(full[metric], rel=1e-6)
        values = exact[metric] if metric != "distinct" else np.where((x == 0) | (x == size), 1.0, 2.0)
        mean = float(np.sum(pmf * values))
        sd = float(np.sqrt(np.sum(pmf * (values - mean) ** 2)))
        # the mean of 4000 draws is within 4.5 standard errors of the exact mean
        assert abs(r["mean"] - mean) < 4.5 * sd / math.sqrt(n_boot) + 1e-12, metric
        assert r["sd"] == pytest.approx(sd, rel=0.08, abs=1e-3), metric
        assert r["shift"] == pytest.approx(r["mean"] - r["full"])
    # d2 varies between subsamples: a constant answer would fail the sd check above
    assert rows["d2"]["sd"] > 0.05


def test_stability_sd_is_the_sample_sd_of_the_subsamples(db, write_jsonl):
    """9 ACCEPT and 3 REJECT, subsamples of floor(12/3) = 4: a subsample holds one level (all
    ACCEPT) with probability C(9,4)/C(12,4) = 126/495 = 0.2545, else two. With `distinct` taking
    only the values 1 and 2, its sample sd (ddof 1) over n draws follows from their mean alone:
    p = share of 1s = 2 - mean, sd = sqrt(n/(n-1) p (1-p))."""
    import_pool(db, write_jsonl("p.jsonl", [candidate(f"q{i:02d}", "a", 1) for i in range(12)]), "p")
    raws = [(f"q{i:02d}", "a", "ACCEPT" if i < 9 else "REJECT") for i in range(12)]
    import_verdicts(db, write_jsonl("v.jsonl", pointwise("j", "binary", raws)), "p")
    for n_boot in (2, 50, 200):
        row = [r for r in stability(db, "p", n_boot=n_boot, seed=3).to_dicts() if r["metric"] == "distinct"][0]
        p = 2 - row["mean"]
        assert row["sd"] == pytest.approx(math.sqrt(n_boot / (n_boot - 1) * p * (1 - p)), rel=1e-12, abs=1e-15)
    # 200 draws: the share of one-level subsamples is 0.2545 +- 4.5 sd (sd sqrt(.2545 .7455 / 200) = 0.0308)
    assert abs(p - 126 / 495) < 4.5 * 0.0308
    one = stability(db, "p", n_boot=1).to_dicts()
    assert all(math.isnan(r["sd"]) for r in one)      # one subsample has no spread


def test_stability_subsamples_of_each_cell_follow_its_whole_identity(db, write_jsonl):
    """The same 32 verdicts (20 ACCEPT, 12 REJECT) under three judge names: the full-pool values
    agree, and each cell draws its own subsamples (one generator for every cell would give the three
    judges the same means and sds)."""
    import_pool(db, write_jsonl("p.jsonl", [candidate(f"q{i:02d}", "a", 1) for i in range(32)]), "p")
    raws = [(f"q{i:02d}", "a", "ACCEPT" if i < 20 else "REJECT") for i in range(32)]
    import_verdicts(db, write_jsonl("v.jsonl", [v for j in ("k", "m", "z") for v in pointwise(j, "binary", raws)]), "p")
    d2 = stability(db, "p", n_boot=200).filter(pl.col("metric") == "d2").to_dicts()
    assert [r["judge"] for r in d2] == ["k", "m", "z"]
    assert [r["full"] for r in d2] == pytest.approx([1 / (0.375 ** 2 + 0.625 ** 2)] * 3)   # 1.882353, as above
    # d2 of a subsample of 10 takes 6 values with sd ~ 0.2: 200 independent draws give three means
    assert len({r["mean"] for r in d2}) == 3 and len({r["sd"] for r in d2}) == 3


def test_stability_skips_cells_too_small_to_subsample(db, write_jsonl):
    # two scored candidates: floor(2/3) = 0, no subsample of size >= 1
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", "a", 1), candidate("q", "b", 2)]), "p")
    import_verdicts(db, write_jsonl("v.jsonl", pointwise("j", "likert5", [("q", "a", "2"), ("q", "b", "4")])), "p")
    assert stability(db, "p").height == 0
    # a cell listed before it that is too small does not stop the others: binary on 2 of 6
    # candidates (size 0) and likert5 on all 6 (size floor(6/3) = 2)
    import_pool(db, write_jsonl("six.jsonl", [candidate("q", c, 1) for c in "abcdef"]), "six")
    rows = pointwise("j", "binary", [("q", "a", "ACCEPT"), ("q", "b", "REJECT")])
    rows += pointwise("j", "likert5", [("q", c, "3") for c in "abcdef"])
    import_verdicts(db, write_jsonl("w.jsonl", rows), "six")
    got = stability(db, "six", n_boot=5)
    assert set(got["format"]) == {"likert5"} and set(got["sub_size"]) == {2}
    # with fraction 1/2 it is 1: a one-candidate subsample always holds one level
    rows = {r["metric"]: r for r in stability(db, "p", fraction=0.5, n_boot=30).to_dicts()}
    assert rows["distinct"]["sub_size"] == 1 and rows["distinct"]["mean"] == 1.0
    assert rows["d2"]["full"] == 2.0 and rows["d2"]["shift"] == -1.0
    # the level it misses has share 0 and adds nothing to the entropy: D1 = exp(-1 ln 1) = 1, every time
    assert (rows["d1"]["full"], rows["d1"]["mean"], rows["d1"]["sd"]) == (pytest.approx(2.0), 1.0, 0.0)


def test_stability_is_exact_for_a_constant_scale(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [candidate(f"q{i}", "a", 1) for i in range(30)]), "p")
    verdicts = [{"judge": "j", "format": "binary", "prompt_id": f"q{i}", "candidate_id": "a",
                 "raw": "ACCEPT"} for i in range(30)]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    rows = {r["metric"]: r for r in stability(db, "p", n_boot=20).to_dicts()}
    assert rows["distinct"]["sub_size"] == 10
    for metric in ("distinct", "d1", "d2"):
        assert rows[metric]["mean"] == 1.0 and rows[metric]["sd"] == 0.0 and rows[metric]["shift"] == 0.0
