"""A classifier distilled from a judge (docs/scoring.md#distilled-judges), as a judge: `distilled:DIR`.

DIR holds `model.json` (the format, the features' settings, the kind of model and the threshold
rule) and `weights.npz` (numpy arrays only, read with allow_pickle=False: loading a model runs no
code). The features are a hashed bag of word n-grams of "prompt \\n response" (scikit-learn's
HashingVectorizer, stateless: rebuilt from its settings), or the bundled model's mean-pooled last
hidden states (`model`). The model is linear: a regression on the
normalised score (a format with an integer range), or one score per class (a format with labels).

The threshold rule turns the model's output into one of the format's answers:
- regression: y clipped to [0, 1], value = lo + y (hi - lo), the answer whose value is nearest
  (a tie goes to the lower answer);
- classes: the class with the highest score (a tie goes to the first class in the model's order).
The answer is the judge's raw text, which the format's parser reads back.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._errors import UserError
from .base import CallHints, JudgeError, JudgeReply

MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.npz"


def model_sha256(folder: str | Path) -> str:
    """SHA-256 of the model's two files (model.json, then weights.npz): the student's identity."""
    digest = hashlib.sha256()
    for name in (MODEL_FILE, WEIGHTS_FILE):
        digest.update((Path(folder) / name).read_bytes())
    return digest.hexdigest()


def vectorizer(settings: dict):
    """The HashingVectorizer the settings describe (the same on training and on scoring)."""
    # deferred: scikit-learn loads only when a student hashes texts (importing a judge stays light)
    from sklearn.feature_extraction.text import HashingVectorizer
    return HashingVectorizer(n_features=int(settings["n_features"]), ngram_range=tuple(settings["ngram_range"]),
                             alternate_sign=False, norm="l2", lowercase=True, dtype=np.float32)


_EMBEDDER: list = []      # the bundled model, loaded once a process for the `model` features


def features_of(settings: dict, texts: list[str]):
    """The feature matrix of texts: hashed n-grams (sparse) or the bundled model's mean-pooled hidden
    states (dense, L2-normalised)."""
    if settings["name"] == "model":
        if not _EMBEDDER:
            from .local import LocalJudge      # deferred: torch and transformers, for these features alone
            _EMBEDDER.append(LocalJudge())
        X = _EMBEDDER[0].embed(texts, max_tokens=int(settings["max_tokens"])).astype(np.float64)
        return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    return vectorizer(settings).transform(texts)


def student_text(prompt: str, response: str) -> str:
    return f"{prompt}\n{response}"


@dataclass
class Student:
    folder: Path
    spec: dict                 # model.json
    coef: np.ndarray           # (n_features,) regression; (n_classes, n_features) classes
    intercept: np.ndarray
    sha256: str

    @classmethod
    def load(cls, folder: str | Path) -> "Student":
        folder = Path(folder)
        for name in (MODEL_FILE, WEIGHTS_FILE):
            if not (folder / name).is_file():
                raise UserError(f"distilled:{folder}: {name} is missing (a folder `judgeaudit distil --out` wrote)")
        try:
            spec = json.loads((folder / MODEL_FILE).read_text(encoding="utf-8"))
            with np.load(folder / WEIGHTS_FILE, allow_pickle=False) as w:
                coef, intercept = np.asarray(w["coef"]), np.asarray(w["intercept"])
        except (ValueError, KeyError, OSError) as e:
            raise UserError(f"distilled:{folder}: unreadable model ({e})") from None
        for key in ("format", "kind", "features", "answers"):
            if key not in spec:
                raise UserError(f"distilled:{folder}: {MODEL_FILE} has no '{key}'")
        return cls(folder, spec, coef, intercept, model_sha256(folder))

    @property
    def format_name(self) -> str:
        return self.spec["format"]

    def outputs(self, prompts: list[str], responses: list[str]) -> np.ndarray:
        """The linear model's raw output: (n,) for regression, (n, n_classes) for classes."""
        X = features_of(self.spec["features"], [student_text(p, r) for p, r in zip(prompts, responses)])
        if self.spec["kind"] == "regression":
            return np.asarray(X @ self.coef).ravel() + float(self.intercept.ravel()[0])
        return np.asarray(X @ self.coef.T) + self.intercept.ravel()[None, :]

    def answers(self, prompts: list[str], responses: list[str]) -> list[str]:
        """The format's answer for each candidate, by the threshold rule (module docstring)."""
        return answers_from_outputs(self.spec, self.outputs(prompts, responses))


def answers_from_outputs(spec: dict, out: np.ndarray) -> list[str]:
    """The threshold rule: regression output (normalised) or class scores -> answers."""
    labels = list(spec["answers"])
    if spec["kind"] == "regression":
        values = np.asarray([spec["answers"][k] for k in labels], dtype=float)
        lo, hi = spec["scale"]
        v = lo + np.clip(out, 0.0, 1.0) * (hi - lo)
        # nearest value; argmin returns the first of equals, so sort by value to send ties down
        order = np.argsort(values, kind="stable")
        nearest = np.argmin(np.abs(v[:, None] - values[order][None, :]), axis=1)
        return [labels[i] for i in order[nearest]]
    classes = spec["classes"]
    return [classes[i] for i in np.argmax(out, axis=1)]


class DistilledJudge:
    """The student as a judge: its answer to a pointwise call of its own format."""
    provider = "distilled"
    endpoint = None

    def __init__(self, name: str, student: Student):
        self.name = name
        self.student = student
        self.model = f"distilled-{student.sha256[:16]}"

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        if hints.kind != "pointwise" or hints.format_name != self.student.format_name:
            raise JudgeError(f"distilled:{self.student.folder}: the student answers the pointwise format "
                             f"{self.student.format_name!r} only, not {hints.format_name!r}", retryable=False)
        if not hints.texts:
            raise JudgeError("distilled: the call carries no prompt and response text", retryable=False)
        text = self.student.answers([hints.texts["prompt"] or ""], [hints.texts["a"] or ""])[0]
        return JudgeReply(text=text, model=self.model, tokens_in=0, tokens_out=0, latency_ms=0.0)

    async def aclose(self) -> None:
        return None
