"""Pool: upload a candidate pool in the browser (the CLI's validation and messages), and its summary."""

import altair as alt
import streamlit as st

from app import data, tables
from app.views.pool import form as pool_form
from ingest import UserError

st.header("Pool")
with st.expander("What a pool file holds", expanded=not data.pools().height):
    st.markdown("One row per candidate response, in a `.jsonl`, `.csv` or `.parquet` file; the listing order "
                "within a prompt is the file's order. The UltraFeedback layout (`instruction` and a "
                "`completions` list) is read too.\n\n" + pool_form.fields_markdown())
    st.download_button("Download an example pool (6 rows)", pool_form.example_jsonl(),
                       file_name="example-pool.jsonl", mime="application/x-ndjson", icon=":material/download:")
with st.form("upload", clear_on_submit=False, enter_to_submit=False):   # Enter in the name does not import
    upload = st.file_uploader("Candidate pool (.jsonl, .csv, .parquet; UltraFeedback layout too)",
                              type=["jsonl", "ndjson", "csv", "parquet"])
    name = st.text_input("Pool name", placeholder="my-pool")
    replace = st.checkbox(pool_form.REPLACE_LABEL)
    submitted = st.form_submit_button("Import")
if submitted:
    file_name, content = (upload.name, upload.getvalue()) if upload is not None else (None, None)
    refusal = pool_form.taken(name, data.pools()["name"].to_list(), replace)
    try:   # names typed in the browser: one plain name each, never a path (no '../', no '/etc/...')
        if refusal:
            raise UserError(refusal)
        result = data.import_pool_upload(name, file_name, content, replace)
    except UserError as exc:
        st.error(str(exc))
    else:
        st.session_state["next_pool"] = result["pool"]   # the sidebar picks it up on the rerun
        st.session_state["pool_note"] = pool_form.imported(result)   # shown after the rerun
        st.rerun()
if "pool_note" in st.session_state:
    st.success(st.session_state.pop("pool_note"), icon=":material/check_circle:")

pool = data.current_pool()
if not pool:
    st.stop()
cands = data.pool_candidates(pool)
st.subheader(f"Pool `{pool}`")
a, b, c, d = st.columns(4)
a.metric("prompts", cands["prompt_idx"].n_unique())
b.metric("candidates", cands.height)
c.metric("with a reference", int(cands["reference"].is_not_null().sum()))
d.metric("held out", int((cands["split"] == "heldout").sum()))
per_prompt = cands.unique("prompt_idx").group_by("k").len("prompts").sort("k")
left, mid, right = st.columns(3)
left.altair_chart(alt.Chart(per_prompt.to_pandas()).mark_bar().encode(
    x=alt.X("k:O", title="candidates per prompt"), y=alt.Y("prompts:Q")).properties(height=220), width="stretch")
mid.altair_chart(alt.Chart(cands.select("reference").drop_nulls().to_pandas()).mark_bar().encode(
    x=alt.X("reference:Q", bin=alt.Bin(maxbins=30), title="reference score"),
    y=alt.Y("count()", title="candidates")).properties(height=220), width="stretch")
right.altair_chart(alt.Chart(cands.select("response_chars").to_pandas()).mark_bar().encode(
    x=alt.X("response_chars:Q", bin=alt.Bin(maxbins=30), title="response length (chars)"), y=alt.Y("count()", title="candidates"))
    .properties(height=220), width="stretch")
tables.show(cands.head(200))
