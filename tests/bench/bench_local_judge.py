"""Benchmark: the local judge's label-constrained pointwise path (one forward pass per format over
a shared, cached prefix) against plain per-call `generate` (16 greedy tokens), on the same 30
candidates x 3 pointwise formats, in one run.

    .venv/bin/python tests/bench/bench_local_judge.py [--candidates 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ingest.scoring.formats import BUILTIN  # noqa: E402
from ingest.scoring.judges.local import LocalJudge  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "ingest" / "demo" / "mtbench-pool.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidates", type=int, default=30)
    ap.add_argument("--max-chars", type=int, default=1200, help="truncate long answers to keep prompts short")
    args = ap.parse_args()
    rows = [json.loads(line) for line in DEMO.open()][: args.candidates]
    items = [(r["prompt"], r["response"][: args.max_chars]) for r in rows]
    fmts = [BUILTIN[n] for n in ("binary", "likert5", "numeric100")]

    t = time.perf_counter()
    judge = LocalJudge()
    print(f"model load: {time.perf_counter() - t:.1f} s")
    judge.score_pointwise(*items[0], fmts)       # warm-up, not timed
    judge.generate([{"role": "user", "content": fmts[0].render(items[0][0], response=items[0][1])}])

    fast, agree, parsed_fast, parsed_gen = [], 0, 0, 0
    t0 = time.perf_counter()
    fast_labels = []
    for prompt, response in items:
        t = time.perf_counter()
        replies = judge.score_pointwise(prompt, response, fmts)
        fast.append(time.perf_counter() - t)
        fast_labels.append([r.text for r in replies])
    fast_total = time.perf_counter() - t0

    slow = []
    t0 = time.perf_counter()
    for (prompt, response), labels in zip(items, fast_labels):
        t = time.perf_counter()
        for fmt, label in zip(fmts, labels):
            reply = judge.generate([{"role": "user", "content": fmt.render(prompt, response=response)}])
            parsed = fmt.parse(reply.text)
            parsed_gen += parsed.status == "ok"
            parsed_fast += fmt.parse(label).status == "ok"
            agree += parsed.answer == label
        slow.append(time.perf_counter() - t)
    slow_total = time.perf_counter() - t0

    n = len(items) * len(fmts)
    print(f"{len(items)} candidates x {len(fmts)} formats = {n} verdicts")
    print(f"constrained, shared prefix: {n / fast_total:.2f} verdicts/s "
          f"(median {statistics.median(fast) * 1000:.0f} ms per candidate)")
    print(f"per-call generate:          {n / slow_total:.2f} verdicts/s "
          f"(median {statistics.median(slow) * 1000:.0f} ms per candidate)")
    print(f"speed-up: {slow_total / fast_total:.2f}x; parse rate constrained {parsed_fast / n:.0%}, "
          f"generate {parsed_gen / n:.0%}; same verdict where generate parsed: {agree}/{parsed_gen}")


if __name__ == "__main__":
    main()
