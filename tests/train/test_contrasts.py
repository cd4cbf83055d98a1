"""Downstream statistics (train/contrasts.py) against scipy, numpy and hand arithmetic."""

import json
import math
import re

import numpy as np
import polars as pl
import pytest
from scipy import stats

from ingest import UserError
from train import contrasts as C


def outcomes(rows):
    return pl.DataFrame(rows, schema=C.SCHEMA)


def random_outcomes(n_prompts=12, seeds=None, judges=("j1", "j2"), rng_seed=0, covariates=True):
    """Outcomes for base (1 seed) and two conditions with 2 and 3 seeds, with covariates."""
    rng = np.random.default_rng(rng_seed)
    seeds = seeds or {"base": [0], "fmtA": [1, 2], "fmtB": [1, 2, 3]}
    rows = []
    for judge in judges:
        for cond, ss in seeds.items():
            for s in ss:
                for p in range(n_prompts):
                    row = {"condition": cond, "seed": s, "prompt_id": f"p{p}", "judge": judge,
                           "outcome": float(rng.choice([0, 0.5, 1]))}
                    if covariates:
                        row.update(answer_len=int(rng.integers(10, 400)), ref_len=int(rng.integers(50, 300)),
                                   markdown=bool(rng.random() < 0.4))
                    rows.append(row)
    return outcomes(rows)


def paired(n_plus, n_minus):
    """Two conditions, one seed each: n_plus prompts where a wins (1 vs 0), n_minus where it loses."""
    rows = []
    for p in range(n_plus + n_minus):
        win = p < n_plus
        rows.append({"condition": "a", "seed": 0, "prompt_id": f"p{p:03d}", "judge": "j", "outcome": 1.0 if win else 0.0})
        rows.append({"condition": "base", "seed": 0, "prompt_id": f"p{p:03d}", "judge": "j", "outcome": 0.0 if win else 1.0})
    return outcomes(rows)


def test_friedman_equals_scipy():
    frame = random_outcomes()
    doc = C.analyse(frame, boot=200, seed=0)
    for judge in ("j1", "j2"):
        # independently: average over seeds per (condition, prompt), then scipy over conditions
        means = (frame.filter(pl.col("judge") == judge).group_by("condition", "prompt_id")
                 .agg(pl.col("outcome").mean()).sort("prompt_id"))
        groups = [means.filter(pl.col("condition") == c)["outcome"].to_numpy() for c in ("base", "fmtA", "fmtB")]
        expected = stats.friedmanchisquare(*groups)
        row = next(r for r in doc["friedman"] if r["judge"] == judge)
        assert row["statistic"] == pytest.approx(expected.statistic, rel=1e-12)
        assert row["p"] == pytest.approx(expected.pvalue, rel=1e-12)
        assert (row["n_blocks"], row["k"]) == (12, 3)


def test_friedman_needs_three_conditions():
    doc = C.analyse(paired(5, 3), boot=50)
    assert doc["friedman"] == [{"judge": "j", "statistic": None, "p": None, "n_blocks": 8, "k": 2}]


def test_holm_by_hand():
    # p = 0.01, 0.04, 0.03, 0.20 (m = 4). Sorted: 0.01*4 = 0.04; 0.03*3 = 0.09; 0.04*2 = 0.08,
    # raised to the running max 0.09; 0.20*1 = 0.20. Back in the input order: 0.04, 0.09, 0.09, 0.20.
    assert C.holm(np.array([0.01, 0.04, 0.03, 0.20])) == pytest.approx([0.04, 0.09, 0.09, 0.20])
    # capped at 1: 0.5*2 = 1.0, 0.6*1 = 0.6 -> running max 1.0
    assert C.holm(np.array([0.6, 0.5])) == pytest.approx([1.0, 1.0])


def test_bootstrap_p_by_hand():
    # <= 0: -0.2 and 0 (2 of 5 = 0.4); >= 0: 0, 0.1, 0.3, 0.5 (4 of 5). p = 2 * 0.4 = 0.8
    assert C.bootstrap_p(np.array([-0.2, 0.0, 0.1, 0.3, 0.5])) == pytest.approx(0.8)
    # <= 0: 1 of 4 -> p = 0.5; a sum that is zero up to rounding counts as zero
    assert C.bootstrap_p(np.array([0.1, 0.2, 0.3, 0.1 + 0.2 - 0.3 - 1e-17 - 0.0])) == pytest.approx(0.5)
    assert C.bootstrap_p(np.array([0.0, 0.0])) == 1.0


