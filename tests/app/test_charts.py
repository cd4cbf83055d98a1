"""Charts and tables that read at a laptop's width (issue 20, item 4): how a table writes its values
(app.reading), and the chart specs (app.charts, charts_trust, probe_charts, evaluate_charts) as
Vega-Lite dicts: every chart as wide as its container, every forest-plot row named in full."""

import math

import numpy as np
import polars as pl
import pytest

from app import charts, charts_trust
from app.views.evaluate import charts as evaluate_charts
from app.views.probes import charts as probe_charts
from app import tables
from app.reading import HELP, card_count, number_text


# -- how a table writes a value -----------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (0.992352, "0.992"),      # three significant digits: 0.992|352
    (-8e-10, "0"),            # floating noise below 1e-9 is zero (the "lo -0.0000000008")
    (-0.0, "0"),              # no "-0"
    (None, "–"),              # missing: an en dash, never "None"
    (math.nan, "–"),
    (1234.5, "1,235"),        # from 999.5 up: whole, half away from zero, with separators (not "1.23e+03")
    (-1234.5, "−1,235"),      # the minus sign U+2212, as the charts and sentences write it
    (999.6, "1,000"),         # would be "1e+03" at three significant digits
    (999.4, "999"),
    (0.5, "0.5"),             # no trailing zeros
    (6.0, "6"),
    (-0.0278, "−0.0278"),
    (-3, "−3"),
    (12.345, "12.3"),
    (1.234e-5, "1.23e-05"),   # small but real: e-notation
    (1234, "1,234"),          # an integer column: every digit, with separators
    (np.int64(42), "42"),
    ("greedy", "greedy"),
    (True, "True"),
])
def test_number_text_by_hand(value, text):
    assert number_text(value) == text


def test_card_counts_fit_a_fifth_of_a_laptop():
    # below a million written out; from it on, millions to three significant digits
    assert [card_count(n) for n in (0, 583, 999_999, 1_000_000, 2_500_000, 10_000_000, 123_456_789)] == \
        ["0", "583", "999,999", "1M", "2.5M", "10M", "123M"]


def test_a_table_as_text_writes_every_column(monkeypatch):
    import app.reading as reading
    monkeypatch.setattr(reading, "STYLED_CELLS", 0)              # every table goes as text
    frame = pl.DataFrame({"judge": ["a", None], "q": [0.992352, None], "lo": [-8e-10, 0.25],
                          "n_pairs": [1234, None], "ids": [[1, 2], None]})
    out = tables.view(frame)["data"]
    assert out.columns == frame.columns and all(d == pl.String for d in out.dtypes)
    assert out.rows() == [("a", "0.992", "0", "1,234", "1, 2"), ("–", "–", "0.25", "–", "–")]   # a list as text


def test_table_view_keeps_numbers_for_sorting_and_shows_their_text():
    frame = pl.DataFrame({"judge": ["a", "b", "c"], "tie_prob": [0.992352, None, 0.5], "n_pairs": [3, 4, None]})
    view = tables.view(frame, {"tie_prob": [2]})
    styler = view["data"]
    assert styler.data["tie_prob"].dtype == np.float64          # sorting a column sorts numbers
    text = styler.to_string(delimiter="|").splitlines()
    # header, then rows: index|judge|tie_prob|n_pairs; the int column with a null becomes float in
    # pandas, still written as a whole number
    assert text[1:] == ["0|a|0.992|3", "1|b|–|4", "2|c|0.5 ★|–"]
    assert set(view["column_config"]) == {"judge", "tie_prob", "n_pairs"}


def test_a_large_table_goes_as_text(monkeypatch):
    import app.reading as reading
    monkeypatch.setattr(reading, "STYLED_CELLS", 4)
    frame = pl.DataFrame({"d2": [2.0, 1e-12, None], "n": [1, 2, 3]})
    view = tables.view(frame, {"d2": [0]})
    assert view["data"].rows() == [("2 ★", "1"), ("0", "2"), ("–", "3")]


