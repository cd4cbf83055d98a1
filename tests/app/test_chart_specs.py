"""Charts that draw whole and tables that read, as specs (Vega-Lite dicts and st.dataframe arguments):
bars start at 0, counts tick in whole numbers, every bar is named in full, a training curve's first
point sits inside the plot, a reliability diagram's points rest on at least 10 judgements, legends
say words, every chart is SVG; a missing cell is "–" and a judge's name is never cut. The browser
half is tests/browser/test_browser_charts.py."""

import polars as pl
import pytest

from app import charts, charts_trust, pool_summary, tables
from app.reading import merged_bins
from app.views.curate import form as tf
from app.views.curate.pairs import losses_chart
from tests.app.table_rules import CHAR_PX, PAD_PX, cut_names, noise


def _encodings(spec: dict) -> list[dict]:
    """Every encoding of a spec, layers included."""
    out = [spec["encoding"]] if "encoding" in spec else []
    for layer in spec.get("layer", []):
        out += _encodings(layer)
    return out


def _is_count_axis(enc: dict) -> bool:
    return enc["axis"]["format"] == "d" and enc["axis"]["tickMinStep"] == 1


# -- bars from 0, counts in whole numbers -------------------------------------------------------------------

SUMMARY = pl.DataFrame({"part": ["k", "k", "reference", "reference", "chars"], "x": [4.0, 5.0, 0.0, 0.5, 100.0],
                        "width": [None, None, 0.5, 0.5, 50.0], "n": [6, 1, 3, 4, 7]})


@pytest.mark.parametrize("part", ["reference", "chars"])
def test_the_pool_histograms_are_binned_bars_from_zero_with_whole_counts(part):
    spec = pool_summary.bar_chart(SUMMARY, part, "reference score", "candidates").to_dict()
    enc = spec["encoding"]
    # binned: Vega-Lite draws each bar from 0 up to its count (x and x2 alone drew a dash at the count)
    assert enc["x"]["bin"] == "binned" and enc["x2"]["field"] == "x2"
    assert enc["y"]["scale"]["zero"] is True and _is_count_axis(enc["y"])
    assert spec["width"] == "container" and spec["autosize"]["contains"] == "padding"    # fits its column


def test_the_pool_k_chart_counts_prompts_in_whole_numbers():
    enc = pool_summary.bar_chart(SUMMARY, "k", "candidates per prompt", "prompts").to_dict()["encoding"]
    assert enc["x"]["type"] == "ordinal" and enc["x"]["axis"]["labelAngle"] == 0
    assert enc["y"]["scale"]["zero"] is True and _is_count_axis(enc["y"])


@pytest.mark.parametrize("stacked", [True, False])
def test_the_curate_histograms_are_binned_bars_from_zero(stacked):
    bins = pl.DataFrame({"set": ["kept", "dropped"], "lo": [0.0, 0.0], "hi": [0.5, 0.5], "n": [1, 3]})
    spec = tf.binned_chart(bins, "value", 0.25 if stacked else None, stacked=stacked).to_dict()
    enc = _encodings(spec)[0]
    assert enc["x"]["bin"] == "binned" and enc["y"]["scale"]["zero"] is True and _is_count_axis(enc["y"])
    assert enc["y"].get("stack") is (True if stacked else None)


def test_the_score_histograms_count_candidates_from_zero():
    values = pl.DataFrame({"format": ["likert5", "likert5"], "s": [0.0, 1.0], "n": [2, 6], "mult5": [None, None]})
    enc = charts.histogram_panels(values)["likert5"][0].to_dict()["encoding"]
    assert enc["y"]["scale"]["zero"] is True and _is_count_axis(enc["y"])


# -- every bar named, in full -------------------------------------------------------------------------------

