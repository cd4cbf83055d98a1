"""Bradley-Terry rankings (`judgeaudit rank`): the MM fit against hand arithmetic and an independent
maximum-likelihood fit with scipy.optimize, a simulated slot-biased judge, the bootstrap's width."""

import json
import math
import subprocess
import warnings

import numpy as np
import polars as pl
import pytest
from scipy.optimize import minimize
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from audit import rank, rank_calls
from audit import _rank
from audit._bias import cell_rng
from audit._rank import ORDERS, RANK_COLUMNS, _nan_percentiles, bt_mm, fit_cell, mle_exists, win_matrix
from tests.fixtures import build_db
from tests.conftest import EXE


def _calls(games, judge="sim", fmt="f"):
    """games: (a_id, b_id, value, swapped, prompt_id) tuples -> a calls frame."""
    return pl.DataFrame([{"judge": judge, "format": fmt, "a_id": a, "b_id": b, "value": float(v),
                          "swapped": bool(s), "prompt_id": p} for a, b, v, s, p in games])


def test_two_items_by_hand():
    # x beats y 3 times and loses once: p_x / p_y = 3, so strengths are +-log(3)/2 around 0.
    wins = np.array([[0, 3], [1, 0]], float)
    logp, _ = bt_mm(wins)
    assert logp == pytest.approx([math.log(3) / 2, -math.log(3) / 2], abs=1e-9)
    # two wins and two ties: W_x = 2 + 2 * 0.5 = 3, W_y = 1 -> the same strengths
    w = win_matrix(np.array([0, 0, 0, 1]), np.array([1, 1, 1, 0]), np.array([1, 0, 0, -1]), 2)
    assert w.tolist() == [[0.0, 3.0], [1.0, 0.0]]
    assert bt_mm(w)[0] == pytest.approx(logp, abs=1e-9)


def _neg_log_lik(theta, wins):
    # -sum_ij w_ij log(p_i / (p_i + p_j)) with p = exp(theta): the likelihood MM maximises
    d = theta[:, None] - theta[None, :]
    return float((wins * np.logaddexp(0, -d)).sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mm_equals_an_independent_maximum_likelihood_fit(seed):
    rng = np.random.default_rng(seed)
    n = 6
    wins = rng.integers(1, 12, size=(n, n)).astype(float) + 0.5 * rng.integers(0, 3, size=(n, n))
    np.fill_diagonal(wins, 0)
    assert mle_exists(wins)
    logp, iterations = bt_mm(wins)
    ml = minimize(_neg_log_lik, np.zeros(n), args=(wins,), method="BFGS", options={"gtol": 1e-10})
    theta = ml.x - ml.x.mean()
    assert iterations > 1 and logp.mean() == pytest.approx(0, abs=1e-12)
    assert logp == pytest.approx(theta, abs=1e-5)
    assert _neg_log_lik(logp, wins) <= _neg_log_lik(theta, wins) + 1e-9


def test_mle_existence_and_the_prior():
    # x never loses: no finite MLE, so each met pair gets half a virtual tie (a quarter win each way)
    wins = np.array([[0, 4], [0, 0]], float)
    assert not mle_exists(wins)
    assert mle_exists(np.array([[0, 4], [1, 0]], float))
    # a cycle x > y > z > x is strongly connected; a chain x > y > z is not
    assert mle_exists(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], float))
    assert not mle_exists(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], float))
    fit = fit_cell(np.zeros(4, np.int64), np.zeros(4, np.int64), np.ones(4, np.int64), np.ones(4), 2, 0,
                   np.random.default_rng(0))
    assert fit["prior"] == 0.5
    # W_x = 4.25, W_y = 0.25 -> p_x / p_y = 17 -> +-log(17)/2
    assert fit["strength"] == pytest.approx([math.log(17) / 2, -math.log(17) / 2], abs=1e-9)


def _simulated_judge(seed=7, step=0.4, slot_bias=1.5, items=8, repeats=200):
    """A judge whose P(slot A wins) = sigmoid(skill_A - skill_B + slot_bias), skill = step * index;
    every pair judged `repeats` times in each order (forward: the earlier item in slot A)."""
    rng = np.random.default_rng(seed)
    games = []
    for x in range(items):
        for y in range(x + 1, items):
            for swapped, (a, b) in ((False, (x, y)), (True, (y, x))):
                p = 1 / (1 + math.exp(-(step * a - step * b + slot_bias)))
                for r, won in enumerate(rng.random(repeats) < p):
                    games.append((f"s{a}", f"s{b}", 1 if won else -1, swapped, f"q{r % 40}"))
    return _calls(games)


def test_slot_bias_scrambles_the_single_order_ranking_and_both_orders_fix_it():
    out = rank_calls(_simulated_judge(), n_boot=200)
    truth = [f"s{k}" for k in range(7, -1, -1)]          # s7 is the strongest
    both = out.filter(pl.col("order") == "both").sort("rank")["id"].to_list()
    single = out.filter(pl.col("order") == "single").sort("rank")["id"].to_list()
    assert both == truth
    assert single != truth
    # the forward slot of the weaker item (always slot A) inflates it: s0 is not ranked last
    assert single[-1] != "s0"
    strengths = out.filter(pl.col("order") == "both")["strength"].to_numpy()
    assert strengths.mean() == pytest.approx(0, abs=1e-12)


def test_bootstrap_interval_has_the_delta_method_width():
    # 400 prompts with one game each, x wins 300: strength_x = logit(0.75) / 2. Its standard error
    # by the delta method is sqrt(1 / (n p (1 - p))) / 2 = sqrt(1/75) / 2 = 0.05774, so the 95%
    # interval is about 2 * 1.96 * 0.05774 = 0.2263 wide.
    games = [("x", "y", 1 if k < 300 else -1, False, f"p{k}") for k in range(400)]
    out = rank_calls(_calls(games), n_boot=4000, seed=3).filter(pl.col("order") == "both").sort("id")
    x = out.row(0, named=True)
    assert x["id"] == "x" and x["strength"] == pytest.approx(math.log(3) / 2, abs=1e-9)
    assert x["hi"] - x["lo"] == pytest.approx(2 * 1.96 * math.sqrt(1 / 75) / 2, rel=0.1)
    assert x["lo"] < x["strength"] < x["hi"]
    # seeded: the same interval again
    again = rank_calls(_calls(games), n_boot=4000, seed=3).filter(pl.col("order") == "both").sort("id")
    assert again.row(0, named=True)["lo"] == x["lo"]


