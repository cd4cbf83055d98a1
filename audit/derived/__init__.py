"""Derived results: what the audit computes for a pool, stored in the database once computed and
read by every session and command (docs/scale.md#derived-results-computed-once-read-by-every-session).

- `RESULTS`: the registry (each `Result` says what it is computed from and how it is stored);
- `read(db, pool, name, *args)`: a result, from this process's copy, the stored frame or computed once;
- `refresh(db, pool)`: every result with a page's first-view arguments brought up to date, computing
  only what moved (a judging's parts when its verdicts came); `refresh_after` is what a
  command that brings verdicts ends with; its results compute at once, one per core
  (`refresh_workers`; `refresh(..., workers=1)` one after another).

The layer stores through the store's verbs (ingest.store.save_derived, derived_result, ...); the
dashboard reads through one thin cached facade (app/data.py).
"""

from ._layer import Computation, Reader, estimate_s, forget, no_bar, progress_text, read, with_progress
from ._refresh import refresh, refresh_after, refresh_line, refresh_workers
from ._registry import MOVED_SHOWN, RESULTS, Result, price_args

__all__ = ["Computation", "MOVED_SHOWN", "RESULTS", "Reader", "Result", "estimate_s", "forget", "no_bar",
           "price_args", "progress_text", "read", "refresh", "refresh_after", "refresh_line", "refresh_workers",
           "with_progress"]
