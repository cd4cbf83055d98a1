"""`estimate` (DESIGN.md 'Human labels and what they are worth'): the classical and PPI++ intervals
equal ppi-python 0.2.3's on the same arrays (ties included), the weights of actively drawn items,
effective_labels, and the per-cell numbers on a real database for both targets, from arrays built
here independently of the store's SQL."""

import json

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from audit import estimate
from audit._estimate import classical_mean, effective_labels, hansen_hurwitz, ppi_mean, tuned_lambda
from ingest.store import import_labels, import_pool
from tests.conftest import cli


def _arrays(seed, n=60, big_n=500, levels=5):
    """Predictions on a likert grid (many ties), binary human labels that follow them loosely."""
    rng = np.random.default_rng(seed)
    f = rng.integers(0, levels, n) / (levels - 1)
    f_u = rng.integers(0, levels, big_n) / (levels - 1)
    y = (rng.random(n) < 0.15 + 0.7 * f).astype(float)
    return y, f, f_u


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_equal_to_ppi_python_on_arrays_with_ties(seed, alpha):
    y, f, f_u = _arrays(seed)
    ours = ppi_mean(y, f, f_u, alpha)
    lo, hi = ppi_mean_ci(y, f, f_u, alpha=alpha, lam=None)
    point = float(np.ravel(ppi_mean_pointestimate(y, f, f_u, lam=None))[0])
    assert ours["value"] == pytest.approx(point, abs=1e-12)
    assert (ours["lo"], ours["hi"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
    c_lo, c_hi = classical_mean_ci(y, alpha=alpha)
    c = classical_mean(y, alpha)
    assert (c["lo"], c["hi"]) == pytest.approx((c_lo, c_hi), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_weights_with_mean_one_equal_ppi_pythons_weighted_interval(seed):
    # ppi-python rescales w to mean 1; weights already of mean 1 are used alike by both
    y, f, f_u = _arrays(seed)
    w = np.random.default_rng(100 + seed).uniform(0.2, 3.0, y.size)
    w = w / w.mean()
    ours = ppi_mean(y, f, f_u, 0.05, w=w)
    lo, hi = ppi_mean_ci(y, f, f_u, alpha=0.05, w=w)
    assert (ours["lo"], ours["hi"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
    point = float(np.ravel(ppi_mean_pointestimate(y, f, f_u, w=w))[0])
    assert ours["value"] == pytest.approx(point, abs=1e-12)


def test_a_perfect_judge_by_hand():
    # Y = f = (1, 0, 1, 0); f_u = (1, 1, 0, 0, 1, 0, 1, 0): n = 4, N = 8.
    # classical: mean 0.5, population sd 0.5, half-width 1.959964 * 0.5 / 2 = 0.489991.
    # lambda: theta_1 = mean(f_u) + mean(Y - f) = 0.5; g = gh = (0.5, -0.5, 0.5, -0.5):
    #   cov (over n) = 2 * 4 * 0.25 / 4 = 0.5; var of the 12 values (each +-0.5) with ddof 1 = 3 / 11;
    #   lambda = 0.5 / (2 * (1 + 4/8) * 3/11) = 0.5 / (9/11) = 0.6111 -> clipped stays 0.6111.
    # PPI: 0.6111 * 0.5 + mean((1-l)Y) = 0.5; se^2 = l^2 * 0.25 / 8 + (1-l)^2 * 0.25 / 4.
    y = np.array([1.0, 0, 1, 0])
    f_u = np.array([1.0, 1, 0, 0, 1, 0, 1, 0])
    lam = 0.5 / (2 * 1.5 * 3 / 11)
    assert tuned_lambda(y, y, f_u) == pytest.approx(lam)
    r = ppi_mean(y, y, f_u, 0.05)
    se = np.sqrt(lam ** 2 * 0.25 / 8 + (1 - lam) ** 2 * 0.25 / 4)
    assert r["value"] == pytest.approx(0.5) and r["half_width"] == pytest.approx(1.959963984540054 * se)
    c = classical_mean(y, 0.05)
    assert c["half_width"] == pytest.approx(0.4899909961350135)
    # worth n * (classical hw / ppi hw)^2 labels
    assert effective_labels(4, c["half_width"], r["half_width"]) == pytest.approx(4 * (0.25 / 4) / se ** 2)


def test_uniform_inclusion_gives_weight_one_and_plain_ppi():
    # a uniform draw of m = 20 from M = 400 items: pi = 0.05, weight m / (M pi) = 1
    w = hansen_hurwitz(np.full(20, 0.05), 20, 400)
    assert np.allclose(w, 1.0)
    y, f, f_u = _arrays(3, n=20)
    assert ppi_mean(y, f, f_u, w=w)["lo"] == pytest.approx(ppi_mean(y, f, f_u)["lo"], abs=1e-15)


def test_a_useless_judge_is_worth_about_its_labels_and_no_more():
    # f constant: lambda = 0 (no covariance), PPI = classical, effective_labels = n
    y, _, f_u = _arrays(5)
    r = ppi_mean(y, np.full(y.size, 0.5), np.full(f_u.size, 0.5))
    c = classical_mean(y)
    assert r["lambda"] == 0 and r["half_width"] == pytest.approx(c["half_width"])
    assert effective_labels(y.size, c["half_width"], r["half_width"]) == pytest.approx(y.size)


# -- on a database ------------------------------------------------------------------------------------

SYSTEMS = ("base", "s1", "s2")


def _pool(tmp_path, db, n_prompts=30):
    rows = [{"prompt_id": f"p{p}", "prompt": f"question {p}", "candidate_id": s, "response": f"{s} answers {p}"}
            for p in range(n_prompts) for s in SYSTEMS]
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_pool(db, path, "tiny")


def _likert(p, s):
    return 1 + (3 * p + 7 * SYSTEMS.index(s)) % 5


def _verdicts(tmp_path, n_prompts=30):
    rows = [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": s, "raw": str(_likert(p, s))}
            for p in range(n_prompts) for s in SYSTEMS]
    rows += [{"judge": "j", "format": "tournament", "prompt_id": f"p{p}", "a_id": a, "b_id": b,
              "raw": "A+" if _likert(p, a) > _likert(p, b) else ("TIE" if _likert(p, a) == _likert(p, b) else "B++")}
             for p in range(n_prompts) for a, b in (("s1", "base"), ("base", "s2"))]
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_accept_estimate_equals_ppi_python_on_the_cells_arrays(db, tmp_path, write_jsonl):
    _pool(tmp_path, db)
    assert cli(db, "import-verdicts", str(_verdicts(tmp_path)), "--pool", "tiny").returncode == 0
    # two annotators label the first 12 prompts' s1 answers; their mean is Y (accept when likert >= 3)
    labels = [{"prompt_id": f"p{p}", "candidate_id": "s1", "label": "accept" if _likert(p, "s1") >= 3 else "reject",
               "annotator": "u"} for p in range(12)]
    labels += [{"prompt_id": f"p{p}", "candidate_id": "s1", "label": "accept" if p % 2 else "reject",
                "annotator": "v"} for p in range(4)]
    import_labels(db, write_jsonl("labels.jsonl", labels), "tiny")
    (row,) = estimate(db, "tiny", "accept").to_dicts()
    f_all = np.array([(_likert(p, s) - 1) / 4 for p in range(30) for s in SYSTEMS])
    y = np.array([np.mean([float(_likert(p, "s1") >= 3)] + ([float(p % 2)] if p < 4 else [])) for p in range(12)])
    f = np.array([(_likert(p, "s1") - 1) / 4 for p in range(12)])
    lo, hi = ppi_mean_ci(y, f, f_all, alpha=0.05)
    c_lo, c_hi = classical_mean_ci(y, alpha=0.05)
    assert (row["judge"], row["format"], row["n_labelled"], row["n_unlabelled"]) == ("j", "likert5", 12, 90 - 12)
    assert (row["ppi_lo"], row["ppi_hi"]) == pytest.approx((lo[0], hi[0]), abs=1e-12)
    assert (row["classical_lo"], row["classical_hi"]) == pytest.approx((c_lo, c_hi), abs=1e-12)
    ratio = ((c_hi - c_lo) / (hi[0] - lo[0])) ** 2
    assert row["effective_labels"] == pytest.approx(12 * ratio)


def test_winrate_per_system_from_pointwise_and_comparative_cells(db, tmp_path, write_jsonl):
    _pool(tmp_path, db)
    assert cli(db, "import-verdicts", str(_verdicts(tmp_path)), "--pool", "tiny").returncode == 0
    # humans on s1 vs base for prompts 0..9, written either way round
    truth = {p: ("s1" if p % 3 else "base") for p in range(10)}
    labels = [{"prompt_id": f"p{p}", "a_id": "s1", "b_id": "base", "label": "A" if truth[p] == "s1" else "B"}
              if p % 2 else
              {"prompt_id": f"p{p}", "a_id": "base", "b_id": "s1", "label": "B" if truth[p] == "s1" else "A"}
              for p in range(10)]
    labels.append({"prompt_id": "p0", "a_id": "s1", "b_id": "base", "label": "tie", "annotator": "v"})
    import_labels(db, write_jsonl("labels.jsonl", labels), "tiny")
    out = {(r["format"], r["system"]): r for r in estimate(db, "tiny", "winrate", baseline="base").to_dicts()}
    assert set(out) == {("likert5", "s1"), ("likert5", "s2"), ("tournament", "s1"), ("tournament", "s2")}
    y = np.array([float(truth[p] == "s1") for p in range(10)])
    y[0] = (0.0 + 0.5) / 2                          # p0: 'import' says base, v says tie
    pref = np.array([1.0 if _likert(p, "s1") > _likert(p, "base") else
                     0.5 if _likert(p, "s1") == _likert(p, "base") else 0.0 for p in range(30)])
    for fmt in ("likert5", "tournament"):           # the tournament's margins follow the likert order
        r = out[(fmt, "s1")]
        lo, hi = ppi_mean_ci(y, pref[:10], pref, alpha=0.05)
        assert (r["n_labelled"], r["n_unlabelled"], r["baseline"]) == (10, 20, "base")
        assert (r["ppi_lo"], r["ppi_hi"]) == pytest.approx((lo[0], hi[0]), abs=1e-12)
        assert r["classical_value"] == pytest.approx(y.mean())
    assert out[("likert5", "s2")]["n_labelled"] == 0 and out[("likert5", "s2")]["ppi_value"] is None
    doc = json.loads(cli(db, "estimate", "--pool", "tiny", "--target", "winrate", "--baseline", "base",
                          "--json").stdout)
    cell = next(c for c in doc["cells"] if c["format"] == "likert5" and c["system"] == "s1")
    assert set(cell) >= {"judge", "format", "decoding", "target", "system", "n_labelled", "n_unlabelled",
                         "classical", "ppi", "effective_labels"}
    assert cell["ppi"]["lambda"] == pytest.approx(out[("likert5", "s1")]["ppi_lambda"])
    bad = cli(db, "estimate", "--pool", "tiny", "--target", "winrate", "--baseline", "nobody")
    assert bad.returncode == 1 and "--baseline nobody: not a system" in bad.stderr


