"""The effective batch is micro batch x accumulation steps x processes, exactly: a batch size that
does not divide is refused before any model is loaded, never silently changed."""

import pytest

from ingest import UserError
from train.finetune import TrainConfig, accumulation_steps


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
    with pytest.raises(UserError, match=r"--micro-batch-size 3 \(3\): choose"):
        accumulation_steps(8, 3, 1)


def test_config_check_refuses_it_before_training(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    TrainConfig(subset="s", base="b", out="o", batch_size=8, micro_batch_size=4).check()
    with pytest.raises(UserError, match="not a multiple"):
        TrainConfig(subset="s", base="b", out="o", batch_size=8, micro_batch_size=3).check()
    monkeypatch.setenv("WORLD_SIZE", "4")      # under `accelerate launch` on four GPUs: 4 x 4 > 8
    with pytest.raises(UserError, match="x 4 processes"):
        TrainConfig(subset="s", base="b", out="o", batch_size=8, micro_batch_size=4).check()