def test_headers_read_as_words_and_keep_the_definition_as_help():
    assert tables.heading("mult5_share") == "multiples of 5" and tables.heading("n_reverse_calls") == "reverse-order calls"
    assert tables.heading("tau_a") == "τa" and tables.heading("some_new_column") == "some new column"
    cfg = tables.config(pl.DataFrame({c: [1] for c in ("judge", "mult5_share", "n_reverse_calls", "tau_b", "unknown")}))
    assert cfg["mult5_share"]["label"] == "multiples of 5" and cfg["mult5_share"]["help"] == HELP["mult5_share"]
    assert cfg["n_reverse_calls"]["label"] == "reverse-order calls"
    assert cfg["tau_b"]["help"].startswith("Within prompts: (C − D) / √")
    assert cfg["judge"]["pinned"] is True and cfg["unknown"]["help"] is None


# -- chart specs ----------------------------------------------------------------------------------------

def _views(spec: dict):
    """Every unit view (a dict with a mark) of a Vega-Lite spec, layers and concatenations opened."""
    if "mark" in spec:
        yield spec
    for key in ("layer", "concat", "vconcat", "hconcat"):
        for child in spec.get(key, []):
            yield from _views(child)
    if "spec" in spec:
        yield from _views(spec["spec"])


def _rows(spec: dict, field: str) -> list:
    """The distinct values of FIELD over the spec's inline datasets, in order."""
    seen = []
    for rows in spec["datasets"].values():
        for r in rows:
            if field in r and r[field] not in seen:
                seen.append(r[field])
    return seen


def _wide(spec: dict):
    assert spec["width"] == "container", spec.get("width")
    assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}   # the plot keeps its own height
    assert not any(k in spec for k in ("facet", "hconcat", "vconcat", "concat"))   # fixed-width compounds


CELLS = pl.DataFrame({
    "judge": ["smollm2-demo"] * 4 + ["GPT-4"] * 2,
    "format": ["tournament", "tournament", "anchored", "anchored", "tournament", "numeric100"],
    "decoding": ["greedy", "constrained", "greedy", "constrained", "greedy", "greedy"],
    "kind": ["comparative"] * 5 + ["pointwise"],
    "n_verdicts": [72, 72, 42, 42, 10, 10],
    "nominal_levels": [5, 5, 5, 5, 2, 101],
    "tie_prob": [0.39, 0.58, 0.38, 0.46, 0.34, 0.1],
    "top_tied": [0.5, 0.67, 0.67, 0.83, 0.2, 0.1],
    "d1": [4.34, 2.59, 3.02, 2.31, 2.95, 12.0],
    "d2": [2.56, 1.73, 2.67, 2.17, 2.95, 10.0],
    "tau_a": [0.19, 0.17, 0.11, 0.08, 0.2, 0.1],
    "tau_b": [0.3, 0.2, 0.4, 0.1, 0.3, 0.2],
    "top1_expected": [0.4, 0.3, 0.2, 0.1, 0.5, 0.6],
    "top1_uniform": [0.25] * 6,
    "parse_rate": [0.72, 1.0, 0.81, 1.0, 1.0, 0.992352],
    "q": [0.0, 0.04, 0.0, -0.03, 0.1, None], "q_lo": [-0.2, -0.01, -0.1, -0.2, 0.0, None],
    "q_hi": [0.3, 0.1, 0.1, 0.1, 0.2, None],
})


