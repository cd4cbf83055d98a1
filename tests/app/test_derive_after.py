"""The run that brings verdicts refreshes the derived results: after `judgeaudit import-verdicts` (a
subprocess, a real DuckDB file) the pool's derived results are stored and equal a fresh computation,
the command says so in one line, and a page's first view then computes nothing; JUDGEAUDIT_NO_DERIVE=1
skips it. Another judge's verdicts compute that judge's parts alone. The Pool page's summary, stored,
against hand counts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import polars as pl
from polars.testing import assert_frame_equal

from audit import derived
from tests.audit.test_derived import NAMES, ORIGINAL, _args, _comparable, _fresh, _read, counted  # noqa: F401  (a fixture)
from tests.conftest import REPO, query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


def _judgeaudit(*argv, env_extra=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("JUDGEAUDIT_NO_DERIVE", None)            # the suite's default off: the command as a user runs it
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "app.cli", *argv], capture_output=True, text=True, env=env,
                          timeout=600)


def test_import_verdicts_stores_the_derived_results_a_page_then_reads(db, tmp_path, counted):
    rows = synthetic_pool(8, seed=11)
    pool_file = write_jsonl(tmp_path / "pool.jsonl", rows)
    verdicts = synthetic_verdicts(rows, seed=11)
    out = _judgeaudit("import-pool", str(pool_file), "--pool", "s", "--db", str(db),
                      env_extra={"JUDGEAUDIT_NO_DERIVE": "1"})
    assert out.returncode == 0 and "derived" not in out.stderr, out.stderr
    assert query_rows(db, "SELECT count(*) FROM derived_results") == [(0,)]     # skipped: nothing stored

    out = _judgeaudit("import-verdicts", str(write_jsonl(tmp_path / "v.jsonl", verdicts)), "--pool", "s",
                      "--db", str(db), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["imported"] == len(verdicts)      # stdout: the command's JSON alone
    n = query_rows(db, "SELECT count(*) FROM verdicts")[0][0]
    line = [x for x in out.stderr.splitlines() if x.startswith("derived results of pool 's'")]
    shown = set(NAMES) - {"student_overlap"}      # every result but a student's overlap, shown on a choice
    assert line and f"({n:,} verdicts): stored {len(shown)} (" in line[0] and line[0].endswith(" s"), out.stderr
    stored = dict(query_rows(db, "SELECT name, params_json FROM derived_results"))
    assert set(stored) == shown
    assert json.loads(stored["rank"]) == ["candidate_id", 100] and json.loads(stored["estimate"]) == ["winrate", None, 0.05]

    # every stored result equals a fresh computation, and a new server's first view computes none
    derived.forget()
    for name in ORIGINAL:
        if _args(db, name) is None:           # nothing a page's first view reads (a student's overlap)
            continue
        frame = _read(db, name, "s", *_args(db, name))
        assert_frame_equal(_comparable(name, frame), _comparable(name, _fresh(db, name, "s", *_args(db, name))),
                           check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    assert all(v == 0 for v in counted.values()), counted

    # a second import of the same file brings nothing new: everything is current, nothing computed
    out = _judgeaudit("import-verdicts", str(tmp_path / "v.jsonl"), "--pool", "s", "--db", str(db))
    assert out.returncode == 0 and "all current, none computed" in out.stderr, out.stderr

    # another judge's verdicts: its parts alone are computed (its 4 judgings of 12), and what reads only
    # other judges (the drift of alpha and beta, the curation by alpha) stays as stored
    gamma = synthetic_verdicts(rows, judges=("gamma",), seed=12)
    out = _judgeaudit("import-verdicts", str(write_jsonl(tmp_path / "g.jsonl", gamma)), "--pool", "s", "--db", str(db))
    assert out.returncode == 0, out.stderr
    line = [x for x in out.stderr.splitlines() if x.startswith("derived results of pool 's'")][0]
    stored = re.search(r"stored \d+ \((.*)\) in ", line).group(1).split(", ")   # "cells (4 of 12 parts)", "checklist", ...
    assert "cells (4 of 12 parts)" in stored and "rank (4 of 12 parts)" in stored, line
    assert "checklist" in stored, line                             # of the whole pool
    assert "drift_pairs (4 of 12 parts)" in stored, line           # gamma's pairs with the judges before it
    assert not {"drift", "drift_items", "curation", "pool_summary"} & {s.split(" (")[0] for s in stored}, line
    assert query_rows(db, "SELECT count(*) FROM derived_results WHERE name = 'cells'") == [(12,)]
    derived.forget()
    for name in (n for n in ORIGINAL if _args(db, n) is not None):
        assert_frame_equal(_comparable(name, _read(db, name, "s", *_args(db, name))),
                           _comparable(name, _fresh(db, name, "s", *_args(db, name))), check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_pages_draw_from_what_the_command_stored(db, tmp_path, counted):
    """After `import-verdicts` refreshed them, the Rankings, Report, Judges, What labels are worth and
    Pool pages (and Formats, Slot bias) draw in a new server with no audit function run for them."""
    from streamlit.testing.v1 import AppTest
    rows = synthetic_pool(8, seed=12)
    import_out = _judgeaudit("import-pool", str(write_jsonl(tmp_path / "pool.jsonl", rows)), "--pool", "s",
                             "--db", str(db))
    assert import_out.returncode == 0, import_out.stderr
    by_prompt = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], []).append(r["candidate_id"])
    labels = [{"prompt_id": p, "a_id": c[0], "b_id": c[1], "label": "AB"[i % 2]} for i, (p, c) in enumerate(by_prompt.items())]
    labelled = _judgeaudit("import-labels", str(write_jsonl(tmp_path / "labels.jsonl", labels)), "--pool", "s",
                           "--db", str(db))
    assert labelled.returncode == 0, labelled.stderr
    out = _judgeaudit("import-verdicts", str(write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=12))),
                      "--pool", "s", "--db", str(db))
    assert out.returncode == 0 and "stored" in out.stderr, out.stderr
    derived.forget()
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.sidebar.selectbox[0].select("s").run()
    for page in ("rankings", "report", "judges", "trust", "pool", "formats", "slot_bias"):
        at.switch_page(f"views/{page}/page.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.dataframe, page
    assert all(v == 0 for v in counted.values()), counted
    pool_page_metrics = {m.label: m.value for m in at.switch_page("views/pool/page.py").run().metric}
    assert pool_page_metrics["prompts"] == "8" and pool_page_metrics["candidates"] == str(len(rows))


def test_a_second_session_runs_no_audit_function_for_the_pages(db, tmp_path, monkeypatch, counted):
    """The Formats and Slot bias pages, in one session, then in a second one after the server's caches
    are cleared (what a restart leaves): the second draws the same tables from the stored results."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    rows = synthetic_pool(10, seed=4)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=4)), "s")

    def session() -> dict:
        at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
        at.sidebar.selectbox[0].select("s").run()
        tables = {}
        for page in ("formats", "slot_bias"):
            at.switch_page(f"views/{page}/page.py").run()
            assert not at.exception, (page, [e.value for e in at.exception])
            tables[page] = [d.value for d in at.dataframe]
        return tables

    first = session()
    computed = dict(counted)
    # the two pages read cells, consistency, score levels (Formats), bias, positions, bias items (Slot bias)
    assert all(computed[n] == 1 for n in ("cells", "bias", "bias_items", "positions")), computed
    assert len(first["slot_bias"]) >= 2 and len(first["formats"]) >= 1
    st.cache_data.clear()
    derived.forget()
    second = session()
    assert counted == computed                    # not one audit function ran for a derived result
    for page in first:
        assert len(second[page]) == len(first[page])
        for a, b in zip(first[page], second[page]):
            assert a.equals(b), page


