"""Stratified PPI++ (docs/metrics.md#stratified-estimates-estimate---strata): per stratum equal to
ppi-python 0.2.3 and combined by N_k / N (by hand), the pooling of strata with few labels, the score
bins; by simulation, 95% intervals cover θ in at least 93% of 200 seeded runs, are narrower than the
unstratified ones where the judge errs differently across strata, and no wider than 1.05× where it
does not; on a database, `estimate --strata` against arrays built here from the files written.
`python -m tests.audit.test_strata` prints the simulation's figures."""

import json
import math

import numpy as np
import polars as pl
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from audit import estimate
from audit._estimate import ppi_mean
from audit._strata import merge_strata, score_bins, stratified_ppi_mean
from ingest.store import import_labels, import_pool
from tests.conftest import cli

Z = 1.959963984540054


def test_one_stratum_is_plain_ppi():
    rng = np.random.default_rng(0)
    f_u = rng.integers(0, 5, 400) / 4
    lab = rng.choice(400, 60, replace=False)
    y = (rng.random(60) < f_u[lab]).astype(float)
    one = stratified_ppi_mean(y, f_u[lab], f_u, np.array(["x"] * 60), np.array(["x"] * 400))
    plain = ppi_mean(y, f_u[lab], f_u)
    assert (one["value"], one["half_width"]) == (plain["value"], pytest.approx(plain["half_width"], abs=1e-15))
    assert one["strata"] == [{"stratum": "x", "n_labelled": 60, "n_items": 400, "weight": 1.0,
                              "value": plain["value"], "lambda": plain["lambda"]}]


def test_two_strata_combine_ppi_pythons_estimates_by_their_shares():
    rng = np.random.default_rng(1)
    # stratum a: 300 items, 40 labelled; stratum b: 100 items, 25 labelled
    s_all = np.array(["a"] * 300 + ["b"] * 100)
    f_u = rng.integers(0, 5, 400) / 4
    lab = np.concatenate([rng.choice(300, 40, replace=False), 300 + rng.choice(100, 25, replace=False)])
    y = (rng.random(65) < np.where(s_all[lab] == "a", f_u[lab], 1 - f_u[lab])).astype(float)
    got = stratified_ppi_mean(y, f_u[lab], f_u, s_all[lab], s_all)
    parts = []
    for k, rows in (("a", slice(0, 40)), ("b", slice(40, 65))):
        fk = f_u[s_all == k]
        lo, hi = ppi_mean_ci(y[rows], f_u[lab][rows], fk, alpha=0.05, lam=None)
        point = float(np.ravel(ppi_mean_pointestimate(y[rows], f_u[lab][rows], fk, lam=None))[0])
        parts.append((point, (hi[0] - lo[0]) / 2 / Z))
    # theta = 3/4 theta_a + 1/4 theta_b; se^2 = (3/4)^2 se_a^2 + (1/4)^2 se_b^2
    value = 0.75 * parts[0][0] + 0.25 * parts[1][0]
    half = Z * math.sqrt(0.75 ** 2 * parts[0][1] ** 2 + 0.25 ** 2 * parts[1][1] ** 2)
    assert got["value"] == pytest.approx(value, abs=1e-12)
    assert (got["lo"], got["hi"]) == pytest.approx((value - half, value + half), abs=1e-12)
    assert [(p["stratum"], p["n_labelled"], p["n_items"], p["weight"]) for p in got["strata"]] == \
        [("a", 40, 300, 0.75), ("b", 25, 100, 0.25)]


def test_weights_are_rescaled_within_each_stratum():
    rng = np.random.default_rng(2)
    s_all = np.array(["a"] * 200 + ["b"] * 200)
    f_u = rng.integers(0, 5, 400) / 4
    lab = np.concatenate([rng.choice(200, 30, replace=False), 200 + rng.choice(200, 30, replace=False)])
    y = (rng.random(60) < f_u[lab]).astype(float)
    w = np.concatenate([np.full(30, 2.0), np.full(30, 0.5)])     # constant within a stratum: as no weights
    a = stratified_ppi_mean(y, f_u[lab], f_u, s_all[lab], s_all, w=w)
    b = stratified_ppi_mean(y, f_u[lab], f_u, s_all[lab], s_all)
    assert (a["value"], a["half_width"]) == pytest.approx((b["value"], b["half_width"]), abs=1e-15)