def test_forest_rows_each_name_judge_format_and_decoding_in_full():
    # the case: four intervals of one judge, two formats x two decodings; they must not share
    # a label, and no label is thinned out or cut short (labelOverlap false, labelLimit 0 = no limit)
    four = CELLS.head(4)
    spec = charts.interval_chart(four, "q", "q_lo", "q_hi", "q").to_dict()
    _wide(spec)
    ys = [v["encoding"]["y"] for v in _views(spec) if "y" in v["encoding"] and v["encoding"]["y"]["field"] == "row"]
    assert len(ys) == 2 and all(y["axis"]["labelLimit"] == 0 and y["axis"]["labelOverlap"] is False for y in ys)
    assert _rows(spec, "row") == ["smollm2-demo / tournament / greedy", "smollm2-demo / tournament / constrained",
                                  "smollm2-demo / anchored / greedy", "smollm2-demo / anchored / constrained"]
    # one decoding mode in the frame: still named (two pools' rows must read the same)
    one = charts.interval_chart(CELLS.filter(pl.col("decoding") == "greedy"), "q", "q_lo", "q_hi", "q").to_dict()
    assert _rows(one, "row")[0] == "smollm2-demo / tournament / greedy"


def test_kappa_forest_names_every_row():
    cells = CELLS.head(4).with_columns(pl.lit(12).alias("n"), pl.col("tau_a").alias("kappa"),
                                       (pl.col("tau_a") - 0.1).alias("kappa_lo"), (pl.col("tau_a") + 0.1).alias("kappa_hi"),
                                       pl.lit("pass").alias("decision"))
    spec = charts_trust.kappa_forest(cells, {"kappa": 0.6, "kappa_lo": 0.5, "kappa_hi": 0.7}, 0.4).to_dict()
    _wide(spec)
    ys = [v["encoding"]["y"] for v in _views(spec) if "y" in v["encoding"]]
    assert ys and all(y["axis"] == {"labelLimit": 0, "labelOverlap": False, "title": None} for y in ys)
    # sorted by kappa, highest first: 0.19, 0.17, 0.11, 0.08
    assert ys[0]["sort"] == ["smollm2-demo / tournament / greedy", "smollm2-demo / tournament / constrained",
                             "smollm2-demo / anchored / greedy", "smollm2-demo / anchored / constrained"]


def test_strength_forest_is_one_wide_chart_with_both_orders_per_row():
    items = pl.DataFrame({"id": ["gpt-4", "alpaca-13b"] * 2, "order": ["both", "both", "single", "single"],
                          "strength": [0.5, -0.5, 0.2, -0.2], "lo": [0.1, -0.9, -0.1, -0.6],
                          "hi": [0.9, -0.1, 0.5, 0.2], "rank": [1, 2, 1, 2]})
    spec = charts_trust.strength_forest(items).to_dict()
    _wide(spec)
    ys = [v["encoding"]["y"] for v in _views(spec)]
    assert all(y["sort"] == ["gpt-4", "alpaca-13b"] and y["axis"]["labelLimit"] == 0 for y in ys)
    assert all(v["encoding"]["yOffset"]["field"] == "ranking" for v in _views(spec))


def test_histograms_are_one_wide_chart_per_format_and_decoding():
    values = pl.DataFrame({"format": ["binary", "binary", "numeric100", "numeric100", "likert5", "likert5"],
                           "decoding": ["greedy", "constrained"] * 3, "s": [1.0, 0.0, 0.5, 0.55, 0.25, 0.75],
                           "n": [3, 4, 5, 6, 7, 8], "mult5": [None, None, True, False, None, None]})
    panels = charts.histogram_panels(values)
    assert list(panels) == ["binary", "likert5", "numeric100"]
    for fmt, group in panels.items():
        specs = [c.to_dict() for c in group]
        assert [s["title"] for s in specs] == [f"{fmt} · constrained", f"{fmt} · greedy"]
        for s in specs:
            _wide(s)
            legend = s["encoding"]["color"].get("legend", "absent")
            # the multiple-of-5 legend only under a 0-100 scale's panels, below them (not beside)
            assert (legend["orient"] == "bottom") if fmt == "numeric100" else legend is None
    one_mode = charts.histogram_panels(values.filter(pl.col("decoding") == "greedy"))
    assert [c.to_dict()["title"] for c in one_mode["binary"]] == ["binary"]


