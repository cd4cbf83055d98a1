"""`judgeaudit distil`: a student classifier trained on one cell's verdicts (docs/training.md#distil).

The cell is (judge, pointwise format), its answers (score `label`) under the cell's decoding
(`curate.pick_cell`). Features: a hashed bag of word n-grams of prompt and response; model: ridge
regression on the normalised score for a format with an integer range, a logistic regression over
the answers for a format with labels. Prompts are split, not candidates: a seeded share of the
prompts (blake2b of 'distil|SEED|PROMPT_ID', the smallest keys) is held out, and the student's
agreement with its teacher is measured there. The folder it writes is what `distilled:DIR` loads.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Callable

import numpy as np
from scipy.stats import spearmanr

import audit

from ingest import UserError
from ingest.runs import run_key, running
from ingest.scoring.formats import BUILTIN, stored_formats
from ingest.store import reading
from ingest.scoring.judges.distilled import (MODEL_FILE, WEIGHTS_FILE, Student, answers_from_outputs, features_of,
                                             model_sha256, student_text)

from ._distil_agreement import human_agreement, humans_text, interval_text, proportion
from .curate import pick_cell

ALPHAS = (0.1, 1.0, 10.0, 100.0)     # the ridge penalty, chosen by leave-one-out on the training prompts
FEATURES = {"hashing": {"n_features": 2 ** 18, "ngram_range": [1, 2]}, "model": {"max_tokens": 256}}


def held_out_prompts(prompt_ids: list[str], share: float, seed: int) -> set[str]:
    """round(share x n) prompts (at least one, at most n - 1) with the smallest blake2b keys."""
    ids = sorted(set(prompt_ids))
    n = min(len(ids) - 1, max(1, math.floor(share * len(ids) + 0.5)))
    keys = sorted(ids, key=lambda p: hashlib.blake2b(f"distil|{seed}|{p}".encode(), digest_size=8).digest())
    return set(keys[:n])


def _agreement(teacher: np.ndarray, student: np.ndarray, labels: dict[str, float]) -> dict:
    """Exact agreement of the two answers with its 95% Wilson interval (exact_lo, exact_hi: None
    below audit.MIN_N candidates), the mean absolute difference of their normalised values, and
    Spearman's rho of the values (None when either is constant)."""
    lo, hi = min(labels.values()), max(labels.values())
    tv = np.array([labels[a] for a in teacher], dtype=float)
    sv = np.array([labels[a] for a in student], dtype=float)
    rho = None
    if tv.size > 1 and np.ptp(tv) > 0 and np.ptp(sv) > 0:
        rho = float(spearmanr(tv, sv).statistic)
    exact = proportion(teacher == student)
    return {"n": int(tv.size), "exact": exact["share"], "exact_lo": exact["lo"], "exact_hi": exact["hi"],
            "mean_abs_diff": float(np.mean(np.abs(tv - sv)) / (hi - lo)) if tv.size and hi > lo else None,
            "spearman": rho}


def distil(db, pool: str, judge: str, fmt_name: str, out: str | Path | None = None, features: str = "hashing",
           held_out: float = 0.2, seed: int = 0, decoding: str | None = None,
           progress: Callable[[str], None] = lambda line: None) -> dict:
    """Train the student as a background run (kind `distil`, keyed by pool, judge and format; its
    progress lines also go to `progress`); write model.json, weights.npz, card.json, card.md to
    `out` (None: the run's own folder beside the database, as a training run's). Returns the card and
    the folder (`folder`)."""
    if features not in FEATURES:
        raise UserError(f"--features {features!r}: known: {', '.join(FEATURES)}")
    if not 0 < held_out < 1:
        raise UserError(f"--held-out {held_out}: a share in (0, 1)")
    with reading(db) as unit:
        fmt = {**stored_formats(unit.format_rows()), **BUILTIN}.get(fmt_name)
    if fmt is None:
        raise UserError(f"--format {fmt_name!r}: no such format in the database")
    if fmt.kind != "pointwise":
        raise UserError(f"--format {fmt_name}: a student is trained on a pointwise format, not a {fmt.kind} one")
    config = {"judge": judge, "format": fmt_name, "features": features, "out": str(out) if out is not None else None}
    with running(db, "distil", pool=pool, key=run_key("distil", pool, judge, fmt_name), config=config) as run:
        def say(line: str) -> None:
            progress(line)
            run.progress({"phase": line})
        out = Path(out) if out is not None else run.out_dir
        card = _train(db, pool, judge, fmt, out, features, held_out, seed, decoding, say)
        run.progress({"phase": "finished", "result": str(out / "card.json")})
        return {**card, "folder": str(out)}


