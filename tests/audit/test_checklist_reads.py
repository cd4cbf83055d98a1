"""The whole-pool reads of the reporting checklist (report_judges.sql, cell_runs.sql) and of the judges
board (judge_usage.sql) group the calls by integer keys first and name the few grouped rows after. Before, they joined every call to the judges (and formats) and grouped by names; those queries
are kept in tests/audit/sql/*_before.sql, and each new one must give the same rows, in the same order,
on pools with several judges, a jury, an attached file, several decodings and samples, tokens and
latencies that tie or are missing, a cell run without verdicts, another pool, and a scoped handle."""

from __future__ import annotations

import polars as pl
import pytest

from ingest.scoring import ScoreRequest, attach_verdicts, export_batch, import_verdicts
from ingest.store import import_pool, save_jury
from ingest.store.database import Database

QUERIES = ("report_judges", "cell_runs", "judge_usage")
CANDIDATES = "xyz"
LIKERT = ("1", "2", "3", "4", "5", "five")               # "five" does not parse
COMPARE = ("A++", "A+", "TIE", "B+", "B++", "?")


def _pool(db, write_jsonl, name: str, n_prompts: int) -> None:
    rows = [{"prompt_id": f"p{p}", "prompt": f"prompt {p}", "candidate_id": c, "response": f"{c} to {p}",
             "reference": (p + i) % 2} for p in range(n_prompts) for i, c in enumerate(CANDIDATES)]
    import_pool(db, write_jsonl(f"{name}.jsonl", rows), name)


def _calls(judge: str, fmt: str, decoding: str, prompts: range, samples: int, seed: int) -> list[dict]:
    """One judge's calls in one format and decoding: every candidate (likert5) or ordered pair
    (tournament) of the prompts, `samples` times, with tokens and a latency that repeat (ties), each
    missing on some calls."""
    out = []
    keys = ([{"candidate_id": c} for c in CANDIDATES] if fmt == "likert5"
            else [{"a_id": a, "b_id": b} for a in CANDIDATES for b in CANDIDATES if a != b])
    for p in prompts:
        for k, key in enumerate(keys):
            for s in range(samples):
                i = seed + 7 * p + 3 * k + 5 * s
                raws = LIKERT if fmt == "likert5" else COMPARE
                row = {"judge": judge, "format": fmt, "decoding": decoding, "prompt_id": f"p{p}", "sample": s,
                       "raw": raws[i % len(raws)], **key}
                if i % 4:
                    row["tokens_in"], row["tokens_out"] = 40 + i % 3, 1 + i % 2
                if i % 5:
                    row["latency_ms"] = float(100 * (i % 4))
                out.append(row)
    return out


@pytest.fixture
def pools(db, write_jsonl, tmp_path):
    """Pool 'p': judges j1 and j2 imported (likert5 and tournament; greedy with 2 samples, and
    constrained (j1) or sampled (j2); j1's greedy likert5 in two imports, so two cell runs), the jury
    'panel' of j1 and j2 (on their greedy calls), j3's calls attached from a Parquet file (constrained
    likert5 with 2 samples, greedy tournament), and a batch export's cell run (no verdicts; its mode from
    its settings). Pool 'q': j1's calls alone."""
    _pool(db, write_jsonl, "p", 6)
    _pool(db, write_jsonl, "q", 3)
    n = 0
    for judge, seed in (("j1", 0), ("j2", 1)):
        for fmt in ("likert5", "tournament"):
            for decoding, samples in (("greedy", 2), ("constrained" if judge == "j1" else "sampled", 1)):
                halves = (range(0, 3), range(3, 6)) if (judge, fmt, decoding) == ("j1", "likert5", "greedy") \
                    else (range(6),)
                for prompts in halves:
                    n += 1
                    rows = _calls(judge, fmt, decoding, prompts, samples, seed)
                    import_verdicts(db, write_jsonl(f"v{n}.jsonl", rows), "p")
    import_verdicts(db, write_jsonl("q.jsonl", _calls("j1", "likert5", "greedy", range(3), 1, 2)), "q")
    save_jury(db, "p", "panel", ["j1", "j2"], "mean")
    shard = tmp_path / "j3.parquet"
    pl.DataFrame(_calls("j3", "likert5", "constrained", range(6), 2, 3)
                 + _calls("j3", "tournament", "greedy", range(6), 1, 4)).write_parquet(shard)
    attach_verdicts(db, [str(shard)], "p")
    export_batch(ScoreRequest(pool="p", judge="openai:judge-m@http://127.0.0.1:9/v1", formats=["likert5"], db=db,
                              progress=False, samples=2, temperature=0.5), tmp_path / "batch")
    return db


