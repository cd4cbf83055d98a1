"""Intransitive tournaments (docs/metrics.md#intransitive-tournaments): a transitive judge gives 0, a
judge with planted cycles gives its planted rate, and on random verdicts (ties, both orders, orders that
disagree, samples) the module equals a slow reference that walks every triad of every prompt; the
bootstrap interval over prompts by hand; `audit --json` and the Formats page carry it."""

import itertools
import json

import numpy as np
import pytest

from audit import intransitivity
from audit._intransitive import pooled_share
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.audit.conftest import main_json
from tests.fixtures import write_jsonl


def _pool(tmp_path, sizes: list[int]):
    db = tmp_path / "t.duckdb"
    rows = [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": f"c{c}", "response": f"answer {c} to {p}"}
            for p, k in enumerate(sizes) for c in range(k)]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "t")
    return db


def _import(db, tmp_path, calls, judge="j"):
    """calls: (prompt, a, b, raw[, sample]) with candidates as numbers."""
    rows = [{"judge": judge, "format": "tournament", "prompt_id": f"p{c[0]}", "a_id": f"c{c[1]}", "b_id": f"c{c[2]}",
             "raw": c[3], **({"sample": c[4]} if len(c) > 4 else {})} for c in calls]
    import_verdicts(db, write_jsonl(tmp_path / f"{judge}.jsonl", rows), "t")


def _winner_calls(prompt, k, beats):
    """One call per pair (the earlier-listed candidate in slot A): A+ when beats(a, b), else B+."""
    return [(prompt, a, b, "A+" if beats(a, b) else "B+") for a, b in itertools.combinations(range(k), 2)]


def test_a_transitive_judge_makes_no_cycle(tmp_path):
    db = _pool(tmp_path, [5, 4, 6])
    # each prompt's candidates ranked by a fixed order: the later-numbered one wins on even prompts,
    # the earlier on odd ones; C(5,3) + C(4,3) + C(6,3) = 10 + 4 + 20 = 34 triads, none a cycle
    calls = [c for p, k in enumerate([5, 4, 6]) for c in _winner_calls(p, k, lambda a, b, p=p: (a < b) == (p % 2 == 1))]
    _import(db, tmp_path, calls)
    (row,) = intransitivity(db, "t").to_dicts()
    assert (row["intransitive_triads"], row["intransitive_cycles"], row["intransitive_prompts"]) == (34, 0, 3)
    assert (row["intransitive_share"], row["intransitive_lo"], row["intransitive_hi"]) == (0.0, 0.0, 0.0)
    assert row["intransitive_random"] == 0.25


def test_a_planted_cycle_rate(tmp_path):
    # 40 prompts of three candidates (one triad each); on 12 of them (30%) the judge goes round:
    # 0 beats 1, 1 beats 2, 2 beats 0; elsewhere 0 > 1 > 2
    db = _pool(tmp_path, [3] * 40)
    calls = []
    for p in range(40):
        cyclic = p % 10 in (1, 4, 7)          # 12 of 40
        calls += [(p, 0, 1, "A+"), (p, 1, 2, "A++"), (p, 0, 2, "B+" if cyclic else "A+")]
    _import(db, tmp_path, calls)
    (row,) = intransitivity(db, "t").to_dicts()
    assert (row["intransitive_triads"], row["intransitive_cycles"]) == (40, 12)
    assert row["intransitive_share"] == pytest.approx(0.3)
    assert row["intransitive_lo"] < 0.3 < row["intransitive_hi"]


def test_a_coin_flipping_judge_is_near_a_quarter(tmp_path):
    rng = np.random.default_rng(3)
    sizes = [6] * 60
    db = _pool(tmp_path, sizes)
    calls = [c for p, k in enumerate(sizes) for c in _winner_calls(p, k, lambda a, b: rng.random() < 0.5)]
    _import(db, tmp_path, calls)
    (row,) = intransitivity(db, "t").to_dicts()
    assert row["intransitive_triads"] == 60 * 20
    assert row["intransitive_lo"] <= 0.25 <= row["intransitive_hi"]


