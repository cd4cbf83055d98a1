"""audit.estimate with its items built and counted in DuckDB (audit/_worth_cells.py, issue 29) against
two references that share none of its reading:

- the per-item path the product keeps beside it, audit._worth.estimate (the pool's candidates, every
  score and judged pair joined in polars, one item a row), fed with frames read back through the
  public audit functions (audit.verdict_rows, audit.comparisons, audit.stored_labels,
  audit.candidate_texts; the accept labels as the test wrote them), on a tie-heavy pool: pointwise
  and comparative cells of two judges, pair labels (ties, two annotators on some pairs, written
  either way round) and accept labels; both targets, the default baseline and another one, two
  alphas: the same frame to 1e-9;
- the definition (docs/metrics.md 'What human labels are worth'): a hand-sized pool whose
  classical and PPI++ numbers are worked out by hand in the test and written out in numpy."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy.stats import norm

import audit._worth as W
from audit import candidate_texts, comparisons, estimate, pool_candidates, stored_labels, verdict_rows
from audit._read import AuditError
from tests.audit.conftest import candidate, pointwise
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


# -- reference 1: the per-item path, its inputs read through the public audit functions ---------------

SCALE = {"binary": (0.0, 1.0), "likert5": (1.0, 5.0), "numeric100": (0.0, 100.0)}   # each format's (lo, hi)
IDX = {"prompt_idx": pl.Int64, "cand_idx": pl.Int64, "lo_idx": pl.Int64, "hi_idx": pl.Int64}
DESIGN = [pl.lit(None, pl.Float64).alias("pi"), pl.lit(None, pl.Int64).alias("m"), pl.lit(None, pl.Int64).alias("frame")]


def per_item_inputs(db, pool: str, accepts: list[dict]) -> dict:
    """The frames audit._worth.estimate reads (cands, points, pairs, pair_votes, accept_votes), built
    from the export, the oriented comparisons, the stored pair labels and `accepts` (the accept
    labels as written: every label here comes from a file, so no queue design, weight 1)."""
    n = pool_candidates(db, pool).height
    cands = candidate_texts(db, pool, list(range(n))).select("cand_idx", "prompt_idx", "prompt_id", "candidate_id")
    assert cands.height == n
    idx = cands.select("prompt_id", "candidate_id", "cand_idx")
    # pointwise: f = the mean over the parsed samples of (value - lo) / (hi - lo)
    pts = verdict_rows(db, pool).filter(pl.col("candidate_b").is_null() & pl.col("value").is_not_null())
    assert set(pts["format"]) <= set(SCALE)
    lo = pl.col("format").replace_strict({k: v[0] for k, v in SCALE.items()})
    hi = pl.col("format").replace_strict({k: v[1] for k, v in SCALE.items()})
    points = pts.join(idx, left_on=["prompt_id", "candidate_a"], right_on=["prompt_id", "candidate_id"]) \
        .group_by("judge", "format", "decoding", "cand_idx") \
        .agg(((pl.col("value") - lo) / (hi - lo)).mean().alias("f")) \
        .sort("judge", "format", "decoding", "cand_idx")
    # comparative: per pair (lo_idx < hi_idx), f = the mean of 1 / 0.5 / 0 as a call favours lo_idx / ties / not
    cmp = comparisons(db, pool).with_columns(
        pl.when(pl.col("swapped")).then("y").otherwise("x").alias("slot_a"),
        pl.min_horizontal("x", "y").alias("lo_idx"), pl.max_horizontal("x", "y").alias("hi_idx"))
    pairs = cmp.with_columns(pl.when(pl.col("value") == 0).then(0.5)
                             .when((pl.col("value") > 0) == (pl.col("slot_a") == pl.col("lo_idx"))).then(1.0)
                             .otherwise(0.0).alias("f")) \
        .group_by("judge", "format", "decoding", "prompt_idx", "lo_idx", "hi_idx").agg(pl.col("f").mean()) \
        .sort("judge", "format", "decoding", "prompt_idx", "lo_idx", "hi_idx")
    # the humans: y in favour of lo_idx (pairs), 1 for accept
    labels = stored_labels(db, pool).filter(pl.col("a_idx") != pl.col("b_idx"))
    pair_votes = labels.select(
        "prompt_idx", pl.min_horizontal("a_idx", "b_idx").alias("lo_idx"),
        pl.max_horizontal("a_idx", "b_idx").alias("hi_idx"), "annotator",
        pl.when(pl.col("label") == "tie").then(0.5).when((pl.col("label") == "A") == (pl.col("a_idx") < pl.col("b_idx")))
        .then(1.0).otherwise(0.0).alias("y"), *DESIGN).sort("prompt_idx", "lo_idx", "hi_idx", "annotator")
    accept_votes = pl.DataFrame([{"prompt_id": a["prompt_id"], "candidate_id": a["candidate_id"],
                                  "annotator": a.get("annotator", "file"),
                                  "y": 1.0 if a["label"] == "accept" else 0.0} for a in accepts],
                                schema={"prompt_id": pl.String, "candidate_id": pl.String, "annotator": pl.String,
                                        "y": pl.Float64}) \
        .join(cands, on=["prompt_id", "candidate_id"]) \
        .select("prompt_idx", "cand_idx", "annotator", "y", *DESIGN).sort("cand_idx", "annotator")
    return {k: v.cast({c: t for c, t in IDX.items() if c in v.columns})
            for k, v in {"cands": cands, "points": points, "pairs": pairs, "pair_votes": pair_votes,
                         "accept_votes": accept_votes}.items()}


def per_item_estimate(db, pool: str, accepts: list[dict], target: str, baseline: str | None = None,
                      alpha: float = 0.05) -> pl.DataFrame:
    """audit._worth.estimate (the live per-item path) on per_item_inputs' frames."""
    frames = per_item_inputs(db, pool, accepts)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(W, "read_estimate_inputs", lambda *_: frames)
        return W.estimate(db, pool, target, baseline=baseline, alpha=alpha)


