"""audit.style_rank read grouped per cell in DuckDB with the style counted in polars
(audit/_style_cells.py) against two references that share none of its reading:

- the per-call path the product keeps beside it, audit.style_rank_calls (every call a row, each
  response's style counted in Python by audit._style.style_counts, Newton on the calls one by one),
  fed with the calls read back through the export (audit.verdict_rows), the responses through
  audit.candidate_texts and the human labels through audit.stored_labels: the same frame to 1e-9
  (the same likelihood summed in another order; a bootstrap reweights the grouped rows per prompt
  with the same multinomial draws as the calls), on a tie-heavy pool with varied markdown, human
  labels and two judges, on the benchmark's pool whose anchored cells cannot tell the slot from the
  anchor, and on an anchored pool with style (the slot held at 0 in both);
- the definition (docs/metrics.md 'Style control'): on small pools whose responses are built from
  known numbers of headers, list items and bold spans, the logistic Bradley-Terry with style features
  refitted here by scipy.optimize.minimize on its log-likelihood: the coefficients and strengths to
  1e-5, and, where an anchor is always in slot B, what the calls tell apart (each system against the
  anchor, the coefficients) to 1e-6."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy.optimize import minimize

from audit import candidate_texts, pool_candidates, stored_labels, style_rank, style_rank_calls, verdict_rows
from audit._style import COUNTS, style_counts, style_features
from audit._style_cells import identified, style_count_frame
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


# -- reference 1: the per-call path, its inputs read through the public audit functions --------------

def pool_texts(db, pool: str) -> pl.DataFrame:
    """Every candidate of the pool (audit.candidate_texts): cand_idx, prompt_idx, prompt_id,
    candidate_id, and its style counts by the per-call path's audit._style.style_counts."""
    n = pool_candidates(db, pool).height
    texts = candidate_texts(db, pool, list(range(n)))
    assert texts.height == n                                  # cand_idx 0..n-1: every candidate
    counts = np.array([style_counts(t) for t in texts["response"].to_list()], np.int64).reshape(-1, 4)
    return texts.select("cand_idx", "prompt_idx", "prompt_id", "candidate_id") \
        .with_columns(**{c: pl.Series(counts[:, i]) for i, c in enumerate(COUNTS)})


