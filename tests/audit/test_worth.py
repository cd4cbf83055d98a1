"""audit/_worth.py, what a judge's verdicts are worth in human labels: each item's human value and
weight, the default baseline, the items of `accept` and `winrate` with the cell's prediction f (by
hand), and a cell's classical interval against a hand computation. (audit.estimate, which builds its
items in DuckDB, against ppi-python: test_estimate.py; against this module's: test_worth_cells.py.)"""

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from audit._worth import accept_items, cell_estimate, default_baseline, human_values, winrate_items

CELL = {"judge": "j", "format": "likert5", "decoding": "greedy"}


def _votes(rows):
    return pl.DataFrame(rows, schema={"lo_idx": pl.Int64, "hi_idx": pl.Int64, "annotator": pl.String,
                                      "y": pl.Float64, "pi": pl.Float64, "m": pl.Int64, "frame": pl.Int64},
                        orient="row")


def test_human_values_average_annotators_and_weigh_by_the_first_labels_design():
    votes = _votes([(0, 1, "u", 1.0, None, None, None), (0, 1, "v", 0.5, 0.5, 4, 10),
                    (2, 3, "u", 0.0, 0.25, 4, 10), (2, 3, "v", 1.0, None, None, None)])
    got = human_values(votes, ["lo_idx", "hi_idx"]).rows(named=True)
    # (0, 1): y = (1 + 0.5) / 2; first label from a file: weight 1
    # (2, 3): y = (0 + 1) / 2; first label through a queue: m / (frame pi) = 4 / (10 x 0.25) = 1.6
    assert got == [{"lo_idx": 0, "hi_idx": 1, "y": 0.75, "n_annotators": 2, "w": 1.0},
                   {"lo_idx": 2, "hi_idx": 3, "y": 0.5, "n_annotators": 2, "w": 1.6}]


def test_default_baseline_is_the_system_in_the_most_labelled_pairs():
    cands = pl.DataFrame({"prompt_idx": [0, 0, 0, 1, 1], "cand_idx": [0, 1, 2, 3, 4],
                          "candidate_id": ["x", "y", "z", "y", "z"]})
    # labelled pairs (x, y), (x, z), (y, z) of prompt 0, (y, z) of prompt 1 twice (two annotators):
    # x 2, y 3, z 3 -> y and z tie at 3: by name, y
    votes = _votes([(0, 1, "u", 1, None, None, None), (0, 2, "u", 1, None, None, None),
                    (1, 2, "u", 1, None, None, None), (3, 4, "u", 1, None, None, None),
                    (3, 4, "v", 0, None, None, None)])
    assert default_baseline(cands, votes) == "y"
    # no label: the system that answered the most prompts (y and z: 2 each, by name y)
    assert default_baseline(cands, votes.head(0)) == "y"
    assert default_baseline(cands.head(0), votes.head(0)) is None


def test_winrate_items_of_a_pointwise_and_a_comparative_cell_by_hand():
    # one prompt, systems b (baseline, cand 0) and s (cand 1); prompt 1: s (cand 2) and b (cand 3)
    cands = pl.DataFrame({"prompt_idx": [0, 0, 1, 1], "cand_idx": [0, 1, 2, 3], "candidate_id": ["b", "s", "s", "b"]})
    points = pl.DataFrame({**{k: [v] * 4 for k, v in CELL.items()}, "cand_idx": [0, 1, 2, 3],
                           "f": [0.5, 0.75, 0.25, 0.25]})
    pairs = pl.DataFrame({"judge": ["t"], "format": ["tournament"], "decoding": ["greedy"], "prompt_idx": [1],
                          "lo_idx": [2], "hi_idx": [3], "f": [0.8]})
    # a human: (0, 1) favours lo = b (y_lo 1) -> y for s 0; (2, 3) tie
    humans = pl.DataFrame({"lo_idx": [0, 2], "hi_idx": [1, 3], "y": [1.0, 0.5], "w": [1.0, 1.0]})
    got = winrate_items(cands, points, pairs, humans, "b").sort("judge", "prompt_idx")
    rows = got.select("judge", "system", "prompt_idx", "f", "y").rows()
    # pointwise: prompt 0 s 0.75 > b 0.5 -> 1; prompt 1 s 0.25 = b 0.25 -> 1/2.
    # comparative: s is the lower cand_idx (2) of (2, 3): its preference is the pair's f, 0.8
    assert rows == [("j", "s", 0, 1.0, 0.0), ("j", "s", 1, 0.5, 0.5), ("t", "s", 1, 0.8, 0.5)]
    acc = accept_items(points, pl.DataFrame({"cand_idx": [1], "y": [1.0], "w": [1.0]}))
    assert acc.sort("cand_idx")["y"].to_list() == [None, 1.0, None, None]


def test_a_cells_classical_interval_by_hand():
    # four labelled items y (1, 0, 1, 1) of six, uniformly drawn: mean 3/4, population sd sqrt(3/16),
    # half-width z(0.975) x sqrt(3/16) / sqrt(4)
    f_all = [0.9, 0.1, 0.8, 0.7, 0.6, 0.2]
    est = cell_estimate(np.array(f_all), np.array([1.0, 0.0, 1.0, 1.0]), np.array(f_all[:4]), np.ones(4), 0.05)
    half = stats.norm.ppf(0.975) * math.sqrt(3 / 16) / 2
    assert (est["n_labelled"], est["n_unlabelled"]) == (4, 2)
    assert est["classical_value"] == pytest.approx(0.75)
    # 0.75 + half = 1.174 lies past 1, the most a share can be: the interval is clipped to [0, 1]
    assert 0.75 + half > 1
    assert (est["classical_lo"], est["classical_hi"]) == pytest.approx((0.75 - half, 1.0))
