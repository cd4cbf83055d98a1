"""audit/_export.py and `judgeaudit export-verdicts` (DESIGN.md 'Command line', issue 21 §4): one row
per stored call, as Parquet or JSONL, every column checked against the stored calls; each verdict's
endpoint; the rows streamed in batches and counted per (sample, status) in the database."""

import json
import re
import subprocess
from pathlib import Path

import duckdb
import polars as pl
import pytest

from audit import EXPORT_COLUMNS, export_counts, verdict_batches, verdict_rows
from ingest.scoring import ScoreRequest, import_verdicts, score
from ingest.store import import_pool
from tests.conftest import query_rows
from tests.app.test_cli import EXE, run      # the console script as users run it
from tests.ingest.test_verdict_import import POOL, pool  # noqa: F401  (the five-candidate pool and its fixture)
from tests.openai_server import OpenAIServer

def test_export_after_import_is_the_hand_built_table(db, pool, write_jsonl):
    rows = [
        {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "a", "raw": "Score: 4",
         "label_probs": {"3": 0.25, "4": 0.75}, "tokens_in": 10, "tokens_out": 2, "latency_ms": 12.5,
         "endpoint": "http://user:pw@judge.example:8000/v1/?key=s3cret"},
        {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "b", "raw": "nope"},
        # c shown as Response A against a: B++ is a margin of -2 for slot A (c)
        {"judge": "j", "format": "tournament", "prompt_id": "q1", "a_id": "c", "b_id": "a", "raw": "B++"},
        {"judge": "j", "format": "binary", "prompt_id": "q2", "candidate_id": "a", "raw": None, "error": "HTTP 500"},
        {"judge": "j", "format": "numeric100", "prompt_id": "q2", "candidate_id": "b", "raw": "150", "sample": 2},
    ]
    import_verdicts(db, write_jsonl("v.jsonl", rows), pool)
    got = verdict_rows(db, pool)
    assert tuple(got.columns) == EXPORT_COLUMNS
    none = dict.fromkeys(("label", "value", "error", "label_probs", "tokens_in", "tokens_out", "latency_ms",
                          "endpoint", "candidate_b"))
    base = {"judge": "j", "decoding": "greedy", "sample": 0, **none}
    expected = [   # ordered by judge, format, decoding, prompt, slot A, slot B, sample
        {**base, "format": "binary", "prompt_id": "q2", "candidate_a": "a", "raw": None, "status": "failed",
         "error": "HTTP 500"},
        {**base, "format": "likert5", "prompt_id": "q1", "candidate_a": "a", "raw": "Score: 4", "label": "4",
         "value": 4.0, "status": "parsed", "label_probs": {"3": 0.25, "4": 0.75}, "tokens_in": 10, "tokens_out": 2,
         "latency_ms": 12.5, "endpoint": "http://judge.example:8000/v1"},   # no credentials, no query string
        {**base, "format": "likert5", "prompt_id": "q1", "candidate_a": "b", "raw": "nope", "status": "unparsed"},
        # 150 is out of the 0-100 range: the label read is kept, the value is not (unparsed)
        {**base, "format": "numeric100", "prompt_id": "q2", "candidate_a": "b", "sample": 2, "raw": "150",
         "label": "150", "status": "unparsed"},
        {**base, "format": "tournament", "prompt_id": "q1", "candidate_a": "c", "candidate_b": "a", "raw": "B++",
         "label": "B++", "value": -2.0, "status": "parsed"},
    ]
    actual = [{**r, "label_probs": json.loads(r["label_probs"]) if r["label_probs"] else None} for r in got.to_dicts()]
    assert actual == expected
    assert "s3cret" not in str(query_rows(db, "SELECT * FROM verdicts"))


