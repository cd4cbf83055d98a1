"""Repeat consistency (audit/_consistency.py) and the aggregated cell (aggregate = mean), each number
against an independent computation with its arithmetic in a comment."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from audit import CONSISTENCY_COLUMNS, audit_cells, consistency
from audit._consistency import (alpha_from_coincidences, bootstrap_alpha, consistency_row, krippendorff_alpha,
                                samples_for_alpha, scale_level, unit_counts)
from ingest.scoring import import_verdicts
from ingest.store import import_pool

ROOT = Path(__file__).resolve().parents[2]
NAN = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12
# units, values 1..5, missing marked NaN. Published: nominal .743, ordinal .815, interval .849.
TEXTBOOK = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],       # observer A
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],           # observer B
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],         # observer C
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],           # observer D
])


def _textbook():
    """(unit, sample, value) of the textbook table: an observer is a sample of the unit."""
    return np.tile(np.arange(12), 4), np.repeat(np.arange(4), 12), TEXTBOOK.ravel()


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_on_the_textbook_example(level, published):
    # Unit 12 has one value: not pairable, n = 40 pairable values, n_c = 9, 13, 10, 5, 3 for 1..5.
    # Nominal: disagreeing coincidences (each ordered pair of a unit weighs 1/(m-1)): unit 2
    # (2,2,3,2): 6 pairs / 3 = 2; unit 6 (1,2,3,4): 12 / 3 = 4; unit 8 (1,1,2,1): 6 / 3 = 2; sum 8.
    # alpha = 1 - (n-1) * 8 / (n^2 - Σ n_c^2) = 1 - 39 * 8 / (1600 - (81 + 169 + 100 + 25 + 9))
    #       = 1 - 312 / 1216 = 0.7434
    unit, _, value = _textbook()
    assert round(krippendorff_alpha(unit, value, level), 3) == published
    if level == "nominal":
        assert krippendorff_alpha(unit, value, level) == pytest.approx(1 - 312 / 1216)


def _brute_alpha(units: list[list[float]], level: str) -> float:
    """Krippendorff's alpha from the definition, looping over pairs: within each unit with m >= 2
    values every ordered pair of two different observations weighs 1/(m-1) (D_o); every ordered pair
    of two different pairable values of the whole table weighs 1/(n-1) (D_e); alpha = 1 - D_o/D_e."""
    pairable = [u for u in units if len(u) >= 2]
    flat = [v for u in pairable for v in u]
    n = len(flat)
    freq = {v: flat.count(v) for v in set(flat)}
    levels = sorted(freq)

    def d2(c, k):
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (c - k) ** 2
        lo, hi = sorted((c, k))     # ordinal: (Σ_{g=c..k} n_g - (n_c + n_k)/2)^2
        return (sum(freq[g] for g in levels if lo <= g <= hi) - (freq[c] + freq[k]) / 2) ** 2

    d_o = sum(d2(u[i], u[j]) / (len(u) - 1) for u in pairable for i in range(len(u)) for j in range(len(u))
              if i != j) / n
    d_e = sum(d2(flat[i], flat[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    return 1 - d_o / d_e if d_e > 0 else NAN


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(6))
def test_alpha_equals_a_brute_force_of_the_definition_on_data_with_ties(level, seed):
    rng = np.random.default_rng(seed)
    n_units, n_samples = int(rng.integers(3, 15)), int(rng.integers(2, 6))
    # few levels, units leaning to one value: many ties within and across units; some missing
    centre = rng.integers(0, 4, n_units)
    value = (centre[:, None] + rng.choice([-1, 0, 0, 0, 1], (n_units, n_samples))).astype(float) * 1.5
    value[rng.random(value.shape) < 0.2] = NAN
    units = [[v for v in row if not math.isnan(v)] for row in value]
    expect = _brute_alpha(units, level)
    got = krippendorff_alpha(np.repeat(np.arange(n_units), n_samples), value.ravel(), level)
    if math.isnan(expect):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expect, abs=1e-12)


def test_alpha_is_undefined_with_one_value():
    # every pairable value is 3: D_e = 0, no alpha
    assert math.isnan(krippendorff_alpha(np.array([0, 0, 1, 1]), np.array([3.0, 3.0, 3.0, 3.0]), "ordinal"))


def test_flip_rate_agreement_and_expected_agreement_by_hand():
    # unit 0: (1, 1, 1)        no flip, agreement 3/3 pairs
    # unit 1: (1, 2, 2)        flip,    agreement 1/3 (only the two 2s agree)
    # unit 2: (4, NaN)         one parsed sample: not an item
    # unit 3: (2, 4)           flip,    agreement 0/1
    unit = np.array([0, 0, 0, 1, 1, 1, 2, 2, 3, 3])
    sample = np.array([0, 1, 2, 0, 1, 2, 0, 1, 0, 1])
    value = np.array([1, 1, 1, 1, 2, 2, 4, NAN, 2, 4], float)
    # sample 0's Σ p²: unit 0 (0.5, 0.5) -> 0.5; unit 1 none; unit 2 (1.0) -> 1 but not an item;
    # unit 3 (0.9, 0.1) -> 0.82; a later sample's distribution (0.3) is not sample 0's
    purity = np.array([0.5, 0.3, NAN, NAN, NAN, NAN, 1.0, NAN, 0.82, NAN])
    row = consistency_row(unit, sample, value, purity, "ordinal", 50, np.random.default_rng(0))
    assert (row["samples"], row["n_items"]) == (3, 3)
    assert row["flip_rate"] == pytest.approx(2 / 3)
    assert row["agreement"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert row["expected_agreement"] == pytest.approx((0.5 + 0.82) / 2)
    assert row["alpha"] == pytest.approx(_brute_alpha([[1, 1, 1], [1, 2, 2], [2, 4]], "ordinal"))


def test_a_cell_without_repeats_measures_nothing():
    row = consistency_row(np.array([0, 1]), np.array([0, 0]), np.array([1.0, 2.0]), np.full(2, NAN),
                          "nominal", 10, np.random.default_rng(0))
    assert row == {"samples": 1, "n_items": 0, "flip_rate": None, "agreement": None, "alpha": None,
                   "alpha_lo": None, "alpha_hi": None, "samples_for_alpha_08": None, "expected_agreement": None}


def test_spearman_brown_samples_by_hand():
    # k alpha / (1 + (k-1) alpha) >= 0.8  <=>  k >= 4 (1 - alpha) / alpha
    assert samples_for_alpha(0.5) == 4            # 4 * .5 / (1 + 3 * .5) = 2 / 2.5 = 0.8 exactly
    assert samples_for_alpha(2 / 3) == 2          # 2 * 2/3 / (1 + 2/3) = (4/3) / (5/3) = 0.8 exactly
    assert samples_for_alpha(0.4) == 6            # 4 * .6 / .4 = 6: 6 * .4 / (1 + 5 * .4) = 2.4 / 3 = 0.8
    assert samples_for_alpha(0.41) == 6           # 4 * .59 / .41 = 5.76 -> 6; k = 5: 2.05 / 2.64 = 0.777
    assert samples_for_alpha(0.1) == 36           # 4 * .9 / .1 = 36
    assert samples_for_alpha(0.8) == 1 and samples_for_alpha(0.95) == 1
    assert samples_for_alpha(0.0) is None and samples_for_alpha(-0.2) is None and samples_for_alpha(NAN) is None


def test_scale_levels_follow_the_formats_label_count():
    assert [scale_level(n) for n in (2, 5, 10, 11, 101)] == ["nominal", "ordinal", "ordinal", "interval", "interval"]


def test_bootstrap_of_identical_units_is_a_point():
    # five units, each (1, 2): every resample is the same table. Nominal: o_12 = o_21 = 5, n = 10,
    # n_1 = n_2 = 5: alpha = 1 - 9 * 10 / (2 * 5 * 5) = 1 - 90/50 = -0.8
    counts = unit_counts(np.repeat(np.arange(5), 2), np.tile([0, 1], 5), 2)
    lo, hi = bootstrap_alpha(counts, np.array([1.0, 2.0]), "nominal", 200, np.random.default_rng(1))
    assert lo == pytest.approx(-0.8) and hi == pytest.approx(-0.8)


def test_bootstrap_interval_is_the_percentiles_of_resampled_units():
    unit, sample, value = _textbook()
    keep = unit < 11                      # the 11 pairable units
    values, code = np.unique(value[keep & ~np.isnan(value)], return_inverse=True)
    counts = unit_counts(unit[keep & ~np.isnan(value)], code, values.size)
    lo, hi = bootstrap_alpha(counts, values, "interval", 400, np.random.default_rng(7))
    # independent: resample unit lists, brute-force alpha of each, percentiles 2.5 / 97.5
    rng = np.random.default_rng(3)
    rows = [[v for v in TEXTBOOK[:, u] if not math.isnan(v)] for u in range(11)]
    brute = [_brute_alpha([rows[i] for i in rng.integers(0, 11, 11)], "interval") for _ in range(400)]
    blo, bhi = np.nanpercentile(brute, [2.5, 97.5])
    # two independent streams of 400 resamples: the ends agree to sampling error
    assert lo == pytest.approx(blo, abs=0.12) and hi == pytest.approx(bhi, abs=0.05)
    assert lo < krippendorff_alpha(unit, value, "interval") <= hi


def test_ordinal_alpha_uses_the_value_frequencies():
    # two levels only: ordinal delta = (n_1 + n_2 - (n_1 + n_2)/2)^2 = (n/2)^2 for every pair that
    # differs, a constant: ordinal alpha equals nominal alpha
    o = np.array([[4.0, 2.0], [2.0, 2.0]])
    v = np.array([0.0, 7.0])
    assert alpha_from_coincidences(o, v, "ordinal") == pytest.approx(alpha_from_coincidences(o, v, "nominal"))
    # nominal: n = 10, n_1 = 6, n_2 = 4: 1 - 9 * 4 / (2 * 6 * 4) = 1 - 36/48 = 0.25
    assert alpha_from_coincidences(o, v, "nominal") == pytest.approx(0.25)


# --- through the store: import-verdicts with samples -------------------------------------------

def _cand(pid, cid, ref):
    return {"prompt_id": pid, "prompt": f"prompt {pid}", "candidate_id": cid, "response": f"answer {cid}",
            "reference": ref}


def _v(fmt, pid, cid, raw, sample, probs=None):
    row = {"judge": "j", "format": fmt, "prompt_id": pid, "candidate_id": cid, "raw": raw, "sample": sample}
    if probs:
        row["label_probs"] = probs
    return row


@pytest.fixture
def repeated(db, write_jsonl):
    """Two prompts x two candidates (reference a > b), likert5 asked 2 or 3 times, binary once."""
    import_pool(db, write_jsonl("pool.jsonl", [_cand("q", "a", 2), _cand("q", "b", 1),
                                               _cand("r", "a", 2), _cand("r", "b", 1)]), "p")
    rows = [
        _v("likert5", "q", "a", "4", 0, {"4": 0.5, "5": 0.5}), _v("likert5", "q", "a", "5", 1),
        _v("likert5", "q", "a", "5", 2),
        _v("likert5", "q", "b", "4", 0), _v("likert5", "q", "b", "4", 1), _v("likert5", "q", "b", "4", 2),
        _v("likert5", "r", "a", "3", 0, {"3": 0.8, "2": 0.2}), _v("likert5", "r", "a", "3", 1),
        _v("likert5", "r", "b", "3", 0), _v("likert5", "r", "b", "nonsense", 1),
        _v("binary", "q", "a", "ACCEPT", 0), _v("binary", "q", "b", "ACCEPT", 0),
    ]
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    return db


def test_consistency_of_imported_samples(repeated):
    cells = {c["format"]: c for c in consistency(repeated, "p", n_boot=300).to_dicts()}
    assert list(consistency(repeated, "p", n_boot=10).schema) == list(CONSISTENCY_COLUMNS)
    like = cells["likert5"]
    # units: q/a (4,5,5) flip, 1/3 pairs agree; q/b (4,4,4) 3/3; r/a (3,3) 1/1; r/b one parsed: not an item
    assert (like["level"], like["samples"], like["n_items"]) == ("ordinal", 3, 3)
    assert like["flip_rate"] == pytest.approx(1 / 3)
    assert like["agreement"] == pytest.approx((1 / 3 + 1 + 1) / 3)
    # sample 0 distributions: q/a 0.5^2 + 0.5^2 = 0.5, r/a 0.8^2 + 0.2^2 = 0.68
    assert like["expected_agreement"] == pytest.approx((0.5 + 0.68) / 2)
    assert like["alpha"] == pytest.approx(_brute_alpha([[4, 5, 5], [4, 4, 4], [3, 3]], "ordinal"))
    assert like["alpha_lo"] <= like["alpha"] <= like["alpha_hi"]
    assert like["samples_for_alpha_08"] == samples_for_alpha(like["alpha"])
    binary = cells["binary"]
    assert (binary["level"], binary["samples"], binary["n_items"], binary["flip_rate"]) == ("nominal", 1, 0, None)


def test_the_bootstrap_is_seeded_per_cell(repeated):
    a = consistency(repeated, "p", seed=1, n_boot=300)
    assert a.equals(consistency(repeated, "p", seed=1, n_boot=300))


def test_the_mean_of_samples_is_its_own_cell(repeated):
    every = audit_cells(repeated, "p")
    # label before expected (two calls carry a distribution), single before mean within each
    assert every.filter(pl.col("format") == "likert5").select("score", "aggregate").rows() == \
        [("label", "single"), ("label", "mean"), ("expected", "single"), ("expected", "mean")]
    cells = every.filter((pl.col("format") == "likert5") & (pl.col("score") == "label"))
    single, mean = cells.to_dicts()
    # single, sample 0: q (a 4, b 4) tied, r (a 3, b 3) tied: both prompts' tops are coin flips
    assert single["n_verdicts"] == 4 and single["parse_rate"] == 1.0
    assert single["top_tied"] == 1.0 and single["top1_expected"] == 0.5 and single["tau_a"] == 0.0
    assert single["distinct"] == 2            # s = 0.75 and 0.5
    # mean: q/a (4+5+5)/3 = 14/3 -> s = (14/3 - 1)/4 = 11/12 > q/b 0.75: the tie is broken (a is
    # reference-top); r/a 3 and r/b 3 (its unparsed sample left out) stay tied
    assert mean["n_verdicts"] == 10 and mean["parse_rate"] == pytest.approx(9 / 10)
    assert mean["top_tied"] == 0.5 and mean["top1_expected"] == pytest.approx((1 + 0.5) / 2)
    assert mean["tau_a"] == pytest.approx((1 + 0) / 2)
    assert mean["distinct"] == 3              # 11/12, 0.75, 0.5
    binary = audit_cells(repeated, "p").filter(pl.col("format") == "binary")
    assert binary["aggregate"].to_list() == ["single"]     # asked once: no mean cell


def test_tournament_mean_weighs_each_call_once(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", [_cand("q", "a", 2), _cand("q", "b", 1), _cand("q", "c", 0)]), "p")
    rows = [{"judge": "j", "format": "tournament", "prompt_id": "q", "a_id": x, "b_id": y, "raw": raw, "sample": s}
            for x, y, raw, s in [("a", "b", "A+", 0), ("a", "b", "A++", 1), ("a", "b", "TIE", 2),
                                 ("a", "c", "TIE", 0)]]
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    from audit._scores import pool_scores
    sc = pool_scores(db, "p", repeats=True)
    mean = sc.S[sc.cells["aggregate"].to_list().index("mean")]
    sig = lambda v: 1 / (1 + math.exp(-v))
    # call a-b: mean of sigma(1), sigma(2), sigma(0); call a-c: sigma(0) = 0.5; a's score averages
    # the two calls (not the four samples)
    ab = (sig(1) + sig(2) + sig(0)) / 3
    assert mean[0] == pytest.approx((ab + 0.5) / 2)
    assert mean[1] == pytest.approx(1 - ab) and mean[2] == pytest.approx(0.5)


def test_cli_consistency_json(repeated):
    proc = subprocess.run([sys.executable, "-m", "app.cli", "consistency", "--pool", "p", "--db", str(repeated),
                           "--json", "--n-boot", "200"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [c["format"] for c in doc["cells"]] == ["binary", "likert5"]
    assert set(doc["cells"][0]) == set(CONSISTENCY_COLUMNS)
    assert doc["cells"][1]["flip_rate"] == pytest.approx(1 / 3)
    bad = subprocess.run([sys.executable, "-m", "app.cli", "consistency", "--pool", "nope", "--db", str(repeated)],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1 and "nope" in bad.stderr and bad.stdout == ""


def test_the_simulated_judge_without_noise_never_flips(db, write_jsonl, tmp_path):
    help_text = subprocess.run([sys.executable, "-m", "app.cli", "score", "--help"], capture_output=True,
                               text=True, cwd=ROOT).stdout
    if "--samples" not in help_text:
        pytest.skip("score --samples is not in this checkout yet")
    import_pool(db, write_jsonl("pool.jsonl", [_cand(p, c, r) for p in "qrs" for c, r in (("a", 2), ("b", 1), ("c", 0))]),
                "p")
    for name, noise in (("calm", 0), ("noisy", 2)):
        proc = subprocess.run([sys.executable, "-m", "app.cli", "score", "--pool", "p", "--db", str(db),
                               "--judge", f"fake:{name}?noise={noise}&seed=1", "--formats", "likert5,tournament",
                               "--samples", "3", "--temperature", "0.7"],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
    cells = {(c["judge"], c["format"]): c for c in consistency(db, "p", n_boot=100).to_dicts()}
    for fmt in ("likert5", "tournament"):
        calm = cells[("calm", fmt)]
        assert calm["samples"] == 3 and calm["n_items"] > 0
        assert calm["flip_rate"] == 0.0 and calm["agreement"] == 1.0
    assert cells[("noisy", "likert5")]["flip_rate"] > 0


def test_repeat_effect_sets_single_beside_mean(repeated):
    from app.views.formats.repeats import repeat_effect, repeats_sentence
    effect = repeat_effect(audit_cells(repeated, "p"))
    # likert5 label and expected were repeated; binary was asked once: no row
    assert effect.select("format", "score").rows() == [("likert5", "label"), ("likert5", "expected")]
    row = effect.row(0, named=True)
    # from test_the_mean_of_samples_is_its_own_cell: top shared in 2/2 prompts -> 1/2; tau_a 0 -> 0.5
    assert (row["top_tied"], row["top_tied_mean"], row["tau_a"], row["tau_a_mean"]) == (1.0, 0.5, 0.0, 0.5)
    # issue 26: two prompts are fewer than the five a share needs (audit.MIN_N, the one rule)
    assert row["n_top_prompts"] == 2
    assert repeats_sentence(effect) == ("Too few to say whether averaging the samples breaks coin flips. Left out: "
                                          "likert5: too few to say (2 prompts with two scored candidates; at least "
                                          "5 needed).")
    # with five prompts (the same shares) the sentence states it, with its n
    five = effect.with_columns(pl.lit(5, pl.Int64).alias("n_top_prompts"))
    assert repeats_sentence(five) == ("Averaging the samples breaks coin flips: share of prompts whose top score "
                                        "is shared, one sample → mean of the samples: likert5 100% → 50% of 5 prompts.")
    # a cell whose calls parse under half the time decides nothing and is named with its parse rates and its
    # calls (sample 0's: 2 prompts x 2 candidates)
    assert row["n_verdicts"] == 4
    low = five.with_columns(pl.lit(0.12).alias("parse_rate"), pl.lit(0.38).alias("parse_rate_mean"))
    assert repeats_sentence(low) == ("Too few to say whether averaging the samples breaks coin flips. Left out: "
                                       "likert5 100% → 50%, but its calls parse only 12% to 38% of the time (4 calls).")
    single_only = audit_cells(repeated, "p").filter(pl.col("aggregate") == "single")
    assert repeat_effect(single_only).height == 0 and repeats_sentence(repeat_effect(single_only)) is None


def test_the_formats_pages_flip_rate_over_too_few_calls_is_too_few_to_say():
    # the demo's smollm2-demo-t0.7 × numeric100: flip rate 67% over 3 calls with two parsed samples. Under
    # audit.MIN_N = 5 calls it is too few to say (the one rule), never "flip rate 67% of 3 calls"
    from app.views.formats.repeats import consistency_sentence
    row = {"judge": "j", "format": "numeric100", "decoding": "sampled", "samples": 5, "n_items": 3,
           "flip_rate": 2 / 3, "alpha": 0.995, "alpha_lo": -0.667, "alpha_hi": 0.999}
    few = consistency_sentence(pl.DataFrame([row]), "j")
    assert "67%" not in few and few.endswith("**numeric100** (sampled, 5 samples): too few to say (3 calls with two "
                                             "parsed samples; at least 5 needed).")
    # five calls: the flip rate with its n, α with its interval (the minus sign U+2212)
    five = consistency_sentence(pl.DataFrame([{**row, "n_items": 5, "flip_rate": 0.6}]), "j")
    assert five.endswith("**numeric100** (sampled, 5 samples): flip rate 60% of 5 calls, α = 0.99 (95% CI −0.67 to "
                         "1.00).")
