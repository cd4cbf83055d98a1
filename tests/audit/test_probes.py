"""audit/_probes.py: the probe biases of a judge (the share of calls toward the treated response,
with a bootstrap over pairs) and the mitigations compared against a baseline, on hand-made pools
(arithmetic in comments). The probe set and `judgeaudit probe` end to end: tests/ingest/test_probes.py."""

import polars as pl
import pytest

from audit import mitigations, probes
from audit._probes import pareto
from tests.audit.conftest import C, T, chi2_1df_sf


def test_pareto_frontier():
    # (cost, agreement): (1, .5) and (2, .9) are on it; (3, .8) is dominated by (2, .9); (2, .7) too
    assert pareto([1, 2, 3, 2], [0.5, 0.9, 0.8, 0.7]) == [True, True, False, False]


# -- the statistics, by hand (issue 13: mutation testing) ------------------------------------------
def reference_cluster_share(pair, score, n_boot, rng):
    """Slow, obvious restatement of the probe bias and its interval: the mean over calls; per
    replicate, draw as many pairs as there are, with replacement (one rng.integers(0, G, size=G)
    draw each), pool the drawn pairs' calls and take their mean; then the 2.5th and 97.5th
    percentiles with linear interpolation between order statistics."""
    ids = sorted(set(pair))
    calls = {g: [s for p, s in zip(pair, score) if p == g] for g in ids}
    means = []
    for _ in range(n_boot):
        pooled = [s for i in rng.integers(0, len(ids), size=len(ids)) for s in calls[ids[i]]]
        means.append(sum(pooled) / len(pooled))
    means.sort()

    def percentile(q):
        h = (len(means) - 1) * q
        k = int(h)
        return means[k] + (h - k) * (means[min(k + 1, len(means) - 1)] - means[k])
    return sum(score) / len(score), percentile(0.025), percentile(0.975)


def test_cluster_share_is_the_call_mean_with_a_bootstrap_over_pairs():
    import numpy as np

    from audit._probes import cluster_share
    # pairs 3 (2 calls), 7 (1 call), 9 (3 calls): the mean over the 6 calls is (1+0+1-1+0+1)/6 = 1/3,
    # not the mean of the pair means (0.5 + 1 + 0)/3 = 0.5
    pair, score = np.array([3, 3, 7, 9, 9, 9]), np.array([1.0, 0.0, 1.0, -1.0, 0.0, 1.0])
    est, lo, hi = cluster_share(pair, score, 400, np.random.default_rng(11))
    want = reference_cluster_share(pair.tolist(), score.tolist(), 400, np.random.default_rng(11))
    assert est == pytest.approx(1 / 3)
    assert (est, lo, hi) == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert lo < est < hi and hi <= 1.0
    # eight pairs of 1 to 4 calls: a bootstrap distribution fine enough that the 2.5th and 97.5th
    # percentiles are not also the 3.5th and 98.5th. Mean over the 16 calls: 3/16
    pair = np.array([0, 0, 1, 2, 2, 2, 3, 4, 4, 5, 6, 6, 7, 7, 7, 7])
    score = np.array([1, 0, 1, -1, 0, 1, -1, 1, 1, 0, -1, 0, 1, 1, 0, -1], dtype=float)
    got = cluster_share(pair, score, 400, np.random.default_rng(11))
    assert got[0] == pytest.approx(3 / 16)
    want = reference_cluster_share(pair.tolist(), score.tolist(), 400, np.random.default_rng(11))
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    # one pair: every replicate draws it, so the interval is the point
    assert cluster_share(np.array([5, 5, 5]), np.array([1.0, 1.0, 0.0]), 50, np.random.default_rng(0)) \
        == pytest.approx((2 / 3, 2 / 3, 2 / 3))


@pytest.mark.parametrize("prompt_id,want", [
    ("position_12", "position"), ("length_3", "length"), ("length_truncated_3", "truncation"),
    ("style_40", "markdown"), ("model_origin_7", "origin"), ("model_origin_rr_2", "origin"),
    ("other_1", None), ("xposition_1", None)])
def test_probe_type_from_the_pair_id(prompt_id, want):
    from audit._probes import probe_type
    assert probe_type(prompt_id) == want