def _both(handle: Database, pool: str, name: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    with handle.reading(queries="audit") as read:
        got = read.frame(name, pool_id=read.pool_id(pool))
    with handle.reading(queries="tests.audit") as read:
        want = read.frame(f"{name}_before", pool_id=read.pool_id(pool))
    return got, want


@pytest.mark.parametrize("name", QUERIES)
def test_the_reads_grouped_by_ids_equal_the_reads_grouped_by_names(pools, name):
    for pool in ("p", "q"):
        got, want = _both(Database.of(pools), pool, name)
        assert got.schema == want.schema
        assert got.rows() == want.rows()
        assert got.height > 0


@pytest.mark.parametrize("name", QUERIES)
def test_the_same_rows_through_a_scoped_handle(pools, name):
    """A scoped handle's verdict_source holds its judgings' calls alone: the other judges are then
    without verdicts, the other cell runs' modes come from their settings."""
    for scope in ([("j1", "likert5")], [("j3", "tournament"), ("panel", "likert5"), ("j2", "likert5")]):
        got, want = _both(Database.of(pools).scoped(scope), "p", name)
        assert got.schema == want.schema
        assert got.rows() == want.rows()


def test_the_pools_hold_what_the_comparison_needs(pools):
    """The cases are there: every decoding, a jury paying through its members, an attached judge, tied
    and missing tokens, a cell with two cell runs and a cell run without verdicts."""
    with Database.of(pools).reading(queries="audit") as read:
        pid = read.pool_id("p")
        runs, usage = read.frame("cell_runs", pool_id=pid), read.frame("judge_usage", pool_id=pid)
        judges = read.frame("report_judges", pool_id=pid)
    assert set(runs["decoding"]) == {"greedy", "constrained", "sampled"}
    assert runs["n_runs"].max() == 2 and "batch-export" in set(runs["source"])
    assert judges["judge"].to_list() == ["j1", "j2", "j3", "panel"]      # the batch export's judge has no call
    assert set(usage.filter(pl.col("judge") == "panel")["payer"]) == {"j1", "j2"}
    assert (usage["n_with_tokens"] < usage["n_calls"]).all()


def test_a_cell_run_of_several_decodings_gets_one_of_them(db, write_jsonl):
    """A file whose rows name two decodings of one judge and format is one cell run: old and new
    give it one mode, one of the decodings its calls hold, and the same rows otherwise. Which one is
    any_value's choice in both: the old query's, over the calls, is the first stored call's on a pool this
    small (one thread) and any at scale; the new one's, over the distinct decodings, the hash table's."""
    _pool(db, write_jsonl, "p", 3)
    rows = _calls("j1", "likert5", "greedy", range(3), 1, 0) + _calls("j1", "likert5", "constrained", range(3), 1, 1)
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    import_verdicts(db, write_jsonl("w.jsonl", _calls("j2", "likert5", "greedy", range(3), 1, 2)), "p")
    got, want = _both(Database.of(db), "p", "cell_runs")
    assert got.height == want.height == 2
    assert got["decoding"][0] in ("greedy", "constrained") and want["decoding"][0] in ("greedy", "constrained")
    assert got.drop("decoding").rows() == want.drop("decoding").rows()
    assert got.row(1) == want.row(1)