def per_call_inputs(db, pool: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(calls, labels) as audit.style_rank_calls takes them: every parsed comparative call between two
    different systems from the export (in call order: prompt, slot A, slot B, sample), every stored
    pair label between two different systems (in file order), each side with its style counts."""
    texts = pool_texts(db, pool)
    by_id = texts.rename({"candidate_id": "cid"})
    calls = verdict_rows(db, pool).filter(
        pl.col("candidate_b").is_not_null() & pl.col("value").is_not_null()
        & (pl.col("candidate_a") != pl.col("candidate_b")))
    for side, col in (("a", "candidate_a"), ("b", "candidate_b")):
        calls = calls.join(by_id.rename({"cand_idx": f"{side}_idx", "cid": col,
                                         **{c: f"{side}_{c}" for c in COUNTS}})
                           .drop("prompt_idx" if side == "b" else []),
                           on=["prompt_id", col], how="left", maintain_order="left")
    calls = calls.sort("judge", "format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample", maintain_order=True) \
        .select("judge", "format", "decoding", "prompt_id", pl.col("candidate_a").alias("a_id"),
                pl.col("candidate_b").alias("b_id"), "value", *[f"{s}_{c}" for s in "ab" for c in COUNTS])
    labels = stored_labels(db, pool).select("a_idx", "b_idx", "label")
    for side in ("a", "b"):
        labels = labels.join(texts.rename({"cand_idx": f"{side}_idx", "candidate_id": f"{side}_id",
                                           "prompt_id": f"{side}_prompt", **{c: f"{side}_{c}" for c in COUNTS}})
                             .drop("prompt_idx"), on=f"{side}_idx", how="left", maintain_order="left")
    labels = labels.filter(pl.col("a_id") != pl.col("b_id")) \
        .select(pl.col("a_prompt").alias("prompt_id"), "a_id", "b_id", "label",
                *[f"{s}_{c}" for s in "ab" for c in COUNTS])
    assert calls.null_count().sum_horizontal().item() == 0 and labels.null_count().sum_horizontal().item() == 0
    return calls, labels


def per_call_style_rank(db, pool: str, n_boot: int, seed: int) -> pl.DataFrame:
    calls, labels = per_call_inputs(db, pool)
    return style_rank_calls(calls, labels if labels.height else None, n_boot=n_boot, seed=seed)


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
def test_style_rank_equals_the_per_call_path_on_a_tied_pool(db, tmp_path, n_boot, seed):
    tied_style_pool(db, tmp_path)
    calls, labels = per_call_inputs(db, "tied")
    assert (calls["value"] == 0).mean() > 0.25, (calls["value"] == 0).mean()     # a quarter of the calls are ties
    assert labels.height > 0 and set(calls["judge"]) == {"alpha", "beta"}
    new = style_rank(db, "tied", n_boot=n_boot, seed=seed)
    assert set(new["part"]) == {"coefficient", "system", "human", "excess"}
    assert new.filter(pl.col("part") == "coefficient")["value"].is_not_null().sum() >= 8   # features kept, fitted
    assert_frame_equal(new, per_call_style_rank(db, "tied", n_boot, seed), check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


def test_style_rank_equals_the_per_call_path_on_the_benchmark_pool(db):
    """bench_app's pool: one response text (every feature dropped), an anchored format whose anchor
    is always in slot B (not identified: the slot held at 0, grouped and per call alike) and a
    tournament."""
    from tests.bench.bench_app import build
    build(db, 60, n_judges=2)
    calls, _ = per_call_inputs(db, "big")
    for fmt, expected in (("anchored", False), ("tournament", True)):
        cell = calls.filter((pl.col("judge") == "judge") & (pl.col("format") == fmt))
        ids, codes = np.unique(np.concatenate([cell["a_id"].to_numpy(), cell["b_id"].to_numpy()]), return_inverse=True)
        a, b = codes[:cell.height], codes[cell.height:]
        assert identified(a, b, np.zeros((a.size, 0)), len(ids), None) is expected
    for n_boot, seed in ((0, 0), (20, 1)):
        new = style_rank(db, "big", n_boot=n_boot, seed=seed)
        assert new["converged"].all()
        assert new.filter((pl.col("format") == "anchored") & (pl.col("name") == "slot"))["value"].null_count() == 2
        assert_frame_equal(new, per_call_style_rank(db, "big", n_boot, seed), check_exact=False,
                           rel_tol=1e-9, abs_tol=1e-9)


# -- reference 2: the definition, refitted by scipy -------------------------------------------------

FENCED = "```\n# not a header\n- nor a list\n**nor bold**\n```\n"      # removed before counting


def built_response(rng) -> tuple[str, tuple[int, int, int, int]]:
    """A response of h header lines, l list-item lines and k bold spans (a fenced block of each
    that does not count, sometimes) and padding: the text and its (chars, headers, lists, bold) by
    construction."""
    h, l, k = (int(v) for v in rng.integers(0, 3, 3))
    text = "# head\n" * h + "- item\n" * l + "**bold** " * k + (FENCED if rng.random() < 0.3 else "") \
        + "x" * int(rng.choice([0, 40, 200]))
    return text, (len(text), h, l, k)


def small_style_pool(db, folder, n_prompts: int = 40, seed: int = 11) -> tuple[list, dict]:
    """Three systems on every prompt, one tournament judge calling every pair in one order or both,
    outcomes drawn from a logistic model with a length effect, a fifth of them ties. Returns the calls
    as (prompt_id, slot A, slot B, y) and each (prompt_id, system)'s counts by construction."""
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    rng = np.random.default_rng(seed)
    strength = {"s0": 0.4, "s1": 0.0, "s2": -0.4}
    rows, counts = [], {}
    for p in range(n_prompts):
        for s in strength:
            text, c = built_response(rng)
            rows.append({"prompt_id": f"q{p}", "prompt": f"prompt {p}", "candidate_id": s, "response": text,
                         "reference": None})
            counts[(f"q{p}", s)] = c
    verdicts, calls = [], []
    for p in range(n_prompts):
        for x, y in (("s0", "s1"), ("s0", "s2"), ("s1", "s2")):
            for a, b in ((x, y), (y, x)) if rng.random() < 0.6 else ((x, y),):
                ca, cb = counts[(f"q{p}", a)], counts[(f"q{p}", b)]
                eta = 0.2 + strength[a] - strength[b] + 1.5 * (ca[0] - cb[0]) / max(1, ca[0] + cb[0])
                u = rng.random()
                label = "TIE" if u < 0.2 else "A+" if u < 0.2 + 0.8 / (1 + np.exp(-eta)) else "B+"
                verdicts.append({"judge": "j", "format": "tournament", "prompt_id": f"q{p}", "a_id": a, "b_id": b,
                                 "raw": label})
                calls.append((f"q{p}", a, b, {"A+": 1.0, "TIE": 0.5, "B+": 0.0}[label]))
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "small")
    import_verdicts(db, write_jsonl(folder / "verdicts.jsonl", verdicts), "small")
    return calls, counts


