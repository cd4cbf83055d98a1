"""The style-controlled fit on tied comparisons against scipy (issue 26 item 7): through the calls
frame (a margin of 0 is a tie, worth half a win to each side), so a fit that scored a tie as a loss
(y = 0) or dropped it would fail; the ridge-penalised fit against scipy on its own objective; and
why a fit has no finite maximum, in words."""

import numpy as np
import polars as pl
import pytest
from scipy.optimize import minimize

from audit import style_rank_calls
from audit._style import COUNTS, FEATURES, standardise, style_features
from audit._style_fit import fit_style


def _tied_calls(seed, n_sys=4, rows=600, tie_share=0.3):
    """Calls between n_sys systems with random style counts; margin 0 (a tie) in about tie_share
    of them, else +1 / -1 from a logistic model with a length preference."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_sys, rows)
    b = (a + rng.integers(1, n_sys, rows)) % n_sys
    ca = np.column_stack([rng.integers(50, 2000, rows), rng.integers(0, 5, rows), rng.integers(0, 8, rows),
                          rng.integers(0, 4, rows)])
    cb = np.column_stack([rng.integers(50, 2000, rows), rng.integers(0, 5, rows), rng.integers(0, 8, rows),
                          rng.integers(0, 4, rows)])
    length = (ca[:, 0] - cb[:, 0]) / (ca[:, 0] + cb[:, 0])
    eta = 0.2 + np.linspace(-1, 1, n_sys)[a] - np.linspace(-1, 1, n_sys)[b] + 2.0 * length
    win = rng.random(rows) < 1 / (1 + np.exp(-eta))
    value = np.where(rng.random(rows) < tie_share, 0.0, np.where(win, 2.0, -1.0))   # margins, not outcomes
    frame = pl.DataFrame({"judge": "j", "format": "f", "prompt_id": [f"p{i % 60}" for i in range(rows)],
                          "a_id": [f"s{i}" for i in a], "b_id": [f"s{i}" for i in b], "value": value,
                          **{f"a_{c}": ca[:, i] for i, c in enumerate(COUNTS)},
                          **{f"b_{c}": cb[:, i] for i, c in enumerate(COUNTS)}})
    return frame, a, b, ca, cb, value


def _reference(a, b, y, z, n, penalty=0.0):
    """scipy's BFGS on -log L (soft labels) + penalty/2 (slot^2 + sum (beta - mean beta)^2 + |gamma|^2),
    beta free: (slot, centred beta, gamma)."""
    def f(params):
        slot, beta, gamma = params[0], params[1:1 + n], params[1 + n:]
        eta = slot + beta[a] - beta[b] + z @ gamma
        nll = np.sum(y * np.logaddexp(0, -eta) + (1 - y) * np.logaddexp(0, eta))
        return nll + penalty / 2 * (slot ** 2 + np.sum((beta - beta.mean()) ** 2) + gamma @ gamma)
    ml = minimize(f, np.zeros(1 + n + z.shape[1]), method="BFGS", options={"gtol": 1e-9})
    return ml.x[0], ml.x[1:1 + n] - ml.x[1:1 + n].mean(), ml.x[1 + n:]


@pytest.mark.parametrize("seed", [0, 1])
def test_ties_count_half_a_win_against_scipy(seed):
    frame, a, b, ca, cb, value = _tied_calls(seed)
    assert (value == 0).mean() > 0.2                                # ties are a real part of the data
    out = style_rank_calls(frame, n_boot=0)
    raw = style_features(ca.astype(float), cb.astype(float))
    mean, sd, kept = standardise(raw)
    z = ((raw - mean) / sd)[:, kept]
    half = np.where(value > 0, 1.0, np.where(value < 0, 0.0, 0.5))  # a tie: half a win to each side
    slot, beta, gamma = _reference(a, b, half, z, 4)
    coef = {r["name"]: r["value"] for r in out.filter(pl.col("part") == "coefficient").to_dicts()}
    systems = {r["name"]: r["value"] for r in out.filter(pl.col("part") == "system").to_dicts()}
    assert coef["slot"] == pytest.approx(slot, abs=1e-5)
    assert [systems[f"s{i}"] for i in range(4)] == pytest.approx(list(beta), abs=1e-5)
    assert [coef[f] for f in FEATURES] == pytest.approx(list(gamma), abs=1e-5)
    # the test tells the two scorings apart: ties scored as losses move the numbers well past the tolerance
    loss = np.where(value > 0, 1.0, 0.0)
    l_slot, l_beta, l_gamma = _reference(a, b, loss, z, 4)
    assert abs(l_slot - slot) > 0.1 and np.abs(l_gamma - gamma).max() > 0.01


def test_ridge_fit_equals_scipy_on_the_penalised_objective():
    frame, a, b, ca, cb, value = _tied_calls(2, rows=300)
    raw = style_features(ca.astype(float), cb.astype(float))
    mean, sd, kept = standardise(raw)
    z = ((raw - mean) / sd)[:, kept]
    y = np.where(value > 0, 1.0, np.where(value < 0, 0.0, 0.5))
    fit = fit_style(a, b, y, z, 4, penalty=3.0)
    slot, beta, gamma = _reference(a, b, y, z, 4, penalty=3.0)
    assert fit["converged"]
    assert fit["slot"] == pytest.approx(slot, abs=1e-5) and fit["beta"] == pytest.approx(beta, abs=1e-5)
    assert fit["gamma"] == pytest.approx(gamma, abs=1e-5)
    plain = fit_style(a, b, y, z, 4)
    assert np.abs(fit["gamma"]).sum() < np.abs(plain["gamma"]).sum()     # shrunk toward 0


def _sep_rows():
    c = (100, 0, 0, 0)
    rows = [("p0", "x", "y", 1.0, (120, 0, 0, 0), c), ("p1", "x", "y", 1.0, (110, 0, 0, 0), c),
            ("p2", "y", "x", -1.0, c, (130, 0, 0, 0))]
    return pl.DataFrame([{"judge": "j", "format": "f", "prompt_id": p, "a_id": sa, "b_id": sb, "value": v,
                          **{f"a_{k}": x for k, x in zip(COUNTS, xa)}, **{f"b_{k}": x for k, x in zip(COUNTS, xb)}}
                         for p, sa, sb, v, xa, xb in rows])


def test_a_separated_cell_says_why_and_the_ridge_fit_is_finite():
    # x wins all 3 comparisons (twice in slot A, once in slot B): separation; 3 rows for 1 + 1 + 1
    # parameters (slot, one strength, length) is under 5 a parameter; headers, lists, bold never vary
    out = style_rank_calls(_sep_rows(), n_boot=0)
    why = out.filter((pl.col("part") == "coefficient") & (pl.col("name") == "slot"))["why"][0]
    assert why == ("Separation: x never lost a comparison and y never won one (ties count half a win), so its "
                   "strength runs to infinity. Too few comparisons: 3 for 3 parameters (fewer than 5 a parameter). "
                   "No variation in headers, lists, bold: left out.")
    ridge = style_rank_calls(_sep_rows(), n_boot=0, penalty=1.0)
    assert ridge["converged"].all() and ridge.filter(pl.col("part") == "system")["value"].is_finite().all()
    assert ridge["why"].null_count() == ridge.height


def test_the_style_json_says_why_a_cell_has_no_fit():
    from app.cli.rankings import style_document
    doc = style_document(style_rank_calls(_sep_rows(), n_boot=0), "p")
    cell = doc["cells"][0]
    assert cell["converged"] is False and cell["why"].startswith("Separation: x never lost a comparison")
    fitted = style_document(style_rank_calls(_sep_rows(), n_boot=0, penalty=1.0), "p")["cells"][0]
    assert fitted["converged"] is True and fitted["why"] is None
