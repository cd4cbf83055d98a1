"""The alternative annotator test (docs/metrics.md#may-the-judge-replace-the-annotators-alt-test):
equal to its authors' reference code on the same annotations (many ties, annotators skipped below the
minimum, items without a judge's answer), a hand-worked case, the Benjamini–Yekutieli procedure by
hand, and the cells of a real database against annotations built here from the files written, not
from the store's SQL; the command's document and its refusals.

The reference, `alt_test` and its helpers below, is the authors' code verbatim: the notebook
`alt_test_example.ipynb` of github.com/nitaytech/AltTest (Calderon, Reichart & Dror, "The Alternative
Annotator Test for LLM-as-a-Judge", ACL 2025), commit 18428b1f4f34ac61c4978bc180263b90111e7337. The
repository states no licence (no LICENSE file, none in its README at that commit); the function is
quoted here, with this attribution, only as the oracle our implementation is tested against.
"""

import json
from typing import Any, Callable, Dict, List, Union

import numpy as np
import pytest
from scipy import stats
from scipy.stats import ttest_1samp

from audit import alt_test
from audit._alt_test import alignment, alt_test_annotations, by_rejected
from audit._alt_test_cells import answer_of
from ingest.scoring import import_verdicts
from ingest.store import import_labels, import_pool
from tests.conftest import cli_here


# -- the authors' reference (verbatim, see the module's doc) -------------------------------------------

def by_procedure(p_values: List[float], q: float) -> List[int]:
    p_values = np.array(p_values, dtype=float)
    m = len(p_values)
    sorted_indices = np.argsort(p_values)
    sorted_pvals = p_values[sorted_indices]
    # Compute the harmonic sum H_m = 1 + 1/2 + ... + 1/m
    H_m = np.sum(1.0 / np.arange(1, m + 1))
    # Compute the BY thresholds for each rank i
    by_thresholds = (np.arange(1, m + 1) / m) * (q / H_m)
    max_i = -1
    for i in range(m):
        if sorted_pvals[i] <= by_thresholds[i]:
            max_i = i
    if max_i == -1:
        return []
    rejected_sorted_indices = sorted_indices[:max_i + 1]
    return list(rejected_sorted_indices)


def accuracy(pred: Any, annotations: List[Any]) -> float:
    return float(np.mean([pred == ann for ann in annotations]))


def neg_rmse(pred: Union[int, float], annotations: List[Union[int, float]]) -> float:
    return -1 * float(np.sqrt(np.mean([(pred - ann) ** 2 for ann in annotations])))


def sim(pred: str, annotations: List[str], similarity_func: Callable) -> float:
    return float(np.mean([similarity_func(pred, ann) for ann in annotations]))


def ttest(indicators, epsilon: float) -> float:
    return ttest_1samp(indicators, epsilon, alternative='less').pvalue


