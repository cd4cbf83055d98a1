"""The derived results: each names what it is computed from, so the layer knows when a stored copy is
current, and how it is stored (whole, or in parts, one per judging: a judge with a format).

A result is an audit function's frame for a pool with the arguments a page asks for. `RESULTS` holds
the audit's; a package above the audit adds its own (train.DERIVED_RESULTS: the curation preview and
the Score page's call count) and passes the whole registry to `read` and `refresh`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import polars as pl

from ingest.store.database import Database

from .. import _bias, _cells, _consistency, _drift, _export, _judges, _pool_summary, _pools, _positions, _report
from .. import _alt_test_cells, _decision, _human_scale, _intransitive, _jury_size, _rank_cells, _score_values, _scores
from .. import _style_cells
from .. import _variance, _worth_cells

BASES = ("verdicts", "labels", "pool")


def no_arguments(read, pool: str) -> tuple:
    return ()


@dataclass(frozen=True)
class Result:
    """One derived result.

    - `compute(db, pool, *args)`: the frame (db: the handle, scoped to some judges for a part);
    - `basis`: what it is computed from: 'verdicts' (cell runs, verdicts, attached files), 'labels'
      (those and the pool's human labels) or 'pool' (the pool's candidates alone);
    - `in_parts`: computed cell by cell, so stored as one part per judging (the cells of one judge
      and format), each current while that judging's verdicts are, and put together (in judge, then
      format order) when read (its frame names each row's judge and format);
    - `combine(frame)`: what makes the parts put together the whole, where a statistic spans judges
      (a sum of counts, the Pareto front);
    - `judges_of(read, pool, args)`: for a result stored whole that reads only some judges (a drift
      between two judges, a curation by one judge): those judges, so another judge's verdicts leave it
      current; None: every judge's;
    - `built_from`, `build(frame)`: a result made from another one's frame (never from the database),
      made again when read;
    - `uses`: other derived results it is computed from too, read through the layer (stored, or
      computed and stored) and passed to `compute` by name: a result of the whole pool computed from
      the stored parts of others (the checklist, from the cells, slot bias and consistency);
    - `first_view(read, pool)`: the arguments a page's first view asks for (what `refresh` stores);
      None when the page would show nothing to compute;
    - `reads_earlier`: (in parts) a judging's part reads the calls of the judges of a lower id in its
      format too (the pairs it makes with them), so it is stale when any of theirs moves (Mark.earlier).

    `read` is a `Reader`: `read(name, *args)` is another derived result of the pool, `read.db` the
    database's handle.
    """
    what: str
    compute: Callable[..., pl.DataFrame] | None = None
    basis: str = "verdicts"
    in_parts: bool = False
    combine: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    judges_of: Callable | None = None
    built_from: str | None = None
    build: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    uses: tuple[str, ...] = ()
    first_view: Callable = no_arguments
    reads_stored: tuple[str, ...] = ()
    reads_earlier: bool = False


def checklist_frame(db, pool: str, cells: pl.DataFrame | None = None, bias: pl.DataFrame | None = None,
                    consistency: pl.DataFrame | None = None) -> pl.DataFrame:
    """audit.checklist's document as one row of JSON (a frame, so it is stored like the others), from
    the cells, slot bias and consistency given (the stored derived results) or computed."""
    doc = _report.checklist(db, pool, cells=cells, slots=bias, repeats=consistency)
    return pl.DataFrame({"json": [json.dumps(doc, default=str)]})


def judges_frame(db, pool: str, prices: tuple = ()) -> pl.DataFrame:
    """audit.judges at the prices given as price_args (a hashable, storable form of judgeaudit.toml's),
    from the derived results cells, bias and consistency of the judgings the handle is scoped to
    (stored_parts: the stored parts, not computed again), under the fingerprints the handle holds (a
    refresh's, Database.at) or, where it holds none, those taken now."""
    db = Database.of(db)
    marks = db.derived_judging_marks(pool, "verdicts") if db.marks_now is None else db.marks_now.judgings("verdicts")
    cells, slots, repeats = (stored_parts(db, pool, name, marks) for name in ("cells", "bias", "consistency"))
    return _judges.judges(db, pool, {k: dict(v) for k, v in prices}, cells=cells, slots=slots, repeats=repeats)


def stored_parts(db, pool: str, name: str, marks: dict | None) -> pl.DataFrame:
    """The derived result `name` (stored in parts, at no arguments, of basis 'verdicts') of the judgings
    `db` is scoped to (every judging unscoped), in judge then format order: each judging's part as
    stored where it is current under `marks` (db.derived_judging_marks), the others computed here in one
    computation scoped to them (the layer stores them when it reads `name`)."""
    compute = RESULTS[name].compute
    scope = None if db.judgings is None else set(db.judgings)
    marks = [m for m in (marks or {}).values() if scope is None or tuple(m.judging) in scope]
    if not marks:                  # an old database, or no judging stored in parts: computed whole
        return compute(db, pool)
    parts, _ = db.derived_parts(marks, name, ())
    missing = [m for m in marks if parts.get(m.part) is None]
    if missing:
        fresh = compute(db.scoped([m.judging for m in missing]), pool)
        parts.update({m.part: part for m, part in parts_by_judging(fresh, missing).items()})
    return put_together([parts[m.part] for m in marks])


def parts_by_judging(frame: pl.DataFrame, marks: list) -> dict:
    """{mark: the frame's rows of its judging}."""
    return {m: frame.filter((pl.col("judge") == m.judging[0]) & (pl.col("format") == m.judging[1])) for m in marks}


def put_together(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Parts in their order, one frame. An empty part adds no row, so it is left out (its column types,
    from an audit function's empty frame, may be wider)."""
    rows = [f for f in frames if f.height] or frames[:1]
    return rows[0] if len(rows) == 1 else pl.concat(rows, how="vertical_relaxed")


def price_args(prices: dict) -> tuple:
    """((judge, ((kind, USD), ...)), ...): judgeaudit.toml's prices as the arguments of judges_frame."""
    return tuple(sorted((k, tuple(sorted(v.items()))) for k, v in prices.items()))


def decisions_frame(db, pool: str, prices: tuple = (), label_price: float | None = None,
                    half_width: float = 0.05, epsilon: float = 0.2) -> pl.DataFrame:
    """audit.decisions at the prices given as price_args and a label's price (judgeaudit.toml's)."""
    return _decision.decisions(db, pool, half_width, epsilon, prices={k: dict(v) for k, v in prices},
                               label_price=label_price)


def systems_of(cands: pl.DataFrame) -> pl.DataFrame:
    """The pool's systems (its distinct candidate_ids), sorted: the baselines What labels are worth offers."""
    return cands.select("candidate_id").unique().sort("candidate_id")


DIGEST_PARTS = {"summary": _pool_summary.summary, "head": _pool_summary.head, "systems": systems_of}


def pool_digest(db, pool: str) -> pl.DataFrame:
    """What the pages read of the pool's candidates, from one read of them (audit.pool_candidates): the
    Pool page's summary and first candidates, and the systems, as one frame (`digest` names each row's
    part; a column a part lacks is null there), so a refresh reads the candidates once, not once per result."""
    cands = _pools.pool_candidates(db, pool)
    return pl.concat([part(cands).with_columns(pl.lit(name).alias("digest")) for name, part in DIGEST_PARTS.items()],
                     how="diagonal")


def digest_part(name: str, columns: list[str]) -> Callable[[pl.DataFrame], pl.DataFrame]:
    """The part `name` of pool_digest's frame, in its own columns."""
    return lambda digest: digest.filter(pl.col("digest") == name).select(columns)


SUMMARY_COLUMNS = ["part", "x", "width", "n"]
HEAD_COLUMNS = ["prompt_idx", "prompt_id", "candidate_id", "position", "k", "reference", "model", "split",
                "response_chars"]


def summed_counts(counts: pl.DataFrame) -> pl.DataFrame:
    """export_counts' (sample, status, n) from the judgings' parts (judge, format, sample, status, n), summed."""
    return counts.group_by("sample", "status").agg(pl.col("n").sum()).sort("sample", "status") \
        .cast({"sample": counts.schema["sample"], "status": pl.String, "n": counts.schema["n"]})


def single_variance(cells: pl.DataFrame) -> pl.DataFrame:
    """audit.variance from the audit's cells: the variance table of sample 0 of each call."""
    return _variance.variance_table(cells.filter(pl.col("aggregate") == "single"))


MOVED_SHOWN = 1000          # the Drift page lists the first calls that moved (drift's n_moved counts them all)


def first_two_judges(read, pool: str) -> tuple | None:
    """The Drift page's first view: the first two judges that share calls (audit._drift.first_pair, the
    rule the page opens on, over the stored drift_pairs); None where no two judges share a call, where
    the page compares nothing."""
    return _drift.first_pair(read("drift_pairs"))


def first_moved(read, pool: str) -> tuple | None:
    """The Drift page's first list of moved calls: the first MOVED_SHOWN of first_two_judges'."""
    judges = first_two_judges(read, pool)
    return None if judges is None else (*judges, None, MOVED_SHOWN)


def _two_judges(read, pool: str, args: tuple) -> tuple:
    return tuple(j for j in args[:2] if j)


RESULTS: dict[str, Result] = {
    "cells": Result("the audit's cells (tie probability, D2, levels per judge and format)", _cells.audit_cells,
                    in_parts=True),
    "bias": Result("slot bias per comparative cell", _bias.bias, in_parts=True),
    "bias_items": Result("slot bias per item", _bias.bias_items, in_parts=True),
    "positions": Result("the selected candidates' positions", _positions.position_selection, in_parts=True),
    "variance": Result("the variance decomposition of the audit's cells", built_from="cells", build=single_variance),
    "score_values": Result("the score levels per cell", _score_values.score_values, in_parts=True),
    "consistency": Result("repeat consistency per cell", _consistency.consistency, in_parts=True),
    "scored_cells": Result("the scored cells (judge, format, decoding, score)", _scores.scored_cells, in_parts=True),
    "rank": Result("the Bradley-Terry rankings", _rank_cells.rank, in_parts=True,
                   first_view=lambda read, pool: ("candidate_id", 100)),      # the Rankings page's defaults
    # each candidate's style counts: what the style fit joins every judging's calls to, counted once per pool
    # (before style_rank, which reads it: a refresh computes it first)
    "style_counts": Result("each candidate's style counts (length, headers, lists, bold)",
                           _style_cells.pool_style_counts, basis="pool"),
    "style_rank": Result("the style-controlled rankings", _style_cells.style_rank, basis="labels", in_parts=True,
                         first_view=lambda read, pool: (0, 0),   # every cell, no bootstrap: the page filters one
                         reads_stored=("style_counts",)),
    # at no prices: a package that knows the server's (train.DERIVED_RESULTS) gives its first view
    "judges_board": Result("the judges' leaderboard", judges_frame, basis="labels", in_parts=True,
                           combine=_judges.with_front,    # the Pareto front spans judges
                           reads_stored=("cells", "bias", "consistency", "style_counts")),
    "estimate": Result("what the labels are worth (PPI++ per cell)", _worth_cells.estimate, basis="labels",
                       in_parts=True, first_view=lambda read, pool: ("winrate", None, 0.05)),
    # a jury's part: its members' verdicts are read whatever the scope (audit/_jury_size.py)
    "jury_sizes": Result("how many independent judges each jury is worth", _jury_size.jury_sizes, basis="labels",
                         in_parts=True),
    "alt_test": Result("the alternative annotator test of every cell", _alt_test_cells.alt_test, basis="labels",
                       in_parts=True),
    "intransitivity": Result("the tournament cells' intransitive triads", _intransitive.intransitivity, in_parts=True),
    # at no prices: a package that knows the server's (train.DERIVED_RESULTS) gives its first view
    "decisions": Result("the decision in words per cell (worth, alt-test, the price of +-H)", decisions_frame,
                        basis="labels", in_parts=True),
    "human_scale": Result("scores on the human scale (isotonic maps, carry-over per system)",
                          _human_scale.human_scale, basis="labels", in_parts=True),
    "export_counts": Result("the verdict export's rows per sample and status", _export.export_counts_by_judging,
                            in_parts=True, combine=summed_counts),
    "checklist": Result("the reporting checklist", checklist_frame, uses=("cells", "bias", "consistency")),
    # the pairs of judges that share calls: what the Drift page offers and opens on (read once, not per view);
    # a judging's part counts its calls shared with each judge of a lower id, so a new judge computes its own
    "drift_pairs": Result("the pairs of judges that share calls", _drift.drift_pair_parts, in_parts=True,
                          combine=_drift.pairs_of_parts, reads_earlier=True),
    "drift": Result("the drift between two judges per cell", _drift.drift, judges_of=_two_judges,
                    first_view=first_two_judges),
    "drift_items": Result("the calls that moved between two judges", _drift.drift_items, judges_of=_two_judges,
                          first_view=first_moved),
    "placeholders": Result("whether the pool's texts are placeholders", _pools.placeholder_texts, basis="pool"),
    # the pool's candidates read once for the three below (pool_digest), each made from it when read
    "pool_digest": Result("the pool's summary, first candidates and systems", pool_digest, basis="pool"),
    "systems": Result("the pool's systems", basis="pool", built_from="pool_digest",
                      build=digest_part("systems", ["candidate_id"])),
    "pool_summary": Result("the pool's summary", basis="pool", built_from="pool_digest",
                           build=digest_part("summary", SUMMARY_COLUMNS)),
    "pool_head": Result("the pool's first candidates", basis="pool", built_from="pool_digest",
                        build=digest_part("head", HEAD_COLUMNS)),
}
