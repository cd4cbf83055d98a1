"""Confidence calibration against human pairwise labels (issue 22 §3; audit/_confidence.py): p
from a label distribution or from sample shares, ECE, Brier and the reliability bins by hand on
ten items, pool-adjacent-violators against scikit-learn's IsotonicRegression (here only: not a
runtime dependency), the cross-fitting over prompts, and `calibrate` on a database file."""

import json
import math
import subprocess

import numpy as np
import polars as pl
import pytest

from audit import calibrate, calibrate_frames
from audit._confidence import (bins, brier, call_probabilities, cell_confidence, cross_fitted, distribution_p, ece,
                               isotonic_fit, isotonic_predict, labelled, reliability, sample_p)
from tests.conftest import EXE


# ten judgements: p (the judge's probability that x is better) and y (1: the humans said x)
P = np.array([1 - 0.9, 0.12, 0.3, 0.35, 0.6, 0.62, 0.68, 0.9, 0.95, 1.0])
Y = np.array([0, 1, 0, 0, 1, 0, 1, 1, 1, 1.0])


def test_ece_brier_and_bins_by_hand_on_ten_items():
    # 1 - 0.9 = 0.09999999999999998 goes to bin 1 (p rounded to 12 decimals); p = 1 to bin 9.
    # bin 1: p .1, .12 (mean .11), y 0, 1 (mean .5): |.5 - .11| = .39, weight 2/10
    # bin 3: p .3, .35 (mean .325), y 0, 0: .325, weight 2/10
    # bin 6: p .6, .62, .68 (mean 1.9/3), y 1, 0, 1 (mean 2/3): .1/3, weight 3/10
    # bin 9: p .9, .95, 1 (mean .95), y 1, 1, 1: .05, weight 3/10
    # ECE = (2 * .39 + 2 * .325 + 3 * .1/3 + 3 * .05) / 10 = (.78 + .65 + .1 + .15) / 10 = .168
    assert bins(P).tolist() == [1, 1, 3, 3, 6, 6, 6, 9, 9, 9]
    assert ece(P, Y) == pytest.approx(0.168, abs=1e-12)
    # (p - y)^2: .01 .7744 .09 .1225 .16 .3844 .1024 .01 .0025 0 -> sum 1.6562, Brier .16562
    assert brier(P, Y) == pytest.approx(0.16562, abs=1e-12)
    rows = reliability(P, Y)
    assert [(r["lo"], r["hi"], r["n"]) for r in rows] == [(0.1, 0.2, 2), (0.3, 0.4, 2), (0.6, 0.7, 3), (0.9, 1.0, 3)]
    assert [r["mean_p"] for r in rows] == pytest.approx([0.11, 0.325, 1.9 / 3, 0.95], abs=1e-12)
    assert [r["mean_y"] for r in rows] == pytest.approx([0.5, 0.0, 2 / 3, 1.0], abs=1e-12)


def test_bin_edges_belong_to_the_bin_above_and_every_bin_can_fill():
    # k/10 starts bin k (0.3 * 10 = 3.0000000000000004 and 0.7 * 10 = 7.000000000000001 stay
    # there; 0.6 - 0.1 = 0.49999999999999994 is 0.5 after rounding); just below k/10 is bin k - 1
    edges = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.6 - 0.1, 0.6, 0.7, 0.8, 0.9, 1.0])
    assert bins(edges).tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    assert bins(np.array([0.0999999, 0.5999999, 0.9999999])).tolist() == [0, 5, 9]
    rows = reliability(np.arange(10) / 10 + 0.05, np.ones(10))
    assert [r["lo"] for r in rows] == pytest.approx([k / 10 for k in range(10)])


def test_a_perfectly_calibrated_and_a_perfectly_wrong_judge():
    # p = .25 on 4 judgements with one y = 1: ECE 0; Brier (3 * .0625 + .5625) / 4 = .1875
    p, y = np.full(4, 0.25), np.array([0, 0, 0, 1.0])
    assert ece(p, y) == pytest.approx(0.0, abs=1e-12) and brier(p, y) == pytest.approx(0.1875, abs=1e-12)
    # p = 1 where y = 0 and p = 0 where y = 1: ECE 1, Brier 1
    assert ece(np.array([1.0, 0.0]), np.array([0, 1.0])) == 1.0 and brier(np.array([1.0, 0.0]), np.array([0, 1.0])) == 1.0


