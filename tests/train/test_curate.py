"""Curation (DESIGN.md 'Curation and training'): exact counts on hand-built pools, seeded
tie-breaks that are uniform and match the audit's top1, the baselines, held-out prompts, the
stored subset and its TRL export."""

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

import audit
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from audit import subset_by_hash, subsets
from tests.conftest import EXE, query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts
from train.curate import (PICK_SCHEMA, curate, eligible, heldout_prompts, heldout_rule, keep_count,
                          overlap, pick_cell, select, subset_name, to_messages)
from train.heldout import heldout_prompt_ids


def cur(*args, **kwargs):
    """curate() holding out only the prompts a pool marks (most pools here mark none)."""
    return curate(*args, **{"holdout_share": None, **kwargs})


def frames(spec: dict, heldout=(), refs: dict | None = None, lengths: dict | None = None):
    """pool_cands and scores frames from {prompt: [likert scores or None]} (cand_idx in listing
    order), for judge 'j' format 'f'; score v is stored as (v - 1) / 4 like likert5."""
    cands, scores = [], []
    for p, values in spec.items():
        for pos, v in enumerate(values):
            i = len(cands)
            cands.append({"prompt_idx": p, "prompt_id": f"p{p}", "candidate_id": f"c{pos}", "position": pos,
                          "k": len(values), "reference": (refs or {}).get(i), "model": None,
                          "split": "heldout" if p in heldout else "pool",
                          "response_chars": (lengths or {}).get(i, 10)})
            if v is not None:
                scores.append({"judge": "j", "format": "f", "cand_idx": i, "prompt_idx": p, "position": pos,
                               "s": (v - 1) / 4, "r": None})
    return (pl.DataFrame(cands, schema_overrides={"reference": pl.Float64, "model": pl.String}),
            pl.DataFrame(scores, schema_overrides={"r": pl.Float64}))


# prompt -> likert scores of its candidates (cand_idx 0..12 in this order); prompt 6 is held out
HAND = {0: [5, 3], 1: [4, 4, 2], 2: [4, 1], 3: [2, 2], 4: [3], 5: [1, None], 6: [5]}


def test_keep_count_rounds_half_up():
    assert [keep_count(r, 6) for r in (0.05, 0.25, 0.4, 0.5, 0.75, 1.0)] == [0, 2, 2, 3, 5, 6]
    # 0.25 * 6 = 1.5 -> 2 and 0.75 * 6 = 4.5 -> 5 (Python's round() would give 2 and 4)
    with pytest.raises(ValueError):
        keep_count(0, 6)


def test_exact_counts_on_a_hand_built_pool():
    pool, scores = frames(HAND, heldout={6})
    # eligible prompts 0..5 (6 is held out); picks: p0 c0 (1.0), p1 c0|c1 tied (0.75), p2 c0 (0.75),
    # p3 c0|c1 tied (0.25), p4 c0 (0.5), p5 c0 (0.0; c1 unscored)
    picks, s = cur(pool, scores, "judge", 0.5, seed=0, judge="j", fmt="f")
    assert picks.height == 6 and s["n_eligible"] == 6 and s["n_heldout_prompts"] == 1
    assert dict(zip(picks["prompt_idx"], picks["n_top"])) == {0: 1, 1: 2, 2: 1, 3: 2, 4: 1, 5: 1}
    # rate 0.5: 3 prompts = p0 and both prompts at 0.75; the tie group at the cut is kept whole
    kept = picks.filter("kept")
    assert sorted(kept["prompt_idx"]) == [0, 1, 2] and s["cut_value"] == 0.75
    assert (s["n_selected"], s["n_pick_tied"], s["n_cut_tied"]) == (3, 1, 0)
    assert kept.filter(pl.col("prompt_idx") == 1)["cand_idx"][0] in (2, 3)
    # rate 0.4: round(2.4) = 2 prompts = p0 and one of p1, p2 by the coin at the cut
    for seed in range(6):
        picks, s = cur(pool, scores, "judge", 0.4, seed=seed, judge="j", fmt="f")
        kept = sorted(picks.filter("kept")["prompt_idx"])
        assert kept[0] == 0 and kept[1] in (1, 2) and s["n_cut_tied"] == 1
        assert s["n_pick_tied"] == (1 if kept[1] == 1 else 0) and s["n_tie_broken"] == 1
    # rate 0.75: round(4.5) = 5 prompts: everything but p5 (the lowest, 0.0)
    picks, s = cur(pool, scores, "judge", 0.75, seed=0, judge="j", fmt="f")
    assert sorted(picks.filter("kept")["prompt_idx"]) == [0, 1, 2, 3, 4] and s["n_cut_tied"] == 0


