"""DPO (DESIGN.md 'Preference pairs and DPO'): the pairs file's checks, TRL's DPOTrainer on a tiny
Llama (the reference is the base: at the first step the rewards are 0), progress.jsonl's rewards,
tensorboard's event file read back, cancel, the background run; the slow test trains the bundled
SmolLM2 for 2 steps."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest import UserError
from tests.train.test_train import write_subset
from train._config import TrainConfig
from train._dpo import fit_dpo, read_pairs
from tests.conftest import EXE


def pair(prompt: str, chosen: str, rejected: str) -> dict:
    return {"prompt": [{"role": "user", "content": prompt}], "chosen": [{"role": "assistant", "content": chosen}],
            "rejected": [{"role": "assistant", "content": rejected}], "prompt_id": prompt, "chosen_id": "a",
            "rejected_id": "b", "margin": 1.0}


def write_pairs(path: Path, n: int) -> Path:
    rows = [pair(f"Question {i}", "good answer " + "y" * (i % 5), "bad " + "z" * (i % 3)) for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.pop("chosen"), "line 2: field 'chosen' is missing"),
    (lambda r: r.update(chosen=[]), "line 2: field 'chosen' is empty"),
    (lambda r: r.update(rejected="text"), "line 2: field 'rejected' must be a list"),
    (lambda r: r.update(rejected=[{"role": "user", "content": "x"}]), "line 2: field 'rejected' must end with an assistant"),
    (lambda r: r.pop("prompt"), "line 2: field 'prompt' is missing"),
])
def test_a_bad_pairs_line_is_named(tmp_path, edit, message):
    rows = [pair("a", "b", "c"), pair("d", "e", "f")]
    edit(rows[1])
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError, match=message):
        read_pairs(path)
    assert read_pairs(write_pairs(tmp_path / "ok.jsonl", 3))[0] == {k: pair("Question 0", "good answer ", "bad ")[k]
                                                                   for k in ("prompt", "chosen", "rejected")}


def test_dpo_on_an_sft_subset_is_refused_naming_pairs(tmp_path):
    subset = write_subset(tmp_path / "sft.jsonl", 3)
    proc = subprocess.run([EXE, "train", "--method", "dpo", "--subset", str(subset), "--base", "local:smollm2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "SFT subset" in proc.stderr and "judgeaudit pairs" in proc.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(pair("a", "b", "c")) + "\n" + json.dumps({**pair("a", "b", "c"), "chosen": []}) + "\n")
    proc = subprocess.run([EXE, "train", "--method", "dpo", "--subset", str(bad), "--base", "local:smollm2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "bad.jsonl line 2: field 'chosen' is empty" in proc.stderr


def test_fit_dpo_logs_rewards_and_tensorboard_and_keeps_the_base(tiny, tmp_path):
    import torch
    from peft import PeftModel
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from train._model import load_base
    pairs = write_pairs(tmp_path / "p.jsonl", 24)
    model, tok = load_base(str(tiny))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    cfg = TrainConfig(subset=str(pairs), base=str(tiny), out=str(tmp_path / "run"), max_steps=3, learning_rate=1e-2,
                      method="dpo", report_to="tensorboard")
    peft_model, metrics = fit_dpo(cfg, model, tok)
    out = Path(cfg.out)
    assert metrics["status"] == "finished" and metrics["steps"] == 3 and metrics["tokens_per_s"] > 0
    config = json.loads((out / "config.json").read_text())
    # 24 pairs: round(0.05 x 24) = 1 held for eval; beta 0.1 as asked; no "ref" adapter beside "default"
    assert config["data"] == {"n_pairs": 24, "n_train": 23, "n_eval": 1, "n_dropped": 0} and config["hyper_parameters"]["beta"] == 0.1
    assert list(peft_model.peft_config) == ["default"] and config["method"] == "dpo"
    lines = [json.loads(x) for x in (out / "progress.jsonl").read_text().splitlines()]
    train = [x for x in lines if x["loss"] is not None]
    assert [x["step"] for x in train] == [1, 2, 3]
    # step 1: the policy is the base (lora_B = 0) and so is the reference: rewards 0, loss log 2
    assert train[0]["rewards/chosen"] == 0 and train[0]["rewards/margins"] == 0
    assert train[0]["loss"] == pytest.approx(0.693147, abs=1e-5)
    # afterwards: margins = chosen - rejected, and the margins grew on this easy set
    for x in train:
        assert x["rewards/margins"] == pytest.approx(x["rewards/chosen"] - x["rewards/rejected"], abs=1e-6)
        assert 0 <= x["accuracy"] <= 1
    assert train[-1]["rewards/margins"] > 0 and metrics["rewards/margins"] == train[-1]["rewards/margins"]
    # tensorboard's event file holds the same loss and margins
    events = list((out / "tensorboard").glob("events.out.tfevents.*"))
    acc = EventAccumulator(str(events[0].parent))
    acc.Reload()
    tb = {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
    assert tb["train/loss"] == pytest.approx([x["loss"] for x in train], rel=1e-5)
    assert tb["train/rewards/margins"] == pytest.approx([x["rewards/margins"] for x in train], rel=1e-5, abs=1e-7)
    # the base's weights did not move; a fresh base with the saved adapter gives the trained logits
    base = peft_model.get_base_model()
    params = dict(base.named_parameters())
    for name, value in before.items():
        now = params.get(name.replace(".weight", ".base_layer.weight"), params.get(name))
        if now is not None:
            assert torch.equal(now.detach(), value), name
    peft_model.eval()
    x = torch.tensor([tok.encode("Question 3")])
    with torch.no_grad():
        trained = peft_model(input_ids=x).logits
        fresh, _ = load_base(str(tiny), tokenizer=False)
        reloaded = PeftModel.from_pretrained(fresh, str(out)).eval()(input_ids=x).logits
    assert torch.allclose(trained, reloaded, atol=1e-6)


def test_cancel_stops_dpo_and_saves(tiny, tmp_path):
    from train._model import load_base
    model, tok = load_base(str(tiny))
    cfg = TrainConfig(subset=str(write_pairs(tmp_path / "p.jsonl", 40)), base=str(tiny), out=str(tmp_path / "run"),
                      max_steps=50, method="dpo", eval_share=0)
    _, metrics = fit_dpo(cfg, model, tok, cancelled=lambda: True)
    assert metrics["status"] == "cancelled" and metrics["steps"] == 1
    assert (tmp_path / "run" / "adapter_model.safetensors").exists()


def test_dpo_runs_in_the_background_and_cancels(tiny, tmp_path, db):
    from app.cli import command_line, request_for
    from ingest import runs
    pairs = write_pairs(tmp_path / "p.jsonl", 200)
    request = request_for("train", subset=str(pairs), base=str(tiny), max_steps=400, eval_steps=1000, method="dpo")
    assert "--method" in command_line(request)
    run_id = runs.launch(db, "train", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                         queue="train")
    deadline = time.time() + 180
    while time.time() < deadline:
        row = runs.get_run(db, run_id)
        if (row["progress"] or {}).get("step", 0) >= 2 or row["status"] not in runs.ACTIVE:
            break
        time.sleep(1)
    assert row["status"] == "running", runs.log_tail(db, run_id)
    assert "rewards/margins" in row["progress"]
    runs.cancel(db, run_id, wait_s=60)
    row = runs.get_run(db, run_id)
    out = Path(row["out_dir"])
    assert row["status"] == "cancelled", runs.log_tail(db, run_id)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["status"] == "cancelled" and metrics["method"] == "dpo" and 2 <= metrics["steps"] < 400
    assert (out / "adapter_model.safetensors").exists()


@pytest.mark.slow
def test_bundled_model_two_dpo_steps(tmp_path):
    import torch
    from peft import PeftModel
    from train._model import load_base
    model, tok = load_base("local:smollm2")
    pairs = tmp_path / "p.jsonl"
    words = ["red", "green", "blue", "cyan", "pink", "grey", "gold", "navy"]
    pairs.write_text("".join(json.dumps(pair(f"Say {w}.", f"{w}!", "I will not.")) + "\n" for w in words))
    cfg = TrainConfig(subset=str(pairs), base="local:smollm2", out=str(tmp_path / "run"), max_steps=2, batch_size=4,
                      micro_batch_size=2, method="dpo", eval_share=0)
    peft_model, metrics = fit_dpo(cfg, model, tok)
    assert metrics["steps"] == 2
    lines = [json.loads(x) for x in (tmp_path / "run" / "progress.jsonl").read_text().splitlines()]
    margins = [x["rewards/margins"] for x in lines if x["loss"] is not None]
    assert len(margins) == 2 and margins[0] == 0 and margins[1] != 0
    peft_model.eval()
    x = torch.tensor([tok.encode("Say red.")])
    with torch.no_grad():
        trained = peft_model(input_ids=x).logits
        reloaded = PeftModel.from_pretrained(peft_model.unload(), str(tmp_path / "run")).eval()(input_ids=x).logits
    assert torch.allclose(trained, reloaded, atol=1e-5)