def test_p_from_a_label_distribution():
    # call 0: A++ .5, A+ .2, TIE .2, B+ .1 -> (.7 + .2 / 2) / 1 = .8
    # call 1: A+ .3, TIE .1, B++ .4 (total .8, the labels under 1e-4 dropped) -> (.3 + .05) / .8 = .4375
    # call 2: B+ .6, B++ .4 -> 0; call 3: TIE 1 -> .5; call 4: no mass at all -> NaN
    call = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4])
    values = np.array([2, 1, 0, -1, 1, 0, -2, -1, -2, 0, 1.0])
    probs = np.array([0.5, 0.2, 0.2, 0.1, 0.3, 0.1, 0.4, 0.6, 0.4, 1.0, 0.0])
    got = distribution_p(call, values, probs, 6)
    assert got[:4].tolist() == pytest.approx([0.8, 0.4375, 0.0, 0.5], abs=1e-12)
    assert np.isnan(got[4]) and np.isnan(got[5])                        # call 5 has no entry


def test_p_from_the_shares_of_parsed_samples():
    # call 0: +2, 0, -1 and one unparsed -> (1 + .5 + 0) / 3 = .5; call 1: +1, +1 -> 1;
    # call 2: -1, 0 -> .25; call 3: unparsed only -> NaN
    call = np.array([0, 0, 0, 0, 1, 1, 2, 2, 3])
    values = np.array([2, 0, -1, np.nan, 1, 1, -1, 0, np.nan])
    got = sample_p(call, values, 4)
    assert got[:3].tolist() == pytest.approx([0.5, 1.0, 0.25], abs=1e-12) and np.isnan(got[3])


def _sample_rows(rows):
    schema = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "prompt_idx": pl.Int64,
              "a_idx": pl.Int64, "b_idx": pl.Int64, "sample": pl.Int64, "value": pl.Float64,
              "dist_values": pl.List(pl.Float64), "dist_probs": pl.List(pl.Float64)}
    keys = list(schema)
    return pl.DataFrame([dict(zip(keys, r)) for r in rows], schema=schema)


def test_each_cell_takes_its_probabilities_from_one_source():
    rows = _sample_rows([
        # cell d (distribution): call (0; 0, 1) has none in sample 0 and one in sample 1: that one,
        # A+ .6, B+ .4 -> .6; call (1; 1, 0) has sample 0's: TIE .5, B++ .5 -> .25 (sample 1's,
        # A++ 1, is not read); call (2; 0, 1) has none: no p
        ("j", "t", "d", 0, 0, 1, 0, 1.0, None, None),
        ("j", "t", "d", 0, 0, 1, 1, 1.0, [1.0, -1.0], [0.6, 0.4]),
        ("j", "t", "d", 1, 1, 0, 1, 2.0, [2.0], [1.0]),
        ("j", "t", "d", 1, 1, 0, 0, 0.0, [0.0, -2.0], [0.5, 0.5]),
        ("j", "t", "d", 2, 0, 1, 0, 1.0, None, None),
        # cell s (samples): call (0; 0, 1) +1, -1, unparsed -> .5; (1; 0, 1) unparsed only: no p;
        # (2; 1, 0): one sample, 0 -> .5 (a repeated cell: every call with a parsed sample counts)
        ("j", "t", "s", 0, 0, 1, 0, 1.0, None, None),
        ("j", "t", "s", 0, 0, 1, 1, -1.0, None, None),
        ("j", "t", "s", 0, 0, 1, 2, None, None, None),
        ("j", "t", "s", 1, 0, 1, 0, None, None, None),
        ("j", "t", "s", 2, 1, 0, 0, 0.0, None, None),
        # cell g: asked once, no distribution: no probability at all
        ("j", "t", "g", 0, 0, 1, 0, 1.0, None, None)])
    got = call_probabilities(rows).sort("decoding", "prompt_idx")
    assert got.select("decoding", "prompt_idx", "a_idx", "b_idx", "source").rows() == [
        ("d", 0, 0, 1, "distribution"), ("d", 1, 1, 0, "distribution"),
        ("s", 0, 0, 1, "samples"), ("s", 2, 1, 0, "samples")]
    assert got["p"].to_list() == pytest.approx([0.6, 0.25, 0.5, 0.5], abs=1e-12)
    assert call_probabilities(rows.head(0)).height == 0