def reference_alt_test(llm_annotations: Dict[Union[int, str], Any],
                       humans_annotations: Dict[Union[int, str], Dict[Union[int, str], Any]],
                       scoring_function: Union[str, Callable] = 'accuracy',
                       epsilon: float = 0.2,
                       q_fdr: float = 0.05,
                       min_humans_per_instance: int = 2,
                       min_instances_per_human: int = 30):
    # prepare alignment scoring function
    if isinstance(scoring_function, str):
        if scoring_function == 'accuracy':
            scoring_function = accuracy
        elif scoring_function == 'neg_rmse':
            scoring_function = neg_rmse
        else:
            raise ValueError("Unknown scoring function")
    else:
        scoring_function = scoring_function

    # prepare sets - i_set has humans as keys, h_set has instances as keys
    i_set, h_set = {}, {}
    for h, anns in humans_annotations.items():
        i_set[h] = list(anns.keys())
        for i, ann in anns.items():
            if i not in h_set:
                h_set[i] = []
            h_set[i].append(h)

    # remove instances with less than min_humans_per_instance
    instances_to_keep = {i for i in h_set if len(h_set[i]) >= min_humans_per_instance and i in llm_annotations}
    if len(instances_to_keep) < len(h_set):
        print(f"Dropped {len(h_set) - len(instances_to_keep)} instances with less than {min_humans_per_instance} annotators.")
    i_set = {h: [i for i in i_set[h] if i in instances_to_keep] for h in i_set}
    h_set = {i: h_set[i] for i in h_set if i in instances_to_keep}

    p_values, advantage_probs, humans = [], [], []
    for excluded_h in humans_annotations:
        llm_indicators = []
        excluded_indicators = []
        instances = [i for i in i_set[excluded_h] if i in llm_annotations]
        if len(instances) < min_instances_per_human:
            print(f"Skipping annotator {excluded_h} with only {len(instances)} instances < {min_instances_per_human}.")
            continue

        for i in instances:
            human_ann = humans_annotations[excluded_h][i]
            llm_ann = llm_annotations[i]
            remaining_anns = [humans_annotations[h][i] for h in h_set[i] if h != excluded_h]
            human_score = scoring_function(human_ann, remaining_anns)
            llm_score = scoring_function(llm_ann, remaining_anns)
            llm_indicators.append(1 if llm_score >= human_score else 0)
            excluded_indicators.append(1 if human_score >= llm_score else 0)

        diff_indicators = [exc_ind - llm_ind for exc_ind, llm_ind in zip(excluded_indicators, llm_indicators)]
        p_values.append(ttest(diff_indicators, epsilon))
        advantage_probs.append(float(np.mean(llm_indicators)))
        humans.append(excluded_h)

    rejected_indices = by_procedure(p_values, q_fdr)
    advantage_prob = float(np.mean(advantage_probs))
    winning_rate = len(rejected_indices) / len(humans)
    return winning_rate, advantage_prob


# -- equal to the reference ----------------------------------------------------------------------------

def _annotations(seed: int, labels=(0.0, 0.5, 1.0)):
    """Items with a true label; 3-6 annotators each labelling a random share of the items (some fewer
    than 30), each right with their own probability, otherwise a uniform label (so many ties: three
    labels, a tie label among them); a judge right with its own probability, answering 90% of items."""
    rng = np.random.default_rng(seed)
    n_items = int(rng.integers(40, 140))
    truth = rng.choice(labels, n_items, p=[0.4, 0.2, 0.4] if len(labels) == 3 else None)
    humans = {}
    for h in range(int(rng.integers(3, 7))):
        share, right = rng.uniform(0.15, 1.0), rng.uniform(0.4, 0.95)
        mine = np.flatnonzero(rng.random(n_items) < share)
        humans[f"h{h}"] = {f"i{i}": float(truth[i] if rng.random() < right else rng.choice(labels)) for i in mine}
    right = rng.uniform(0.3, 1.0)
    judge = {f"i{i}": float(truth[i] if rng.random() < right else rng.choice(labels))
             for i in range(n_items) if rng.random() < 0.9}
    return judge, humans


def _testable(judge, humans, min_items=30):
    kept = {i for i in judge if sum(i in a for a in humans.values()) >= 2}
    return any(len(kept & set(a)) >= min_items for a in humans.values())


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("how", ["accuracy", "neg_rmse"])
def test_equal_to_the_authors_code_on_annotations_with_ties(seed, how, capsys):
    judge, humans = _annotations(seed)
    if not _testable(judge, humans):
        pytest.skip("no annotator reaches 30 items: the reference divides by zero")
    for epsilon, q in ((0.2, 0.05), (0.1, 0.05), (0.15, 0.2), (0.0, 0.1)):
        ours = alt_test_annotations(judge, humans, epsilon, q, how)
        wr, ap = reference_alt_test(judge, humans, how, epsilon=epsilon, q_fdr=q)
        assert ours["winning_rate"] == pytest.approx(wr, abs=1e-15)
        assert ours["advantage_probability"] == pytest.approx(ap, abs=1e-15)
        assert ours["passed"] == (wr >= 0.5)
    capsys.readouterr()


def test_the_seeds_cover_wins_losses_and_skipped_annotators(capsys):
    # the comparison above must see both outcomes and annotators below the minimum
    rates, skipped = set(), 0
    for seed in range(40):
        judge, humans = _annotations(seed)
        if _testable(judge, humans):
            r = alt_test_annotations(judge, humans, 0.2, 0.05)
            rates.add(r["winning_rate"])
            skipped += len(r["skipped"])
    assert min(rates) == 0.0 and max(rates) == 1.0 and len(rates) >= 4 and skipped >= 10