def test_strata_with_few_labels_are_pooled():
    lab = np.array(["a"] * 12 + ["b"] * 4 + ["c"] * 7)
    every = np.array(["a", "b", "c", "d"])
    # b (4) and c (7) and d (0) have fewer than 10: pooled into rest (11 labels), which stands
    assert merge_strata(lab, every) == {"a": "a", "b": "rest", "c": "rest", "d": "rest"}
    # c now has 11: it stands; the rest (b 4 + d 0 = 4 labels) joins the stratum with the most, a (12)
    lab = np.array(["a"] * 12 + ["b"] * 4 + ["c"] * 11)
    assert merge_strata(lab, every) == {"a": "a", "b": "a", "c": "c", "d": "a"}
    # none with 10: one stratum of everything
    assert set(merge_strata(np.array(["a"] * 3), every).values()) == {"rest"}


def test_score_bins():
    # min(floor(5 f), 4): 0 and 0.19 in bin 0, 0.2 in 1, 0.5 in 2, 0.75 in 3, 1 in 4 (not 5)
    assert score_bins(np.array([0, 0.19, 0.2, 0.5, 0.75, 0.8, 1.0])).tolist() == ["0", "0", "1", "2", "3", "4", "4"]
    assert score_bins(np.array([0.6 - 1e-15]))[0] == "3"       # 0.6 up to the last bit: bin 3 once rounded


# -- by simulation -------------------------------------------------------------------------------------

LEVELS = np.array([0, 0.25, 0.5, 0.75, 1.0])
SHARE = [0.15, 0.2, 0.3, 0.2, 0.15]


def sim_pool(kind: str, rng: np.random.Generator, size: int = 3000):
    """(strata, f, y) of a pool of `size` candidates in three categories with a likert judge's scores f.
    differ: P(accept) is 0.05 + 0.9 f in a, 0.45 f in b (the judge overrates), 0.5 + 0.5 f in c
    (it underrates); same: 0.05 + 0.9 f everywhere; bins: P(accept) is not monotone in f (0.5, 0.1,
    0.5, 0.9, 0.5 at the five scores), the strata are the judge's score bins."""
    s = rng.choice(np.array(["a", "b", "c"]), size, p=[0.4, 0.35, 0.25])
    f = rng.choice(LEVELS, size, p=SHARE)
    p = {"differ": np.select([s == "a", s == "b"], [0.05 + 0.9 * f, 0.45 * f], 0.5 + 0.5 * f),
         "same": 0.05 + 0.9 * f,
         "bins": np.select([f == 0.25, f == 0.75], [0.1, 0.9], 0.5)}[kind]
    if kind == "bins":
        s = score_bins(f)
    return s, f, (rng.random(size) < p).astype(float)


def simulate(kind: str, sims: int = 200, n: int = 200) -> dict:
    """Over `sims` seeded pools, n labels drawn uniformly: the coverage of θ by the stratified and the
    unstratified 95% intervals, and the mean ratio of their half-widths."""
    hits = plain_hits = 0
    ratio = []
    for k in range(sims):
        rng = np.random.default_rng(k)
        s, f, y = sim_pool(kind, rng)
        lab = rng.choice(y.size, n, replace=False)
        st = stratified_ppi_mean(y[lab], f[lab], f, s[lab], s)
        pp = ppi_mean(y[lab], f[lab], f)
        hits += st["lo"] <= y.mean() <= st["hi"]
        plain_hits += pp["lo"] <= y.mean() <= pp["hi"]
        ratio.append(st["half_width"] / pp["half_width"])
    return {"coverage": hits / sims, "plain_coverage": plain_hits / sims, "ratio": float(np.mean(ratio))}


@pytest.fixture(scope="module")
def sims():
    return {kind: simulate(kind) for kind in ("differ", "same", "bins")}


@pytest.mark.parametrize("kind", ["differ", "same", "bins"])
def test_coverage_of_200_seeded_simulations(sims, kind):
    assert sims[kind]["coverage"] >= 0.93


def test_narrower_where_the_errors_differ_across_strata(sims):
    assert sims["differ"]["ratio"] < 0.92, sims["differ"]
    assert sims["bins"]["ratio"] < 0.92, sims["bins"]


def test_no_wider_than_1_05x_where_they_do_not(sims):
    assert sims["same"]["ratio"] <= 1.05, sims["same"]


# -- on a database -------------------------------------------------------------------------------------

SYSTEMS = ("base", "s1", "s2")
N_PROMPTS = 60


def _likert(p, s):
    return 1 + (3 * p + 7 * SYSTEMS.index(s)) % 5


def _model(p, s):
    return "m-odd" if (p + SYSTEMS.index(s)) % 2 else "m-even"


