"""Formats: per-format histograms for one judge, the diagnostics table, levels and ties, τ vs top-1.
The two decoding modes of a judge and format stand side by side; a toggle switches between the
parsed labels and the expected (probability-weighted) scores."""

import polars as pl
import streamlit as st

from app import charts, data, judge_picker, url_state
from app.tables import view as table_view    # the one table helper
from app.views.formats import intransitive, repeat_section

pool = data.page_pool("Formats")
every = data.result("cells", pool)   # aggregate single and, for repeated calls, mean (compared below)
cells = every.filter(pl.col("aggregate").is_in(["single", "jury"]))   # a jury: a judge of its own
if cells.height == 0:
    st.info("No verdicts in this pool yet: score it on the Score page or import verdicts.")
    st.stop()

left, right = st.columns([2, 3])
judges = sorted(cells["judge"].unique().to_list())
judge = judge_picker.judge_select(left, "Judge", judges, url_state.FORMATS_JUDGE)   # kept in the address
mine = cells.filter(pl.col("judge") == judge)
has_expected = "expected" in mine["score"].to_list()
expected = right.toggle("Expected scores (probability-weighted over the labels)", key="formats_expected",
                        disabled=not has_expected,
                        help="Off: each verdict's parsed label. On: the label distribution's expected value, "
                             "for pointwise calls that carry one." if has_expected else
                             "This judge's calls carry no label distribution.")
score = "expected" if expected and has_expected else "label"
mine = mine.filter(pl.col("score") == score)
modes = sorted(mine["decoding"].unique().to_list())
if len(modes) > 1:
    right.caption("Both decoding modes: greedy (the paper's protocol: the judge's own answer, parsed) and "
                  "constrained (restricted to the format's labels), side by side.")

values = data.result("score_values", pool).filter((pl.col("judge") == judge) & (pl.col("score") == score))
st.subheader(f"Score histograms — {judge}" + (" (expected scores)" if score == "expected" else ""))
st.caption("One panel per format (normalised score)" + (", its decoding modes one above the other" if len(modes) > 1 else "")
           + ". On 0–100 scales, bars on multiples of 5 are darker.")
panels = list(charts.histogram_panels(values).items())
for start in range(0, len(panels), 3):       # three formats a row: every panel fits a laptop's width
    for column, (fmt, charts_of_format) in zip(st.columns(3), panels[start:start + 3]):
        for chart in charts_of_format:
            column.altair_chart(chart, width="stretch")

st.subheader("Diagnostics across judges × formats")
st.caption("★ marks the best cell of each judge per column (fewest ties, most levels, best agreement). "
           + ("Expected scores only." if score == "expected" else "Parsed labels only; the expected scores "
              "are behind the toggle above."))
table = cells.filter(pl.col("score") == score)
st.dataframe(**table_view(table, charts.best_marks(table)), hide_index=True, width="stretch")

repeat_section.show(pool, judge, every)   # sample 0 against the mean; flip rate and Krippendorff's α
intransitive.show(pool)                   # tournament cells: decisive triads that form a cycle

left, right = st.columns(2)
with left:
    st.subheader("Ties and effective levels")
    st.altair_chart(charts.tie_bars(mine), width="stretch")
    st.altair_chart(charts.level_bars(mine), width="stretch")
    st.caption("D1 and D2: how many levels the scores really use (D1 = exp of the entropy, D2 = 1 / tie "
               "probability). The black tick is the nominal count: the labels one call can give. A comparative "
               "format's score averages a candidate's calls (both orders, several opponents), so it can take "
               "more values than its labels: a pair judged A or B in both orders gives 3 scores (won both, "
               "split, lost both), hence D ≈ 3 against a nominal 2.")
with right:
    st.subheader("τa vs τb vs top-1")
    st.altair_chart(charts.agreement_bars(mine), width="stretch")
st.info("Why τb flatters coarse formats: τb divides by the pairs the judge did *not* tie, so a binary "
        "judge that ties most pairs is scored only on the few it separates. τa keeps ties in the "
        "denominator, and top-1 (expected under random tie-breaking) shows what a selection actually "
        "gets when the top of a prompt is tied.")