@pytest.mark.parametrize("seed", range(10))
def test_equal_to_the_authors_code_on_binary_labels(seed, capsys):
    judge, humans = _annotations(1000 + seed, labels=(0.0, 1.0))
    if not _testable(judge, humans):
        pytest.skip("no annotator reaches 30 items")
    ours = alt_test_annotations(judge, humans, 0.2, 0.05)
    assert (ours["winning_rate"], ours["advantage_probability"]) == pytest.approx(
        reference_alt_test(judge, humans, "accuracy"), abs=1e-15)


@pytest.mark.parametrize("seed", range(30))
def test_benjamini_yekutieli_equals_the_authors(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.05, int(rng.integers(1, 12))) ** rng.uniform(0.5, 2)
    p[rng.random(p.size) < 0.2] = np.nan
    assert set(np.flatnonzero(by_rejected(p, 0.05))) == set(by_procedure(list(p), 0.05))


def test_benjamini_yekutieli_by_hand():
    # m = 4, H_4 = 1 + 1/2 + 1/3 + 1/4 = 25/12; thresholds k/4 x 0.05 / (25/12) = 0.006, 0.012, 0.018, 0.024
    # sorted 0.001 <= 0.006 passes; 0.02 > 0.012, 0.04 > 0.018, NaN: none -> only the first
    assert by_rejected([0.04, 0.001, np.nan, 0.02], 0.05).tolist() == [False, True, False, False]
    # step-up: m = 3, H_3 = 11/6, thresholds 0.0090909, 0.0181818, 0.0272727; 0.010 fails at k = 1 but
    # 0.011 passes at k = 2, so both are rejected; 0.5 is not
    assert by_rejected([0.5, 0.011, 0.010], 0.05).tolist() == [False, True, True]
    assert by_rejected([], 0.05).tolist() == []


def test_a_small_case_by_hand():
    # three annotators u, v, w on four items; the judge answers every item. min_items 4 (below the
    # authors' 30, so the arithmetic fits here).
    humans = {"u": {1: "A", 2: "B", 3: "tie", 4: "A"},
              "v": {1: "A", 2: "B", 3: "A", 4: "B"},
              "w": {1: "A", 2: "A", 3: "tie", 4: "A"}}
    judge = {1: "A", 2: "B", 3: "tie", 4: "B"}
    # leave u out: item 1 others (A, A): judge 1, u 1 -> W 1, H 1; item 2 (B, A): judge 1/2, u 1/2 -> 1, 1;
    #   item 3 (A, tie): judge 1/2, u 1/2 -> 1, 1; item 4 (B, A): judge 1/2, u 1/2 -> 1, 1.
    #   H - W = (0, 0, 0, 0): no spread, mean 0 < 0.2: scipy's t = -inf, p = 0; mean(W) = 1
    # leave v out: item 1 (A, A): 1 vs 1 -> 1, 1; item 2 (B, A): 1/2 vs 1/2 -> 1, 1; item 3 (tie, tie):
    #   judge 1, v 0 -> W 1, H 0; item 4 (A, A): judge 0, v 0 -> 1, 1. H - W = (0, 0, -1, 0), mean(W) = 1
    # leave w out: item 1 -> 1, 1; item 2 (B, B): judge 1, w 0 -> W 1, H 0; item 3 (tie, A): judge 1/2,
    #   w 1/2 -> 1, 1; item 4 (A, B): judge 1/2, w 1/2 -> 1, 1. H - W = (0, -1, 0, 0), mean(W) = 1
    r = alt_test_annotations(judge, humans, epsilon=0.2, q=0.05, min_items=4)
    d = np.array([0, 0, -1, 0.0])
    t = (d.mean() - 0.2) / (d.std(ddof=1) / 2)           # (-0.25 - 0.2) / (0.5 / 2) = -1.8
    p = stats.t.cdf(t, df=3)
    assert t == pytest.approx(-1.8)
    got = {a["annotator"]: a for a in r["tested"]}
    assert got["u"]["p_value"] == 0.0
    assert got["v"]["p_value"] == pytest.approx(p) and got["w"]["p_value"] == pytest.approx(p)
    # BY over (0, p, p) with p = 0.0829 > 0.05 / (11/6) x 2/3: only u is rejected -> omega 1/3, rho 1
    assert p > 2 / 3 * 0.05 / (11 / 6)
    assert [got[h]["won"] for h in "uvw"] == [True, False, False]
    assert (r["winning_rate"], r["advantage_probability"], r["passed"]) == (pytest.approx(1 / 3), 1.0, False)
    assert r["n_items"] == 4 and all(a["n_items"] == 4 for a in r["tested"])
    # the same with the authors' minimum: nobody tested, nothing to say
    none = alt_test_annotations(judge, humans)
    assert none["tested"] == [] and none["winning_rate"] is None and none["skipped"] == {"u": 4, "v": 4, "w": 4}


