"""Kill anywhere (issue 25 §6): each long command, SIGKILLed at seeded points drawn from [0, T],
leaves a database that opens, shows its killed run as dead, and re-runs to the rows of a run never
killed, none twice (tests/kill/harness.py says how each is checked).

Ten points per command (JUDGEAUDIT_KILL_POINTS=N for another number): `make test` runs the first two
of each command (the first one of train and evaluate, which load the bundled model), `make test-slow`
the rest (marked slow); a point's delay is the same in both. JUDGEAUDIT_KILL_LOG=FILE appends what
each point found.
"""

import shutil
from pathlib import Path

import pytest

from .commands import Inputs, commands
from .harness import kill_point, kill_points, log, reference

NAMES = ("import-pool", "import-verdicts", "score", "score --batch-out", "import-batch", "demo", "curate",
         "train", "evaluate")
MODEL = {"train", "evaluate"}       # load the bundled 135M model: tens of seconds a run
FAST = 2                            # points per command in `make test` (1 for MODEL); the rest are slow


def points() -> list:
    """(name, point) for every command and point, those past a command's fast ones marked slow."""
    return [pytest.param(name, point, marks=pytest.mark.slow) if point >= (1 if name in MODEL else FAST)
            else (name, point) for name in NAMES for point in range(kill_points())]


@pytest.fixture(scope="session")
def bench(tmp_path_factory):
    """bench(name, model) -> (Command, base folder, Reference), each made on first use; the trained adapter
    of train's reference is evaluate's input, `model` (the bundled model's folder, saved once a session:
    tests/conftest.py) train's base."""
    root = tmp_path_factory.mktemp("kill")
    made, model = {}, {}

    def get(name: str, folder_of_model: Path | None = None):
        if folder_of_model is not None:
            model.setdefault("folder", folder_of_model)
        if name not in made:
            cmd = cmds[name]
            folder = root / name.replace(" ", "").replace("-", "_")
            base = folder / "base"
            base.mkdir(parents=True)
            cmd.prepare(base)
            made[name] = (cmd, base, reference(cmd, base, folder / "reference"))
        return made[name]

    cmds = commands(Inputs(root / "inputs"), lambda: get("train")[2].folder / "adapter", lambda: model["folder"])
    return get


@pytest.mark.parametrize("name,point", points())
def test_a_command_killed_anywhere_opens_shows_dead_and_reruns_to_the_same_rows(bench, name, point, request):
    # train and evaluate: the bundled model's folder, asked for only by them (the others load no model)
    cmd, base, ref = bench(name, request.getfixturevalue("bundled_model_folder") if name in MODEL else None)
    folder = base.parent / f"point-{point}"
    rec = kill_point(cmd, base, folder, point, ref)
    log(rec)
    assert not rec.problems, (f"{name}, point {point}: killed after {rec.delay_s} s of {rec.reference_s} s "
                              f"({rec.phase}; {rec.killed_run or 'no run recorded'}):\n  " + "\n  ".join(rec.problems))
    shutil.rmtree(folder)        # a failing point's folder stays, to look into


# -- regressions the kill points found, each at the one point that finds it ----------------------------

DEMO_VERDICTS = ("SELECT p.name, j.name, f.name, v.prompt_idx, v.a_idx, v.b_idx, v.sample, v.raw, v.status "
                 "FROM verdicts v JOIN pools p USING (pool_id) JOIN judges j USING (judge_id) "
                 "JOIN formats f USING (format_id) ORDER BY ALL")


def test_a_demo_seeding_killed_between_a_pool_and_its_verdicts_resumes_with_the_verdicts(tmp_path):
    """`demo` killed after a pool's transaction and before its verdict file's left the pool without
    verdicts, and the next seeding, seeing the pool present, never imported them."""
    from ingest.demo import DEMO_POOLS, HERE, seed_demo
    from ingest.store import import_pool
    from tests.conftest import query_rows
    name, pool_file, _ = DEMO_POOLS[2]            # llmbar: where a kill point of `demo` found it
    whole, killed = tmp_path / "whole.duckdb", tmp_path / "killed.duckdb"
    assert seed_demo(whole, pools=(name,)) == [name]
    import_pool(killed, HERE / pool_file, name)   # what the kill left: the pool's transaction alone
    seed_demo(killed, pools=(name,))
    want = query_rows(whole, DEMO_VERDICTS)
    assert len(want) > 1000 and query_rows(killed, DEMO_VERDICTS) == want


def test_the_bundled_models_folder_loads_to_its_weights_and_tokenizer(bundled_model_folder, bundled_judge):
    """What the kill points of train and evaluate fine-tune (tests/conftest.py's bundled_model_folder):
    the folder loads, as `--base FOLDER` loads it (train._model.load_base), to the bundled model's own
    float32 weights, tensor for tensor, and its tokenizer reads a chat turn to the same token ids."""
    import torch
    from train._model import load_base
    model, tok = load_base(str(bundled_model_folder), dtype=torch.float32, device="cpu")
    want, got = bundled_judge.lm.state_dict(), model.state_dict()
    assert len(want) > 200 and sorted(got) == sorted(want)
    assert [k for k in want if not torch.equal(got[k], want[k])] == []
    turn = bundled_judge.tokenizer.apply_chat_template([{"role": "user", "content": "Rate this answer from 1 to 5."}],
                                                       tokenize=False, add_generation_prompt=True)
    assert len(tok(turn)["input_ids"]) > 10 and tok(turn)["input_ids"] == bundled_judge.tokenizer(turn)["input_ids"]
