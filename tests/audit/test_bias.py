"""Slot bias (DESIGN.md 'Metric definitions'): intervals of known width, consistency, the
self-tie rate's denominator, the reference-gap correlation's sign, and bootstrap seeds that belong
to the cell (judge, format, decoding) rather than to its position in the table."""

import collections

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss

from audit import bias, bias_items
from ingest.store import import_pool
from ingest.scoring import import_verdicts


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py

LABEL = {2: "A++", 1: "A+", 0: "TIE", -1: "B+", -2: "B++"}


def _two_candidate_pool(db, write_jsonl, refs, name="p"):
    """One prompt per entry of refs: candidates x (listed first) and y with references (r_x, r_y)."""
    rows = []
    for p, (rx, ry) in enumerate(refs):
        rows += [{"prompt_id": f"q{p}", "prompt": f"prompt {p}", "candidate_id": c, "response": c,
                  "reference": r} for c, r in (("x", rx), ("y", ry))]
    import_pool(db, write_jsonl(f"{name}.jsonl", rows), name)


def _items(judge, margins, fmt="tournament"):
    """Verdict rows for items (v_fwd, v_rev), one per prompt: x in slot A, then y in slot A."""
    out = []
    for p, (fwd, rev) in enumerate(margins):
        out.append({"judge": judge, "format": fmt, "prompt_id": f"q{p}", "a_id": "x", "b_id": "y", "raw": LABEL[fwd]})
        out.append({"judge": judge, "format": fmt, "prompt_id": f"q{p}", "a_id": "y", "b_id": "x", "raw": LABEL[rev]})
    return out


def test_bootstrap_interval_of_plus_minus_one_items_has_the_binomial_width(db, write_jsonl):
    """40 items whose q_i and b_i are each +1 for half of them and -1 for the other half:
    (v_fwd, v_rev) = (2, 0): q = 1, b = 1; (0, 2): q = -1, b = 1; (0, -2): q = 1, b = -1;
    (-2, 0): q = -1, b = -1; ten of each. A bootstrap mean of 40 values +-1 with 20 of each is
    2X/40 - 1 with X ~ Binomial(40, 1/2). Its 2.5% and 97.5% quantiles are X = 14 and 26
    (binom cdf(13) = 0.0192 < 0.025 < cdf(14) = 0.0403; cdf(25) = 0.9597 < 0.975 < cdf(26) = 0.9808),
    so the 95% interval is [2*14/40 - 1, 2*26/40 - 1] = [-0.3, 0.3]. A 90% interval would be
    X = 15 and 25: [-0.25, 0.25]."""
    assert (ss.binom.ppf(0.025, 40, 0.5), ss.binom.ppf(0.975, 40, 0.5)) == (14, 26)
    margins = [(2, 0)] * 10 + [(0, 2)] * 10 + [(0, -2)] * 10 + [(-2, 0)] * 10
    _two_candidate_pool(db, write_jsonl, [(1, 0)] * 40)
    import_verdicts(db, write_jsonl("v.jsonl", _items("j", margins)), "p")
    for seed in (0, 1):
        row = bias(db, "p", seed=seed, n_boot=20_000).to_dicts()[0]
        assert (row["n_pairs"], row["q"], row["b"]) == (40, 0.0, 0.0)
        assert (row["q_lo"], row["q_hi"]) == (pytest.approx(-0.3), pytest.approx(0.3))
        assert (row["b_lo"], row["b_hi"]) == (pytest.approx(-0.3), pytest.approx(0.3))
        assert row["consistency"] == 0.0      # every item is a tie in one order only


def test_consistency_counts_a_tie_in_both_orders_but_not_a_one_sided_tie(db, write_jsonl):
    # sign(v_fwd) = -sign(v_rev)?  (1,-1) yes; (0,0) yes; (-2,1) yes; (1,0) no (one-sided tie);
    # (0,-1) no (one-sided tie); (1,1) no (slot A both times)  -> 3 of 6 = 0.5
    margins = [(1, -1), (0, 0), (-2, 1), (1, 0), (0, -1), (1, 1)]
    _two_candidate_pool(db, write_jsonl, [(1, 0)] * 6)
    import_verdicts(db, write_jsonl("v.jsonl", _items("j", margins)), "p")
    row = bias(db, "p", n_boot=50).to_dicts()[0]
    assert row["consistency"] == pytest.approx(3 / 6)
    # q_i = (fwd - rev)/2: 1, 0, -1.5, .5, .5, 0 -> sum 0.5, mean 0.5/6;
    # b_i = (fwd + rev)/2: 0, 0, -.5, .5, -.5, 1 -> sum 0.5, mean 0.5/6
    assert row["q"] == pytest.approx(0.5 / 6) and row["b"] == pytest.approx(0.5 / 6)


