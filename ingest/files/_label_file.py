"""Reading a human-labels file (docs/files.md#label-files); the store checks it against a pool.

Sources:
- `jsonl`: the tool's own labels file, one row per label, of either shape: a pair, `prompt_id, a_id,
  b_id, label` with label `A` (a_id is better), `B` (b_id is better) or `tie`; or one candidate,
  `prompt_id, candidate_id, label` with label `accept` or `reject`; optional `annotator` (default
  `import`). A pair row has `kind` 'pair', a candidate row `kind` 'accept'.
- `mtbench`: MT-Bench expert votes as `lmsys/mt_bench_human_judgments` ships them (`question_id,
  turn, model_a, model_b, winner, judge`): prompt_id = question_id, candidates = model names,
  annotator = judge. Only first-turn votes are read (a pool holds one prompt per question).
- `llmfao`: LLMFAO comparisons (`prompt_id, model_x, model_y, model_x_name, model_y_name, judge,
  worker, winner` x|y|tie); only the crowd's votes are labels (annotator `crowd:<worker>`); a
  candidate is found by the model's numeric id or, failing that, its name.
For the two public sources, votes about prompts the pool does not hold are skipped (and counted).

A file lands whole or not at all; every error names the file, the line and the field. The same
annotator labelling the same pair again (either way round) is dropped when it says the same thing
and refused when it contradicts itself or a stored label.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._errors import UserError, where
from ._tables import jsonl_objects

SOURCES = ("jsonl", "mtbench", "llmfao")
LABELS = {"a": "A", "b": "B", "tie": "tie"}
ACCEPT = {"accept": "accept", "reject": "reject"}
DEFAULT_ANNOTATOR = "import"
FLIP = {"A": "B", "B": "A", "tie": "tie"}


def _text(value, path, line, fld, required=True) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise UserError(f"{where(path, line, fld)}: required")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise UserError(f"{where(path, line, fld)}: expected a string, got {json.dumps(value)}")
    return str(value)


def read_labels(path: str | os.PathLike, source: str = "jsonl") -> tuple[list[dict], dict]:
    """The labels of a file as dicts (line, kind, prompt_id, a_ids, b_ids, label, annotator) — a_ids
    and b_ids are the candidate ids to try, in order; an accept row has kind 'accept', its candidate
    in a_ids and b_ids empty — and the counts of rows skipped, by reason."""
    p = Path(path)
    if source not in SOURCES:
        raise UserError(f"--source {source}: use one of {', '.join(SOURCES)}")
    if not p.is_file():
        raise UserError(f"{p}: no such file")
    out, skipped = [], {}
    try:
        for n, row in jsonl_objects(p):
            if source == "jsonl" and "candidate_id" in row:
                raw = _text(row.get("label"), p, n, "label")
                label = ACCEPT.get(raw.strip().lower())
                if label is None:
                    raise UserError(f"{where(p, n, 'label')}: {raw!r} is not a label of a candidate (use accept "
                                    "or reject)")
                rec = {"kind": "accept", "prompt_id": _text(row.get("prompt_id"), p, n, "prompt_id"),
                       "a_ids": [_text(row.get("candidate_id"), p, n, "candidate_id")], "b_ids": [],
                       "annotator": _text(row.get("annotator"), p, n, "annotator", required=False)
                       or DEFAULT_ANNOTATOR}
            elif source == "jsonl":
                raw = _text(row.get("label"), p, n, "label")
                label = LABELS.get(raw.strip().lower())
                if label is None:
                    raise UserError(f"{where(p, n, 'label')}: {raw!r} is not a label (use A, B or tie; "
                                    "accept or reject with candidate_id)")
                rec = {"prompt_id": _text(row.get("prompt_id"), p, n, "prompt_id"),
                       "a_ids": [_text(row.get("a_id"), p, n, "a_id")],
                       "b_ids": [_text(row.get("b_id"), p, n, "b_id")],
                       "annotator": _text(row.get("annotator"), p, n, "annotator", required=False)
                       or DEFAULT_ANNOTATOR}
            elif source == "mtbench":
                if row.get("turn", 1) != 1:
                    skipped["second turn"] = skipped.get("second turn", 0) + 1
                    continue
                winner = _text(row.get("winner"), p, n, "winner")
                label = {"model_a": "A", "model_b": "B"}.get(winner, "tie" if winner.startswith("tie") else None)
                if label is None:
                    raise UserError(f"{where(p, n, 'winner')}: {winner!r} (use model_a, model_b or tie)")
                rec = {"prompt_id": _text(row.get("question_id"), p, n, "question_id"),
                       "a_ids": [_text(row.get("model_a"), p, n, "model_a")],
                       "b_ids": [_text(row.get("model_b"), p, n, "model_b")],
                       "annotator": _text(row.get("judge"), p, n, "judge")}
            else:
                if row.get("judge") != "crowd":
                    skipped["not a crowd vote"] = skipped.get("not a crowd vote", 0) + 1
                    continue
                winner = _text(row.get("winner"), p, n, "winner")
                label = {"x": "A", "y": "B", "tie": "tie"}.get(winner)
                if label is None:
                    raise UserError(f"{where(p, n, 'winner')}: {winner!r} (use x, y or tie)")
                rec = {"prompt_id": _text(row.get("prompt_id"), p, n, "prompt_id"),
                       "a_ids": [_text(row.get("model_x"), p, n, "model_x"),
                                 _text(row.get("model_x_name"), p, n, "model_x_name", required=False)],
                       "b_ids": [_text(row.get("model_y"), p, n, "model_y"),
                                 _text(row.get("model_y_name"), p, n, "model_y_name", required=False)],
                       "annotator": "crowd:" + _text(row.get("worker"), p, n, "worker")}
            rec.setdefault("kind", "pair")
            rec.update(line=n, label=label)
            out.append(rec)
    except UnicodeDecodeError as exc:
        raise UserError(f"{p}: not valid UTF-8 ({exc.reason})") from None
    if not out:
        raise UserError(f"{p}: no labels in the file" + (f" (skipped: {skipped})" if skipped else ""))
    return out, skipped