def test_alignment_scores():
    assert alignment("A", ["A", "B", "A", "tie"]) == 0.5
    # neg_rmse: answer 1 against (0, 0.5, 1): sqrt((1 + 0.25 + 0) / 3)
    assert alignment(1.0, [0.0, 0.5, 1.0], "neg_rmse") == pytest.approx(-np.sqrt(1.25 / 3))
    with pytest.raises(ValueError):
        alignment(1, [1], "f1")


def test_a_verdict_becomes_a_label():
    # a pair's preference for its first candidate: above 1/2 -> A (1), below -> B (0), 1/2 -> tie
    assert [answer_of(f, "pair") for f in (1.0, 0.75, 0.5, 0.25, 0.0)] == [1.0, 1.0, 0.5, 0.0, 0.0]
    assert answer_of(0.1 + 0.2 + 0.2, "pair") == 0.5     # 0.5000000000000001: a tie once rounded
    # a candidate's normalised score: accept from 1/2 up (likert 3 of 1..5 = 0.5 is accepted)
    assert [answer_of(f, "accept") for f in (1.0, 0.5, 0.4999)] == [1.0, 1.0, 0.0]


# -- on a database -------------------------------------------------------------------------------------

N_PROMPTS = 40
SYSTEMS = ("s0", "s1")
ANNOTATORS = ("ann", "bob", "cy")


def _truth(p):
    return "A" if p % 3 == 0 else "B" if p % 3 == 1 else "tie"


def _label(p, who):
    """The annotators' labels of (s0, s1) on prompt p: each departs from the truth on its own prompts."""
    flip = {"ann": p % 7 == 0, "bob": p % 5 == 1, "cy": p % 4 == 2}[who]
    return {"A": "B", "B": "tie", "tie": "A"}[_truth(p)] if flip else _truth(p)


def _write_pool(tmp_path, db):
    rows = [{"prompt_id": f"p{p}", "prompt": f"question {p}", "candidate_id": s, "response": f"{s} on {p}"}
            for p in range(N_PROMPTS) for s in SYSTEMS]
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_pool(db, path, "alt")


def _margins(p):
    """The judge's calls on (s0, s1) of prompt p: (a_id, b_id, raw) in both orders; a preference for s0
    of 1, 1/2 (one call each way, or TIE twice) or 0 by p."""
    r = p % 6
    if r in (0, 1):
        return [("s0", "s1", "A+"), ("s1", "s0", "B++")]          # s0 both ways: A
    if r == 2:
        return [("s0", "s1", "A+"), ("s1", "s0", "A+")]           # slot A both times: one each way, a tie
    if r == 3:
        return [("s0", "s1", "TIE"), ("s1", "s0", "TIE")]
    return [("s0", "s1", "B+"), ("s1", "s0", "A++")]              # s1 both ways: B


def _expected_answer(p):
    return {0: "A", 1: "A", 2: "tie", 3: "tie"}.get(p % 6, "B")


