"""The price of being sure (docs/metrics.md#the-price-of-being-sure-plan): the labels still needed by
hand (n·(hw / H)² − n, rounded up; the active queue's k), the design effect, the order of the plans by
price; on a database, each plan's labels from the half-widths `estimate` prints for the same cell, the
calls still needed and the prices of judgeaudit.toml; by simulation, following the plan reaches ±H.

`python -m tests.audit.test_plan` prints the simulation's figures with more draws."""

import json
import math

import numpy as np
import pytest
from scipy.stats import norm
from scipy.stats import t as student_t

from audit import estimate, plan
from audit._estimate import classical_mean, hansen_hurwitz, ppi_mean
from audit._label_queue import inclusion, systematic_draw
from audit._plan import active_effect, active_labels, cell_plans, labels_to_reach, small_sample
from ingest.store import import_labels, import_pool
from tests.conftest import cli


def test_labels_to_reach_by_hand():
    # 100 labels at +-0.08, wanted +-0.04: 100 x (0.08 / 0.04)^2 - 100 = 300
    assert labels_to_reach(100, 0.08, 0.04) == 300
    # 10 at 0.05 for 0.04: 10 x 1.5625 - 10 = 5.625 -> 6 (rounded up)
    assert labels_to_reach(10, 0.05, 0.04) == 6
    assert labels_to_reach(50, 0.03, 0.04) == 0 and labels_to_reach(0, 0.1, 0.04) is None
    # a part labels do not narrow: now^2 = 0.0064 = 0.0004 + v/100 -> v = 0.6; 0.04^2 = 0.0016 =
    # 0.0004 + 0.6/T -> T = 500: 400 more (300 without the fixed part)
    assert labels_to_reach(100, 0.08, 0.04, fixed=0.0004) == 400
    # the fixed part alone is wider than the target: no number of labels reaches it
    assert labels_to_reach(100, 0.08, 0.04, fixed=0.0016) is None


def test_the_plan_starts_from_the_small_sample_half_width():
    # (t_{n-1} / z) * sqrt(n / (n - 1)); at n = 40: t_39 = 2.022691, z = 1.959964 -> 1.032004 * 1.012739
    assert small_sample(40) == pytest.approx(2.022691 / 1.959964 * math.sqrt(40 / 39), rel=1e-6)
    assert small_sample(40) == pytest.approx(student_t.ppf(0.975, 39) / norm.ppf(0.975) * math.sqrt(40 / 39))
    # it tends to 1 as the labels grow; one label has no variance to correct
    assert 1 < small_sample(10_000) < 1.001 and small_sample(1) == 1.0


def test_active_labels_by_hand():
    # deff 1: the random plan's own labels
    assert active_labels(100, 300, 1.0) == 300
    # n = 100, T = 400, deff 1/2: T (n + k/2) = (n + k)^2 -> k^2 + (2n - T/2) k + n^2 - T n = 0
    #   -> k^2 + 0 k - 30000 = 0, k = sqrt(30000) = 173.2 -> 174
    assert active_labels(100, 300, 0.5) == 174
    assert 400 * (100 + 173.2051 * 0.5) == pytest.approx((100 + 173.2051) ** 2, rel=1e-5)


def test_the_design_effect():
    rng = np.random.default_rng(0)
    f_all = rng.choice([0, 0.25, 0.5, 0.75, 1.0], 2000)
    # residuals alike in every bin (y unrelated to f, the same rate everywhere): deff close to 1
    lab = rng.choice(2000, 300, replace=False)
    y = (rng.random(300) < 0.5).astype(float)
    assert active_effect(y, f_all[lab], f_all, 0.0) == pytest.approx(1.0, abs=0.05)
    # the judge is right at the ends and a coin flip in the middle: the queue's rate follows the
    # errors, so a label drawn by it is worth more (deff < 1)
    p = np.select([f_all <= 0.25, f_all >= 0.75], [0.02, 0.98], 0.5)
    y = (rng.random(2000) < p).astype(float)
    lam = ppi_mean(y[lab], f_all[lab], f_all)["lambda"]
    assert active_effect(y[lab], f_all[lab], f_all, lam) < 0.8
    # before the queue's 40 labels of warm-up it draws uniformly
    assert active_effect(y[lab[:39]], f_all[lab[:39]], f_all, lam) == 1.0