def _stored(db: Path) -> list[dict]:
    """The stored calls, each table read on its own and joined here by hand (not by the export's SQL)."""
    judges = dict(query_rows(db, "SELECT judge_id, name FROM judges"))
    formats = dict(query_rows(db, "SELECT format_id, name FROM formats"))
    prompts = dict(query_rows(db, "SELECT prompt_idx, prompt_id FROM prompts"))
    cands = dict(query_rows(db, "SELECT cand_idx, candidate_id FROM candidates"))
    cols = ["judge_id", "format_id", "decoding", "prompt_idx", "a_idx", "b_idx", "sample", "raw", "answer", "value",
            "status", "error", "answer_probs", "tokens_in", "tokens_out", "latency_ms", "endpoint"]
    out = []
    for r in query_rows(db, f"SELECT {', '.join(cols)} FROM verdicts"):
        v = dict(zip(cols, r))
        out.append({"judge": judges[v["judge_id"]], "format": formats[v["format_id"]], "decoding": v["decoding"],
                    "prompt_id": prompts[v["prompt_idx"]], "candidate_a": cands[v["a_idx"]],
                    "candidate_b": cands.get(v["b_idx"]), "sample": v["sample"], "raw": v["raw"],
                    "label": v["answer"], "value": v["value"] if v["status"] == "ok" else None,
                    "status": {"ok": "parsed", "failed": "failed"}.get(v["status"], "unparsed"),
                    "error": v["error"], "label_probs": json.loads(v["answer_probs"]) if v["answer_probs"] else None,
                    "tokens_in": v["tokens_in"], "tokens_out": v["tokens_out"], "latency_ms": v["latency_ms"],
                    "endpoint": v["endpoint"]})
    return out


def _key(r: dict) -> tuple:
    return r["judge"], r["format"], r["prompt_id"], r["candidate_a"], r["candidate_b"] or "", r["sample"]


def test_export_after_a_simulated_scoring_run_equals_the_stored_calls(db, pool, tmp_path):
    score(ScoreRequest(pool="p", judge="fake:sim?unparsed=0.3&seed=1", formats=["likert5", "tournament"],
                       progress=False, db=db))
    stored = sorted(_stored(db), key=_key)
    # 5 candidates x likert5 + tournament pairs: q1 has 3 candidates (3 pairs), q2 has 2 (1 pair) -> 5 + 4 = 9
    assert len(stored) == 9
    got = verdict_rows(db, pool)
    exported = sorted(({**r, "label_probs": json.loads(r["label_probs"]) if r["label_probs"] else None}
                       for r in got.to_dicts()), key=_key)
    assert exported == stored
    assert {r["candidate_b"] for r in exported if r["format"] == "likert5"} == {None}
    assert all(r["candidate_b"] is not None for r in exported if r["format"] == "tournament")
    assert {r["endpoint"] for r in exported} == {None}      # a simulated judge answers from no server
    assert all((r["value"] is None) == (r["status"] != "parsed") for r in exported)

    # the files: Parquet read back by polars and DuckDB, JSONL with label_probs as objects
    out = tmp_path / "v.parquet"
    assert json.loads(run("export-verdicts", "--pool", "p", "--out", out, "--json").stdout)["rows"] == 9
    assert pl.read_parquet(out).equals(got)
    import pandas as pd
    assert list(pd.read_parquet(out).columns) == list(EXPORT_COLUMNS) and len(pd.read_parquet(out)) == 9
    assert duckdb.sql(f"SELECT * FROM read_parquet('{out}')").fetchall() == [tuple(r) for r in got.iter_rows()]
    lines = tmp_path / "v.jsonl"
    assert "wrote 9 verdicts" in run("export-verdicts", "--pool", "p", "--out", lines).stdout
    rows = [json.loads(line) for line in lines.read_text().splitlines()]
    assert [list(r) for r in rows] == [list(EXPORT_COLUMNS)] * 9
    assert [r["label_probs"] for r in rows] == [json.loads(x) if x else None for x in got["label_probs"]]
    assert [{k: r[k] for k in EXPORT_COLUMNS if k != "label_probs"} for r in rows] == \
        [{k: r[k] for k in EXPORT_COLUMNS if k != "label_probs"} for r in got.to_dicts()]


