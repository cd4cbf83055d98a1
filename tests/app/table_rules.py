"""The table rules, read off a rendered AppTest page as a browser shows it: every st.dataframe /
st.table with its headers (the column_config label, else the column's name), its columns' widths and
the text each cell shows (a missing value: the grid's placeholder, "None" unless one is given, drawn
over whatever a Styler says; else a pandas Styler's display value, else the value as the grid writes
it), and every chart's axis and legend titles and legend entries. violations() counts raw headers,
None cells, list cells, noise cells, judge names cut by their column, and charts drawn on canvas
(whose labels a browser test cannot measure). Used by
tests/app/test_tables_demo.py and, as a script, to count the violations over every page and demo
pool (the closing note's before and after; add_runs makes the database a user's walk leaves):

    PYTHONPATH=. .venv/bin/python -m tests.app.table_rules DB_PATH
"""

from __future__ import annotations

import json
import math
import re

from pathlib import Path

import pyarrow as pa

# every page of the dashboard, so that a new page is held to the rules too: the pages in the order
# app/main.py lists them (its `_page("folder", ...)` calls)
PAGES = re.findall(r'_page\("(\w+)"', (Path(__file__).resolve().parents[2] / "app" / "main.py").read_text())
NONE_TEXT = {"None", "nan", "NaN", "<NA>", "null", "NaT", "none", "inf", "-inf"}
E_NOTATION = re.compile(r"^[−+-]?\d+(\.\d+)?e[−+-]?\d+$", re.I)
RAW_TITLES = {"Count of Records"}


IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")     # prompt_id, rank_raw, excess_hi


def _known() -> set[str]:
    """Columns whose heading someone chose (a heading equal to the name with spaces is then deliberate)."""
    from app import reading
    # HEADINGS were called LABELS in a tree from before the word renames
    headings = getattr(reading, "HEADINGS", None) or getattr(reading, "LABELS")
    try:
        from app import tables
    except ImportError:            # a tree from before the table helper (the survey's "before")
        return set(headings)
    return set(headings) | set(getattr(tables, "HEADINGS", None) or getattr(tables, "LABELS"))


def _raw(name: str, heading: str) -> bool:
    """A header is raw when it is a column name: a snake_case identifier, the name with spaces for
    underscores that nobody chose (not in the heading dictionaries), or one of Vega-Lite's made-up
    titles ("Count of Records")."""
    return (bool(IDENTIFIER.match(heading)) or heading in RAW_TITLES
            or ("_" in name and heading == name.replace("_", " ") and not _chosen(name)))


def _chosen(name: str) -> bool:
    try:
        from app.tables import has_heading
    except ImportError:            # a tree from before the table helper (the survey's "before") or the word renames
        return name in _known()
    return has_heading(name)


def _ipc(data: bytes):
    return pa.ipc.open_stream(data).read_all() if data else None


def frames(at) -> list[dict]:
    """Each table of the page: {"headers": [(name, heading)], "cells": [[text]], "widths": {name: px or
    None}} with each cell's text as the browser shows it: a missing value (null, NaN) is the
    dataframe's placeholder, "None" unless one is given, whatever a Styler's display value says (the
    grid draws a missing cell's placeholder over it); else the Styler's display value, else the value
    as the grid writes it."""
    out = []
    for el in list(at.dataframe) + list(at.get("table")):
        proto = el.proto
        arrow = proto.arrow_data if hasattr(proto, "arrow_data") else proto
        config = json.loads(proto.columns) if getattr(proto, "columns", "") else {}
        placeholder = getattr(proto, "placeholder", "") or "None"
        data = _ipc(arrow.data)
        if data is None:
            continue
        names = [c for c in data.column_names if not c.startswith("__index_level_")]
        shown = _ipc(arrow.styler.display_values) if arrow.HasField("styler") else None
        headers = [(n, (config.get(n) or {}).get("label") or n) for n in names]
        widths = {n: (config.get(n) or {}).get("width") for n in names}
        cells = []
        for r in range(data.num_rows):
            row = []
            for n in names:
                value = data.column(n)[r].as_py()
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    row.append(placeholder)
                elif shown is not None and n in shown.column_names:
                    row.append(str(shown.column(n)[r].as_py()))
                else:
                    row.append(_grid_text(value))
            cells.append(row)
        out.append({"headers": headers, "cells": cells, "widths": widths})
    return out