def test_interval_of_plus_minus_one_differences_follows_the_binomial():
    # 50 prompts with paired differences +1 (25) and -1 (25), one seed each: a resample has
    # K ~ Binomial(50, 1/2) prompts of +1 and diff* = (2K - 50) / 50. P(K <= 17) = 0.0164 and
    # P(K <= 18) = 0.0325, so the 2.5% quantile is K = 18: lo = -14/50 = -0.28, and hi = +0.28.
    assert stats.binom.cdf(17, 50, 0.5) < 0.02 and stats.binom.cdf(18, 50, 0.5) > 0.03
    row = C.analyse(paired(25, 25), boot=10_000, seed=3)["contrasts"][0]
    assert (row["a"], row["b"], row["diff"]) == ("a", "base", 0.0)
    assert row["lo"] == pytest.approx(-0.28) and row["hi"] == pytest.approx(0.28)
    assert row["p"] == 1.0


def test_p_of_an_unbalanced_pair_follows_the_binomial():
    # 30 of 50 prompts +1, 20 -1: diff* <= 0 iff K <= 25 with K ~ Binomial(50, 0.6); p = 2 P(K <= 25)
    row = C.analyse(paired(30, 20), boot=10_000, seed=1)["contrasts"][0]
    assert row["diff"] == pytest.approx(0.2)
    assert row["p"] == pytest.approx(2 * stats.binom.cdf(25, 50, 0.6), abs=0.02)
    # all prompts won: every resample is +1
    row = C.analyse(paired(6, 0), boot=500)["contrasts"][0]
    assert (row["diff"], row["lo"], row["hi"], row["p"]) == (1.0, 1.0, 1.0, 0.0)


def test_bootstrap_is_reproducible_with_a_seed():
    frame = random_outcomes()
    one, two = C.analyse(frame, boot=2000, seed=11), C.analyse(frame, boot=2000, seed=11)
    assert one == two
    other = C.analyse(frame, boot=2000, seed=12)
    assert [r["lo"] for r in other["contrasts"]] != [r["lo"] for r in one["contrasts"]]
    assert [r["diff"] for r in other["contrasts"]] == [r["diff"] for r in one["contrasts"]]


def test_seeds_are_resampled_within_a_condition():
    # a wins every prompt with seed 0 and loses every prompt with seed 1; base is always 0.5.
    # Per prompt the seed mean is 0.5, so diff = 0, but a resample of seeds is {0,0}, {0,1} or {1,1}
    # (probabilities 1/4, 1/2, 1/4), giving diff* = +0.5, 0, -0.5: the interval is [-0.5, 0.5].
    rows = [{"condition": "a", "seed": s, "prompt_id": f"p{p}", "judge": "j", "outcome": float(1 - s)}
            for s in (0, 1) for p in range(10)]
    rows += [{"condition": "base", "seed": 0, "prompt_id": f"p{p}", "judge": "j", "outcome": 0.5} for p in range(10)]
    row = C.analyse(outcomes(rows), boot=4000, seed=0)["contrasts"][0]
    assert row["diff"] == 0.0 and (row["lo"], row["hi"]) == (-0.5, 0.5)
    assert row["p"] == 1.0


def test_mdd_by_hand():
    # differences 1, 0, 1, 0: sd (n-1) = sqrt(4 * 0.25 / 3) = 0.57735; z_.975 + z_.80 = 1.959964 +
    # 0.841621 = 2.801585; mdd = 2.801585 * 0.57735 / sqrt(4) = 0.80875
    assert C.mdd(math.sqrt(1 / 3), 4) == pytest.approx(0.80875, abs=1e-5)
    rows = []
    for p, d in enumerate([1, 0, 1, 0]):
        rows.append({"condition": "a", "seed": 0, "prompt_id": f"p{p}", "judge": "j", "outcome": float(d)})
        rows.append({"condition": "base", "seed": 0, "prompt_id": f"p{p}", "judge": "j", "outcome": 0.0})
    doc = C.analyse(outcomes(rows), boot=100)
    assert doc["mdd"]["contrasts"][0]["mdd"] == pytest.approx(0.80875, abs=1e-5)
    assert doc["mdd"]["by_judge"][0]["mdd"] == pytest.approx(0.80875, abs=1e-5)
    assert doc["mdd"]["by_judge"][0]["seeds"] == {"a": 1, "base": 1}
    assert C.mdd(0.5, 1) is None


def test_adjusted_contrasts_equal_a_least_squares_fit():
    frame = random_outcomes(n_prompts=9, judges=("j1",), rng_seed=5)
    doc = C.analyse(frame, boot=300, seed=0)
    # independently: outcome ~ prompt dummies + condition dummies (base as reference) + log length
    # ratio + markdown, by numpy lstsq over every (condition, seed, prompt) row
    prompts = sorted(frame["prompt_id"].unique().to_list())
    X = np.column_stack(
        [(frame["prompt_id"] == p).to_numpy().astype(float) for p in prompts]
        + [(frame["condition"] == c).to_numpy().astype(float) for c in ("fmtA", "fmtB")]
        + [np.log(frame["answer_len"].to_numpy() / frame["ref_len"].to_numpy()),
           frame["markdown"].to_numpy().astype(float)])
    beta = np.linalg.lstsq(X, frame["outcome"].to_numpy(), rcond=None)[0]
    effect = {"base": 0.0, "fmtA": beta[len(prompts)], "fmtB": beta[len(prompts) + 1]}
    adjusted = {(r["a"], r["b"]): r for r in doc["adjusted"]}
    assert set(adjusted) == {("fmtA", "fmtB"), ("fmtA", "base"), ("fmtB", "base")}
    for (a, b), row in adjusted.items():
        assert row["diff"] == pytest.approx(effect[a] - effect[b], abs=1e-10)
        assert row["coef_log_len_ratio"] == pytest.approx(beta[-2], abs=1e-10)
        assert row["coef_markdown"] == pytest.approx(beta[-1], abs=1e-10)
        assert row["lo"] <= row["diff"] <= row["hi"] and 0 <= row["p_holm"] <= 1