@pytest.mark.parametrize("name,want", [
    ("GPT-4o", "gpt"), ("openai/o3", "gpt"), ("Claude-Sonnet-4", "claude"), ("gemma-2-9b", "gemini"),
    ("meta-llama/Llama-3.3-70B", "llama"), ("qwen-2", None), ("", None), (None, None)])
def test_family_of_a_model_name_ignores_case(name, want):
    from audit._probes import family
    assert family(name) == want


def test_pareto_frontier_by_hand():
    from audit._probes import pareto
    # (cost, agreement). (2, .6) is dominated by (1, .6): cheaper, as good. (3, .9) and (3, .9) tie:
    # neither dominates the other. (1, .6) and (0, .1): nothing cheaper agrees as well.
    assert pareto([1, 2, 3, 3, 0], [0.6, 0.6, 0.9, 0.9, 0.1]) == [True, False, True, True, True]
    # (2, .5) is dominated by (2, .7) (same cost, agrees more); (4, .7) by (2, .7) (costs more)
    assert pareto([2, 2, 4], [0.5, 0.7, 0.7]) == [False, True, False]
    assert pareto([5], [0.2]) == [True]


# A hand-made probe pool: pair ids in the source's naming, `treated` and `control` (and, once, two
# other candidates), models where an origin pair names them ('llama3:8b' has a colon, as Ollama tags do)
HAND_PAIRS = [("position_1", None, None), ("position_2", None, None), ("position_3", None, None),
              ("position_4", None, None), ("length_1", None, None), ("length_truncated_1", None, None),
              ("length_truncated_2", None, None), ("style_1", None, None),
              ("model_origin_1", "gpt-4o", "llama3:8b"), ("model_origin_2", "claude-sonnet-4", "gpt-4o"),
              ("model_origin_3", "qwen-2", "qwen-2"), ("model_origin_4", "gpt-4o", "gpt-4o-mini"),
              ("model_origin_5", "gpt-4o", "claude-sonnet-4"), ("model_origin_6", "gpt-4o", "claude-sonnet-4"),
              ("model_origin_7", "claude-sonnet-4", "gpt-4o"), ("model_origin_8", "gpt-4o", "claude-sonnet-4"),
              ("other_1", None, None)]


# (judge, pair, slot A, slot B, raw); margins for slot A: A++ 2, A+ 1, TIE 0, B+ -1, B++ -2
HAND_CALLS = [
    # alpha: no model family, no origin calls, sorts first
    ("alpha", "position_1", T, C, "TIE"), ("alpha", "position_1", C, T, "TIE"),
    # beta: one call only, an origin pair
    ("beta", "model_origin_1", T, C, "A+"),
    ("gpt-judge", "position_1", T, C, "A+"), ("gpt-judge", "position_1", C, T, "B+"),
    ("gpt-judge", "position_2", T, C, "A++"), ("gpt-judge", "position_2", C, T, "maybe"),
    ("gpt-judge", "position_3", "x", "y", "B+"), ("gpt-judge", "position_3", "y", "x", "B+"),
    ("gpt-judge", "position_4", T, C, "no idea"), ("gpt-judge", "position_4", C, T, "?"),
    ("gpt-judge", "length_1", T, C, "TIE"), ("gpt-judge", "length_1", C, T, "B+"),
    ("gpt-judge", "length_truncated_1", T, C, "B++"), ("gpt-judge", "length_truncated_1", C, T, "A+"),
    ("gpt-judge", "length_truncated_2", T, C, "TIE"), ("gpt-judge", "length_truncated_2", C, T, "B+"),
    ("gpt-judge", "style_1", T, C, "A+"), ("gpt-judge", "style_1", C, T, "A++"),
    ("gpt-judge", "model_origin_1", T, C, "A+"), ("gpt-judge", "model_origin_1", C, T, "B++"),
    ("gpt-judge", "model_origin_2", T, C, "A+"), ("gpt-judge", "model_origin_2", C, T, "TIE"),
    ("gpt-judge", "model_origin_3", T, C, "A+"), ("gpt-judge", "model_origin_3", C, T, "B+"),
    ("gpt-judge", "model_origin_4", T, C, "A+"), ("gpt-judge", "model_origin_4", C, T, "A+"),
    ("gpt-judge", "model_origin_5", T, C, "A+"), ("gpt-judge", "model_origin_5", C, T, "A+"),
    ("gpt-judge", "model_origin_6", T, C, "A++"), ("gpt-judge", "model_origin_6", C, T, "B+"),
    ("gpt-judge", "model_origin_7", T, C, "TIE"), ("gpt-judge", "model_origin_7", C, T, "B+"),
    ("gpt-judge", "model_origin_8", T, C, "A+"), ("gpt-judge", "model_origin_8", C, T, "unsure"),
    ("gpt-judge", "other_1", T, C, "A+"), ("gpt-judge", "other_1", C, T, "A+"),
]


