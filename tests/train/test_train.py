"""Fine-tuning: tokenisation with the prompt masked, the Trainer run folder, cancel, the background
run. Fast tests use a tiny Llama built from a config with a character-level tokenizer (no
download); the slow ones train the bundled SmolLM2 for 2 steps, loading it once."""

import json
import re
import time
from pathlib import Path

import pytest

from ingest import UserError
from train._config import TrainConfig, accumulation_steps
from train._examples import IGNORE, read_subset, tokenize
from train.finetune import fit

CHAT = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def build_tiny(folder: Path) -> Path:
    """A 2-layer Llama (hidden 32) and a tokenizer with one token per character, saved as a folder."""
    import torch
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    specials = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>"]
    vocab = {t: i for i, t in enumerate(specials + [chr(c) for c in range(32, 127)] + ["\n"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.add_special_tokens(specials)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                   eos_token="<|im_end|>", bos_token="<|im_start|>")
    fast.chat_template = CHAT
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         pad_token_id=vocab["<pad>"], eos_token_id=vocab["<|im_end|>"],
                         bos_token_id=vocab["<|im_start|>"])
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def row(prompt: str, answer: str) -> dict:
    return {"prompt": [{"role": "user", "content": prompt}], "completion": [{"role": "assistant", "content": answer}]}


def write_subset(path: Path, n: int) -> Path:
    rows = [row(f"Question {i}: " + "x" * (i % 7), f"Answer {i} " + "y" * (3 * i % 11)) for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_labels_mask_the_prompt(tiny):
    from train._model import load_tokenizer
    tok = load_tokenizer(str(tiny))
    examples, stats = tokenize([row("Hi", "Yo")], tok, 1024)
    # "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n" = 1 + 4 + 1 + 2 + 1 + 1 + 1 + 9 + 1 = 21
    # tokens (one per character, one per special); the completion "Yo<|im_end|>\n" = 4 tokens
    labels, ids = examples[0]["labels"], examples[0]["input_ids"]
    assert len(ids) == 25 and labels[:21] == [IGNORE] * 21 and labels[21:] == ids[21:]
    assert tok.convert_ids_to_tokens(ids[21:]) == ["Y", "o", "<|im_end|>", "\n"]
    assert stats == {"n_examples": 1, "n_cut": 0, "share_cut": 0.0, "n_dropped": 0, "n_tokens": 25,
                     "n_completion_tokens": 4}
    # a cap of 23 cuts the first after two completion tokens; the second ("<|im_end|>\n") is 23 long
    examples, stats = tokenize([row("Hi", "Yo"), row("Hi", "")], tok, 23)
    assert [len(e["input_ids"]) for e in examples] == [23, 23] and stats["n_cut"] == 1 and stats["share_cut"] == 0.5
    # a cap of 21 leaves no completion token: both are dropped
    examples, stats = tokenize([row("Hi", "Yo"), row("Hello there", "Yo")], tok, 21)
    assert examples == [] and stats["n_dropped"] == 2


def test_bad_subset_lines_are_named(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row("a", "b")) + "\n" + json.dumps({"prompt": "text", "completion": []}) + "\n")
    with pytest.raises(UserError, match=r"bad.jsonl line 2: field 'prompt'"):
        read_subset(bad)
    bad.write_text(json.dumps(row("a", "b")) + "\n{oops\n")
    with pytest.raises(UserError, match=r"line 2: not JSON"):
        read_subset(bad)


def test_fit_writes_the_run_folder_and_keeps_the_base(tiny, tmp_path):
    import torch
    from peft import PeftModel
    from train._model import load_base
    subset = write_subset(tmp_path / "s.jsonl", 40)
    model, tok = load_base(str(tiny))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    cfg = TrainConfig(subset=str(subset), base=str(tiny), out=str(tmp_path / "run"), max_steps=3, learning_rate=1e-2)
    peft_model, metrics = fit(cfg, model, tok)
    out = Path(cfg.out)
    assert metrics["status"] == "finished" and metrics["steps"] == 3 and metrics["eval_loss"] is not None
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["modules_to_save"] is None and adapter["r"] == 16 and adapter["lora_alpha"] == 32
    assert sorted(adapter["target_modules"]) == ["down_proj", "gate_proj", "k_proj", "o_proj", "q_proj", "up_proj",
                                                 "v_proj"]
    assert (out / "adapter_model.safetensors").stat().st_size > 0
    config = json.loads((out / "config.json").read_text())
    # 40 examples: round(0.05 x 40) = 2 held for eval_loss; effective batch 8 = 4 x 2 accumulation
    assert config["data"]["n_train"] == 38 and config["data"]["n_eval"] == 2 and config["effective_batch"] == 8
    assert config["subset"]["sha256"] and config["versions"]["torch"] and config["hyper_parameters"]["lora_r"] == 16
    lines = [json.loads(x) for x in (out / "progress.jsonl").read_text().splitlines()]
    train_lines = [x for x in lines if x["loss"] is not None]
    assert [x["step"] for x in train_lines] == [1, 2, 3]
    assert all(x["tokens_per_s"] > 0 and x["learning_rate"] > 0 and x["eta_s"] is not None for x in train_lines)
    assert any(x["eval_loss"] is not None for x in lines)
    # the base's own weights did not move; the adapter did
    base = peft_model.get_base_model()
    for name, value in before.items():
        now = dict(base.named_parameters()).get(name.replace(".weight", ".base_layer.weight"),
                                                dict(base.named_parameters()).get(name))
        if now is not None:
            assert torch.equal(now.detach(), value), name
    lora_b = [p for n, p in peft_model.named_parameters() if "lora_B" in n]
    assert lora_b and any(p.abs().sum() > 0 for p in lora_b)      # lora_B starts at zero
    # a fresh base with the saved adapter gives the trained model's logits
    peft_model.eval()
    x = torch.tensor([tok.encode("Question 3: xxx")])
    with torch.no_grad():
        trained = peft_model(input_ids=x).logits
        fresh, _ = load_base(str(tiny), tokenizer=False)
        reloaded = PeftModel.from_pretrained(fresh, str(out)).eval()(input_ids=x).logits
    assert torch.equal(trained, reloaded)


def test_progress_says_the_phase_before_training_and_an_eta_from_the_first_step(tiny, tmp_path):
    # issue 26: the card waited ~100 s on "Loading..." with no ETA; now the run reports preparing, then
    # the step bar from step 0, and an ETA after the first step (before any logged loss)
    from train._model import load_base
    subset = write_subset(tmp_path / "s.jsonl", 40)
    model, tok = load_base(str(tiny))
    records = []
    cfg = TrainConfig(subset=str(subset), base=str(tiny), out=str(tmp_path / "run"), max_steps=2)
    fit(cfg, model, tok, progress=records.append)
    assert records[0] == {"phase": "preparing"}
    steps = [r for r in records if r.get("phase") == "train"]
    assert steps[0]["done"] == 0 and steps[0]["total"] == 2 and steps[0].get("eta_s") is None
    first = next(r for r in steps if r["done"] == 1)
    assert first["eta_s"] is not None and first["eta_s"] >= 0 and first["total"] == 2
    assert records[-1]["phase"] == "done"


def test_cancel_stops_at_the_next_step_and_saves(tiny, tmp_path):
    from train._model import load_base
    subset = write_subset(tmp_path / "s.jsonl", 40)
    model, tok = load_base(str(tiny))
    calls = []

    def cancelled():
        calls.append(1)
        return True
    cfg = TrainConfig(subset=str(subset), base=str(tiny), out=str(tmp_path / "run"), max_steps=50)
    _, metrics = fit(cfg, model, tok, cancelled=cancelled)
    assert metrics["status"] == "cancelled" and metrics["steps"] == 1 and calls
    assert (tmp_path / "run" / "adapter_model.safetensors").exists()


def test_length_grouping_cuts_padding(tiny, tmp_path):
    from train._model import load_base
    from train._trainer import build_trainer
    # 64 examples: a curated subset's size, where transformers' own sampler would sort only within
    # each batch of 8; ours sorts up to 50 batches at a time
    rows = [row("q", "y" * (i * 37 % 200)) for i in range(64)]
    model, tok = load_base(str(tiny))
    examples, _ = tokenize(rows, tok, 1024)
    share = {}
    for grouped in (True, False):
        cfg = TrainConfig(subset="-", base=str(tiny), out=str(tmp_path / "t"), group_by_length=grouped)
        trainer = build_trainer(cfg, model, tok, examples, [])
        batches = list(trainer.get_train_dataloader())
        assert sorted(i for b in batches for i in range(b["input_ids"].shape[0])) and \
            sum(b["input_ids"].shape[0] for b in batches) == 64
        share[grouped] = 1 - sum(int(b["attention_mask"].sum()) for b in batches) / sum(
            b["attention_mask"].numel() for b in batches)
    assert share[True] < 0.1 < share[False]


def test_length_grouped_order():
    import numpy as np
    from train._grouping import length_grouped_order
    lengths = [5, 90, 40, 41, 6, 88, 7, 39, 91, 4, 42, 89]
    orders = [length_grouped_order(lengths, 4, np.random.default_rng(s)) for s in range(6)]
    for order in orders:
        assert sorted(order) == list(range(12))                 # a permutation
        batches = [sorted(lengths[i] for i in order[k:k + 4]) for k in range(0, 12, 4)]
        # sorted as one mega-batch: the batches are {4..7}, {39..42}, {88..91}, the longest first
        assert sorted(batches) == [[4, 5, 6, 7], [39, 40, 41, 42], [88, 89, 90, 91]] and batches[0][-1] == 91
    assert len({tuple(o[4:]) for o in orders}) > 1              # the other batches come in a seeded order


def test_train_command_runs_in_the_background_and_cancels(tiny, tmp_path, db):
    import sys
    from ingest import runs
    subset = write_subset(tmp_path / "s.jsonl", 200)
    from app.cli import command_line, request_for
    request = request_for("train", subset=str(subset), base=str(tiny), max_steps=400, eval_steps=1000)
    run_id = runs.launch(db, "train", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                         queue="train")
    deadline = time.time() + 120
    while time.time() < deadline:
        row_ = runs.get_run(db, run_id)
        if (row_["progress"] or {}).get("step", 0) >= 2 or row_["status"] not in runs.ACTIVE:
            break
        time.sleep(1)
    assert row_["status"] == "running", runs.log_tail(db, run_id)
    runs.cancel(db, run_id, wait_s=60)
    row_ = runs.get_run(db, run_id)
    out = Path(row_["out_dir"])
    assert row_["status"] == "cancelled", runs.log_tail(db, run_id)
    assert (out / "adapter_model.safetensors").exists() and (out / "config.json").exists()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["status"] == "cancelled" and 2 <= metrics["steps"] < 400
    assert "cancel requested" in (out / "train.log").read_text()


def test_train_command_refuses_bad_input(tmp_path):
    import subprocess
    import sys
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    proc = subprocess.run([exe, "train", "--subset", str(tmp_path / "none.jsonl"), "--base", "local:smollm2",
                           "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "none.jsonl: no such file" in proc.stderr
    subset = write_subset(tmp_path / "s.jsonl", 3)
    proc = subprocess.run([exe, "train", "--subset", str(subset), "--base", "local:nope"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "unknown bundled model" in proc.stderr


# -- the bundled model ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smollm2():
    from train._model import load_base
    return load_base("local:smollm2")


@pytest.mark.slow
def test_bundled_model_two_steps(smollm2, tmp_path):
    import torch
    from peft import PeftModel
    model, tok = smollm2
    examples, _ = tokenize([row("Name a colour.", "Blue.")], tok, 1024)
    prompt = tok.apply_chat_template(row("Name a colour.", "")["prompt"], add_generation_prompt=True, tokenize=True,
                                     return_dict=False)
    labels = examples[0]["labels"]
    assert labels[:len(prompt)] == [IGNORE] * len(prompt) and IGNORE not in labels[len(prompt):]
    assert tok.decode(labels[len(prompt):]).startswith("Blue.")
    subset = tmp_path / "s.jsonl"
    subset.write_text("".join(json.dumps(row(f"Say {w}.", f"{w}!")) + "\n" for w in
                              ["red", "green", "blue", "cyan", "pink", "grey", "gold", "navy", "teal", "plum"]))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    cfg = TrainConfig(subset=str(subset), base="local:smollm2", out=str(tmp_path / "run"), max_steps=2,
                      batch_size=4, micro_batch_size=2)
    peft_model, metrics = fit(cfg, model, tok)
    assert metrics["steps"] == 2 and (tmp_path / "run" / "adapter_model.safetensors").exists()
    peft_model.eval()
    x = torch.tensor([tok.encode("Say red.")])
    with torch.no_grad():
        trained = peft_model(input_ids=x).logits
    base = peft_model.unload()            # the base model with the LoRA layers taken out again
    after = base.state_dict()
    assert all(torch.equal(after[k], v) for k, v in before.items())
    with torch.no_grad():
        reloaded = PeftModel.from_pretrained(base, str(tmp_path / "run")).eval()(input_ids=x).logits
    assert torch.equal(trained, reloaded)


# -- the effective batch: micro batch x accumulation steps x processes, exactly; a batch size that
# does not divide is refused before any model is loaded, never silently changed


@pytest.mark.parametrize("batch, micro, world, steps", [
    (8, 4, 1, 2),      # the paper's 8 = 4 x 2
    (8, 2, 1, 4),
    (4, 4, 1, 1),
    (12, 2, 3, 2),     # 12 = 2 x 2 steps x 3 processes
    (8, 1, 8, 1),
])
def test_accumulation_steps_make_the_batch_exactly(batch, micro, world, steps):
    assert accumulation_steps(batch, micro, world) == steps
    assert micro * steps * world == batch


@pytest.mark.parametrize("batch, micro, world", [(8, 3, 1), (6, 4, 1), (8, 4, 3), (4, 8, 1)])
def test_a_batch_that_does_not_divide_is_refused(batch, micro, world):
    with pytest.raises(UserError, match=rf"--batch-size {batch} is not a multiple of --micro-batch-size {micro}"):
        accumulation_steps(batch, micro, world)


def test_the_message_names_the_processes_only_when_there_are_several():
    with pytest.raises(UserError, match=r"x 3 processes \(12\)"):
        accumulation_steps(8, 4, 3)
    with pytest.raises(UserError, match=r"--micro-batch-size 4 x 2 processes \(8\): choose"):
        accumulation_steps(12, 4, 2)
    with pytest.raises(UserError, match=r"--micro-batch-size 3 \(3\): choose"):
        accumulation_steps(8, 3, 1)


def test_accumulation_steps_default_to_one_process_and_are_a_whole_number():
    # one process unless told: 8 = 4 x 2 steps; 4 = 4 x 1 step (with two processes 4 would not divide)
    assert accumulation_steps(8, 4) == 2 and accumulation_steps(4, 4) == 1
    assert all(type(accumulation_steps(b, mb, w)) is int for b, mb, w in ((8, 4, 1), (12, 2, 3), (8, 8, 1)))


def test_config_check_refuses_it_before_training(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    TrainConfig(subset="s", base="b", out="o", batch_size=8, micro_batch_size=4).check()
    with pytest.raises(UserError, match="not a multiple"):
        TrainConfig(subset="s", base="b", out="o", batch_size=8, micro_batch_size=3).check()
    monkeypatch.setenv("WORLD_SIZE", "4")      # under `accelerate launch` on four GPUs: 4 x 4 > 8
    with pytest.raises(UserError, match="x 4 processes"):
        TrainConfig(subset="s", base="b", out="o", batch_size=8, micro_batch_size=4).check()


def test_presets_are_defined_once_and_pass_the_check(monkeypatch):
    # the Curate & Train page's presets come from train: the paper's are TrainConfig's defaults (with
    # max_steps 0, which trains by epochs), and every preset makes a config that passes the check
    from app.views.curate import form as train_form
    from train import PRESETS
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert train_form.PRESETS is PRESETS and list(PRESETS) == ["quick", "paper"]
    defaults = TrainConfig(subset="s", base="b", out="o")
    assert PRESETS["paper"] == {**{k: getattr(defaults, k) for k in PRESETS["paper"]}, "max_steps": 0}
    assert PRESETS["quick"] == {**PRESETS["paper"], "max_steps": 5, "batch_size": 4, "micro_batch_size": 2,
                                "max_length": 256}
    for hp in PRESETS.values():
        TrainConfig(subset="s", base="b", out="o", **hp).check()


# -- the pure parts of fine-tuning, by hand

@pytest.mark.parametrize("field, flag", [("batch_size", "--batch-size"), ("micro_batch_size", "--micro-batch-size"),
                                         ("lora_r", "--lora-r"), ("lora_alpha", "--lora-alpha"),
                                         ("max_length", "--max-length")])
def test_config_check_needs_counts_of_at_least_one(monkeypatch, field, flag):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(UserError, match=f"^{flag} must be at least 1$"):
        TrainConfig(subset="s", base="b", out="o", **{field: 0}).check()


def test_config_check_bounds(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)

    def check(**kw):
        TrainConfig(subset="s", base="b", out="o", **kw).check()
    # the smallest accepted values, and the edges of each interval
    check(batch_size=1, micro_batch_size=1, lora_r=1, lora_alpha=1, max_length=1)
    check(lora_dropout=0.0, eval_share=0.0, learning_rate=1e-4)
    check(lora_dropout=0.99, eval_share=0.49, learning_rate=2.0)
    check(max_steps=0, epochs=1.0)            # epochs decide
    check(max_steps=1, epochs=0.0)            # max_steps decides
    check(max_steps=-1, epochs=0.5)
    for dropout in (1.0, 1.5, -0.1):
        with pytest.raises(UserError, match=r"^--lora-dropout must be in \[0, 1\)$"):
            check(lora_dropout=dropout)
    for share in (0.5, 1.0, -0.1):
        with pytest.raises(UserError, match=r"^--eval-share must be in \[0, 0.5\)$"):
            check(eval_share=share)
    for kw in ({"learning_rate": 0.0}, {"learning_rate": -1.0}, {"max_steps": 0, "epochs": 0.0},
               {"max_steps": -1, "epochs": 0.0}, {"max_steps": 0, "epochs": -1.0}):
        with pytest.raises(UserError, match=r"^--learning-rate and --epochs \(or --max-steps\) must be positive$"):
            check(**kw)


def test_read_subset_keeps_prompt_and_completion(tmp_path):
    first = {**row("Héllo ünïcode?", "Ja."), "meta": {"x": 1}}
    second = {"prompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q?"}],
              "completion": [{"role": "assistant", "content": "A"}, {"role": "user", "content": "more"},
                             {"role": "assistant", "content": "B"}]}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(first, ensure_ascii=False) + "\n\n  \n" + json.dumps(second) + "\n", encoding="utf-8")
    assert read_subset(path) == [{"prompt": first["prompt"], "completion": first["completion"]},
                                 {"prompt": second["prompt"], "completion": second["completion"]}]


def test_read_subset_reads_utf8_whatever_the_locale(tmp_path, monkeypatch):
    # a Latin-1 locale (as a Windows or an old POSIX one may be) would read "é" (bytes C3 A9) as "Ã©"
    import builtins
    import io
    real_open = builtins.open

    def latin1_open(file, mode="r", buffering=-1, encoding=None, *args, **kwargs):
        if "b" not in mode and encoding in (None, "locale"):
            encoding = "latin-1"
        return real_open(file, mode, buffering, encoding, *args, **kwargs)

    path = tmp_path / "s.jsonl"
    first = row("Qu'est-ce qu'un café ?", "Un espresso, très serré.")
    path.write_text(json.dumps(first, ensure_ascii=False) + "\n", encoding="utf-8")
    monkeypatch.setattr(builtins, "open", latin1_open)
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "latin-1")
    with open(path) as fh:
        assert "cafÃ©" in fh.read()                                      # the locale is in effect
    assert read_subset(path) == [first]


@pytest.mark.parametrize("bad, message", [
    ({"prompt": "text", "completion": []}, "field 'prompt' must be a list of {\"role\", \"content\"} messages"),
    ({"prompt": [], "completion": row("a", "b")["completion"]},
     "field 'prompt' must be a list of {\"role\", \"content\"} messages"),
    ({"prompt": ["hi"], "completion": row("a", "b")["completion"]},
     "field 'prompt' must be a list of {\"role\", \"content\"} messages"),
    ({"prompt": [{"content": "hi"}], "completion": row("a", "b")["completion"]},
     "field 'prompt' must be a list of {\"role\", \"content\"} messages"),
    ({"prompt": [{"role": "user", "content": 3}], "completion": row("a", "b")["completion"]},
     "field 'prompt' must be a list of {\"role\", \"content\"} messages"),
    ({"prompt": row("a", "b")["prompt"]}, "field 'completion' must be a list of {\"role\", \"content\"} messages"),
    ({"prompt": row("a", "b")["prompt"], "completion": [{"role": "user", "content": "b"}]},
     "field 'completion' must end with an assistant message"),
    ({"prompt": row("a", "b")["prompt"], "completion": [{"role": "assistant", "content": "b"},
                                                       {"role": "user", "content": "c"}]},
     "field 'completion' must end with an assistant message"),
    (["not", "an", "object"], "field 'prompt' must be a list of {\"role\", \"content\"} messages"),
])
def test_read_subset_names_line_and_field(tmp_path, bad, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row("a", "b")) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(UserError, match="^" + re.escape(f"{path} line 2: {message}") + "$"):
        read_subset(path)


def test_read_subset_file_errors(tmp_path):
    path = tmp_path / "s.jsonl"
    with pytest.raises(UserError, match="^" + re.escape(f"--subset {path}: no such file") + "$"):
        read_subset(path)
    path.write_text("\n   \n")
    with pytest.raises(UserError, match="^" + re.escape(f"--subset {path}: no examples") + "$"):
        read_subset(path)
    path.write_text("\n" + json.dumps(row("a", "b")) + "\n{oops\n")
    with pytest.raises(UserError, match="^" + re.escape(f"{path} line 3: not JSON (")):
        read_subset(path)


def test_split_eval_by_hand():
    import numpy as np
    from train._examples import split_eval
    examples = [f"e{i}" for i in range(40)]
    # 0.05 x 40 = 2 held out: the first two of the seeded permutation default_rng([seed, 5]), in order
    for seed in (0, 3):
        held = sorted(np.random.default_rng([seed, 5]).permutation(40)[:2].tolist())
        train_rows, eval_rows = split_eval(examples, 0.05, seed)
        assert eval_rows == [examples[i] for i in held]
        assert train_rows == [e for i, e in enumerate(examples) if i not in held]
    # counts: round(share x n), at least one when share > 0 and n >= 2; none otherwise
    # 0.05 x 20 = 1; 0.25 x 10 = 2.5 -> 2 (round half to even); 0.05 x 2 = 0.1 -> at least 1
    assert [len(split_eval(examples[:n], share, 0)[1]) for n, share in ((20, 0.05), (10, 0.25), (2, 0.05), (3, 0.3))] \
        == [1, 2, 1, 1]
    assert split_eval(examples[:10], 0.0, 0) == (examples[:10], [])
    assert split_eval(examples[:1], 0.4, 0) == (examples[:1], [])


def test_pad_batch_by_hand():
    import torch
    from train._trainer import pad_batch
    batch = pad_batch([{"input_ids": [5, 6, 7], "labels": [IGNORE, 6, 7]}, {"input_ids": [8], "labels": [8]}], 0)
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["labels"].tolist() == [[IGNORE, 6, 7], [8, IGNORE, IGNORE]]
    assert all(t.dtype == torch.long for t in batch.values()) and sorted(batch) == ["attention_mask", "input_ids",
                                                                                     "labels"]


def test_tokenize_counts_by_hand(tiny):
    from train._model import load_tokenizer
    tok = load_tokenizer(str(tiny))
    # prompts are 21 tokens (see test_labels_mask_the_prompt); "Yo" and "Yoo" + "<|im_end|>\n": 4 and 5
    examples, stats = tokenize([row("Hi", "Yo"), row("Hi", "Yoo")], tok, 1024)
    assert [len(e["input_ids"]) for e in examples] == [25, 26] and sorted(examples[0]) == ["input_ids", "labels"]
    assert stats == {"n_examples": 2, "n_cut": 0, "share_cut": 0.0, "n_dropped": 0, "n_tokens": 51,
                     "n_completion_tokens": 9}
    # a cap of 22 cuts both to 21 prompt tokens + 1 completion token
    _, stats = tokenize([row("Hi", "Yo"), row("Hi", "Yoo")], tok, 22)
    assert stats == {"n_examples": 2, "n_cut": 2, "share_cut": 1.0, "n_dropped": 0, "n_tokens": 44,
                     "n_completion_tokens": 2}
    assert tokenize([], tok, 22) == ([], {"n_examples": 0, "n_cut": 0, "share_cut": 0.0, "n_dropped": 0,
                                          "n_tokens": 0, "n_completion_tokens": 0})


def test_tokenize_a_template_that_renders_the_answer_differently(tiny):
    from train._model import load_tokenizer
    tok = load_tokenizer(str(tiny))
    # the assistant's turn is rendered as 'bot', the generation prompt as 'assistant': the prompt's
    # tokens are not a prefix of the conversation's, so the completion is its text and EOS
    tok.chat_template = ("{% for m in messages %}<|im_start|>{{ 'bot' if m['role'] == 'assistant' else m['role'] }}\n"
                         "{{ m['content'] }}<|im_end|>\n{% endfor %}"
                         "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    two = {"prompt": row("Hi", "")["prompt"],
           "completion": [{"role": "assistant", "content": "Yo"}, {"role": "assistant", "content": "!"}]}
    examples, stats = tokenize([two], tok, 1024)
    ids, labels = examples[0]["input_ids"], examples[0]["labels"]
    assert len(ids) == 25 and labels[:21] == [IGNORE] * 21 and labels[21:] == ids[21:]
    assert tok.convert_ids_to_tokens(ids[21:]) == ["Y", "o", "!", "<|im_end|>"]
    assert stats["n_completion_tokens"] == 4


def test_length_grouped_order_sorts_within_mega_batches():
    import numpy as np
    from train._grouping import MEGA_BATCHES, length_grouped_order
    # 10 lengths in batches of 4 (one mega-batch): sorted longest first, cut 4 | 4 | 2
    lengths = [5, 90, 40, 41, 6, 88, 7, 39, 91, 4]
    for seed in range(4):
        order = [lengths[i] for i in length_grouped_order(lengths, 4, np.random.default_rng(seed))]
        rest = order[4:]                       # the other two batches, in a seeded order
        assert sorted(order[:4]) == [41, 88, 90, 91]
        assert (sorted(rest[:2]), sorted(rest[2:])) == ([4, 5], [6, 7, 39, 40]) or \
            (sorted(rest[:4]), sorted(rest[4:])) == ([6, 7, 39, 40], [4, 5])
    # 120 distinct lengths in batches of 2: mega-batches of 50 x 2 = 100 examples, the first 100 and
    # the last 20 of the seeded permutation (the generator's first draw), each sorted longest first
    assert MEGA_BATCHES == 50
    lengths = list(range(120))
    for seed in range(4):
        perm = np.random.default_rng(seed).permutation(120)
        want = []
        for mega in (perm[:100], perm[100:]):
            ranked = sorted(mega.tolist(), reverse=True)
            want += [frozenset(ranked[i:i + 2]) for i in range(0, len(ranked), 2)]
        order = length_grouped_order(lengths, 2, np.random.default_rng(seed))
        got = [frozenset(order[i:i + 2]) for i in range(0, 120, 2)]
        assert sorted(order) == lengths and set(got) == set(want)
        assert 119 in got[0]                     # the batch with the longest example comes first
    assert length_grouped_order([], 4, np.random.default_rng(0)) == []


class CharTokenizer:
    """One id per character (its code point), BOS 1 and EOS 2. Like Llama's, a plain call adds BOS
    unless add_special_tokens=False; the chat template (render: messages, add_generation_prompt ->
    text) starts with BOS."""
    bos_token_id, eos_token_id = 1, 2

    def __init__(self, render):
        self.render = render

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=True, return_dict=False):
        assert tokenize and not return_dict
        return [self.bos_token_id] + [ord(c) for c in self.render(messages, add_generation_prompt)]

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [self.bos_token_id] * add_special_tokens + [ord(c) for c in text]}