def test_plans_are_ordered_by_price():
    rng = np.random.default_rng(1)
    f_all = rng.choice([0, 0.25, 0.5, 0.75, 1.0], 1000)
    y_all = (rng.random(1000) < np.select([f_all <= 0.25, f_all >= 0.75], [0.05, 0.95], 0.5)).astype(float)
    lab = rng.choice(1000, 100, replace=False)
    # the cell scored all 1000 of a frame of 5000: a PPI plan needs 4000 more calls
    free = cell_plans(y_all[lab], f_all[lab], f_all, None, 0.05, 0.04, 5000, 1.0, 0.0)
    dear = cell_plans(y_all[lab], f_all[lab], f_all, None, 0.05, 0.04, 5000, 1.0, 1.0)
    assert [(p["method"], p["queue"]) for p in free][0] == ("ppi", "active")       # fewest labels, calls free
    assert [(p["method"], p["queue"]) for p in dear][0] == ("classical", "random")  # 4000 calls at $1 each
    by = {(p["method"], p["queue"]): p for p in dear}
    assert by["ppi", "random"]["calls_needed"] == 4000 and by["ppi", "random"]["call_cost_usd"] == 4000.0
    assert by["classical", "random"]["calls_needed"] == 0
    # a frame of 5000 with 100 labelled leaves 4900 to label: every plan here is reachable; with a
    # frame of 150, 50 are left, fewer than any plan asks
    assert all(p["reachable"] for p in dear)
    small = cell_plans(y_all[lab], f_all[lab], f_all, None, 0.05, 0.04, 150, 1.0, 1.0)
    assert not any(p["reachable"] for p in small)
    # classical: 100 x (hw_t / 0.04)^2 - 100, hw_t the Student-t half-width of the unbiased variance
    c = student_t.ppf(0.975, 99) * y_all[lab].std(ddof=1) / 10
    assert by["classical", "random"]["labels_needed"] == math.ceil(100 * (c / 0.04) ** 2 - 100)
    assert by["classical", "random"]["cost_usd"] == by["classical", "random"]["labels_needed"] * 1.0
    nothing = cell_plans(y_all[lab], f_all[lab], f_all, None, 0.05, 0.04, 5000, None, None)
    assert all(p["cost_usd"] is None for p in nothing)
    assert [p["labels_needed"] for p in nothing] == sorted(p["labels_needed"] for p in nothing)


# -- on a database -------------------------------------------------------------------------------------

SYSTEMS = ("base", "s1", "s2")


def _likert(p, s):
    return 1 + (3 * p + 7 * SYSTEMS.index(s)) % 5


