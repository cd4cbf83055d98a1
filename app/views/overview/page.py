"""Overview, the landing page: the pool in numbers, what it shows (a headline of two to four
sentences, each term explained where it appears), the details grouped by format, and the judges ×
formats grid. Everything comes from the cached audit cells and slot bias the Formats and Slot bias
pages read (the sentences are app/views/overview/findings.py and app/views/overview/headline.py)."""

import polars as pl
import streamlit as st

from app import charts, data, judge_picker, reading, url_state
from app.views.overview.findings import findings
from app.views.overview.jury_sentence import jury_sentences

PAGE_NAMES = {"views/formats/page.py": "Formats", "views/slot_bias/page.py": "Slot bias", "views/curate/page.py": "Curate & Train"}

pool = data.page_pool("Overview")
st.caption("What the scoring format lets a judge express, for this pool: how many levels it really uses, "
           "how often the top of a prompt is tied, how well it agrees with the reference, and how much of "
           "a comparative verdict is slot bias.")
summary = data.pools().filter(pl.col("name") == pool).row(0, named=True)
cells = data.result("cells", pool).filter((pl.col("score") == "label") & (pl.col("aggregate") == "single"))
cols = st.columns(5)
for col, (caption, value) in zip(cols, [("Prompts", summary["n_prompts"]), ("Candidates", summary["n_candidates"]),
                                      ("Judges", cells["judge"].n_unique()), ("Formats", cells["format"].n_unique()),
                                      ("Verdicts", int(cells["n_verdicts"].sum() or 0))]):
    why = "judge calls, each counted once: a call asked several times (--samples) counts its first sample. " \
        if caption == "Verdicts" else ""
    col.metric(caption, reading.card_count(value), help=f"{why}{value:,} exactly" if why or value >= 1e6 else None)
if cells.height == 0:
    st.info("No verdicts in this pool yet.")
    st.page_link("views/score/page.py", label="Score it", icon=":material/play_arrow:")
    st.stop()

found = findings(data.result("cells", pool), data.result("bias", pool))
judges = list(found)
judge = judges[0] if len(judges) == 1 else judge_picker.judge_select(st, "Judge", judges, url_state.OVERVIEW_JUDGE)
report = found[judge]
st.subheader("What this pool shows" + (f" — {judge}" if len(judges) > 1 else ""))
with st.container(border=True, key="overview_headline"):
    for sentence in report.headline or ["Nothing to report for this judge yet."]:
        st.markdown(sentence)
    for sentence in jury_sentences(pool):       # a jury of the pool: against its best member
        st.markdown(sentence)

st.subheader("Details by format")
st.caption(report.glossary)
if report.agreement:
    st.markdown(report.agreement)
for fmt, items in report.by_format.items():
    text, links = st.columns([6, 1])
    text.markdown(f"**{fmt}**\n" + "\n".join(f"- {f.text}" for f in items))
    for page in dict.fromkeys(f.page for f in items):
        links.page_link(page, label=PAGE_NAMES.get(page, "Open"), icon=":material/arrow_forward:")
st.page_link("views/curate/page.py", label="Coin flips among a curation's picks at a rate r: Curate & Train",
             icon=":material/arrow_forward:")

st.subheader("Judges × formats")
st.caption("Parsed labels. Darker is better in every panel (fewer ties, more levels, more agreement). "
           "Hover a cell for its value and call count; the Formats page has every column.")
heatmaps = charts.diagnostic_heatmaps(cells)
for start in range(0, len(heatmaps), 2):          # two panels a row, each as wide as its column
    for column, chart in zip(st.columns(2), heatmaps[start:start + 2]):
        column.altair_chart(chart, width="stretch")
