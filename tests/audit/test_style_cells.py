"""audit.style_rank read grouped per cell in DuckDB with the style counted in polars
(audit/_style_cells.py, issue 29) against a copy of the code before it (every call read with its
strings, each response's style counted in Python, Newton on the calls one by one): the same frame
to 1e-9 (with a bootstrap style_rank fits call by call, as before), on a tie-heavy pool with varied markdown, human labels and two judges,
and on the benchmark's pool whose anchored cells cannot tell the slot from the anchor."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from audit import style_rank
from audit._bias import cell_rng
from audit._read import reading
from audit._rank import _ranks
from audit._style import (COUNTS, FEATURES, _SCHEMA, STYLE_COLUMNS, _boot_fit, _codes, _coefficient_rows, _counts,
                          _human_rows, _interval, _outcome, _with_counts, fit_style, standardise, style_counts,
                          style_features)
from audit._style_cells import identified, style_count_frame
from audit._style_why import why_no_fit
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


# -- the code before issue 29's change: _style_cell verbatim, style_rank's reading and loop --

def _style_cell(cell: pl.DataFrame, labels: pl.DataFrame | None, n_boot: int,
                rng: np.random.Generator, penalty: float = 0.0) -> list[dict]:
    """The rows of STYLE_COLUMNS (without the cell's identity) for one cell."""
    ids, inside, a, b = _codes(cell["a_id"].to_list(), cell["b_id"].to_list())
    cell = cell.filter(pl.Series(inside))
    n, big_n = len(ids), cell.height
    y = _outcome(cell["value"].to_numpy())
    raw = style_features(_counts(cell, "a"), _counts(cell, "b"))
    mean, sd, kept = standardise(raw)
    z = ((raw - mean) / sd)[:, kept]
    fit = fit_style(a, b, y, z, n, penalty=penalty)
    plain = fit_style(a, b, y, np.zeros((big_n, 0)), n, penalty=penalty)
    ok_fit, ok_plain = bool(fit["converged"]), bool(plain["converged"])
    prompts, unit = np.unique(cell["prompt_id"].to_numpy().astype(str), return_inverse=True)
    counts = rng.multinomial(prompts.size, np.full(prompts.size, 1.0 / prompts.size), size=n_boot) \
        .astype(float) if n_boot > 0 else np.zeros((0, prompts.size))
    boot = _boot_fit(a, b, y, z, n, counts[:, unit], fit["theta"], penalty) if n_boot > 0 and ok_fit else None
    ok = boot["converged"] if boot else None

    slot_lo, slot_hi = _interval(boot["slot"]) if boot else (np.nan, np.nan)
    failed = int((~ok).sum()) if boot else 0
    rows = [{"part": "coefficient", "name": "slot", "value": float(fit["slot"]) if ok_fit else None,
             "lo": float(slot_lo), "hi": float(slot_hi), "n": big_n, "converged": ok_fit, "boot_unconverged": failed,
             "why": None if ok_fit else why_no_fit(ids, a, b, y, [f for f, k in zip(FEATURES, kept) if not k])}]
    rows += _coefficient_rows("coefficient", kept, fit["gamma"], boot["gamma"] if boot else None, ok, big_n, ok_fit)
    lo, hi = _interval(boot["beta"]) if boot else (np.full(n, np.nan), np.full(n, np.nan))
    rank, rank_raw = _ranks(fit["beta"], ids), _ranks(plain["beta"], ids)
    for i, s in enumerate(ids):
        rows.append({"part": "system", "name": s, "value": float(fit["beta"][i]) if ok_fit else None,
                     "lo": float(lo[i]), "hi": float(hi[i]),
                     "value_raw": float(plain["beta"][i]) if ok_plain else None,
                     "rank": int(rank[i]) if ok_fit else None, "rank_raw": int(rank_raw[i]) if ok_plain else None,
                     "n": big_n, "converged": ok_fit, "boot_unconverged": failed})
    human = _human_rows(cell, labels, prompts, mean, sd, kept)
    if human is not None:
        h_cell, h_unit = human
        h_ids, h_in, ha, hb = _codes(h_cell["a_id"].to_list(), h_cell["b_id"].to_list())
        h_cell, h_unit = h_cell.filter(pl.Series(h_in)), h_unit[h_in]
        hz = ((style_features(_counts(h_cell, "a"), _counts(h_cell, "b")) - mean) / sd)[:, kept]
        hy = h_cell["y"].to_numpy()
        h_fit = fit_style(ha, hb, hy, hz, len(h_ids), penalty=penalty)
        ok_h = bool(h_fit["converged"])
        h_boot = _boot_fit(ha, hb, hy, hz, len(h_ids), counts[:, h_unit], h_fit["theta"], penalty) \
            if n_boot > 0 and ok_h else None
        h_ok = h_boot["converged"] if h_boot else None
        rows += _coefficient_rows("human", kept, h_fit["gamma"], h_boot["gamma"] if h_boot else None, h_ok,
                                  h_cell.height, ok_h)
        both = boot is not None and h_boot is not None
        with np.errstate(invalid="ignore"):                # inf - inf: NaN, left out of the interval
            excess = boot["gamma"] - h_boot["gamma"] if both else None
        rows += _coefficient_rows("excess", kept, fit["gamma"] - h_fit["gamma"], excess,
                                  ok & h_ok if both else None, h_cell.height, ok_fit and ok_h)
    return rows


def every_call(con, pid: int) -> pl.DataFrame:
    """Every parsed comparative call of the pool between two systems, cell after cell."""
    return pl.concat([con.frame("style_cell_calls", pool_id=pid, judge_id=j, format_id=f, decoding=d)
                      for j, f, _, _, d in con.frame("style_cells", pool_id=pid).iter_rows()])


def old_style_rank(db, pool: str, n_boot: int, seed: int) -> pl.DataFrame:
    with reading(db) as con:
        pid = con.pool_id(pool)
        calls = every_call(con, pid)
        texts = con.frame("style_texts", pool_id=pid)
        labels = con.frame("style_labels", pool_id=pid)
    counts = np.array([style_counts(t) for t in texts["response"].to_list()], dtype=np.int64).reshape(-1, 4)
    table = pl.DataFrame({"cand_idx": texts["cand_idx"], **{c: counts[:, i] for i, c in enumerate(COUNTS)}})
    calls, labels = _with_counts(calls, table), _with_counts(labels, table)
    frames = []
    for (judge, fmt, decoding), cell in calls.group_by("judge", "format", "decoding", maintain_order=True):
        rows = _style_cell(cell, labels, n_boot, cell_rng(seed, judge, fmt, decoding, "style"))
        frames.append(pl.DataFrame(rows, schema={c: t for c, t in _SCHEMA.items() if c not in ("judge", "format", "decoding")})
                      .with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format"),
                                    pl.lit(decoding).alias("decoding")))
    return pl.concat(frames).select(STYLE_COLUMNS).with_columns(pl.selectors.float().fill_nan(None)) \
        .sort("judge", "format", "decoding", maintain_order=True)


