"""Benchmark: the bundled judge (SmolLM2-135M, local:smollm2) under both decoding modes on an
MT-Bench sample, through the real pipeline (import, score, audit): how often the two modes give the
same verdict, and what each does to the parse rate, tie probability and D2 (label scores, and the
expected scores both modes keep), with the wall time of each mode.

    .venv/bin/python tests/bench/bench_decoding.py [--prompts 8] [--max-chars 1200] [--formats binary,...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import duckdb  # noqa: E402

from audit import audit_cells  # noqa: E402
from ingest.store import import_pool  # noqa: E402
from ingest.scoring.judges.local import LocalJudge  # noqa: E402
from ingest.scoring import score, ScoreRequest  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "ingest" / "demo" / "mtbench-pool.jsonl"
FORMATS = "binary,likert5,numeric100"
AGREE = """
    SELECT f.name, count(*) AS n, count(g.value) AS greedy_parsed,
           count(*) FILTER (WHERE g.value = c.value) AS same
    FROM verdicts g
    JOIN verdicts c ON c.pool_id = g.pool_id AND c.judge_id = g.judge_id AND c.format_id = g.format_id
         AND c.prompt_idx = g.prompt_idx AND c.a_idx = g.a_idx AND coalesce(c.b_idx, -1) = coalesce(g.b_idx, -1)
         AND c.sample = g.sample AND c.decoding = 'constrained'
    JOIN formats f ON f.format_id = g.format_id
    WHERE g.decoding = 'greedy'
    GROUP BY f.name ORDER BY f.name
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=8, help="MT-Bench prompts (6 answers each)")
    ap.add_argument("--max-chars", type=int, default=1200, help="truncate long answers to keep prompts short")
    ap.add_argument("--formats", default=FORMATS, help="comma-separated (tournament: 15 pairs per prompt)")
    args = ap.parse_args()
    formats = args.formats.split(",")
    rows = [json.loads(line) for line in DEMO.open()]
    keep = list(dict.fromkeys(r["prompt_id"] for r in rows))[:args.prompts]
    rows = [{**r, "response": r["response"][:args.max_chars]} for r in rows if r["prompt_id"] in keep]

    t = time.perf_counter()
    model = LocalJudge()
    print(f"model load: {time.perf_counter() - t:.1f} s")

    def shared_load(self) -> None:      # both runs reuse the model loaded above
        self.torch, self.tokenizer, self.lm = model.torch, model.tokenizer, model.lm
    LocalJudge.load = shared_load
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        pool = Path(tmp) / "pool.jsonl"
        pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
        import_pool(db, pool, "mtbench")
        times = {}
        for mode in ("greedy", "constrained"):
            t = time.perf_counter()
            result = score(ScoreRequest(pool="mtbench", judge="local:smollm2", formats=formats, db=db,
                                        decoding=mode, progress=False))
            times[mode] = time.perf_counter() - t
            print(f"{mode}: {result['made']} calls in {times[mode]:.1f} s, {result['unparsed']} unparsed")
        cells = audit_cells(db, "mtbench")
        con = duckdb.connect(str(db), read_only=True)
        agree = con.execute(AGREE).fetchall()
        con.close()

    print(f"\n{len(rows)} MT-Bench answers to {len(keep)} prompts; formats {', '.join(formats)}")
    print(f"wall time: greedy {times['greedy']:.1f} s, constrained {times['constrained']:.1f} s "
          f"(ratio {times['greedy'] / times['constrained']:.2f}x)")
    print("\nagreement (same value in both modes):")
    for name, n, parsed, same in agree:
        print(f"  {name:11s} {same}/{parsed} where greedy parsed ({same / parsed:.0%})" if parsed else
              f"  {name:11s} greedy never parsed", f"; {same}/{n} of all calls ({same / n:.0%})")
    print("\ncell                         parse   tie_prob   D2     distinct  spearman")
    for c in cells.sort("format", "score", "decoding").iter_rows(named=True):
        fmt = lambda x, d=3: "  n/a " if x is None else f"{x:.{d}f}"  # noqa: E731
        print(f"  {c['format']:11s} {c['score']:8s} {c['decoding']:11s} {fmt(c['parse_rate'])}  "
              f"{fmt(c['tie_prob'])}      {fmt(c['d2'], 2):>5s}  {c['distinct']:5d}     {fmt(c['spearman'])}")


if __name__ == "__main__":
    main()