def _write_cells(tmp_path, db):
    rows = [{"judge": "j", "format": "tournament", "prompt_id": f"p{p}", "a_id": a, "b_id": b, "raw": raw}
            for p in range(N_PROMPTS) for a, b, raw in _margins(p)]
    likert = {("s0", p): 1 + p % 5 for p in range(N_PROMPTS)} | {("s1", p): 1 + (p * 2) % 5 for p in range(N_PROMPTS)}
    rows += [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": s, "raw": str(likert[s, p])}
             for p in range(N_PROMPTS) for s in SYSTEMS]
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_verdicts(db, path, "alt")
    return likert


def _write_labels(write_jsonl, db, annotators=ANNOTATORS, n_prompts=N_PROMPTS):
    rows = []
    for p in range(n_prompts):
        for who in annotators:
            lab = _label(p, who)
            if p % 2:    # written the other way round: (s1, s0), the label turned
                rows.append({"prompt_id": f"p{p}", "a_id": "s1", "b_id": "s0", "annotator": who,
                             "label": {"A": "B", "B": "A", "tie": "tie"}[lab]})
            else:
                rows.append({"prompt_id": f"p{p}", "a_id": "s0", "b_id": "s1", "annotator": who, "label": lab})
    import_labels(db, write_jsonl("labels.jsonl", rows), "alt")


def test_a_tournament_and_a_likert_cell_equal_the_authors_code(db, tmp_path, write_jsonl, capsys):
    _write_pool(tmp_path, db)
    likert = _write_cells(tmp_path, db)
    _write_labels(write_jsonl, db)
    got = {r["format"]: r for r in alt_test(db, "alt").to_dicts()}
    humans = {who: {p: _label(p, who) for p in range(N_PROMPTS)} for who in ANNOTATORS}
    # tournament: the answer by the sign of its summed margins on (s0, s1)
    judge = {p: _expected_answer(p) for p in range(N_PROMPTS)}
    wr, ap = reference_alt_test(judge, humans, "accuracy")
    r = got["tournament"]
    assert (r["kind"], r["n_items"], r["n_annotators"], r["missing"]) == ("pair", 40, 3, None)
    assert (r["winning_rate"], r["advantage_probability"]) == pytest.approx((wr, ap), abs=1e-15)
    assert [a["annotator"] for a in r["annotators"]] == list(ANNOTATORS)
    assert all(a["n_items"] == 40 for a in r["annotators"])
    # likert5 on pairs (the pool holds no accept labels): A when s0's score is higher, B lower, tie equal
    judge = {p: "A" if likert["s0", p] > likert["s1", p] else "B" if likert["s0", p] < likert["s1", p] else "tie"
             for p in range(N_PROMPTS)}
    wr, ap = reference_alt_test(judge, humans, "accuracy")
    r = got["likert5"]
    assert (r["kind"], r["n_items"]) == ("pair", 40)
    assert (r["winning_rate"], r["advantage_probability"]) == pytest.approx((wr, ap), abs=1e-15)
    # numbers: A 1, tie 1/2, B 0, against the reference's neg_rmse
    value = {"A": 1.0, "tie": 0.5, "B": 0.0}
    num = alt_test(db, "alt", "j", "tournament", alignment="neg_rmse", epsilon=0.1).row(0, named=True)
    wr, ap = reference_alt_test({p: value[_expected_answer(p)] for p in range(N_PROMPTS)},
                                {h: {p: value[x] for p, x in a.items()} for h, a in humans.items()},
                                "neg_rmse", epsilon=0.1)
    assert (num["winning_rate"], num["advantage_probability"]) == pytest.approx((wr, ap), abs=1e-15)
    capsys.readouterr()


