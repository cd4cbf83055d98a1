"""The bundled demo: real judge data (see README.md here for sources and licences), imported into
an empty database on first launch of the dashboard."""

from __future__ import annotations

import os
from pathlib import Path

from ..scoring import import_verdicts
from ..store import (Database, ensure_current, import_labels, import_pool, jury_names, labelled_pools, pool_judges,
                     pool_names, save_jury)

HERE = Path(__file__).parent
# (pool name, pool file, verdict file), in the order they are seeded
DEMO_POOLS = (
    ("mtbench-formats", "mtbench-formats-pool.jsonl", "mtbench-formats-verdicts.jsonl"),   # build.py --formats-demo
    ("mtbench", "mtbench-pool.jsonl", "mtbench-verdicts.jsonl"),
    ("llmbar", "llmbar-pool.jsonl", "llmbar-verdicts.jsonl"),
    ("arena-bench", "arena-bench-pool.jsonl", "arena-bench-verdicts.jsonl"),
    ("ko-arena-hard", "ko-arena-hard-pool.jsonl", "ko-arena-hard-verdicts.jsonl"),
)

# more judges of a demo pool, each (judge, verdict file), imported after the pool's verdict file and,
# into a demo database seeded before they were bundled, at the next launch: the bundled model's
# label distributions on the comparative formats, and its repeats (README.md here; build.py)
EXTRA_VERDICTS = {"mtbench-formats": (("smollm2-local", "mtbench-formats-local-verdicts.jsonl"),     # --formats-local
                                      ("smollm2-demo-t1", "mtbench-formats-sampled-verdicts.jsonl"),  # --sampled
                                      ("smollm2-demo-t0.7", "mtbench-formats-t07-verdicts.jsonl"))}   # --warm
# what the demo knows of how those judges decoded, recorded on their cell runs as a scoring run records
# its own (the report then states it): the sampled repeats are draws from the constrained distribution,
# which is sampling at temperature 1; the warm run asked the server at temperature 0.7 (README.md here)
DEMO_DECODING = {"smollm2-demo-t1": {"temperature": 1.0}, "smollm2-demo-t0.7": {"temperature": 0.7}}

# human labels shipped with a demo pool (the Calibration page offers them); SEEDED_LABELS are stored
# at seeding time, so the five-format demo opens Calibration with kappas: the MT-Bench expert votes on
# its pairs (build.py formats_demo_labels), and the MT-Bench demo opens Rankings with the humans' style
# coefficients beside its judges'
LABEL_FILES = {"mtbench-formats": "mtbench-formats-human-labels.jsonl", "mtbench": "mtbench-human-labels.jsonl",
               "llmbar": "llmbar-gold-labels.jsonl"}
SEEDED_LABELS = ("mtbench-formats", "mtbench")

# a jury of each of these demo pools, stored last (after every member's verdicts): (name, members, vote).
# mtbench: the four MT-Bench judges as one panel, against the humans' votes; mtbench-formats: the bundled
# model's three runs (the constrained reading, the sampled repeats' first sample, the local label
# distributions) as one panel, on the formats they share
DEMO_JURIES = {"mtbench": ("mtbench-jury", ("GPT-4", "ChatGPT", "PaLM2", "LLaMA2"), "mean"),
               "mtbench-formats": ("smollm2-panel", ("smollm2-demo", "smollm2-demo-t1", "smollm2-local"), "mean")}


def format_specs() -> list[Path]:
    return sorted(HERE.glob("format-*.toml"))


def seed_demo(db: str | os.PathLike | None, pools: tuple[str, ...] | None = None) -> list[str]:
    """Import the demo pools missing from a database that holds no other pool.

    Returns the names seeded (none when the user already has pools of their own). Each pool and
    its verdicts land in their own transactions, so an interrupted seeding resumes next time.
    """
    wanted = [p for p in DEMO_POOLS if pools is None or p[0] in pools]
    path = Database.of(db).path
    if path.is_file():  # the usual case, every launch: look without taking the write lock
        ensure_current(path)
    present = set(pool_names(path))
    if present - {p[0] for p in DEMO_POOLS}:
        return []
    unlabelled, unjudged = _unlabelled(path, present), _unjudged(path, present)
    unscored = present - {pool for pool, _ in pool_judges(path)} if present else set()   # killed before its verdicts
    names = {p[0] for p in wanted}
    unjuried = {pool for pool, (jury, _, _) in DEMO_JURIES.items() if pool in present} - \
        ({pool for pool, _ in jury_names(path)} if present else set())          # killed before its jury
    stale = unlabelled | unscored | {pool for pool, _ in unjudged} | unjuried
    if not (names - present or names & stale):
        return []
    seeded = []
    for name, pool_file, verdict_file in wanted:
        if name not in present:
            import_pool(db, HERE / pool_file, name)
            seeded.append(name)
        if name not in present or name in unscored:   # a seeding killed between the two resumes here
            import_verdicts(db, HERE / verdict_file, name, format_specs=format_specs())
        for judge, extra in EXTRA_VERDICTS.get(name, ()):
            if name not in present or (name, judge) in unjudged:
                import_verdicts(db, HERE / extra, name, format_specs=format_specs(),
                                decoding_settings=DEMO_DECODING.get(judge))
        if name in SEEDED_LABELS and (name not in present or name in unlabelled):   # an interrupted seeding too
            import_labels(db, HERE / LABEL_FILES[name], name)
        if name in DEMO_JURIES and (name not in present or name in unjuried):
            jury, members, vote = DEMO_JURIES[name]
            if {(name, m) for m in members} <= pool_judges(path):   # else at the launch that brings them
                save_jury(db, name, jury, list(members), vote)
    return seeded


def _unlabelled(path: Path, present: set[str]) -> set[str]:
    """The demo pools present that should hold their seeded labels and hold none."""
    return {name for name in SEEDED_LABELS if name in present} - labelled_pools(path)


def _unjudged(path: Path, present: set[str]) -> set:
    """(pool, judge) of each EXTRA_VERDICTS judge missing from a demo pool present."""
    judged = pool_judges(path) if EXTRA_VERDICTS.keys() & present else set()
    return {(pool, judge) for pool, extras in EXTRA_VERDICTS.items() if pool in present for judge, _ in extras
            if (pool, judge) not in judged}
