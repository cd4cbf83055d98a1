"""Probes & mitigations: bias per probe type with intervals, the cost-agreement frontier of the
strategies, and a probe run launched in the background (`judgeaudit probe`)."""

import streamlit as st

from app import data, judge_picker, url_state
from app.views.probes import charts as probe_charts, form as probe_form
from app.tables import view as table_view    # the one table helper
from app.runs_panel import runs_panel
from ingest import UserError

st.header("Probes & mitigations")
probe_set = data.probe_set()
st.caption(f"The built-in probe set: {probe_set['probed']} controlled pairs (the {probe_set['source']} of Soumik, "
           f"*Judging the Judges*, MIT, less the {probe_set['mirrored']} that mirror another pair's slots) judged "
           "with the paper's comparative format in both orders. Bias = P(prefers the treated response) − P(prefers "
           "the control), 95% bootstrap interval over pairs; a judge without the bias scores 0.")

names = [n for n in data.pools()["name"].to_list() if n == "probes" or n.startswith("probes-")]   # the probe set or a sample of it
if names:
    pool = judge_picker.judge_select(st, "Probe pool", names, url_state.PROBE_POOL)
    table = data.probes(pool)
    every = table["judge"].unique(maintain_order=True).to_list()
    judges = st.multiselect("Judges", every, default=every[:4], key=url_state.PROBE_JUDGES, bind="query-params")
    shown = table.filter(table["judge"].is_in(judges))
    if shown.height:
        st.altair_chart(probe_charts.bias_bars(shown), width="stretch")
        trunc = shown.filter(shown["type"] == "truncation").select("judge", "accuracy", "acc_lo", "acc_hi")
        if trunc.height:
            st.caption("Truncation accuracy (share of calls preferring the complete response):")
            st.dataframe(**table_view(trunc), hide_index=True)
    m = data.mitigations(pool)
    if m.height > 1:
        st.subheader("Mitigations: cost against agreement")
        st.caption("Agreement = share of calls whose verdict is the expected one (a tie, or the complete "
                   "response). McNemar against the baseline judge (exact under 25 discordant calls, else "
                   "continuity-corrected), Holm-adjusted; the dashed line is the frontier.")
        st.altair_chart(probe_charts.frontier(m), width="stretch")
        st.dataframe(**table_view(m.drop("format", "p_exact", "p_cc").rename(probe_charts.DISCORDANT)),
                     hide_index=True, width="stretch")
else:
    st.info("No probe run yet: launch one below (the simulated judge takes seconds).")

st.subheader("Run the probes")
configured = judge_picker.configured_endpoints()
provider = judge_picker.provider_radio("Judge", configured, url_state.PROBE, on_change=lambda picked: st.session_state.update(
    {url_state.PROBE_SAMPLE: 5 if picked == "local" else 0}))     # the bundled model is slow: 5 pairs a type
with st.form("probe"):      # each field kept in the address (app/url_state.py) as it is typed
    judge = judge_picker.judge_fields(provider, configured, "sim?slot_bias=0.5", url_state.PROBE)
    strategy = st.text_input("Strategy (empty = baseline)", placeholder="swap,ensemble:3 · reason · rubric · "
                             "reference · combined · cross:SPEC;SPEC", key=url_state.PROBE_STRATEGY, bind="query-params")
    sample = st.number_input(f"Pairs per probe type (0 = all {probe_set['probed']} pairs)", 0, 150,
                             5 if provider == "local" else 0, key=url_state.PROBE_SAMPLE, bind="query-params")
    go = st.form_submit_button("Launch")
if go:
    form = probe_form.ProbeForm(judge, strategy, int(sample))
    try:
        request, judge_name = probe_form.probe_request(form, configured)
        run_id = data.launch_probe(request, judge_name)
        st.success(f"Started probe run {run_id}: it goes on if this page is closed.")
    except UserError as exc:
        st.error(str(exc))
runs_panel("probe")   # its results show above when a run ends, without a reload