MARKDOWN = ["", "# Title\n", "## Sub\n", "- item\n", "* item\n", "1. step\n", "**bold** ", "__bold__ ",
            "```\n# not a header\n- nor a list\n```\n", "plain words ", "\u00a0- odd space\n", "\u0663. digit\n"]


def tied_style_pool(db, folder, n_prompts: int = 80, seed: int = 7) -> None:
    """Tournament verdicts of two judges, mostly ties (no slot bias, little spread), in both orders
    for most pairs, a third of the calls asked twice; responses of varied length and markdown, a few repeated exactly; shuffled,
    unpadded prompt_ids; human labels on a third of the pairs (ties among them)."""
    from ingest.scoring import import_verdicts
    from ingest.store import import_labels, import_pool
    rng = np.random.default_rng(seed)
    rows = synthetic_pool(n_prompts, k_range=(3, 5), seed=seed)
    order = rng.permutation(n_prompts)
    for r in rows:
        r["prompt_id"] = f"q{order[int(r['prompt_id'][1:])]}"
        r["reference"] = 2.0 if r["reference"] is None else 2.0 + 0.2 * (r["reference"] - 2.0)
        if rng.random() < 0.8:                 # else the synthetic text, shared by many rows' style
            r["response"] = "".join(rng.choice(MARKDOWN, int(rng.integers(1, 8)))) + "x" * int(rng.integers(0, 300))
    verdicts = [v for v in synthetic_verdicts(rows, ("alpha", "beta"), seed, unparsed=0.05, swap_rate=0.7,
                                              slot_bias=0.0) if v["format"] == "tournament"]
    labels = [{"prompt_id": v["prompt_id"], "a_id": v["a_id"], "b_id": v["b_id"],
               "label": str(rng.choice(["A", "B", "tie"]))} for v in verdicts[::3] if v["judge"] == "alpha"]
    for k, v in enumerate(list(verdicts)):     # a second sample of some calls: rows that stand for several
        if k % 3 == 0:
            verdicts.append({**v, "sample": 1, "raw": v["raw"] if k % 2 else "TIE"})
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "tied")
    import_verdicts(db, write_jsonl(folder / "verdicts.jsonl", verdicts), "tied")
    import_labels(db, write_jsonl(folder / "labels.jsonl", labels), "tied")


