"""The Report a new user reads (audit.checklist and checklist_markdown; the Report page; the CLI's
`report`): a summary table across formats first, the pool's curation, training and evaluation runs,
the date, the tool's version and each template's hash, and a simulated judge labelled as such
without the decoding settings that do not apply to it. DESIGN.md's keys all stay."""

import hashlib
import json
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from audit import audit_cells, checklist, checklist_markdown, decisions
from ingest.runs import running
from ingest.scoring import ScoreRequest, score
from ingest.scoring.formats import BUILTIN
from ingest.store import import_pool
from tests.conftest import REPO

ROWS = [{"prompt_id": f"q{i // 4}", "prompt": f"Question {i // 4}", "candidate_id": f"c{i % 4}",
         "response": "answer " * (1 + i % 4), "reference": float(i % 4)} for i in range(24)]


@pytest.fixture
def scored(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", ROWS), "p")
    score(ScoreRequest(pool="p", judge="fake:sim?noise=0.3", formats=["likert5", "tournament"], db=db, seed=1,
                       progress=False, flush_interval_s=0.05))
    return db


def test_report_keeps_designs_keys_and_adds_summary_runs_date_version_hashes(scored, tmp_path):
    from train.subsets import make_subset
    got = make_subset(scored, "p", "judge", 0.5, tmp_path / "s.jsonl", judge="sim", fmt="likert5")
    with running(scored, "train", pool="p", config={"curation": {"policy": "judge", "judge": "sim",
                                                                 "format": "likert5", "rate": 0.5}}):
        pass
    doc = checklist(scored, "p")
    assert {"pool", "cells"} <= set(doc) and {"generated_at", "version", "summary", "runs", "studies"} <= set(doc)
    assert doc["version"] == "0.1.0" and doc["generated_at"].endswith("+00:00")
    for c in doc["cells"]:     # DESIGN.md's keys, unrenamed, and the added ones
        assert {"judge", "format", "template", "decoding", "tie_prob", "d2", "distinct", "n_candidates",
                "parse_rate", "slot"} <= set(c)
        assert c["template_sha256"] == hashlib.sha256(BUILTIN[c["format"]].template.encode()).hexdigest()
        assert c["provider"] == "fake" and c["simulated"] is True
    cells = {(r["format"], r["score"]): r for r in audit_cells(scored, "p").to_dicts()}
    summary = {(r["format"], r["score"]): r for r in doc["summary"]}
    assert summary.keys() == cells.keys()
    for key, row in summary.items():
        for name in ("tie_prob", "d2", "top_tied", "tau_a", "top1", "parse_rate"):
            assert row[name] == cells[key][name], (key, name)
    # the stored curation of sim x likert5 at 0.5: its tie-broken picks over its selected prompts
    lik = summary[("likert5", "label")]
    assert lik["curation_rate"] == 0.5
    assert lik["coin_flip_share"] == pytest.approx(got["n_pick_tied"] / got["n_selected"])
    assert summary[("tournament", "label")]["curation_rate"] is None
    assert summary[("tournament", "label")]["b"] == next(c["slot"]["b"] for c in doc["cells"]
                                                         if c["format"] == "tournament")
    assert [(r["kind"], r["status"], r["config"]["curation"]["format"]) for r in doc["runs"]] == [
        ("train", "finished", "likert5")]
    md = checklist_markdown(doc).split("\n")
    assert md[:4] == ["# Reporting checklist: pool `p`", "", "6 prompts, 24 candidates.", ""]
    assert md[4].startswith("Generated ") and "by judgeaudit 0.1.0" in md[4]
    first_cell = next(i for i, line in enumerate(md) if line.startswith("## sim × "))
    assert md.index("## Summary across formats") < md.index("## Curation, training and evaluation runs") < first_cell
    assert any(line.startswith("- run ") and "train (sim × likert5 at rate 0.5), finished" in line for line in md)
    text = "\n".join(md)
    assert "   Judge: a simulated judge (`fake`)" in text and "16 new tokens" not in text
    settings = [line for line in md if line.startswith("   Settings: ")]
    assert settings and not any("max_tokens" in s or "logprobs" in s or "temperature" in s for s in settings)
    assert '"seed": 1' in settings[0]                     # what does apply to it stays
    assert f"   Template SHA-256: `{doc['cells'][0]['template_sha256']}`." in md


def test_the_page_download_and_the_cli_report_are_the_same_document(scored, tmp_path, monkeypatch):
    out = tmp_path / "r.json"
    subprocess.run([sys.executable, "-m", "app.cli", "report", "--pool", "p", "--out", str(out), "--db", str(scored)],
                   check=True, cwd=REPO, capture_output=True)
    cli = json.loads(out.read_text())
    # the page's document: the checklist and the decision per cell (no judgeaudit.toml: no prices)
    page = json.loads(json.dumps(checklist(scored, "p") | {"decisions": decisions(scored, "p").to_dicts()},
                                 default=str))
    cli.pop("generated_at"), page.pop("generated_at")          # made a moment apart
    assert cli == page
    monkeypatch.setenv("JUDGEAUDIT_DB", str(scored))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/report/page.py").run()
    assert not at.exception
    shown = "\n".join(m.value for m in at.markdown)
    assert shown.index("## Summary across formats") < shown.index("## sim × likert5")


def test_repeated_calls_show_their_mean_beside_sample_0_in_the_summary(db, write_jsonl):
    # issue 22: the report shows side by side what repeating does; each number is the audit's own cell
    import polars as pl
    import_pool(db, write_jsonl("p.jsonl", ROWS), "p")
    score(ScoreRequest(pool="p", judge="fake:sim?noise=0.5", formats=["likert5"], db=db, samples=3, temperature=0.7,
                       progress=False, flush_interval_s=0.05))
    doc = checklist(db, "p")
    cells = audit_cells(db, "p").filter(pl.col("score") == "label")
    rows = [r for r in doc["summary"] if r["score"] == "label"]
    assert [r["aggregate"] for r in rows] == ["single", "mean"]
    for row in rows:
        cell = cells.filter(pl.col("aggregate") == row["aggregate"]).to_dicts()[0]
        assert (row["tie_prob"], row["d2"], row["top_tied"], row["tau_a"]) == \
            (cell["tie_prob"], cell["d2"], cell["top_tied"], cell["tau_a"])
    assert rows[1]["b"] is None and rows[1]["coin_flip_share"] is None
    # the details stay one per single cell (sample 0), as DESIGN's checklist has them
    assert len(doc["cells"]) == audit_cells(db, "p").filter(pl.col("aggregate") == "single").height
    md = checklist_markdown(doc)
    assert "| judge | format | decoding | score | samples | tie prob." in md
    # issue 26: a run at temperature 0.7 is sampled, not greedy, in every row
    assert "| sim | likert5 | sampled | label | first |" in md and "| sim | likert5 | sampled | label | mean |" in md
    assert "greedy" not in md


def test_a_report_without_repeats_has_no_samples_column(scored):
    doc = checklist(scored, "p")
    assert {r["aggregate"] for r in doc["summary"]} == {"single"}
    assert "| samples |" not in checklist_markdown(doc)


def test_a_judge_sampled_at_a_temperature_reads_as_sampled_with_its_temperature_samples_and_repeats(db, write_jsonl):
    # issue 26 item 2: a judge asked at T = 0.7 is not greedy. The JSON and the Markdown say sampled,
    # the temperature, the samples per call, what the first/mean column means, and the cell's flip
    # rate and alpha as audit.consistency computes them.
    import polars as pl
    from audit import consistency
    import_pool(db, write_jsonl("p.jsonl", ROWS), "p")
    score(ScoreRequest(pool="p", judge="fake:sim?noise=0.5", formats=["likert5"], db=db, samples=3, temperature=0.7,
                       progress=False, flush_interval_s=0.05))
    doc = checklist(db, "p")
    (cell,) = [c for c in doc["cells"] if c["score"] == "label"]
    d = cell["decoding"]
    assert (d["mode"], d["temperature"], d["samples"]) == ("sampled", 0.7, 3)
    assert d["rule"].startswith("sampled: the judge's own answer drawn at a temperature above 0")
    assert "temperature 0.7" in d["rule"] and "each call asked 3 times (samples 0 to 2)" in d["rule"]
    assert "greedy" not in json.dumps(doc)
    ref = consistency(db, "p").filter(pl.col("format") == "likert5").to_dicts()[0]
    assert ref["decoding"] == "sampled" and ref["samples"] == 3
    assert cell["repeats"]["flip_rate"] == ref["flip_rate"] and cell["repeats"]["alpha"] == ref["alpha"]
    assert cell["repeats"]["n_items"] == 24          # 6 prompts x 4 candidates, every sample parses
    md = checklist_markdown(doc)
    assert "## sim × likert5 × sampled" in md
    assert "Samples: `first` scores each call by its first answer (sample 0), `mean` by the mean" in md
    assert (f"5. Repeats: up to 3 samples per call; over 24 calls with ≥ 2 parsed samples, the flip rate (calls "
            f"whose samples disagree) is {100 * ref['flip_rate']:.0f}%") in md
    assert f"Krippendorff's α (ordinal) = {ref['alpha']:.3f}" in md


def test_a_greedy_judge_keeps_greedy_and_has_no_repeats_line(scored):
    doc = checklist(scored, "p")
    assert {c["decoding"]["mode"] for c in doc["cells"]} == {"greedy"}
    assert all(c["repeats"] is None and c["decoding"]["samples"] == 1 for c in doc["cells"])
    md = checklist_markdown(doc)
    assert "5. Repeats" not in md and "Samples: `first`" not in md


def test_the_demos_t07_judge_reads_as_sampled_at_its_temperature_in_the_report(db):
    # the bundled smollm2-demo-t0.7 (real samples at temperature 0.7, imported from a verdict file): the
    # seeding records the temperature the demo knows (ingest/demo/README.md: `--temperature 0.7`), and the
    # sampled repeats of smollm2-demo-t1 are draws from the constrained distribution, temperature 1
    from ingest.demo import seed_demo
    seed_demo(db, pools=("mtbench-formats",))
    doc = checklist(db, "mtbench-formats")
    warm = [c for c in doc["cells"] if c["judge"] == "smollm2-demo-t0.7"]
    assert warm and {c["decoding"]["mode"] for c in warm} == {"sampled"}
    for c in warm:
        assert c["decoding"]["temperature"] == 0.7 and "; temperature 0.7;" in c["decoding"]["rule"]
        assert "not recorded" not in c["decoding"]["rule"]
        assert c["decoding"]["samples"] == 5 and "each call asked 5 times" in c["decoding"]["rule"]
    drawn = [c for c in doc["cells"] if c["judge"] == "smollm2-demo-t1"]
    assert drawn and all(c["decoding"]["temperature"] == 1.0 and "; temperature 1;" in c["decoding"]["rule"]
                         for c in drawn)
    md = checklist_markdown(doc)
    assert "## smollm2-demo-t0.7 × binary × sampled" in md and "temperature not recorded" not in md


def test_a_verdict_file_imported_with_its_decoding_settings_records_them(db, write_jsonl):
    # import_verdicts(decoding_settings=...) stores what the caller knows on each cell run it starts; without
    # them the report says the temperature was not recorded
    from ingest.scoring import import_verdicts
    import_pool(db, write_jsonl("p.jsonl", ROWS), "p")
    rows = [{"judge": judge, "format": "likert5", "prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"],
             "raw": "Rating: 3", "sample": k, "decoding": "sampled"} for judge in ("warm", "unknown")
            for r in ROWS for k in range(2)]
    import_verdicts(db, write_jsonl("w.jsonl", [r for r in rows if r["judge"] == "warm"]), "p",
                    decoding_settings={"temperature": 0.7})
    import_verdicts(db, write_jsonl("u.jsonl", [r for r in rows if r["judge"] == "unknown"]), "p")
    cells = {c["judge"]: c for c in checklist(db, "p")["cells"] if c["score"] == "label"}
    assert cells["warm"]["decoding"]["temperature"] == 0.7 and "; temperature 0.7;" in cells["warm"]["decoding"]["rule"]
    assert "temperature not recorded (imported verdicts)" in cells["unknown"]["decoding"]["rule"]