def test_adjusted_drops_a_covariate_without_variation_and_needs_covariates():
    frame = random_outcomes(n_prompts=6, judges=("j1",), rng_seed=2).with_columns(pl.lit(False).alias("markdown"))
    row = C.analyse(frame, boot=100)["adjusted"][0]
    assert row["coef_markdown"] is None and row["coef_log_len_ratio"] is not None
    doc = C.analyse(random_outcomes(n_prompts=6, covariates=False), boot=100)
    assert doc["adjusted"] == [] and any("adjusted" in n for n in doc["notes"])


def test_concurrence_counts_judges_with_the_same_sign_and_holm_below_005():
    # three judges on 40 prompts: j1 and j2 see a win everywhere, j3 a loss everywhere
    rows = []
    for judge, a_out in (("j1", 1.0), ("j2", 1.0), ("j3", 0.0)):
        for p in range(40):
            rows.append({"condition": "a", "seed": 0, "prompt_id": f"p{p}", "judge": judge, "outcome": a_out})
            rows.append({"condition": "base", "seed": 0, "prompt_id": f"p{p}", "judge": judge, "outcome": 0.5})
    agree = {r["judge"]: r["n_judges_agree"] for r in C.analyse(outcomes(rows), boot=500)["contrasts"]}
    assert agree == {"j1": 2, "j2": 2, "j3": 1}


def test_incomplete_prompts_are_left_out():
    frame = random_outcomes(n_prompts=5, judges=("j1",), covariates=False)
    frame = frame.filter(~((pl.col("condition") == "fmtB") & (pl.col("seed") == 2) & (pl.col("prompt_id") == "p3")))
    doc = C.analyse(frame, boot=100)
    assert doc["friedman"][0]["n_blocks"] == 4
    assert any("1 prompt(s) left out" in n for n in doc["notes"])


