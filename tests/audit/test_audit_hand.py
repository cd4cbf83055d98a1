"""Hand-worked audit cases, with the arithmetic in comments, through the real import path."""

import math

import polars as pl
import pytest

from audit import audit_cells, bias, candidate_scores, effective_levels, position_selection
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.audit.conftest import candidate


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def _pool(db, write_jsonl, rows, name="p"):
    import_pool(db, write_jsonl(f"{name}.jsonl", rows), name)


def _cell(frame, fmt):
    return frame.filter(frame["format"] == fmt).to_dicts()[0]


def test_paper_section_3_3_example(db, write_jsonl):
    # Reference a > b > c; a binary judge accepts a and b, rejects c: s = (1, 1, 0).
    _pool(db, write_jsonl, [candidate("q", "a", 3), candidate("q", "b", 2), candidate("q", "c", 1)])
    verdicts = [{"judge": "j", "format": "binary", "prompt_id": "q", "candidate_id": c, "raw": raw}
                for c, raw in (("a", "ACCEPT"), ("b", "ACCEPT"), ("c", "REJECT"))]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    cell = _cell(audit_cells(db, "p"), "binary")
    # pairs: (a,b) tied in s (n1 = 1), (a,c) and (b,c) concordant: C = 2, D = 0, n0 = 3, n2 = 0
    assert cell["tau_a"] == pytest.approx(2 / 3)                      # (C-D)/n0
    assert cell["tau_b"] == pytest.approx(2 / math.sqrt(6))           # 2/sqrt((3-1)(3-0)) = 0.816
    assert cell["somers_d"] == pytest.approx(2 / 3)                   # (C-D)/(n0-n2)
    assert cell["top1_expected"] == pytest.approx(1 / 2)              # judge-top {a,b}, one is ref-top
    assert cell["top1_uniform"] == pytest.approx(1 / 3)               # one ref-top of three
    assert cell["top1"] in (0.0, 1.0)
    assert cell["top_tied"] == 1.0                                    # max 1 held by a and b
    assert cell["distinct"] == 2
    assert cell["tie_prob"] == pytest.approx(5 / 9)                   # (2/3)^2 + (1/3)^2
    assert cell["d2"] == pytest.approx(9 / 5)
    assert cell["d1"] == pytest.approx(math.exp(-(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))))
    # ranks of s (2.5, 2.5, 1) and r (3, 2, 1), both mean 2: dx = (.5, .5, -1), dy = (1, 0, -1)
    # cov = .5 + 0 + 1 = 1.5; sxx = 1.5; syy = 2 -> rho = 1.5 / sqrt(3) = 0.866
    assert cell["spearman"] == pytest.approx(1.5 / math.sqrt(3))
    assert (cell["n_verdicts"], cell["n_candidates"], cell["n_prompts"], cell["parse_rate"]) == (3, 3, 1, 1.0)


def test_samples_parse_failures_and_multiples_of_five(db, write_jsonl):
    _pool(db, write_jsonl, [candidate("q", "a", 1), candidate("q", "b", 2), candidate("r", "a", 1)])
    verdicts = [
        {"judge": "j", "format": "numeric100", "prompt_id": "q", "candidate_id": "a", "raw": "85"},
        {"judge": "j", "format": "numeric100", "prompt_id": "q", "candidate_id": "a", "raw": "90", "sample": 1},
        {"judge": "j", "format": "numeric100", "prompt_id": "q", "candidate_id": "b", "raw": "87"},
        {"judge": "j", "format": "numeric100", "prompt_id": "r", "candidate_id": "a", "raw": "none"},
    ]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    single, mean = audit_cells(db, "p").filter(pl.col("format") == "numeric100").to_dicts()
    assert (single["aggregate"], mean["aggregate"]) == ("single", "mean")
    # single: sample 0 only: 85, 87 and the failed call
    assert single["n_verdicts"] == 3 and single["parse_rate"] == pytest.approx(2 / 3)
    assert single["mult5_share"] == 0.5                                # 85 of 85, 87
    assert (single["n_candidates"], single["n_prompts"]) == (2, 1)     # r's only call failed
    # a: 0.85 < b: 0.87, as the reference b > a: one concordant pair
    assert single["tau_a"] == 1.0 and single["top1_expected"] == 1.0
    # mean: every sample; 3 of 4 calls parsed
    assert mean["n_verdicts"] == 4 and mean["parse_rate"] == 0.75
    assert mean["mult5_share"] == pytest.approx(2 / 3)                 # 85 and 90 of 85, 90, 87
    assert (mean["n_candidates"], mean["n_prompts"]) == (2, 1)
    # a: mean(0.85, 0.90) = 0.875 > b: 0.87, against reference b > a: one discordant pair
    assert mean["tau_a"] == -1.0 and mean["top1_expected"] == 0.0


def test_undefined_values_are_null(db, write_jsonl):
    _pool(db, write_jsonl, [candidate("q", "a", 1), candidate("q", "b", 2)])
    verdicts = [{"judge": "j", "format": "likert5", "prompt_id": "q", "candidate_id": c, "raw": "3"}
                for c in "ab"]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    cell = _cell(audit_cells(db, "p"), "likert5")
    # s tied: C - D = 0, so tau_a = 0; tau_b's denominator (n0 - n1) = 0, undefined; spearman too
    assert cell["tau_a"] == 0.0 and cell["tau_b"] is None and cell["spearman"] is None
    assert cell["somers_d"] == 0.0 and cell["top1_expected"] == 0.5
    assert audit_cells(db, "p").schema["mult5_share"] == pl.Float64   # no 0-100 cell: all null, still float