def test_the_dpo_pairs_chart_names_every_bar_in_full():
    table = pl.DataFrame({"format": ["anchored", "binary", "likert5", "numeric100", "tournament"],
                          "decoding": ["constrained"] * 5, "pairs": [4, 0, 2, 1, 41], "tied": [1, 6, 3, 2, 0],
                          "flipped": [0, 0, 0, 0, 37], "below_margin": [0] * 5, "one_order_only": [0] * 5})
    spec = losses_chart(table).to_dict()
    y = spec["encoding"]["y"]
    # no label thinned out (labelOverlap) or cut to 100 px (Streamlit's labelLimit): five bars, five names
    assert y["axis"]["labelLimit"] == 0 and y["axis"]["labelOverlap"] is False
    assert spec["height"] == {"step": 28}                   # a band per bar, whatever their number
    assert _is_count_axis(spec["encoding"]["x"]) and spec["encoding"]["x"]["scale"]["zero"] is True


def test_metric_legends_are_words():
    cells = pl.DataFrame({"format": ["likert5", "binary"], "decoding": ["greedy"] * 2, "kind": ["pointwise"] * 2,
                          "tie_prob": [0.4, 0.6], "top_tied": [0.5, 0.9], "d1": [3.1, 1.9], "d2": [2.5, 1.7],
                          "nominal_levels": [5, 2], "tau_a": [0.2, 0.1], "tau_b": [0.3, 0.2],
                          "top1_expected": [0.4, 0.3], "top1_uniform": [0.25, 0.25]})
    seen = set()
    for chart in (charts.tie_bars(cells), charts.level_bars(cells), charts.agreement_bars(cells)):
        spec = chart.to_dict()
        for rows in spec["datasets"].values():
            seen |= {r["metric"] for r in rows if "metric" in r}
    assert seen == {"tie probability", "top tied", "D1 levels", "D2 levels", "τa", "τb", "top-1 expected",
                    "top-1 at random"}


def test_every_layer_of_the_kappa_forest_shares_the_axis_title():
    cells = pl.DataFrame({"judge": ["j"], "format": ["tournament"], "decoding": ["greedy"], "kappa": [0.3],
                          "kappa_lo": [0.1], "kappa_hi": [0.5], "n": [20], "decision": [None]})
    spec = charts_trust.kappa_forest(cells, {"kappa": 0.4, "kappa_lo": 0.2, "kappa_hi": 0.6}, 0.6).to_dict()
    titles = {e["x"]["title"] for e in _encodings(spec) if "x" in e}
    assert titles == {"Cohen's kappa"}          # a layer without one adds its field: "Cohen's kappa, lo, k"


# -- a training curve's first point inside the plot ----------------------------------------------------------

def test_the_training_curves_pad_their_first_step():
    for x in (charts.step_x().to_dict(),):
        assert x["scale"] == {"nice": False, "padding": 12, "zero": False} and x["axis"]["format"] == "d"


# -- reliability bins of at least 10 judgements --------------------------------------------------------------

def _bin(lo, n, p, y):
    return {"lo": lo, "hi": lo + 0.1, "n": n, "mean_p": p, "mean_y": y}


def test_merged_bins_by_hand():
    # 3 + 8 = 11 >= 10 closes the first bin; the last 4 are short of 10 and join it: one bin of 15,
    # mean_p = (3 * 0.05 + 8 * 0.55 + 4 * 0.95) / 15 = 8.35 / 15, mean_y = (0 + 4 + 4) / 15 = 8 / 15
    got = merged_bins([_bin(0.9, 4, 0.95, 1.0), _bin(0.0, 3, 0.05, 0.0), _bin(0.5, 8, 0.55, 0.5)])
    assert got == [{"lo": 0.0, "hi": 1.0, "n": 15, "mean_p": pytest.approx(8.35 / 15), "mean_y": pytest.approx(8 / 15)}]
    # 12 stands alone; 5 + 6 = 11 closes the second; the last 2 join it: 12 and 13
    got = merged_bins([_bin(0.1, 12, 0.15, 0.0), _bin(0.3, 5, 0.35, 0.2), _bin(0.6, 6, 0.65, 0.5),
                       _bin(0.8, 2, 0.85, 1.0)])
    assert [(b["lo"], b["n"]) for b in got] == [(0.1, 12), (0.3, 13)]
    assert got[1]["mean_p"] == pytest.approx((5 * 0.35 + 6 * 0.65 + 2 * 0.85) / 13)
    assert got[1]["hi"] == pytest.approx(0.9)
    assert merged_bins([]) == [] and merged_bins([_bin(0.4, 10, 0.45, 0.5)]) == [_bin(0.4, 10, 0.45, 0.5)]


