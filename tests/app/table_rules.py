"""The table rules of issue 26 item 8, read off a rendered AppTest page: every st.dataframe /
st.table with its headers (the column_config label, else the column's name) and the text each cell
shows (a pandas Styler's display values, else the value as the grid writes it), and every chart's
axis and legend titles. Used by tests/app/test_tables_demo.py and, as a script, to count the
violations over every page and demo pool (the issue's closing note):

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


def noise(text: str) -> bool:
    """A number written with more digits than it means: e-notation (3.17e-09), more than four
    significant digits behind a point (0.123456789, 12.3456), or a fraction of zeros (6.000000, 0.00)."""
    text = text.strip().removesuffix(" ★")
    if E_NOTATION.match(text):
        return True
    m = NUMBER.match(text)
    if not m:
        return False
    whole, frac = m.group(1).replace(",", ""), m.group(2)
    if len(frac) >= 2 and set(frac) == {"0"}:
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
    return {"raw_headers": raw, "none_cells": none, "list_cells": lists, "noise_cells": noisy, "cut_names": cut}


def _heading(name: str) -> str:
    try:
        from app.tables import heading
    except ImportError:
        return name
    return heading(name)


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
            for k, items in v.items():
                totals[k] += len(items)
                if items:
                    examples.setdefault(k, Counter()).update(f"{page}: {i}" for i in items)
            print(f"{pool:16} {page:12} {times[(pool, page)]:6.2f}s  " + "  ".join(f"{k}={len(x)}" for k, x in v.items())
                  + ("  EXCEPTION" if at.exception else ""), flush=True)
    print("TOTALS", dict(totals))
    for k, c in examples.items():
        print(k, c.most_common(40))
