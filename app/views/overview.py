"""Overview, the landing page: the pool in numbers, what the audit finds (in words, each finding
linking to the page that shows it), and the judges × formats grid of the key diagnostics."""

import polars as pl
import streamlit as st

from app import charts, data

PAGE_NAMES = {"views/formats.py": "Formats", "views/slot_bias.py": "Slot bias", "views/curate.py": "Curate & Train"}

pool = data.page_pool("Overview")
st.caption("What the scoring format lets a judge express, for this pool: how many levels it really uses, "
           "how often the top of a prompt is tied, how well it agrees with the reference, and how much of "
           "a comparative verdict is slot bias.")
summary = data.pools().filter(pl.col("name") == pool).row(0, named=True)
cells = data.cells(pool).filter(pl.col("score") == "label")
cols = st.columns(5)
for col, (label, value) in zip(cols, [("Prompts", summary["n_prompts"]), ("Candidates", summary["n_candidates"]),
                                      ("Judges", cells["judge"].n_unique()), ("Formats", cells["format"].n_unique()),
                                      ("Verdicts", int(cells["n_verdicts"].sum() or 0))]):
    col.metric(label, f"{value:,}")
if cells.height == 0:
    st.info("No verdicts in this pool yet.")
    st.page_link("views/score.py", label="Score it", icon=":material/play_arrow:")
    st.stop()

st.subheader("Findings")
found = data.findings(pool)
judges = list(found)
judge = judges[0] if len(judges) == 1 else st.selectbox("Judge", judges, key="overview_judge")
for i, f in enumerate(found[judge]):
    text, link = st.columns([6, 1], vertical_alignment="center")
    text.markdown(f"- {f.text}")
    link.page_link(f.page, label=PAGE_NAMES.get(f.page, "Open"), icon=":material/arrow_forward:")
if not found[judge]:
    st.caption("Nothing to report for this judge yet.")

st.subheader("Judges × formats")
st.caption("Parsed labels. Darker is better in every panel (fewer ties, more levels, more agreement). "
           "Hover a cell for its value and call count; the Formats page has every column.")
heatmaps = charts.diagnostic_heatmaps(cells)
for start in range(0, len(heatmaps), 2):          # two panels a row, each as wide as its column
    for column, chart in zip(st.columns(2), heatmaps[start:start + 2]):
        column.altair_chart(chart, width="stretch")
