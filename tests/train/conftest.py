"""Fixtures the fine-tuning tests share."""

import pytest


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny model folder built from a config (tests.train.test_train.build_tiny), once a module."""
    from tests.train.test_train import build_tiny
    return build_tiny(tmp_path_factory.mktemp("tiny") / "model")