def _grid_text(v) -> str:
    """How the grid writes an unstyled value: floats as they are (stricter than the grid, which cuts
    at four decimals), e-notation below 1e-4, a list as Python writes it."""
    if isinstance(v, float) and v != 0 and abs(v) < 1e-4:
        return f"{v:.2e}"
    return str(v)


NUMBER = re.compile(r"^[−+-]?(\d[\d,]*)\.(\d+)$")
LIST_TEXT = re.compile(r"^\[.*\]$|^\(.*,.*\)$")


def noise(text: str, zeros: int = 2) -> bool:
    """A number written with more digits than it means: e-notation (3.17e-09), more than four
    significant digits behind a point (0.123456789, 12.3456), or a fraction of `zeros` zeros or more
    (6.000000; in a table also 7.00, where the other cells read 7; an axis writes 0.00 beside 0.25, so
    an axis's tick counts from four: 1.0000)."""
    text = text.strip().removesuffix(" ★")
    if E_NOTATION.match(text):
        return True
    m = NUMBER.match(text)
    if not m:
        return False
    whole, frac = m.group(1).replace(",", ""), m.group(2)
    if len(frac) >= zeros and set(frac) == {"0"}:
        return True
    significant = (whole + frac).lstrip("0")
    return len(significant) > 4 and len(frac) >= 3


# columns that name a judge (alone, in a list, or in a cell's caption): never cut short
NAME_COLUMNS = {"judge", "dropped_judge", "members", "cell", "row", "run"}
CHAR_PX, PAD_PX = 7.5, 16       # the grid's 14 px Source Sans: at most 7.5 px a character (measured), padding


def cut_names(table: dict) -> list[str]:
    """The name cells a column too narrow for them would cut short: in a column of NAME_COLUMNS, each
    value wider than the column's configured width (a column without one is sized by the grid from
    its first rows only, so a longer name further down is cut: "smollm2-demo-t…")."""
    out = []
    for c, (name, _) in enumerate(table["headers"]):
        if name not in NAME_COLUMNS:
            continue
        width = table["widths"].get(name)
        for row in table["cells"]:
            need = CHAR_PX * len(row[c]) + PAD_PX
            if not isinstance(width, (int, float)) or width < need:
                out.append(f"{name}: {row[c]!r} in {width or 'auto'} px")
    return out


LEGEND_CHANNELS = ("color", "xOffset", "yOffset", "shape", "strokeDash", "detail")
LEGEND = "(legend entry)"     # chart_titles' field for a value a legend names