def test_p_turns_to_the_labels_orientation_and_human_ties_are_left_out():
    # pairs: (prompt 0: x = 1, y = 0, humans A), (prompt 1: x = 0, humans B), (prompt 2: tie)
    pairs = pl.DataFrame({"prompt_idx": [0, 1, 2], "lo": [0, 0, 0], "hi": [1, 1, 1], "x": [1, 0, 0],
                          "human": [0, 1, 2]})
    probs = pl.DataFrame({"judge": ["j"] * 4, "format": ["t"] * 4, "decoding": ["c"] * 4, "prompt_idx": [0, 0, 1, 2],
                          "a_idx": [0, 1, 1, 0], "b_idx": [1, 0, 0, 1], "source": ["distribution"] * 4,
                          "p": [0.9, 0.7, 0.2, 0.5]})
    got = labelled(probs, pairs).sort("prompt_idx", "p")
    # prompt 0: slot A = 0 is not x: 1 - .9; slot A = 1 is x: .7; y = 1 (A). prompt 1: slot A = 1
    # is not x: 1 - .2 = .8, y = 0 (B). prompt 2: a human tie, left out.
    assert got["p"].to_list() == pytest.approx([1 - 0.9, 0.7, 0.8], abs=1e-12)
    assert got["y"].to_list() == [1.0, 1.0, 0.0] and got["prompt_idx"].to_list() == [0, 0, 1]


