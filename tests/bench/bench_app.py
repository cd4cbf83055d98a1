"""Benchmark: the Formats page (AppTest) on a database of 1M candidates x 5 formats, cold cache
(first render after start) and warm (the same page again), against rendering the same page on the
small bundled demo pool in the same run.

    .venv/bin/python tests/bench/bench_app.py [--prompts 250000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build(db: Path, n_prompts: int) -> None:
    from ingest import _db
    from ingest.formats import BUILTIN
    from ingest.store import ensure_format, ensure_judge, start_run
    n = n_prompts * 4
    with _db.writer(db) as con, _db.transaction(con):
        con.execute("INSERT INTO pools (pool_id, name, layout) VALUES (1, 'big', 'rows')")
        con.execute("INSERT INTO prompts SELECT 1, i, 'p' || i, 'Prompt ' || i FROM range($n) t(i)", {"n": n_prompts})
        con.execute("INSERT INTO candidates SELECT 1, i, i // 4, 'c' || (i % 4), i % 4, 'a response', "
                    "floor(random() * 10), NULL, 'pool' FROM range($n) t(i)", {"n": n})
        jid = ensure_judge(con, "judge", "fake")
        for name in ("binary", "likert5", "numeric100", "anchored", "tournament"):
            fid = ensure_format(con, BUILTIN[name])
            rid = start_run(con, 1, jid, BUILTIN[name], fid, "score")
            q = {"binary": "(r + random() * 4 > 6)::INT", "likert5": "least(5, 1 + floor((r + random() * 4) / 3))",
                 "numeric100": "least(100, 5 * floor((r + random() * 4) * 1.5))"}
            if name in q:
                con.execute(f"INSERT INTO verdicts (run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, "
                            f"value, label, status) SELECT $rid, 1, $jid, $fid, prompt_idx, cand_idx, v, v::VARCHAR, 'ok' "
                            f"FROM (SELECT prompt_idx, cand_idx, {q[name]} AS v FROM "
                            f"(SELECT prompt_idx, cand_idx, reference AS r FROM candidates))",
                            {"rid": rid, "jid": jid, "fid": fid})
            elif name == "anchored":
                con.execute("INSERT INTO verdicts (run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, "
                            "value, status) SELECT $rid, 1, $jid, $fid, prompt_idx, cand_idx, prompt_idx * 4 + 2, "
                            "least(2, greatest(-2, round((reference - 4.5) / 2 + random() - 0.5))), 'ok' "
                            "FROM candidates", {"rid": rid, "jid": jid, "fid": fid})
            else:
                con.execute("INSERT INTO verdicts (run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, "
                            "value, status) SELECT $rid, 1, $jid, $fid, a.prompt_idx, a.cand_idx, b.cand_idx, "
                            "least(2, greatest(-2, round((a.reference - b.reference) / 3 + random()))), 'ok' "
                            "FROM candidates a JOIN candidates b ON a.prompt_idx = b.prompt_idx "
                            "AND a.position < b.position", {"rid": rid, "jid": jid, "fid": fid})


def render(db: Path, pool: str, repeats: int) -> tuple[float, list[float]]:
    from streamlit.testing.v1 import AppTest
    os.environ["JUDGEAUDIT_DB"] = str(db)
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=600)
    t = time.perf_counter()
    at.run()
    if at.session_state["pool"] != pool:
        at.sidebar.selectbox[0].select(pool).run()
        t = time.perf_counter()          # the cold render of the pool itself
        at.switch_page("views/formats.py").run()
    cold = time.perf_counter() - t
    assert not at.exception, at.exception
    warm = []
    for _ in range(repeats):
        t = time.perf_counter()
        at.switch_page("views/formats.py").run()
        warm.append(time.perf_counter() - t)
    return cold, warm


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=250_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="judgeaudit-app-"))
    big = work / "big.duckdb"
    t = time.perf_counter()
    build(big, args.prompts)
    print(f"built {args.prompts * 4:,} candidates x 5 formats in {time.perf_counter() - t:.1f} s")
    from ingest.demo import seed_demo
    small = work / "demo.duckdb"
    seed_demo(small, pools=("mtbench",))
    cold_s, warm_s = render(small, "mtbench", args.repeats)
    cold_b, warm_b = render(big, "big", args.repeats)
    print(f"Formats page, demo pool (480 candidates): cold {cold_s:.2f} s, warm median {statistics.median(warm_s):.2f} s")
    print(f"Formats page, 1M candidates x 5 formats:  cold {cold_b:.2f} s, warm median {statistics.median(warm_b):.2f} s "
          f"({', '.join(f'{x:.2f}' for x in warm_b)})")
    print(f"ratio big / demo: cold {cold_b / cold_s:.1f}x, warm {statistics.median(warm_b) / statistics.median(warm_s):.1f}x")


if __name__ == "__main__":
    main()