def reference(calls) -> tuple[int, int, int]:
    """(triads, cycles, prompts) by walking every triad: a pair is decided when its sample-0 calls all
    prefer one candidate (none a TIE)."""
    margin = {"A++": 2, "A+": 1, "TIE": 0, "B+": -1, "B++": -2}
    votes: dict = {}
    for c in calls:
        if (c[4] if len(c) > 4 else 0) != 0 or c[3] not in margin:
            continue
        p, a, b, m = c[0], c[1], c[2], margin[c[3]]
        lo, hi = min(a, b), max(a, b)
        votes.setdefault((p, lo, hi), []).append(np.sign(m) * (1 if a < b else -1))
    winner = {key: (key[1] if s[0] > 0 else key[2]) for key, s in votes.items() if len(set(s)) == 1 and s[0] != 0}
    triads = cycles = 0
    prompts = set()
    for p in {k[0] for k in votes}:
        cands = sorted({x for k in votes if k[0] == p for x in k[1:]})
        for x, y, z in itertools.combinations(cands, 3):
            edges = [(p, x, y), (p, y, z), (p, x, z)]
            if all(e in winner for e in edges):
                triads += 1
                prompts.add(p)
                w = {winner[e] for e in edges}
                cycles += len(w) == 3             # each candidate wins once: a cycle
    return triads, cycles, len(prompts)


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_a_reference_on_random_verdicts(tmp_path, seed):
    rng = np.random.default_rng(seed)
    sizes = [int(k) for k in rng.integers(2, 7, 25)]
    db = _pool(tmp_path, sizes)
    labels = ["A++", "A+", "TIE", "B+", "B++", "nonsense"]
    calls = []
    for p, k in enumerate(sizes):
        for a, b in itertools.combinations(range(k), 2):
            if rng.random() < 0.1:
                continue                                        # a pair never asked
            calls.append((p, a, b, labels[rng.choice(6, p=[.2, .25, .1, .25, .15, .05])]))
            if rng.random() < 0.4:                              # asked again, the other way round
                calls.append((p, b, a, labels[rng.choice(6, p=[.2, .25, .1, .25, .15, .05])]))
            if rng.random() < 0.2:                              # a second sample: not counted
                calls.append((p, a, b, labels[rng.integers(0, 5)], 1))
    calls = [c if len(c) > 4 else (*c, 0) for c in calls]
    _import(db, tmp_path, calls)
    got = intransitivity(db, "t").to_dicts()
    triads, cycles, prompts = reference(calls)
    if triads == 0:
        assert got == []
        return
    (row,) = got
    assert (row["intransitive_triads"], row["intransitive_cycles"], row["intransitive_prompts"]) == \
        (triads, cycles, prompts)
    assert row["intransitive_share"] == pytest.approx(cycles / triads)


def test_the_bootstrap_over_prompts_by_hand():
    # two prompts: 1 cycle of 4 triads and 0 of 1. Resampling two prompts: (A, A) 2/8, (A, B) or (B, A)
    # 1/5, (B, B) 0/2; the 2.5th percentile is 0 once (B, B) is drawn more than 2.5% of the time
    # (a quarter of draws), the 97.5th 0.25
    got = pooled_share(np.array([1, 0]), np.array([4, 1]), 4000, np.random.default_rng(0))
    assert got["share"] == pytest.approx(1 / 5)
    assert (got["lo"], got["hi"]) == (0.0, 0.25)
    assert pooled_share(np.array([0]), np.array([0]), 10, np.random.default_rng(0))["share"] is None


def _by_index(cycles, triads, n_boot, rng):
    """The bootstrap as first written: prompts drawn by index, n_boot x n of them (the reference the
    multinomial draw of the prompts' kinds is compared with)."""
    idx = rng.integers(0, triads.size, size=(n_boot, triads.size))
    boot = cycles[idx].sum(axis=1) / triads[idx].sum(axis=1)
    return np.percentile(boot, 2.5), np.percentile(boot, 97.5)


def test_the_bootstrap_by_kinds_draws_what_the_bootstrap_by_prompts_draws():
    # the resampling scheme changed (multinomial counts of the prompts' kinds, not n_boot x n indices):
    # by simulation, over 30 pools of 400 prompts with 1 to 4 triads and a planted cycle rate, the two
    # intervals' ends agree to within Monte Carlo noise (both 4,000 draws; the intervals are about 0.05
    # wide, their ends measured 0.0015 apart at most), and neither scheme's ends sit on one side of the other's
    gaps = []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        triads = rng.integers(1, 5, size=400)
        cycles = rng.binomial(triads, rng.uniform(0.05, 0.4))
        new = pooled_share(cycles, triads, 4000, np.random.default_rng(100 + seed))
        lo, hi = _by_index(cycles.astype(float), triads.astype(float), 4000, np.random.default_rng(200 + seed))
        gaps += [new["lo"] - lo, new["hi"] - hi]
        assert new["lo"] < new["share"] < new["hi"]
    gaps = np.array(gaps)
    assert np.abs(gaps).max() < 0.005
    assert abs(gaps.mean()) < 0.001


def test_audit_json_carries_it_on_the_tournament_cells(tmp_path, capsys):
    db = _pool(tmp_path, [3] * 10)
    _import(db, tmp_path, [c for p in range(10) for c in [(p, 0, 1, "A+"), (p, 1, 2, "A+"), (p, 0, 2, "B+")]])
    pointwise = [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": f"c{c}", "raw": "3"}
                 for p in range(10) for c in range(3)]
    import_verdicts(db, write_jsonl(tmp_path / "likert.jsonl", pointwise), "t")
    doc = main_json(capsys, "audit", "--db", str(db), "--pool", "t", "--json")
    cells = {c["format"]: c for c in doc["cells"]}
    t = cells["tournament"]
    assert (t["intransitive_share"], t["intransitive_triads"], t["intransitive_prompts"], t["intransitive_random"]) == \
        (1.0, 10, 10, 0.25)
    assert "intransitive_share" not in cells["likert5"]
    json.dumps(doc)