def test_q_gap_corr_follows_the_reference_gap_of_x_minus_y(db, write_jsonl):
    # items (x listed first): q_i = (fwd - rev)/2 and ref_gap = r_x - r_y
    margins = [(1, -1), (1, 0), (0, 1), (2, -2)]          # q_i = 1, 0.5, -0.5, 2
    refs = [(3, 1), (2, 1.5), (0, 1), (4, 0)]             # gaps = 2, 0.5, -1, 4
    _two_candidate_pool(db, write_jsonl, refs)
    import_verdicts(db, write_jsonl("v.jsonl", _items("j", margins)), "p")
    items = bias_items(db, "p").sort("prompt_idx").to_dicts()
    assert [i["ref_gap"] for i in items] == [2, 0.5, -1, 4]
    assert [i["q_i"] for i in items] == [1, 0.5, -0.5, 2]
    assert [i["b_i"] for i in items] == [0, 0.5, 0.5, 0]
    assert [(i["v_fwd"], i["v_rev"]) for i in items] == margins
    row = bias(db, "p", n_boot=50).to_dicts()[0]
    expect = ss.pearsonr([1, 0.5, -0.5, 2], [2, 0.5, -1, 4]).statistic     # 0.99..., positive
    assert expect > 0.9 and row["q_gap_corr"] == pytest.approx(expect)


def test_self_tie_rate_counts_only_parsed_self_comparisons(db, write_jsonl):
    # anchored, prompts of 3 candidates with references 1, 2, 3: the anchor is the middle one, b.
    rows = []
    for p in range(4):
        rows += [{"prompt_id": f"q{p}", "prompt": "P", "candidate_id": c, "response": c, "reference": r}
                 for c, r in (("a", 1), ("b", 2), ("c", 3))]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    raws = ["TIE", "TIE", "A+", "no idea"]        # the anchor against itself, one call per prompt
    verdicts = [{"judge": "j", "format": "anchored", "prompt_id": f"q{p}", "a_id": "b", "b_id": "b",
                 "raw": raw} for p, raw in enumerate(raws)]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    row = bias(db, "p", n_boot=50).to_dicts()[0]
    # 4 self-comparisons, 3 parsed, 2 of them TIE: 2/3 (the unparsed call is no answer, not a non-TIE)
    assert row["n_self"] == 4 and row["self_tie_rate"] == pytest.approx(2 / 3)
    assert row["n_pairs"] == 0 and row["b"] is None


def test_adding_a_judge_leaves_other_cells_intervals_unchanged(db, write_jsonl):
    rng = np.random.default_rng(5)
    _two_candidate_pool(db, write_jsonl, [(1, 0)] * 30)

    def margins():
        return [tuple(int(v) for v in rng.integers(-2, 3, 2)) for _ in range(30)]

    import_verdicts(db, write_jsonl("v1.jsonl", _items("m", margins()) + _items("z", margins())), "p")
    before = {r["judge"]: r for r in bias(db, "p", n_boot=500).to_dicts()}
    # a judge that sorts first: every other cell moves down one row of the table
    import_verdicts(db, write_jsonl("v2.jsonl", _items("a", margins())), "p")
    after = {r["judge"]: r for r in bias(db, "p", n_boot=500).to_dicts()}
    assert set(after) == {"a", "m", "z"}
    for judge in ("m", "z"):
        for key in ("q_lo", "q_hi", "b_lo", "b_hi"):
            assert after[judge][key] == before[judge][key], (judge, key)


def test_the_bootstrap_seed_is_the_whole_identity_judge_format_and_decoding(db, write_jsonl):
    """The same 30 items under three judge names: the means agree, and each cell draws its own
    resamples (a seed from format and decoding alone would give every judge one interval)."""
    rng = np.random.default_rng(8)
    margins = [tuple(int(v) for v in rng.integers(-2, 3, 2)) for _ in range(30)]
    _two_candidate_pool(db, write_jsonl, [(1, 0)] * 30)
    rows = [r for judge in ("k", "m", "z") for r in _items(judge, margins)]
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    got = bias(db, "p", n_boot=400).to_dicts()
    assert len(got) == 3 and len({r["q"] for r in got}) == 1 and len({r["b"] for r in got}) == 1
    # 400 resamples of 30 items: independent seeds give different percentile pairs
    assert len({(r["q_lo"], r["q_hi"], r["b_lo"], r["b_hi"]) for r in got}) == 3


