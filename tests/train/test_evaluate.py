"""Downstream evaluation end to end: a tiny Llama built from a config (no download), LoRA adapters
made with peft, the simulated judge, and the outcomes stored in a real DuckDB file."""

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ingest import UserError
from ingest.store import import_pool
from tests.conftest import query_rows
from train._model import generate
from train.evaluate import EvalRequest, evaluate, export_outcomes, has_markdown, outcome
from train.heldout import heldout_prompt_ids

CHAT = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def test_outcome_of_both_orders():
    # the student is Response A first (margin > 0 favours it), then Response B (margin < 0 favours it)
    assert outcome(2, -1) == 1.0          # wins both
    assert outcome(-1, 2) == 0.0          # loses both
    assert outcome(1, 1) == 0.5           # slot A wins both times: no preference
    assert outcome(0, -2) == 0.5          # a tie, then a win
    assert outcome(None, -2) is None      # a verdict that did not parse


@pytest.mark.parametrize("value_ab, value_ba, expected", [
    (1, -1, 1.0), (2, -2, 1.0), (1, -2, 1.0),          # wins both orders, by the smallest margins too
    (-1, 1, 0.0), (-2, 2, 0.0), (-2, 1, 0.0),          # loses both
    (1, 0, 0.5), (0, 1, 0.5), (-1, 0, 0.5), (0, -1, 0.5), (0, 0, 0.5),   # a tie in either order
    (2, 1, 0.5), (-1, -2, 0.5),                        # slot A (or B) wins both times
])
def test_outcome_at_the_margins(value_ab, value_ba, expected):
    assert outcome(value_ab, value_ba) == expected


def test_markdown_detection():
    assert has_markdown("# Title\nText") and has_markdown("Steps:\n1. one\n2. two") and has_markdown("a **bold** b")
    assert has_markdown("- item") and has_markdown("```python\nx\n```") and has_markdown("| a | b |")
    assert not has_markdown("Plain prose, with a number 3.5 and a dash - inside.")


def test_heldout_rule():
    frame = pl.DataFrame({"prompt_id": [f"p{i}" for i in range(25)], "marked_heldout": [False] * 25})
    ids, rule = heldout_prompt_ids(frame, share=0.1, seed=0)
    # round(0.1 x 25) = round(2.5) = 3, halves up; the choice does not depend on row order
    assert len(ids) == 3 and rule == {"rule": "share", "share": 0.1, "seed": 0, "n": 3}
    assert heldout_prompt_ids(frame.reverse(), 0.1, 0)[0] == ids
    assert heldout_prompt_ids(frame, 0.1, 1)[0] != ids
    marked = frame.with_columns((pl.col("prompt_id") == "p7").alias("marked_heldout"))
    assert heldout_prompt_ids(marked)[0] == ["p7"]


def test_rule_keys_and_texts():
    from train._heldout_check import _rule_text, rule_key
    # what decides the held-out prompts; n is left out, a missing seed is train.heldout's 0
    assert rule_key({"rule": "split", "n": 3}) == ("marked",) == rule_key({"rule": "marked"})
    assert rule_key({"rule": "share", "share": 0.2, "seed": 4, "n": 2}) == ("share", 0.2, 4)
    assert rule_key({"rule": "share", "share": 0.1}) == ("share", 0.1, 0)
    assert _rule_text({"rule": "marked"}) == "'marked prompts'"
    assert _rule_text({"rule": "share", "share": 0.25, "seed": 2}) == "'share 0.25, seed 2'"