def test_rank_by_prompt_ranks_within_each_prompt():
    games = [("a", "b", 1, False, "p1"), ("b", "a", -1, True, "p1"), ("a", "c", 1, False, "p1"),
             ("c", "a", 1, True, "p1"), ("b", "c", 0, False, "p1"),
             ("a", "b", -1, False, "p2"), ("b", "a", 1, True, "p2")]
    out = rank_calls(_calls(games), by="prompt", n_boot=50)
    both = out.filter(pl.col("order") == "both")
    assert sorted(both.filter(pl.col("prompt_id") == "p1")["rank"].to_list()) == [1, 2, 3]
    p2 = both.filter(pl.col("prompt_id") == "p2").sort("rank")
    assert p2["id"].to_list() == ["b", "a"] and p2["prior"].to_list() == [0.5, 0.5]   # b never lost
    for (_, _), g in both.group_by("prompt_id", "order"):
        assert g["strength"].mean() == pytest.approx(0, abs=1e-12)


def test_rank_on_a_database_and_from_the_command_line(db, tmp_path):
    build_db(db, tmp_path, n_prompts=30)
    frame = rank(db, "synth", n_boot=100)
    assert set(frame["order"]) == {"both", "single"} and set(frame["judge"]) == {"alpha", "beta"}
    proc = subprocess.run([EXE, "rank", "--pool", "synth", "--json", "--n-boot", "100"],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["by"] == "candidate_id" and len(doc["cells"]) == 2
    for cell in doc["cells"]:
        assert cell["order"] == "both" and cell["single_order"]["n_calls"] < cell["n_calls"]
        ranks = sorted(item["rank"] for item in cell["items"])
        assert ranks == list(range(1, len(ranks) + 1))
        for item in cell["items"]:
            assert {"id", "strength", "lo", "hi", "rank"} <= set(item)
            assert item["lo"] <= item["strength"] <= item["hi"]
        assert sum(item["strength"] for item in cell["items"]) == pytest.approx(0, abs=1e-9)
    proc = subprocess.run([EXE, "rank", "--pool", "synth", "--by", "prompt", "--json", "--n-boot", "20"],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    cell = json.loads(proc.stdout)["cells"][0]
    assert all("prompt_id" in item for item in cell["items"])
    assert cell["n_calls"] == frame.filter((pl.col("judge") == cell["judge"]) & (pl.col("order") == "both"))["n_calls"][0]
    proc = subprocess.run([EXE, "rank", "--pool", "nope"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "no pool named 'nope'" in proc.stderr


def test_rankings_page(db, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    build_db(db, tmp_path, n_prompts=20)
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.switch_page("views/rankings/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["calls (single order)"]) < int(metrics["calls (both orders)"])
    at.radio[0].set_value("prompt").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.label.startswith("Prompt (") for s in at.selectbox), [s.label for s in at.selectbox]


def test_within_prompt_batch_equals_one_fit_per_prompt():
    """The batched per-prompt path against fit_cell on each prompt alone (the obvious reference),
    including a prompt whose comparison graph falls apart (its smaller group is left out)."""
    rng = np.random.default_rng(11)
    games = []
    for p in range(25):
        k = int(rng.integers(2, 6))
        for _ in range(int(rng.integers(2, 12))):
            a, b = rng.choice(k, size=2, replace=False)
            games.append((f"c{a}", f"c{b}", int(rng.integers(-1, 2)), bool(rng.random() < 0.5), f"p{p:02d}"))
    games += [("x", "y", 1, False, "split"), ("y", "x", 1, False, "split"), ("x", "z", 0, False, "split"),
              ("u", "v", 1, False, "split")]
    calls = _calls(games)
    out = rank_calls(calls, by="prompt", n_boot=0).filter(pl.col("order") == "both")
    for (pid,), g in calls.group_by("prompt_id"):
        ids = sorted(set(g["a_id"]) | set(g["b_id"]))
        code = {c: k for k, c in enumerate(ids)}
        v = g["value"].to_numpy()
        fit = fit_cell(np.zeros(g.height, np.int64), np.array([code[x] for x in g["a_id"]]),
                       np.array([code[x] for x in g["b_id"]]), np.where(v > 0, 1.0, np.where(v < 0, 0.0, 0.5)),
                       len(ids), 0, np.random.default_rng(0))
        mine = out.filter(pl.col("prompt_id") == pid).sort("id")
        assert mine["id"].to_list() == ids
        assert mine["strength"].fill_null(np.nan).to_numpy() == pytest.approx(fit["strength"], abs=1e-9, nan_ok=True)
        assert set(mine["prior"]) == {fit["prior"]}
    split = out.filter(pl.col("prompt_id") == "split").sort("id")
    assert split["strength"].is_null().to_list() == [True, True, False, False, False]   # u, v left out
    # x: 1 win + 1 tie against y (1 win) and z (1 tie): x ranks first
    assert split.filter(pl.col("id") == "x")["rank"].to_list() == [1]


def test_scoring_another_judge_leaves_a_cells_interval_unchanged():
    # the bootstrap of a cell and order is seeded by (seed, judge, format, decoding, order), not by
    # its row: adding a judge that sorts before 'sim' changes none of sim's intervals
    calls = _simulated_judge(repeats=20)
    alone = rank_calls(calls, n_boot=200, seed=2).sort("order", "id")
    other = calls.with_columns(pl.lit("aaa").alias("judge"))
    both = rank_calls(pl.concat([other, calls]), n_boot=200, seed=2)
    assert both["judge"].unique().sort().to_list() == ["aaa", "sim"]
    sim = both.filter(pl.col("judge") == "sim").sort("order", "id")
    assert sim.select("order", "id", "lo", "hi").equals(alone.select("order", "id", "lo", "hi"))
    # the same calls under another judge name get another draw (the check above can fail)
    aaa = both.filter(pl.col("judge") == "aaa").sort("order", "id")
    assert not aaa["lo"].equals(alone["lo"])


def test_mle_exists_and_bt_mm_on_a_batch_equal_each_member_alone():
    # member 0: x beats y 3 times, loses once, z has no games -> +-log(3)/2 and NaN for z
    # member 1: the cycle x > y > z > x once each -> all equal, 0
    # member 2: the chain x > y > z (z never wins) -> no finite MLE
    # member 3: x has no games, y and z beat each other once -> the MLE exists
    # member 4: the chain z > y > x (x never wins) -> no finite MLE
    m0 = np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]], float)
    m1 = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], float)
    m2 = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], float)
    m3 = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0]], float)
    m4 = m2.T
    # member 5: the cycle x > z > y > x; member 6: x and z beat each other, y beat both (never lost)
    m5 = m1.T
    m6 = np.array([[0, 0, 1], [1, 0, 1], [1, 0, 0]], float)
    exists = mle_exists(np.stack([m0, m1, m2, m3, m4, m5, m6]))
    assert isinstance(exists, np.ndarray) and exists.tolist() == [True, True, False, True, False, True, False]
    assert mle_exists(m0) is True and mle_exists(m2) is False       # one matrix: a plain bool
    assert mle_exists(m4) is False
    # and three items that all beat each other in uneven counts (the slowest member): scipy's MLE
    uneven = np.array([[0, 1, 3], [2, 0, 1], [1, 1, 0]], float)
    ml = minimize(_neg_log_lik, np.zeros(3), args=(uneven,), method="BFGS", options={"gtol": 1e-10})
    logp, _ = bt_mm(np.stack([m0, m1, uneven]))
    assert logp.shape == (3, 3)
    assert logp[0] == pytest.approx([math.log(3) / 2, -math.log(3) / 2, np.nan], abs=1e-9, nan_ok=True)
    assert logp[1] == pytest.approx([0, 0, 0], abs=1e-9)
    assert logp[2] == pytest.approx(ml.x - ml.x.mean(), abs=1e-6)
    # alone, with its last item without games, and without a warning about it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alone, _ = bt_mm(m0)
    assert alone == pytest.approx(logp[0], abs=1e-12, nan_ok=True)


