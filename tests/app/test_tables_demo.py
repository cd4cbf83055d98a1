"""Tables a person can read: on every page of every demo pool (with the runs a user's walk adds:
probes, training curves, a DPO run, an evaluation study; Curate & Train also with DPO chosen), no
header, chart title or legend entry is a raw column name (a snake_case identifier, a name someone
gave a heading, "Count of Records"), no cell reads None or nan as the browser draws it (the grid's
placeholder over a missing value), no cell is a Python list, no number carries more digits than it
means (3.17e-09, 0.123456789, 7.00), no judge's name is cut by its column and every chart is SVG
(tests/browser/test_browser_charts.py measures its labels); app.tables by hand."""

import math

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from app import tables
from tests.app.table_rules import PAGES, _raw, add_runs, frames, violations
from tests.conftest import REPO

POOLS = ["mtbench-formats", "mtbench", "llmbar", "arena-bench", "ko-arena-hard", "probes"]
CLEAN = {"raw_headers": [], "none_cells": [], "list_cells": [], "noise_cells": [], "cut_names": [],
         "canvas_charts": []}


@pytest.fixture(scope="module")
def walked_db(demo_db):
    """The demo with the runs a user's walk adds (tests.app.table_rules.add_runs; the probe pool too)."""
    add_runs(demo_db)
    return demo_db


@pytest.mark.parametrize("pool", POOLS)
def test_every_page_of_every_demo_pool_keeps_the_table_rules(walked_db, monkeypatch, pool):
    monkeypatch.setenv("JUDGEAUDIT_DB", str(walked_db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300)
    at.query_params["pool"] = pool
    at.run()
    seen = 0
    for page in PAGES:
        at.switch_page(f"views/{page}/page.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert violations(at) == CLEAN, page
        seen += len(frames(at))
        if page == "curate":              # the DPO pairs and curves show on choosing DPO
            next(r for r in at.radio if r.key == "method").set_value("dpo").run()
            assert not at.exception and violations(at) == CLEAN, "curate (DPO)"
    assert seen >= 3          # the rules ran over real tables (the demo pools have several a page)


@pytest.mark.parametrize("value, text", [
    (3.17e-09, "< 0.0001"), (-9e-09, "> −0.0001"), (5e-10, "0"), (2.5e-05, "< 0.0001"), (-2.5e-05, "> −0.0001"), (0.00012345, "0.000123"),
    (None, "–"), (float("nan"), "–"), (0.992352, "0.992"), (1234.5, "1,235"), (7, "7"), (math.inf, "∞")])
def test_cell_text_never_writes_e_notation(value, text):
    assert tables.cell_text(value) == text


def test_headers_missing_values_and_their_reasons():
    frame = pl.DataFrame({"prompt_id": ["q1", "q2"], "rank_raw": [1, None], "excess_hi": [0.5, float("nan")],
                          "judge": ["j", "j"]})
    cfg = tables.config(frame, missing={"rank_raw": "the plain fit did not converge"})
    assert {c: cfg[c]["label"] for c in cfg} == {"prompt_id": "prompt", "rank_raw": "rank without style",
                                                 "excess_hi": "judge − human high", "judge": "judge"}
    assert cfg["rank_raw"]["help"].endswith("– : the plain fit did not converge.")       # the reason given
    assert cfg["excess_hi"]["help"] == "– : " + tables.GENERAL_MISSING + "."             # NaN counts as missing
    assert "–" not in (cfg["prompt_id"]["help"] or "") and cfg["judge"]["pinned"]
    assert not any(_raw(c, cfg[c]["label"]) for c in cfg)
    shown = tables.view(frame)["data"].to_html()
    assert "–" in shown and "None" not in shown and "nan" not in shown.lower().replace("nan-", "")
    assert tables.view(frame)["placeholder"] == "–"        # what the browser's grid draws in a missing cell


def test_a_large_table_goes_as_text_with_the_same_words(monkeypatch):
    from app import reading
    monkeypatch.setattr(reading, "STYLED_CELLS", 2)
    got = tables.view(pl.DataFrame({"lo": [5e-10, None], "n_calls": [1234, 5]}))
    assert got["data"].to_dict(as_series=False) == {"lo": ["0", "–"], "n_calls": ["1,234", "5"]}
    assert got["column_config"]["n_calls"]["label"] == "calls"


def _page(db, monkeypatch, pool, page):
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300)
    at.query_params["pool"] = pool
    at.run()
    return at.switch_page(f"views/{page}/page.py").run()


def test_rankings_say_why_style_control_cannot_fit_and_offer_a_labelled_ridge_fit(demo_db, monkeypatch):
    at = _page(demo_db, monkeypatch, "mtbench-formats", "rankings")
    next(s for s in at.selectbox if s.label == "Judge / format / decoding").select(
        "smollm2-demo / anchored / constrained").run()
    assert not at.exception
    words = [w.value for w in at.warning]
    assert words == ["**No finite style-controlled fit** (36 comparisons). Separation by style or slot: together the "
                     "style features (or the slot) predict every outcome, e.g. the longer response always wins. "
                     "No variation in headers, bold: left out."]
    assert not any("Ridge" in c.value for c in at.caption)            # the ridge fit only when asked for
    next(t for t in at.toggle if t.key == "style-ridge").set_value(True).run()
    assert any(c.value.startswith("**Ridge-penalised fit (penalty 1)**, not the maximum-likelihood one")
               for c in at.caption)
    assert any("Length coefficient of this judge: **+" in m.value for m in at.markdown)
    headers = [label for t in frames(at) for _, label in t["headers"]]
    assert "rank without style" in headers and "places up with style control" in headers


def test_rankings_on_placeholder_texts_warn_and_draw_no_empty_style_chart(demo_db, monkeypatch):
    at = _page(demo_db, monkeypatch, "ko-arena-hard", "rankings")
    assert not at.exception
    assert at.warning[0].value.startswith("**This pool's texts are placeholders**: 100 of its 100 prompts and "
                                          "7,600 of its 7,600 responses (63 characters each) are notices")
    assert any(i.value.startswith("No style feature varies across this cell's comparisons") for i in at.info)
    specs = " ".join(c.proto.spec for c in at.get("vega_lite_chart"))
    assert "log-odds per sd" not in specs           # no coefficient chart without a coefficient (axis 0.000000)
    curate = _page(demo_db, monkeypatch, "ko-arena-hard", "curate")
    assert any("Curate & Train would train on these placeholders" in w.value for w in curate.warning)
    mine = _page(demo_db, monkeypatch, "mtbench", "curate")
    assert not any("placeholders" in w.value for w in mine.warning)
