"""audit.effective_levels (audit/_levels.py): the effective number of score levels D_alpha of a
cell, for each alpha, by hand (the shares' arithmetic in comments) and from scipy's entropy."""

import math

import pytest
import scipy.stats as ss

from audit import effective_levels
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.audit.conftest import candidate, pointwise

pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def test_effective_levels_for_each_alpha(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abcd")]), "p")
    raws = [("q", "a", "2"), ("q", "b", "2"), ("q", "c", "4"), ("q", "d", "5")]
    import_verdicts(db, write_jsonl("v.jsonl", pointwise("j", "likert5", raws)), "p")
    got = {r["alpha"]: r for r in effective_levels(db, "p").to_dicts()}
    # shares p = (1/2, 1/4, 1/4)
    assert got[0.0]["d_alpha"] == 3                                          # distinct values
    assert got[0.5]["d_alpha"] == pytest.approx((math.sqrt(.5) + 2 * math.sqrt(.25)) ** 2)   # 2.914214
    assert got[1.0]["d_alpha"] == pytest.approx(math.exp(ss.entropy([.5, .25, .25])))     # 2.828427
    assert got[2.0]["d_alpha"] == pytest.approx(1 / (.25 + .0625 + .0625))               # 2.666667
    assert got[math.inf]["d_alpha"] == pytest.approx(2.0)                                # 1 / 0.5
    assert {r["n_candidates"] for r in got.values()} == {4}