def _accepts(p, s):
    """One annotator's label: accept when likert >= 3, except on m-odd answers, which they reject when
    likert is 5 (the judge errs there)."""
    return _likert(p, s) >= 3 and not (_model(p, s) == "m-odd" and _likert(p, s) == 5)


def _db(tmp_path, db, write_jsonl, category=None, accepts=_accepts):
    """Pool 'tiny': N_PROMPTS prompts x SYSTEMS, judge j's likert5 on each; one annotator labels s1 and
    s2 on the first 30 prompts by `accepts`. `category(p)`: each prompt's category (none without)."""
    rows = [{"prompt_id": f"p{p}", "prompt": f"question {p}", "candidate_id": s, "response": f"{s} answers {p}",
             "model": _model(p, s), **({"category": category(p)} if category else {})}
            for p in range(N_PROMPTS) for s in SYSTEMS]
    (tmp_path / "pool.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_pool(db, tmp_path / "pool.jsonl", "tiny")
    verdicts = [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": s, "raw": str(_likert(p, s))}
                for p in range(N_PROMPTS) for s in SYSTEMS]
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in verdicts))
    assert cli(db, "import-verdicts", str(tmp_path / "verdicts.jsonl"), "--pool", "tiny").returncode == 0
    labels = [{"prompt_id": f"p{p}", "candidate_id": s, "label": "accept" if accepts(p, s) else "reject"}
              for p in range(30) for s in ("s1", "s2")]
    import_labels(db, write_jsonl("labels.jsonl", labels), "tiny")
    return labels


def test_estimate_by_score_bin_and_by_model_equals_the_arrays(db, tmp_path, write_jsonl):
    labels = _db(tmp_path, db, write_jsonl)
    every = [(p, s) for p in range(N_PROMPTS) for s in SYSTEMS]
    f_all = np.array([(_likert(p, s) - 1) / 4 for p, s in every])
    lab = [(int(r["prompt_id"][1:]), r["candidate_id"]) for r in labels]
    y = np.array([float(r["label"] == "accept") for r in labels])
    f_lab = np.array([(_likert(p, s) - 1) / 4 for p, s in lab])
    for by, key in (("score-bin", lambda p, s: str(min(int((_likert(p, s) - 1) / 4 * 5), 4))),
                    ("model", _model)):
        (row,) = estimate(db, "tiny", "accept", strata=by).to_dicts()
        want = stratified_ppi_mean(y, f_lab, f_all, np.array([key(p, s) for p, s in lab]),
                                   np.array([key(p, s) for p, s in every]))
        assert (row["strata"], row["n_strata"]) == (by, len(want["strata"]))
        assert (row["stratified_value"], row["stratified_lo"], row["stratified_hi"]) == \
            pytest.approx((want["value"], want["lo"], want["hi"]), abs=1e-12)
        c_hw = (row["classical_hi"] - row["classical_lo"]) / 2
        assert row["stratified_effective_labels"] == pytest.approx(60 * (c_hw / want["half_width"]) ** 2)
        plain = estimate(db, "tiny", "accept").row(0, named=True)
        assert row["ppi_lo"] == plain["ppi_lo"] and "strata" not in plain
    # by model: two strata (30 labels each); the judge's errors sit in m-odd's 5s, so it is narrower
    (row,) = estimate(db, "tiny", "accept", strata="model").to_dicts()
    assert row["n_strata"] == 2
    assert row["stratified_hi"] - row["stratified_lo"] < row["ppi_hi"] - row["ppi_lo"]
    doc = json.loads(cli(db, "estimate", "--pool", "tiny", "--target", "accept", "--strata", "model",
                         "--json").stdout)
    assert doc["cells"][0]["stratified"] == {"strata": "model", "n_strata": 2, "value": pytest.approx(
        row["stratified_value"]), "lo": pytest.approx(row["stratified_lo"]), "hi": pytest.approx(row["stratified_hi"]),
        "effective_labels": pytest.approx(row["stratified_effective_labels"])}
    bad = cli(db, "estimate", "--pool", "tiny", "--target", "accept", "--strata", "category")
    assert bad.returncode == 1 and "pool 'tiny' has no category of its prompts" in bad.stderr
    assert "split by one of: score-bin, model, split, candidate_id" in bad.stderr
    bad = cli(db, "estimate", "--pool", "tiny", "--target", "accept", "--strata", "colour")
    assert bad.returncode == 1 and "use one of score-bin, category, model, split, candidate_id" in bad.stderr