def test_item_bias_of_84_plus_minus_one_items_has_the_binomial_interval():
    """84 items, 21 of each kind (v_fwd, v_rev) = (2, 0), (0, 2), (0, -2), (-2, 0): q_i and b_i are
    +1 for half of them and -1 for the other half, so a bootstrap mean is 2X/84 - 1 with
    X ~ Binomial(84, 1/2). cdf(32) = 0.0188 < 0.025 < cdf(33) = 0.0315: the 2.5% quantile is X = 33,
    mean -18/84 = -3/14, and by symmetry the 97.5% one X = 51, +3/14 (an interval 3/7 wide). A 3.5%
    quantile would be X = 34 (cdf(33) = 0.0315 < 0.035 < cdf(34) = 0.0506): -16/84."""
    from audit._bias import item_bias
    assert ss.binom.ppf([0.025, 0.035, 0.975], 84, 0.5).tolist() == [33, 34, 51]
    kinds = [(2, 0), (0, 2), (0, -2), (-2, 0)]
    v_fwd = np.array([f for f, _ in kinds] * 21, dtype=float)
    v_rev = np.array([r for _, r in kinds] * 21, dtype=float)
    out = item_bias(v_fwd, v_rev, 20_000, np.random.default_rng(0))
    assert set(out) == {"n_pairs", "q", "b", "consistency", "q_lo", "q_hi", "b_lo", "b_hi"}
    assert (out["n_pairs"], out["q"], out["b"], out["consistency"]) == (84, 0.0, 0.0, 0.0)
    for key, want in (("q_lo", -3 / 14), ("q_hi", 3 / 14), ("b_lo", -3 / 14), ("b_hi", 3 / 14)):
        assert out[key] == pytest.approx(want, abs=1e-12), key


def test_q_gap_corr_needs_two_items_with_a_reference_gap(db, write_jsonl):
    # three items; q0 lacks a reference (no gap). q1: margins (1, -1), q_i = 1, gap 3 - 1 = 2;
    # q2: margins (0, 1), q_i = -0.5, gap 0 - 1 = -1. Two points lie on a line: r = +1
    _two_candidate_pool(db, write_jsonl, [(None, 1), (3, 1), (0, 1)])
    import_verdicts(db, write_jsonl("v.jsonl", _items("j", [(2, 2), (1, -1), (0, 1)])), "p")
    row = bias(db, "p", n_boot=50).to_dicts()[0]
    assert row["n_pairs"] == 3 and row["q_gap_corr"] == pytest.approx(1.0)
    # one item with a gap is no correlation
    _two_candidate_pool(db, write_jsonl, [(None, 1), (3, 1)], name="p2")
    import_verdicts(db, write_jsonl("v2.jsonl", _items("j", [(2, 2), (1, -1)])), "p2")
    row = bias(db, "p2", n_boot=50).to_dicts()[0]
    assert row["n_pairs"] == 2 and row["q_gap_corr"] is None


# a comparative format whose label values are not multiples of one step: item means rarely tie, so
# percentile intervals move with every resample (2,000 and 2,001 resamples give different ends)
ODD_LABELS = {"ALPHA": 1.7, "BRAVO": 0.41, "CHARLIE": 0.0, "DELTA": -0.93, "ECHO": -2.3}


def _odd_format(write_jsonl, name):
    return write_jsonl(f"{name}.toml", [f'name = "{name}"', 'kind = "comparative"',
                                        "labels = { " + ", ".join(f'{k} = {v}' for k, v in ODD_LABELS.items()) + " }"])


def _odd_items(judge, fmt, n, seed, decoding="greedy"):
    rng = np.random.default_rng(seed)
    names = list(ODD_LABELS)
    out = []
    for p in range(n):
        fwd, rev = rng.integers(0, len(names), 2)
        out.append({"judge": judge, "format": fmt, "decoding": decoding, "prompt_id": f"q{p}", "a_id": "x",
                    "b_id": "y", "raw": names[fwd]})
        out.append({"judge": judge, "format": fmt, "decoding": decoding, "prompt_id": f"q{p}", "a_id": "y",
                    "b_id": "x", "raw": names[rev]})
    return out


