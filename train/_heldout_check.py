"""The held-out rule check: an evaluation refuses a training run whose held-out prompts were chosen
by another rule than its own (train/heldout.py), since it could then score prompts the run was
trained on."""

from __future__ import annotations

from ingest import UserError

from ._conditions import Condition
from .heldout import SEED, SHARE


def rule_key(rule: dict) -> tuple:
    """What decides the held-out prompts: ('marked',) or ('share', share, seed); n is left out."""
    if rule.get("rule") in ("split", "marked"):
        return ("marked",)
    return ("share", float(rule.get("share")), int(rule.get("seed", 0)))


def check_heldout(conds: list[Condition], rule: dict) -> list[str]:
    """Refuse (UserError naming the run and both rules) a training run whose held-out rule differs
    from the evaluation's, else the evaluation could score prompts the run was trained on.
    A run folder without a recorded rule was curated by train.heldout's defaults (marked prompts,
    else SHARE and SEED): those are assumed, and a note says so. Returns the notes."""
    notes = []
    for cond in conds:
        if cond.adapter is None:
            continue
        run_rule = cond.heldout
        if run_rule is None:
            # curation picks the marked prompts whenever the pool marks some, else the default share
            run_rule = rule if rule.get("rule") == "split" else {"rule": "share", "share": SHARE, "seed": SEED}
            notes.append(f"run {cond.run}: config.json records no held-out rule; assumed curation's default "
                         f"(marked prompts, else share {SHARE} with seed {SEED})")
        if rule_key(run_rule) != rule_key(rule):
            raise UserError(f"--runs {cond.run}: trained with held-out rule {_rule_text(run_rule)} but this "
                            f"evaluation uses {_rule_text(rule)}; it could score prompts the run was trained on "
                            "(use the run's rule: --heldout-share / --heldout-seed)")
    return notes


def _rule_text(rule: dict) -> str:
    key = rule_key(rule)
    return "'marked prompts'" if key == ("marked",) else f"'share {key[1]:g}, seed {key[2]}'"