def test_counts_in_a_small_integer_type_do_not_overflow():
    # uint8 counts: x beats y 200 times and loses 100 (300 games, more than a uint8 holds), z
    # splits one game each way with both: the same fit as the counts as floats, by scipy
    counts = np.array([[0, 200, 1], [100, 0, 1], [1, 1, 0]])
    logp, _ = bt_mm(counts.astype(np.uint8))
    ml = minimize(_neg_log_lik, np.zeros(3), args=(counts.astype(float),), method="BFGS", options={"gtol": 1e-10})
    assert logp == pytest.approx(ml.x - ml.x.mean(), abs=1e-5)
    # 128 games each way between x and y (256 in all), y and z once each way, x beats z once:
    # every item reaches every other along wins (z -> y -> x), so the MLE exists
    assert mle_exists(np.array([[0, 128, 1], [128, 0, 1], [0, 1, 0]], np.uint8)) is True


def test_bt_mm_started_at_its_own_solution_stops_after_one_step():
    # from the fixed point, one MM step moves p by less than the tolerance: one iteration, not the
    # dozens it takes from p = 1
    rng = np.random.default_rng(4)
    wins = rng.integers(1, 12, size=(5, 5)).astype(float)
    np.fill_diagonal(wins, 0)
    logp, iterations = bt_mm(wins)
    again, one = bt_mm(wins, start=logp)
    assert iterations > 5 and one == 1
    assert again == pytest.approx(logp, abs=1e-9)


def test_nan_percentiles_equal_numpys_nanpercentile():
    # (P, B, n) = (2, 10, 5) with 10, 7, 3, 1 and 0 values in a slice (the rest NaN): linear
    # interpolation as numpy's default, NaN where a slice has no value
    rng = np.random.default_rng(8)
    draws = rng.normal(size=(2, 10, 5))
    for col, valid in enumerate((10, 7, 3, 1, 0)):
        for p in range(2):
            draws[p, rng.permutation(10)[valid:], col] = np.nan
    lo, hi = _nan_percentiles(draws)
    with pytest.warns(RuntimeWarning):                              # the all-NaN slices
        want_lo, want_hi = np.nanpercentile(draws, [2.5, 97.5], axis=1)
    assert lo.dtype == hi.dtype == np.float64 and lo.shape == (2, 5)
    assert lo == pytest.approx(want_lo, abs=1e-12, nan_ok=True)
    assert hi == pytest.approx(want_hi, abs=1e-12, nan_ok=True)
    assert np.isnan(lo[:, 4]).all() and (lo[:, :4] < hi[:, :4]).sum() == 6   # one value: lo == hi
    assert (lo[:, 3] == hi[:, 3]).all()


def _reference_fit(frame, ids, prior):
    """What both slow bootstrap references share, spelled out for the calls of `frame` over `ids`:
    a call's credit (1 a win of a, 0 a loss, 1/2 a tie) as a win matrix for any call weights, the
    largest connected group of the full matrix (ties: the group holding the first id), the prior
    the full fit used (half a game where its MLE does not exist) and its strengths.
    Returns (wins_of, keep, used, strength)."""
    a = np.array([ids.index(x) for x in frame["a_id"]])
    b = np.array([ids.index(x) for x in frame["b_id"]])
    v = frame["value"].to_numpy()
    credit = np.where(v > 0, 1.0, np.where(v < 0, 0.0, 0.5))

    def wins_of(weight):
        w = np.zeros((len(ids), len(ids)))
        np.add.at(w, (a, b), weight * credit)
        np.add.at(w, (b, a), weight * (1 - credit))
        return w

    full = wins_of(np.ones(frame.height))
    _, label = connected_components(csr_matrix(full + full.T > 0), directed=False)
    keep = label == np.argmax(np.bincount(label))
    sub = full[np.ix_(keep, keep)]
    used = (0.0 if mle_exists(sub) else 0.5) if prior is None else prior
    strength, _ = bt_mm(sub + used / 2 * (sub + sub.T > 0))
    return wins_of, keep, used, strength