def _train(db, pool: str, judge: str, fmt, out, features: str, held_out: float, seed: int, decoding: str | None,
           progress: Callable[[str], None]) -> dict:
    fmt_name = fmt.name
    progress(f"reading the cell {judge} × {fmt_name}")
    scores, decoding = pick_cell(audit.candidate_scores(db, pool, judge, fmt_name), judge, fmt_name, decoding)
    if scores.height < 4:
        raise UserError(f"--judge {judge} --format {fmt_name}: {scores.height} scored candidates in pool {pool}; "
                        "a student needs at least 4")
    texts = audit.candidate_texts(db, pool, scores["cand_idx"].to_list())
    data = scores.join(texts.select("cand_idx", "prompt_id", "candidate_id", "prompt", "response"), on="cand_idx")
    answers = fmt.answer_values()
    lo, hi = fmt.value_lo, fmt.value_hi
    labels = list(answers)
    values = np.array([answers[k] for k in labels])
    # the teacher's answer: the answer whose normalised value is its score's
    teacher = np.array([labels[i] for i in np.argmin(np.abs((lo + data["s"].to_numpy()[:, None] * (hi - lo))
                                                            - values[None, :]), axis=1)])
    test = held_out_prompts(data["prompt_id"].to_list(), held_out, seed)
    if len({*data["prompt_id"].to_list()}) < 2:
        raise UserError(f"pool {pool}: a student needs candidates of at least 2 prompts (one is held out)")
    is_test = data["prompt_id"].is_in(sorted(test)).to_numpy()
    settings = dict(FEATURES[features])
    progress(f"{'hashing' if features == 'hashing' else 'embedding'} {data.height} candidates ({int((~is_test).sum())} to train, {int(is_test.sum())} held out)")
    X = features_of({"name": features, **settings},
                    [student_text(p, r) for p, r in zip(data["prompt"].to_list(), data["response"].to_list())])
    kind = "regression" if fmt.range is not None else "classes"
    spec = {"format": fmt_name, "kind": kind, "features": {"name": features, **settings}, "scale": [lo, hi],
            "answers": answers, "teacher": {"pool": pool, "judge": judge, "format": fmt_name, "decoding": decoding}}
    progress(f"fitting a {'ridge regression' if kind == 'regression' else 'logistic regression'}")
    if kind == "regression":
        from sklearn.linear_model import RidgeCV   # deferred: scikit-learn loads only when a student is trained
        model = RidgeCV(alphas=ALPHAS).fit(X[~is_test], data["s"].to_numpy()[~is_test])
        coef, intercept = model.coef_.astype(np.float64), np.atleast_1d(model.intercept_).astype(np.float64)
    else:
        from sklearn.linear_model import LogisticRegression   # deferred: as RidgeCV above
        if len(set(teacher[~is_test].tolist())) < 2:
            raise UserError(f"the cell {judge} × {fmt_name} gives one answer alone on the training prompts: "
                            "nothing to learn")
        model = LogisticRegression(max_iter=1000).fit(X[~is_test], teacher[~is_test])
        if len(model.classes_) == 2:      # sklearn keeps one row, for the second class: split it in two
            coef = np.vstack([-model.coef_[0] / 2, model.coef_[0] / 2])
            intercept = np.array([-model.intercept_[0] / 2, model.intercept_[0] / 2])
        else:
            coef, intercept = model.coef_, model.intercept_
        spec["classes"] = [str(c) for c in model.classes_]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MODEL_FILE).write_text(json.dumps(spec, indent=1, sort_keys=True), encoding="utf-8")
    with open(out / WEIGHTS_FILE, "wb") as fh:
        np.savez(fh, coef=coef, intercept=intercept)
    student = Student.load(out)
    predicted = np.array(answers_from_outputs(spec, student.outputs(data["prompt"].to_list(),
                                                                    data["response"].to_list())))
    card = {"teacher": spec["teacher"], "sha256": model_sha256(out), "features": spec["features"],
            "model": f"ridge (alpha {model.alpha_})" if kind == "regression" else "logistic", "kind": kind,
            "data": {"candidates": data.height, "prompts": len(set(data["prompt_id"].to_list())),
                     "train_candidates": int((~is_test).sum()), "held_out_candidates": int(is_test.sum()),
                     "held_out_prompts": len(test), "held_out_share": held_out, "seed": seed},
            "threshold_rule": _rule_text(spec),
            "agreement_held_out": _agreement(teacher[is_test], predicted[is_test], answers),
            "agreement_train": _agreement(teacher[~is_test], predicted[~is_test], answers),
            "humans_held_out": _with_humans(db, pool, data, is_test, predicted, answers, (lo, hi))}
    (out / "card.json").write_text(json.dumps(card, indent=1, sort_keys=True), encoding="utf-8")
    (out / "card.md").write_text(_card_markdown(card), encoding="utf-8")
    progress(f"wrote {out}")
    return card