def features_by_definition(ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """docs/metrics.md: length = (chars_A - chars_B) / (chars_A + chars_B); for headers, lists and
    bold, d = count / (chars + 1) and the feature (d_A - d_B) / (d_A + d_B + 1); each standardised
    (mean 0, population sd 1)."""
    length = (ca[:, 0] - cb[:, 0]) / (ca[:, 0] + cb[:, 0])
    da, db = ca[:, 1:] / (ca[:, :1] + 1), cb[:, 1:] / (cb[:, :1] + 1)
    x = np.column_stack([length, (da - db) / (da + db + 1)])
    return (x - x.mean(axis=0)) / x.std(axis=0)


def scipy_fit(a: np.ndarray, b: np.ndarray, y: np.ndarray, x: np.ndarray, n: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(slot, beta centred, gamma) maximising sum y log p + (1 - y) log(1 - p), logit p = slot +
    beta[a] - beta[b] + x gamma, with every system's beta free (the likelihood does not see their
    mean), by BFGS on the negative log-likelihood and its gradient."""
    q = x.shape[1]

    def minus_loglik(theta):
        slot, beta, gamma = theta[0], theta[1:1 + n], theta[1 + n:]
        eta = slot + beta[a] - beta[b] + x @ gamma
        r = y - 1.0 / (1.0 + np.exp(-eta))                     # d loglik / d eta
        g_beta = np.bincount(a, r, n) - np.bincount(b, r, n)
        return -np.sum(y * eta - np.logaddexp(0.0, eta)), -np.concatenate([[r.sum()], g_beta, x.T @ r])

    fit = minimize(minus_loglik, np.zeros(1 + n + q), jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 10_000})
    assert np.abs(minus_loglik(fit.x)[1]).max() < 1e-8           # at the maximum
    beta = fit.x[1:1 + n]
    return float(fit.x[0]), beta - beta.mean(), fit.x[1 + n:]


def test_style_rank_equals_a_scipy_fit_of_the_definition(db, tmp_path, monkeypatch):
    calls, counts = small_style_pool(db, tmp_path)
    # the grouped fit must answer, not the fallback to the calls one by one
    monkeypatch.setattr("audit._style._style_cell", lambda *a, **k: pytest.fail("fell back to the per-call fit"))
    got = style_rank(db, "small", n_boot=0)
    ids = ["s0", "s1", "s2"]
    a = np.array([ids.index(c[1]) for c in calls])
    b = np.array([ids.index(c[2]) for c in calls])
    y = np.array([c[3] for c in calls])
    x = features_by_definition(np.array([counts[(c[0], c[1])] for c in calls], float),
                               np.array([counts[(c[0], c[2])] for c in calls], float))
    assert 0.1 < (y == 0.5).mean() < 0.35 and x.std(axis=0).min() > 0.99      # ties; every feature varies
    slot, beta, gamma = scipy_fit(a, b, y, x, 3)
    _, beta_raw, _ = scipy_fit(a, b, y, x[:, :0], 3)
    want = {("coefficient", "slot"): (slot, None), **{("coefficient", f): (g, None) for f, g in
                                                       zip(("length", "headers", "lists", "bold"), gamma)},
            **{("system", s): (beta[i], beta_raw[i]) for i, s in enumerate(ids)}}
    assert got["converged"].all() and got["n"].unique().to_list() == [len(calls)]
    assert {(r["part"], r["name"]) for r in got.iter_rows(named=True)} == set(want)
    for r in got.iter_rows(named=True):
        value, raw = want[(r["part"], r["name"])]
        assert r["value"] == pytest.approx(value, abs=1e-5), r
        if raw is not None:
            assert r["value_raw"] == pytest.approx(raw, abs=1e-5), r
    assert abs(gamma[0]) > 0.3                                    # the length effect drawn in is found


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
    intervals agree to 1e-6)."""
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


# -- an anchor always in slot B: the slot effect held at 0, grouped and per call alike ----------------

ANCHOR = "s1"            # not the reference system (s0): the aliased direction is slot + beta_s1


def anchored_style_pool(db, folder, n_prompts: int = 120, seed: int = 23) -> tuple[list, dict]:
    """Systems s0, s2, s3 each compared with the anchor s1, always in slot B, on every prompt, a third of
    the calls asked twice (rows that stand for several calls); responses built from known counts, a
    third of the outcomes ties. Returns the calls as (prompt_id, slot A, slot B, y) and each
    (prompt_id, system)'s counts by construction."""
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    rng = np.random.default_rng(seed)
    strength = {"s0": 0.5, "s1": 0.0, "s2": -0.3, "s3": 0.2}
    rows, counts = [], {}
    for p in range(n_prompts):
        for s in strength:
            text, c = built_response(rng)
            rows.append({"prompt_id": f"q{p}", "prompt": f"prompt {p}", "candidate_id": s, "response": text,
                         "reference": None})
            counts[(f"q{p}", s)] = c
    verdicts, calls = [], []
    for p in range(n_prompts):
        for a in ("s0", "s2", "s3"):
            ca, cb = counts[(f"q{p}", a)], counts[(f"q{p}", ANCHOR)]
            eta = 0.4 + strength[a] - strength[ANCHOR] + 1.2 * (ca[0] - cb[0]) / max(1, ca[0] + cb[0])
            for sample in range(2 if rng.random() < 1 / 3 else 1):
                u = rng.random()
                label = "TIE" if u < 0.33 else "A+" if u < 0.33 + 0.67 / (1 + np.exp(-eta)) else "B+"
                verdicts.append({"judge": "j", "format": "tournament", "prompt_id": f"q{p}", "a_id": a,
                                 "b_id": ANCHOR, "raw": label, "sample": sample})
                calls.append((f"q{p}", a, ANCHOR, {"A+": 1.0, "TIE": 0.5, "B+": 0.0}[label]))
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "anch")
    import_verdicts(db, write_jsonl(folder / "verdicts.jsonl", verdicts), "anch")
    return calls, counts