REPEATS = {"samples": 5, "n_items": 24, "flip_rate": 0.125, "agreement": 0.942, "alpha": 0.679, "alpha_lo": 0.069,
           "alpha_hi": 0.988, "level": "nominal", "samples_for_alpha_08": 2}


def test_the_alpha_sentence_speaks_only_while_alpha_is_below_its_target():
    from audit._report import _repeats_line
    # α 0.679 < 0.8: Spearman-Brown, 2·0.679 / (1 + 0.679) = 0.809 >= 0.8, so a mean of 2 samples reaches it
    assert _repeats_line(REPEATS).endswith("(95% CI 0.069 to 0.988); a mean of 2 samples would reach α 0.8.")
    # α 0.908 is above the target already: samples_for_alpha_08 is 1 and no sentence says a mean would reach it
    above = _repeats_line({**REPEATS, "alpha": 0.908, "alpha_lo": 0.7, "alpha_hi": 0.97, "samples_for_alpha_08": 1})
    assert above.endswith("Krippendorff's α (nominal) = 0.908 (95% CI 0.700 to 0.970).") and "would reach" not in above
    # α at or below 0: no mean of samples reaches 0.8 (samples_for_alpha_08 null); the minus sign is U+2212
    below = _repeats_line({**REPEATS, "alpha": -0.108, "alpha_lo": -0.479, "alpha_hi": 0.11,
                           "samples_for_alpha_08": None})
    assert "α (nominal) = −0.108 (95% CI −0.479 to 0.110)." in below and "would reach" not in below


