"""audit/_curation.py, what curation reads from a pool: one row per prompt for the held-out rule,
the pool's extent, and per candidate the value of one baseline or one cell, by hand."""

import polars as pl
import pytest

import audit
from audit import baseline_values, cell_values, cells_values, curation_prompts, pool_extent
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.train.test_curate_pool import scored  # noqa: F401  (a 40-prompt pool with two judges' verdicts, and its fixture)


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def _pool(db, write_jsonl):
    # listed: r (a: 4 chars, reference 2; b: 1 char, no reference, held out), then q (c: 3 chars, reference 0.5,
    # held out), then s (d: 2 chars, reference 1). cand_idx 0..3 in that order, prompt_idx 0, 1, 2.
    rows = [{"prompt_id": "r", "prompt": "R?", "candidate_id": "a", "response": "four", "reference": 2},
            {"prompt_id": "r", "prompt": "R?", "candidate_id": "b", "response": "1", "split": "heldout"},
            {"prompt_id": "q", "prompt": "Q?", "candidate_id": "c", "response": "thr", "reference": 0.5,
             "split": "heldout"},
            {"prompt_id": "s", "prompt": "S?", "candidate_id": "d", "response": "tw", "reference": 1}]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")


def test_prompts_in_listing_order_with_the_held_out_mark(db, write_jsonl):
    _pool(db, write_jsonl)
    assert curation_prompts(db, "p").select("prompt_id", "marked_heldout").rows() == \
        [("r", True), ("q", True), ("s", False)]            # r: one of its two candidates held out
    assert pool_extent(db, "p") == (4, 3)          # 4 candidates; prompt_idx 0..2


def test_baseline_values_by_hand(db, write_jsonl):
    _pool(db, write_jsonl)

    def values(policy):
        return sorted(baseline_values(db, "p", policy).select("cand_idx", "value").rows())
    assert values("random") == [(0, 0.0), (1, 0.0), (2, 0.0), (3, 0.0)]
    assert values("length") == [(0, 4.0), (1, 1.0), (2, 3.0), (3, 2.0)]
    assert values("full") == [(0, 2.0), (2, 0.5), (3, 1.0)]     # b has no reference: no value
    with pytest.raises(ValueError, match="not a baseline"):
        baseline_values(db, "p", "judge")


def test_cell_values_are_the_cells_normalised_scores(db, write_jsonl):
    _pool(db, write_jsonl)
    # likert5 of judge j: a 5 -> (5-1)/4 = 1, b 2 -> 0.25, c unparsed, d 3 (sample 0) -> 0.5; d's
    # sample 1 (4) is not read: curation selects by the `single` scores, sample 0 of each call
    # (docs/glossary.md, aggregate). Judge k's numeric100 on a: another cell, 40/100
    v = [{"judge": "j", "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": raw}
         for p, c, raw in (("r", "a", "5"), ("r", "b", "2"), ("q", "c", "huh"), ("s", "d", "3"))]
    v.append({"judge": "j", "format": "likert5", "prompt_id": "s", "candidate_id": "d", "raw": "4", "sample": 1})
    v.append({"judge": "k", "format": "numeric100", "prompt_id": "r", "candidate_id": "a", "raw": "40"})
    import_verdicts(db, write_jsonl("v.jsonl", v), "p")
    for block in (None, 1):
        frame, decoding = cell_values(db, "p", "j", "likert5", block=block)
        assert decoding == "greedy"
        assert frame.rows() == [(0, 0, 1.0), (0, 1, 0.25), (2, 3, 0.5)]
    frame, _ = cell_values(db, "p", "k", "numeric100")
    assert frame.rows() == [(0, 0, 0.4)]
    empty, _ = cell_values(db, "p", "nobody", "likert5")
    assert empty.height == 0 and empty.schema == pl.Schema({"prompt_idx": pl.Int64, "cand_idx": pl.Int64,
                                                            "value": pl.Float64})


def test_cells_values_read_several_formats_in_one_pass_as_cell_values_reads_each(db, write_jsonl):
    _pool(db, write_jsonl)
    # judge j: likert5 a 5 -> 1, b 2 -> 0.25; binary a ACCEPT -> 1, c REJECT -> 0, d ACCEPT -> 1;
    # numeric100 none (no such cell: empty, as cell_values' of it)
    v = [{"judge": "j", "format": f, "prompt_id": p, "candidate_id": c, "raw": raw}
         for f, p, c, raw in (("likert5", "r", "a", "5"), ("likert5", "r", "b", "2"), ("binary", "r", "a", "ACCEPT"),
                              ("binary", "q", "c", "REJECT"), ("binary", "s", "d", "ACCEPT"))]
    import_verdicts(db, write_jsonl("v.jsonl", v), "p")
    for block in (None, 1):
        got = cells_values(db, "p", "j", ["likert5", "binary", "numeric100"], block=block)
        assert list(got) == ["likert5", "binary", "numeric100"]
        assert got["likert5"][0].rows() == [(0, 0, 1.0), (0, 1, 0.25)]
        assert got["binary"][0].rows() == [(0, 0, 1.0), (1, 2, 0.0), (2, 3, 1.0)]
        assert got["numeric100"][0].height == 0
        for fmt, (frame, decoding) in got.items():
            one, dec = cell_values(db, "p", "j", fmt, block=block)
            assert frame.equals(one) and decoding == dec


def test_baseline_values_refuse_the_judge_policy(scored):
    with pytest.raises(ValueError, match="not a baseline"):
        audit.baseline_values(scored, "share", "judge")
    vals = audit.baseline_values(scored, "share", "full")
    ref = audit.pool_candidates(scored, "share").with_row_index("cand_idx").filter(pl.col("reference").is_not_null())
    assert sorted(vals["cand_idx"].to_list()) == ref["cand_idx"].cast(pl.Int64).to_list()