def test_tournament_scores_and_slot_bias(db, write_jsonl):
    _pool(db, write_jsonl, [candidate("q", "a", 3), candidate("q", "b", 1), candidate("q", "c", 2)])
    calls = [("a", "b", "A+"),    # forward (a listed first): v_fwd = +1
             ("b", "a", "B+"),    # reverse: v_rev = -1 -> q = 1, b = 0, consistent
             ("a", "c", "A+"),    # v_fwd = +1
             ("c", "a", "A+"),    # v_rev = +1 -> q = 0, b = 1, inconsistent (slot A wins twice)
             ("b", "c", "TIE")]   # one order only: not an item
    verdicts = [{"judge": "j", "format": "tournament", "prompt_id": "q", "a_id": x, "b_id": y, "raw": raw}
                for x, y, raw in calls]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    row = bias(db, "p", n_boot=200).to_dicts()[0]
    assert row["n_pairs"] == 2 and row["n_calls"] == 5 and row["n_reverse_calls"] == 2
    assert row["q"] == pytest.approx(0.5) and row["b"] == pytest.approx(0.5)
    assert row["consistency"] == pytest.approx(0.5)
    assert row["q_lo"] <= row["q"] <= row["q_hi"] and row["b_lo"] <= row["b"] <= row["b_hi"]
    # scores: a = mean(sig(1), 1 - sig(-1), sig(1), 1 - sig(1)) = (3 sig(1) + 1 - sig(1)) / 4
    sig = 1 / (1 + math.exp(-1))
    cells = audit_cells(db, "p")
    levels = effective_levels(db, "p", alphas=(0,)).to_dicts()[0]
    assert levels["d_alpha"] == 3                                       # three different scores
    assert _cell(cells, "tournament")["top1_expected"] == 1.0           # a is top by both
    pos = position_selection(db, "p").to_dicts()[0]
    assert (pos["first_rate"], pos["last_rate"], pos["uniform_rate"]) == (1.0, 0.0, pytest.approx(1 / 3))
    # candidate scores, sig(1) = 0.7310586, sig(0) = 1/2, sig(-1) = 1 - sig(1):
    #   a: as A vs b sig(1); as B in (b, a, B+ = -1) 1 - sig(-1) = sig(1); as A vs c sig(1);
    #      as B in (c, a, A+) 1 - sig(1)            -> (3 sig(1) + 1 - sig(1)) / 4 = 0.6155293
    #   b: as B in (a, b, A+) 1 - sig(1); as A in (b, a, B+) sig(-1); as A in (b, c, TIE) 1/2
    #                                               -> (2 (1 - sig(1)) + 1/2) / 3 = 0.3459609
    #   c: as B in (a, c, A+) 1 - sig(1); as A in (c, a, A+) sig(1); as B in (b, c, TIE) 1/2
    #                                               -> (1 + 1/2) / 3 = 1/2
    got = {r["cand_idx"]: r["s"] for r in candidate_scores(db, "p").to_dicts() if r["format"] == "tournament"}
    assert got == pytest.approx({0: (3 * sig + 1 - sig) / 4, 1: (2 * (1 - sig) + 0.5) / 3, 2: 0.5}, abs=1e-12)
    assert got[0] == pytest.approx(0.6155292893, abs=1e-9) and got[1] == pytest.approx(0.3459609, abs=1e-7)


def test_anchored_scores_use_forward_calls_only(db, write_jsonl):
    # references 1, 2, 3: anchor = index floor(3/2) = 1 after sorting -> b
    _pool(db, write_jsonl, [candidate("q", "a", 1), candidate("q", "b", 2), candidate("q", "c", 3)])
    calls = [("a", "b", "B+"), ("c", "b", "A++"), ("b", "b", "TIE"),   # forward + self
             ("b", "c", "B+")]                                          # reverse for c
    verdicts = [{"judge": "j", "format": "anchored", "prompt_id": "q", "a_id": x, "b_id": y, "raw": raw}
                for x, y, raw in calls]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    cell = _cell(audit_cells(db, "p"), "anchored")
    # scores (v+2)/4 over forward calls only: a = (-1+2)/4 = 1/4, b = (0+2)/4 = 1/2 (self TIE),
    # c = (2+2)/4 = 1 (its reverse call B+ is not a score): perfectly ordered
    got = {r["cand_idx"]: r["s"] for r in candidate_scores(db, "p").to_dicts()}
    assert got == {0: 0.25, 1: 0.5, 2: 1.0}
    assert cell["tau_a"] == 1.0 and cell["distinct"] == 3
    row = bias(db, "p", n_boot=100).to_dicts()[0]
    # item c vs anchor b: v_fwd = 2, v_rev = -1 -> q = 1.5, b = 0.5
    assert (row["n_pairs"], row["q"], row["b"]) == (1, 1.5, 0.5)
    assert (row["n_self"], row["self_tie_rate"]) == (1, 1.0)