def test_default_seed_and_resamples_are_those_judgeaudit_bias_shows(db, write_jsonl):
    """`judgeaudit bias` defaults to --seed 0 and --n-boot 2000; the dashboard calls bias(db, pool)
    and must show the same intervals."""
    _two_candidate_pool(db, write_jsonl, [(1, 0)] * 40)
    import_verdicts(db, write_jsonl("v.jsonl", _odd_items("j", "odd", 40, 3)), "p",
                    format_specs=[_odd_format(write_jsonl, "odd")])
    got = bias(db, "p")
    assert got.height == 1 and got["n_pairs"][0] == 40
    assert got.equals(bias(db, "p", seed=0, n_boot=2000))
    ends = ["q_lo", "q_hi", "b_lo", "b_hi"]
    # and the data tell both apart: another seed, or one more resample, moves the ends
    assert got.select(ends).row(0) != bias(db, "p", seed=1, n_boot=2000).select(ends).row(0)
    assert got.select(ends).row(0) != bias(db, "p", seed=0, n_boot=2001).select(ends).row(0)


def test_cells_differing_only_in_format_or_decoding_draw_their_own_resamples(db, write_jsonl):
    """The same 40 items under two formats with the same labels, and under both decodings: the
    means agree, and each (judge, format, decoding) cell has its own bootstrap seed, so their
    intervals differ (a seed without the format, or without the decoding, would repeat one)."""
    _two_candidate_pool(db, write_jsonl, [(1, 0)] * 40)
    rows = (_odd_items("j", "odd", 40, 3) + _odd_items("j", "odd2", 40, 3)
            + _odd_items("j", "odd", 40, 3, decoding="constrained"))
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p",
                    format_specs=[_odd_format(write_jsonl, "odd"), _odd_format(write_jsonl, "odd2")])
    got = bias(db, "p", n_boot=400).to_dicts()
    assert [(r["format"], r["decoding"], r["n_pairs"]) for r in got] == [
        ("odd", "constrained", 40), ("odd", "greedy", 40), ("odd2", "greedy", 40)]
    assert len({r["q"] for r in got}) == 1 and len({r["b"] for r in got}) == 1
    assert len({(r["q_lo"], r["q_hi"], r["b_lo"], r["b_hi"]) for r in got}) == 3


def test_the_cells_counted_by_integer_keys_equal_the_cells_counted_by_names(db, write_jsonl):
    """comparative_cells.sql counts by (judge_id, format_id, decoding code) and then names the cells;
    before, it grouped every call by the judges' and formats' names and the decoding's text (kept in
    tests/audit/sql/comparative_cells_before.sql): the same rows on calls of two judges, two formats,
    both decodings, swapped and unswapped calls, self-comparisons parsed, unparsed and tied."""
    from audit._read import reading
    from ingest.store.database import Database
    _two_candidate_pool(db, write_jsonl, [(1, 0)] * 30)
    rng = np.random.default_rng(7)
    rows = []
    for judge in ("j1", "j2"):
        for fmt, decoding in (("tournament", "greedy"), ("odd", "greedy"), ("odd", "constrained")):
            names = list(LABEL.values()) if fmt == "tournament" else list(ODD_LABELS)
            for p in range(30):
                for a, b in (("x", "y"), ("y", "x"), ("x", "x"), ("y", "y")):
                    if rng.random() < 0.3:
                        continue
                    raw = "no verdict here" if rng.random() < 0.1 else names[rng.integers(len(names))]
                    rows.append({"judge": judge, "format": fmt, "decoding": decoding, "prompt_id": f"q{p}",
                                 "a_id": a, "b_id": b, "raw": raw})
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p", format_specs=[_odd_format(write_jsonl, "odd")])
    with reading(db) as read:
        pid = read.pool_id("p")
        got = read.frame("comparative_cells", pool_id=pid)
    with Database.of(db).reading(queries="tests.audit") as read:
        want = read.frame("comparative_cells_before", pool_id=pid)
    assert got.height == 6 and got["n_self"].sum() > 0 and got["n_self_tie"].sum() > 0
    assert 0 < got["n_reverse_calls"].sum() < got["n_calls"].sum()
    assert (got["n_self_parsed"] < got["n_self"]).any()          # some self-comparisons unparsed
    assert got.rows() == want.rows()


