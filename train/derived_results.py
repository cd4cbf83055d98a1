"""Every derived result the dashboard and the command line read: the audit's (audit.derived.RESULTS)
and the ones computed above the audit, by curation and by the scoring plan: the Curate & Train page's
preview and the formats' overlap (train.curation_view), and the Score page's count of calls.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from audit.derived import RESULTS, Result, price_args
from ingest.endpoints import label_price, prices
from ingest.scoring import count_calls

from .curation_view import curation_overlap, curation_view, first_choice, heldout_frame, student_overlap


def call_plan_frame(db, pool: str, formats: tuple, schedule: str = "listing", swap: str = "0") -> pl.DataFrame:
    """ingest.scoring.count_calls as a frame (format, n, chars): the calls a score run would plan and
    the characters they give the judge, which the Score page shows (and estimates the time of) as its
    form changes (swap: 'all' or a number, as typed)."""
    count = count_calls(db, pool, list(formats), schedule, swap if swap == "all" else int(swap or 0))
    return pl.DataFrame({"format": list(count["per_format"]), "n": list(count["per_format"].values()),
                         "chars": [count["chars"][f] for f in count["per_format"]]},
                        schema={"format": pl.String, "n": pl.Int64, "chars": pl.Int64})


def _curated_judge(read, pool: str, args: tuple) -> tuple:
    """The judge a curation preview curates by: the first choice's when the page passed no choice,
    else the one it names (none for a baseline, which reads the pool's candidates alone)."""
    judge = first_choice(read("scored_cells"))[1] if not args else args[1]
    return (judge,) if judge else ()


def _overlap_judge(read, pool: str, args: tuple) -> tuple:
    judge = first_choice(read("scored_cells"))[1] if not args or args[0] is None else args[0]
    return (judge,) if judge else ()


DERIVED_RESULTS: dict[str, Result] = {
    **RESULTS,
    # the leaderboard's first view at the prices the server's judgeaudit.toml sets
    "judges_board": replace(RESULTS["judges_board"], first_view=lambda read, pool: (price_args(prices(read.db)),)),
    "decisions": replace(RESULTS["decisions"],
                         first_view=lambda read, pool: (price_args(prices(read.db)), label_price(read.db))),
    # the held-out prompts of the default rule: the pool's prompt ids alone, so once per pool (before the
    # curation preview and overlap, which read it stored)
    "curation_heldout": Result("the held-out prompts of curation's default rule", heldout_frame, basis="pool"),
    "curation": Result("the curation preview (picks, the cut, lengths)", curation_view, judges_of=_curated_judge,
                       reads_stored=("curation_heldout", "style_counts")),
    "curation_overlap": Result("the overlap of the selected examples between formats", curation_overlap,
                               judges_of=_overlap_judge, reads_stored=("curation_heldout",)),
    "student_overlap": Result("a student's curation against its teacher's", student_overlap,
                              judges_of=lambda read, pool, args: tuple(args[:2]),
                              first_view=lambda read, pool: None),   # shown only once a student is chosen
    "call_plan": Result("the calls a score run would plan, and their characters", call_plan_frame, basis="pool",
                         first_view=lambda read, pool: (("binary", "likert5", "numeric100"), "listing", "0")),
}
