"""Label queues and the labels given on the Label page
(docs/command-line.md#what-human-labels-are-worth): a queue is stored with each item's inclusion
probability, and the order an annotator sees a pair's two responses in is drawn once (seeded by the
queue) and kept, so a reload shows the same screen. A label from the page replaces the annotator's
earlier label of the item; `undo` takes the annotator's label of the item back and puts the item back in
the queue.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .._errors import UserError
from . import _sql
from ._database import next_id, transaction, writer
from .connection import pool_id

QUEUE_ITEM_SCHEMA = {"prompt_idx": pl.Int32, "a_idx": pl.Int32, "b_idx": pl.Int32, "cand_idx": pl.Int32,
                     "pi": pl.Float64}
PAIR_LABELS = ("A", "B", "tie")
ACCEPT_LABELS = ("accept", "reject")


def save_label_queue(db, pool: str, annotator: str, kind: str, strategy: str, judge: str | None,
                     format: str | None, decoding: str | None, seed: int, n_frame: int, active: bool,
                     items: pl.DataFrame) -> int:
    """Store a queue (items: prompt_idx, a_idx, b_idx, cand_idx, pi, in the order shown) and, for a
    pair queue, the order of each pair's responses for this annotator where none is stored yet
    (seeded by `seed`); the queue's id."""
    if not annotator.strip():
        raise UserError("--annotator: a name is required")
    items = items.select([pl.col(c).cast(t) for c, t in QUEUE_ITEM_SCHEMA.items()])
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        qid = next_id(con, "label_queues")
        _sql.execute(con, "insert_label_queue", queue_id=qid, pool_id=pid, annotator=annotator, kind=kind,
                     strategy=strategy, judge=judge, format=format, decoding=decoding, seed=seed,
                     n_frame=n_frame, active=active)
        rows = items.with_row_index("position").with_columns(
            pl.col("position").cast(pl.Int32), pl.lit(qid, pl.Int32).alias("queue_id"),
            pl.lit(pid, pl.Int32).alias("pool_id"))
        con.register("queue_rows", rows.to_arrow())
        try:
            _sql.execute(con, "insert_label_queue_items")
            if kind == "pair":
                rng = np.random.default_rng([seed, qid])
                pairs = rows.select("prompt_idx", pl.min_horizontal("a_idx", "b_idx").alias("lo_idx"),
                                    pl.max_horizontal("a_idx", "b_idx").alias("hi_idx"))
                orders = pairs.with_columns(pl.Series("hi_first", rng.random(pairs.height) < 0.5),
                                            pl.lit(pid, pl.Int32).alias("pool_id"),
                                            pl.lit(annotator).alias("annotator"))
                con.register("order_rows", orders.to_arrow())
                try:
                    _sql.execute(con, "insert_label_orders")
                finally:
                    con.unregister("order_rows")
        finally:
            con.unregister("queue_rows")
    return qid


def _queue_item(con, queue_id: int, position: int) -> tuple:
    row = _sql.first(con, "label_queue_item", queue_id=queue_id, position=position)
    if row is None:
        raise UserError(f"queue {queue_id} has no item at position {position}")
    return row


def record_label(db, queue_id: int, position: int, label: str) -> None:
    """The queue's annotator labels its item at `position` (a pair: 'A' | 'B' | 'tie' about the pair
    as stored, a_idx against b_idx; a candidate: 'accept' | 'reject'); an earlier label of the
    annotator on the item is replaced, and the item is marked labelled."""
    with writer(db) as con, transaction(con):
        pid, annotator, kind, prompt_idx, a, b, cand = _queue_item(con, queue_id, position)
        if kind == "pair":
            if label not in PAIR_LABELS:
                raise UserError(f"{label!r} is not a label of a pair (use A, B or tie)")
            _sql.execute(con, "delete_pair_label", pool_id=pid, prompt_idx=prompt_idx, lo=min(a, b), hi=max(a, b),
                         annotator=annotator)
            _sql.execute(con, "insert_app_pair_label", pool_id=pid, prompt_idx=prompt_idx, a_idx=a, b_idx=b,
                         label=label, annotator=annotator, queue_id=queue_id)
        else:
            if label not in ACCEPT_LABELS:
                raise UserError(f"{label!r} is not a label of a candidate (use accept or reject)")
            _sql.execute(con, "insert_app_accept_label", pool_id=pid, prompt_idx=prompt_idx, cand_idx=cand,
                         label=label, annotator=annotator, queue_id=queue_id)
        _sql.execute(con, "set_queue_item_state", queue_id=queue_id, position=position, state="labelled")


def skip_item(db, queue_id: int, position: int) -> None:
    """Pass over the queue's item at `position` without a label."""
    with writer(db) as con, transaction(con):
        _queue_item(con, queue_id, position)
        _sql.execute(con, "set_queue_item_state", queue_id=queue_id, position=position, state="skipped")


def undo_item(db, queue_id: int, position: int) -> None:
    """Take back what the annotator did at `position` (the label this queue stored, or a skip): the
    item is pending again."""
    with writer(db) as con, transaction(con):
        pid, annotator, kind, prompt_idx, a, b, cand = _queue_item(con, queue_id, position)
        if kind == "pair":
            _sql.execute(con, "delete_queue_pair_label", pool_id=pid, prompt_idx=prompt_idx, lo=min(a, b),
                         hi=max(a, b), annotator=annotator, queue_id=queue_id)
        else:
            _sql.execute(con, "delete_queue_accept_label", pool_id=pid, cand_idx=cand, annotator=annotator,
                         queue_id=queue_id)
        _sql.execute(con, "set_queue_item_state", queue_id=queue_id, position=position, state="pending")