def test_read_outcomes_names_line_and_field(tmp_path):
    good = {"condition": "a", "seed": 0, "prompt_id": "p1", "judge": "j", "outcome": 0.5}
    path = tmp_path / "o.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "prompt_id": "p2", "outcome": 0.7}) + "\n")
    with pytest.raises(UserError, match=r"o.jsonl, line 2, field 'outcome'"):
        C.read_outcomes(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(UserError, match=r"line 2: repeats the outcome of line 1"):
        C.read_outcomes(path)
    path.write_text(json.dumps({**good, "seed": "x"}) + "\n")
    with pytest.raises(UserError, match=r"line 1, field 'seed'"):
        C.read_outcomes(path)
    path.write_text(json.dumps({**good, "answer_len": 10, "ref_len": 20, "markdown": True}) + "\n")
    assert C.read_outcomes(path).row(0, named=True)["markdown"] is True


def test_contrasts_cli_json(tmp_path):
    from app.cli import main
    path = tmp_path / "o.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in random_outcomes(n_prompts=6).to_dicts()) + "\n")
    import subprocess
    import sys
    from pathlib import Path
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    proc = subprocess.run([exe, "contrasts", "--outcomes", str(path), "--boot", "300", "--seed", "4", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {"friedman", "contrasts", "adjusted", "mdd"} <= set(doc)
    keys = {"judge", "a", "b", "diff", "lo", "hi", "p", "p_holm", "n_judges_agree"}
    assert len(doc["contrasts"]) == 6 and all(keys <= set(r) for r in doc["contrasts"])
    assert {"judge", "statistic", "p", "n_blocks", "k"} <= set(doc["friedman"][0])
    assert doc == json.loads(subprocess.run([exe, "contrasts", "--outcomes", str(path), "--boot", "300", "--seed", "4",
                                             "--json"], capture_output=True, text=True, timeout=120).stdout)
    assert main(["contrasts", "--outcomes", str(tmp_path / "missing.jsonl")]) == 1


def test_friedman_of_all_tied_blocks_is_none_without_a_warning(recwarn):
    rows = [{"condition": c, "seed": 0, "prompt_id": f"p{p}", "judge": "j", "outcome": 0.5}
            for c in ("a", "b", "base") for p in range(4)]
    doc = C.analyse(outcomes(rows), boot=100)
    assert doc["friedman"][0]["statistic"] is None and doc["friedman"][0]["n_blocks"] == 4
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    assert all((r["diff"], r["lo"], r["hi"], r["p"]) == (0.0, 0.0, 0.0, 1.0) for r in doc["contrasts"])


def test_adding_a_judge_leaves_another_judges_interval_unchanged():
    # Each judge's bootstrap stream is seeded by (seed, judge name), not by its place in the
    # sorted list: "a0" sorts before "j1" and "j2" and would shift a position-based seed.
    two = random_outcomes(judges=("j1", "j2"))
    three = pl.concat([two, random_outcomes(judges=("a0",), rng_seed=5)])
    key = ("judge", "a", "b")
    before = {tuple(r[k] for k in key): (r["lo"], r["hi"], r["p"]) for r in C.analyse(two, boot=500, seed=4)["contrasts"]}
    after = {tuple(r[k] for k in key): (r["lo"], r["hi"], r["p"]) for r in C.analyse(three, boot=500, seed=4)["contrasts"]}
    assert before and all(after[k] == v for k, v in before.items())
    other = {tuple(r[k] for k in key): (r["lo"], r["hi"], r["p"]) for r in C.analyse(three, boot=500, seed=5)["contrasts"]}
    assert any(other[k] != v for k, v in before.items())


def test_holm_has_one_implementation_in_audit():
    import audit
    from audit import _probes
    assert C.holm is audit.holm and _probes.holm is audit.holm and _probes.mcnemar is audit.mcnemar


GOOD = {"condition": "a", "seed": 0, "prompt_id": "p1", "judge": "j", "outcome": 0.5}


@pytest.mark.parametrize("change, message", [
    ({"outcome": True}, "field 'outcome': must be 1, 0.5 or 0, not True"),
    ({"outcome": 2}, "field 'outcome': must be 1, 0.5 or 0, not 2"),
    ({"outcome": 0.7}, "field 'outcome': must be 1, 0.5 or 0, not 0.7"),
    ({"outcome": None}, "field 'outcome': must be 1, 0.5 or 0, not None"),
    ({"seed": "x"}, "field 'seed': required, an integer, not 'x'"),
    ({"seed": True}, "field 'seed': required, an integer, not True"),
    ({"seed": 1.0}, "field 'seed': required, an integer, not 1.0"),
    ({"condition": ""}, "field 'condition': required, a non-empty string, not ''"),
    ({"prompt_id": 5}, "field 'prompt_id': required, a non-empty string, not 5"),
    ({"judge": None}, "field 'judge': required, a non-empty string, not None"),
    ({"answer_len": -1}, "field 'answer_len': a character count (integer >= 0), not -1"),
    ({"answer_len": True}, "field 'answer_len': a character count (integer >= 0), not True"),
    ({"answer_len": "12"}, "field 'answer_len': a character count (integer >= 0), not '12'"),
    ({"ref_len": 2.5}, "field 'ref_len': a character count (integer >= 0), not 2.5"),
    ({"ref_len": -3}, "field 'ref_len': a character count (integer >= 0), not -3"),
    ({"markdown": 2}, "field 'markdown': true or false, not 2"),
    ({"markdown": "yes"}, "field 'markdown': true or false, not 'yes'"),
])
def test_read_outcomes_refuses_a_bad_field_naming_file_line_and_field(tmp_path, change, message):
    path = tmp_path / "o.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "prompt_id": "p2", **change}) + "\n")
    with pytest.raises(UserError, match=re.escape(f"{path}, line 2, {message}")):
        C.read_outcomes(path)


def test_read_outcomes_keeps_every_field_typed(tmp_path):
    rows = [{**GOOD, "outcome": 0, "answer_len": 0, "ref_len": 0, "markdown": 0},
            {**GOOD, "seed": 2, "outcome": 1, "answer_len": 7, "ref_len": 12, "markdown": 1},
            {**GOOD, "condition": "base", "outcome": 1.0, "markdown": True},
            {**GOOD, "judge": "k", "outcome": 0.5, "markdown": False},
            {**GOOD, "prompt_id": "p9"}]
    path = tmp_path / "o.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    frame = C.read_outcomes(path)
    assert frame.schema == C.SCHEMA
    assert frame.to_dicts() == [
        {"condition": "a", "seed": 0, "prompt_id": "p1", "judge": "j", "outcome": 0.0, "answer_len": 0, "ref_len": 0,
         "markdown": False},
        {"condition": "a", "seed": 2, "prompt_id": "p1", "judge": "j", "outcome": 1.0, "answer_len": 7, "ref_len": 12,
         "markdown": True},
        {"condition": "base", "seed": 0, "prompt_id": "p1", "judge": "j", "outcome": 1.0, "answer_len": None,
         "ref_len": None, "markdown": True},
        {"condition": "a", "seed": 0, "prompt_id": "p1", "judge": "k", "outcome": 0.5, "answer_len": None,
         "ref_len": None, "markdown": False},
        {"condition": "a", "seed": 0, "prompt_id": "p9", "judge": "j", "outcome": 0.5, "answer_len": None,
         "ref_len": None, "markdown": None}]
    # without covariates on any row the columns are still there, typed, all null
    path.write_text(json.dumps(GOOD) + "\n")
    frame = C.read_outcomes(path)
    assert frame.schema == C.SCHEMA and frame.row(0) == ("a", 0, "p1", "j", 0.5, None, None, None)


def test_read_outcomes_file_errors_name_the_file(tmp_path):
    path = tmp_path / "o.jsonl"
    with pytest.raises(UserError, match=re.escape(f"{path}: no such file")):
        C.read_outcomes(path)
    path.write_text("\n  \n")
    with pytest.raises(UserError, match=re.escape(f"{path}: no outcome rows")):
        C.read_outcomes(path)
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "seed": 1}) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(UserError, match=re.escape(f"{path}, line 3: repeats the outcome of line 1 "
                                                  "(condition, seed, prompt_id, judge = ('a', 0, 'p1', 'j'))")):
        C.read_outcomes(path)


def test_prompt_differences_by_hand():
    # judge j: condition a with seeds 1 and 2, b and base with seed 0, on prompts p0..p3;
    # judge k disagrees everywhere and must not leak into j's table
    a = {"p0": (1, 0), "p1": (1, 1), "p2": (0, 0.5), "p3": (0.5, 0.5)}
    b = {"p0": 0, "p1": 0.5, "p2": 0, "p3": 1}
    base = {"p0": 0.5, "p1": 0.5, "p2": 0.5, "p3": 0.5}
    rows = [{"condition": "a", "seed": s, "prompt_id": p, "judge": "j", "outcome": float(v[i])}
            for p, v in a.items() for i, s in enumerate((1, 2))]
    rows += [{"condition": c, "seed": 0, "prompt_id": p, "judge": "j", "outcome": float(v)}
             for c, vals in (("b", b), ("base", base)) for p, v in vals.items()]
    rows += [{**r, "judge": "k", "outcome": 1.0 - r["outcome"]} for r in list(rows)]
    frame = outcomes(rows)
    # seed means of a: p0 0.5, p1 1, p2 0.25, p3 0.5. a - b: p0 +0.5, p1 +0.5, p2 +0.25, p3 -0.5;
    # largest first, equal differences by prompt id
    got = C.prompt_differences(frame, "j", "a", "b")
    assert got.columns == ["prompt_id", "mean_a", "mean_b", "diff"]
    assert got.rows() == [("p0", 0.5, 0.0, 0.5), ("p1", 1.0, 0.5, 0.5), ("p2", 0.25, 0.0, 0.25),
                          ("p3", 0.5, 1.0, -0.5)]
    # b - base: p0 -0.5, p1 0, p2 -0.5, p3 +0.5
    assert C.prompt_differences(frame, "j", "b", "base").rows() == [
        ("p3", 1.0, 0.5, 0.5), ("p1", 0.5, 0.5, 0.0), ("p0", 0.0, 0.5, -0.5), ("p2", 0.0, 0.5, -0.5)]
    # judge k's outcomes are 1 - j's: a - b there is the negative
    assert C.prompt_differences(frame, "k", "a", "b")["diff"].to_list() == [0.5, -0.25, -0.5, -0.5]
    # an outcome that did not parse (null) leaves its prompt incomplete: p2 is left out
    holed = frame.with_columns(pl.when((pl.col("condition") == "b") & (pl.col("prompt_id") == "p2"))
                               .then(None).otherwise(pl.col("outcome")).alias("outcome"))
    assert C.prompt_differences(holed, "j", "a", "b")["prompt_id"].to_list() == ["p0", "p1", "p3"]
    # a condition the judge does not have: an empty, typed table
    empty = {"prompt_id": pl.String, "mean_a": pl.Float64, "mean_b": pl.Float64, "diff": pl.Float64}
    for x, y in (("a", "zz"), ("zz", "a"), ("zz", "yy")):
        got = C.prompt_differences(frame, "j", x, y)
        assert got.height == 0 and got.schema == empty


def test_covariates_by_hand():
    # log_len_ratio = log(max(answer_len, 1) / max(ref_len, 1)); an empty answer or reference counts as 1
    frame = outcomes([{**GOOD, "prompt_id": f"p{i}", "answer_len": a, "ref_len": r, "markdown": md}
                      for i, (a, r, md) in enumerate([(0, 10, True), (1, 1, False), (10, 0, False), (30, 20, True),
                                                      (1, 2, False), (2, 1, True)])])
    got = C.covariates(frame)
    assert got["log_len_ratio"].to_list() == pytest.approx(
        [math.log(1 / 10), 0.0, math.log(10), math.log(1.5), math.log(0.5), math.log(2)], abs=1e-12)
    assert got["md"].to_list() == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]


