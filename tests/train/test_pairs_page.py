"""The Curate & Train page's preference pairs (app/views/curate/pairs.py): the headline and the losses
chart by hand, the DPO request's command line, and the page through Streamlit AppTest on the hand pool
of test_pairs.py with a DPO run row whose progress.jsonl carries reward margins; the names and data
rules evaluation gives DPO and SFT students."""

import json

import polars as pl
from streamlit.testing.v1 import AppTest

from app.cli import command_line
from app.views.curate import pairs as pp
from ingest.runs import running
from tests.conftest import REPO
from tests.train.test_pairs import hand  # noqa: F401 (the fixture)
from train._conditions import condition_name, data_rule


def test_headline_by_hand():
    row = {"format": "tournament", "kind": "comparative", "pairs": 41, "tied": 0, "flipped": 37, "below_margin": 2,
           "one_order_only": 0}
    assert pp.headline(row, True) == "tournament, both orders: 41 pairs; 37 lost to order flips; 2 below the margin"
    row = {**row, "format": "likert5", "kind": "pointwise", "flipped": 0, "below_margin": 0, "tied": 5}
    assert pp.headline(row, True) == "likert5: 41 pairs; 5 tied"          # a pointwise cell has one order


def test_losses_chart_stacks_pairs_and_each_loss_per_cell():
    table = pl.DataFrame({"format": ["tournament"], "decoding": ["greedy"], "kind": ["comparative"], "pairs": [2],
                          "prompts": [1], "tied": [1], "flipped": [2], "below_margin": [0], "one_order_only": [1]})
    spec = pp.losses_chart(table).to_dict()
    values = next(iter(spec["datasets"].values()))
    assert {(v["outcome"], v["n"]) for v in values} == {("pairs", 2), ("tied", 1), ("order flips", 2),
                                                        ("below the margin", 0), ("one order only", 1)}
    assert spec["encoding"]["color"]["scale"]["domain"] == list(pp.OUTCOMES.values())


def test_dpo_request_pairs_then_trains():
    request = pp.dpo_request("mt", "j", "tournament", None, 1.0, True, "local:smollm2", 0,
                             {"max_steps": 0, "learning_rate": 2e-4})
    words = command_line(request)
    assert words[:1] == ["train"] and "--max-steps" not in words
    for flag, value in (("--method", "dpo"), ("--pool", "mt"), ("--judge", "j"), ("--format", "tournament"),
                        ("--min-margin", "1.0")):
        assert words[words.index(flag) + 1] == value
    assert "--both-orders" in words


def test_students_are_named_with_their_data_rule():
    dpo = {"subset": {"method": "dpo", "judge": "j", "format": "tournament", "decoding": "constrained",
                      "both_orders": True, "min_margin": 0.5, "pairs": 41}}
    assert condition_name(dpo) == "dpo:j/tournament~constrained·both≥0.5"
    assert data_rule(dpo) == "DPO on 41 pairs of j × tournament, margin ≥ 0.5, both orders"
    sft = {"subset": {"policy": "judge", "judge": "j", "format": "likert5", "rate": 0.25}}
    assert condition_name(sft) == "j/likert5@0.25" and data_rule(sft) == "SFT on j/likert5@0.25"


def test_the_page_shows_pairs_losses_and_dpo_margins(hand, monkeypatch):  # noqa: F811
    config = {"curation": {"pool": "hand", "judge": "j", "format": "tournament", "min_margin": 0.0,
                           "both_orders": True, "method": "dpo"}, "seed": 0, "base": "local:smollm2", "method": "dpo"}
    with running(hand, "train", pool="hand", config=config, queue="train") as run:
        (run.out_dir / "progress.jsonl").write_text("".join(json.dumps(
            {"step": s, "loss": 0.69 - 0.1 * s, "rewards/margins": 0.2 * s, "rewards/chosen": 0.1 * s,
             "rewards/rejected": -0.1 * s, "accuracy": 1.0}) + "\n" for s in (1, 2)))
    monkeypatch.setenv("JUDGEAUDIT_DB", str(hand))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/curate/page.py").run()
    assert not at.exception
    at.selectbox(key="format").set_value("tournament").run()
    assert not [m for m in at.markdown if "both orders:" in m.value]     # SFT: no pairs section
    at.radio(key="method").set_value("dpo").run()                 # the Train button now trains DPO
    at.toggle[0].set_value(True).run()
    assert not at.exception
    texts = [m.value for m in at.markdown]
    # the hand pool at margin 0, both orders: c0>c1, c0>c2 kept; p1 and p0's c1-c2 flipped; p2 tied; p3 one order
    assert "**tournament, both orders: 2 pairs; 2 lost to order flips; 1 tied; 1 one order only**" in texts
    codes = [c.value for c in at.code]
    assert any("--method dpo" in c and "--both-orders" in c for c in codes)
    (train,) = [b for b in at.button if b.label == "Train"]
    assert not train.disabled
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    titles = json.dumps([c.proto.spec for c in charts])
    assert "DPO rewards/margins" in titles and "DPO loss" in titles and "order flips" in titles


def test_evaluate_resolves_a_dpo_run_folder_with_its_rule(tmp_path, db):
    from train._conditions import resolve_runs
    folder = tmp_path / "dpo"
    folder.mkdir()
    (folder / "adapter_config.json").write_text("{}")
    (folder / "config.json").write_text(json.dumps({"base": "local:smollm2", "method": "dpo",
                                                    "hyper_parameters": {"seed": 2}, "subset": {
        "method": "dpo", "judge": "j", "format": "tournament", "both_orders": False, "min_margin": 0.0, "pairs": 7,
        "heldout": {"rule": "share", "share": 0.1, "seed": 0, "n": 1}}}))
    dpo, base = resolve_runs(db, [str(folder)])
    assert (dpo.name, dpo.seed, dpo.heldout["rule"]) == ("dpo:j/tournament", 2, "share")
    assert dpo.data_rule == "DPO on 7 pairs of j × tournament, margin ≥ 0, any order"
    assert (base.name, base.data_rule) == ("base", "the base model, untrained")
