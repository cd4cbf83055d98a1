"""audit/_style_why.py: why a style-controlled fit has no finite maximum, in words (separation by a
system, else by style or slot; too few comparisons; features without variation), worked by hand."""

import numpy as np

from audit._style_why import why_no_fit


def test_a_tie_breaks_a_separation_in_words():
    # x won twice and tied once: it lost nothing but its tie is half a loss, so no system separates
    ids, a, b = ["x", "y"], np.array([0, 0, 1]), np.array([1, 1, 0])
    y = np.array([1.0, 0.5, 0.0])
    assert why_no_fit(ids, a, b, y, []).startswith("Separation by style or slot")
    assert why_no_fit(ids, a, b, np.array([1.0, 1.0, 0.0]), []).startswith("Separation: x never lost")


def test_every_reason_by_hand_with_long_lists_of_names_cut_short():
    # s0..s5 each beat s6 once: six systems never lost (four named, "and 2 more"), s6 never won.
    # parameters: 1 slot + (7 systems - 1) + (4 features - 1 dropped) = 10; 6 rows < 5 x 10
    ids = [f"s{i}" for i in range(7)]
    a, b, y = np.arange(6), np.full(6, 6), np.ones(6)
    assert why_no_fit(ids, a, b, y, ["bold"]) == (
        "Separation: s0, s1, s2, s3 and 2 more never lost a comparison and s6 never won one (ties count half "
        "a win), so its strength runs to infinity. Too few comparisons: 6 for 10 parameters (fewer than 5 a "
        "parameter). No variation in bold: left out.")


def test_too_few_comparisons_is_five_rows_a_parameter():
    # x and y, each winning some: no system separates. Parameters: 1 slot + 1 strength + 4 features = 6,
    # so 30 rows are enough and 29 are too few; a system without a comparison (z) is never named
    ids = ["x", "y", "z"]

    def rows(n):
        a = np.zeros(n, dtype=np.int64)
        b = np.ones(n, dtype=np.int64)
        return a, b, np.arange(n) % 2 * 1.0          # y: 0, 1, 0, 1, ...
    assert why_no_fit(ids[:2], *rows(30), []) == ("Separation by style or slot: together the style features (or "
                                                  "the slot) predict every outcome, e.g. the longer response "
                                                  "always wins.")
    assert why_no_fit(ids[:2], *rows(29), []).endswith("Too few comparisons: 29 for 6 parameters (fewer than 5 a "
                                                       "parameter).")
    # with z listed: 1 + 2 + 4 = 7 parameters, 35 rows needed
    got = why_no_fit(ids, *rows(34), [])
    assert "z" not in got.split("Too few")[0] and got.endswith("Too few comparisons: 34 for 7 parameters (fewer "
                                                                 "than 5 a parameter).")
    assert "Too few" not in why_no_fit(ids, *rows(35), [])


def test_what_is_held_in_words():
    from audit._style_why import why_held
    ids = ["a", "anchor", "c"]
    a, b = np.array([0, 2, 0]), np.array([1, 1, 1])      # the anchor always in slot B
    assert why_held(ids, a, b, True, []) == (
        "Slot effect not told apart: anchor is always in slot B, so the slot effect and its strength are one "
        "parameter. Fitted without a slot effect (held at 0): the strength of anchor includes the judge's "
        "preference for slot B.")
    # every system in both slots, the slot still a combination of the strengths; a feature held
    a2, b2 = np.array([0, 1, 2, 1]), np.array([1, 2, 0, 0])
    assert why_held(ids, a2, b2, True, ["lists"]) == (
        "Slot effect not told apart: in this cell's comparisons it is a combination of the systems' strengths. "
        "Fitted without a slot effect (held at 0): the strengths include it. Lists is not told apart from the "
        "systems' strengths and the slot in this cell's comparisons: left out (held at 0).")