def test_pool_adjacent_violators_by_hand():
    # x .1 .2 .3 .3 .5, y 0 1 0 0 1: the two at .3 pool to (0, weight 2); 1 then 0 violate:
    # (1 * 1 + 0 * 2) / 3 = 1/3 over .2 and .3 -> fitted 0, 1/3, 1/3, 1
    fit = isotonic_fit(np.array([0.3, 0.1, 0.5, 0.3, 0.2]), np.array([0, 0, 1, 0, 1.0]))
    assert fit[0].tolist() == [0.1, 0.2, 0.3, 0.5]
    assert fit[1].tolist() == pytest.approx([0, 1 / 3, 1 / 3, 1], abs=1e-12)
    # between the points linear (.4: 1/3 + (2/3) / 2 = 2/3), clipped outside them
    assert isotonic_predict(fit, np.array([0.05, 0.4, 0.9])).tolist() == pytest.approx([0, 2 / 3, 1], abs=1e-12)
    # a violation that reaches back two blocks: y 0 .6 .8 .1 -> .8, .1 pool to .45, then .6 > .45
    # pools the three: (.6 + .8 + .1) / 3 = .5
    fit = isotonic_fit(np.arange(4) / 10, np.array([0, 0.6, 0.8, 0.1]))
    assert fit[1].tolist() == pytest.approx([0, 0.5, 0.5, 0.5], abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_isotonic_equals_sklearn_with_ties(seed):
    from sklearn.isotonic import IsotonicRegression
    rng = np.random.default_rng(seed)
    x = np.round(rng.random(80), 1)                      # many ties in x
    y = (rng.random(80) < x).astype(float)
    new = np.concatenate([rng.random(30) * 1.2 - 0.1, x[:5]])
    ref = IsotonicRegression(out_of_bounds="clip").fit(x, y)
    fit = isotonic_fit(x, y)
    assert isotonic_predict(fit, x) == pytest.approx(ref.predict(x), abs=1e-12)
    assert isotonic_predict(fit, new) == pytest.approx(ref.predict(new), abs=1e-12)


def test_cross_fitting_over_two_prompts_by_hand():
    # prompt 0: p .2 .8, y 0 1; prompt 1: p .4 .6, y 1 0 -> two folds, one prompt each.
    # prompt 0 from prompt 1's fit (1, 0 pool to .5): .5, .5; prompt 1 from prompt 0's fit
    # (.2 -> 0, .8 -> 1): .4 -> 1/3, .6 -> 2/3
    p, y, prompt = np.array([0.2, 0.8, 0.4, 0.6]), np.array([0, 1, 1, 0.0]), np.array([0, 0, 1, 1])
    got = cross_fitted(p, y, prompt, np.random.default_rng(0))
    assert got.tolist() == pytest.approx([0.5, 0.5, 1 / 3, 2 / 3], abs=1e-12)
    # ECE of those: bin 5 (.5, .5; y 0, 1): 0; bin 3 (1/3; y 1): 2/3; bin 6 (2/3; y 0): 2/3 ->
    # (0 + 2/3 + 2/3) / 4 = 1/3
    assert ece(got, y) == pytest.approx(1 / 3, abs=1e-12)
    assert cross_fitted(p, y, np.zeros(4), np.random.default_rng(0)) is None       # one prompt: no fold to fit on


def test_cross_fitting_deals_prompts_to_five_seeded_folds():
    from sklearn.isotonic import IsotonicRegression
    rng = np.random.default_rng(5)
    prompt = np.repeat(np.arange(12), 3)
    p = np.round(rng.random(36), 2)
    y = (rng.random(36) < p).astype(float)
    got = cross_fitted(p, y, prompt, np.random.default_rng(9))
    # the reference: the same seeded deal (position in a shuffle of the 12 prompts, mod 5), each
    # fold predicted by scikit-learn fitted on the other four
    fold = (np.argsort(np.random.default_rng(9).permutation(12)) % 5)[prompt]
    want = np.empty(36)
    for f in range(5):
        test = fold == f
        want[test] = IsotonicRegression(out_of_bounds="clip").fit(p[~test], y[~test]).predict(p[test])
    assert got == pytest.approx(want, abs=1e-12)
    assert len({tuple(np.unique(fold[prompt == q])) for q in range(12)}) == 5        # a prompt stays whole
    # three prompts: three folds, each fitted on the other two
    three = prompt < 3
    got3 = cross_fitted(p[three], y[three], prompt[three], np.random.default_rng(1))
    want3 = np.concatenate([IsotonicRegression(out_of_bounds="clip").fit(p[three & (prompt != q)], y[three & (prompt != q)])
                            .predict(p[prompt == q]) for q in range(3)])
    assert got3 == pytest.approx(want3, abs=1e-12)


def test_cell_confidence_keys():
    none = cell_confidence([], [], [], None, None)
    assert none == dict.fromkeys(["n_prob", "probability_source", "ece", "brier", "ece_isotonic", "reliability"])
    empty = cell_confidence(np.array([]), np.array([]), np.array([]), "samples", np.random.default_rng(0))
    assert empty["n_prob"] == 0 and empty["probability_source"] == "samples" and empty["ece"] is None
    one = cell_confidence(P, Y, np.zeros(10), "distribution", np.random.default_rng(0))
    assert (one["n_prob"], one["ece_isotonic"]) == (10, None)
    assert one["ece"] == pytest.approx(0.168, abs=1e-12) and one["brier"] == pytest.approx(0.16562, abs=1e-12)
    assert one["reliability"] == reliability(P, Y)


def _pool_with_calls(tmp_path, write_jsonl):
    """Six prompts with candidates x, y; humans: A A B B A tie on (x, y), given as (y, x) on p1.
    Judge j, tournament, constrained with distributions (x in slot A on p0-p2, in slot B on
    p3-p5); the same judge greedy, asked twice per call; a judge k asked once, no distribution."""
    from ingest.scoring import import_verdicts
    from ingest.store import import_labels, import_pool
    path = tmp_path / "conf.duckdb"
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c,
                                                  "response": f"{c} {p}"} for p in range(6) for c in "xy"]), "conf")
    humans = ["A", "B", "B", "B", "A", "tie"]           # p1 given as (y, x) with B: x is better there
    labels = [{"prompt_id": f"p{p}", "a_id": "y" if p == 1 else "x", "b_id": "x" if p == 1 else "y", "label": h}
              for p, h in enumerate(humans)]
    dists = [{"A++": 0.6, "A+": 0.2, "TIE": 0.2},       # p0, x in A: .8 + .1 = .9
             {"A+": 0.5, "B+": 0.5},                    # p1, x in A: .5
             {"TIE": 0.4, "B+": 0.6},                   # p2, x in A: .2
             {"A+": 0.3, "B++": 0.7},                   # p3, x in B: 1 - .3 = .7
             {"B+": 0.75, "A+": 0.25},                  # p4, x in B: 1 - .25 = .75
             {"A++": 1.0}]                              # p5: a human tie, left out
    verdicts = []
    for p, d in enumerate(dists):
        a, b = ("x", "y") if p < 3 else ("y", "x")
        verdicts.append({"judge": "j", "format": "tournament", "prompt_id": f"p{p}", "a_id": a, "b_id": b,
                         "raw": max(d, key=d.get), "decoding": "constrained", "label_probs": d})
        for s, raw in enumerate(["A+", "B+"] if p % 2 else ["A+", "A++"]):
            verdicts.append({"judge": "j", "format": "tournament", "prompt_id": f"p{p}", "a_id": "x", "b_id": "y",
                             "raw": raw, "sample": s})
        verdicts.append({"judge": "k", "format": "tournament", "prompt_id": f"p{p}", "a_id": "x", "b_id": "y",
                         "raw": "A+"})
    # judge m: a distribution only on p5, which the humans tied; a call on p0 without one
    verdicts += [{"judge": "m", "format": "tournament", "prompt_id": "p5", "a_id": "x", "b_id": "y", "raw": "A+",
                  "decoding": "constrained", "label_probs": {"A+": 1.0}},
                 {"judge": "m", "format": "tournament", "prompt_id": "p0", "a_id": "x", "b_id": "y", "raw": "A+",
                  "decoding": "constrained"}]
    import_verdicts(path, write_jsonl("v.jsonl", verdicts), "conf")
    import_labels(path, write_jsonl("l.jsonl", labels), "conf")
    return path