def test_check_heldout_by_hand(tmp_path):
    from train.evaluate import Condition, check_heldout
    base = Condition("base", 0, "b")                                   # the base model: no rule to check
    share2 = Condition("c", 1, "b", tmp_path, "run2", {"rule": "share", "share": 0.2, "seed": 0, "n": 5})
    bare = Condition("d", 1, "b", tmp_path, "run9")                   # config.json without a rule
    marked = {"rule": "split", "n": 3}
    default = {"rule": "share", "share": 0.1, "seed": 0, "n": 3}
    note = ("run run9: config.json records no held-out rule; assumed curation's default "
            "(marked prompts, else share 0.1 with seed 0)")
    # a run without a rule is taken to follow curation's default: the marked prompts when the pool
    # marks some, else share 0.1 with seed 0
    assert check_heldout([base, bare], marked) == [note]
    assert check_heldout([base, bare], default) == [note]
    with pytest.raises(UserError) as err:
        check_heldout([base, bare], {"rule": "share", "share": 0.2, "seed": 0, "n": 5})
    assert str(err.value) == ("--runs run9: trained with held-out rule 'share 0.1, seed 0' but this evaluation uses "
                              "'share 0.2, seed 0'; it could score prompts the run was trained on "
                              "(use the run's rule: --heldout-share / --heldout-seed)")
    # the base condition first does not end the check of the runs after it
    assert check_heldout([base, share2], {"rule": "share", "share": 0.2, "seed": 0, "n": 5}) == []
    with pytest.raises(UserError) as err:
        check_heldout([base, share2], marked)
    assert str(err.value) == ("--runs run2: trained with held-out rule 'share 0.2, seed 0' but this evaluation uses "
                              "'marked prompts'; it could score prompts the run was trained on "
                              "(use the run's rule: --heldout-share / --heldout-seed)")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny Llama with a byte-level BPE tokenizer and a chat template, saved as a model folder,
    and two LoRA adapters (seeds 0 and 1 of one condition) in run folders."""
    import torch
    from peft import LoraConfig, get_peft_model
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    root = tmp_path_factory.mktemp("tiny")
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["Answer the question about prompts and answers, briefly. # - 1."] * 20,
                            trainers.BpeTrainer(vocab_size=320, special_tokens=["<unk>", "<|im_start|>", "<|im_end|>"],
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="<unk>", bos_token="<|im_start|>",
                                  eos_token="<|im_end|>", pad_token="<|im_end|>")
    tok.chat_template = CHAT
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    base = root / "base"
    LlamaForCausalLM(config).save_pretrained(base)
    tok.save_pretrained(base)
    runs = []
    for seed in (0, 1):
        torch.manual_seed(seed + 1)
        lm = get_peft_model(LlamaForCausalLM.from_pretrained(base),
                            LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
        folder = root / f"run{seed}"
        lm.save_pretrained(folder)
        (folder / "config.json").write_text(json.dumps({
            "base": str(base), "subset": {"policy": "judge", "judge": "sim", "format": "likert5", "rate": 0.5},
            "hyper_parameters": {"seed": seed}}))
        runs.append(folder)
    return {"base": base, "runs": runs, "tokenizer": tok}


def test_batched_left_padded_generation_equals_one_at_a_time(tiny):
    from train._model import load_base
    model, tok = load_base(str(tiny["base"]), device="cpu")
    prompts = ["Answer briefly.", "A much longer question about prompts and answers, answer it", "1."]
    one = generate(model, tok, prompts, max_new_tokens=6, batch_size=1)
    batched = generate(model, tok, prompts, max_new_tokens=6, batch_size=3)
    assert [a["answer"] for a in one] == [a["answer"] for a in batched]
    assert all(a["tokens_out"] <= 6 for a in batched)


def pool_rows(n_prompts=8, heldout=(0, 1, 2)):
    rows = []
    for p in range(n_prompts):
        for c in range(3):
            rows.append({"prompt_id": f"p{p}", "prompt": f"Question {p}: answer briefly.", "candidate_id": f"c{c}",
                         "response": f"Answer {c} to question {p}" + (" - **bold**" if c == 2 else ""),
                         "reference": float(c), "split": "heldout" if p in heldout else "pool"})
    return rows


def test_evaluate_end_to_end(tiny, db, write_jsonl, tmp_path):
    import_pool(db, write_jsonl("pool.jsonl", pool_rows()), "demo")
    req = EvalRequest(runs=[str(r) for r in tiny["runs"]], pool="demo", judges=["fake:e1", "fake:e2?noise=0.4"],
                      db=db, max_new_tokens=6, batch_size=2, concurrency=2)
    result = evaluate(req)
    # 3 held-out prompts x (condition sim/likert5@0.5 with seeds 0 and 1, and the base model)
    assert result["status"] == "finished" and result["n_prompts"] == 3
    assert result["generated"] == 9 and result["generations_stored"] == 9
    assert {(c["condition"], c["seed"]) for c in result["conditions"]} == {
        ("sim/likert5@0.5", 0), ("sim/likert5@0.5", 1), ("base", 0)}
    # one outcome per (condition, seed, prompt, judge): 9 answers x 2 judges, both orders parsed
    assert result["judged"] == 18 and result["unparsed"] == 0
    rows = query_rows(db, "SELECT j.name, count(*), count(outcome), min(outcome), max(outcome) FROM evaluations e "
                          "JOIN judges j USING (judge_id) GROUP BY j.name ORDER BY j.name")
    assert [r[:3] for r in rows] == [("e1", 9, 9), ("e2", 9, 9)]
    assert all(0 <= r[3] <= r[4] <= 1 for r in rows)
    # the reference is the top-reference candidate c2, whose markdown and length are recorded
    assert query_rows(db, "SELECT DISTINCT ref_len FROM generations") == [(len("Answer 2 to question 0 - **bold**"),)]
    assert query_rows(db, "SELECT count(*) FROM generations WHERE prompt_idx > 2") == [(0,)]

    # re-running resumes: nothing generated or judged twice
    again = evaluate(req)
    assert (again["generated"], again["judged"]) == (0, 0)
    assert query_rows(db, "SELECT count(*) FROM evaluations") == [(18,)]

    # a failed call is asked again; a parsed one is kept
    import duckdb
    con = duckdb.connect(str(db))
    con.execute("UPDATE evaluations SET status_ab = 'failed', outcome = NULL WHERE prompt_idx = 0 AND condition = 'base'")
    con.close()
    assert evaluate(req)["judged"] == 2
    assert query_rows(db, "SELECT count(*), count(outcome) FROM evaluations") == [(18, 18)]

    # the command line: a background run (runs table) that resumes and exports
    out = tmp_path / "outcomes.jsonl"
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    proc = subprocess.run([exe, "evaluate", "--runs", ",".join(map(str, tiny["runs"])), "--pool", "demo",
                           "--judge", "fake:e1", "--judge", "fake:e2?noise=0.4", "--max-new-tokens", "6",
                           "--export", str(out), "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["exported"] == 18 and json.loads(proc.stdout)["generated"] == 0
    runs = json.loads(subprocess.run([exe, "runs", "--json"], capture_output=True, text=True, timeout=60).stdout)["runs"]
    assert [(r["kind"], r["status"]) for r in runs] == [("evaluate", "finished")]

    # outcomes export in the form `contrasts` reads, and contrasts run on the study
    assert export_outcomes(db, "demo", out) == 18
    first = json.loads(out.read_text().splitlines()[0])
    assert set(first) == {"condition", "seed", "prompt_id", "judge", "outcome", "answer_len", "ref_len", "markdown"}
    proc = subprocess.run([exe, "contrasts", "--study", "demo", "--boot", "200", "--json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(r["judge"], r["a"], r["b"]) for r in doc["contrasts"]] == [("e1", "sim/likert5@0.5", "base"),
                                                                        ("e2", "sim/likert5@0.5", "base")]
    from train.contrasts import analyse, read_outcomes
    assert analyse(read_outcomes(out), boot=200)["contrasts"] == doc["contrasts"]


def test_evaluate_refuses_bad_runs(tiny, db, write_jsonl, tmp_path):
    import_pool(db, write_jsonl("pool.jsonl", pool_rows()), "demo")
    with pytest.raises(UserError, match="neither a run id nor a run folder"):
        evaluate(EvalRequest(runs=[str(tmp_path / "nope")], pool="demo", judges=["fake:e"], db=db))
    with pytest.raises(UserError, match="lacks config.json or adapter_config.json"):
        evaluate(EvalRequest(runs=[str(tmp_path)], pool="demo", judges=["fake:e"], db=db))
    with pytest.raises(UserError, match="both condition 'sim/likert5@0.5' with seed 0"):
        evaluate(EvalRequest(runs=[str(tiny["runs"][0])] * 2, pool="demo", judges=["fake:e"], db=db))
    with pytest.raises(UserError, match="no pool named"):
        evaluate(EvalRequest(runs=[str(tiny["runs"][0])], pool="other", judges=["fake:e"], db=db))


def test_evaluate_page(db, write_jsonl, monkeypatch):
    """A study stored through ingest.store (base and two conditions with 1-2 seeds, two
    judges): the page shows the contrasts, the forest plot, the drill-down and the downloads."""
    import numpy as np
    from streamlit.testing.v1 import AppTest

    from ingest.store import ensure_study, insert_evaluations, insert_generations
    from ingest.scoring import ensure_spec_judge as eval_judge_id
    from ingest.scoring.judges import parse_judge
    from ingest.scoring.formats import BUILTIN
    from tests.conftest import REPO
    import_pool(db, write_jsonl("pool.jsonl", pool_rows(n_prompts=8, heldout=range(6))), "demo")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/evaluate/page.py").run()
    assert not at.exception and any("No evaluation study" in i.value for i in at.info)
    sid = ensure_study(db, "demo", "demo", {"rule": "split"})
    rng = np.random.default_rng(0)
    conds = [("base", 0), ("sim/likert5@0.5", 0), ("sim/likert5@0.5", 1), ("random@0.5", 0)]
    insert_generations(db, sid, [
        {"condition": c, "seed": s, "train_run": None, "base_model": "tiny", "prompt_idx": p,
         "answer": f"answer of {c} {s} to {p}", "answer_len": 20 + p, "ref_idx": 3 * p + 2, "ref_len": 30,
         "markdown": bool(p % 2), "tokens_out": 5, "truncated": False} for c, s in conds for p in range(6)])
    for name in ("e1", "e2"):
        jid = eval_judge_id(db, parse_judge(f"fake:{name}", {"tournament": BUILTIN["tournament"]}), {})
        insert_evaluations(db, sid, [
            {"condition": c, "seed": s, "prompt_idx": p, "judge_id": jid, "raw_ab": "A+", "value_ab": 1.0,
             "status_ab": "ok", "raw_ba": "B+", "value_ba": -1.0, "status_ba": "ok",
             "outcome": float(rng.choice([0, 0.5, 1]))} for c, s in conds for p in range(6)])
    at.switch_page("views/evaluate/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe) >= 1 and at.dataframe[0].value.shape[0] == 2 * 3    # 3 contrasts per judge
    assert any("Prompt by prompt" in s.value for s in at.subheader)
    assert len(at.expander) >= 3


def test_condition_names():
    from train.evaluate import condition_name
    subset = {"policy": "judge", "judge": "gpt", "format": "likert5", "rate": 0.25}
    assert condition_name({"subset": subset}) == "gpt/likert5@0.25"
    assert condition_name({"subset": {**subset, "score": "expected", "decoding": "constrained"}}) == \
        "gpt/likert5+expected~constrained@0.25"
    assert condition_name({"subset": {"policy": "random", "rate": 0.5}}) == "random@0.5"
    assert condition_name({"subset": {"policy": "full", "rate": 1.0}}) == "full"
    assert condition_name({"condition": "mine", "subset": subset}) == "mine"


def test_condition_names_of_every_kind_of_record():
    from train.evaluate import condition_name
    cell = {"policy": "judge", "judge": "gpt", "format": "likert5", "rate": 0.25}
    # the paper's defaults (greedy, label scores) add nothing to the name
    assert condition_name({"subset": {**cell, "decoding": "greedy", "score": "label"}}) == "gpt/likert5@0.25"
    assert condition_name({"subset": {**cell, "decoding": "constrained"}}) == "gpt/likert5~constrained@0.25"
    assert condition_name({"subset": {**cell, "rate": None}}) == "gpt/likert5"
    # an older record without a policy but with a judge and a format is a judge x format cell
    assert condition_name({"subset": {"judge": "gpt", "format": "binary", "rate": 0.5}}) == "gpt/binary@0.5"
    # a judge policy that lacks the judge, or a baseline that carries one, is named by its policy
    assert condition_name({"subset": {"policy": "judge", "format": "binary", "rate": 0.5}}) == "judge@0.5"
    assert condition_name({"subset": {"policy": "random", "judge": "gpt", "format": "binary", "rate": 0.5}}) == \
        "random@0.5"
    assert condition_name({"subset": {"policy": "length"}}) == "length"
    # no policy: the subset file's name, else 'adapter'
    assert condition_name({"subset": {"path": "/runs/x/my_subset.jsonl"}}) == "my_subset"
    assert condition_name({"subset": {"path": "/runs/x/my_subset.jsonl", "judge": "gpt"}}) == "my_subset"
    assert condition_name({}) == "adapter" and condition_name({"subset": None, "condition": ""}) == "adapter"


def test_evaluate_page_launches_a_background_run(tiny, db, write_jsonl, monkeypatch):
    """Press Evaluate on the page: a background run answers, judges and stores the outcomes."""
    import time

    from streamlit.testing.v1 import AppTest

    from ingest.runs import list_runs, running
    from tests.conftest import REPO
    import_pool(db, write_jsonl("pool.jsonl", pool_rows()), "demo")
    with running(db, "train", pool="demo", config={"out": str(tiny["runs"][0])}) as run:
        train_id = run.id                                  # a finished training run with its adapter
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/evaluate/page.py").run()
    at.multiselect[0].set_value([train_id])
    at.number_input[0].set_value(6)                        # max new tokens
    next(b for b in at.button if b.label == "Evaluate").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Started evaluation run" in s.value for s in at.success)
    deadline = time.time() + 240
    while time.time() < deadline:
        runs = [r for r in list_runs(db, kind="evaluate")]
        if runs and runs[-1]["status"] not in ("queued", "running"):
            break
        time.sleep(5)          # each look takes the database lock the run writes through
    assert runs[-1]["status"] == "finished", runs[-1]
    # 3 held-out prompts x (the adapter and the base model) x one judge (fake:eval)
    assert query_rows(db, "SELECT count(*), count(outcome) FROM evaluations") == [(6, 6)]
    at.run()
    assert not at.exception and at.dataframe[0].value.shape[0] == 1     # sim/likert5@0.5 - base


def test_failed_judge_calls_are_rows_and_are_asked_again(tiny, db, write_jsonl):
    from tests.conftest import free_port
    import_pool(db, write_jsonl("pool.jsonl", pool_rows()), "demo")
    dead = f"openai:m@http://127.0.0.1:{free_port()}/v1"         # nothing listens there
    req = EvalRequest(runs=[str(tiny["runs"][0])], pool="demo", judges=[dead], db=db, max_new_tokens=4,
                      max_retries=0, timeout=5)
    result = evaluate(req)
    assert (result["generated"], result["judged"], result["unparsed"]) == (6, 6, 6)
    rows = query_rows(db, "SELECT status_ab, status_ba, outcome, error_ab IS NOT NULL FROM evaluations")
    assert rows == [("failed", "failed", None, True)] * 6
    again = evaluate(req)                                        # failed calls are made again
    assert (again["generated"], again["judged"]) == (0, 6)
    assert query_rows(db, "SELECT count(*) FROM evaluations") == [(6,)]


def _run_folder(tmp_path, name, heldout=None):
    folder = tmp_path / name
    folder.mkdir()
    subset = {"policy": "full", **({"heldout": heldout} if heldout else {})}
    (folder / "config.json").write_text(json.dumps({"base": "local:smollm2", "seed": 1, "subset": subset}))
    (folder / "adapter_config.json").write_text("{}")
    return folder


def test_evaluate_refuses_a_run_trained_with_another_heldout_rule(db, write_jsonl, tmp_path):
    # the pool marks no prompt, so the evaluation's rule is share 0.1 with seed 0 (the defaults)
    import_pool(db, write_jsonl("pool.jsonl", pool_rows(heldout=())), "demo")
    recorded = _run_folder(tmp_path, "recorded", {"rule": "share", "share": 0.2, "seed": 0, "n": 2})
    req = EvalRequest(runs=[str(recorded)], pool="demo", judges=["fake:e1"], db=db)
    with pytest.raises(UserError, match=r"recorded.*share 0.2, seed 0.*share 0.1, seed 0"):
        evaluate(req)
    # a folder without a recorded rule was curated with train.heldout's defaults (0.1, seed 0)
    bare = _run_folder(tmp_path, "bare")
    req = EvalRequest(runs=[str(bare)], pool="demo", judges=["fake:e1"], db=db, heldout_seed=3)
    with pytest.raises(UserError, match=r"bare.*share 0.1, seed 0.*share 0.1, seed 3"):
        evaluate(req)
    # a pool that marks prompts: the run recorded a share rule, the evaluation takes the marked ones
    import_pool(db, write_jsonl("marked.jsonl", pool_rows()), "marked")
    req = EvalRequest(runs=[str(recorded)], pool="marked", judges=["fake:e1"], db=db)
    with pytest.raises(UserError, match=r"recorded.*share 0.2, seed 0.*'marked prompts'"):
        evaluate(req)


def test_a_study_refuses_another_heldout_rule(db, write_jsonl):
    from ingest.store import ensure_study
    import_pool(db, write_jsonl("pool.jsonl", pool_rows(heldout=())), "demo")
    sid = ensure_study(db, "s", "demo", {"rule": "share", "share": 0.1, "seed": 0, "n": 1})
    assert ensure_study(db, "s", "demo", {"rule": "share", "share": 0.1, "seed": 0, "n": 1}) == sid
    with pytest.raises(UserError, match="--study s: that study's held-out rule"):
        ensure_study(db, "s", "demo", {"rule": "share", "share": 0.1, "seed": 7, "n": 1})
    with pytest.raises(UserError, match="--study s: that study's held-out rule"):
        ensure_study(db, "s", "demo", {"rule": "split", "n": 3})


def test_the_rule_curation_records_is_the_one_evaluation_checks(tmp_path):
    from train.curate import heldout_rule
    from train.evaluate import Condition, check_heldout
    # 25 unmarked prompts: share 0.1 -> round(2.5) = 3 held out (halves up), seed 0
    cands = pl.DataFrame({"prompt_idx": list(range(25)) * 2, "prompt_id": [f"p{i}" for i in range(25)] * 2,
                          "split": ["pool"] * 50})
    recorded = heldout_rule(cands)
    assert recorded == {"rule": "share", "share": 0.1, "seed": 0, "n": 3}
    marked = cands.with_columns(pl.when(pl.col("prompt_idx") == 4).then(pl.lit("heldout")).otherwise("split").alias("split"))
    assert heldout_rule(marked) == {"rule": "split", "n": 1}
    prompts = cands.unique("prompt_idx").with_columns(pl.lit(False).alias("marked_heldout"))
    run = Condition("c", 1, "b", tmp_path, "run7", recorded)
    assert check_heldout([run], heldout_prompt_ids(prompts)[1]) == []
    with pytest.raises(UserError, match=r"run7.*share 0.1, seed 0.*share 0.2, seed 0"):
        check_heldout([run], heldout_prompt_ids(prompts, share=0.2)[1])


class _PairJudge:
    """A loopback OpenAI-compatible judge (tests/openai_server.py) whose tournament verdict is
    verdict(a, b) of the two responses it reads from the prompt; where fail(a, b) it answers HTTP
    500 to the first request of that prompt. asked: the (a, b) of every request, in order."""

    def __new__(cls, verdict, fail=None):
        from tests.openai_server import OpenAIServer

        class Server(OpenAIServer):
            async def _respond(self, request):
                prompt = request["messages"][-1]["content"]
                a, _, rest = prompt.partition("\n\nResponse A: ")[2].partition("\n\nResponse B: ")
                b = rest.rpartition("\n\nWhich response is better?")[0]
                self.asked.append((a, b))
                self.attempts[prompt] += 1
                if fail is not None and fail(a, b) and self.attempts[prompt] == 1:
                    return 500, {"error": {"message": "internal error"}}, []
                choice = {"index": 0, "message": {"role": "assistant", "content": verdict(a, b)},
                          "finish_reason": "stop"}
                return 200, {"id": "c", "object": "chat.completion", "model": self.model, "choices": [choice],
                             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}, []

        server = Server()
        server.asked = []
        return server


def _outcomes(db, judge):
    return query_rows(db, "SELECT g.answer, g.ref_len, e.outcome, e.status_ab, e.status_ba, e.raw_ab, e.raw_ba "
                          "FROM evaluations e JOIN judges j USING (judge_id) JOIN generations g "
                          f"USING (study_id, condition, seed, prompt_idx) WHERE j.name = '{judge}' ORDER BY e.condition, e.prompt_idx")


def test_the_students_answer_is_response_a_then_response_b(tiny, db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", pool_rows()), "demo")
    # "A+" always: the student wins the order where it is Response A and loses the other -> 0.5.
    # Longer wins: A+ when A is longer, B+ when B is, TIE when equal; so the student (A, then B)
    # gets 1 when its answer is longer than the reference, 0 when shorter, 0.5 when as long.
    with _PairJudge(lambda a, b: "A+") as always_a, \
            _PairJudge(lambda a, b: "A+" if len(a) > len(b) else "B+" if len(b) > len(a) else "TIE") as longer:
        req = EvalRequest(runs=[str(tiny["runs"][0])], pool="demo", db=db, max_new_tokens=8, batch_size=3,
                          judges=[f"openai:always-a@{always_a.url}", f"openai:longer@{longer.url}"])
        result = evaluate(req)
    assert result["judged"] == 12 and result["unparsed"] == 0          # 6 answers x 2 judges
    rows = _outcomes(db, "always-a")
    assert len(rows) == 6 and all(r[2] == 0.5 for r in rows)
    rows = _outcomes(db, "longer")
    expected = [1.0 if len(r[0]) > r[1] else 0.0 if len(r[0]) < r[1] else 0.5 for r in rows]
    assert len(rows) == 6 and [r[2] for r in rows] == expected
    # each of the 12 requests pairs a stored answer with a reference, 6 with the answer as Response A
    answers, refs = {r[0] for r in rows}, {r["response"] for r in pool_rows()}
    assert len(longer.asked) == 12 and sum(a in answers and b in refs for a, b in longer.asked) == 6
    assert sum(b in answers and a in refs for a, b in longer.asked) == 6


def test_a_rerun_asks_only_the_order_that_failed(tiny, db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", pool_rows()), "demo")
    refs = {r["response"] for r in pool_rows()}
    # fail once every order with the student as Response A ("ab"); the "ba" order parses
    with _PairJudge(lambda a, b: "B+", fail=lambda a, b: a not in refs) as judge:
        req = EvalRequest(runs=[str(tiny["runs"][0])], pool="demo", db=db, max_new_tokens=4, max_retries=0,
                          judges=[f"openai:flaky@{judge.url}"])
        first = evaluate(req)
        assert (first["judged"], first["unparsed"]) == (6, 6)
        assert {r[3:] for r in _outcomes(db, "flaky")} == {("failed", "ok", None, "B+")}
        n_first = len(judge.asked)                           # 6 ab (failed) + 6 ba
        again = evaluate(req)
        asked_again = judge.asked[n_first:]
    assert n_first == 12 and (again["generated"], again["judged"], again["unparsed"]) == (0, 6, 0)
    # only the 6 failed "ab" orders were asked again (the student as Response A), not the parsed "ba" ones
    assert len(asked_again) == 6 and all(b in refs for _, b in asked_again)
    # B+ with the student as A (ab: -1), then as B (ba: -1 favours B): one loss, one win -> 0.5
    assert [r[2:] for r in _outcomes(db, "flaky")] == [(0.5, "ok", "ok", "B+", "B+")] * 6


def test_evaluate_page_judges_come_from_the_score_form(db, write_jsonl, monkeypatch, tmp_path):
    """The judge is a configured endpoint (its key variable from the server's config), or a typed
    endpoint that never carries a key; a bad URL is refused before anything is launched."""
    from streamlit.testing.v1 import AppTest

    from app import data
    from ingest.runs import running
    from tests.conftest import REPO
    import_pool(db, write_jsonl("pool.jsonl", pool_rows()), "demo")
    with running(db, "train", pool="demo", config={"base": "tiny"}) as run:
        train_id = run.id                                      # a finished training run to pick
    (db.parent / "judgeaudit.toml").write_text(
        '[endpoints.team]\nbase_url = "http://gpu-box:8000/v1"\nmodels = ["m1"]\napi_key_env = "TEAM_KEY"\n')
    launched = []
    monkeypatch.setattr(data, "launch_evaluation", lambda request, pool, study: launched.append(request) or 99)
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/evaluate/page.py").run()
    assert not at.exception, [e.value for e in at.exception]

    def launch(provider, **fields):
        at.radio(key="eval_provider").set_value(provider).run()
        at.multiselect[0].set_value([train_id])
        for label, value in fields.items():
            next(t for t in at.text_input if t.label == label).set_value(value)
        next(b for b in at.button if b.label == "Evaluate").click().run()
        assert not at.exception, [e.value for e in at.exception]

    launch("endpoint")
    judge = {k: launched[-1].get(k) for k in ("judges", "api_key_env")}     # the run's request
    assert judge == {"judges": ["openai:m1@http://gpu-box:8000/v1"], "api_key_env": "TEAM_KEY"}
    launch("custom", **{"Base URL (no API key is sent)": "http://127.0.0.1:9/v1", "Model": "mine"})
    assert launched[-1].get("judges") == ["openai:mine@http://127.0.0.1:9/v1"]
    assert launched[-1].get("api_key_env") is None
    launch("custom", **{"Base URL (no API key is sent)": "ftp://x", "Model": "mine"})
    assert len(launched) == 2 and any("base URL 'ftp://x'" in e.value for e in at.error)