def labelled_pool(db, folder, n_prompts: int = 120, seed: int = 3) -> list[dict]:
    """The pool 'lab'; returns the accept labels it wrote."""
    from ingest.scoring import import_verdicts
    from ingest.store import import_labels, import_pool
    rng = np.random.default_rng(seed)
    rows = synthetic_pool(n_prompts, k_range=(2, 4), seed=seed)
    for r in rows:                       # little spread: many equal scores and TIE verdicts
        r["reference"] = 2.0 if r["reference"] is None else 2.0 + 0.3 * (r["reference"] - 2.0)
    verdicts = synthetic_verdicts(rows, ("alpha", "beta"), seed, unparsed=0.05, swap_rate=0.6, slot_bias=0.0)
    for k, v in enumerate(list(verdicts)):     # a second sample of some calls
        if k % 4 == 0:
            verdicts.append({**v, "sample": 1})
    pairs, accepts = [], []
    by_prompt: dict[str, list[str]] = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], []).append(r["candidate_id"])
    for p, (pid, cands) in enumerate(by_prompt.items()):
        if p % 3 == 0 and len(cands) > 1:
            a, b = (cands[0], cands[1]) if p % 2 else (cands[1], cands[0])
            pairs.append({"prompt_id": pid, "a_id": a, "b_id": b, "label": str(rng.choice(["A", "B", "tie"]))})
            if p % 5 == 0:
                pairs.append({"prompt_id": pid, "a_id": a, "b_id": b, "label": "tie", "annotator": "v"})
        if p % 4 == 0:
            accepts.append({"prompt_id": pid, "candidate_id": cands[-1], "label": str(rng.choice(["accept", "reject"]))})
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "lab")
    import_verdicts(db, write_jsonl(folder / "verdicts.jsonl", verdicts), "lab")
    import_labels(db, write_jsonl(folder / "pairs.jsonl", pairs), "lab")
    import_labels(db, write_jsonl(folder / "accepts.jsonl", accepts), "lab")
    return accepts


@pytest.fixture
def lab(db, tmp_path) -> tuple:
    """(the database, the accept labels written) of labelled_pool."""
    return db, labelled_pool(db, tmp_path)


@pytest.mark.parametrize("target,baseline,alpha", [("winrate", None, 0.05), ("winrate", "c2", 0.1),
                                                   ("accept", None, 0.05), ("accept", None, 0.2)])