def least_squares(frame, judge):
    """outcome ~ prompt dummies + condition dummies (base as reference) + log length ratio +
    markdown by numpy lstsq over one judge's rows: (condition effects, coefficients)."""
    rows = frame.filter(pl.col("judge") == judge)
    prompts = sorted(rows["prompt_id"].unique().to_list())
    conds = [c for c in sorted(rows["condition"].unique().to_list()) if c != "base"]
    X = np.column_stack(
        [(rows["prompt_id"] == p).to_numpy().astype(float) for p in prompts]
        + [(rows["condition"] == c).to_numpy().astype(float) for c in conds]
        + [np.log(rows["answer_len"].to_numpy() / rows["ref_len"].to_numpy()),
           rows["markdown"].to_numpy().astype(float)])
    beta = np.linalg.lstsq(X, rows["outcome"].to_numpy(), rcond=None)[0]
    return {"base": 0.0, **{c: beta[len(prompts) + i] for i, c in enumerate(conds)}}, beta[-2:]


def test_adjusted_contrasts_are_fitted_per_judge():
    # two judges with different outcomes and covariates: each judge's fit uses its own rows only
    frame = random_outcomes(n_prompts=7, judges=("j1", "j2"), rng_seed=8)
    doc = C.analyse(frame, boot=50, seed=0)
    for judge in ("j1", "j2"):
        effect, (coef_len, coef_md) = least_squares(frame, judge)
        rows = [r for r in doc["adjusted"] if r["judge"] == judge]
        assert len(rows) == 3
        for row in rows:
            assert row["diff"] == pytest.approx(effect[row["a"]] - effect[row["b"]], abs=1e-10)
            assert row["coef_log_len_ratio"] == pytest.approx(coef_len, abs=1e-10)
            assert row["coef_markdown"] == pytest.approx(coef_md, abs=1e-10)


