"""Curation (DESIGN.md 'Curation and training'): exact counts on hand-built pools, seeded
tie-breaks that are uniform and match the audit's top1, the baselines, held-out prompts, the
stored subset and its TRL export."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

import audit
from ingest import import_pool, import_verdicts
from ingest._subsets import subset_by_hash, subsets
from tests.conftest import query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts
from train.curate import curate, heldout_prompts, keep_count, overlap, preview, select
from train.heldout import heldout_prompt_ids

EXE = str(Path(sys.executable).with_name("judgeaudit"))


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


def test_a_cell_is_judge_format_decoding_and_score():
    pool, scores = frames({0: [5, 1], 1: [2, 4]})
    cells = pl.concat([
        scores.with_columns(pl.lit("greedy").alias("decoding"), pl.lit("label").alias("score")),
        scores.with_columns(pl.lit("constrained").alias("decoding"), pl.lit("label").alias("score"),
                            pl.Series("s", [0.0, 1.0, 1.0, 0.0])),
        scores.with_columns(pl.lit("constrained").alias("decoding"), pl.lit("expected").alias("score"),
                            pl.Series("s", [0.9, 0.1, 0.2, 0.8]))])
    picked = {}
    for decoding, score in ((None, "label"), ("constrained", "label"), ("constrained", "expected")):
        picks, s = cur(pool, cells, "judge", 1.0, judge="j", fmt="f", decoding=decoding, score=score)
        picked[(decoding, score)] = picks.sort("prompt_idx")["cand_idx"].to_list()
        assert s["decoding"] == (decoding or "greedy") and s["score"] == score
    # greedy (the default of two modes): c0 (5) and c3 (4); constrained labels: c1, c2; expected: c0, c3
    assert picked == {(None, "label"): [0, 3], ("constrained", "label"): [1, 2], ("constrained", "expected"): [0, 3]}


def test_overlap_and_preview():
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
    pv = preview(pool, both, "j", 0.5, holdout_share=None)
    assert pv["format"].to_list() == ["f", "g"] and pv["n_selected"].to_list() == [2, 2]


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


@pytest.mark.slow
def test_curate_and_train_page(tmp_path, monkeypatch, write_jsonl):
    """The page on a user's pool: the preview's counts, the exact train command, and Train
    launching a background run of the tiny model configured on the server, which finishes."""
    import time

    from streamlit.testing.v1 import AppTest

    from ingest import runs
    from tests.conftest import REPO
    from tests.test_train import build_tiny
    db = tmp_path / "mine.duckdb"
    rows = synthetic_pool(40, seed=2)
    import_pool(db, write_jsonl("pool.jsonl", rows), "mine")
    import_verdicts(db, write_jsonl("v.jsonl", [v for v in synthetic_verdicts(rows, ("alpha",), seed=2)
                                                 if v["format"] != "tournament"]), "mine")
    build_tiny(tmp_path / "tiny")
    (tmp_path / "judgeaudit.toml").write_text('[models]\ntiny = "tiny"\n')
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/curate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    pool, scores = audit.pool_candidates(db, "mine"), audit.candidate_scores(db, "mine")
    fmt = at.selectbox[2].value
    _, s = curate(pool, scores, "judge", 0.25, 0, "alpha", fmt)       # the page's defaults
    assert at.metric[0].value == str(s["n_eligible"]) and at.metric[1].value == str(s["n_selected"])
    base = next(sb for sb in at.selectbox if sb.label == "Base model")
    base.select("tiny").run()
    next(n for n in at.number_input if n.label.startswith("Max steps")).set_value(2).run()
    command = at.code[0].value
    assert command.startswith("judgeaudit train --pool mine --policy judge --judge alpha --format " + fmt)
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