def test_plan_on_a_database_follows_the_estimates_half_widths(db, tmp_path, write_jsonl):
    rows = [{"prompt_id": f"p{p}", "prompt": f"question {p}", "candidate_id": s, "response": f"{s} on {p}"}
            for p in range(40) for s in SYSTEMS]
    (tmp_path / "pool.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_pool(db, tmp_path / "pool.jsonl", "tiny")
    # the judge scored the first 30 prompts only (90 of 120 candidates), 100 input and 2 output tokens a call
    verdicts = [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": s, "raw": str(_likert(p, s)),
                 "tokens_in": 100, "tokens_out": 2} for p in range(30) for s in SYSTEMS]
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in verdicts))
    assert cli(db, "import-verdicts", str(tmp_path / "verdicts.jsonl"), "--pool", "tiny").returncode == 0
    labels = [{"prompt_id": f"p{p}", "candidate_id": s, "label": "accept" if (_likert(p, s) >= 3) != (p % 7 == 0)
               else "reject"} for p in range(20) for s in ("s1", "s2")]
    import_labels(db, write_jsonl("labels.jsonl", labels), "tiny")
    # $0.50 a label; $10 / $20 per million tokens: a call costs (100 x 10 + 2 x 20) / 1e6 = $0.00104
    (tmp_path / "judgeaudit.toml").write_text('[prices]\nhuman_label = 0.5\n\n[prices.j]\ninput = 10\noutput = 20\n')
    doc = json.loads(cli(db, "plan", "--pool", "tiny", "--target", "accept", "--half-width", "0.05", "--json").stdout)
    assert (doc["target"], doc["half_width"], doc["human_label_usd"]) == ("accept", 0.05, 0.5)
    (cell,) = doc["cells"]
    est = estimate(db, "tiny", "accept").row(0, named=True)
    by = {(p["method"], p["queue"]): p for p in cell["plans"]}
    # the plan starts from the estimate's half-widths taken to Student-t with the unbiased variance:
    # x t_39 / z x sqrt(40 / 39); PPI's part z^2 lambda^2 var(f_u) / N is not narrowed by labels: now
    # over the N = 90 scored, once the PPI plan's calls are made over the frame's 120
    grow = student_t.ppf(0.975, 39) / norm.ppf(0.975) * math.sqrt(40 / 39)
    f_u = np.array([(_likert(p, s) - 1) / 4 for p in range(30) for s in SYSTEMS])
    spread = {"classical": 0.0, "ppi": (norm.ppf(0.975) * est["ppi_lambda"]) ** 2 * f_u.var()}
    for method in ("classical", "ppi"):
        hw = (est[f"{method}_hi"] - est[f"{method}_lo"]) / 2
        assert by[method, "random"]["half_width"] == pytest.approx(hw)
        v = 40 * (hw ** 2 - spread[method] / 90) * grow ** 2
        assert by[method, "random"]["labels_needed"] == math.ceil(v / (0.05 ** 2 - spread[method] / 120) - 40)
        assert by[method, "random"]["label_cost_usd"] == pytest.approx(by[method, "random"]["labels_needed"] * 0.5)
    # 30 of the 120 candidates unscored: a PPI plan asks 30 calls at $0.00104
    assert (cell["n_labelled"], cell["n_items"], cell["n_frame"]) == (40, 90, 120)
    assert by["ppi", "random"]["calls_needed"] == 30 and by["ppi", "active"]["calls_needed"] == 30
    assert by["ppi", "random"]["call_cost_usd"] == pytest.approx(30 * 0.00104)
    assert by["classical", "random"]["call_cost_usd"] == 0.0
    # past the queue's warm-up (40 labels) the active plan starts at lambda = 1, whose part that labels
    # do not narrow, z^2 var(f_u) / 120, is wider than 0.05^2 here: no number of labels reaches +-0.05
    assert (norm.ppf(0.975) ** 2 * f_u.var() / 120 > 0.05 ** 2) == (by["ppi", "active"]["labels_needed"] is None)
    costs = [p["cost_usd"] for p in cell["plans"]]
    priced = [c for c in costs if c is not None]
    assert costs == priced + [None] * (len(costs) - len(priced)) and priced == sorted(priced)
    assert cell["cost_usd"] == costs[0]
    assert cell["labels_needed"] == cell["plans"][0]["labels_needed"]
    assert cell["plan"] == f"{cell['plans'][0]['method']}/{cell['plans'][0]['queue']}"
    # the same from the audit, without prices: no cost, plans by their labels
    frame = plan(db, "tiny", "accept", 0.05)
    assert frame["cost_usd"].to_list() == [None]
    assert frame["labels_needed"][0] == min(by[k]["labels_needed"] for k in by if by[k]["labels_needed"] is not None)
    bad = cli(db, "plan", "--pool", "tiny", "--target", "accept", "--half-width", "0")
    assert bad.returncode == 1 and "--half-width 0.0: must be above 0" in bad.stderr


def test_the_price_of_a_label_is_read_from_judgeaudit_toml_and_checked(tmp_path, monkeypatch):
    from ingest import UserError
    from ingest.endpoints import label_price, prices
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    db = tmp_path / "x.duckdb"
    assert label_price(db) is None
    (tmp_path / "judgeaudit.toml").write_text('[prices]\nhuman_label = 0.4\n\n[prices.j]\ninput = 1\noutput = 2\n')
    assert label_price(db) == 0.4 and prices(db) == {"j": {"input": 1.0, "output": 2.0}}
    (tmp_path / "judgeaudit.toml").write_text('[prices]\nhuman_label = "cheap"\n')
    with pytest.raises(UserError, match="prices.human_label': a number >= 0"):
        label_price(db)