def test_adjusted_drops_constant_covariates_of_any_size():
    # every answer twice its reference (log ratio log 2 everywhere) and every answer in markdown:
    # both are absorbed by the fixed effects, both dropped, and `adjusted` equals the contrasts
    frame = random_outcomes(n_prompts=6, judges=("j1",), rng_seed=3).with_columns(
        (2 * pl.col("ref_len")).alias("answer_len"), pl.lit(True).alias("markdown"))
    doc = C.analyse(frame, boot=100, seed=1)
    assert len(doc["adjusted"]) == 3
    for adj, raw in zip(doc["adjusted"], doc["contrasts"]):
        assert (adj["coef_log_len_ratio"], adj["coef_markdown"]) == (None, None)
        assert (adj["a"], adj["b"]) == (raw["a"], raw["b"]) and adj["diff"] == pytest.approx(raw["diff"], abs=1e-12)


def test_no_variation_left_means_within_1e9_of_the_covariates_size():
    # two conditions x two prompts, one seed: a log ratio with an interaction e in one cell has a
    # residual e x (1/4, -1/4, -1/4, 1/4) after both fixed effects, norm e/2. It is kept when that
    # exceeds 1e-9 x (1 + |log ratio column|).
    def frame(answer, ref):
        return outcomes([{"condition": c, "seed": 0, "prompt_id": p, "judge": "j", "outcome": float(i % 2),
                          "answer_len": answer[i], "ref_len": ref[i], "markdown": False}
                         for i, (c, p) in enumerate([("a", "p0"), ("a", "p1"), ("base", "p0"), ("base", "p1")])])
    g = 10 ** 9
    # ratios ~1: |column| ~ 0, tolerance 1e-9. e = log(1 + 3e-9) -> residual 1.5e-9: kept;
    # e = log(1 + 1e-9) -> 0.5e-9: dropped
    assert C.adjust(frame([g, g, g, g + 3], [g] * 4), "j", ["p0", "p1"])[1]["log_len_ratio"] is not None
    assert C.adjust(frame([g, g, g, g + 1], [g] * 4), "j", ["p0", "p1"])[1]["log_len_ratio"] is None
    # ratios ~1e9: |column| = 2 x log(1e9) = 41.4, tolerance 4.2e-8; e = 1e-8 -> residual 5e-9: dropped
    assert C.adjust(frame([g, g, g, g + 10], [1] * 4), "j", ["p0", "p1"])[1]["log_len_ratio"] is None