def test_an_exported_file_imports_into_another_database_as_the_same_calls(db, pool, tmp_path, write_jsonl):
    score(ScoreRequest(pool="p", judge="fake:sim?unparsed=0.3&seed=1", formats=["likert5", "tournament"],
                       progress=False, db=db))
    other = tmp_path / "other.duckdb"
    import_pool(other, write_jsonl("pool2.jsonl", POOL), "p")
    for suffix in ("parquet", "jsonl"):
        out = tmp_path / f"v.{suffix}"
        run("export-verdicts", "--pool", "p", "--out", out)
        assert import_verdicts(other, out, "p")["imported"] == (9 if suffix == "parquet" else 0)
        # the same calls, numbers and texts; label_probs the same object (the import sorts its keys)
        assert sorted(_parsed(verdict_rows(other, "p")), key=_key) == sorted(_parsed(verdict_rows(db, "p")), key=_key)


def _parsed(frame: pl.DataFrame) -> list[dict]:
    return [{**r, "label_probs": json.loads(r["label_probs"]) if r["label_probs"] else None} for r in frame.to_dicts()]


def test_export_refusals(db, pool, tmp_path):
    bad = run("export-verdicts", "--pool", "p", "--out", tmp_path / "v.csv", ok=False)
    assert bad.returncode == 1 and "write a .parquet or .jsonl file, not '.csv'" in bad.stderr
    bad = run("export-verdicts", "--pool", "nope", "--out", tmp_path / "v.parquet", ok=False)
    assert bad.returncode == 1 and "no pool named 'nope'" in bad.stderr
    assert not (tmp_path / "v.parquet").exists() and list(tmp_path.glob(".v.parquet*")) == []
    bad = run("export-verdicts", "--pool", "p", "--out", tmp_path / "no" / "v.jsonl", ok=False)
    assert bad.returncode == 1 and "no such folder" in bad.stderr
    # a pool without calls: an empty file that still has every column
    run("export-verdicts", "--pool", "p", "--out", tmp_path / "empty.parquet")
    assert pl.read_parquet(tmp_path / "empty.parquet").columns == list(EXPORT_COLUMNS)


def test_each_verdict_records_the_endpoint_that_answered(db, pool):
    with OpenAIServer() as srv:
        # credentials in the URL reach the server, never the database or the export
        url_with_secret = srv.url.replace("http://", "http://user:s3cret@") + "/"
        score(ScoreRequest(pool="p", judge=f"openai:test-judge@{url_with_secret}", formats=["likert5", "anchored"],
                           progress=False, db=db, concurrency=2))
    got = verdict_rows(db, pool)
    assert got.height == 5 + 5   # 5 candidates, pointwise and each against its prompt's anchor
    assert got["endpoint"].unique().to_list() == [srv.url]
    assert query_rows(db, "SELECT DISTINCT endpoint FROM verdicts") == [(srv.url,)]
    assert "s3cret" not in str(query_rows(db, "SELECT * FROM verdicts")) + str(query_rows(db, "SELECT * FROM judges"))
    # calls stored before migration 009 have no endpoint of their own: the judge's stands in
    con = duckdb.connect(str(db))
    con.execute("UPDATE verdicts SET endpoint = NULL")
    con.close()
    assert verdict_rows(db, pool)["endpoint"].unique().to_list() == [srv.url]