def _bootstrap_within_prompts(calls, n_boot, seed, prior=None, order="both"):
    """The by-prompt bootstrap spelled out one prompt and one resample at a time: the cell's
    generator draws each prompt's resample weights over its calls in prompt order; a resample keeps
    the calls inside the prompt's largest connected group (ties: the group holding the first id),
    adds `prior` (or half a game where that resample's MLE does not exist) as ties on its met pairs,
    and is refitted from the prompt's fit to 1e-8. {(prompt_id, id): (lo, hi)}."""
    rng = cell_rng(seed, calls["judge"][0], calls["format"][0], "greedy", order)
    part = calls if order == "both" else calls.filter(~pl.col("swapped"))
    out = {}
    for pid in sorted(set(part["prompt_id"])):
        g = part.filter(pl.col("prompt_id") == pid)
        ids = sorted(set(g["a_id"]) | set(g["b_id"]))
        wins_of, keep, _, strength = _reference_fit(g, ids, prior)
        draws = []
        for weight in rng.multinomial(g.height, np.full(g.height, 1 / g.height), size=n_boot):
            w = wins_of(weight.astype(float))[np.ix_(keep, keep)]
            used = (0.0 if mle_exists(w) else 0.5) if prior is None else prior
            draws.append(bt_mm(w + used / 2 * (w + w.T > 0), tol=1e-8, start=strength)[0])
        lo, hi = np.full(len(ids), np.nan), np.full(len(ids), np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)         # an item without games in a resample
            lo[keep], hi[keep] = np.nanpercentile(np.array(draws), [2.5, 97.5], axis=0)
        out.update({(pid, c): (lo[k], hi[k]) for k, c in enumerate(ids)})
    return out


@pytest.mark.parametrize("prior", [None, 2.0])
def test_within_prompt_bootstrap_equals_one_resample_at_a_time(prior):
    # prompts of 2 to 5 candidates and 3 to 13 calls, ties, both orders; 's1' falls apart into
    # {x, y, z} and {u, v} (u, v left out), 's2' into two groups of two ({a, b} kept: it holds 'a')
    rng = np.random.default_rng(5)
    games = []
    for p in range(6):
        k = int(rng.integers(2, 6))
        for _ in range(int(rng.integers(3, 14))):
            x, y = rng.choice(k, size=2, replace=False)
            games.append((f"c{x}", f"c{y}", int(rng.integers(-1, 2)), bool(rng.random() < 0.4), f"p{p}"))
    games += [("x", "y", 1, False, "s1"), ("y", "x", 1, False, "s1"), ("x", "z", 0, False, "s1"),
              ("u", "v", 1, False, "s1"), ("v", "u", -1, False, "s1"),
              ("c", "d", 1, False, "s2"), ("a", "b", 1, False, "s2"), ("b", "a", 0, False, "s2"),
              ("d", "c", 1, True, "s2")]
    calls = _calls(games)
    out = rank_calls(calls, by="prompt", n_boot=30, seed=4, prior=prior)
    for order in ORDERS:
        want = _bootstrap_within_prompts(calls, 30, 4, prior, order)
        mine = out.filter(pl.col("order") == order)
        assert mine.height == len(want)
        for row in mine.iter_rows(named=True):
            lo, hi = want[(row["prompt_id"], row["id"])]
            got = [np.nan if row[c] is None else row[c] for c in ("lo", "hi")]
            assert got == pytest.approx([lo, hi], abs=1e-10, nan_ok=True), row
    s1 = out.filter((pl.col("order") == "both") & (pl.col("prompt_id") == "s1")).sort("id")
    assert s1["lo"].is_null().to_list() == [True, True, False, False, False]     # u, v
    s2 = out.filter((pl.col("order") == "both") & (pl.col("prompt_id") == "s2")).sort("id")
    assert s2["strength"].is_null().to_list() == [False, False, True, True]        # c, d


def test_within_prompt_bootstrap_in_several_batches():
    # 700,000 resamples of one pair (E = 1) fit 2,000,000 // 700,000 = 2 prompts a batch: p0 and p1,
    # then p2. Two items have a closed form: strength_x = log(W_x / W_y) / 2, with a quarter win
    # added each way when one side won nothing in the resample (no MLE); intervals by np.percentile.
    games = [("x", "y", 1, True, "p0"), ("y", "x", 1, True, "p0"), ("x", "y", 0, True, "p0"),
             ("x", "y", 1, True, "p1"), ("x", "y", -1, True, "p1"), ("y", "x", -1, True, "p1"),
             ("x", "y", 1, True, "p1"),
             ("x", "y", -1, True, "p2"), ("y", "x", 0, True, "p2"), ("x", "y", -1, True, "p2"),
             ("x", "y", 1, True, "p2"), ("y", "x", 1, True, "p2")]
    calls = _calls(games)                          # every call swapped: no single-order ranking
    n_boot = 700_000
    out = rank_calls(calls, by="prompt", n_boot=n_boot, seed=1)
    assert set(out["order"]) == {"both"}
    rng = cell_rng(1, "sim", "f", "greedy", "both")
    for pid in ("p0", "p1", "p2"):
        g = calls.filter(pl.col("prompt_id") == pid)
        x_share = np.array([0.5 if v == 0 else float((a == "x") == (v > 0)) for a, v in zip(g["a_id"], g["value"])])
        w = rng.multinomial(g.height, np.full(g.height, 1 / g.height), size=n_boot)
        won, lost = w @ x_share, w @ (1 - x_share)
        add = np.where((won > 0) & (lost > 0), 0.0, 0.25)
        lo, hi = np.percentile(np.log((won + add) / (lost + add)) / 2, [2.5, 97.5])
        x = out.filter((pl.col("prompt_id") == pid) & (pl.col("id") == "x")).row(0, named=True)
        assert [x["lo"], x["hi"]] == pytest.approx([lo, hi], abs=1e-9), pid
        assert lo < hi


