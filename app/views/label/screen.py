"""The Label page's parts: the form that draws a new queue, one item on screen with its keys, and
the humans' agreement. The mapping from what the annotator pressed to the stored label is pure
(`stored_label`), tested without a browser."""

from __future__ import annotations

import streamlit as st

from app import data, url_state
from audit import plural

PAIR_KEYS = (("A is better", "A", "A"), ("B is better", "B", "B"), ("Tie", "tie", "T"))
ACCEPT_KEYS = (("Accept", "accept", "Y"), ("Reject", "reject", "N"))
FLIP = {"A": "B", "B": "A", "tie": "tie"}


def stored_label(pressed: str, first_idx: int, a_idx: int) -> str:
    """The label about the stored pair (a_idx against b_idx) for what the annotator pressed about
    the screen (Response A = first_idx): the same when a_idx is shown first, else flipped."""
    return pressed if first_idx == a_idx or pressed not in FLIP else FLIP[pressed]


NO_CELL = "(none: every item alike)"


def queue_cells(cells, kind: str) -> dict[str, tuple | None]:
    """The cells a queue of `kind` may draw from, by their name 'judge / format / decoding' (NO_CELL first,
    None): an accept queue asks about one response, so only a pointwise cell's score predicts its label; a
    pair queue takes any cell (a comparative cell's preference, or a pointwise cell's two scores)."""
    fits = cells if kind == "pair" else cells.filter(cells["kind"] == "pointwise")
    return {NO_CELL: None, **{f"{r['judge']} / {r['format']} / {r['decoding']}": (r["judge"], r["format"], r["decoding"])
                              for r in fits.iter_rows(named=True)}}


def new_queue_form(pool: str, annotator: str) -> int | None:
    """The fields that draw a queue for the annotator, each kept in the address (app/url_state.py); the
    new queue's id once drawn. Not an st.form: the cells offered follow the kind as it changes."""
    cells = data.labelling("label_cells", pool)
    a, b, c = st.columns(3)
    kind = a.radio("Kind", ["pair", "accept"], horizontal=True, key=url_state.QUEUE_KIND, bind="query-params",
                   format_func={"pair": "pairs (A / B / tie)", "accept": "one response (accept / reject)"}.get)
    strategy = b.radio("Strategy", ["random", "active"], horizontal=True, key=url_state.QUEUE_STRATEGY,
                       bind="query-params", help="active: uniform until you have 40 labels in the cell, then more "
                                                 "often where the judge has erred so far")
    n = c.number_input("Items", 1, 500, 20, key=url_state.QUEUE_ITEMS, bind="query-params")
    names = queue_cells(cells, kind)
    if st.session_state.get(url_state.QUEUE_CELL) not in (None, *names):   # a cell of the other kind
        del st.session_state[url_state.QUEUE_CELL]
    pick = st.selectbox("From the judged items of", list(names), key=url_state.QUEUE_CELL, bind="query-params",
                        help="accept queues: pointwise cells only (a comparative verdict says nothing of one "
                             "response alone)")
    if not st.button("Draw the queue", type="primary", key="draw_queue"):
        return None
    cell = names[pick]
    try:
        seed = len(data.labelling("label_queues", pool))         # each queue of the pool its own seed
        return data.create_label_queue(pool, annotator, kind, strategy, cell, int(n), seed)
    except data.UserError as exc:
        st.error(str(exc))
        return None


def _act(queue_id: int, position: int, action: str, label: str | None = None) -> None:
    data.label_action(action, queue_id, position, label)
    st.rerun()


def item_screen(queue_id: int, kind: str) -> None:
    """Progress, the first pending item (blind), and its keys: label, skip, undo the last."""
    items = data.labelling("queue_screen", queue_id)
    done = items.filter(items["state"] != "pending")
    labelled = int((items["state"] == "labelled").sum())
    st.progress(done.height / max(items.height, 1),
                text=f"{labelled} labelled, {done.height - labelled} skipped, {items.height - done.height} to go "
                     f"(of {items.height})")
    last = int(done["position"].max()) if done.height else None
    pending = items.filter(items["state"] == "pending")
    if pending.height == 0:
        st.success("This queue is done: draw another below, or undo the last.")
    else:
        item = pending.row(0, named=True)
        with st.container(border=True):
            st.caption(f"Item {item['position'] + 1} · Prompt")
            st.markdown(item["prompt"])
        shown = [("Response A", item["first_response"]), ("Response B", item["second_response"])] \
            if kind == "pair" else [("Response", item["first_response"])]
        for col, (title, text) in zip(st.columns(len(shown)), shown):
            with col.container(border=True):
                st.caption(title)
                st.markdown(text)
        keys = PAIR_KEYS if kind == "pair" else ACCEPT_KEYS
        cols = st.columns(len(keys) + 2)
        for col, (text, label, key) in zip(cols, keys):
            if col.button(text, key=f"label_{label}", shortcut=key, width="stretch", type="primary"):
                _act(queue_id, item["position"], "label",
                     stored_label(label, item["first_idx"], item["a_idx"]) if kind == "pair" else label)
        if cols[-2].button("Skip", key="skip", shortcut="S", width="stretch"):
            _act(queue_id, item["position"], "skip")
    if last is not None and st.button("Undo the last", key="undo", shortcut="U"):
        _act(queue_id, last, "undo")


def agreement_section(pool: str) -> None:
    """The agreement between annotators, the ceiling the judges are held to."""
    rows = [r for r in data.annotator_agreement(pool).to_dicts() if r["n_items"]]
    st.subheader("Agreement between annotators")
    if not rows:
        st.caption("No item has two annotators yet: the humans' own ceiling shows once one does.")
    for r, col in zip(rows, st.columns(max(len(rows), 1))):
        stat = (f"Cohen's kappa {r['kappa']:.2f}" if r["kappa"] is not None else
                f"Krippendorff's alpha {r['alpha']:.2f}" if r["alpha"] is not None else "alpha n/a")
        col.metric(f"{r['kind']} labels: humans agree", f"{r['agreement']:.0%}", help=stat)
        col.caption(f"{stat} over {plural(r['n_items'], 'item')}, {plural(r['n_annotators'], 'annotator')}: the ceiling a judge "
                    "can be held to")


def still_needed(decisions, queue: dict) -> str | None:
    """The line "N more labels (≈ $X) to reach ±H" for the queue's cell (from audit.decisions, whose
    target follows the queue's kind: accept labels, or pairs for the win rates); None for a queue drawn
    from no cell or whose labels are not the kind the cell's plan counts."""
    if not queue.get("judge"):
        return None
    target = "accept" if queue["kind"] == "accept" else "winrate"
    rows = [r for r in decisions.to_dicts() if (r["judge"], r["format"], r["decoding"], r["target"])
            == (queue["judge"], queue["format"], queue["decoding"], target)]
    if not rows:
        return None
    r = rows[0]
    what = "the accept rate" if target == "accept" else "every system's win rate against the baseline"
    if r["labels_needed"] is None:
        return f"Too few labels to say how many more would reach ±{r['half_width']:g} on {what}."
    if r["labels_needed"] == 0:
        return f"±{r['half_width']:g} on {what} is reached with the {r['n_labelled']} labels in."
    cost = "" if r["cost_usd"] is None else f" (≈ ${r['cost_usd']:,.2f})"
    return (f"{r['labels_needed']:,} more labels{cost} to reach ±{r['half_width']:g} on {what}, "
            f"beyond the {r['n_labelled']} in (the cheapest plan)")