def test_a_flip_rate_over_too_few_calls_is_too_few_to_say_in_the_report():
    from audit import MIN_N
    from audit._report import _repeats_line
    assert MIN_N == 5
    # the demo's smollm2-demo-t0.7 × numeric100: 3 calls with two parsed samples, flip rate 67%
    few = _repeats_line({**REPEATS, "n_items": 3, "flip_rate": 2 / 3})
    assert few == ("up to 5 samples per call; too few to say: 3 calls with ≥ 2 parsed samples, at least 5 needed for "
                   "a flip rate or α.")
    assert "67%" not in few
    # five calls are enough: stated with its n
    assert _repeats_line({**REPEATS, "n_items": 5}).startswith("up to 5 samples per call; over 5 calls with ≥ 2 parsed")


def test_a_jury_reads_as_a_jury_in_the_report(db):
    # the demo's smollm2-panel: the mean vote of three judges; its cells have no template of their own
    from ingest.demo import seed_demo
    seed_demo(db, pools=("mtbench-formats",))
    doc = checklist(db, "mtbench-formats")
    panel = [c for c in doc["cells"] if c["judge"] == "smollm2-panel"]
    assert panel and all(c["jury"] == {"vote": "mean", "members": ["smollm2-demo", "smollm2-demo-t1", "smollm2-local"]}
                         for c in panel)
    assert all("jury" not in c for c in doc["cells"] if c["judge"] != "smollm2-panel")
    md = checklist_markdown(doc)
    section = md[md.index("## smollm2-panel × tournament × constrained"):]
    assert "verdicts imported" not in section.split("## ")[1]
    assert ("1. Format: a jury of smollm2-demo, smollm2-demo-t1, smollm2-local (mean vote): each call's verdict "
            "combines its members' verdicts on that call, so the jury has no prompt of its own; each member's "
            "template is under its own cells.") in section
    assert "   Decoding: its members' calls, constrained: " in section
    assert "3. Slots: a jury's verdicts, its members' calls combined; " in section


def test_counts_in_the_report_name_their_noun_in_the_right_number():
    doc = {"pool": {"name": "x", "n_prompts": 1, "n_candidates": 1},
           "cells": [{"judge": "J", "format": "numeric100", "score": "label", "score_rule": "the rule", "template": None,
                      "decoding": {"mode": "greedy", "rule": "R"}, "tie_prob": 1.0, "d2": 1.0, "distinct": 1,
                      "n_candidates": 1, "parse_rate": 0.125, "slot": None}]}
    assert "1 distinct value over 1 scored candidate." in checklist_markdown(doc)