def test_calibrate_reports_confidence_per_cell(tmp_path, write_jsonl):
    path = _pool_with_calls(tmp_path, write_jsonl)
    cells = {(c["judge"], c["decoding"]): c for c in calibrate(path, "conf", n_boot=50).to_dicts()}
    d = cells[("j", "constrained")]
    # the pairs are oriented as their label: x on p0, p2-p5, y on p1 (whose label B says y is not
    # better: y = 0, and p = 1 - .5 for y). p .9 .5 .2 .7 .75 with y 1 0 0 0 1; p5 is a tie.
    # bins: 2 (.2; y 0): .2; 5 (.5; 0): .5; 7 (.7, .75; 0, 1: mean .725, .5): .225; 9 (.9; 1): .1
    # ECE = (.2 + .5 + 2 * .225 + .1) / 5 = 1.25 / 5 = .25
    # Brier = (.01 + .25 + .04 + .49 + .0625) / 5 = .8525 / 5 = .1705
    assert (d["n_prob"], d["probability_source"]) == (5, "distribution")
    assert d["ece"] == pytest.approx(0.25, abs=1e-12) and d["brier"] == pytest.approx(0.1705, abs=1e-12)
    assert [(r["lo"], r["n"]) for r in d["reliability"]] == [(0.2, 1), (0.5, 1), (0.7, 2), (0.9, 1)]
    assert d["reliability"][2]["mean_p"] == pytest.approx(0.725) and d["reliability"][2]["mean_y"] == 0.5
    assert (d["reliability"][1]["mean_p"], d["reliability"][1]["mean_y"]) == (0.5, 0.0)
    # five prompts, five folds of one prompt each: the same as scikit-learn fitted on the other four
    from sklearn.isotonic import IsotonicRegression
    p, y = np.array([0.9, 0.5, 0.2, 0.7, 0.75]), np.array([1, 0, 0, 0, 1.0])
    fitted = [IsotonicRegression(out_of_bounds="clip").fit(np.delete(p, i), np.delete(y, i)).predict(p[i:i + 1])[0]
              for i in range(5)]
    assert d["ece_isotonic"] == pytest.approx(ece(np.array(fitted), y), abs=1e-12)
    # greedy, two samples a call: odd prompts +1, -1 -> .5, even ones +1, +2 -> 1 (x in slot A;
    # on p1 1 - .5 for y). p 1 .5 1 .5 1 with y 1 0 0 0 1: bin 5 (.5, .5; 0, 0): .5, weight 2/5;
    # bin 9 (1, 1, 1; 1, 0, 1): 1/3, weight 3/5. ECE = .2 + .2 = .4;
    # Brier = (0 + .25 + 1 + .25 + 0) / 5 = .3
    s = cells[("j", "greedy")]
    assert (s["n_prob"], s["probability_source"]) == (5, "samples")
    assert s["ece"] == pytest.approx(0.4, abs=1e-12) and s["brier"] == pytest.approx(0.3, abs=1e-12)
    k = cells[("k", "greedy")]
    assert k["n_prob"] is None and k["probability_source"] is None and k["reliability"] is None
    # m has label distributions, but none on a pair the humans did not tie
    m = cells[("m", "constrained")]
    assert (m["n"], m["n_prob"], m["probability_source"], m["ece"], m["reliability"]) == (2, 0, "distribution",
                                                                                          None, None)
    # the kappa keys are those of calibrate_frames without the samples (what the old version printed)
    from audit._read import reading
    with reading(path) as con:
        calls = con.frame("calibration_calls", pool_id=con.pool_id("conf"))
        labels = con.frame("labels", pool_id=con.pool_id("conf"))
    old = calibrate_frames(calls, labels, n_boot=50).drop("n_prob", "probability_source", "ece", "brier",
                                                          "ece_isotonic", "reliability")
    new = calibrate(path, "conf", n_boot=50).select(old.columns)
    assert new.equals(old)