def test_the_report_page_downloads_the_same_rows_in_a_browser(db, pool, tmp_path):
    """Debian's chromium against `judgeaudit app`: the Report page's Parquet download holds what
    export-verdicts writes (set JUDGEAUDIT_SCREENSHOTS=DIR to keep a 1280 px screenshot)."""
    import os
    import shutil
    from tests.conftest import free_port, wait_http
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright
    score(ScoreRequest(pool="p", judge="fake:sim?unparsed=0.3&seed=1", formats=["likert5", "tournament"],
                       progress=False, db=db))
    port = free_port()
    proc = subprocess.Popen([str(Path(EXE)), "app", "--port", str(port), "--address", "127.0.0.1"],
                            env={**os.environ, "JUDGEAUDIT_DB": str(db)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert wait_http(f"http://127.0.0.1:{port}/_stcore/health"), "the dashboard did not start"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            page = browser.new_page(accept_downloads=True, viewport={"width": 1280, "height": 900})
            page.set_default_timeout(90_000)
            page.goto(f"http://127.0.0.1:{port}")
            more = page.get_by_test_id("stSidebarNavViewButton")     # past 10 pages the list folds
            if more.count() and "more" in more.inner_text():
                more.click()
            page.get_by_role("link", name="Report").click()
            prepare = page.get_by_role("button", name=re.compile(r"Prepare the verdict downloads \([\d,]+ rows\)"))
            prepare.click()                                   # the files are made on request (issue 29)
            button = page.get_by_role("button", name="Download verdicts (Parquet)")
            expect(button).to_be_visible(timeout=90_000)
            expect(page.get_by_role("heading", name="Reporting checklist").first).to_be_visible()
            if os.environ.get("JUDGEAUDIT_SCREENSHOTS"):
                page.screenshot(path=str(Path(os.environ["JUDGEAUDIT_SCREENSHOTS"]) / "report-download.png"))
            with page.expect_download() as info:
                button.click()
            assert info.value.suggested_filename == "verdicts-p.parquet"
            downloaded = pl.read_parquet(info.value.path())
            browser.close()
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
    assert downloaded.height == 9 and downloaded.equals(verdict_rows(db, pool))


def test_export_counts_and_batches_by_hand(db, write_jsonl):
    # three candidates, one judge: likert5 a "3" (parsed), b "nope" (unparsed), c "5" (parsed);
    # tournament a-b "A+" (parsed), b-c "who knows" (unparsed): sample 0, 3 parsed and 2 unparsed
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "Q?", "candidate_id": c,
                                             "response": c} for c in "abc"]), "p")
    rows = [{"judge": "j", "format": "likert5", "prompt_id": "q", "candidate_id": c, "raw": raw}
            for c, raw in (("a", "3"), ("b", "nope"), ("c", "5"))]
    rows += [{"judge": "j", "format": "tournament", "prompt_id": "q", "a_id": a, "b_id": b, "raw": raw}
             for a, b, raw in (("a", "b", "A+"), ("b", "c", "who knows"))]
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    assert export_counts(db, "p").rows() == [(0, "parsed", 3), (0, "unparsed", 2)]
    # batches of at most 2 rows: 2 + 2 + 1, the JSON lines the same five calls as the frame's rows
    batches = list(verdict_batches(db, "p", json_lines=True, rows=2))
    assert sum(b.num_rows for b in batches) == 5 and max(b.num_rows for b in batches) <= 2
    lines = [json.loads(x) for b in batches for x in b.column("line").to_pylist()]
    assert sorted((x["format"], x["candidate_a"], x["raw"], x["status"]) for x in lines) == [
        ("likert5", "a", "3", "parsed"), ("likert5", "b", "nope", "unparsed"), ("likert5", "c", "5", "parsed"),
        ("tournament", "a", "A+", "parsed"), ("tournament", "b", "who knows", "unparsed")]
    frame = verdict_rows(db, "p")
    assert [x["raw"] for x in lines] == frame["raw"].to_list()
    # a pool without calls: one empty batch that still has the columns
    import_pool(db, write_jsonl("e.jsonl", [{"prompt_id": "q", "prompt": "Q?", "candidate_id": "a",
                                             "response": "a"}]), "empty")
    (empty,) = list(verdict_batches(db, "empty"))
    assert empty.num_rows == 0 and tuple(empty.schema.names) == EXPORT_COLUMNS
    assert export_counts(db, "empty").height == 0