def hand_probe_db(db, write_jsonl, pool="probes"):
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    rows = []
    for pid, m_treated, m_control in HAND_PAIRS:
        cands = [("x", None), ("y", None)] if pid == "position_3" else [(T, m_treated), (C, m_control)]
        rows += [{"prompt_id": pid, "prompt": f"question {pid}", "candidate_id": cid,
                  "response": f"{cid} answer to {pid}", "reference": 0.5, "model": model} for cid, model in cands]
    import_pool(db, write_jsonl("hand-pool.jsonl", rows), pool)
    import_verdicts(db, write_jsonl("hand-verdicts.jsonl", [
        {"judge": j, "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b, "raw": raw}
        for j, p, a, b, raw in HAND_CALLS]), pool)


def test_probe_rows_by_hand(db, write_jsonl):
    """Per call: +1 toward the treated response (for `position`: toward slot A), -1 away, 0 a TIE,
    unparsed calls left out; bias = the mean over parsed calls, n = pairs with a parsed call."""
    from audit import cell_rng
    hand_probe_db(db, write_jsonl)
    frame = probes(db, seed=3, n_boot=300)           # the default pool name: "probes"
    assert frame.columns == ["judge", "type", "n", "n_calls", "parse_rate", "bias", "lo", "hi", "accuracy",
                             "acc_lo", "acc_hi", "treated", "control"]
    got = {(r["judge"], r["type"]): r for r in frame.iter_rows(named=True)}
    assert list(got) == [("alpha", "position"),
                         ("beta", "origin"), ("beta", "origin:gpt-4o"), ("beta", "origin:llama3:8b"),
                         ("gpt-judge", "position"), ("gpt-judge", "length"), ("gpt-judge", "truncation"),
                         ("gpt-judge", "markdown"), ("gpt-judge", "origin"),
                         ("gpt-judge", "origin:claude-sonnet-4"), ("gpt-judge", "origin:gpt-4o"),
                         ("gpt-judge", "origin:gpt-4o-mini"), ("gpt-judge", "origin:llama3:8b"),
                         ("gpt-judge", "origin:qwen-2")]
    # (n, n_calls, parse_rate, bias, pair index -> the parsed calls' preferences)
    pos = {"position_1": [1, -1], "position_2": [1]}     # slot A: A+ +1, B+ -1; A++ +1; 'maybe' unparsed;
    #                                                     position_3 (x, y) is no treated/control pair
    want = {
        ("alpha", "position"): (1, 2, 1.0, 0.0, {"position_1": [0, 0]}),
        ("gpt-judge", "position"): (2, 3, 3 / 6, 1 / 3, pos),
        # length_1: treated in A, TIE 0; control in A, B+ -> the treated won: +1
        ("gpt-judge", "length"): (1, 2, 1.0, 1 / 2, {"length_1": [0, 1]}),
        # truncation 1: B++ with the truncation in A -> -1; A+ with the complete one in A -> -1
        # truncation 2: TIE 0; B+ with the complete one in A -> +1. Mean (-1 - 1 + 0 + 1) / 4
        ("gpt-judge", "truncation"): (2, 4, 1.0, -1 / 4, {"length_truncated_1": [-1, -1],
                                                           "length_truncated_2": [0, 1]}),
        # markdown: A+ (treated in A) +1, A++ (control in A) -1
        ("gpt-judge", "markdown"): (1, 2, 1.0, 0.0, {"style_1": [1, -1]}),
        # self-preference of a gpt judge (by its name; imported verdicts have no model): pairs with
        # exactly one gpt response. origin_1 (gpt-4o v llama): A+ gpt in A +1, B++ gpt in B +1;
        # origin_2 (claude v gpt-4o): A+ claude in A -1, TIE 0. origin_3 (no gpt) and origin_4
        # (gpt v gpt) are not such pairs. origin_5..8 (gpt-4o v claude): A+ +1, A+ claude in A -1;
        # A++ +1, B+ gpt in B +1; TIE 0, B+ claude in B -1; A+ +1 and an unparsed answer. 3 / 11
        ("gpt-judge", "origin"): (6, 11, 11 / 12, 3 / 11, {
            "model_origin_1": [1, 1], "model_origin_2": [-1, 0], "model_origin_5": [1, -1],
            "model_origin_6": [1, 1], "model_origin_7": [0, -1], "model_origin_8": [1]}),
        # claude: origin_2 +1 0; origin_5 -1 +1; origin_6 -1 -1; origin_7 0 +1; origin_8 -1: -1 / 9
        ("gpt-judge", "origin:claude-sonnet-4"): (5, 9, 9 / 10, -1 / 9, {
            "model_origin_2": [1, 0], "model_origin_5": [-1, 1], "model_origin_6": [-1, -1],
            "model_origin_7": [0, 1], "model_origin_8": [-1]}),
        # gpt-4o: as for the self-preference, plus origin_4 (v gpt-4o-mini): A+ gpt-4o in A +1,
        # A+ mini in A -1: 3 / 13
        ("gpt-judge", "origin:gpt-4o"): (7, 13, 13 / 14, 3 / 13, {
            "model_origin_1": [1, 1], "model_origin_2": [-1, 0], "model_origin_4": [1, -1],
            "model_origin_5": [1, -1], "model_origin_6": [1, 1], "model_origin_7": [0, -1],
            "model_origin_8": [1]}),
        ("gpt-judge", "origin:gpt-4o-mini"): (1, 2, 1.0, 0.0, {"model_origin_4": [-1, 1]}),
        ("gpt-judge", "origin:llama3:8b"): (1, 2, 1.0, -1.0, {"model_origin_1": [-1, -1]}),
        ("beta", "origin:gpt-4o"): (1, 1, 1.0, 1.0, {"model_origin_1": [1]}),
        ("beta", "origin:llama3:8b"): (1, 1, 1.0, -1.0, {"model_origin_1": [-1]}),
    }
    order = [p for p, _, _ in HAND_PAIRS]
    for key, (n, n_calls, parse_rate, bias, prefs) in want.items():
        row = got[key]
        assert (row["n"], row["n_calls"]) == (n, n_calls), key
        assert row["parse_rate"] == pytest.approx(parse_rate) and row["bias"] == pytest.approx(bias), key
        pair = [order.index(p) for p, v in prefs.items() for _ in v]
        score = [float(x) for v in prefs.values() for x in v]
        ref = reference_cluster_share(pair, score, 300, cell_rng(3, key[0], key[1]))
        assert (row["bias"], row["lo"], row["hi"]) == pytest.approx(ref, rel=1e-12, abs=1e-12), key
        if key[1] != "truncation":
            assert row["accuracy"] is None and row["acc_lo"] is None and row["acc_hi"] is None, key
    # truncation accuracy: calls preferring the complete response, a TIE not among them: 2 of 4
    trunc = got[("gpt-judge", "truncation")]
    ref = reference_cluster_share([5, 5, 6, 6], [1.0, 1.0, 0.0, 0.0], 300, cell_rng(3, "gpt-judge", "truncation"))
    assert trunc["accuracy"] == 0.5 and (trunc["acc_lo"], trunc["acc_hi"]) == pytest.approx(ref[1:], rel=1e-12)
    # a model met only against itself: no pair, nothing parsed, no parse rate
    qwen = got[("gpt-judge", "origin:qwen-2")]
    assert (qwen["n"], qwen["n_calls"], qwen["parse_rate"], qwen["bias"], qwen["lo"]) == (0, 0, None, None, None)
    # a judge of no known family: an origin row saying so
    assert {k: v for k, v in got[("beta", "origin")].items() if v is not None} == {
        "judge": "beta", "type": "origin", "n": 0, "n_calls": 0,
        "treated": "a response from the judge's own model family", "control": "one from another family"}
    # what treated and control are
    assert (got[("gpt-judge", "origin:llama3:8b")]["treated"], got[("gpt-judge", "origin:llama3:8b")]["control"]) \
        == ("a response from llama3:8b", "one from another model")
    assert (got[("alpha", "position")]["treated"], got[("alpha", "position")]["control"]) \
        == ("the response in slot A", "the response in slot B")
    assert (trunc["treated"], trunc["control"]) == ("the truncated response", "the complete response")
    # one judge's rows, alone
    assert probes(db, judge="gpt-judge", seed=3, n_boot=300).equals(frame.filter(pl.col("judge") == "gpt-judge"))


def test_no_calls_give_empty_frames_with_their_column_types(db, write_jsonl):
    from ingest.store import import_pool
    import_pool(db, write_jsonl("empty.jsonl", [{"prompt_id": "position_1", "prompt": "q", "candidate_id": c,
                                                 "response": c, "reference": 0.5} for c in (T, C)]), "quiet")
    p, m = probes(db, "quiet"), mitigations(db, "quiet")
    assert p.is_empty() and m.is_empty()
    assert dict(p.schema) == {"judge": pl.String, "type": pl.String, "n": pl.Int64, "n_calls": pl.Int64,
                              "parse_rate": pl.Float64, "bias": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
                              "accuracy": pl.Float64, "acc_lo": pl.Float64, "acc_hi": pl.Float64,
                              "treated": pl.String, "control": pl.String}
    assert dict(m.schema) == {"format": pl.String, "judge": pl.String, "baseline": pl.String,
                              "strategy": pl.String, "n_calls": pl.Int64, "agreement": pl.Float64,
                              "calls_per_verdict": pl.Int64, "calls": pl.Int64, "tokens_in": pl.Int64,
                              "tokens_out": pl.Int64, "tokens_per_verdict": pl.Float64, "n_paired": pl.Int64,
                              "b": pl.Int64, "c": pl.Int64, "test": pl.String, "p_exact": pl.Float64,
                              "p_cc": pl.Float64, "p": pl.Float64, "p_holm": pl.Float64, "frontier": pl.Boolean}


def test_probes_and_mitigations_read_the_database_they_are_given(db, write_jsonl, tmp_path, monkeypatch):
    # $JUDGEAUDIT_DB names a missing file: a function that dropped its db argument would fail
    hand_probe_db(db, write_jsonl)
    strategy_pool(db, write_jsonl)
    monkeypatch.setenv("JUDGEAUDIT_DB", str(tmp_path / "not-this.duckdb"))
    frame = probes(db, seed=3, n_boot=50)
    assert frame.height == 14 and frame["judge"][0] == "alpha"         # the rows of test_probe_rows_by_hand
    assert mitigations(db, "strat", baseline="base")["judge"].to_list()[:2] == ["base", "cot"]


def strategy_pool(db, write_jsonl):
    """Six prompts, x (reference 1) worse than y (reference 2), asked in both orders; q7 has a
    candidate without a reference (its calls are left out). Imported verdicts of three prompting
    strategies: `base` always answers A+ (right when y is in slot A), `cot` is right except on q6 and
    an unparsed answer, and asks q1 (x, y) twice; `rubric` always answers B+."""
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    rows = [{"prompt_id": f"q{i}", "prompt": f"question {i}", "candidate_id": cid, "response": f"{cid} {i}",
             "reference": ref} for i in range(1, 7) for cid, ref in (("x", 1.0), ("y", 2.0))]
    rows += [{"prompt_id": "q7", "prompt": "question 7", "candidate_id": cid, "response": cid, "reference": ref}
             for cid, ref in (("x", 1.0), ("w", None))]
    import_pool(db, write_jsonl("strat.jsonl", rows), "strat")
    calls = []
    for i in range(1, 7):
        calls += [("base", i, "x", "y", "A+"), ("base", i, "y", "x", "A+"),
                  ("rubric", i, "x", "y", "B+"), ("rubric", i, "y", "x", "B+"),
                  ("cot", i, "x", "y", "B+" if i < 6 else "TIE"),
                  ("cot", i, "y", "x", "A++" if i < 5 else "garbled" if i == 5 else "B+")]
    calls += [("base", 7, "x", "w", "A+")]
    verdicts = [{"judge": j, "format": "tournament", "prompt_id": f"q{i}", "a_id": a, "b_id": b, "raw": raw}
                for j, i, a, b, raw in calls]
    verdicts.append({"judge": "cot", "format": "tournament", "prompt_id": "q1", "a_id": "x", "b_id": "y",
                     "raw": "B+", "sample": 1})
    # `solo` made one call in each of two other comparative formats
    verdicts += [{"judge": "solo", "format": "anchored", "prompt_id": "q1", "a_id": "x", "b_id": "y", "raw": "B+"},
                 {"judge": "solo", "format": "arena5", "prompt_id": "q2", "a_id": "y", "b_id": "x", "raw": "A=B"}]
    spec = write_jsonl("arena5.toml", ['name = "arena5"', 'kind = "comparative"',
                                       'labels = { "A>>B" = 2, "A>B" = 1, "A=B" = 0, "B>A" = -1, "B>>A" = -2 }'])
    import_verdicts(db, write_jsonl("strat-verdicts.jsonl", verdicts), "strat", format_specs=[spec])


def test_mitigations_against_a_named_baseline_by_hand(db, write_jsonl):
    strategy_pool(db, write_jsonl)
    frame = mitigations(db, "strat", baseline="base")
    assert list(zip(frame["format"], frame["judge"])) == [("tournament", "base"), ("tournament", "cot"),
                                                          ("tournament", "rubric"), ("anchored", "solo"),
                                                          ("arena5", "solo")]
    # solo: one call per format, right (y is better) in the anchored one, a wrong TIE in arena5;
    # the named baseline made no call there, so nothing is compared
    solo = frame.filter(pl.col("judge") == "solo")
    assert solo.select("n_calls", "agreement", "baseline", "p", "frontier").rows() == [(1, 1.0, None, None, True),
                                                                                   (1, 0.0, None, None, True)]
    m = {r["judge"]: r for r in frame.filter(pl.col("format") == "tournament").iter_rows(named=True)}
    base, cot, rubric = m["base"], m["cot"], m["rubric"]
    # agreement: the preferred slot is the reference's; base right on the 6 (y, x) calls of 12
    assert (base["n_calls"], base["agreement"]) == (12, 0.5)
    # cot: (x, y) right on q1-q5 and q1's second sample, (y, x) right on q1-q4: 10 of 13
    assert (cot["n_calls"], cot["agreement"]) == (13, pytest.approx(10 / 13))
    assert (rubric["n_calls"], rubric["agreement"]) == (12, 0.5)
    for r in m.values():
        assert (r["strategy"], r["calls_per_verdict"], r["calls"] == r["n_calls"]) == ("baseline", 1, True)
        assert (r["tokens_in"], r["tokens_out"], r["tokens_per_verdict"]) == (0, 0, 0.0)   # imported
    assert base["baseline"] is None and base["b"] is None and base["p"] is None and base["p_holm"] is None
    # paired on (prompt, slots, sample): the 12 calls both made. cot: b = base right, cot wrong
    # = (y, x) on q5 (unparsed) and q6 = 2; c = base wrong, cot right = (x, y) on q1-q5 = 5.
    # 7 discordant: exact, 2 x P(X <= 2 | 7, 1/2) = 2 x (1 + 7 + 21) / 128 = 0.453125
    assert (cot["baseline"], cot["n_paired"], cot["b"], cot["c"], cot["test"]) == ("base", 12, 2, 5, "exact")
    assert cot["p_exact"] == pytest.approx(0.453125) and cot["p"] == cot["p_exact"]
    assert cot["p_cc"] == pytest.approx(chi2_1df_sf((3 - 1) ** 2 / 7))
    # rubric: b = the 6 (y, x) calls, c = the 6 (x, y) calls: 2 x P(X <= 6 | 12) > 1 -> 1
    assert (rubric["n_paired"], rubric["b"], rubric["c"], rubric["p"]) == (12, 6, 6, 1.0)
    # Holm over the format's two comparisons: 0.453125 x 2 = 0.90625; 1.0 x 1 -> running max 1
    assert (cot["p_holm"], rubric["p_holm"]) == (pytest.approx(0.90625), 1.0)
    # no tokens recorded: equal cost, so only the best agreement is on the frontier
    assert [r["frontier"] for r in m.values()] == [False, True, False]
    # without a named baseline, judges without a strategy are not compared
    plain = mitigations(db, "strat")
    assert plain["judge"].to_list() == ["base", "cot", "rubric", "solo", "solo"]
    assert plain["b"].null_count() == plain["p_holm"].null_count() == plain["baseline"].null_count() == 5
