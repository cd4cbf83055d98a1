"""A scoring format is data: a kind, a value domain (its answers, or an integer range), a template. The spec's
`labels` table lists the answers (the name format specs are written with: docs/glossary.md#how-a-judge-is-asked)."""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..._errors import UserError, where
from ._parsers import Parsed, parse_answer, parse_range

KINDS = ("pointwise", "comparative")
# A comparative format's pairing: each candidate against the prompt's anchor, or pairs within a
# prompt. A pointwise format has none (its `kind` says all there is to say).
PAIRINGS = {"pointwise": (None,), "comparative": ("tournament", "anchored")}


@dataclass(frozen=True)
class Format:
    name: str
    kind: str                                  # 'pointwise' | 'comparative'
    pairing: str | None                        # comparative: 'anchored' | 'tournament'; pointwise: None
    labels: dict[str, float] | None = None     # answer -> value (the spec's `labels`)
    range: tuple[int, int] | None = None       # integer scale, inclusive
    template: str | None = None                # verbatim prompt template
    scale: tuple[float, float] | None = field(default=None)  # normalisation bounds

    @property
    def value_lo(self) -> float:
        if self.scale:
            return float(self.scale[0])
        return float(self.range[0]) if self.range else float(min(self.labels.values()))

    @property
    def value_hi(self) -> float:
        if self.scale:
            return float(self.scale[1])
        return float(self.range[1]) if self.range else float(max(self.labels.values()))

    def parse(self, raw: object) -> Parsed:
        """Parse a judge output; never raises."""
        try:
            if self.range is not None:
                return parse_range(raw, *self.range)
            return parse_answer(raw, self.labels)
        except Exception:  # a parser bug must not lose the verdict row
            return Parsed(None, None, "no_label")

    def normalise(self, value: float) -> float:
        """(value - lo) / (hi - lo): binary v, likert5 (v-1)/4, numeric100 v/100, anchored (v+2)/4."""
        return (value - self.value_lo) / (self.value_hi - self.value_lo)

    def answer_values(self) -> dict[str, float]:
        """Every answer with its value (a range lists its integers)."""
        if self.range is not None:
            return {str(v): float(v) for v in range(self.range[0], self.range[1] + 1)}
        return dict(self.labels)

    def answer_probs_from_logprobs(self, top_logprobs: dict[str, float]) -> dict[str, float] | None:
        """The distribution over answers read from the first generated token's alternatives.

        An alternative counts for an answer when, stripped and case-folded, it is the answer or a
        prefix of exactly one answer ("AC" -> ACCEPT); alternatives that fit no answer or several
        ("8" on a 0-100 scale) are dropped, and the rest renormalised. None when no mass is left.
        """
        labels = {k.upper(): k for k in self.answer_values()}
        mass: dict[str, float] = {}
        for token, logprob in top_logprobs.items():
            t = token.strip().upper()
            if not t:
                continue
            if t in labels:
                hits = [labels[t]]
            else:
                hits = [orig for up, orig in labels.items() if up.startswith(t)]
            if len(hits) == 1:
                mass[hits[0]] = mass.get(hits[0], 0.0) + math.exp(logprob)
        total = sum(mass.values())
        if total <= 0:
            return None
        return {k: v / total for k, v in mass.items()}

    def expected_value(self, probs: dict[str, float] | None) -> float | None:
        """Probability-weighted value of an answer distribution (on the format's value scale)."""
        if not probs:
            return None
        values = self.answer_values()
        return float(sum(p * values[k] for k, p in probs.items() if k in values))

    def spec(self) -> dict:
        """The definition as stored (formats.spec) and hashed. It keeps the layout of version 1, whose
        `pairing` said 'pointwise' for a pointwise format, so that a stored format keeps its hash
        (its identity); format_from_spec reads that value back as no pairing."""
        return {"name": self.name, "kind": self.kind, "pairing": self.pairing or "pointwise",
                "labels": self.labels, "range": list(self.range) if self.range else None,
                "scale": list(self.scale) if self.scale else None}

    @property
    def spec_hash(self) -> str:
        blob = json.dumps({"spec": self.spec(), "template": self.template}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def render(self, prompt: str, response: str | None = None, a: str | None = None,
               b: str | None = None) -> str:
        """Fill the template (plain replacement, so braces inside texts are safe)."""
        if self.template is None:
            raise UserError(f"format '{self.name}' has no prompt template; it can only be imported")
        text = self.template.replace("{prompt}", prompt)
        if self.kind == "pointwise":
            return text.replace("{response}", response or "")
        return text.replace("{a}", a or "").replace("{b}", b or "")


def _paper_template(name: str) -> str:
    return (resources.files("ingest.scoring.formats") / "templates" / "paper" / f"{name}.txt").read_text("utf-8")


_COMPARATIVE = {"A++": 2, "A+": 1, "TIE": 0, "B+": -1, "B++": -2}

BUILTIN: dict[str, Format] = {
    "binary": Format("binary", "pointwise", None, labels={"ACCEPT": 1, "REJECT": 0},
                     template=_paper_template("binary")),
    "likert5": Format("likert5", "pointwise", None, range=(1, 5),
                      template=_paper_template("likert5")),
    "numeric100": Format("numeric100", "pointwise", None, range=(0, 100),
                         template=_paper_template("numeric100")),
    "anchored": Format("anchored", "comparative", "anchored", labels=dict(_COMPARATIVE),
                       template=_paper_template("comparative")),
    "tournament": Format("tournament", "comparative", "tournament", labels=dict(_COMPARATIVE),
                         template=_paper_template("comparative")),
}


def format_from_spec(spec: dict, source: str = "format spec") -> Format:
    """Build a Format from a TOML-shaped dict, with errors that name the source and field."""
    def bad(fld: str, msg: str) -> UserError:
        return UserError(f"{where(source, field=fld)}: {msg}")

    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise bad("name", "required, a non-empty string")
    labels, rng = spec.get("labels"), spec.get("range")
    if (labels is None) == (rng is None):
        raise bad("labels", "give exactly one of 'labels' (a table label = value) or 'range' = [lo, hi]")
    kind = spec.get("kind", "pointwise")
    if kind not in KINDS:
        raise bad("kind", f"must be one of {', '.join(KINDS)}, not {kind!r}")
    if labels is not None:
        if not isinstance(labels, dict) or len(labels) < 2:
            raise bad("labels", "must be a table of at least two label = number entries")
        for key, val in labels.items():
            if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
                raise bad(f"labels.{key}", f"value must be a finite number, not {val!r}")
        if len({v for v in labels.values()}) < 2:
            raise bad("labels", "needs at least two different values")
        labels = {str(k): float(v) for k, v in labels.items()}
    if rng is not None:
        if kind != "pointwise":
            raise bad("range", "an integer range is for pointwise formats; comparative ones need labels")
        if (not isinstance(rng, list) or len(rng) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in rng) or rng[0] >= rng[1]):
            raise bad("range", f"must be [lo, hi] with integers lo < hi, not {rng!r}")
        rng = (int(rng[0]), int(rng[1]))
    pairing = spec.get("pairing", None if kind == "pointwise" else "tournament")
    if kind == "pointwise" and pairing == "pointwise":    # the stored spec's layout (Format.spec)
        pairing = None
    if pairing not in PAIRINGS[kind]:
        raise bad("pairing", "a pointwise format has no pairing" if kind == "pointwise"
                  else f"for a {kind} format must be one of {', '.join(PAIRINGS[kind])}")
    scale = spec.get("scale")
    if scale is not None:
        if (not isinstance(scale, list) or len(scale) != 2
                or not all(isinstance(x, (int, float)) for x in scale) or scale[0] >= scale[1]):
            raise bad("scale", "must be [lo, hi] with numbers lo < hi")
        scale = (float(scale[0]), float(scale[1]))
    template = spec.get("template")
    if template is not None and not isinstance(template, str):
        raise bad("template", "must be a string")
    known = {"name", "kind", "labels", "range", "pairing", "scale", "template"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise bad(unknown[0], f"unknown key (known: {', '.join(sorted(known))})")
    return Format(name.strip(), kind, pairing, labels=labels, range=rng, template=template, scale=scale)


def load_format_spec(path: str | Path) -> Format:
    """Read a TOML format spec (docs/files.md#format-spec), naming the file in every error."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such file")
    if p.is_dir():
        raise UserError(f"{p}: is a directory, not a TOML format spec")
    try:
        spec = tomllib.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{p}: invalid TOML: {exc}") from None
    if spec.get("name") in BUILTIN:
        raise UserError(f"{where(p, field='name')}: '{spec['name']}' is a built-in format; choose another name")
    return format_from_spec(spec, source=str(p))


def format_from_row(row: dict) -> Format:
    """Rebuild a Format stored in the formats table (spec JSON + template)."""
    spec = json.loads(row["spec"]) if isinstance(row["spec"], str) else row["spec"]
    clean = {k: v for k, v in spec.items() if v is not None}
    fmt = format_from_spec(clean, source="stored format")
    return Format(fmt.name, fmt.kind, fmt.pairing, fmt.labels, fmt.range, row.get("template"), fmt.scale)


def stored_formats(rows: list[dict]) -> dict[str, Format]:
    """The formats stored in the database, by name, from their rows (name, spec, template: what
    store.reading/writing's `format_rows()` reads)."""
    return {row["name"]: format_from_row(row) for row in rows}
