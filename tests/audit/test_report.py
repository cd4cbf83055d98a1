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

from audit import audit_cells, checklist, checklist_markdown
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
    page = json.loads(json.dumps(checklist(scored, "p"), default=str))
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
    assert "| sim | likert5 | greedy | label | first |" in md and "| sim | likert5 | greedy | label | mean |" in md


def test_a_report_without_repeats_has_no_samples_column(scored):
    doc = checklist(scored, "p")
    assert {r["aggregate"] for r in doc["summary"]} == {"single"}
    assert "| samples |" not in checklist_markdown(doc)
