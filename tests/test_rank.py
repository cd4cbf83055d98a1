"""Bradley-Terry rankings (`judgeaudit rank`): the MM fit against hand arithmetic and an independent
maximum-likelihood fit with scipy.optimize, a simulated slot-biased judge, the bootstrap's width."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy.optimize import minimize

from audit import rank, rank_calls
from audit._rank import bt_mm, fit_cell, mle_exists, win_matrix
from tests.fixtures import build_db

EXE = str(Path(sys.executable).with_name("judgeaudit"))


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
    at.switch_page("views/rankings.py").run()
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