def scipy_free_fit(a: np.ndarray, b: np.ndarray, y: np.ndarray, x: np.ndarray, n: int) -> np.ndarray:
    """(slot, beta_0..beta_{n-1}, gamma) at a maximum of the log-likelihood, every parameter free (the
    slot and the anchor's strength move together along a ridge of maxima: BFGS stops somewhere on it,
    so only what the calls tell apart is compared), by BFGS on -log L and its gradient."""
    q = x.shape[1]

    def minus_loglik(theta):
        eta = theta[0] + theta[1 + a] - theta[1 + b] + x @ theta[1 + n:]
        r = y - 1.0 / (1.0 + np.exp(-eta))
        g_beta = np.bincount(a, r, n) - np.bincount(b, r, n)
        return -np.sum(y * eta - np.logaddexp(0.0, eta)), -np.concatenate([[r.sum()], g_beta, x.T @ r])

    fit = minimize(minus_loglik, np.zeros(1 + n + q), jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 10_000})
    assert np.abs(minus_loglik(fit.x)[1]).max() < 1e-8
    return fit.x


@pytest.mark.parametrize("n_boot", [0, 30])
def test_an_anchor_always_in_slot_b_grouped_equals_per_call_and_scipy(db, tmp_path, n_boot):
    calls, counts = anchored_style_pool(db, tmp_path)
    got = style_rank(db, "anch", n_boot=n_boot, seed=4)
    per_call, _ = per_call_inputs(db, "anch")
    assert (per_call["value"] == 0).mean() > 0.25 and per_call.height == len(calls) > 120 * 3   # ties; repeats
    # the grouped rows and the calls one by one: the same frame (the same resamples too)
    assert_frame_equal(got, style_rank_calls(per_call, None, n_boot=n_boot, seed=4), check_exact=False,
                       rel_tol=1e-9, abs_tol=1e-9)
    rows = {(r["part"], r["name"]): r for r in got.iter_rows(named=True)}
    slot = rows[("coefficient", "slot")]
    assert slot["converged"] and slot["value"] is None and slot["lo"] is None
    assert slot["why"].startswith("Slot effect not told apart: s1 is always in slot B")
    # scipy on the definition, every parameter free: what the calls tell apart must agree
    ids = ["s0", "s1", "s2", "s3"]
    a = np.array([ids.index(c[1]) for c in calls])
    b = np.array([ids.index(c[2]) for c in calls])
    y = np.array([c[3] for c in calls])
    x = features_by_definition(np.array([counts[(c[0], c[1])] for c in calls], float),
                               np.array([counts[(c[0], c[2])] for c in calls], float))
    assert x.std(axis=0).min() > 0.99                                        # every feature varies
    for z, key in ((x, "value"), (x[:, :0], "value_raw")):
        theta = scipy_free_fit(a, b, y, z, 4)
        # with the slot held at 0, beta_s - beta_s1 is the free fit's slot + beta_s - beta_s1
        beta = np.array([rows[("system", s)][key] for s in ids])
        for s in ("s0", "s2", "s3"):
            i = ids.index(s)
            assert beta[i] - beta[1] == pytest.approx(theta[0] + theta[1 + i] - theta[2], abs=1e-6), (key, s)
        assert beta.mean() == pytest.approx(0, abs=1e-12)
        if key == "value":
            for f, g in zip(("length", "headers", "lists", "bold"), theta[5:]):
                assert rows[("coefficient", f)]["value"] == pytest.approx(g, abs=1e-6), f
    if n_boot:
        assert all(rows[("system", s)]["lo"] < rows[("system", s)]["value"] < rows[("system", s)]["hi"] for s in ids)
        assert rows[("coefficient", "length")]["lo"] < rows[("coefficient", "length")]["hi"]


