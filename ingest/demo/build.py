"""Rebuild the bundled demo files from ../shared/data (a developer tool; never run at run time).

    python -m ingest.demo.build [SHARED_DATA_DIR]

Writes, next to this file: one pool file and one verdict file per demo pool, and the TOML
format specs the verdicts use. Sources, licences and what was changed are in README.md here.
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
                     "reference": round(w[0] / w[1], 6) if w else None})
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


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "data"
    for build in (build_llmbar, build_mtbench, build_arena_bench, build_ko_arena):
        build(root)
        print("built", build.__name__)