def test_estimate_equals_the_per_item_path(lab, target, baseline, alpha):
    db, accepts = lab
    new = estimate(db, "lab", target, baseline=baseline, alpha=alpha)
    labelled = new.filter(pl.col("n_labelled") > 0)
    assert new.height >= 4 and labelled["ppi_value"].is_not_null().all()
    assert labelled.height >= (4 if baseline is None else 0)      # the labelled pairs are c0's and c1's
    assert set(new["format"]) >= ({"tournament", "likert5"} if target == "winrate" else {"binary", "likert5"})
    assert_frame_equal(new, per_item_estimate(db, "lab", accepts, target, baseline, alpha),
                       check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("baseline", [None, "c1"])
def test_estimate_of_a_pool_without_labels_equals_the_per_item_path(db, tmp_path, baseline):
    """Without a human label (the bench pool's case) the win rate's items are only counted (f left null,
    a pointwise cell's scores not read): the same frame as the per-item path's, n_unlabelled per cell
    and system, every other number null."""
    from tests.fixtures import build_db
    build_db(db, tmp_path, n_prompts=40, pool="lab")
    new = estimate(db, "lab", "winrate", baseline=baseline)
    assert new.height >= 4 and (new["n_unlabelled"] > 0).all() and new["ppi_value"].is_null().all()
    assert_frame_equal(new, per_item_estimate(db, "lab", [], "winrate", baseline))


def test_default_baseline_and_a_wrong_one(lab):
    """The default baseline: the system in the most labelled pairs (ties by name), as the per-item path
    chooses it."""
    db, accepts = lab
    assert estimate(db, "lab", "winrate")["baseline"][0] == per_item_estimate(db, "lab", accepts, "winrate")["baseline"][0]
    with pytest.raises(AuditError, match="--baseline nobody: not a system"):
        estimate(db, "lab", "winrate", baseline="nobody")


@pytest.mark.parametrize("labelled", [True, False])
def test_judges_skips_the_estimate_of_a_target_without_labels_and_prints_the_same(db, tmp_path, monkeypatch, labelled):
    """The leaderboard's effective labels: the estimate only for the targets with labels of their kind
    (an unlabelled pool runs none); each cell's the mean of its estimate rows'."""
    import audit._judges as J
    if labelled:
        labelled_pool(db, tmp_path)
    else:
        from tests.fixtures import build_db
        build_db(db, tmp_path, n_prompts=40, pool="lab")
    new = J.judges(db, "lab")
    calls = []
    # audit._judges binds estimate when imported: the name to watch is its own
    monkeypatch.setattr(J, "estimate", lambda *a, **k: calls.append(k["target"]) or estimate(*a, **k))
    assert J.judges(db, "lab").equals(new) and calls == (["accept", "winrate"] if labelled else [])
    # docs/metrics.md: a cell's effective labels are the mean of its estimate rows' over both targets
    want: dict = {}
    for target in ("accept", "winrate"):
        for r in estimate(db, "lab", target=target).iter_rows(named=True):
            if r["effective_labels"] is not None:
                want.setdefault((r["judge"], r["format"], r["decoding"]), []).append(r["effective_labels"])
    for r in new.iter_rows(named=True):
        key = (r["judge"], r["format"], r["decoding"])
        if key in want:
            assert r["effective_labels"] == pytest.approx(np.mean(want[key]), rel=1e-9, abs=1e-9), r
        else:
            assert r["effective_labels"] is None, r
    assert new["effective_labels"].is_not_null().any() is labelled


# -- reference 3: the items as the SQL before them built them ------------------------------------------

def items_before(db, pool: str, baseline: str, strata: str | None, judgings=None) -> pl.DataFrame:
    """winrate_items.sql as it was before the items were built in numpy (kept in tests/audit/sql/): DuckDB
    grouped every pointwise score by candidate and every comparative call by pair, joined the pairs of
    each system with the baseline and counted the unlabelled items."""
    from ingest.store.database import Database
    handle = Database.of(db) if judgings is None else Database.of(db).scoped(judgings)
    with handle.reading(queries="tests.audit") as read:
        return read.frame("winrate_items_before", pool_id=read.pool_id(pool), baseline=baseline, strata=strata)


@pytest.mark.parametrize("baseline", ["c0", "c1", "c2"])
@pytest.mark.parametrize("strata", [None, "score-bin", "model", "split", "candidate_id"])
def test_items_equal_the_sql_before(lab, baseline, strata):
    """audit._worth_cells.winrate_items (numpy, each cell's calls read alone) gives the frame the former
    winrate_items.sql gave: the labelled items one by one, the others counted per (cell, system, f,
    stratum), in the same order; and a database scoped to one judging gives that judging's rows."""
    import audit._worth_cells as WC
    from audit._read import reading
    from ingest import Database
    db, _ = lab

    def new(handle):
        with reading(handle) as read:
            pid = read.pool_id("lab")
            systems = read.frame("rank_systems", pool_id=pid)["candidate_id"].to_list()
            humans = W.human_values(read.frame("human_pair_votes", pool_id=pid), ["lo_idx", "hi_idx"])
            return WC.winrate_items(read, pid, systems, baseline, strata, humans)

    got, want = new(db), items_before(db, "lab", baseline, strata)
    assert got.height == want.height > 20 and (got["n"] > 1).any()
    assert got["is_labelled"].any() is (baseline != "c2")       # the labelled pairs are c0's and c1's
    assert {"likert5", "tournament"} <= set(got["format"])        # pointwise and comparative cells
    assert_frame_equal(got, want.cast(got.schema), check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    one = ("beta", "tournament")
    scoped = new(Database(db).scoped([one]))
    assert scoped.height > 0
    assert_frame_equal(scoped, got.filter((pl.col("judge") == one[0]) & (pl.col("format") == one[1])))
    assert_frame_equal(scoped, items_before(db, "lab", baseline, strata, (one,)).cast(got.schema))


# -- reference 2: the definition, on a hand-sized pool ------------------------------------------------

def test_accept_estimate_of_a_hand_sized_pool(db, tmp_path):
    """Six candidates (one a prompt), one binary judge: f_all = 1 1 0 1 0 0 (N = 6); the first four
    labelled, Y = 1 0 0 1 against f = 1 1 0 1 (n = 4). docs/metrics.md, by hand:
      classical: mean Y = 0.5, sd (ddof 0) = 0.5, half-width z·0.5/√4 = 0.25·z
      θ₁ (λ = 1) = mean f_all + mean(Y − f) = 0.5 − 0.25 = 0.25
      cov(Y − θ₁, f − θ₁) = cov(Y, f) = (.5·.25 − .5·.25 + .5·.75 + .5·.25) / 4 = 0.125   (over n)
      var of [f − θ₁, f_all − θ₁] (ddof 1) = var(1 1 0 1 1 1 0 1 0 0) = (6·.4² + 4·.6²) / 9 = 2.4 / 9
      λ = 0.125 / ((1 + 4/6) · 2.4/9) = 0.125 / (4/9) = 0.28125
      θ̂ = λ·0.5 + mean(Y − λf) = 0.140625 + 0.5 − 0.28125·0.75 = 0.4296875
      se² = λ²·var(f_all)/N + var(Y − λf)/n = 0.28125²·0.25/6 + 0.19451904296875/4
          = 0.0032958984375 + 0.0486297607421875 = 0.0519256591796875
      effective labels = 4 · (0.25 / se)² = 4 · 0.0625 / 0.0519256591796875"""
    from ingest.scoring import import_verdicts
    from ingest.store import import_labels, import_pool
    f_all = [1, 1, 0, 1, 0, 0]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", [candidate(f"p{i}", "c") for i in range(6)]), "hand")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", pointwise(
        "j", "binary", [(f"p{i}", "c", "ACCEPT" if v else "REJECT") for i, v in enumerate(f_all)])), "hand")
    import_labels(db, write_jsonl(tmp_path / "l.jsonl", [
        {"prompt_id": f"p{i}", "candidate_id": "c", "label": lab}
        for i, lab in enumerate(["accept", "reject", "reject", "accept"])]), "hand")
    got = estimate(db, "hand", "accept").row(0, named=True)
    z = norm.ppf(0.975)
    se = np.sqrt(0.0519256591796875)
    assert (got["n_labelled"], got["n_unlabelled"]) == (4, 2)
    assert (got["classical_value"], got["classical_lo"], got["classical_hi"]) == \
        pytest.approx((0.5, 0.5 - 0.25 * z, 0.5 + 0.25 * z), abs=1e-12)
    assert got["ppi_lambda"] == pytest.approx(0.28125, abs=1e-12)
    # 0.4296875 − z·se = −0.0169 lies below 0, the least a share can be: clipped to 0
    assert 0.4296875 - z * se < 0
    assert (got["ppi_value"], got["ppi_lo"], got["ppi_hi"]) == \
        pytest.approx((0.4296875, 0.0, 0.4296875 + z * se), abs=1e-12)
    assert got["effective_labels"] == pytest.approx(4 * 0.0625 / 0.0519256591796875, abs=1e-12)

    # the same from the formulas, written out in numpy
    fa, y, f = np.array(f_all, float), np.array([1.0, 0, 0, 1]), np.array(f_all[:4], float)
    n, big_n = y.size, fa.size
    theta1 = fa.mean() + (y - f).mean()
    cov = np.mean((y - theta1 - (y - theta1).mean()) * (f - theta1 - (f - theta1).mean()))
    lam = np.clip(cov / ((1 + n / big_n) * np.var(np.concatenate([f - theta1, fa - theta1]), ddof=1)), 0, 1)
    value = lam * fa.mean() + np.mean(y - lam * f)
    half = z * np.sqrt(np.var(lam * fa) / big_n + np.var(y - lam * f) / n)
    assert (got["ppi_lambda"], got["ppi_value"], got["ppi_lo"], got["ppi_hi"]) == \
        pytest.approx((lam, value, max(0.0, value - half), min(1.0, value + half)), abs=1e-12)