def test_held_out_by_hand():
    from audit._style_fit import held_out
    # theta = (slot, beta_1, beta_2) of systems 0, 1, 2 (system 0 the reference); system 2 always in slot B:
    # the rows' columns are (1, 0, -1) and (1, 1, -1), so the slot's column (1, 1, 1, 1) is minus beta_2's
    # (-1, -1, -1, -1): the slot, kept after the systems, is held
    a, b = np.array([0, 1, 0, 1]), np.array([2, 2, 2, 2])
    assert held_out(a, b, np.zeros((4, 0)), 3, None).tolist() == [True, False, False]
    # both orders: nothing held; a feature of +1 when system 0 is in slot A and -1 when in slot B is minus
    # beta_1's column (+1 when system 1 is in slot A): held, whatever the weights
    a2, b2 = np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0])
    x = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    assert held_out(a2, b2, np.zeros((4, 0)), 2, None).tolist() == [False, False]
    assert held_out(a2, b2, x, 2, np.array([5.0, 1.0, 2.0, 7.0])).tolist() == [False, False, True]
    # a feature independent of both (it varies within an order) is kept
    assert held_out(a2, b2, np.array([[1.0], [0.0], [-1.0], [2.0]]), 2, None).tolist() == [False, False, False]


def test_a_separation_over_many_calls_is_no_fit_grouped_and_per_call():
    """s0 never loses (to s1, in both slots, and to s2); s1 and s2 split theirs. With each row standing
    for 30,000 calls Newton stops once s0's chance rounds to 1 (its rows' terms to 0): it 'converges' some
    25 log-odds out, at a point the rounding picks (the calls one by one stop elsewhere). finite_fit
    calls both what they are, no finite fit: null numbers and the reason, the same grouped and per call."""
    from audit._style_cells import style_fit
    from audit._style_fit import fit_style
    a = np.array([0, 1, 2, 1, 2, 0, 2, 1])
    b = np.array([1, 0, 1, 2, 0, 2, 1, 2])
    y = np.array([1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0, 1.0])
    mult = np.full(a.size, 30_000.0)
    rep = np.repeat(np.arange(a.size), 30_000)
    grouped_raw = fit_style(a, b, y, np.zeros((a.size, 0)), 3, w=mult)
    per_call_raw = fit_style(a[rep], b[rep], y[rep], np.zeros((rep.size, 0)), 3)
    assert grouped_raw["converged"] and per_call_raw["converged"] and grouped_raw["beta"][0] > 15
    assert abs(grouped_raw["beta"][0] - per_call_raw["beta"][0]) > 1e-6          # the rounding's
    ids = ["s0", "s1", "s2"]
    raw = np.zeros((a.size, 4))                                                   # no style varies
    grouped = style_fit(ids, a, b, y, raw, mult, np.zeros(a.size, np.int64), np.arange(1), None, None, 0,
                        np.random.default_rng(0))
    per_call = style_fit(ids, a[rep], b[rep], y[rep], raw[rep], None, np.zeros(rep.size, np.int64), np.arange(1),
                         None, None, 0, np.random.default_rng(0))
    assert_frame_equal(pl.DataFrame(grouped), pl.DataFrame(per_call))              # NaN = NaN: no interval
    assert not any(r["converged"] for r in grouped)
    assert all(r.get(k) is None for r in grouped for k in ("value", "value_raw", "rank", "rank_raw"))
    assert grouped[0]["why"].startswith("Separation: s0 never lost a comparison")


