"""The long commands the kill harness kills, each with a small real setup: the state its folder holds
before it runs, its command line, and the plain rows and files it leaves (tests/kill/harness.py).

The pool and verdict files, only read, are made once per session in a shared folder (`Inputs`);
the state before a command (its database, batch files) is made once in a base folder, and each
reference and kill point gets a copy of it. The sizes give the work a fair share of T beside the
interpreter's start (about 2 s): 160,000 candidates to import or curate, 270,000 verdicts, 66,000
batch requests in two files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np

from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl

from .harness import Command, Rows, cli

NOWHERE = "http://127.0.0.1:9/v1"      # nothing listens there: `score --batch-out` makes no call
# the bundled model, as a folder the session saved it to once (tests/conftest.py's bundled_model_folder):
# the same weights as `--base local:smollm2`, loaded in a second or two instead of converted from the GGUF
TRAIN = ["--max-steps", "2", "--batch-size", "2", "--micro-batch-size", "2", "--max-length", "256", "--seed", "0"]

# -- the plain rows: names for ids; no timestamps, latencies or paths of the folder ----------------------

NAMES = ("LEFT JOIN {s}.pools p USING (pool_id) LEFT JOIN {s}.judges j USING (judge_id) "
         "LEFT JOIN {s}.formats f USING (format_id)")
POOLS = Rows("SELECT name, source_sha256, layout FROM {s}.pools", ("name",))
PROMPTS = Rows("SELECT p.name AS pool, q.prompt_idx, q.prompt_id, q.prompt FROM {s}.prompts q "
               "LEFT JOIN {s}.pools p USING (pool_id)", ("pool", "prompt_idx"))
CANDIDATES = Rows("SELECT p.name AS pool, c.cand_idx, c.prompt_idx, c.candidate_id, c.position, c.response, "
                  "c.reference, c.model, c.split FROM {s}.candidates c LEFT JOIN {s}.pools p USING (pool_id)",
                  ("pool", "cand_idx"))
VERDICTS = Rows("SELECT p.name AS pool, j.name AS judge, f.name AS format, v.decoding, v.prompt_idx, v.a_idx, "
                "v.b_idx, v.swapped, v.sample, v.raw, v.answer, v.value, v.status, v.error, v.attempts, v.tokens_in, "
                "v.tokens_out, v.answer_probs, v.expected, v.endpoint FROM {s}.verdicts v " + NAMES,
                ("pool", "judge", "format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"))
JUDGES = Rows("SELECT name, provider, model, endpoint, settings, identity FROM {s}.judges", ("name",))
FORMATS = Rows("SELECT name, kind, pairing, spec_hash FROM {s}.formats", ("name",))
LABELS = Rows("SELECT p.name AS pool, l.prompt_idx, l.a_idx, l.b_idx, l.label, l.annotator, l.source, "
              "l.source_sha256, l.line FROM {s}.pair_labels l LEFT JOIN {s}.pools p USING (pool_id)",
              ("pool", "prompt_idx", "a_idx", "b_idx", "annotator"))


def cell_runs(source: str) -> Rows:
    """The cell runs of a foreground import: one per cell that got rows, closed in the rows' transaction."""
    return Rows("SELECT p.name AS pool, j.name AS judge, f.name AS format, c.source, c.template_hash, "
                "c.decoding_settings, c.schedule, c.seed, c.notes, c.status FROM {s}.cell_runs c " + NAMES
                + f" WHERE c.source = '{source}'")


SUBSETS = Rows("SELECT p.name AS pool, s.name, s.policy, s.rate, s.seed, s.judge, s.format, s.decoding, s.score, "
               "s.n_eligible, s.n_selected, s.n_pick_tied, s.n_cut_tied, s.n_heldout_prompts, s.cut_value, s.sha256 "
               "FROM {s}.subsets s LEFT JOIN {s}.pools p USING (pool_id)", ("pool", "name"))
MEMBERS = Rows("SELECT s.name AS subset, m.cand_idx, m.prompt_idx, m.value, m.pick_tied, m.cut_tied "
               "FROM {s}.subset_members m LEFT JOIN {s}.subsets s USING (subset_id)", ("subset", "cand_idx"))
BATCH_CALLS = Rows("SELECT b.custom_id, p.name AS pool, j.name AS judge, f.name AS format, b.decoding, b.prompt_idx, "
                   "b.a_idx, b.b_idx, b.swapped, b.sample FROM {s}.batch_calls b " + NAMES, ("custom_id",))
STUDIES = Rows("SELECT s.name, p.name AS pool, s.heldout FROM {s}.studies s LEFT JOIN {s}.pools p USING (pool_id)",
               ("name",))
GENERATIONS = Rows("SELECT s.name AS study, g.condition, g.seed, g.train_run, g.base_model, g.prompt_idx, g.answer, "
                   "g.answer_len, g.ref_idx, g.ref_len, g.markdown, g.tokens_out, g.truncated FROM {s}.generations g "
                   "LEFT JOIN {s}.studies s USING (study_id)", ("study", "condition", "seed", "prompt_idx"))