def test_tie_breaks_are_uniform_over_seeds():
    # stage 1: one prompt, four candidates tied at the top and one below
    pool, scores = frames({0: [4, 4, 4, 4, 2]})
    counts = np.zeros(5)
    for seed in range(400):
        picks, _ = cur(pool, scores, "judge", 1.0, seed=seed, judge="j", fmt="f")
        counts[picks["cand_idx"][0]] += 1
    assert counts[4] == 0
    assert stats.chisquare(counts[:4]).pvalue > 0.001      # expected 100 each
    # stage 2: five prompts with one candidate each, all at the same value; keep round(0.2 x 5) = 1
    pool, scores = frames({p: [3] for p in range(5)})
    counts = np.zeros(5)
    for seed in range(400):
        picks, s = cur(pool, scores, "judge", 0.2, seed=seed, judge="j", fmt="f")
        counts[picks.filter("kept")["prompt_idx"][0]] += 1
        assert s["n_cut_tied"] == 1
    assert stats.chisquare(counts).pvalue > 0.001           # expected 80 each


def test_select_picks_the_largest_key_among_the_top():
    # the rule restated with numpy: among a prompt's top-scored candidates, the one whose
    # tiebreak key (default_rng(seed).random(n_candidates)[cand_idx]) is largest
    rng = np.random.default_rng(7)
    prompt = np.repeat(np.arange(40), 5)
    value = rng.integers(0, 3, prompt.size).astype(float)
    cands = pl.DataFrame({"prompt_idx": prompt, "cand_idx": np.arange(prompt.size), "value": value})
    for seed in (0, 1, 2):
        key = np.random.default_rng(seed).random(prompt.size)
        want = [int(np.flatnonzero(prompt == p)[np.argmax(np.where(value[prompt == p] == value[prompt == p].max(),
                                                                   key[prompt == p], -1))]) for p in range(40)]
        got = select(cands, 1.0, seed, prompt.size, 40).sort("prompt_idx")["cand_idx"].to_list()
        assert got == want


def test_curation_and_audit_top1_pick_the_same_candidate(db, write_jsonl):
    rows = synthetic_pool(60, seed=5, missing_ref=0.0)
    import_pool(db, write_jsonl("pool.jsonl", rows), "t")
    import_verdicts(db, write_jsonl("v.jsonl", synthetic_verdicts(rows, ("alpha",), seed=5, unparsed=0.0)), "t")
    pool, scores = audit.pool_candidates(db, "t"), audit.candidate_scores(db, "t")
    ref_top = pool.with_row_index("cand_idx").with_columns(
        (pl.col("reference") == pl.col("reference").max().over("prompt_idx")).alias("rt"))["rt"].to_list()
    seen = set()
    for seed in range(8):
        cells = audit.audit_cells(db, "t", seed=seed)
        for fmt in ("binary", "likert5"):
            picks, _ = cur(pool, scores, "judge", 1.0, seed=seed, judge="alpha", fmt=fmt)
            multi = picks.join(pool.with_row_index("p").group_by("prompt_idx").len(), on="prompt_idx") \
                .filter(pl.col("len") >= 2)      # top1 is over prompts with >= 2 candidates
            ours = float(np.mean([ref_top[c] for c in multi["cand_idx"]]))
            top1 = cells.filter((pl.col("judge") == "alpha") & (pl.col("format") == fmt))["top1"][0]
            assert ours == pytest.approx(top1, abs=1e-12)
            seen.add((fmt, round(top1, 9)))
    assert len({t for f, t in seen if f == "binary"}) > 1   # the seed matters: binary ties a lot