def test_separated_by_hand():
    from audit._style_fit import separated
    free = np.zeros(2, bool)                 # theta = (slot, beta_y); x (0) is the reference
    # x (0) and y (1) each win once and lose once in slot A: eta = slot - beta_y on x's rows, slot + beta_y on
    # y's, and each sign meets a row against it: no direction
    a, b, y = np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0]), np.array([1.0, 0.0, 1.0, 0.0])
    assert not separated(a, b, y, np.zeros((4, 0)), 2, free)
    # y's win in slot A turned into a loss: y never won, slot + beta_y -> -inf separates
    assert separated(a, b, np.array([1.0, 0.0, 0.0, 0.0]), np.zeros((4, 0)), 2, free)
    # ties are half a win each way: x's win and y's loss turned into ties leave eta = 0 on every row
    assert not separated(a, b, np.array([0.5, 0.0, 1.0, 0.5]), np.zeros((4, 0)), 2, free)
    # the longer response always wins, the systems split: separated by the feature
    z = np.array([[1.0], [-1.0], [0.5], [-0.5]])
    a4, b4, y4 = np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0]), np.array([1.0, 0.0, 1.0, 0.0])
    assert separated(a4, b4, y4, z, 2, np.zeros(3, bool))
    # held parameters are not directions: the slot held, an anchor design whose outcomes only the slot splits
    assert not separated(np.array([0, 0]), np.array([1, 1]), np.array([1.0, 0.0]), np.zeros((2, 0)), 2,
                         np.array([True, False]))


