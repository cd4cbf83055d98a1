"""Style-controlled rankings (`judgeaudit rank --style`, DESIGN.md 'Repeats, style and confidence'):
the style counts and features by hand, the Newton fit against scipy.optimize.minimize on the same
likelihood, and a simulated judge with a known length preference (`fake:...&length_bias=3`) whose
preference the fit recovers, with human labels that have none."""

import json
import math
import random
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from scipy.optimize import minimize

from app.cli import cli
from audit import style_rank, style_rank_calls
from scipy.special import expit

from audit._style import COUNTS, FEATURES, standardise, style_counts, style_features
from audit._style_fit import MAX_ITER, RIDGE, TOL, fit_style, newton_pairs
from ingest.scoring import ScoreRequest, score
from ingest.store import import_labels, import_pool
from tests.fixtures import write_jsonl
from tests.conftest import EXE


# The slow, obvious reference of audit._style_fit.newton_pairs: a dense Newton on the design matrix.

def design(a: np.ndarray, b: np.ndarray, n: int, z: np.ndarray) -> np.ndarray:
    """(N, 1 + (n - 1) + q): the slot column of ones, system A minus system B in reference coding
    (system 0 is the reference), the standardised features."""
    rows = np.arange(a.size)
    d = np.zeros((a.size, n))
    np.add.at(d, (rows, a), 1.0)
    np.add.at(d, (rows, b), -1.0)
    return np.column_stack([np.ones(a.size), d[:, 1:], z])