def test_accept_labels_on_a_pointwise_cell(db, tmp_path, write_jsonl, capsys):
    _write_pool(tmp_path, db)
    likert = _write_cells(tmp_path, db)
    # 31 candidates of s0 accepted or rejected by two annotators; a third labels only 10 (skipped)
    rows = [{"prompt_id": f"p{p}", "candidate_id": "s0", "annotator": who,
             "label": "accept" if (p + k) % 4 else "reject"}
            for p in range(31) for k, who in enumerate(("ann", "bob"))]
    rows += [{"prompt_id": f"p{p}", "candidate_id": "s0", "annotator": "cy", "label": "accept"} for p in range(10)]
    import_labels(db, write_jsonl("accepts.jsonl", rows), "alt")
    (r,) = alt_test(db, "alt", "j", "likert5").to_dicts()
    humans = {h: {r_["prompt_id"]: r_["label"] for r_ in rows if r_["annotator"] == h} for h in ("ann", "bob", "cy")}
    # accept from likert 3 up: normalised (v - 1) / 4 >= 1/2
    judge = {f"p{p}": "accept" if likert["s0", p] >= 3 else "reject" for p in range(N_PROMPTS)}
    wr, ap = reference_alt_test(judge, humans, "accuracy")
    assert (r["kind"], r["n_items"], r["n_annotators"]) == ("accept", 31, 2)
    assert (r["winning_rate"], r["advantage_probability"]) == pytest.approx((wr, ap), abs=1e-15)
    # the tournament cannot answer accept labels
    (t,) = alt_test(db, "alt", "j", "tournament", kind="accept").to_dicts()
    assert t["missing"] == "accept labels need a pointwise cell; format 'tournament' is comparative"
    capsys.readouterr()


def test_the_command_prints_the_document_and_refuses_naming_what_is_missing(db, tmp_path, write_jsonl, capsys):
    _write_pool(tmp_path, db)
    _write_cells(tmp_path, db)
    args = ("alt-test", "--pool", "alt", "--judge", "j", "--format", "tournament")
    no_labels = cli_here(capsys, db, *args)
    assert no_labels.returncode == 1 and "the pool holds no pair labels (A / B / tie)" in no_labels.stderr
    _write_labels(write_jsonl, db, annotators=("ann",))
    alone = cli_here(capsys, db, *args)
    assert alone.returncode == 1 and "needs at least 2 annotators; the pool's pair labels (A / B / tie) name only 1" \
        in alone.stderr
    _write_labels(write_jsonl, db, annotators=("ann", "bob"), n_prompts=25)
    few = cli_here(capsys, db, *args)
    assert few.returncode == 1
    assert ("no annotator has 30 items that 2 or more annotators labelled and the cell judged (there are 25 such "
            "items; the most: ann 25, bob 25); each annotator tested needs 30 (ann needs 5 more)") in few.stderr
    _write_labels(write_jsonl, db)
    doc = json.loads(cli_here(capsys, db, *args, "--json").stdout)
    (cell,) = doc["cells"]
    assert set(cell) >= {"judge", "format", "decoding", "epsilon", "winning_rate", "advantage_probability",
                         "passed", "n_items", "annotators"}
    assert (cell["judge"], cell["format"], cell["decoding"], cell["epsilon"], cell["n_items"]) == \
        ("j", "tournament", "greedy", 0.2, 40)
    assert [set(a) >= {"annotator", "n_items", "p_value", "won"} for a in cell["annotators"]] == [True] * 3
    assert cell["passed"] == (cell["winning_rate"] >= 0.5)
    text = cli_here(capsys, db, *args)
    assert text.returncode == 0 and "winning rate" in text.stdout and "40 items" in text.stdout
    missing = cli_here(capsys, db, "alt-test", "--pool", "alt", "--judge", "nobody", "--format", "tournament")
    assert missing.returncode == 1 and "no parsed verdicts of judge 'nobody'" in missing.stderr


DEMO_POOLS_SEEDED = ("mtbench",)


def test_the_demos_mtbench_votes_are_too_few_for_the_test(demo_db):
    # 150 pairs judged in both orders; the experts' and authors' votes label 88 of them twice or more,
    # and no annotator holds more than 11 of those: every cell is refused, naming the shortfall
    cells = alt_test(demo_db, "mtbench")
    assert cells.height == 10 and cells["missing"].is_not_null().all()
    gpt4 = cells.filter((cells["judge"] == "GPT-4") & (cells["format"] == "llmbar-pair-vanilla-norules")).row(0, named=True)
    assert gpt4["n_items"] == 88 and gpt4["winning_rate"] is None
    assert "the most: author_4 11, expert_0 11, author_0 10" in gpt4["missing"]
    assert "(author_4 needs 19 more)" in gpt4["missing"]