def test_level_bars_keep_the_101_level_format_inside_and_say_what_is_counted():
    spec = charts.level_bars(CELLS).to_dict()
    _wide(spec)
    scales = [v["encoding"]["y"]["scale"] for v in _views(spec)]
    assert all(s == {"type": "symlog", "domain": [0, 101], "nice": False} for s in scales)  # the top: 101 levels
    counted = {c for c in _rows(spec, "counted")}
    assert any("2 labels seen in both orders give 3 scores" in c for c in counted)   # the pair formats' D ≈ 3
    assert any(c.startswith("nominal = the labels a call can give; a candidate's score is its one") for c in counted)
    tie = charts.tie_bars(CELLS).to_dict()
    _wide(tie)
    assert tie["encoding"]["x"]["axis"]["labelOverlap"] is False


def test_heatmaps_write_white_on_dark_and_legends_in_three_digits():
    panels = charts.diagnostic_heatmaps(CELLS)
    assert len(panels) == len(charts.GRID_METRICS)
    by_title = {c.to_dict()["title"]: c.to_dict() for c in panels}
    for spec in by_title.values():
        _wide(spec)
        heat, text = spec["layer"]
        assert heat["encoding"]["color"]["legend"]["format"] == ".3~g"    # 0.992352 -> "0.992"
        assert text["encoding"]["color"]["condition"] == {"test": "datum.darkness > 0.5", "value": "white"}
        assert text["encoding"]["color"]["value"] == "black"
    # parse rate, bigger is better: darkness = (v - 0.72) / (1 - 0.72); 0.72 -> 0, 1.0 -> 1, 0.81 -> 0.321
    rows = next(iter(by_title["parse rate"]["datasets"].values()))
    dark = {(r["judge"], r["cell"]): r["darkness"] for r in rows}
    assert dark[("smollm2-demo", "tournament · greedy")] == pytest.approx(0.0)
    assert dark[("smollm2-demo", "tournament · constrained")] == pytest.approx(1.0)
    assert dark[("smollm2-demo", "anchored · greedy")] == pytest.approx(0.09 / 0.28)
    # tie probability, smaller is better: darkness = 1 - (v - 0.1) / (0.58 - 0.1); 0.1 -> 1, 0.58 -> 0
    rows = next(iter(by_title["tie probability"]["datasets"].values()))
    dark = {(r["judge"], r["cell"]): r["darkness"] for r in rows}
    assert dark[("GPT-4", "numeric100 · greedy")] == pytest.approx(1.0)
    assert dark[("smollm2-demo", "tournament · constrained")] == pytest.approx(0.0)


def test_best_marks_point_at_each_judges_best_cell():
    marks = charts.best_marks(CELLS.with_columns(pl.lit(None, pl.Float64).alias(c) for c in
                                                 ("distinct", "spearman", "somers_d")))
    # smollm2-demo's rows 0-3, GPT-4's 4-5. tie_prob, smaller is better: 0.38 (row 2) and 0.1 (row 5)
    assert marks["tie_prob"] == [2, 5]
    # parse rate: 1.0 twice for smollm2-demo (rows 1, 3), 1.0 for GPT-4 (row 4)
    assert marks["parse_rate"] == [1, 3, 4]
    assert marks["distinct"] == []                                   # no value, no star