EVALUATIONS = Rows("SELECT s.name AS study, e.condition, e.seed, e.prompt_idx, j.name AS judge, e.raw_ab, e.value_ab, "
                   "e.status_ab, e.error_ab, e.raw_ba, e.value_ba, e.status_ba, e.error_ba, e.outcome "
                   "FROM {s}.evaluations e LEFT JOIN {s}.studies s USING (study_id) LEFT JOIN {s}.judges j "
                   "USING (judge_id)", ("study", "condition", "seed", "prompt_idx", "judge"))
FINISHED = Rows("SELECT kind FROM {s}.runs WHERE kind = 'train' AND status = 'finished'", compare=False)


# -- files --------------------------------------------------------------------------------------------

def sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def batch_files(folder: Path) -> dict:
    """The published request files, the manifest without the export's id, and no file left half made."""
    out = folder / "batch"
    manifest = json.loads((out / "manifest.json").read_text()) if (out / "manifest.json").is_file() else None
    if manifest:
        manifest.pop("export_id")
    return {"requests": {p.name: sha(p) for p in sorted(out.glob("requests-*.jsonl"))}, "manifest": manifest,
            "left over": sorted(p.name for p in out.glob("*") if p.suffix not in (".jsonl", ".json"))}


def subset_file(folder: Path) -> dict:
    return {"subset.jsonl": sha(folder / "subset.jsonl"),
            "left over": sorted(p.name for p in folder.glob("subset.jsonl.*"))}


def _logged(out: Path) -> list[dict]:
    path = out / "progress.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def adapter_files(folder: Path) -> dict:
    """The adapter, and its progress: each step logged once, a loss at each (the losses themselves
    differ in the fourth digit between two runs never killed: CPU threads sum in any order)."""
    out = folder / "adapter"
    metrics = json.loads((out / "metrics.json").read_text()) if (out / "metrics.json").is_file() else {}
    return {"adapter": sorted(p.name for p in out.glob("adapter_*")),
            "steps": [(s["step"], "loss" if s.get("loss") is not None else "eval_loss") for s in _logged(out)],
            "metrics": {k: metrics.get(k) for k in ("status", "steps", "max_steps")}}


def train_stage(folder: Path) -> str:
    """How far a killed fine-tune got: the steps it had logged, the adapter it had saved."""
    out = folder / "adapter"
    steps = {s["step"] for s in _logged(out)}
    return (f"{len(steps)} step(s) logged" if steps else "no step logged") + \
        (", adapter saved" if (out / "adapter_model.safetensors").is_file() else "")


# -- the shared inputs, made once --------------------------------------------------------------------------

def likert5_verdicts(pool: list[dict], judge: str = "alpha") -> list[dict]:
    """One likert5 verdict per candidate, its reference plus seeded noise on the 1-5 scale (ties
    and all), a tenth of them unparsed."""
    rng = np.random.default_rng(9)

    def raw(reference: float | None) -> str:
        return "n/a" if rng.random() < 0.1 else str(int(np.clip(round((reference or 2) + rng.normal()), 0, 4)) + 1)
    return [{"judge": judge, "format": "likert5", "prompt_id": c["prompt_id"], "candidate_id": c["candidate_id"],
             "raw": raw(c["reference"])} for c in pool]


class Inputs:
    """The files every folder only reads, each written on first use into `root`."""

    MAKERS = {
        "small-pool.jsonl": lambda: synthetic_pool(30, seed=5),
        "big-pool.jsonl": lambda: synthetic_pool(40000, seed=7),
        "v-pool.jsonl": lambda: synthetic_pool(6000, seed=8),
        "v-verdicts.jsonl": lambda: synthetic_verdicts(synthetic_pool(6000, seed=8), seed=8),
        "big-likert5.jsonl": lambda: likert5_verdicts(synthetic_pool(40000, seed=7)),
    }

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def __truediv__(self, name: str) -> Path:
        path = self.root / name
        if not path.exists():
            write_jsonl(path.with_suffix(".part"), self.MAKERS[name]()).replace(path)
        return path


