"""The Report page's two fields for its decision per cell: ±H, the half-width whose labels and price the
decision states, and ε, the alternative annotator test's advantage for the judge (as the Judges page's
fields, and `judgeaudit report --half-width --epsilon`), each kept in the address."""

from __future__ import annotations

import streamlit as st

from app import data, url_state


def fields() -> tuple[float, float]:
    """(H, ε) as the page's fields hold them (0.05 and 0.2 until changed), rounded to 4 decimals: a step
    of 0.005 leaves float noise in the last bits."""
    left, right = st.columns(2)
    h = left.number_input("The decision's ±H, the half-width to price", 0.005, 0.5, data.HALF_WIDTH, 0.005,
                          format="%.3f", key=url_state.REPORT_H, bind="query-params",
                          help="The labels still needed, and their price, for an interval of ±H (`judgeaudit "
                               "plan`, `judgeaudit report --half-width`)")
    eps = right.number_input("The decision's ε, the judge's advantage for its lower cost", 0.0, 0.5, data.EPSILON,
                             0.05, format="%.2f", key=url_state.REPORT_EPSILON, bind="query-params",
                             help="The alternative annotator test's ε (`judgeaudit alt-test --epsilon`, "
                                  "`judgeaudit report --epsilon`)")
    return round(h, 4), round(eps, 4)