def test_every_other_chart_takes_its_containers_width():
    bins = pl.DataFrame({"cell": ["a / b / greedy"] * 2, "gap": [-1.0, 1.0], "q_i": [-0.2, 0.3],
                         "lo": [-0.3, 0.2], "hi": [-0.1, 0.4], "n": [3, 4]})
    binned = charts.binned_means_chart(bins, "gap", "q_i", "cell", "gap", "q").to_dict()
    _wide(binned)
    legend = next(v for v in _views(binned) if "color" in v["encoding"])["encoding"]["color"]["legend"]
    assert legend["orient"] == "bottom" and legend["labelLimit"] == 0 and legend["symbolLimit"] == 0
    probes = pl.DataFrame({"type": ["position", "length"], "judge": ["sim", "sim"], "n": [5, 5], "bias": [0.4, 0.1],
                           "lo": [0.2, -0.1], "hi": [0.6, 0.3], "treated": ["slot A", "longer"]})
    contrasts = pl.DataFrame({"judge": ["j1", "j2"], "contrast": ["a − b", "a − b"], "diff": [0.1, 0.2],
                              "lo": [0.0, 0.1], "hi": [0.2, 0.3], "p_holm": [0.04, 0.01]})
    shares = pl.DataFrame({"metric": ["d2"], "share_format": [0.5], "share_judge": [0.3], "share_residual": [0.2]})
    frontier = pl.DataFrame({"judge": ["sim"], "strategy": ["swap"], "format": ["tournament"], "agreement": [0.8],
                             "calls_per_verdict": [2.0], "tokens_per_verdict": [20.0], "b": [1], "c": [2],
                             "p_holm": [0.5], "frontier": [True]})
    for chart in (probe_charts.bias_bars(probes), probe_charts.frontier(frontier),
                  evaluate_charts.contrast_forest(contrasts), charts.share_bars(shares),
                  charts.agreement_bars(CELLS), charts.scatter(CELLS, "d1", "d2", "format")):
        _wide(chart.to_dict())
    forest = evaluate_charts.contrast_forest(contrasts).to_dict()
    assert all(v["encoding"]["y"]["axis"]["labelLimit"] == 0 for v in _views(forest) if "y" in v["encoding"])


def test_reliability_legend_lists_only_the_series_it_shows():
    """Five cells, three of them with the same bins (identical values draw one line over another):
    three series, the first named for the three cells it stands for."""
    same = [{"lo": 0.0, "hi": 0.1, "n": 3, "mean_p": 0.05, "mean_y": 0.0},
            {"lo": 0.9, "hi": 1.0, "n": 4, "mean_p": 0.95, "mean_y": 1.0}]
    other = [{"lo": 0.5, "hi": 0.6, "n": 3, "mean_p": 0.55, "mean_y": 0.5}]
    third = [{"lo": 0.5, "hi": 0.6, "n": 3, "mean_p": 0.55, "mean_y": 0.6}]
    cells = pl.DataFrame({"judge": list("abcde"), "format": ["f"] * 5, "decoding": ["greedy"] * 5,
                          "reliability": [same, same, other, same, third]})
    spec = charts_trust.reliability_diagram(cells).to_dict()
    series = {r["cell"] for d in spec["datasets"].values() for r in d if "cell" in r}
    assert series == {"a / f / greedy = b / f / greedy = d / f / greedy", "c / f / greedy", "e / f / greedy"}
    coloured = [v["encoding"]["color"] for v in _views(spec) if "color" in v["encoding"]]
    assert coloured and all(c["legend"] is not None for c in coloured)


def test_variance_bars_stack_one_group_so_a_segment_is_the_tables_share():
    """The tie probability's shares 0.138 format, 0.603 judge, 0.259 neither: the format segment
    runs 0 to 0.138, not the ~0.6 that stacking two (decoding, score) groups onto one bar showed."""
    shares = pl.DataFrame({"metric": ["tie_prob", "d2"], "share_format": [0.138, 0.5], "share_judge": [0.603, 0.3],
                           "share_residual": [0.259, 0.2]})
    spec = charts.share_bars(shares).to_dict()
    x = spec["encoding"]["x"]
    assert x["stack"] is True and x["scale"]["domain"] == [0, 1]       # not "normalize": the shares as they are
    rows = next(iter(spec["datasets"].values()))
    tie = {r["share of"]: r["value"] for r in rows if r["diagnostic"] == "tie probability"}
    assert tie == {"format": 0.138, "judge": 0.603, "neither (format × judge)": 0.259}
    with pytest.raises(ValueError):        # two groups' rows of one metric would stack onto one bar
        charts.share_bars(pl.concat([shares, shares]))
