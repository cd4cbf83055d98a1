"""Label: human labels where the items are, one at a time and blind (no verdict, no system names),
from a queue drawn for the annotator; the annotator and the queue live in the address, so a reload
keeps the place. Keys: A / B / T (pairs) or Y / N (accept / reject), S skip, U undo the last."""

import streamlit as st

from app import data, url_state
from app.views.label.screen import agreement_section, item_screen, new_queue_form, still_needed

pool = data.page_pool("Label")
left, right = st.columns([1, 2])
annotator = left.text_input("Annotator", key=url_state.ANNOTATOR, bind="query-params", placeholder="your name",
                            help="Your labels are stored under this name; a later label of an item replaces yours.")
if not annotator.strip():
    st.info("Type your name to start labelling.")
    agreement_section(pool)
    st.stop()
queues = data.labelling("label_queues", pool)
mine = queues.filter(queues["annotator"] == annotator)
ids = [str(q) for q in mine["queue_id"]]
if st.session_state.get("next_queue") in ids:           # a queue just drawn opens at once
    st.session_state[url_state.QUEUE] = st.session_state.pop("next_queue")
info = {str(r["queue_id"]): r for r in mine.iter_rows(named=True)}
# no default queue (index None): a queue chosen, or just drawn, always differs from the default, so the
# address keeps it (a value equal to its widget's default is left out of the address)
queue = right.selectbox("Queue", ids, key=url_state.QUEUE, bind="query-params", placeholder="draw a queue below",
                        help="Your queues by number (the address keeps it: a reload opens the same one)", index=None)
if queue in info:
    q = info[queue]
    right.caption(f"Queue {queue}: {q['kind']} labels, {q['strategy']}"
                  + (f", from {q['judge']} / {q['format']} / {q['decoding']}" if q["judge"] else ""))
    if q["judge"]:
        h = right.number_input("±H to plan for", 0.005, 0.5, data.HALF_WIDTH, 0.005, format="%.3f",
                               key=url_state.LABEL_H, bind="query-params",
                               help="The half-width the line below counts the labels for (`judgeaudit plan`)")
        needed = still_needed(data.decisions(pool, round(h, 4)), q)
        if needed:
            right.caption(needed)
    item_screen(int(queue), q["kind"])
with st.expander("Draw a new queue", expanded=not ids):
    new_id = new_queue_form(pool, annotator)
    if new_id is not None:
        st.session_state["next_queue"] = str(new_id)
        st.rerun()
agreement_section(pool)