@pytest.mark.parametrize("n_boot,seed", [(0, 0), (50, 3)])
def test_style_rank_equals_the_per_call_code_on_a_tied_pool(db, tmp_path, n_boot, seed):
    tied_style_pool(db, tmp_path)
    old, new = old_style_rank(db, "tied", n_boot, seed), style_rank(db, "tied", n_boot=n_boot, seed=seed)
    with reading(db) as con:
        ties = (every_call(con, con.pool_id("tied"))["value"] == 0).mean()
    assert ties > 0.25, ties                              # a quarter of the calls are ties
    assert set(new["part"]) == {"coefficient", "system", "human", "excess"}
    assert new.filter(pl.col("part") == "coefficient")["value"].is_not_null().sum() >= 8   # features kept, fitted
    assert_frame_equal(new, old, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


def test_style_rank_equals_the_per_call_code_on_the_benchmark_pool(db):
    """bench_app's pool: one response text (every feature dropped), an anchored format whose anchor
    is always in slot B (not identified: where Newton stops is the rounding's, so that cell is fitted
    from its calls one by one, as before) and a tournament (grouped)."""
    from tests.bench.bench_app import build
    build(db, 60, n_judges=2)
    with reading(db) as con:
        calls = every_call(con, con.pool_id("big"))
    for fmt, expected in (("anchored", False), ("tournament", True)):
        cell = calls.filter((pl.col("judge") == "judge") & (pl.col("format") == fmt))
        ids, _, a, b = _codes(cell["a_id"].to_list(), cell["b_id"].to_list())
        assert identified(a, b, np.zeros((a.size, 0)), len(ids), None) is expected
    for n_boot, seed in ((0, 0), (20, 1)):
        old, new = old_style_rank(db, "big", n_boot, seed), style_rank(db, "big", n_boot=n_boot, seed=seed)
        assert new.filter(pl.col("format") == "tournament")["converged"].all()
        assert_frame_equal(new, old, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


def test_identified_by_hand():
    # systems 0, 1, 2; system 2 always in slot B: slot + beta_a - beta_2, so slot and beta_2 are one
    a, b = np.array([0, 1, 0, 1]), np.array([2, 2, 2, 2])
    assert not identified(a, b, np.zeros((4, 0)), 3, None)
    # one call the other way round separates them
    assert identified(np.append(a, 2), np.append(b, 0), np.zeros((5, 0)), 3, None)
    # a feature equal to the slot column (constant 1 after no standardising) is collinear with it
    assert not identified(np.array([0, 1]), np.array([1, 0]), np.ones((2, 1)), 2, np.array([3.0, 2.0]))


def test_style_counts_in_polars_equal_pythons():
    rng = np.random.default_rng(0)
    alphabet = list("ab #*_-+.1\n\t\r `") + ["```", "**", "__", "# ", "###### ", "####### ", "1. ", "- ",
                                             "\u00a0", "\x1c", "\x85", "\u2028", "\u0663", "\U00011f50", "é", "\u3000", "\x0b"]
    texts = ["".join(rng.choice(alphabet, int(rng.integers(0, 60)))) for _ in range(5000)]
    texts += ["# h\n- a\n* b\n10. c\n**x** __y__\n```\n# no\n```\n", "#\n# x", "  - a\n\u00a0-\u00a0b",
              "\x1c1.\x1c", "\U00011f50. x\n\u0663. y", "\n#\t", "** a\nb **"]
    got = style_count_frame(pl.DataFrame({"cand_idx": range(len(texts)), "response": texts}))
    assert got.select(COUNTS).rows() == [style_counts(t) for t in texts]
    assert got.select(COUNTS).sum().row(0) > (0, 0, 0, 0)        # every count met, not all zero


def test_style_fit_on_grouped_rows_equals_the_rows_one_by_one():
    """style_fit on rows standing for several calls against the calls one by one, bootstrap included
    (a well-posed cell, no resample near a separation: the bootstrap refits stop at BOOT_TOL, so the
    intervals agree to 1e-6; style_rank itself bootstraps call by call, as before)."""
    from audit._style_cells import style_fit
    rng = np.random.default_rng(5)
    n_rows, n = 3000, 4
    a = rng.integers(0, n, n_rows)
    b = (a + rng.integers(1, n, n_rows)) % n
    counts_a, counts_b = rng.integers(0, 3, (n_rows, 4)) * [200, 1, 1, 1], rng.integers(0, 3, (n_rows, 4)) * [200, 1, 1, 1]
    raw = style_features(counts_a, counts_b)
    y = np.where(rng.random(n_rows) < 1 / (1 + np.exp(-(a - b) * 0.3 - raw[:, 0])), 1.0, 0.0)
    y[rng.random(n_rows) < 0.3] = 0.5                     # ties
    unit = rng.integers(0, 200, n_rows)
    again = np.repeat(np.arange(n_rows), rng.integers(1, 4, n_rows))     # calls asked up to three times
    a, b, raw, y, unit = a[again], b[again], raw[again], y[again], unit[again]
    key = np.column_stack([unit, a, b, y * 2, raw])
    uniq, first, mult = np.unique(key, axis=0, return_index=True, return_counts=True)
    assert mult.max() == 3 and uniq.shape[0] < a.size * 0.6
    ids = [f"s{i}" for i in range(n)]
    prompts = np.arange(200)
    one = style_fit(ids, a, b, y, raw, None, unit, prompts, None, None, 40, np.random.default_rng(1))
    grouped = style_fit(ids, a[first], b[first], y[first], raw[first], mult.astype(float), unit[first], prompts,
                        None, None, 40, np.random.default_rng(1))
    for r1, r2 in zip(one, grouped):
        assert (r1["part"], r1["name"], r1["n"], r1["converged"]) == (r2["part"], r2["name"], r2["n"], r2["converged"])
        for k, tol in (("value", 1e-9), ("value_raw", 1e-9), ("lo", 1e-6), ("hi", 1e-6)):
            if r1.get(k) is not None and np.isfinite(r1[k]):
                assert r2[k] == pytest.approx(r1[k], abs=tol), (r1["name"], k)