def test_a_finite_fit_beyond_15_keeps_its_numbers():
    """Slot A wins 5,000,000 calls to 1 each way round (x and y alike): a finite maximum at slot =
    log(5e6) = 15.42 (the systems equal), beyond 15 but not separated: its numbers stay, grouped in one
    row per outcome or split in two half rows alike. Without the losses slot A always wins: separated,
    no finite fit (null numbers)."""
    from audit._style_cells import style_fit
    a, b = np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0])
    y, mult = np.array([1.0, 0.0, 1.0, 0.0]), np.array([5e6, 1.0, 5e6, 1.0])
    raw, unit, prompts = np.zeros((4, 4)), np.zeros(4, np.int64), np.arange(1)
    rows = style_fit(["x", "y"], a, b, y, raw, mult, unit, prompts, None, None, 0, np.random.default_rng(0))
    split = np.array([0, 0, 1, 2, 2, 3])
    halves = style_fit(["x", "y"], a[split], b[split], y[split], raw[split], np.array([2.5e6, 2.5e6, 1, 2.5e6, 2.5e6, 1]),
                       unit[split], prompts, None, None, 0, np.random.default_rng(0))
    assert_frame_equal(pl.DataFrame(rows), pl.DataFrame(halves), check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
    slot = rows[0]
    assert slot["converged"] and slot["value"] == pytest.approx(np.log(5e6), abs=1e-6) and slot["value"] > 15
    assert [r["value"] for r in rows if r["part"] == "system"] == pytest.approx([0.0, 0.0], abs=1e-6)
    won = np.array([0, 2])
    gone = style_fit(["x", "y"], a[won], b[won], y[won], raw[won], mult[won], unit[won], prompts, None, None, 0,
                     np.random.default_rng(0))
    assert not gone[0]["converged"] and gone[0]["value"] is None


# -- the pool's style counts: counted once per pool, read by every judging's refresh ---------------------

def test_pool_style_counts_in_batches_equal_pythons_per_text(db, tmp_path, monkeypatch):
    """Every candidate of the tied pool counted by audit._style.style_counts in Python, one text at a
    time, against pool_style_counts read in batches of 7 cand_idx (a batch boundary inside prompts)."""
    import audit._style_cells as cells
    tied_style_pool(db, tmp_path, n_prompts=30)
    monkeypatch.setattr(cells, "POOL_BATCH", 7)
    got = cells.pool_style_counts(db, "tied")
    want = pool_texts(db, "tied")
    assert got.height == want.height > 7 * 3
    assert got["cand_idx"].to_list() == want["cand_idx"].to_list()
    for c in COUNTS:
        assert got[c].to_list() == want[c].to_list(), c
    assert int(want["headers"].sum()) > 0 and int(want["lists"].sum()) > 0 and int(want["bold"].sum()) > 0


def test_style_counts_are_computed_once_per_pool_and_again_when_it_is_replaced(db, tmp_path, monkeypatch):
    """A refresh stores the pool's style counts; a judge whose verdicts come later refreshes style_rank's
    parts of its judgings without counting a text (the stored counts read); the result equals the
    per-call path. The pool replaced with other texts: the counts are made again, from the new texts."""
    import audit._style_cells as cells
    from audit import derived
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    from train.derived_results import DERIVED_RESULTS
    rows = synthetic_pool(40, k_range=(3, 4), seed=5)
    rng = np.random.default_rng(5)
    for r in rows:
        r["response"] = "".join(rng.choice(MARKDOWN, int(rng.integers(1, 6)))) + "y" * int(rng.integers(0, 200))
    verdicts = [v for v in synthetic_verdicts(rows, ("alpha", "beta"), 5, swap_rate=0.5)
                if v["format"] == "tournament"]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    import_verdicts(db, write_jsonl(tmp_path / "a.jsonl", [v for v in verdicts if v["judge"] == "alpha"]), "p")
    texts_counted = []
    real = cells.style_count_frame
    monkeypatch.setattr(cells, "style_count_frame", lambda texts: texts_counted.append(texts.height) or real(texts))
    derived.refresh(db, "p", DERIVED_RESULTS)
    assert sum(texts_counted) == len(rows)                    # every candidate once, by style_counts
    import_verdicts(db, write_jsonl(tmp_path / "b.jsonl", [v for v in verdicts if v["judge"] == "beta"]), "p")
    texts_counted.clear()
    done = {r["name"]: r for r in derived.refresh(db, "p", DERIVED_RESULTS)["results"]}
    assert done["style_rank"]["computed"] == 1 and done["style_counts"]["status"] == "current"
    assert texts_counted == []                                # the new judging's part counted no text
    assert_frame_equal(derived.read(db, "p", "style_rank", 0, 0, results=DERIVED_RESULTS),
                       per_call_style_rank(db, "p", 0, 0), check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
    for r in rows:
        r["response"] = "## head\n- one\n- two\n**b** " + r["response"]
    import_pool(db, write_jsonl(tmp_path / "pool2.jsonl", rows), "p", replace=True)
    assert cells.stored_style_counts(db, "p") is None          # deleted with the old pool
    derived.refresh(db, "p", DERIVED_RESULTS)
    stored = cells.stored_style_counts(db, "p")
    want = pool_texts(db, "p")
    assert stored["headers"].to_list() == want["headers"].to_list() and min(want["lists"]) >= 2
    assert stored["chars"].to_list() == want["chars"].to_list()