def test_the_items_read_from_the_reverse_calls_first_equal_the_items_of_every_call_grouped(db, write_jsonl):
    """bias_items.sql reads a judging with few reverse calls (under a fifth of its parsed calls) by grouping
    them first and reading only the forward calls of their items, and groups every call of a judging with
    many; before, it grouped every parsed comparative call of the cells with a reverse call (kept in
    tests/audit/sql/bias_items_before.sql): the same rows, in the same order, on judge j1 asked mostly
    forward and j2 asked in both orders, under a tournament, an odd-valued and an anchored format, three
    decodings with repeated samples, many ties, unparsed calls, self-comparisons and a candidate without a
    reference; and a database scoped to one judging gives that judging's rows of both."""
    from polars.testing import assert_frame_equal
    from audit._read import reading
    from ingest.store.database import Database
    rows, n = [], 30
    for p in range(n):      # references 1, 2, 3 (the anchor: b); the last prompt's c has none
        rows += [{"prompt_id": f"q{p}", "prompt": "P", "candidate_id": c, "response": c,
                  "reference": None if (p, c) == (n - 1, "c") else r} for c, r in (("a", 1), ("b", 2), ("c", 3))]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    rng = np.random.default_rng(11)
    every = [(a, b) for a in "abc" for b in "abc"]
    anchored = [(a, b) for a, b in every if "b" in (a, b)]
    verdicts, parsed, n_reverse = [], collections.Counter(), collections.Counter()
    for judge in ("j1", "j2"):
        for fmt, pairs in (("tournament", every), ("odd", every), ("anchored", anchored)):
            names = list(ODD_LABELS) if fmt == "odd" else ["TIE"] * 3 + list(LABEL.values())   # ties often
            for decoding in ("greedy", "constrained", "sampled"):
                for p in range(n):
                    for a, b in pairs:
                        reverse = a > b if fmt != "anchored" else a == "b" != b    # later-listed or anchor in A
                        if rng.random() < (0.85 if judge == "j1" and reverse else 0.25):
                            continue
                        for sample in range(rng.integers(1, 4) if decoding == "sampled" else 1):
                            raw = "no verdict here" if rng.random() < 0.15 else names[rng.integers(len(names))]
                            verdicts.append({"judge": judge, "format": fmt, "decoding": decoding, "sample": int(sample),
                                             "prompt_id": f"q{p}", "a_id": a, "b_id": b, "raw": raw})
                            parsed[judge, fmt] += raw != "no verdict here"
                            n_reverse[judge, fmt] += reverse and raw != "no verdict here"
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p", format_specs=[_odd_format(write_jsonl, "odd")])
    for judging, n_parsed in parsed.items():       # j1's judgings read reverse calls first, j2's grouped whole
        assert (n_reverse[judging] * 5 < n_parsed) is (judging[0] == "j1"), judging

    def before(handle):
        with handle.reading(queries="tests.audit") as read:
            return read.frame("bias_items_before", pool_id=read.pool_id("p"))

    def new(handle):
        with reading(handle) as read:
            return read.frame("bias_items", pool_id=read.pool_id("p"))

    got, want = new(db), before(Database.of(db))
    assert got.height > 100 and set(got["decoding"]) == {"greedy", "constrained", "sampled"}
    assert set(got["format"]) == {"tournament", "odd", "anchored"}
    assert got.group_by("judge", "format").len()["len"].min() >= 10                   # both paths give items
    assert (got["v_fwd"] == 0).sum() > 10 and (got["v_rev"] == 0).sum() > 10       # ties in either order
    assert got["ref_gap"].is_null().any() and (got["x"] != got["y"]).all()
    means = got.filter((pl.col("decoding") == "sampled") & (pl.col("format") != "odd"))   # integer margins:
    assert ((means["v_fwd"] % 1 != 0) | (means["v_rev"] % 1 != 0)).any()                # samples averaged
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    for one in (("j1", "anchored"), ("j2", "odd")):
        scoped = new(Database(db).scoped([one]))
        assert scoped.height > 0
        assert_frame_equal(scoped, got.filter((pl.col("judge") == one[0]) & (pl.col("format") == one[1])))
        assert_frame_equal(scoped, before(Database(db).scoped([one])), check_exact=False, rel_tol=1e-12,
                           abs_tol=1e-12)