# -- by simulation -------------------------------------------------------------------------------------

LEVELS = np.array([0, 0.25, 0.5, 0.75, 1.0])
SHARE = [0.15, 0.2, 0.3, 0.2, 0.15]


def sim_pool(kind: str, rng: np.random.Generator, size: int = 20000):
    """(f, y): a likert judge's scores and the humans' accept on `size` candidates. concentrated: the
    judge right at the ends, a coin flip in the middle; noisy: P(accept) = 0.1 + 0.6 f; biased:
    P(accept) = 0.6 f (the judge's mean 0.5 above θ 0.3)."""
    f = rng.choice(LEVELS, size, p=SHARE)
    p = {"concentrated": np.select([f <= 0.25, f >= 0.75], [0.02, 0.98], 0.5),
         "noisy": 0.1 + 0.6 * f, "biased": 0.6 * f}[kind]
    return f, (rng.random(size) < p).astype(float)


def follow(f, y, lab, w, plan_row, rng):
    """Label what the plan asks (uniformly, or by one active queue weighted m / (M pi)): (labels, weights)."""
    k = plan_row["labels_needed"]
    rest = np.setdiff1d(np.arange(f.size), lab)
    if k == 0:
        return lab, w
    if plan_row["queue"] == "random":
        return np.concatenate([lab, rng.choice(rest, k, replace=False)]), np.concatenate([w, np.ones(k)])
    pi, _ = inclusion(f[rest], k, f[lab], y[lab], "active")
    take = systematic_draw(pi, rng)
    return np.concatenate([lab, rest[take]]), np.concatenate([w, hansen_hurwitz(pi[take], k, rest.size)])


def half_width(f, y, lab, w, method):
    if method == "classical":
        return classical_mean(y[lab])["half_width"]
    return ppi_mean(y[lab], f[lab], f, 0.05, w=None if np.all(w == 1) else w)["half_width"]


def simulate(kind: str, sims: int = 200, n0: int = 200, target: float = 0.04) -> dict:
    """Per plan ("method/queue"): over `sims` seeded pools with n0 labels drawn at random, the share of
    draws whose half-width is <= H (`reach`) and <= 1.1 H (`within`) after labelling what the plan
    asks, once; the mean labels asked."""
    out: dict = {}
    for s in range(sims):
        rng = np.random.default_rng(s)
        f, y = sim_pool(kind, rng)
        lab0 = rng.choice(f.size, n0, replace=False)
        for row in cell_plans(y[lab0], f[lab0], f, None, 0.05, target, f.size, None, None):
            lab, w = follow(f, y, lab0, np.ones(n0), row, rng)
            out.setdefault(f"{row['method']}/{row['queue']}", []).append(
                (row["labels_needed"], half_width(f, y, lab, w, row["method"])))
    return {name: {"labels": float(np.mean([v[0] for v in rows])),
                   "reach": float(np.mean([v[1] <= target for v in rows])),
                   "within": float(np.mean([v[1] <= 1.1 * target for v in rows]))} for name, rows in out.items()}


@pytest.fixture(scope="module")
def sims():
    return {kind: simulate(kind) for kind in ("concentrated", "noisy", "biased")}


@pytest.mark.parametrize("kind", ["concentrated", "noisy", "biased"])
def test_following_the_plan_once_reaches_plus_minus_h(sims, kind):
    # DESIGN asks at least half within +-H and 90% within 1.1 H; 0.55 leaves a margin over 200 draws
    for name, got in sims[kind].items():
        assert got["reach"] >= 0.55, (kind, name, got)
        assert got["within"] >= 0.9, (kind, name, got)


def test_an_active_plan_asks_fewer_labels_where_the_errors_concentrate(sims):
    got = sims["concentrated"]
    assert got["ppi/active"]["labels"] < 0.9 * got["ppi/random"]["labels"] < got["classical/random"]["labels"]


if __name__ == "__main__":
    for kind in ("concentrated", "noisy", "biased"):
        for name, got in simulate(kind, sims=500).items():
            print(kind, name, {k: round(v, 3) for k, v in got.items()})