def test_rank_by_prompt_games_wins_and_intervals_by_hand():
    # one prompt: a beats b twice, b beats a once -> games 3 each, wins 2 and 1, strengths +-log(2)/2
    calls = _calls([("a", "b", 1, False, "p"), ("a", "b", 2, False, "p"), ("b", "a", 1, True, "p")])
    out = rank_calls(calls, by="prompt", n_boot=0).filter(pl.col("order") == "both").sort("id")
    assert out["games"].to_list() == [3.0, 3.0] and out["wins"].to_list() == [2.0, 1.0]
    assert out["strength"].to_list() == pytest.approx([math.log(2) / 2, -math.log(2) / 2], abs=1e-9)
    # no resamples: no interval, still a float column
    assert out.schema["lo"] == out.schema["hi"] == pl.Float64 and out["lo"].null_count() == 2
    # one resample: both percentiles are that resample's strength
    for by in ("prompt", "candidate_id"):
        one = rank_calls(calls, by=by, n_boot=1).filter(pl.col("order") == "both")
        assert one["lo"].null_count() == 0 and one["lo"].to_list() == one["hi"].to_list(), by
    # rows by prompt (in prompt_id order), strongest first: in p the chain a > b > c, in q b beat a
    two = rank_calls(_calls([("a", "b", -1, False, "q"), ("a", "b", 1, False, "p"), ("b", "c", 1, False, "p")]),
                     by="prompt", n_boot=0).filter(pl.col("order") == "both")
    assert two.select("prompt_id", "id", "rank").rows() == [("p", "a", 1), ("p", "b", 2), ("p", "c", 3),
                                                           ("q", "b", 1), ("q", "a", 2)]


# (prompt, slot A, slot B, label); x is listed before y before z, so a call with the later-listed
# candidate in slot A is swapped. Shares of x against y:
#   q0 2-0, q1 1-1, q2 0-1, q3 0.5-1.5, q4 1-0, q5 1.5-0.5, q6 1-1, q7 1-0 -> x 8, y 5 (13 calls)
#   forward calls only (x in slot A): 1, 1, 0, 0.5, 1, 1, 0, 1 -> x 5.5, y 2.5
_POOL_VERDICTS = [("q0", "x", "y", "A+"), ("q0", "y", "x", "B+"), ("q1", "x", "y", "A+"), ("q1", "y", "x", "A+"),
                  ("q2", "x", "y", "B+"), ("q3", "x", "y", "TIE"), ("q3", "y", "x", "A++"),
                  ("q4", "x", "y", "A++"), ("q5", "x", "y", "A+"), ("q5", "y", "x", "TIE"),
                  ("q6", "x", "y", "B++"), ("q6", "y", "x", "B+"), ("q7", "x", "y", "A+")]
_VALUE = {"A++": 2, "A+": 1, "TIE": 0, "B+": -1, "B++": -2}
_LISTED = ("x", "y", "z")


def _import_pool(db, folder, pool, verdicts, candidates=("x", "y")):
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    from tests.fixtures import write_jsonl
    rows = [{"prompt_id": q, "prompt": f"Question {q}", "candidate_id": c, "response": f"{c} answers {q}"}
            for q in sorted({v[0] for v in verdicts}) for c in candidates]
    import_pool(db, write_jsonl(folder / f"{pool}-pool.jsonl", rows), pool)
    lines = [{"judge": "J", "format": "tournament", "prompt_id": q, "a_id": a, "b_id": b, "raw": label}
             for q, a, b, label in verdicts]
    import_verdicts(db, write_jsonl(folder / f"{pool}-verdicts.jsonl", lines), pool)


def test_rank_reads_its_pool_from_the_database_it_is_given(db, tmp_path):
    # a file other than $JUDGEAUDIT_DB, holding a second pool in which y wins everything
    path = tmp_path / "elsewhere.duckdb"
    _import_pool(path, tmp_path, "mine", _POOL_VERDICTS)
    _import_pool(path, tmp_path, "other", [("q0", "x", "y", "B++"), ("q0", "y", "x", "A++"), ("q1", "x", "y", "B+")])
    out = rank(path, "mine", n_boot=0)
    assert out["prompt_id"].null_count() == out.height and set(out["judge"]) == {"J"}
    both = out.filter(pl.col("order") == "both").sort("id")
    single = out.filter(pl.col("order") == "single").sort("id")
    # both orders: W_x = 8, W_y = 5 -> +-log(8/5)/2; forward only: 5.5 and 2.5 -> +-log(2.2)/2
    assert both["strength"].to_list() == pytest.approx([math.log(8 / 5) / 2, -math.log(8 / 5) / 2], abs=1e-9)
    assert single["strength"].to_list() == pytest.approx([math.log(2.2) / 2, -math.log(2.2) / 2], abs=1e-9)
    assert both["n_calls"].to_list() == [13, 13] and single["n_calls"].to_list() == [8, 8]
    assert both["wins"].to_list() == [8.0, 5.0] and both["prior"].to_list() == [0.0, 0.0]
    assert both["n_units"].to_list() == [8, 8] and single["n_units"].to_list() == [8, 8]   # prompts
    assert both["rank"].to_list() == [1, 2] and out.schema["rank"] == pl.Int64
    assert out.schema["prompt_id"] == pl.String
    assert set(out["format"]) == {"tournament"} and set(out["decoding"]) == {"greedy"}
    assert out["lo"].null_count() == out.height                     # n_boot=0: no interval
    # prior=2: one virtual win each way -> 9 vs 6 and 6.5 vs 3.5
    fixed = rank(path, "mine", n_boot=0, prior=2.0)
    assert set(fixed["prior"]) == {2.0}
    assert fixed.filter(pl.col("order") == "both").sort("id")["strength"][0] == pytest.approx(math.log(1.5) / 2)
    assert fixed.filter(pl.col("order") == "single").sort("id")["strength"][0] == pytest.approx(math.log(6.5 / 3.5) / 2)
    # by prompt: q0 (x 2-0, no MLE: a quarter win each way) -> x = log(2.25 / 0.25) / 2 = log(3)
    per = rank(path, "mine", by="prompt", n_boot=0).filter(pl.col("order") == "both")
    assert per.height == 16 and per["prompt_id"].null_count() == 0
    q0 = per.filter((pl.col("prompt_id") == "q0") & (pl.col("id") == "x")).row(0, named=True)
    assert q0["strength"] == pytest.approx(math.log(3)) and q0["prior"] == 0.5
    # the other pool: y won all three of its calls
    assert rank(path, "other", n_boot=0).filter(pl.col("order") == "both").sort("rank")["id"].to_list() == ["y", "x"]
    with pytest.raises(Exception, match="no pool named 'nope'"):
        rank(path, "nope")


