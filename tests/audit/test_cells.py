"""audit/_cells.py, the audit cells: group layouts, the joint tallies of score and reference, the
Spearman correlation from tallies (against scipy on data with ties), a cell added up from its
blocks (arithmetic in comments)."""

import math

import numpy as np
import pytest
import scipy.stats as ss

from audit import _cells as cells_mod
from audit._cells import dense_groups, finish_cell, joint_counts, spearman_from_joint
from tests.audit.conftest import _arr


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def test_dense_groups_keep_prompts_with_enough_members():
    # prompts 5,5,7,9,9,9: sizes 2, 1, 3; with min_size 2 prompt 7 goes, the rest renumber 0, 1
    keep, g = dense_groups(_arr(5, 5, 7, 9, 9, 9), 2)
    assert keep.tolist() == [True, True, False, True, True, True] and g.tolist() == [0, 0, 1, 1, 1]
    keep, g = dense_groups(_arr(5, 5, 7), 3)
    assert keep.tolist() == [False, False, False] and g.size == 0
    keep, g = dense_groups(_arr(4), 1)
    assert keep.tolist() == [True] and g.tolist() == [0]
    keep, g = dense_groups(_arr(), 2)
    assert keep.size == 0 and g.size == 0


def test_joint_counts_dense_and_sparse_agree(monkeypatch):
    s_values, r_values = np.array([0.0, 0.5, 1.0]), np.array([1.0, 2.0])
    s_code, r_code = np.array([0, 2, 2, 1, 2, 0]), np.array([1, 0, 0, 1, 0, 1])
    # pairs: (0, 2) x2, (1, 1) x3, (.5, 2) x1, sorted by s then r
    want = ([0.0, 0.5, 1.0], [2.0, 2.0, 1.0], [2, 1, 3])
    got = joint_counts(s_code, s_values, r_code, r_values)
    assert [g.tolist() for g in got] == list(want)
    monkeypatch.setattr(cells_mod, "JOINT_BINCOUNT", 0)
    assert [g.tolist() for g in joint_counts(s_code, s_values, r_code, r_values)] == list(want)


def test_spearman_from_tallies_is_scipys_on_the_expanded_data():
    s = np.array([0.0, 0.0, 0.5, 0.5, 0.5, 1.0, 1.0, 0.25])
    r = np.array([1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 1.0, 0.0])
    pairs, n = np.unique(np.stack([s, r]), axis=1, return_counts=True)
    assert spearman_from_joint(pairs[0], pairs[1], n) == pytest.approx(ss.spearmanr(s, r).statistic, abs=1e-14)
    assert math.isnan(spearman_from_joint(np.array([1.0]), np.array([2.0]), np.array([1])))     # one element
    assert math.isnan(spearman_from_joint(np.array([1.0, 1.0]), np.array([2.0, 3.0]), np.array([1, 1])))


def test_finish_cell_adds_blocks_up_by_hand():
    a = {"n_candidates": 3, "n_prompts": 1, "levels": (np.array([0.0, 1.0]), np.array([1, 2])),
         "top_tied": (1.0, 1), "tau_a": (0.5, 1), "n_ranked_prompts": 1,
         "joint": (np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([1, 2]))}
    b = {"n_candidates": 4, "n_prompts": 2, "levels": (np.array([0.5, 1.0]), np.array([2, 2])),
         "top_tied": (0.0, 2), "tau_a": (1.5, 2), "n_ranked_prompts": 2,
         "joint": (np.array([0.5, 1.0]), np.array([0.0, 1.0]), np.array([2, 2]))}
    row = finish_cell([a, {"n_candidates": 0}, b])
    # levels 0: 1, 0.5: 2, 1: 4 of 7 -> tie_prob (1 + 4 + 16) / 49 = 21/49
    assert (row["n_candidates"], row["n_prompts"], row["distinct"]) == (7, 3, 3)
    assert row["tie_prob"] == pytest.approx(21 / 49) and row["d2"] == pytest.approx(49 / 21)
    assert row["top_tied"] == pytest.approx(1 / 3)            # (1 + 0) / (1 + 2)
    assert row["tau_a"] == pytest.approx(2 / 3)               # (0.5 + 1.5) / 3 prompts
    assert row["n_ranked_prompts"] == 3 and "tau_b" not in row
    s = np.array([0.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0])
    r = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    assert row["spearman"] == pytest.approx(ss.spearmanr(s, r).statistic)
    assert finish_cell([{"n_candidates": 0}]) == {"n_candidates": 0} == finish_cell([])
    assert math.isnan(finish_cell([{**a, "tau_a": (0.0, 0)}])["tau_a"])   # defined in no prompt