def answer_batch(requests: Path, results: Path) -> None:
    """A result line for every request line: likert5 answers '4', comparative ones 'A+' (and every
    seventh line an error, which is a failed row)."""
    with open(results, "w", encoding="utf-8") as out:
        for n, line in enumerate(l for f in sorted(requests.glob("requests-*.jsonl")) for l in f.open()):
            req = json.loads(line)
            if n % 7 == 6:
                out.write(json.dumps({"id": f"b{n}", "custom_id": req["custom_id"], "response": None,
                                      "error": {"code": "server_error", "message": "overloaded"}}) + "\n")
                continue
            text = "4" if "1-5 scale" in req["body"]["messages"][-1]["content"] else "A+"
            body = {"id": f"c{n}", "object": "chat.completion", "model": req["body"]["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 30, "completion_tokens": 1}}
            out.write(json.dumps({"id": f"b{n}", "custom_id": req["custom_id"], "error": None,
                                  "response": {"status_code": 200, "request_id": f"r{n}", "body": body}}) + "\n")


# -- the commands ------------------------------------------------------------------------------------------

def commands(inputs: Inputs, adapter: Callable[[], Path], base: Callable[[], Path]) -> dict[str, Command]:
    """name -> Command; `adapter()` gives the folder of a trained adapter (evaluate's input), `base()` the
    bundled model's folder that train fine-tunes (and evaluate, through the adapter's config, loads)."""
    def nothing(folder: Path) -> None:
        pass

    def small_pool(folder: Path) -> None:
        cli(folder, "import-pool", inputs / "small-pool.jsonl", "--pool", "p")

    def v_pool(folder: Path) -> None:
        cli(folder, "import-pool", inputs / "v-pool.jsonl", "--pool", "v")

    def exported(folder: Path) -> None:
        v_pool(folder)
        cli(folder, *batch_out(folder))
        answer_batch(folder / "batch", folder / "results.jsonl")

    def judged_big(folder: Path) -> None:     # 160,000 candidates: curating them takes a while
        cli(folder, "import-pool", inputs / "big-pool.jsonl", "--pool", "big")
        cli(folder, "import-verdicts", inputs / "big-likert5.jsonl", "--pool", "big")

    def curated_small(folder: Path) -> None:
        small_pool(folder)
        cli(folder, "score", "--pool", "p", "--judge", "fake:f", "--formats", "likert5")
        cli(folder, "curate", "--pool", "p", "--judge", "f", "--format", "likert5", "--rate", "0.5",
            "--out", folder / "subset.jsonl")

    def batch_out(folder: Path) -> list[str]:     # two request files: more lines than a file may hold
        return ["score", "--pool", "v", "--judge", f"openai:judge-m@{NOWHERE}", "--formats", "likert5,tournament",
                "--batch-out", str(folder / "batch"), "--json"]

    score_argv = ["score", "--pool", "p", "--judge", "fake:f?latency_ms=20", "--formats", "binary,likert5,tournament",
                  "--concurrency", "2", "--json"]
    return {c.name: c for c in [
        Command("import-pool", nothing, lambda f: ["import-pool", str(inputs / "big-pool.jsonl"), "--pool", "big",
                                                   "--json"],
                {"pools": POOLS, "prompts": PROMPTS, "candidates": CANDIDATES}, ("candidates",),
                refused_when_done="already exists"),
        Command("import-verdicts", v_pool,
                lambda f: ["import-verdicts", str(inputs / "v-verdicts.jsonl"), "--pool", "v", "--json"],
                {"verdicts": VERDICTS, "judges": JUDGES, "formats": FORMATS, "cell runs": cell_runs("import")},
                ("verdicts",)),
        Command("score", small_pool, lambda f: score_argv,
                {"verdicts": VERDICTS, "judges": JUDGES, "formats": FORMATS}, ("verdicts",), records_run=True),
        Command("score --batch-out", v_pool, batch_out,
                {"batch calls": BATCH_CALLS, "judges": JUDGES, "formats": FORMATS}, ("batch calls",),
                files=batch_files),
        Command("import-batch", exported, lambda f: ["import-batch", str(f / "results.jsonl"), "--json"],
                {"verdicts": VERDICTS, "cell runs": cell_runs("batch-import")}, ("verdicts",)),
        Command("demo", nothing, lambda f: ["demo", "--json"],
                {"pools": POOLS, "prompts": PROMPTS, "candidates": CANDIDATES, "verdicts": VERDICTS, "labels": LABELS,
                 "judges": JUDGES, "formats": FORMATS, "cell runs": cell_runs("import")},
                ("pools", "verdicts", "labels")),
        Command("curate", judged_big,
                lambda f: ["curate", "--pool", "big", "--judge", "alpha", "--format", "likert5", "--rate", "0.5",
                           "--out", str(f / "subset.jsonl"), "--json"],
                {"subsets": SUBSETS, "members": MEMBERS}, ("members",), files=subset_file),
        Command("train", curated_small,
                lambda f: ["train", "--subset", str(f / "subset.jsonl"), "--out", str(f / "adapter"), "--base", str(base()),
                           *TRAIN, "--json"],
                {"finished runs": FINISHED}, ("finished runs",), files=adapter_files, records_run=True,
                stage=train_stage),
        Command("evaluate", curated_small,
                lambda f: ["evaluate", "--runs", str(adapter()), "--pool", "p", "--judge", "fake:e",
                           "--max-new-tokens", "8", "--batch-size", "4", "--json"],
                {"studies": STUDIES, "generations": GENERATIONS, "evaluations": EVALUATIONS, "judges": JUDGES},
                ("generations", "evaluations"), records_run=True),
    ]}


__all__ = ["Inputs", "commands"]