def test_rank_defaults_and_seed_are_those_of_rank_calls_on_the_same_calls(db, tmp_path):
    # 12 prompts of three candidates, every pair once or in both orders: rank on the database is
    # rank_calls on the same calls written by hand, with the defaults (by candidate, 1000
    # resamples, seed 0) and a given seed passed through
    rng = np.random.default_rng(2)
    verdicts = []
    for q in range(12):
        for a, b in (("x", "y"), ("x", "z"), ("y", "z")):
            verdicts.append((f"q{q:02d}", a, b, str(rng.choice(list(_VALUE)))))
            if rng.random() < 0.5:
                verdicts.append((f"q{q:02d}", b, a, str(rng.choice(list(_VALUE)))))
    _import_pool(db, tmp_path, "mine", verdicts, candidates=_LISTED)
    calls = _calls([(a, b, _VALUE[label], _LISTED.index(a) > _LISTED.index(b), q) for q, a, b, label in verdicts],
                   judge="J", fmt="tournament")
    cols = ["order", "id", "strength", "lo", "hi", "rank"]
    default = rank(db, "mine").sort("order", "id")
    assert default.height == 6
    assert default.equals(rank_calls(calls).sort("order", "id"))      # rank_calls' own defaults
    assert default.select(cols).equals(rank_calls(calls, n_boot=1000, seed=0).sort("order", "id").select(cols))
    seeded = rank(db, "mine", n_boot=300, seed=5).sort("order", "id")
    assert seeded.select(cols).equals(rank_calls(calls, n_boot=300, seed=5).sort("order", "id").select(cols))
    # the check can fail: another seed or another number of resamples moves the intervals
    assert not default["lo"].equals(rank(db, "mine", seed=1).sort("order", "id")["lo"])
    assert not default["lo"].equals(rank(db, "mine", n_boot=1001).sort("order", "id")["lo"])


def test_strengths_equal_to_twelve_decimals_rank_by_id():
    # a, d, e and x each split their games evenly (a-x 6-6, d-x 11-11, d-e 1-1, e-x 10-10), so they
    # share one strength; y beat x 10-2, so p_y = 5 p_x: 4 s + (s + log 5) = 0 -> s = -log(5)/5 and
    # y = 4 log(5)/5. The MM stops at a relative change of 1e-10, so the four come out a few 1e-12
    # apart; d and e agree to 12 decimals (4e-13 apart, e above d) and so rank by id: d before e.
    games = []
    for a, b, k in (("a", "x", 6), ("d", "x", 11), ("d", "e", 1), ("e", "x", 10)):
        games += [(a, b, 1, False, "p")] * k + [(a, b, -1, False, "p")] * k
    games += [("x", "y", 1, False, "p")] * 2 + [("x", "y", -1, False, "p")] * 10
    out = rank_calls(_calls(games), by="prompt", n_boot=0).filter(pl.col("order") == "both").sort("id")
    s = -math.log(5) / 5
    assert out["strength"].to_list() == pytest.approx([s, s, s, s, -4 * s], abs=1e-9)
    d, e = out["strength"][1], out["strength"][2]
    assert round(d, 12) == round(e, 12) and e > d
    assert out.filter(pl.col("id") == "y")["rank"][0] == 1
    assert out.filter(pl.col("id") == "d")["rank"][0] < out.filter(pl.col("id") == "e")["rank"][0]
    # the same games in one ranking of systems
    systems = rank_calls(_calls(games), n_boot=0).filter(pl.col("order") == "both").sort("id")
    assert systems["strength"].to_list() == pytest.approx(out["strength"].to_list(), abs=1e-12)
    assert systems.filter(pl.col("id") == "d")["rank"][0] < systems.filter(pl.col("id") == "e")["rank"][0]


def _bootstrap_over_prompts(calls, n_boot, seed, prior=None, order="both"):
    """fit_cell's bootstrap spelled out one resample at a time, for the systems of one cell: the
    cell's generator draws n_boot resamples of the prompts (multinomial counts of the prompts' kinds);
    a resample counts each call inside the largest connected group (ties: the group holding the first id) as often
    as its prompt was drawn, takes the fit's prior when the fit needed one (or was given one) and
    else half a game only where that resample's MLE does not exist, and is refitted from the fit to
    1e-8. {id: (lo, hi)}."""
    part = calls if order == "both" else calls.filter(~pl.col("swapped"))
    rng = cell_rng(seed, part["judge"][0], part["format"][0], "greedy", order)
    ids = sorted(set(part["a_id"]) | set(part["b_id"]))
    prompts = sorted(set(part["prompt_id"]))
    unit = np.array([prompts.index(q) for q in part["prompt_id"]])
    wins_of, keep, used, strength = _reference_fit(part, ids, prior)
    # the prompts' kinds (equal games inside the group), numbered by their first prompt: a resample
    # draws how many prompts of each kind, counted through the kind's first prompt
    kind_of: dict[bytes, int] = {}
    first, count = [], []
    for q in range(len(prompts)):
        key = wins_of((unit == q).astype(float))[np.ix_(keep, keep)].tobytes()
        if key not in kind_of:
            kind_of[key] = len(first)
            first.append(q)
            count.append(0)
        count[kind_of[key]] += 1
    draws = []
    for drawn in rng.multinomial(len(prompts), np.array(count, float) / len(prompts), size=n_boot):
        times = np.zeros(len(prompts))
        times[first] = drawn
        w = wins_of(times[unit])[np.ix_(keep, keep)]
        extra = used if used else (0.0 if mle_exists(w) else 0.5)
        draws.append(bt_mm(w + extra / 2 * (w + w.T > 0), tol=1e-8, start=strength)[0])
    lo, hi = np.full(len(ids), np.nan), np.full(len(ids), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)             # a system without games in a resample
        lo[keep], hi[keep] = np.nanpercentile(np.array(draws), [2.5, 97.5], axis=0)
    return {c: (lo[k], hi[k]) for k, c in enumerate(ids)}