def test_baselines():
    spec = {0: [None, None, None], 1: [None, None], 2: [None, None], 3: [None], 4: [None, None]}
    refs = {0: 1.0, 1: 3.0, 2: 3.0, 3: 2.0, 5: 1.0, 6: 0.0, 7: 5.0}      # prompt 4 (cand 8, 9) has none
    lengths = {0: 5, 1: 50, 2: 7, 3: 20, 4: 9, 5: 30, 6: 30, 7: 1, 8: 40, 9: 2}
    pool, _ = frames(spec, refs=refs, lengths=lengths)
    # length: longest per prompt: p0 c1 (50), p1 c3 (20), p2 c5|c6 tied (30), p3 c7 (1), p4 c8 (40)
    # top round(0.6 x 5) = 3 by length: p0, p4, p2
    picks, s = cur(pool, None, "length", 0.6)
    kept = picks.filter("kept").sort("prompt_idx")
    assert kept["prompt_idx"].to_list() == [0, 2, 4] and kept["cand_idx"].to_list()[::2] == [1, 8]
    assert kept["cand_idx"][1] in (5, 6) and (s["n_pick_tied"], s["n_cut_tied"]) == (1, 0)
    # full: every prompt with a reference, its reference-top response; the rate is ignored
    picks, s = cur(pool, None, "full", 0.1)
    assert s["rate"] == 1.0 and s["n_selected"] == 4 == s["n_eligible"]
    got = dict(zip(picks["prompt_idx"], picks["cand_idx"]))
    assert got[0] in (1, 2)                                              # refs 3.0 and 3.0: tied
    assert (got[1], got[2], got[3]) == (3, 5, 7) and s["n_pick_tied"] == 1
    # random: round(0.4 x 5) = 2 prompts, every pick one of its prompt's candidates, all draws
    for seed in range(5):
        picks, s = cur(pool, None, "random", 0.4, seed=seed)
        kept = picks.filter("kept")
        assert kept.height == 2 and s["n_cut_tied"] == 2
        assert all(pool["prompt_idx"][c] == p for p, c in zip(kept["prompt_idx"], kept["cand_idx"]))
    firsts = {cur(pool, None, "random", 1.0, seed=seed)[0].filter(pl.col("prompt_idx") == 0)["cand_idx"][0]
              for seed in range(30)}
    assert firsts == {0, 1, 2}


def test_held_out_prompts_are_never_picked():
    pool, scores = frames(HAND, heldout={0, 6}, refs={i: float(i) for i in range(13)})
    for policy in ("judge", "random", "length", "full"):
        for seed in range(3):
            picks, s = cur(pool, scores, policy, 1.0, seed=seed, judge="j", fmt="f")
            assert 0 not in picks["prompt_idx"].to_list() and 6 not in picks["prompt_idx"].to_list()
            assert s["n_heldout_prompts"] == 2


def test_unmarked_pools_hold_out_the_share_evaluation_answers():
    pool, scores = frames({p: [3, 4] for p in range(30)})
    prompts = pool.group_by("prompt_idx", maintain_order=True).agg(
        pl.col("prompt_id").first(), pl.lit(False).alias("marked_heldout"))
    ids, rule = heldout_prompt_ids(prompts)
    assert rule["rule"] == "share" and len(ids) == 3                     # round(0.1 x 30)
    held = sorted(int(x[1:]) for x in ids)
    assert sorted(heldout_prompts(pool).to_list()) == held
    for policy in ("judge", "random", "length"):
        picks, s = curate(pool, scores, policy, 1.0, judge="j", fmt="f")
        assert s["n_eligible"] == 27 and not set(held) & set(picks["prompt_idx"].to_list())


def cells_by_mode(expected: list[float]):
    """Pool {0: [5, 1], 1: [2, 4]} (c0..c3) scored by j x f: labels greedy (c0, c3 on top) and
    constrained (c1, c2); expected scores `expected` from constrained decoding only."""
    pool, scores = frames({0: [5, 1], 1: [2, 4]})
    cells = pl.concat([
        scores.with_columns(pl.lit("greedy").alias("decoding"), pl.lit("label").alias("score")),
        scores.with_columns(pl.lit("constrained").alias("decoding"), pl.lit("label").alias("score"),
                            pl.Series("s", [0.0, 1.0, 1.0, 0.0])),
        scores.with_columns(pl.lit("constrained").alias("decoding"), pl.lit("expected").alias("score"),
                            pl.Series("s", expected))])
    return pool, cells


def test_a_cell_is_judge_format_decoding_and_score():
    pool, cells = cells_by_mode([0.9, 0.1, 0.2, 0.8])
    picked = {}
    for decoding, score in ((None, "label"), ("constrained", "label"), ("constrained", "expected")):
        picks, s = cur(pool, cells, "judge", 1.0, judge="j", fmt="f", decoding=decoding, score=score)
        picked[(decoding, score)] = picks.sort("prompt_idx")["cand_idx"].to_list()
        assert s["decoding"] == (decoding or "greedy") and s["score"] == score
    # greedy (the default of two modes): c0 (5) and c3 (4); constrained labels: c1, c2; expected: c0, c3
    assert picked == {(None, "label"): [0, 3], ("constrained", "label"): [1, 2], ("constrained", "expected"): [0, 3]}


