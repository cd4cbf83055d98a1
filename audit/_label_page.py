"""What the Label page reads (docs/command-line.md#what-human-labels-are-worth): a pool's label
queues with their progress, one queue's items as the annotator sees them (blind: the responses in
their stored order, no system names, no verdict), and the agreement between annotators, the
humans' own ceiling.

Agreement: over the items two or more annotators labelled (a pair's label turned to the pair's
lower cand_idx: A / B / tie; a candidate's accept / reject), raw agreement (the mean over items of
agreeing ordered pairs of annotators) and Krippendorff's alpha, nominal (audit/_consistency.py's);
with exactly two annotators on every such item, Cohen's kappa too.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._calibrate import kappa
from ._consistency import flip_and_agreement, krippendorff_alpha, pairable, unit_counts
from ._read import reading

AGREEMENT_COLUMNS = ["kind", "n_items", "n_annotators", "n_labels", "agreement", "alpha", "kappa"]


def label_queues(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per queue of the pool: queue_id, annotator, kind, strategy, judge, format, decoding,
    active, created_at, n_items, n_labelled, n_skipped, n_pending."""
    with reading(db) as read:
        return read.frame("label_queues", pool_id=read.pool_id(pool))


def label_cells(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per cell with parsed verdicts: judge, format, decoding, kind (pointwise | comparative)."""
    with reading(db) as read:
        return read.frame("label_cells", pool_id=read.pool_id(pool))


def queue_screen(db: str | os.PathLike | None, queue_id: int) -> pl.DataFrame:
    """One row per item of the queue in the order shown: position, state, a_idx, b_idx, cand_idx,
    prompt, first_idx / second_idx (shown as Response A / B; a candidate's is first_idx),
    first_response, second_response."""
    with reading(db) as read:
        return read.frame("queue_screen", queue_id=int(queue_id))


def agreement_row(kind: str, unit: np.ndarray, annotator: np.ndarray, code: np.ndarray) -> dict:
    """AGREEMENT_COLUMNS for the labels (unit, annotator, category code) of one kind (pure)."""
    row = {"kind": kind, "n_items": 0, "n_annotators": 0, "n_labels": 0, "agreement": None, "alpha": None,
           "kappa": None}
    u, v = pairable(unit, code.astype(float))
    if u.size == 0:
        return row
    counts = unit_counts(u, v.astype(np.int64), int(code.max()) + 1)
    _, agree = flip_and_agreement(counts)
    alpha = krippendorff_alpha(u, v, "nominal")
    shared = np.isin(unit, np.unique(unit)[np.bincount(np.unique(unit, return_inverse=True)[1]) >= 2])
    who = np.unique(annotator[shared])
    row.update(n_items=int(counts.shape[0]), n_annotators=int(who.size), n_labels=int(u.size), agreement=agree,
               alpha=None if np.isnan(alpha) else alpha)
    if who.size == 2 and np.all(counts.sum(axis=1) == 2):
        first = {}
        for x, a, c in zip(unit[shared], annotator[shared], code[shared]):
            first.setdefault(x, {})[a] = c
        k = int(code.max()) + 1
        table = np.zeros((k, k))
        for item in first.values():
            table[item[who[0]], item[who[1]]] += 1
        kap = kappa(table)
        row["kappa"] = None if np.isnan(kap) else kap
    return row


def annotator_agreement(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per kind of label ('pair', 'accept'): AGREEMENT_COLUMNS over the items several
    annotators labelled (n_labels: their labels; alpha: Krippendorff's nominal; kappa: Cohen's,
    only with exactly two annotators on every such item)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        pairs, accepts = read.frame("human_pair_votes", pool_id=pid), read.frame("human_accept_votes", pool_id=pid)
    rows = []
    unit = (pairs["lo_idx"] * 1_000_003 + pairs["hi_idx"]).to_numpy()
    code = np.select([pairs["y"].to_numpy() == 1.0, pairs["y"].to_numpy() == 0.0], [0, 1], 2)
    rows.append(agreement_row("pair", unit, pairs["annotator"].to_numpy(), code))
    rows.append(agreement_row("accept", accepts["cand_idx"].to_numpy(), accepts["annotator"].to_numpy(),
                              (accepts["y"].to_numpy() == 0.0).astype(np.int64)))
    return pl.DataFrame(rows, schema={"kind": pl.String, "n_items": pl.Int64, "n_annotators": pl.Int64,
                                      "n_labels": pl.Int64, "agreement": pl.Float64, "alpha": pl.Float64,
                                      "kappa": pl.Float64})