def test_winrate_by_score_bin(db, tmp_path, write_jsonl):
    _db(tmp_path, db, write_jsonl)
    pairs = [{"prompt_id": f"p{p}", "a_id": "s1", "b_id": "base",
              "label": "A" if _likert(p, "s1") > _likert(p, "base") or p % 4 == 0 else "B"} for p in range(40)]
    import_labels(db, write_jsonl("pairs.jsonl", pairs), "tiny")
    row = estimate(db, "tiny", "winrate", baseline="base", strata="score-bin") \
        .filter(pl.col("system") == "s1").row(0, named=True)
    pref = np.array([1.0 if _likert(p, "s1") > _likert(p, "base") else 0.5 if _likert(p, "s1") == _likert(p, "base")
                     else 0.0 for p in range(N_PROMPTS)])
    y = np.array([float(r["label"] == "A") for r in pairs])
    want = stratified_ppi_mean(y, pref[:40], pref, score_bins(pref[:40]), score_bins(pref))
    assert (row["stratified_lo"], row["stratified_hi"]) == pytest.approx((want["lo"], want["hi"]), abs=1e-12)



# -- by the prompts' categories ---------------------------------------------------------------------------

CATEGORIES = ("writing", "math", "coding")


def _category(p):
    return CATEGORIES[p % 3]


def ppi_python_stratified(y, f_lab, s_lab, f_all, s_all) -> tuple[float, float, float]:
    """(value, lo, hi) computed apart from audit/_strata.py: ppi-python's PPI++ (tuned λ) within each
    stratum, combined by hand: θ = Σ (N_k/N)·θ_k, se² = Σ (N_k/N)²·se_k², se_k = its half-width / z."""
    value = var = 0.0
    for k in sorted(set(s_all)):
        mine, fk = s_lab == k, f_all[s_all == k]
        lo, hi = ppi_mean_ci(y[mine], f_lab[mine], fk, alpha=0.05, lam=None)
        point = float(np.ravel(ppi_mean_pointestimate(y[mine], f_lab[mine], fk, lam=None))[0])
        weight = fk.size / f_all.size
        value += weight * point
        var += weight ** 2 * ((hi[0] - lo[0]) / 2 / Z) ** 2
    return value, value - Z * math.sqrt(var), value + Z * math.sqrt(var)


def test_accept_by_category_equals_ppi_python_per_category(db, tmp_path, write_jsonl):
    labels = _db(tmp_path, db, write_jsonl, category=_category)
    every = [(p, s) for p in range(N_PROMPTS) for s in SYSTEMS]
    lab = [(int(r["prompt_id"][1:]), r["candidate_id"]) for r in labels]
    f_all = np.array([(_likert(p, s) - 1) / 4 for p, s in every])
    f_lab = np.array([(_likert(p, s) - 1) / 4 for p, s in lab])
    y = np.array([float(r["label"] == "accept") for r in labels])
    # three categories of 20 prompts x 3 systems = 60 items each (weights 1/3); 10 labelled prompts x 2
    # systems = 20 labels each (>= 10: none pooled)
    value, lo, hi = ppi_python_stratified(y, f_lab, np.array([_category(p) for p, _ in lab]), f_all,
                                          np.array([_category(p) for p, _ in every]))
    (row,) = estimate(db, "tiny", "accept", strata="category").to_dicts()
    assert (row["strata"], row["n_strata"], row["n_labelled"]) == ("category", 3, 60)
    assert (row["stratified_value"], row["stratified_lo"], row["stratified_hi"]) == \
        pytest.approx((value, lo, hi), abs=1e-9)
    doc = json.loads(cli(db, "estimate", "--pool", "tiny", "--target", "accept", "--strata", "category",
                         "--json").stdout)
    assert doc["cells"][0]["stratified"]["n_strata"] == 3
    assert (doc["cells"][0]["stratified"]["lo"], doc["cells"][0]["stratified"]["hi"]) == pytest.approx((lo, hi))