def chart_titles(at) -> list[tuple[str, str]]:
    """(field, title) of every x / y / color encoding of the page's charts, layers included, the
    title as Vega-Lite would make it when none is given (the field name; "Count of Records"), and
    (field, value) of every value a legend or an offset names (a metric's column name drawn as a
    legend entry: tie_prob, d1)."""
    out = []

    def walk(spec, datasets, data):
        if isinstance(spec, dict):
            if isinstance(spec.get("data"), dict) and "name" in spec["data"]:
                data = datasets.get(spec["data"]["name"], data)
            elif isinstance(spec.get("data"), dict) and "values" in spec["data"]:
                data = spec["data"]["values"]
            enc = spec.get("encoding")
            if isinstance(enc, dict):
                for ch in ("x", "y", "color", "size"):
                    e = enc.get(ch)
                    if not isinstance(e, dict) or ("field" not in e and e.get("aggregate") != "count"):
                        continue
                    legend_off = ch in ("color", "size") and e.get("legend", 1) is None
                    axis_off = ch in ("x", "y") and e.get("axis", 1) is None
                    if legend_off or axis_off or ("title" in e and e["title"] in (None, "")):
                        continue
                    field = e.get("field", "")
                    guide = e.get("legend") if ch in ("color", "size") else e.get("axis")
                    if isinstance(guide, dict) and "title" in guide:     # a legend's or axis's own title
                        if not guide["title"]:
                            continue
                        out.append((field, str(guide["title"])))
                        continue
                    title = e.get("title") or ("Count of Records" if e.get("aggregate") == "count" else field)
                    out.append((field, str(title)))
                for ch in LEGEND_CHANNELS:
                    e = enc.get(ch)
                    if isinstance(e, dict) and e.get("type") == "nominal" and e.get("field") and data \
                            and e.get("legend", 1) is not None:
                        values = {str(r.get(e["field"])) for r in data if isinstance(r, dict)}
                        out.extend((LEGEND, v) for v in sorted(values))
            for k, v in spec.items():
                if k not in ("datasets", "data", "encoding"):
                    walk(v, datasets, data)
        elif isinstance(spec, list):
            for v in spec:
                walk(v, datasets, data)

    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        datasets = spec.get("datasets") or {}
        for d in getattr(el.proto, "datasets", []):      # st.altair_chart sends its data beside the spec
            table = _ipc(d.data.data)
            if table is not None:
                datasets[d.name] = table.to_pylist()
        walk(spec, datasets, None)
    return out


def _raw_title(field: str, title: str) -> bool:
    """A chart's title or legend entry that is a column's name: a raw header (above), a title left to
    Vega-Lite (the field's own name) that is a snake_case identifier or a name someone gave a heading
    (d1 -> "D1 levels"), or a legend entry that is such a name (a legend's entries are data, so an
    item's own id, output_1, is not one)."""
    named = title in _known() and _heading(title) != title
    if field == LEGEND:
        return named
    return _raw(field, title) or (field == title and (bool(IDENTIFIER.match(title)) or named))


def violations(at) -> dict[str, list[str]]:
    """The page's raw headers (tables, chart titles and legend entries), None cells, list cells
    (a Python list written as is), noise cells and judge names cut short."""
    raw, none, lists, noisy, cut = [], [], [], [], []
    for t in frames(at):
        raw += [heading for name, heading in t["headers"] if _raw(name, heading) or
                (heading == name and name in _known() and _heading(name) != name)]
        for row in t["cells"]:
            none += [c for c in row if c.strip() in NONE_TEXT or "None" in c.split(", ")]
            lists += [c for c in row if LIST_TEXT.match(c.strip()) and ("'" in c or '"' in c or "," in c)]
            noisy += [c for c in row if noise(c)]
        cut += cut_names(t)
    raw += [f"chart: {title}" for field, title in chart_titles(at) if _raw_title(field, title)]
    canvas = [f"chart {i}" for i, el in enumerate(at.get("vega_lite_chart"))
              if (json.loads(el.proto.spec).get("usermeta") or {}).get("embedOptions", {}).get("renderer") != "svg"]
    return {"raw_headers": raw, "none_cells": none, "list_cells": lists, "noise_cells": noisy, "cut_names": cut,
            "canvas_charts": canvas}


def _heading(name: str) -> str:
    try:
        from app.tables import heading
    except ImportError:
        return name
    return heading(name)