@pytest.mark.parametrize("prior", [None, 2.0])
def test_bootstrap_over_prompts_equals_one_resample_at_a_time(prior):
    # judge 'sim': five systems over 11 prompts of 2 to 5 candidates, ties, both orders, and u, v
    # met only each other (left out); judge 'top': s0 never loses, so its fit (and every
    # resample) takes half a virtual game per met pair
    rng = np.random.default_rng(9)
    games = []
    for p in range(11):
        k = int(rng.integers(2, 6))
        for _ in range(int(rng.integers(2, 7))):
            x, y = sorted(rng.choice(k, size=2, replace=False))
            swapped = bool(rng.random() < 0.4)
            a, b = (y, x) if swapped else (x, y)
            games.append((f"s{a}", f"s{b}", int(rng.integers(-1, 2)), swapped, f"q{p:02d}"))
    games += [("u", "v", 1, False, "q03"), ("v", "u", 1, True, "q99")]     # q99: no call inside the group
    top = [("s0", f"s{k}", 1, False, f"q{p:02d}") for p in range(6) for k in range(1, 1 + p % 3)]
    top += [("s1", "s2", 1, False, "q00"), ("s2", "s1", 0, True, "q01"), ("s2", "s1", 1, True, "q04")]
    calls = pl.concat([_calls(games), _calls(top, judge="top")])
    out = rank_calls(calls, n_boot=30, seed=6, prior=prior)
    for (judge, order), mine in out.group_by("judge", "order"):
        want = _bootstrap_over_prompts(calls.filter(pl.col("judge") == judge), 30, 6, prior, order)
        assert mine.height == len(want)
        for row in mine.iter_rows(named=True):
            got = [np.nan if row[c] is None else row[c] for c in ("lo", "hi")]
            assert got == pytest.approx(list(want[row["id"]]), abs=1e-10, nan_ok=True), row
    both = out.filter(pl.col("order") == "both")
    sim = both.filter(pl.col("judge") == "sim").sort("id")
    assert sim["lo"].is_null().to_list()[-2:] == [True, True] and sim["rank"].is_null().to_list()[-2:] == [True, True]
    assert sorted(sim["rank"].drop_nulls().to_list()) == list(range(1, sim.height - 1))
    assert set(both.filter(pl.col("judge") == "top")["prior"]) == {0.5 if prior is None else prior}


@pytest.mark.parametrize("draw_cells", [_rank.DRAW_CELLS, 6])
def test_bootstrap_over_prompts_in_several_chunks(monkeypatch, draw_cells):
    # 2,000 prompts of one call x vs y: three kinds (x won, tied, lost), numbered by their first
    # prompt. With DRAW_CELLS = 6, a chunk is 6 // max(2 columns, 3 kinds, 2 items) = 2 resamples, so
    # 1,001 take 501 chunks; they draw what one multinomial of 1,001 rows draws. Two items have a
    # closed form (strength_x = log(W_x / W_y) / 2, the MLE exists in every resample here).
    monkeypatch.setattr(_rank, "DRAW_CELLS", draw_cells)
    rng = np.random.default_rng(12)
    values = rng.choice([-1, 0, 1], size=2000, p=[0.3, 0.2, 0.5])
    calls = _calls([("x", "y", int(v), True, f"q{k:04d}") for k, v in enumerate(values)])
    out = rank_calls(calls, n_boot=1001, seed=3)
    x = out.filter(pl.col("id") == "x").row(0, named=True)
    x_share = np.where(values > 0, 1.0, np.where(values < 0, 0.0, 0.5))
    shares, first, counts = np.unique(x_share, return_index=True, return_counts=True)
    order = np.argsort(first)
    draw = cell_rng(3, "sim", "f", "greedy", "both").multinomial(2000, counts[order] / 2000, size=1001)
    won, lost = draw @ shares[order], draw @ (1 - shares[order])
    lo, hi = np.percentile(np.log(won / lost) / 2, [2.5, 97.5])
    assert [x["lo"], x["hi"]] == pytest.approx([lo, hi], abs=1e-9)
    assert x["lo"] < x["strength"] < x["hi"]


def test_rank_calls_cells_orders_and_an_empty_input():
    # two judges, two formats, two decodings; cells come sorted by (judge, format, decoding), each
    # with its own calls only, both orders before the single order
    games = []
    for judge, fmt, decoding, k in (("b", "f", "greedy", 3), ("a", "f", "t=1", 4), ("a", "g", "greedy", 5),
                                    ("a", "f", "greedy", 2)):
        for r in range(k):
            games.append({"judge": judge, "format": fmt, "decoding": decoding, "prompt_id": f"q{r}",
                          "a_id": "x", "b_id": "y", "value": float(1 - 2 * (r % 2)), "swapped": r == 0})
            games.append({"judge": judge, "format": fmt, "decoding": decoding, "prompt_id": f"q{r}",
                          "a_id": "y", "b_id": "x", "value": 0.0, "swapped": True})
    out = rank_calls(pl.DataFrame(games), n_boot=0).filter(pl.col("id") == "x")
    assert out.select("judge", "format", "decoding", "order", "n_calls").rows() == [
        ("a", "f", "greedy", "both", 4), ("a", "f", "greedy", "single", 1),
        ("a", "f", "t=1", "both", 8), ("a", "f", "t=1", "single", 3),
        ("a", "g", "greedy", "both", 10), ("a", "g", "greedy", "single", 4),
        ("b", "f", "greedy", "both", 6), ("b", "f", "greedy", "single", 2)]
    # ('a', 'g', 'greedy'): x won r = 0, 2, 4, lost r = 1, 3, and tied five times -> W_x = 3 + 2.5
    # = 5.5 of 10 games, W_y = 4.5: strength log(5.5 / 4.5) / 2
    assert out["strength"][4] == pytest.approx(math.log(5.5 / 4.5) / 2)
    with pytest.raises(ValueError, match="by must be 'candidate_id' or 'prompt', not 'system'"):
        rank_calls(pl.DataFrame(games), by="system")
    # no calls: no rows, the documented columns and types
    empty = rank_calls(pl.DataFrame(games).clear())
    assert empty.height == 0 and empty.columns == RANK_COLUMNS
    assert empty.schema == {"judge": pl.String, "format": pl.String, "decoding": pl.String, "order": pl.String,
                            "prompt_id": pl.String, "id": pl.String, "strength": pl.Float64, "lo": pl.Float64,
                            "hi": pl.Float64, "rank": pl.Int64, "games": pl.Float64, "wins": pl.Float64,
                            "n_calls": pl.Int64, "n_units": pl.Int64, "prior": pl.Float64}