def test_calibrate_json_carries_the_confidence_keys_only_where_there_are_probabilities(tmp_path, write_jsonl):
    path = _pool_with_calls(tmp_path, write_jsonl)
    proc = subprocess.run([EXE, "calibrate", "--pool", "conf", "--db", str(path), "--n-boot", "50", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    cells = {(c["judge"], c["decoding"]): c for c in json.loads(proc.stdout)["cells"]}
    keys = {"n_prob", "probability_source", "ece", "brier", "ece_isotonic", "reliability"}
    assert keys <= set(cells[("j", "constrained")]) and not keys & set(cells[("k", "greedy")])
    assert cells[("j", "constrained")]["reliability"][0] == {"lo": 0.2, "hi": 0.3, "n": 1, "mean_p": 0.2, "mean_y": 0.0}
    assert math.isclose(cells[("j", "greedy")]["ece"], 0.4)
    text = subprocess.run([EXE, "calibrate", "--pool", "conf", "--db", str(path), "--n-boot", "50"],
                          capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "j / tournament / constrained: 5 judgements with p from distribution: ECE 0.250, Brier 0.17" in text.stdout
    assert "k / tournament / greedy: no label probabilities (score with --decoding constrained" in text.stdout
    assert "m / tournament / constrained: probabilities from distribution, but none on a pair the humans did " \
           "not tie" in text.stdout
    assert cells[("m", "constrained")]["n_prob"] == 0 and cells[("m", "constrained")]["ece"] is None


def test_calibration_page_draws_the_reliability_diagram_or_says_how_to_get_probabilities(tmp_path, write_jsonl,
                                                                                         monkeypatch):
    from streamlit.testing.v1 import AppTest

    from ingest.demo import seed_demo
    from tests.conftest import REPO
    path = _pool_with_calls(tmp_path, write_jsonl)
    monkeypatch.setenv("JUDGEAUDIT_DB", str(path))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.sidebar.selectbox[0].select("conf").run()
    at.switch_page("views/calibration/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Confidence" in [h.value for h in at.subheader]
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    diagram = next(c for c in charts if any(layer.get("mark", {}).get("strokeDash") == [6, 3]
                                            and layer["encoding"]["x"]["field"] == "a" for layer in c.get("layer", [])))
    assert diagram["layer"][2]["encoding"]["size"]["field"] == "n"
    table = at.dataframe[-1].value
    assert list(zip(table["judge"], table["decoding"])) == [("j", "constrained"), ("j", "greedy"), ("m", "constrained")]
    assert table["ece"].tolist()[:2] == pytest.approx([0.25, 0.4], abs=1e-12) and table["n_prob"].tolist()[2] == 0
    assert not any("No label probabilities" in i.value for i in at.info)
    # the demo's MT-Bench pool: its votes are seeded, its LLMBar judges' verdicts carry no label distribution
    seed_demo(tmp_path / "demo.duckdb", pools=("mtbench",))
    monkeypatch.setenv("JUDGEAUDIT_DB", str(tmp_path / "demo.duckdb"))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.sidebar.selectbox[0].select("mtbench").run()
    at.switch_page("views/calibration/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    # its judges' verdicts carry no label distribution; only its jury has probabilities (its members'
    # vote shares), so the diagram is the jury's alone
    table = at.dataframe[-1].value
    assert set(table.loc[table["n_prob"] > 0, "judge"]) == {"mtbench-jury"}
    # the same pool without its jury: no probabilities at all, and the page says how to get them
    import duckdb
    con = duckdb.connect(str(tmp_path / "demo.duckdb"))
    jury = con.execute("SELECT judge_id FROM judges WHERE name = 'mtbench-jury'").fetchone()[0]
    con.execute("DELETE FROM verdicts WHERE judge_id = $j", {"j": jury})
    con.close()
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.sidebar.selectbox[0].select("mtbench").run()
    at.switch_page("views/calibration/page.py").run()
    note = next(i.value for i in at.info if "No label probabilities" in i.value)
    assert "--decoding constrained" in note and "--samples N" in note