def test_the_reliability_diagram_draws_the_merged_bins():
    cells = pl.DataFrame({"judge": ["j"], "format": ["f"], "decoding": ["d"], "reliability": [
        [_bin(0.0, 3, 0.05, 0.0), _bin(0.5, 8, 0.55, 0.5), _bin(0.9, 4, 0.95, 1.0)]]})
    spec = charts_trust.reliability_diagram(cells).to_dict()
    points = [r for rows in spec["datasets"].values() for r in rows if "mean_p" in r]
    assert [r["n"] for r in points] == [15]                  # not three points of 3, 8 and 4


# -- SVG, so that a browser test can measure each label ---------------------------------------------------------

def test_charts_are_drawn_as_svg():
    # every chart on every page: tests/app/test_tables_demo.py (canvas_charts)
    bins = pl.DataFrame({"set": ["kept"], "lo": [0.0], "hi": [0.5], "n": [1]})
    cells = pl.DataFrame({"judge": ["j"], "format": ["f"], "decoding": ["d"], "reliability": [[_bin(0.0, 3, 0.05, 0.0)]]})
    for chart in (tf.binned_chart(bins, "v"), pool_summary.bar_chart(SUMMARY, "k", "k", "prompts"),
                  charts_trust.reliability_diagram(cells)):
        assert chart.to_dict()["usermeta"] == {"embedOptions": {"renderer": "svg"}}


# -- tables: "–" in the browser, lists as text, names whole ------------------------------------------------------

def test_a_table_gives_the_grid_its_placeholder_and_names_their_width():
    frame = pl.DataFrame({"judge": ["smollm2-demo", "smollm2-demo-t0.7"], "members": [None, ["a", "b"]],
                          "kappa": [None, 0.25]})
    view = tables.view(frame)
    assert view["placeholder"] == "–"                # the grid draws it over a missing cell, not "None"
    widths = {c: view["column_config"][c].get("width") for c in frame.columns}
    # the widest name, 17 characters, at 8 px each and 28 px of padding: 164 px; the column's heading
    # is shorter; a number column is left to the grid
    assert widths == {"judge": 8 * 17 + 28, "members": 8 * len("members") + 28, "kappa": None}
    assert view["data"].data["members"].tolist() == ["–", "a, b"]


def test_the_rules_catch_a_cut_name_and_noise():
    table = {"headers": [("judge", "judge")], "cells": [["smollm2-demo"], ["smollm2-demo-t0.7"]], "widths": {}}
    assert cut_names(table) == ["judge: 'smollm2-demo' in auto px", "judge: 'smollm2-demo-t0.7' in auto px"]
    table["widths"] = {"judge": int(CHAR_PX * 17 + PAD_PX) - 1}
    assert cut_names(table) == [f"judge: 'smollm2-demo-t0.7' in {int(CHAR_PX * 17 + PAD_PX) - 1} px"]
    assert [t for t in ("0.123456789", "6.000000", "0.00", "7.00", "3.17e-09", "12.3456", "0.992", "1,234.5",
                        "0.0001", "< 0.0001", "6", "6.0", "0.5 ★") if noise(t)] == \
        ["0.123456789", "6.000000", "0.00", "7.00", "3.17e-09", "12.3456"]