def test_calls_without_prompts_are_resampled_one_by_one():
    # without a prompt_id column each call is its own unit: the same as giving every call a prompt
    calls = _simulated_judge(items=4, repeats=6)
    own = calls.with_columns(pl.format("c{}", pl.int_range(pl.len()).cast(pl.String).str.zfill(4)).alias("prompt_id"))
    bare = rank_calls(calls.drop("prompt_id"), n_boot=50, seed=1)
    assert bare.equals(rank_calls(own, n_boot=50, seed=1))
    assert set(bare["n_units"]) == {calls.height, calls.filter(~pl.col("swapped")).height}


def _mm_by_the_book(wins, steps=None, tol=1e-10):
    """Hunter's MM one item at a time: p_i <- W_i / sum_j n_ij / (p_i + p_j), renormalised to a
    geometric mean of 1, until the largest relative change of p is below tol (or `steps` steps)."""
    n = len(wins)
    games, won = wins + wins.T, wins.sum(axis=1)
    p, it = np.ones(n), 0
    while steps is None or it < steps:
        it += 1
        new = np.array([won[a] / sum(games[a, b] / (p[a] + p[b]) for b in range(n) if games[a, b] > 0)
                        for a in range(n)])
        new /= np.exp(np.log(new).mean())
        change, p = np.max(np.abs(new - p) / p), new
        if steps is None and change < tol:
            break
    return np.log(p), it


def test_bt_mm_takes_the_steps_of_the_textbook_iteration():
    rng = np.random.default_rng(21)
    wins = rng.integers(0, 9, size=(5, 5)).astype(float) + 0.5 * rng.integers(0, 2, size=(5, 5))
    np.fill_diagonal(wins, 0)
    want, steps = _mm_by_the_book(wins)
    logp, iterations = bt_mm(wins)
    assert iterations == steps > 10
    assert logp == pytest.approx(want, abs=1e-12)
    # max_iter stops it early, after exactly that many steps; none leaves p where it started
    for k in (1, 3):
        early, taken = bt_mm(wins, max_iter=k)
        assert taken == k and early == pytest.approx(_mm_by_the_book(wins, steps=k)[0], abs=1e-12)
    start = np.array([0.5, -0.5, 0.0, 0.25, -0.25])
    assert bt_mm(wins, max_iter=0, start=start) == (pytest.approx(start, abs=1e-12), 0)


def test_pairs_that_never_met_get_no_virtual_games():
    # the chain x > y > z in one prompt (x and z never met): no MLE, so x-y and y-z each get half a
    # virtual game as a tie: W_x = 1.25 of n_xy = 1.5 -> p_x (1.5) = 1.25 (p_x + p_y) -> p_x = 5 p_y,
    # and z the mirror image: strengths log 5, 0, -log 5
    calls = _calls([("x", "y", 1, False, "p"), ("y", "z", 1, False, "p")])
    for by in ("candidate_id", "prompt"):
        out = rank_calls(calls, by=by, n_boot=0).filter(pl.col("order") == "both").sort("id")
        assert out["strength"].to_list() == pytest.approx([math.log(5), 0, -math.log(5)], abs=1e-9), by
        assert out["prior"].to_list() == [0.5] * 3 and out["games"].to_list() == [1.0, 2.0, 1.0]


def test_bootstrap_of_two_prompts_by_hand():
    # p1: x beat y; p2: one win each. The fit (x 2-1) has an MLE, so each resample of the two
    # prompts decides its own prior: p1 twice -> x 2-0, no MLE, a quarter win each way -> log(3);
    # p1 + p2 -> 2-1 -> log(2)/2; p2 twice -> 2-2 -> 0. With chances 1/4, 1/2, 1/4 in 400
    # resamples, the 2.5% point is 0 and the 97.5% point log(3).
    calls = _calls([("x", "y", 1, False, "p1"), ("x", "y", 1, False, "p2"), ("y", "x", 1, True, "p2")])
    x = rank_calls(calls, n_boot=400, seed=0).filter((pl.col("order") == "both") & (pl.col("id") == "x")).row(0, named=True)
    assert x["strength"] == pytest.approx(math.log(2) / 2) and x["prior"] == 0.0
    assert [x["lo"], x["hi"]] == pytest.approx([0.0, math.log(3)], abs=1e-9)


def test_candidates_judged_only_against_themselves_get_no_strength():
    # a self-comparison says nothing about strength: no pair of different candidates, so each
    # candidate gets a row without strength, rank or interval (and no error, even when resampling)
    for games in ([("x", "x", 1, False, "p1"), ("x", "x", -1, False, "p2")],
                  [("x", "x", 1, False, "p1"), ("y", "y", 0, False, "p2")]):
        out = rank_calls(_calls(games), n_boot=20).filter(pl.col("order") == "both").sort("id")
        assert out["id"].to_list() == sorted({g[0] for g in games})
        assert out.select("strength", "lo", "hi", "rank").null_count().row(0) == (out.height,) * 4


def test_rank_calls_sorts_the_decodings_of_every_judge_and_format():
    # ten judges, each with both decodings ("greedy" listed first in the calls): the cells come
    # sorted by (judge, format, decoding), so 'constrained' before 'greedy' for every judge
    # (a sort that left the decoding to chance would get all ten right once in 2^10)
    games = [{"judge": f"j{k}", "format": "f", "decoding": decoding, "prompt_id": "q", "a_id": "x", "b_id": "y",
              "value": 1.0, "swapped": False} for k in range(10) for decoding in ("greedy", "constrained")]
    out = rank_calls(pl.DataFrame(games), n_boot=0).filter((pl.col("id") == "x") & (pl.col("order") == "both"))
    assert out.select("judge", "decoding").rows() == [(f"j{k}", d) for k in range(10)
                                                      for d in ("constrained", "greedy")]