def add_runs(db: Path, pool: str = "mtbench-formats") -> None:
    """What a user's walk adds to the demo, so that the pages that show runs are read too: two probe
    runs of a simulated judge (the baseline and the swap strategy: the Probes page's bias chart and
    mitigations), a finished 2-step SFT run with an eval loss at each step and a DPO run with its reward
    margins (the loss charts; their files as a fine-tune leaves them, no model trained), and an
    evaluation study of two conditions judged by two simulated judges (the Evaluate page)."""
    import numpy as np

    from ingest.runs import running
    from ingest.scoring import ensure_spec_judge
    from ingest.scoring.formats import BUILTIN
    from ingest.scoring.judges import parse_judge
    from ingest.store import ensure_study, insert_evaluations, insert_generations
    from tests.conftest import cli
    for strategy in ([], ["--strategy", "swap"]):
        done = cli(db, "probe", "--judge", "fake:sim?slot_bias=0.5", *strategy)
        assert done.returncode == 0, done.stderr
    config = {"curation": {"pool": pool, "policy": "random", "rate": 0.5}, "seed": 0, "base": "local:smollm2"}
    with running(db, "train", pool=pool, config=config, queue="train") as run:
        (run.out_dir / "progress.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
            {"step": 1, "loss": 2.5}, {"step": 1, "eval_loss": 2.75}, {"step": 2, "loss": 2.0},
            {"step": 2, "eval_loss": 2.25})))
        (run.out_dir / "metrics.json").write_text(json.dumps(
            {"status": "finished", "steps": 2, "max_steps": 2, "train_loss": 2.25, "eval_loss": 2.25,
             "seconds": 3.0, "adapter": str(run.out_dir)}))
    dpo = {**config, "method": "dpo", "curation": {**config["curation"], "policy": "judge", "judge": "smollm2-demo",
                                                   "format": "tournament"}}
    with running(db, "train", pool=pool, config=dpo, queue="train") as run:
        (run.out_dir / "progress.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
            {"step": 1, "loss": 0.693, "rewards/margins": 0.0}, {"step": 2, "loss": 0.61, "rewards/margins": 0.21})))
    sid = ensure_study(db, "walk", pool, {"rule": "split"})
    conds = [("base", 0), ("smollm2-demo/likert5@0.5", 0), ("random@0.5", 0)]
    insert_generations(db, sid, [
        {"condition": c, "seed": s, "train_run": None, "base_model": "local:smollm2", "prompt_idx": p,
         "answer": f"answer of {c} to {p}", "answer_len": 20 + p, "ref_idx": 4 * p + 3, "ref_len": 30,
         "markdown": bool(p % 2), "tokens_out": 5, "truncated": False} for c, s in conds for p in range(6)])
    rng = np.random.default_rng(0)
    for name in ("e1", "e2"):
        jid = ensure_spec_judge(db, parse_judge(f"fake:{name}", {"tournament": BUILTIN["tournament"]}), {})
        insert_evaluations(db, sid, [
            {"condition": c, "seed": s, "prompt_idx": p, "judge_id": jid, "raw_ab": "A+", "value_ab": 1.0,
             "status_ab": "ok", "raw_ba": "B+", "value_ba": -1.0, "status_ba": "ok",
             "outcome": float(rng.choice([0, 0.5, 1]))} for c, s in conds for p in range(6)])


if __name__ == "__main__":      # the survey: counts over every page and demo pool, and first-visit times
    import os
    import statistics
    import sys
    import time
    from collections import Counter

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    os.environ["JUDGEAUDIT_DB"] = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=600).run()
    pools = at.sidebar.selectbox[0].options
    totals, times, examples = Counter(), {}, {}
    for pool in pools:
        for page in PAGES:
            spent = []
            for _ in range(repeats):
                at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=600)
                at.query_params["pool"] = pool
                at.run()
                st.cache_data.clear()             # a first visit: nothing of the page cached
                t0 = time.perf_counter()
                at.switch_page(f"views/{page}/page.py").run()
                spent.append(time.perf_counter() - t0)
            times[(pool, page)] = statistics.median(spent)
            v = violations(at)
            dpo = [r for r in at.radio if r.key == "method"] if page == "curate" else []
            if dpo:                                # the DPO pairs and curves show on choosing DPO
                dpo[0].set_value("dpo").run()
                v = {k: items + violations(at)[k] for k, items in v.items()}
            for k, items in v.items():
                totals[k] += len(items)
                if items:
                    examples.setdefault(k, Counter()).update(f"{page}: {i}" for i in items)
            print(f"{pool:16} {page:12} {times[(pool, page)]:6.2f}s  " + "  ".join(f"{k}={len(x)}" for k, x in v.items())
                  + ("  EXCEPTION" if at.exception else ""), flush=True)
    print("TOTALS", dict(totals))
    for k, c in examples.items():
        print(k, c.most_common(40))