def test_pool_summary_counts_and_bins():
    from app.pool_summary import counts
    from audit._pool_summary import summary
    cands = pl.DataFrame({"prompt_idx": [0, 0, 1, 1, 1, 2], "k": [2, 2, 3, 3, 3, 1],
                          "reference": [0.0, 3.0, None, 1.5, 3.0, 0.0],
                          "split": ["pool", "pool", "heldout", "heldout", "heldout", "pool"],
                          "response_chars": [10, 10, 10, 10, 10, 10]})
    frame = summary(cands)
    assert counts(frame) == [3, 6, 5, 3]          # 3 prompts, 6 candidates, 5 with a reference, 3 held out
    k = frame.filter(pl.col("part") == "k")
    assert k["x"].to_list() == [1.0, 2.0, 3.0] and k["n"].to_list() == [1, 1, 1]
    ref = frame.filter(pl.col("part") == "reference")
    # 0 .. 3 in 30 bins of 0.1: 0.0 twice in bin 0, 1.5 in bin 15, 3.0 (the most) in the last, bin 29
    assert ref["n"].to_list() == [2, 1, 2] and ref["width"][0] == 0.1
    assert [round(x, 6) for x in ref["x"].to_list()] == [0.0, 1.5, 2.9]
    chars = frame.filter(pl.col("part") == "chars")     # every length the same: one bin of width 1
    assert chars["x"].to_list() == [10.0] and chars["n"].to_list() == [6] and chars["width"][0] == 1.0


def test_the_stored_style_fit_of_every_cell_is_each_cell_fitted_alone(db, tmp_path):
    """The Rankings page reads one cell of the stored fit of every cell (no bootstrap): the same frame as
    that cell's fit alone, which is what it asked for before."""
    import audit
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    rows = synthetic_pool(10, seed=13)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=13)), "s")
    every = audit.style_rank(db, "s", 0, 0)
    cells = every.select("judge", "format", "decoding").unique().sort("judge", "format", "decoding").rows()
    assert len(cells) >= 2
    for cell in cells:
        one = every.filter((pl.col("judge") == cell[0]) & (pl.col("format") == cell[1]) & (pl.col("decoding") == cell[2]))
        assert_frame_equal(one, audit.style_rank(db, "s", 0, 0, cell), check_exact=True)


def test_the_progress_bar_counts_candidates_for_a_result_of_the_pool_alone():
    from audit.derived import progress_text
    assert ORIGINAL["pool_summary"].basis == "pool" and ORIGINAL["estimate"].basis == "labels"
    assert ORIGINAL["cells"].basis == "verdicts"
    assert progress_text("the pool's summary", "p", 7, 1.0, None, "candidates")[1].startswith(
        "Computing the pool's summary for pool 'p' (7 candidates): 1 s so far")


def test_the_report_counts_the_export_in_the_database(db, tmp_path):
    """audit.export_counts (the Report page's stored count) against the rows verdict_rows exports,
    counted in polars; and the words the page writes from it."""
    import audit
    from app.views.report.downloads import counts_text, export_counts
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    rows = synthetic_pool(6, seed=14)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=14)), "s")
    exported = audit.verdict_rows(db, "s")
    counted = audit.export_counts(db, "s")
    by_hand = exported.group_by("sample", "status").len("n").sort("sample", "status")
    assert_frame_equal(counted.sort("sample", "status"), by_hand, check_dtypes=False)
    c = export_counts(counted)
    assert c["rows"] == exported.height and c["calls"] == int((exported["sample"] == 0).sum())
    assert c["parsed"] + c["unparsed"] + c["failed"] == exported.height
    assert counts_text(c).startswith(f"The verdict export holds **{exported.height:,} rows**")
