"""The Label page's reads and writes, re-exported by app/data.py: a queue's items are read uncached
(a label shows at once); queues and labels are written through the store."""

from __future__ import annotations

import audit
from app.database_state import db_file


def labelling(name: str, *args):
    """audit.NAME(db, *args) uncached: label_queues(pool), label_cells(pool), queue_screen(queue_id)."""
    return getattr(audit, name)(str(db_file()), *args)


def create_label_queue(pool: str, annotator: str, kind: str, strategy: str, cell, n: int, seed: int) -> int:
    """Draw a queue (audit) and store it for the annotator (the store); its id."""
    from ingest.store import save_label_queue
    plan = audit.draw_label_queue(str(db_file()), pool, n, kind, strategy, *(cell or (None,) * 3), annotator, seed)
    items = plan["items"].drop("prompt_id", "a_id", "b_id", "candidate_id")
    return save_label_queue(str(db_file()), pool, annotator, kind, strategy, *(cell or (None,) * 3)[:2],
                            plan["decoding"], seed, plan["n_frame"], plan["active"], items)


def label_action(action: str, queue_id: int, position: int, label: str | None = None) -> None:
    """'label' (with label), 'skip' or 'undo' the queue's item at `position` (ingest.store)."""
    import ingest.store as store
    {"label": lambda: store.record_label(str(db_file()), queue_id, position, label),
     "skip": lambda: store.skip_item(str(db_file()), queue_id, position),
     "undo": lambda: store.undo_item(str(db_file()), queue_id, position)}[action]()