def test_mdd_needs_two_prompts_and_a_finite_sd():
    # n = 2: (z_.975 + z_.80) x 0.5 / sqrt(2) = 2.801585 x 0.353553 = 0.990510
    assert C.mdd(0.5, 2) == pytest.approx(0.990510, abs=1e-6)
    assert C.mdd(0.5, 2) == pytest.approx((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * 0.5 / math.sqrt(2))
    assert C.mdd(0.5, 1) is None and C.mdd(None, 5) is None
    assert C.mdd(math.nan, 5) is None and C.mdd(math.inf, 5) is None


def test_friedman_of_two_blocks_equals_scipy():
    # three conditions on two prompts (the fewest blocks the test takes)
    rows = [{"condition": c, "seed": 0, "prompt_id": p, "judge": "j", "outcome": v}
            for c, vals in (("a", (1.0, 0.5)), ("b", (0.0, 1.0)), ("base", (0.5, 0.0))) for p, v in zip(("p0", "p1"), vals)]
    row = C.analyse(outcomes(rows), boot=50)["friedman"][0]
    expected = stats.friedmanchisquare([1.0, 0.5], [0.0, 1.0], [0.5, 0.0])
    assert (row["n_blocks"], row["k"]) == (2, 3)
    assert row["statistic"] == pytest.approx(expected.statistic) and row["p"] == pytest.approx(expected.pvalue)


def test_sd_of_the_paired_differences_needs_two_prompts():
    # one prompt: no sd (ddof 1), no mdd
    doc = C.analyse(paired(1, 0), boot=50)
    assert doc["contrasts"][0]["sd_diff"] is None and doc["mdd"]["contrasts"][0]["sd_diff"] is None
    assert doc["mdd"]["by_judge"][0]["sd_diff"] is None and doc["mdd"]["by_judge"][0]["mdd"] is None
    # two prompts, differences +1 and -1: sd = sqrt(((1 - 0)^2 + (-1 - 0)^2) / 1) = sqrt(2)
    doc = C.analyse(paired(1, 1), boot=50)
    assert doc["contrasts"][0]["sd_diff"] == pytest.approx(math.sqrt(2))
    assert doc["mdd"]["by_judge"][0]["sd_diff"] == pytest.approx(math.sqrt(2))


def test_no_complete_prompt_means_no_contrasts():
    # every prompt lacks base's outcome for one of the two: nothing to contrast, no error
    rows = [{"condition": "a", "seed": 0, "prompt_id": f"p{p}", "judge": "j", "outcome": 1.0} for p in range(3)]
    rows += [{"condition": "base", "seed": s, "prompt_id": f"p{p}", "judge": "j", "outcome": 0.0}
             for p in range(3) for s in (0, 1) if (p + s) % 2]
    doc = C.analyse(outcomes(rows), boot=50)
    assert doc["contrasts"] == [] and doc["friedman"][0]["n_blocks"] == 0
    assert any("3 prompt(s) left out" in n for n in doc["notes"])


def test_replicates_beyond_one_chunk():
    # 1,500 replicates = a chunk of 1,000 and one of 500; a always wins: every replicate is +1
    assert C.CHUNK == 1000
    row = C.analyse(paired(6, 0), boot=1500, seed=2)["contrasts"][0]
    assert (row["diff"], row["lo"], row["hi"], row["p"]) == (1.0, 1.0, 1.0, 0.0)
    d = C.design(paired(6, 0), "j")
    reps = C.boot_condition_means(d, 1500, np.random.default_rng(0))
    assert reps.shape == (1500, 2)
    assert reps[:, 0] == pytest.approx(np.ones(1500)) and reps[:, 1] == pytest.approx(np.zeros(1500))


def test_interval_ends_are_rounded_to_12_decimals():
    # 6 prompts, a wins 4 (+1) and ties 2 (0): a replicate is K/6 with K ~ Binomial(6, 2/3).
    # P(K <= 1) = 0.018 < 0.025 < P(K <= 2) = 0.100, so lo = 2/6 (to 12 decimals, as every
    # replicate is rounded before comparison); P(K = 6) = 0.088, so hi = 1
    assert stats.binom.cdf(1, 6, 2 / 3) < 0.02 and stats.binom.cdf(2, 6, 2 / 3) > 0.09
    rows = []
    for p in range(6):
        rows.append({"condition": "a", "seed": 0, "prompt_id": f"p{p}", "judge": "j", "outcome": 1.0 if p < 4 else 0.0})
        rows.append({"condition": "base", "seed": 0, "prompt_id": f"p{p}", "judge": "j", "outcome": 0.0})
    row = C.analyse(outcomes(rows), boot=4000, seed=0)["contrasts"][0]
    assert row["lo"] == 0.333333333333 and row["hi"] == 1.0


def test_concurrence_by_hand():
    def contrast(judge, diff, p_holm, a="a"):
        return {"judge": judge, "a": a, "b": "base", "diff": diff, "p_holm": p_holm}
    rows = [contrast("j1", 2e-13, 0.01),     # zero to 12 decimals: no sign, like j2
            contrast("j2", 0.0, 0.01),
            contrast("j3", 0.3, 0.01),
            contrast("j4", 0.2, 0.05),       # p_holm 0.05 is not below 0.05
            contrast("j5", -0.1, 0.01),
            contrast("j1", 0.3, 0.01, a="c")]                # another contrast: counted apart
    C.concurrence(rows)
    # j1 and j2 agree (no sign, p_holm < 0.05); the positive ones: only j3 has p_holm < 0.05
    assert [r["n_judges_agree"] for r in rows] == [2, 2, 1, 1, 1, 1]


def test_bootstrap_p_rounds_to_12_decimals():
    # 2e-13 is zero to 12 decimals: <= 0 for 1 of 2, >= 0 for 2 of 2: p = 2 x 0.5 = 1
    assert C.bootstrap_p(np.array([2e-13, 0.1])) == 1.0
    assert C.bootstrap_p(np.array([6e-13, 0.1])) == 0.0


def test_analyse_defaults_and_boot_bounds():
    frame = paired(30, 20)
    # DESIGN.md's `--boot 10000` and seed 0 are the defaults
    doc = C.analyse(frame)
    assert doc == C.analyse(frame, boot=10_000, seed=0)
    assert (doc["mdd"]["alpha"], doc["mdd"]["power"]) == (0.05, 0.80)
    # one replicate is enough (a always wins: it is +1); none is refused
    row = C.analyse(paired(6, 0), boot=1)["contrasts"][0]
    assert (row["lo"], row["hi"], row["p"]) == (1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="^boot must be at least 1$"):
        C.analyse(frame, boot=0)


def test_the_adjusted_note():
    note = "adjusted: no answer_len, ref_len and markdown on every row; nothing to adjust for"
    assert C.analyse(paired(3, 2), boot=20)["notes"] == [note]
    assert C.analyse(outcomes([]), boot=20)["notes"] == [note]          # no rows: nothing to adjust
    one = outcomes([{**GOOD, "answer_len": 5, "ref_len": 9, "markdown": False}])
    doc = C.analyse(one, boot=20)
    assert doc["notes"] == [] and doc["adjusted"] == []                  # covariates there, no pair


def test_mdd_tables_by_hand():
    # judge j: conditions a, b, base (one seed) on three prompts; judge k: a and base
    j = {"a": (1, 1, 0), "b": (0, 1, 0.5), "base": (0, 0, 0)}
    k = {"a": (1, 0, 1), "base": (0, 0, 0)}
    rows = [{"condition": c, "seed": 0, "prompt_id": f"p{i}", "judge": judge, "outcome": float(v)}
            for judge, spec in (("j", j), ("k", k)) for c, vals in spec.items() for i, v in enumerate(vals)]
    doc = C.analyse(outcomes(rows), boot=50)
    # j: a-b = (1, 0, -0.5), mean 1/6, sd^2 = (25 + 1 + 16)/36 / 2 = 21/36
    #    a-base = (1, 1, 0), sd^2 = (1 + 1 + 4)/9 / 2 = 1/3;  b-base = (0, 1, 0.5), sd^2 = 0.5 / 2 = 1/4
    #    root mean square: sqrt((21/36 + 12/36 + 9/36) / 3) = sqrt(7/18)
    # k: a-base = (1, 0, 1), sd^2 = 1/3
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    sd = {("j", "a", "b"): math.sqrt(21 / 36), ("j", "a", "base"): math.sqrt(1 / 3), ("j", "b", "base"): 0.5,
          ("k", "a", "base"): math.sqrt(1 / 3)}
    assert doc["mdd"]["contrasts"] == [
        {"judge": jg, "a": a, "b": b, "n_prompts": 3, "sd_diff": pytest.approx(s), "mdd": pytest.approx(z * s / math.sqrt(3))}
        for (jg, a, b), s in sd.items()]
    rms = math.sqrt(7 / 18)
    assert doc["mdd"]["by_judge"] == [
        {"judge": "j", "n_prompts": 3, "seeds": {"a": 1, "b": 1, "base": 1}, "sd_diff": pytest.approx(rms),
         "mdd": pytest.approx(z * rms / math.sqrt(3))},
        {"judge": "k", "n_prompts": 3, "seeds": {"a": 1, "base": 1}, "sd_diff": pytest.approx(math.sqrt(1 / 3)),
         "mdd": pytest.approx(z * math.sqrt(1 / 3) / math.sqrt(3))}]


def test_each_judge_resamples_with_its_own_stream():
    # the same outcomes under two judge names: the streams are keyed by the name, so the intervals
    # (of the contrasts and of the adjusted contrasts) are drawn apart
    one = random_outcomes(n_prompts=10, judges=("j1",), rng_seed=4)
    frame = pl.concat([one, one.with_columns(pl.lit("j2").alias("judge"))])
    doc = C.analyse(frame, boot=400, seed=0)
    for part in ("contrasts", "adjusted"):
        by = {(r["judge"], r["a"], r["b"]): (r["diff"], r["lo"], r["hi"]) for r in doc[part]}
        pairs = [(a, b) for (jg, a, b) in by if jg == "j1"]
        assert len(pairs) == 3
        assert all(by[("j1", a, b)][0] == pytest.approx(by[("j2", a, b)][0]) for a, b in pairs)
        assert any(by[("j1", a, b)][1:] != by[("j2", a, b)][1:] for a, b in pairs)