def test_overlap_by_hand():
    pool, scores = frames({0: [5, 1], 1: [4, 2], 2: [3, 3], 3: [1, 5]})
    other = scores.with_columns(pl.lit("g").alias("format"),
                                pl.Series("s", [0.0, 1.0, 0.0, 1.0, 0.5, 0.25, 0.0, 0.75]))
    both = pl.concat([scores, other])
    # f picks c0 (1.0), c2 (.75), c4|c5 (.5), c7 (1.0); top 2 = c0, c7
    # g picks c1 (1.0), c3 (1.0), c4 (.5), c7 (.75); top 2 = c1, c3
    # rate 0.5: {0, 7} vs {1, 3}: Jaccard 0; rate 1: |{0,2,4|5,7} & {1,3,4,7}| / union
    ov = overlap(pool, both, "j", ["f", "g"], [0.5, 1.0], seed=0, holdout_share=None)
    assert ov["jaccard"][0] == 0.0
    f_pick = cur(pool, both, "judge", 1.0, 0, "j", "f")[0].filter(pl.col("prompt_idx") == 2)["cand_idx"][0]
    assert ov["jaccard"][1] == pytest.approx((2 if f_pick == 4 else 1) / (6 if f_pick == 4 else 7))


def test_curate_command_stores_and_exports(db, write_jsonl, tmp_path):
    rows = [{"prompt_id": f"p{p}", "prompt": f"Q{p}?", "candidate_id": f"c{c}", "response": f"A{p}{c}",
             "reference": float(c), "split": "heldout" if p == 3 else "pool"} for p in range(4) for c in range(2)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "hand")
    # likert5: p0 c0 5, c1 2 | p1 c0 3, c1 4 | p2 c0 1, c1 1 | p3 (held out) c0 5
    raws = {("p0", "c0"): "5", ("p0", "c1"): "2", ("p1", "c0"): "3", ("p1", "c1"): "4",
            ("p2", "c0"): "1", ("p2", "c1"): "1", ("p3", "c0"): "5"}
    import_verdicts(db, write_jsonl("v.jsonl", [{"judge": "j", "format": "likert5", "prompt_id": p,
                                                  "candidate_id": c, "raw": r} for (p, c), r in raws.items()]), "hand")
    out = tmp_path / "sub.jsonl"
    proc = subprocess.run([EXE, "curate", "--pool", "hand", "--judge", "j", "--format", "likert5", "--rate", "0.6",
                           "--out", str(out), "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # 3 eligible prompts, round(1.8) = 2 kept: p0 (c0, 1.0) and p1 (c1, .75)
    assert (doc["n_eligible"], doc["n_selected"], doc["n_pick_tied"], doc["n_cut_tied"]) == (3, 2, 0, 0)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines == [{"prompt": [{"role": "user", "content": "Q0?"}], "completion": [{"role": "assistant", "content": "A00"}]},
                     {"prompt": [{"role": "user", "content": "Q1?"}], "completion": [{"role": "assistant", "content": "A11"}]}]
    found = subset_by_hash(db, doc["sha256"])
    assert found["name"] == doc["name"] and found["n_selected"] == 2 and found["format"] == "likert5"
    assert query_rows(db, "SELECT cand_idx, value FROM subset_members ORDER BY cand_idx") == [(0, 1.0), (3, 0.75)]
    # the same command again replaces the subset instead of adding one
    subprocess.run([EXE, "curate", "--pool", "hand", "--judge", "j", "--format", "likert5", "--rate", "0.6",
                    "--out", str(out)], check=True, capture_output=True, timeout=120)
    assert subsets(db, "hand").height == 1
    # a baseline, and errors that say what is wrong
    proc = subprocess.run([EXE, "curate", "--pool", "hand", "--policy", "full", "--out", str(tmp_path / "f.jsonl"),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["n_selected"] == 3
    proc = subprocess.run([EXE, "curate", "--pool", "hand", "--judge", "j", "--format", "binary", "--rate", "0.5",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "no scores for that cell" in proc.stderr and "j × likert5" in proc.stderr


def test_curate_and_train_page(tmp_path, monkeypatch, write_jsonl):
    """The page on a user's pool: the preview's counts, the exact train command, and Train
    launching a background run of the tiny model configured on the server, which finishes."""
    import time

    from streamlit.testing.v1 import AppTest

    from ingest import runs
    from tests.conftest import REPO
    from tests.train.test_train import build_tiny
    db = tmp_path / "mine.duckdb"
    rows = synthetic_pool(40, seed=2)
    import_pool(db, write_jsonl("pool.jsonl", rows), "mine")
    import_verdicts(db, write_jsonl("v.jsonl", [v for v in synthetic_verdicts(rows, ("alpha",), seed=2)
                                                 if v["format"] != "tournament"]), "mine")
    build_tiny(tmp_path / "tiny")
    (tmp_path / "judgeaudit.toml").write_text('[models]\ntiny = "tiny"\n')
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/curate/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    pool, scores = audit.pool_candidates(db, "mine"), audit.candidate_scores(db, "mine")
    fmt = at.selectbox[2].value
    _, s = curate(pool, scores, "judge", 0.25, 0, "alpha", fmt)       # the page's defaults
    assert at.metric[0].value == str(s["n_eligible"]) and at.metric[1].value == str(s["n_selected"])
    base = next(sb for sb in at.selectbox if sb.label == "Base model")
    base.select("tiny").run()
    next(n for n in at.number_input if n.label.startswith("Max steps")).set_value(2).run()
    command = at.code[0].value
    # the command line names what differs from the command's defaults (--policy judge is the default)
    assert command.startswith("judgeaudit train --pool mine --judge alpha --format " + fmt)
    assert "--max-steps 2" in command and "--rate 0.25" in command
    next(b for b in at.button if b.label == "Train").click().run()
    assert not at.exception and at.success, [e.value for e in at.exception]
    deadline = time.time() + 150
    while time.time() < deadline:
        found = runs.list_runs(db, kind="train")
        if found and found[-1]["status"] not in runs.ACTIVE:
            break
        time.sleep(2)
    assert found[-1]["status"] == "finished", runs.log_tail(db, found[-1]["run_id"])
    out = Path(found[-1]["out_dir"])
    assert (out / "adapter_model.safetensors").exists() and (out / "subset.jsonl").exists()
    assert len((out / "subset.jsonl").read_text().splitlines()) == s["n_selected"]
    record = json.loads((out / "config.json").read_text())["subset"]
    assert (record["policy"], record["judge"], record["format"], record["n_selected"]) == ("judge", "alpha", fmt,
                                                                                          s["n_selected"])


# Two formats of judge 'j' on four prompts of two candidates (c0..c7). Format f ties p0 (c0|c1)
# and p3 (c6|c7); the tie-break key is default_rng(seed).random(8)[cand_idx], the largest wins:
#   seed 0: .637 .270 .041 .017 .813 .913 .607 .729 -> p0 c0, p3 c7
#   seed 1: .512 .950 .144 .949 .312 .423 .828 .409 -> p0 c1, p3 c6
TWO = {"f": {0: [3, 3], 1: [5, 1], 2: [2, 4], 3: [1, 1]}, "g": {0: [3, 1], 1: [1, 5], 2: [4, 2], 3: [1, 2]}}


def two_formats():
    pool, f = frames(TWO["f"])
    _, g = frames(TWO["g"])
    return pool, pl.concat([f, g.with_columns(pl.lit("g").alias("format"))])


OVERLAP_SCHEMA = {"rate": pl.Float64, "format_a": pl.String, "format_b": pl.String, "n_a": pl.Int64,
                  "n_b": pl.Int64, "jaccard": pl.Float64}


def test_overlap_by_hand_with_the_default_seed_and_held_out_share():
    pool, scores = two_formats()
    # seed 0 (the default), nothing held out. f picks c0 (.5), c2 (1), c5 (.75), c7 (0);
    # g picks c0 (.5), c3 (1), c4 (.75), c7 (.25).
    # rate 0.1: round(0.4) = 0 prompts, both sets empty, Jaccard undefined (null)
    # rate 0.5: 2 prompts: f {c2, c5}, g {c3, c4}: Jaccard 0
    # rate 1: f {0, 2, 5, 7}, g {0, 3, 4, 7}: |{0, 7}| / |{0, 2, 3, 4, 5, 7}| = 2/6
    # (with seed 1, f would pick {1, 2, 5, 6} and share nothing with g)
    ov = overlap(pool, scores, "j", ["f", "g"], [0.1, 0.5, 1.0], holdout_share=None)
    assert ov.schema == OVERLAP_SCHEMA
    assert ov.to_dicts() == [
        {"rate": 0.1, "format_a": "f", "format_b": "g", "n_a": 0, "n_b": 0, "jaccard": None},
        {"rate": 0.5, "format_a": "f", "format_b": "g", "n_a": 2, "n_b": 2, "jaccard": 0.0},
        {"rate": 1.0, "format_a": "f", "format_b": "g", "n_a": 4, "n_b": 4, "jaccard": pytest.approx(1 / 3)}]
    # the typed columns hold when every Jaccard is null, and when there is no pair at all
    assert overlap(pool, scores, "j", ["f", "g"], [0.1], holdout_share=None).schema == OVERLAP_SCHEMA
    alone = overlap(pool, scores, "j", ["f"], [0.5, 1.0], holdout_share=None)
    assert alone.height == 0 and alone.schema == OVERLAP_SCHEMA
    # the default held-out share (0.1 of 4 prompts: at least one) sets aside p0, the prompt with
    # the smallest blake2b('heldout|0|p0'..'p3') key: f {2, 5, 7}, g {3, 4, 7}: 1/5
    ov = overlap(pool, scores, "j", ["f", "g"], [1.0])
    assert (ov["n_a"][0], ov["n_b"][0]) == (3, 3) and ov["jaccard"][0] == pytest.approx(1 / 5)


def cell_modes():
    """Scores of formats f and g in four cells (decoding x score) on the pool of two_formats.
    g picks c0, c2, c4, c6 in every cell; f picks by cell:
    greedy/label c0 c2 c5 c7, greedy/expected and constrained/label c1 c3 c5 c7,
    constrained/expected c0 c2 c4 c6 (the same as g)."""
    pool, _ = frames(TWO["f"])
    first, second = [1.0, 0.0] * 4, [0.0, 1.0] * 4
    f = {("greedy", "label"): [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0], ("greedy", "expected"): second,
         ("constrained", "label"): second, ("constrained", "expected"): first}
    rows = [{"judge": "j", "format": fmt, "cand_idx": i, "prompt_idx": i // 2, "position": i % 2,
             "s": (s if fmt == "f" else first)[i], "r": None, "decoding": dec, "score": score}
            for (dec, score), s in f.items() for fmt in ("f", "g") for i in range(8)]
    return pool, pl.DataFrame(rows, schema_overrides={"r": pl.Float64})


def test_overlap_passes_decoding_and_score_on():
    pool, cells = cell_modes()
    # the defaults: greedy (the paper's mode of two) and label: f {0, 2, 5, 7}, g {0, 2, 4, 6}: 2/6
    ov = overlap(pool, cells, "j", ["f", "g"], [1.0], holdout_share=None)
    assert (ov["n_a"][0], ov["n_b"][0]) == (4, 4) and ov["jaccard"][0] == pytest.approx(1 / 3)
    # constrained expected scores: f picks what g picks: Jaccard 1
    ov = overlap(pool, cells, "j", ["f", "g"], [1.0], holdout_share=None, decoding="constrained", score="expected")
    assert (ov["n_a"][0], ov["n_b"][0]) == (4, 4) and ov["jaccard"][0] == 1.0
    # greedy expected: f {1, 3, 5, 7}, g {0, 2, 4, 6}: 0
    ov = overlap(pool, cells, "j", ["f", "g"], [1.0], holdout_share=None, score="expected")
    assert ov["jaccard"][0] == 0.0


def test_heldout_rule_of_a_pool():
    # 25 prompts of two candidates, none marked
    cands = pl.DataFrame({"prompt_idx": list(range(25)) * 2, "prompt_id": [f"p{i}" for i in range(25)] * 2,
                          "split": ["pool"] * 50})
    # share 0.2 of 25 = 5 prompts; 0.3 x 25 = 7.5 -> 8 (halves up)
    assert heldout_rule(cands, share=0.2) == {"rule": "share", "share": 0.2, "seed": 0, "n": 5}
    assert heldout_rule(cands, share=0.3) == {"rule": "share", "share": 0.3, "seed": 0, "n": 8}
    # share None: the marked prompts only (none here; then two, one of them on both candidates)
    assert heldout_rule(cands, share=None) == {"rule": "split", "n": 0}
    marked = cands.with_columns(pl.when(pl.col("prompt_idx").is_in([3, 11]) & (pl.int_range(pl.len()) != 3))
                                .then(pl.lit("heldout")).otherwise(pl.lit("pool")).alias("split"))
    assert heldout_rule(marked, share=None) == {"rule": "split", "n": 2}


def test_subset_names():
    base = {"policy": "judge", "judge": "alpha", "format": "likert5", "rate": 0.25, "seed": 3}
    # the paper's defaults (greedy, label) are left out of the name; other modes are appended
    assert subset_name({**base, "decoding": "greedy", "score": "label"}) == "alpha×likert5@0.25#s3"
    assert subset_name({**base, "decoding": None, "score": None}) == "alpha×likert5@0.25#s3"
    assert subset_name({**base, "decoding": "constrained", "score": "expected"}) == \
        "alpha×likert5·constrained·expected@0.25#s3"
    assert subset_name({**base, "decoding": "greedy", "score": "expected"}) == "alpha×likert5·expected@0.25#s3"
    assert subset_name({**base, "decoding": "constrained", "score": "label"}) == "alpha×likert5·constrained@0.25#s3"
    # baselines: the policy's name; the rate printed shortest (1.0 -> 1)
    assert subset_name({"policy": "random", "judge": None, "format": None, "rate": 0.5, "seed": 0}) == "random@0.5#s0"
    assert subset_name({"policy": "full", "judge": None, "format": None, "rate": 1.0, "seed": 2}) == "full@1#s2"


def test_to_messages_is_trl_prompt_completion():
    examples = pl.DataFrame({"cand_idx": [4, 1], "prompt": ["Q one?", "Q two?"], "response": ["A one.", "A two."]})
    assert to_messages(examples) == [
        {"prompt": [{"role": "user", "content": "Q one?"}], "completion": [{"role": "assistant", "content": "A one."}]},
        {"prompt": [{"role": "user", "content": "Q two?"}], "completion": [{"role": "assistant", "content": "A two."}]}]


def test_keep_count_names_the_rate_it_refuses():
    # (0, 1]: 0 and anything above 1 are refused, 1 keeps every prompt
    with pytest.raises(ValueError, match=r"^rate must be in \(0, 1\], not 0$"):
        keep_count(0, 6)
    with pytest.raises(ValueError, match=r"^rate must be in \(0, 1\], not 1\.5$"):
        keep_count(1.5, 6)
    assert keep_count(1, 6) == 6


def test_select_keeps_a_lone_candidate_and_returns_the_pick_schema():
    one = pl.DataFrame({"prompt_idx": [0], "cand_idx": [0], "value": [0.5]})
    picks = select(one, 0.5, 0, 1, 1)          # round(0.5 x 1) = 1 (half up): the one prompt is kept
    assert picks.schema == PICK_SCHEMA
    assert picks.to_dicts() == [{"prompt_idx": 0, "cand_idx": 0, "value": 0.5, "n_top": 1, "pick_tied": False,
                                 "rank": 0, "kept": True, "cut_tied": False}]
    none = select(one.clear(), 0.5, 0, 1, 1)
    assert none.height == 0 and none.schema == PICK_SCHEMA


@pytest.mark.parametrize("bad", [float("nan"), None])
def test_select_refuses_a_candidate_without_a_value(bad):
    cands = pl.DataFrame({"prompt_idx": [0, 1], "cand_idx": [0, 1], "value": [0.5, bad]},
                         schema={"prompt_idx": pl.Int64, "cand_idx": pl.Int64, "value": pl.Float64})
    with pytest.raises(ValueError, match=r"^select: every candidate needs a value$"):
        select(cands, 1.0, 0, 2, 2)


def test_ties_at_the_cut_keep_the_prompts_with_the_largest_prompt_key():
    # ten prompts of 1, 2 or 3 candidates ((p % 3) + 1); the prompt's top value v[p], the others v[p] - 1.
    # rate 0.45: round(4.5) = 5 prompts (half up) = p0, p1 (value 2) and 3 of the five prompts p2..p6
    # at value 1; the rule restated with numpy: those with the largest prompt key
    # default_rng([seed, 1]).random(n_pool_prompts)[prompt_idx] (a pool of 12 prompts here)
    v = [2, 2, 1, 1, 1, 1, 1, 0, 0, 0]
    rows = [(p, float(v[p] - (j > 0))) for p in range(10) for j in range((p % 3) + 1)]
    cands = pl.DataFrame({"prompt_idx": [p for p, _ in rows], "cand_idx": range(len(rows)),
                          "value": [x for _, x in rows]})
    kept_sets = set()
    for seed in range(4):
        pkey = np.random.default_rng([seed, 1]).random(12)
        order = sorted(range(10), key=lambda p: (-v[p], -pkey[p]))
        picks = select(cands, 0.45, seed, len(rows), 12)
        assert picks["prompt_idx"].to_list() == order and picks["rank"].to_list() == list(range(10))
        kept = sorted(picks.filter("kept")["prompt_idx"].to_list())
        assert kept == sorted(order[:5]) and kept[:2] == [0, 1]
        # the value-1 group is split by the coin: all five are cut_tied, the others are not
        assert sorted(picks.filter("cut_tied")["prompt_idx"].to_list()) == [2, 3, 4, 5, 6]
        kept_sets.add(tuple(kept))
    assert len(kept_sets) > 1                   # the seed decides


def test_curate_defaults_to_seed_0():
    pool, scores = two_formats()
    # format f without a seed: seed 0 (see TWO): p0 c0, p1 c2 (5), p2 c5 (4), p3 c7; seed 1 would pick c1, c6
    picks, s = curate(pool, scores, "judge", 1.0, judge="j", fmt="f", holdout_share=None)
    assert s["seed"] == 0 and picks.sort("prompt_idx")["cand_idx"].to_list() == [0, 2, 5, 7]


def test_curate_an_empty_pool():
    pool, scores = frames(HAND)
    for policy in ("judge", "length"):
        picks, s = curate(pool.clear(), scores.clear(), policy, 0.5, judge="j", fmt="f")
        assert picks.height == 0 and picks.schema == PICK_SCHEMA
        assert (s["n_eligible"], s["n_selected"], s["n_heldout_prompts"], s["cut_value"]) == (0, 0, 0, None)


def test_baselines_ignore_the_judge_cell():
    pool, _ = frames(HAND, heldout={6}, lengths={0: 3, 1: 8})
    # a baseline reads no scores (here a frame without columns) and names no judge, format, mode or score
    for policy in ("random", "length", "full"):
        picks, s = cur(pool, pl.DataFrame(), policy, 1.0, judge="j", fmt="f", decoding="constrained",
                       score="expected")
        assert (s["policy"], s["judge"], s["format"], s["decoding"], s["score"]) == (policy, None, None, None, None)
        assert picks.equals(cur(pool, None, policy, 1.0)[0])
    # length: p0's longest is c1 (8 characters)
    assert cur(pool, None, "length", 1.0)[0].filter(pl.col("prompt_idx") == 0)["cand_idx"][0] == 1


def test_a_score_kind_with_one_decoding_mode_is_read_in_that_mode():
    pool, cells = cells_by_mode([0.2, 0.9, 0.1, 0.8])   # expected: c1, c3 on top
    # labels come in two modes: greedy (the paper's) by default; the default score is label
    cell, decoding = pick_cell(cells, "j", "f")
    assert decoding == "greedy" and cell["s"].to_list() == [1.0, 0.0, 0.25, 0.75]
    # expected scores only come from constrained decoding: that mode, with no decoding asked for
    cell, decoding = pick_cell(cells, "j", "f", score="expected")
    assert decoding == "constrained" and cell["s"].to_list() == [0.2, 0.9, 0.1, 0.8]
    picks, s = cur(pool, cells, "judge", 1.0, judge="j", fmt="f", score="expected")
    assert (s["decoding"], s["score"], s["n_selected"]) == ("constrained", "expected", 2)
    assert picks.sort("prompt_idx")["cand_idx"].to_list() == [1, 3]          # 0.9 > 0.2, 0.8 > 0.1
    # eligible's default score is label too (greedy: s = (v - 1) / 4)
    got = eligible(pool, cells, "judge", "j", "f", held=pl.Series([], dtype=pl.Int64))
    assert got["value"].to_list() == [1.0, 0.0, 0.25, 0.75]


def test_eligible_holds_out_the_marked_prompts_by_default_and_types_its_columns():
    pool, scores = frames(HAND, heldout={6})             # p6 is c12, the last candidate
    for policy in ("judge", "random", "length", "full"):
        got = eligible(pool, scores, policy, "j", "f")
        assert got.schema == {"prompt_idx": pl.Int64, "cand_idx": pl.Int64, "value": pl.Float64}
        assert 6 not in got["prompt_idx"].to_list() and 12 not in got["cand_idx"].to_list()
    # random: every candidate but c12, every value the same (0): each pick is a draw
    got = eligible(pool, None, "random")
    assert got["cand_idx"].to_list() == list(range(12)) and got["value"].to_list() == [0.0] * 12


def test_eligible_errors_say_what_is_wrong():
    pool, scores = frames(HAND)
    with pytest.raises(ValueError, match=r"^unknown policy 'best' \(known: judge, random, length, full\)$"):
        eligible(pool, scores, "best", "j", "f")
    # policy judge needs all three: scores, judge and format (each one missing alone is refused)
    for args in ((None, "j", "f"), (scores, None, "f"), (scores, "j", None)):
        with pytest.raises(ValueError, match=r"^policy 'judge' needs scores, a judge and a format$"):
            eligible(pool, args[0], "judge", args[1], args[2])


def _heldout_key(prompt_id: str) -> bytes:
    """train.heldout's documented key, restated: blake2b('heldout|SEED|PROMPT_ID'), 8 bytes, seed 0."""
    return hashlib.blake2b(f"heldout|0|{prompt_id}".encode(), digest_size=8).digest()


def test_heldout_prompts_take_the_share_asked_for_in_pool_order():
    # 10 unmarked prompts: share 0.3 -> 3 prompts (the default 0.1 would hold out 1), the smallest keys
    pool, _ = frames({p: [3, 4] if p % 2 else [3] for p in range(10)})
    want = sorted(sorted(range(10), key=lambda p: _heldout_key(f"p{p}"))[:3])
    assert heldout_prompts(pool, share=0.3).to_list() == want
    # 300 prompts: share 0.2 -> 60, listed in pool order; marked ones (every third) in pool order too
    big, _ = frames({p: [3] for p in range(300)})
    want = sorted(sorted(range(300), key=lambda p: _heldout_key(f"p{p}"))[:60])
    assert heldout_prompts(big, share=0.2).to_list() == want
    marked, _ = frames({p: [3] for p in range(300)}, heldout=set(range(0, 300, 3)))
    assert heldout_prompts(marked, share=None).to_list() == list(range(0, 300, 3))