def log_likelihood(theta: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """sum_i w_i (y_i eta_i - log(1 + e^eta_i)), eta = x theta: the soft-label Bernoulli
    log-likelihood (minus the binary cross-entropy). theta (k,) or (B, k); w (N,) or (B, N)."""
    eta = np.atleast_2d(theta) @ x.T
    ll = (1.0 if w is None else w) * (y * eta - np.logaddexp(0.0, eta))
    out = ll.sum(axis=-1)
    return out[0] if np.ndim(theta) == 1 else out


def newton(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, start: np.ndarray | None = None,
           tol: float = TOL, max_iter: int = MAX_ITER) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood theta of logit P(y) = x theta with soft labels y in [0, 1] and row weights
    w ((B, N): one fit per member; None: one fit, weight 1). Newton's method with step halving,
    each member until its largest step is below tol. Returns (theta (B, k) or (k,), converged)."""
    single = w is None
    w = np.ones((1, y.size)) if single else np.asarray(w, float)
    n_fit, k = w.shape[0], x.shape[1]
    theta = np.zeros((n_fit, k)) if start is None else np.array(np.broadcast_to(start, (n_fit, k)), float)
    eta = theta @ x.T
    ll = (w * (y * eta - np.logaddexp(0.0, eta))).sum(axis=1)
    todo = np.arange(n_fit)
    done = np.zeros(n_fit, bool)
    ridge = RIDGE * np.eye(k)
    for _ in range(max_iter):
        ww, et = w[todo], eta[todo]
        p = expit(et)
        grad = (ww * (y - p)) @ x
        hess = np.matmul(x.T[None] * (ww * p * (1 - p))[:, None, :], x) + ridge
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        move = step @ x.T
        scale = np.ones(todo.size)
        old = ll[todo]
        for _ in range(40):                        # halve a step that lowers the likelihood
            trial = et + scale[:, None] * move
            new = (ww * (y * trial - np.logaddexp(0.0, trial))).sum(axis=1)
            worse = new < old - 1e-12 * np.maximum(1.0, np.abs(old))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        theta[todo] += scale[:, None] * step
        eta[todo], ll[todo] = trial, new
        finished = np.abs(scale[:, None] * step).max(axis=1) < tol
        done[todo[finished]] = True
        todo = todo[~finished]
        if todo.size == 0:
            break
    return (theta[0] if single else theta), (done[0] if single else done)


def test_style_counts_by_hand():
    text = ("# Title\n"                      # a header
            "##no space\n"                   # not a header: '#' needs whitespace after it
            "Some **bold** and __bold__ and **not\nbold**.\n"   # 2 bold: a span cannot cross a line
            "- one\n"                        # list items: '-', '  *', '+', '12.'
            "  * two\n"
            "+ three\n"
            "12. four\n"
            "-not a list\n"
            "```\n# in code\n- in code\n**in code**\n```\n"   # removed before counting
            "####### seven hashes\n")       # not a header (1 to 6)
    assert style_counts(text) == (len(text), 1, 4, 2)
    assert style_counts("") == (0, 0, 0, 0)


def test_features_by_hand():
    # A: 99 chars, 1 header, 4 lists, 0 bold; B: 49 chars, 0 headers, 1 list, 1 bold
    a, b = np.array([[99, 1, 4, 0]]), np.array([[49, 0, 1, 1]])
    length, headers, lists, bold = style_features(a, b)[0]
    assert length == pytest.approx(50 / 148)                          # (99 - 49) / (99 + 49)
    assert headers == pytest.approx(0.01 / 1.01)                      # d_A = 1/100, d_B = 0
    assert lists == pytest.approx((0.04 - 0.02) / (0.04 + 0.02 + 1))  # d_A = 4/100, d_B = 1/50
    assert bold == pytest.approx(-0.02 / 1.02)                        # d_A = 0, d_B = 1/50
    assert style_features(np.zeros((1, 4)), np.zeros((1, 4)))[0].tolist() == [0, 0, 0, 0]
    # standardised: mean 0, population sd 1; a constant column (sd 0) is dropped
    x = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    mean, sd, kept = standardise(x)
    assert mean.tolist() == [3.0, 2.0] and sd[0] == pytest.approx(math.sqrt(8 / 3)) and kept.tolist() == [True, False]


def _random_rows(seed, n_sys=5, rows=400, q=3):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_sys, rows)
    b = (a + rng.integers(1, n_sys, rows)) % n_sys                  # never the same system
    z = rng.normal(size=(rows, q))
    eta = 0.3 + np.linspace(-1, 1, n_sys)[a] - np.linspace(-1, 1, n_sys)[b] + z @ np.array([0.8, -0.5, 0.0][:q])
    u = rng.random(rows)
    y = np.where(u < 0.1, 0.5, (rng.random(rows) < 1 / (1 + np.exp(-eta))).astype(float))   # soft labels: ties
    return a, b, y, z, n_sys


def _nll(params, a, b, y, z, n):
    # -sum y log s(eta) + (1 - y) log(1 - s(eta)) with eta = slot + beta_A - beta_B + z gamma;
    # beta is free (n values): the likelihood does not see a common shift, which centring removes
    slot, beta, gamma = params[0], params[1:1 + n], params[1 + n:]
    eta = slot + beta[a] - beta[b] + z @ gamma
    return float(np.sum(y * np.logaddexp(0, -eta) + (1 - y) * np.logaddexp(0, eta)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fit_equals_scipy_minimize_on_the_same_likelihood(seed):
    a, b, y, z, n = _random_rows(seed)
    fit = fit_style(a, b, y, z, n)
    ml = minimize(_nll, np.zeros(1 + n + z.shape[1]), args=(a, b, y, z, n), method="BFGS",
                  options={"gtol": 1e-9})
    beta = ml.x[1:1 + n] - ml.x[1:1 + n].mean()
    assert fit["converged"] and fit["beta"].mean() == pytest.approx(0, abs=1e-12)
    assert fit["slot"] == pytest.approx(ml.x[0], abs=1e-5)
    assert fit["beta"] == pytest.approx(beta, abs=1e-5)
    assert fit["gamma"] == pytest.approx(ml.x[1 + n:], abs=1e-5)
    params = np.concatenate([[fit["slot"]], fit["beta"], fit["gamma"]])
    assert _nll(params, a, b, y, z, n) <= ml.fun + 1e-9


def test_batched_weighted_fits_equal_one_fit_each():
    # the bootstrap's batched Newton: member k with weights w_k equals a fit on the rows repeated w_k times
    a, b, y, z, n = _random_rows(3, rows=120)
    x = design(a, b, n, z)
    w = np.random.default_rng(0).integers(0, 3, size=(4, a.size)).astype(float)
    batch, ok = newton(x, y, w)
    assert ok.all()
    for k in range(4):
        rows = np.repeat(np.arange(a.size), w[k].astype(int))
        one, _ = newton(x[rows], y[rows])
        assert batch[k] == pytest.approx(one, abs=1e-7)
        assert log_likelihood(batch[k], x, y, w[k]) == pytest.approx(log_likelihood(one, x[rows], y[rows]), abs=1e-7)


@pytest.mark.parametrize("seed", [4, 5])
def test_sparse_newton_equals_the_dense_reference(seed):
    # newton_pairs never forms the design matrix; the plain dense Newton on design() is its reference
    a, b, y, z, n = _random_rows(seed, n_sys=7, rows=300)
    w = np.random.default_rng(seed).integers(0, 3, size=(5, a.size)).astype(float)
    dense, ok_dense = newton(design(a, b, n, z), y, w)
    fast, ok_fast, moving = newton_pairs(a, b, n, z, y, w)
    assert ok_dense.all() and ok_fast.all()
    assert fast == pytest.approx(dense, abs=1e-8) and not moving.any()
    one, _, _ = newton_pairs(a, b, n, z[:, :0], y)           # no features, one unweighted fit
    assert one == pytest.approx(newton(design(a, b, n, z[:, :0]), y)[0], abs=1e-8)


def _calls_frame(rows):
    """(prompt, a system, b system, value, a counts, b counts) -> the pure function's calls frame."""
    out = []
    for p, sa, sb, v, ca, cb in rows:
        out.append({"judge": "j", "format": "f", "prompt_id": p, "a_id": sa, "b_id": sb, "value": float(v),
                    **{f"a_{c}": x for c, x in zip(COUNTS, ca)}, **{f"b_{c}": x for c, x in zip(COUNTS, cb)}})
    return pl.DataFrame(out)


def test_two_systems_and_a_constant_style_by_hand():
    # x beats y 3 times out of 4 in both orders, equal lengths and no markdown: every feature has
    # sd 0 and is dropped (null); P(x in A wins) = s(slot + d) = 3/4 and P(y in A wins) =
    # s(slot - d) = 1/4 -> slot = 0, d = beta_x - beta_y = log 3, centred: +-log(3)/2
    c = (100, 0, 0, 0)
    rows = [(f"p{i}", "x", "y", 1 if i < 3 else -1, c, c) for i in range(4)] + \
           [(f"p{i}", "y", "x", -1 if i < 3 else 1, c, c) for i in range(4)]
    out = style_rank_calls(_calls_frame(rows), n_boot=400)
    coef = {r["name"]: r for r in out.filter(pl.col("part") == "coefficient").to_dicts()}
    assert [coef[f]["value"] for f in FEATURES] == [None] * 4
    assert coef["slot"]["value"] == pytest.approx(0, abs=1e-9)
    sys_rows = {r["name"]: r for r in out.filter(pl.col("part") == "system").to_dicts()}
    assert sys_rows["x"]["value"] == pytest.approx(math.log(3) / 2, abs=1e-9)
    assert sys_rows["x"]["value_raw"] == pytest.approx(math.log(3) / 2, abs=1e-9)  # no style: the same model
    assert (sys_rows["x"]["rank"], sys_rows["y"]["rank"]) == (1, 2) and sys_rows["x"]["n"] == 8
    # a resample of the 4 prompts that draws only p0..p2 (x always wins) or only p3 (x always loses)
    # has no finite fit: P = (3/4)^4 = 0.32 that x's strength is +inf, far above 2.5%, so the upper end
    # is infinite; P = (1/4)^4 = 0.004 for -inf, below 2.5%: the lower end is finite
    assert sys_rows["x"]["boot_unconverged"] > 400 * 0.2
    assert sys_rows["x"]["hi"] == math.inf and -math.inf < sys_rows["x"]["lo"] < sys_rows["x"]["value"]


SYSTEMS = ["s0", "s1", "s2", "s3", "s4"]            # true order: s4 best ... s0 worst (reference = index)
BASE_CHARS = [4000, 1200, 400, 150, 50]           # the worse a system, the longer it writes


def _length_pool(tmp_path, n_prompts=40, seed=5):
    rng = random.Random(seed)
    rows = []
    for p in range(n_prompts):
        for k, s in enumerate(SYSTEMS):
            chars = int(BASE_CHARS[k] * rng.uniform(0.4, 1.6))   # lengths vary within a system too
            rows.append({"prompt_id": f"q{p}", "prompt": f"question {p}", "candidate_id": s,
                         "response": ("lorem ipsum " * 700)[:chars], "reference": float(k)})
    return write_jsonl(tmp_path / "pool.jsonl", rows)


def _human_labels(tmp_path, n_prompts=40, seed=11):
    # humans without a length preference: P(a better) = s(quality_a - quality_b), no ties
    rng = random.Random(seed)
    rows = []
    for p in range(n_prompts):
        for i in range(5):
            for j in range(i + 1, 5):
                a, b = (i, j) if rng.random() < 0.5 else (j, i)
                win = rng.random() < 1 / (1 + math.exp(-(a - b)))
                rows.append({"prompt_id": f"q{p}", "a_id": SYSTEMS[a], "b_id": SYSTEMS[b], "label": "A" if win else "B"})
    return write_jsonl(tmp_path / "labels.jsonl", rows)


@pytest.fixture
def length_db(db, tmp_path):
    import_pool(db, _length_pool(tmp_path), "lp")
    for name, bias in (("longfan", 3), ("fair", 0)):
        score(ScoreRequest(pool="lp", judge=f"fake:{name}?noise=0.5&slot_bias=0&length_bias={bias}",
                           formats=["tournament"], schedule="both", progress=False))
    import_labels(db, _human_labels(tmp_path), "lp")
    return db


def test_length_bias_is_recovered_and_the_controlled_ranking_is_the_true_order(length_db):
    out = style_rank(length_db, "lp", n_boot=1000, seed=0)
    true_order = SYSTEMS[::-1]
    for judge in ("longfan", "fair"):
        cell = out.filter(pl.col("judge") == judge)
        coef = {r["name"]: r for r in cell.filter(pl.col("part") == "coefficient").to_dicts()}
        systems = cell.filter(pl.col("part") == "system")
        # 40 prompts x 10 pairs x 2 orders, every one between two different systems
        assert coef["length"]["n"] == 800
        # plain prose: no headers, lists or bold anywhere -> those features have sd 0: null
        assert [coef[f]["value"] for f in ("headers", "lists", "bold")] == [None] * 3
        assert systems.sort("rank")["name"].to_list() == true_order
        raw_order = systems.sort("rank_raw")["name"].to_list()
        if judge == "longfan":
            # the judge's margin has +3 x the length feature: the interval of its coefficient excludes 0
            assert coef["length"]["lo"] > 0.5 and coef["length"]["value"] > 1
            assert raw_order != true_order
        else:
            assert coef["length"]["lo"] < 0 < coef["length"]["hi"] and raw_order == true_order
        # the humans have no length preference; the same pairs and prompt resamples give the excess
        human = {r["name"]: r for r in cell.filter(pl.col("part") == "human").to_dicts()}
        excess = {r["name"]: r for r in cell.filter(pl.col("part") == "excess").to_dicts()}
        assert human["length"]["n"] == 400 and human["length"]["lo"] < 0 < human["length"]["hi"]
        assert excess["length"]["value"] == pytest.approx(coef["length"]["value"] - human["length"]["value"], abs=1e-12)
        assert (excess["length"]["lo"] > 0) == (judge == "longfan")
    # controlled for length, the length-loving judge places each system inside the interval that the
    # fair judge (the same noise, no length term) gives it
    fair = out.filter((pl.col("judge") == "fair") & (pl.col("part") == "system")).sort("name")
    fan = out.filter((pl.col("judge") == "longfan") & (pl.col("part") == "system")).sort("name")
    assert ((fan["value"] >= fair["lo"]) & (fan["value"] <= fair["hi"])).all()
    # one cell alone (the Rankings page fits the chosen cell only) has the numbers it has among all
    alone = style_rank(length_db, "lp", n_boot=1000, seed=0, cell=("fair", "tournament", "greedy"))
    assert alone.equals(out.filter(pl.col("judge") == "fair"))


def test_rank_style_json_document(length_db):
    result = CliRunner().invoke(cli, ["rank", "--pool", "lp", "--style", "--n-boot", "200", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    cells = {c["judge"]: c for c in doc["cells"]}
    assert set(cells) == {"longfan", "fair"}
    cell = cells["longfan"]
    assert set(cell) >= {"judge", "format", "decoding", "n_comparisons", "slot", "coefficients", "items", "human"}
    assert cell["format"] == "tournament" and cell["decoding"] == "greedy" and cell["n_comparisons"] == 800
    assert set(cell["coefficients"]) == set(FEATURES) and cell["coefficients"]["bold"] is None
    assert set(cell["coefficients"]["length"]) == {"value", "lo", "hi"}
    assert set(cell["items"][0]) == {"id", "strength_raw", "strength", "lo", "hi", "rank_raw", "rank"}
    assert [i["id"] for i in sorted(cell["items"], key=lambda i: i["rank"])] == SYSTEMS[::-1]
    assert cell["human"]["n"] == 400 and set(cell["human"]["excess"]) == set(FEATURES)
    assert cell["human"]["excess"]["headers"] is None
    # the plain rank document is unchanged by the option's existence
    plain = json.loads(CliRunner().invoke(cli, ["rank", "--pool", "lp", "--n-boot", "0", "--json"]).output)
    assert "single_order" in plain["cells"][0] and "coefficients" not in plain["cells"][0]


def test_rank_style_refuses_by_prompt_and_says_why(length_db):
    result = CliRunner().invoke(cli, ["rank", "--pool", "lp", "--style", "--by", "prompt"])
    assert result.exit_code != 0 and "--style" in result.output and "candidate_id" in result.output


def test_no_labels_gives_human_null_and_the_console_script_runs(db, tmp_path):
    import_pool(db, _length_pool(tmp_path, n_prompts=6), "small")
    score(ScoreRequest(pool="small", judge="fake:j?noise=0.3&length_bias=1", formats=["tournament"],
                       schedule="both", progress=False))
    out = subprocess.run([EXE, "rank", "--pool", "small", "--style", "--n-boot", "50", "--json", "--db", str(db)],
                         capture_output=True, text=True, check=True)
    cell = json.loads(out.stdout)["cells"][0]
    assert cell["human"] is None and cell["n_comparisons"] == 6 * 20


def test_rankings_page_shows_style_control(length_db, monkeypatch):
    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("JUDGEAUDIT_DB", str(length_db))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app" / "main.py"), default_timeout=300).run()
    at.sidebar.selectbox[0].select("lp").run()
    at.switch_page("views/rankings/page.py").run()
    cell = next(s for s in at.selectbox if s.label == "Judge / format / decoding")
    cell.select("longfan / tournament / greedy").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Style control" in [s.value for s in at.subheader]
    words = " ".join(m.value for m in at.markdown)
    assert "Length coefficient of this judge: **+" in words and "above** the humans'" in words
    assert "Left out, as they never vary in this cell's comparisons: headers, lists, bold." in words
    systems = next(d.value for d in at.dataframe if "moved_up" in d.value.columns)
    assert systems["system"].tolist() == SYSTEMS[::-1]                      # the controlled order
    assert systems["rank_raw"].tolist() != [1, 2, 3, 4, 5] and (systems["moved_up"] != 0).any()


def test_separation_gives_no_numbers_rather_than_huge_ones():
    # x wins all 8 comparisons, in both orders: the likelihood grows without bound as beta_x - beta_y
    # goes to infinity, so there is no finite maximum; Newton's steps never settle
    rows = [(f"p{i}", "x", "y", 1, (100 + 10 * i, 0, 0, 0), (100, 0, 0, 0)) for i in range(4)] + \
           [(f"p{i}", "y", "x", -1, (100, 0, 0, 0), (100 + 10 * i, 0, 0, 0)) for i in range(4)]
    out = style_rank_calls(_calls_frame(rows), n_boot=20)
    assert not out["converged"].any()
    assert out["value"].null_count() == out.height and out["rank"].null_count() == out.height
    assert out.filter(pl.col("part") == "system")["value_raw"].null_count() == 2   # the plain fit: no finite maximum either


def test_style_sentences_name_the_dropped_features_and_a_missing_fit():
    from app.views.rankings.style_charts import style_sentences
    c = (100, 0, 0, 0)
    separated = [(f"p{i}", "x", "y", 1, (100 + i, 0, 0, 0), c) for i in range(3)]
    words = style_sentences(style_rank_calls(_calls_frame(separated), n_boot=0))
    assert words[0].startswith("No finite fit for this judge: with 3 comparisons") and len(words) == 1
    # x wins 2 of 3 prompts, each prompt asked in both orders; x's length varies
    mixed = [(f"p{i}", "x", "y", 1 if i % 3 else -1, (100 + 7 * i, 0, 0, 0), c) for i in range(9)] + \
            [(f"p{i}", "y", "x", -1 if i % 3 else 1, c, (100 + 7 * i, 0, 0, 0)) for i in range(9)]
    words = style_sentences(style_rank_calls(_calls_frame(mixed), n_boot=0))
    assert words[0].startswith("Length coefficient of this judge:") and "No human labels" in words[1]
    assert words[-1] == "Left out, as they never vary in this cell's comparisons: headers, lists, bold."


@pytest.mark.parametrize("weight", [1e5, 1e7])
def test_an_anchor_always_in_slot_b_with_millions_of_calls_still_fits(weight):
    """Found at 10M candidates: an anchored cell's grouped rows stand for millions of calls, RIDGE (1e-10)
    rounds away beside counts that size, and the slot effect and the anchor's strength (always in slot B)
    make the Hessian singular; np.linalg.solve raised. The step is then least squares. What the calls do
    tell apart is fitted: with no style features, the chance that system s beats the anchor is the share of
    its calls won, so slot + beta_s - beta_anchor = logit(share) for each s (worked below)."""
    a = np.array([0, 0, 0, 1, 1, 1, 2, 2])       # systems 0-2 against the anchor, system 3, always in slot B
    b = np.full(8, 3)
    y = np.array([1, 1, 0, 1, 0, 0, 1, 0], float)   # won 2/3, 1/3 and 1/2
    theta, _, _ = newton_pairs(a, b, 4, np.zeros((8, 1)), y, np.full(8, weight), None, tol=1e-10, max_iter=200)
    beta = np.concatenate([[0.0], theta[1:4]])
    eta = theta[0] + beta[[0, 1, 2]] - beta[3]
    np.testing.assert_allclose(eta, [math.log(2), math.log(1 / 2), 0.0], atol=1e-6)


@pytest.mark.parametrize("weight", [1.0, 1e7])
def test_an_anchor_always_in_slot_b_holds_the_slot_at_zero(weight):
    """held_out holds the slot where an anchor is always in slot B; the fit then has one maximum, the
    same whatever the weights: slot 0 and beta_s - beta_anchor = logit(share of s's calls won), ties half
    (worked below), and the strengths without style the same (no feature here)."""
    from audit._style_fit import held_out
    a = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2])          # systems 0-2 against the anchor, system 3
    b = np.full(9, 3)
    y = np.array([1, 1, 0.5, 0, 1, 0, 0, 1, 0.5])      # won 2.5/4, 1/3 and 1.5/2
    z = np.zeros((9, 0))
    held = held_out(a, b, z, 4, np.full(9, weight))
    assert held.tolist() == [True, False, False, False]
    fit = fit_style(a, b, y, z, 4, w=np.full(9, weight), held=held)
    assert fit["converged"] and fit["slot"] == 0.0
    beta = fit["beta"]
    np.testing.assert_allclose(beta[:3] - beta[3], [math.log(2.5 / 1.5), math.log(1 / 2), math.log(1.5 / 0.5)],
                               atol=1e-9)
    assert beta.sum() == pytest.approx(0, abs=1e-12)


def test_rankings_page_says_which_parameter_an_anchored_cell_holds(length_db, monkeypatch):
    """Anchored verdicts scored in one order put the anchor in slot B every time: the fit converges with
    the slot held at 0, and the page says so (the fit's `why`) rather than showing a slot effect."""
    from streamlit.testing.v1 import AppTest
    score(ScoreRequest(pool="lp", judge="fake:anch?noise=0.5&slot_bias=0", formats=["anchored"], progress=False,
                       db=length_db))
    cell = style_rank(length_db, "lp", n_boot=0, seed=0).filter(pl.col("judge") == "anch")
    slot = cell.filter((pl.col("part") == "coefficient") & (pl.col("name") == "slot")).row(0, named=True)
    assert slot["converged"] and slot["value"] is None and "always in slot B" in slot["why"]
    monkeypatch.setenv("JUDGEAUDIT_DB", str(length_db))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app" / "main.py"), default_timeout=300).run()
    at.sidebar.selectbox[0].select("lp").run()
    at.switch_page("views/rankings/page.py").run()
    box = next(s for s in at.selectbox if s.label == "Judge / format / decoding")
    box.select(next(o for o in box.options if o.startswith("anch / anchored"))).run()
    assert not at.exception, [e.value for e in at.exception]
    assert slot["why"] in [i.value for i in at.info] and not at.warning