def test_winrate_by_category_equals_ppi_python_per_category(db, tmp_path, write_jsonl):
    _db(tmp_path, db, write_jsonl, category=_category)
    pairs = [{"prompt_id": f"p{p}", "a_id": "s1", "b_id": "base",
              "label": "A" if _likert(p, "s1") > _likert(p, "base") or p % 4 == 0 else "B"} for p in range(40)]
    import_labels(db, write_jsonl("pairs.jsonl", pairs), "tiny")
    row = estimate(db, "tiny", "winrate", baseline="base", strata="category") \
        .filter(pl.col("system") == "s1").row(0, named=True)
    pref = np.array([1.0 if _likert(p, "s1") > _likert(p, "base") else 0.5 if _likert(p, "s1") == _likert(p, "base")
                     else 0.0 for p in range(N_PROMPTS)])
    y = np.array([float(r["label"] == "A") for r in pairs])
    # 40 labelled prompts: 14 writing (p % 3 = 0), 13 math, 13 coding; every one >= 10
    cats = np.array([_category(p) for p in range(N_PROMPTS)])
    value, lo, hi = ppi_python_stratified(y, pref[:40], cats[:40], pref, cats)
    assert row["n_strata"] == 3
    assert (row["stratified_value"], row["stratified_lo"], row["stratified_hi"]) == \
        pytest.approx((value, lo, hi), abs=1e-9)


def test_prompts_without_a_category_stand_together_and_a_pool_without_any_is_refused(db, tmp_path, write_jsonl):
    # the first 30 prompts (the labelled ones) in their categories, the other 30 in none: '(none)' has no
    # label, so it is pooled into the rest (0 labels < 10), which joins the stratum with the most labels;
    # the three have 20 each, so the first by name: coding
    labels = _db(tmp_path, db, write_jsonl, category=lambda p: _category(p) if p < 30 else None)
    every = [(p, s) for p in range(N_PROMPTS) for s in SYSTEMS]
    lab = [(int(r["prompt_id"][1:]), r["candidate_id"]) for r in labels]
    s_all = np.array([_category(p) if p < 30 else "coding" for p, _ in every])
    value, lo, hi = ppi_python_stratified(
        np.array([float(r["label"] == "accept") for r in labels]), np.array([(_likert(p, s) - 1) / 4 for p, s in lab]),
        np.array([_category(p) for p, _ in lab]), np.array([(_likert(p, s) - 1) / 4 for p, s in every]), s_all)
    (row,) = estimate(db, "tiny", "accept", strata="category").to_dicts()
    assert row["n_strata"] == 3
    assert (row["stratified_lo"], row["stratified_hi"]) == pytest.approx((lo, hi), abs=1e-9)
    # a pool none of whose prompts has a category: refused, naming the pool and the field
    import_pool(db, write_jsonl("plain.jsonl", [{"prompt_id": "q", "prompt": "x", "candidate_id": "a",
                                                 "response": "r"}]), "plain")
    bad = cli(db, "estimate", "--pool", "plain", "--target", "accept", "--strata", "category")
    assert bad.returncode == 1 and "--strata category: pool 'plain' has no category of its prompts" in bad.stderr
    assert "optional field 'category'" in bad.stderr


def test_the_stratified_interval_of_a_share_lies_in_0_1(db, tmp_path, write_jsonl):
    # one accept in 60 labels (s1 on p0): the normal interval of a share of 1/60 reaches below 0
    labels = _db(tmp_path, db, write_jsonl, category=_category, accepts=lambda p, s: (p, s) == (0, "s1"))
    every = [(p, s) for p in range(N_PROMPTS) for s in SYSTEMS]
    lab = [(int(r["prompt_id"][1:]), r["candidate_id"]) for r in labels]
    y = np.array([float(r["label"] == "accept") for r in labels])
    value, lo, hi = ppi_python_stratified(y, np.array([(_likert(p, s) - 1) / 4 for p, s in lab]),
                                          np.array([_category(p) for p, _ in lab]),
                                          np.array([(_likert(p, s) - 1) / 4 for p, s in every]),
                                          np.array([_category(p) for p, _ in every]))
    assert lo < 0 < value < hi < 1                      # the raw interval crosses 0
    (row,) = estimate(db, "tiny", "accept", strata="category").to_dicts()
    assert row["stratified_lo"] == 0.0                  # clipped, as the unstratified ones are
    assert (row["stratified_value"], row["stratified_hi"]) == pytest.approx((value, hi), abs=1e-9)
    # the classical interval by hand: 1/60 ± 1.96·sqrt((1/60)(59/60)/60) = 0.01667 ± 0.03239, clipped at 0
    p = 1 / 60
    assert (row["classical_lo"], row["classical_hi"]) == pytest.approx((0.0, p + Z * math.sqrt(p * (1 - p) / 60)))
    # effective labels compare the half-widths before clipping: 60 × (classical hw / stratified hw)²
    assert row["stratified_effective_labels"] == pytest.approx(60 * (Z * math.sqrt(p * (1 - p) / 60) / (hi - value)) ** 2)


if __name__ == "__main__":
    for kind in ("differ", "same", "bins"):
        print(kind, simulate(kind, sims=1000))
