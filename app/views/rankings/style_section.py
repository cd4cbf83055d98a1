"""The Rankings page's style-control section: the fit of the chosen cell, or, where it cannot fit,
why in words and what still works (a ridge-penalised fit, labelled as such; the raw ranking above)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data, tables
from app.views.rankings import style_charts

RIDGE = 1.0     # the penalty of the fallback fit (audit.style_rank penalty): theta' theta / 2 on the centred scale
INTRO = ("Bradley-Terry over systems fitted jointly with the style of each comparison (A minus B: length, "
         "and the density of headers, list items and bold), each feature standardised: a coefficient is the "
         "change in log-odds of preferring slot A per sd of the feature, with a 95% bootstrap interval over "
         "prompts. Human labels on the same pairs get the same fit.")


def style_section(pool: str, cell: tuple[str, str, str], n_boot: int) -> None:
    st.caption(INTRO)
    boot = n_boot if st.toggle("Bootstrap the style fit too", value=False, key="style-boot",
                               help=f"{n_boot:,} resamples (the slider above): intervals for every coefficient and "
                                    "strength. Off on first view: on a large pool it takes tens of seconds.") else 0
    scell = data.style_rank(pool, boot, 0, cell)          # the chosen cell alone: seconds, not all cells
    if scell.height == 0:
        st.info("No parsed comparative call between two different systems in this cell.")
        return
    slot = scell.filter((pl.col("part") == "coefficient") & (pl.col("name") == "slot")).row(0, named=True)
    if not slot["converged"]:
        st.warning(f"**No finite style-controlled fit** ({slot['n']:,} comparisons). {slot['why']}")
        if not st.toggle(f"Show a ridge-penalised fit instead (penalty {RIDGE:g})", key="style-ridge",
                         help="Maximises the likelihood minus a penalty on the slot, the centred strengths and the "
                              "coefficients: every number shrinks toward 0. Not a maximum-likelihood estimate: "
                              "read it as a direction, not a size. The raw ranking above needs no style fit."):
            return
        scell = data.style_rank(pool, boot, 0, cell, RIDGE)
        st.caption(f"**Ridge-penalised fit (penalty {RIDGE:g})**, not the maximum-likelihood one: shrunk toward 0.")
    elif slot["why"]:                       # a parameter the design cannot tell apart, held at 0
        st.info(slot["why"])
    st.markdown("  \n".join(style_charts.style_sentences(scell)))
    coefs = style_charts.coefficient_table(scell)
    if coefs.filter(pl.col("feature") != "slot").height == 0:
        st.info("No style feature varies across this cell's comparisons (see above), so there is nothing to control "
                "for: the style-controlled ranking is the raw ranking, shown in the table above.")
        return
    left, right = st.columns([3, 2])
    left.altair_chart(style_charts.coefficient_forest(scell), width="stretch")
    right.altair_chart(style_charts.rank_moves(scell), width="stretch")
    tables.show(style_charts.systems_table(scell))
    tables.show(coefs)
