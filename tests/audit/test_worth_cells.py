"""audit.estimate with its items built and counted in DuckDB (audit/_worth_cells.py, issue 29) against
a copy of the code before it (the pool's candidates, every score and judged pair joined in polars),
on a tie-heavy pool: pointwise and comparative cells of two judges, pair labels (ties, two
annotators on some pairs, written either way round) and accept labels; both targets, the default
baseline and another one, two alphas: the same frame to 1e-9."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import audit._worth as W
from audit import estimate
from audit._read import AuditError
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


def old_estimate(db, pool: str, target: str, baseline: str | None = None, alpha: float = 0.05) -> pl.DataFrame:
    """audit._worth.estimate as it was before issue 29's change (its helpers are audit._worth's)."""
    d = W.read_estimate_inputs(db, pool)
    if target == "accept":
        items = W.accept_items(d["points"], W.human_values(d["accept_votes"], ["cand_idx"]))
        rows = W._rows(items, alpha, {"target": "accept", "system": None})
    else:
        systems = set(d["cands"]["candidate_id"])
        baseline = baseline if baseline is not None else W.default_baseline(d["cands"], d["pair_votes"])
        if baseline not in systems:
            raise AuditError(f"--baseline {baseline}: not a system (candidate_id) of pool '{pool}'; "
                             f"its systems: {', '.join(sorted(systems)[:20])}")
        humans = W.human_values(d["pair_votes"], ["lo_idx", "hi_idx"])
        items = W.winrate_items(d["cands"], d["points"], d["pairs"], humans, baseline)
        rows = []
        for (system,), g in items.group_by(["system"], maintain_order=True):
            rows += W._rows(g, alpha, {"target": "winrate", "system": system, "baseline": baseline})
        rows.sort(key=lambda r: (r["judge"], r["format"], r["decoding"], r["system"]))
    cols = W.ESTIMATE_COLUMNS + (["baseline"] if target == "winrate" else [])
    schema = {c: pl.Float64 for c in cols} | {c: pl.String for c in ("judge", "format", "decoding", "target",
                                                                      "system", "baseline")} \
        | {"n_labelled": pl.Int64, "n_unlabelled": pl.Int64}
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema={c: schema[c] for c in cols})


def labelled_pool(db, folder, n_prompts: int = 120, seed: int = 3) -> None:
    from ingest.scoring import import_verdicts
    from ingest.store import import_labels, import_pool
    rng = np.random.default_rng(seed)
    rows = synthetic_pool(n_prompts, k_range=(2, 4), seed=seed)
    for r in rows:                       # little spread: many equal scores and TIE verdicts
        r["reference"] = 2.0 if r["reference"] is None else 2.0 + 0.3 * (r["reference"] - 2.0)
    verdicts = synthetic_verdicts(rows, ("alpha", "beta"), seed, unparsed=0.05, swap_rate=0.6, slot_bias=0.0)
    for k, v in enumerate(list(verdicts)):     # a second sample of some calls
        if k % 4 == 0:
            verdicts.append({**v, "sample": 1})
    pairs, accepts = [], []
    by_prompt: dict[str, list[str]] = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], []).append(r["candidate_id"])
    for p, (pid, cands) in enumerate(by_prompt.items()):
        if p % 3 == 0 and len(cands) > 1:
            a, b = (cands[0], cands[1]) if p % 2 else (cands[1], cands[0])
            pairs.append({"prompt_id": pid, "a_id": a, "b_id": b, "label": str(rng.choice(["A", "B", "tie"]))})
            if p % 5 == 0:
                pairs.append({"prompt_id": pid, "a_id": a, "b_id": b, "label": "tie", "annotator": "v"})
        if p % 4 == 0:
            accepts.append({"prompt_id": pid, "candidate_id": cands[-1], "label": str(rng.choice(["accept", "reject"]))})
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "lab")
    import_verdicts(db, write_jsonl(folder / "verdicts.jsonl", verdicts), "lab")
    import_labels(db, write_jsonl(folder / "pairs.jsonl", pairs), "lab")
    import_labels(db, write_jsonl(folder / "accepts.jsonl", accepts), "lab")


@pytest.fixture
def lab_db(db, tmp_path):
    labelled_pool(db, tmp_path)
    return db


@pytest.mark.parametrize("target,baseline,alpha", [("winrate", None, 0.05), ("winrate", "c2", 0.1),
                                                   ("accept", None, 0.05), ("accept", None, 0.2)])
def test_estimate_equals_the_per_item_code(lab_db, target, baseline, alpha):
    old = old_estimate(lab_db, "lab", target, baseline, alpha)
    new = estimate(lab_db, "lab", target, baseline=baseline, alpha=alpha)
    labelled = new.filter(pl.col("n_labelled") > 0)
    assert new.height >= 4 and labelled["ppi_value"].is_not_null().all()
    assert labelled.height >= (4 if baseline is None else 0)      # the labelled pairs are c0's and c1's
    assert set(new["format"]) >= ({"tournament", "likert5"} if target == "winrate" else {"binary", "likert5"})
    assert_frame_equal(new, old, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


def test_default_baseline_and_a_wrong_one_as_before(lab_db):
    assert estimate(lab_db, "lab", "winrate")["baseline"][0] == old_estimate(lab_db, "lab", "winrate")["baseline"][0]
    with pytest.raises(AuditError, match="--baseline nobody: not a system"):
        estimate(lab_db, "lab", "winrate", baseline="nobody")


def old_effective_labels(db, pool: str) -> tuple[dict, str]:
    """audit._judges._effective_labels before issue 29 (both targets' estimates, labels or not)."""
    from audit import estimate
    values: dict = {}
    for target in ("accept", "winrate"):
        try:
            frame = estimate(db, pool, target=target)
        except Exception:
            continue
        if "effective_labels" not in frame.columns:
            continue
        for (judge, fmt, decoding), part in frame.group_by("judge", "format", "decoding"):
            got = part["effective_labels"].drop_nulls()
            if got.len():
                values.setdefault((judge, fmt, decoding), []).extend(got.to_list())
    return {k: float(np.mean(v)) for k, v in values.items()}, "no human labels the estimate can use"


@pytest.mark.parametrize("labelled", [True, False])
def test_judges_skips_the_estimate_of_a_target_without_labels_and_prints_the_same(db, tmp_path, monkeypatch, labelled):
    """The leaderboard's effective labels: the estimate only for the targets with labels of their kind
    (an unlabelled pool runs none), the same frame as before."""
    import audit._judges as J
    if labelled:
        labelled_pool(db, tmp_path)
    else:
        from tests.fixtures import build_db
        build_db(db, tmp_path, n_prompts=40, pool="lab")
    new = J.judges(db, "lab")
    calls = []
    monkeypatch.setattr("audit.estimate", lambda *a, **k: calls.append(k["target"]) or estimate(*a, **k))
    assert J.judges(db, "lab").equals(new) and calls == (["accept", "winrate"] if labelled else [])
    monkeypatch.setattr(J, "_effective_labels", old_effective_labels)
    assert_frame_equal(J.judges(db, "lab"), new, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
    assert new["effective_labels"].is_not_null().any() is labelled