def test_tokenize_falls_back_to_the_answer_text_without_a_second_bos():
    # two templates that do not render the answer after the generation prompt: one names the
    # assistant's turn 'bot', one leaves assistant turns out and always ends with the generation
    # prompt (the conversation renders exactly as the prompt). Either way the completion is the
    # answer's text and EOS, tokenised without special tokens (no BOS in mid-sequence):
    # prompt [BOS] + "user:Hi|assistant:" = 19 ids; completion "Yo" + EOS = [89, 111, 2]
    def bot(msgs, gen):
        return "".join(f"{'bot' if m['role'] == 'assistant' else m['role']}:{m['content']}|" for m in msgs) \
            + ("assistant:" if gen else "")

    def deaf(msgs, gen):
        return "".join(f"{m['role']}:{m['content']}|" for m in msgs if m["role"] != "assistant") + "assistant:"

    prompt = [1] + [ord(c) for c in "user:Hi|assistant:"]
    assert len(prompt) == 19
    for render in (bot, deaf):
        examples, stats = tokenize([row("Hi", "Yo")], CharTokenizer(render), 1024)
        assert examples == [{"input_ids": prompt + [89, 111, 2], "labels": [IGNORE] * 19 + [89, 111, 2]}], render
        assert (stats["n_dropped"], stats["n_tokens"], stats["n_completion_tokens"]) == (0, 22, 3)


def test_length_grouped_order_keeps_ties_in_the_seeded_order():
    # 80 examples of three lengths (0, 1, 2 in turn: ties everywhere), batches of 4, one mega-batch
    # (50 x 4 = 200 >= 80): the seeded permutation (the generator's first draw) sorted longest
    # first by a stable sort, so equal lengths keep the permutation's order; cut into 20 batches;
    # the first holds a longest example and leads, the other 19 follow in the order of the
    # generator's second draw, a permutation of 19. The order depends on the seed alone.
    import numpy as np
    from train._grouping import length_grouped_order
    lengths = [i % 3 for i in range(80)]
    for seed in range(3):
        rng = np.random.default_rng(seed)
        ranked = sorted(rng.permutation(80).tolist(), key=lambda i: -lengths[i])   # sorted() is stable
        batches = [ranked[i:i + 4] for i in range(0, 80, 4)]
        want = batches[0] + [i for j in rng.permutation(19) for i in batches[1:][j]]
        assert length_grouped_order(lengths, 4, np.random.default_rng(seed)) == want