def _with_humans(db, pool: str, data, is_test: np.ndarray, predicted: np.ndarray, answers: dict,
                 scale: tuple[float, float]) -> dict:
    """The student's and the teacher's agreement with the pool's human labels on the held-out
    candidates (train/_distil_agreement.py): accept labels and pair labels."""
    lo, hi = scale
    cands = data["cand_idx"].to_numpy()[is_test].tolist()
    student = [(answers[a] - lo) / (hi - lo) for a in predicted[is_test]]
    values = {"student": dict(zip(cands, student)), "teacher": dict(zip(cands, data["s"].to_numpy()[is_test].tolist()))}
    return human_agreement(values, audit.human_items(db, pool, "pointwise"), audit.human_items(db, pool, "comparative"))


def _rule_text(spec: dict) -> str:
    if spec["kind"] == "regression":
        lo, hi = spec["scale"]
        return (f"value = {lo} + clip(y, 0, 1) x ({hi} - {lo}); the answer is the format's nearest value "
                "(a tie goes to the lower)")
    return "the class with the highest score (" + ", ".join(spec["classes"]) + ")"


def _features_text(f: dict) -> str:
    if f["name"] == "hashing":
        return f"hashing ({f['n_features']} hashed word {f['ngram_range']}-grams)"
    return f"model (the bundled model's mean-pooled last hidden states, first {f['max_tokens']} tokens)"


def _card_markdown(card: dict) -> str:
    t, d, a = card["teacher"], card["data"], card["agreement_held_out"]

    def num(x):
        return "–" if x is None else f"{x:.3f}"
    return "\n".join([
        f"# A student of {t['judge']} × {t['format']}", "",
        f"- teacher: judge {t['judge']}, format {t['format']}, decoding {t['decoding']}, pool {t['pool']}",
        f"- data: {d['candidates']} candidates of {d['prompts']} prompts; {d['held_out_prompts']} prompts "
        f"({d['held_out_candidates']} candidates) held out, seed {d['seed']}",
        f"- features: {_features_text(card['features'])}; model: {card['model']}",
        f"- threshold rule: {card['threshold_rule']}",
        f"- held-out agreement with the teacher (n = {a['n']}): exact "
        f"{interval_text(a['exact'], a.get('exact_lo'), a.get('exact_hi'))}, mean absolute "
        f"difference {num(a['mean_abs_diff'])} of the scale, Spearman {num(a['spearman'])}",
        *(f"- {line}" for line in humans_text(card.get("humans_held_out"))),
        "- intervals: 95% Wilson score intervals, the candidates (or labelled items) taken as independent",
        f"- model files' SHA-256: {card['sha256']}", ""])
