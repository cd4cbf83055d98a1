"""Pool: upload a candidate pool in the browser (the CLI's validation and messages), and its summary."""

import streamlit as st

from app import data, pool_summary, tables
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
summary = data.result("pool_summary", pool)      # counts and binned charts, stored: flat in the pool's size
st.subheader(f"Pool `{pool}`")
counts = pool_summary.counts(summary)
for col, caption, n, why in zip(st.columns(4), ("prompts", "candidates", "with a reference", "marked held out"),
                                counts, (None, None, None, pool_summary.heldout_help(counts[0], counts[3]))):
    col.metric(caption, n, help=why)
for col, args in zip(st.columns(3), (("k", "candidates per prompt", "prompts"),
                                     ("reference", "reference score", "candidates"),
                                     ("chars", "response length (chars)", "candidates"))):
    col.altair_chart(pool_summary.bar_chart(summary, *args), width="stretch")
tables.show(data.result("pool_head", pool))
