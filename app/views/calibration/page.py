"""Calibration: agreement of each judge with human labels (Cohen's kappa with intervals), against
the human-human ceiling and an acceptance threshold declared before the run; label upload."""

import polars as pl
import streamlit as st

from app import charts_trust, data
from app import tables
from audit import plural
from app.views.calibration.confidence import confidence_section
from app.views.calibration.human_scale import human_scale_section
from app.views.calibration.labels_upload import labels_upload

pool = data.page_pool("Calibration")
labels = data.stored_labels(pool)
labels_upload(pool, labels)
if labels.height == 0:
    st.info("No human labels of pairs for this pool yet: upload a labels file above.")
    human_scale_section(pool)
    st.stop()

left, mid, right = st.columns([1, 1, 1])
declared = data.declared_threshold(pool)
threshold = left.number_input("Acceptance threshold on kappa", -1.0, 1.0, value=declared if declared is not None else 0.6,
                              step=0.05, help="Declared before the run and saved with it; a cell passes when its "
                                              "whole interval lies above it.")
width = mid.number_input("Target interval width", 0.01, 2.0, 0.2, 0.05)
if right.button("Declare threshold and run", type="primary"):
    data.run_calibration(pool, threshold, width)
    st.rerun()
if declared is None:
    st.caption("No threshold declared yet: the decision column stays empty until one is declared.")
cells = data.calibrate(pool, None, 2000, 0, declared, width)
humans = data.human_ceiling(pool).to_dicts()[0]
if cells.height == 0:
    st.info("No comparative verdict on a labelled pair.")
    human_scale_section(pool)
    st.stop()
a, b, c = st.columns(3)
a.metric("labelled pairs", labels.select("prompt_idx", pl.min_horizontal("a_idx", "b_idx").alias("x"),
                                         pl.max_horizontal("a_idx", "b_idx").alias("y")).unique().height)
b.metric("human-human kappa (ceiling)", "n/a" if humans["kappa"] is None else f"{humans['kappa']:.3f}",
         help=f"{plural(humans['n_pairs'], 'pair')} with several annotators, {plural(humans['n_comparisons'], 'annotator pair')}")
c.metric("declared threshold", "none" if declared is None else f"{declared:.2f}")
st.altair_chart(charts_trust.kappa_forest(cells, humans, declared), width="stretch")
st.caption("Points: kappa over A / B / tie with 95% bootstrap intervals over pairs. Green band: human-human "
           "kappa (the ceiling); dashed red: the declared threshold.")
tables.show(cells.drop("confusion", "threshold", "target_width", "reliability"))
names = [f"{r['judge']} / {r['format']} / {r['decoding']}" for r in cells.iter_rows(named=True)]
pick = names.index(st.selectbox("Confusion table of", names))
conf = cells["confusion"][pick].to_list()
tables.show(pl.DataFrame({"humans \\ judge": ["A", "B", "tie"], "A": conf[0::3], "B": conf[1::3], "tie": conf[2::3]}),
            width="content")

human_scale_section(pool)
confidence_section(cells)
