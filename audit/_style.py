"""Style-controlled rankings (docs/metrics.md#rankings-bradley-terry, Style control).

Per judge x comparative format x decoding, every parsed call between two different systems
(candidate_ids) is one row with outcome y = 1 (margin > 0, slot A preferred), 0 (< 0) or 0.5 (a
tie). The style of a response is counted once (`style_counts`): its length in characters, and,
after removing fenced code blocks, its header lines, list-item lines and bold spans. A row's
features (`style_features`) are the normalised differences A - B, standardised over the cell's rows
(mean 0, population sd 1; a feature with sd 0 is dropped). The model

    logit P(y) = slot + beta[sys(A)] - beta[sys(B)] + sum_f gamma_f x_f

is fitted by maximum likelihood with soft labels (binary cross-entropy), no penalty (or, asked for, a ridge
penalty: `penalty`, labelled as such wherever shown), by Newton's
method (`audit._style_fit.newton_pairs`: batched over bootstrap resamples, sparse in the system columns, step
halving where a step lowers the likelihood); beta is centred to mean 0. `strength_raw` is beta of the same model without the style
features. Intervals: 95% percentile bootstrap resampling the cell's prompts (1,000, seeded by the
cell's identity), each resample refitted from the full fit.

Human labels on the pairs the judge compared give the same fit on the human rows (y = 1, 0, 0.5
for A, B, tie; one row per annotator), with the features on the judge cell's scale (its means and
sds), so that judge - human (`excess`) compares like with like; the same prompt resamples serve
both fits, which makes the excess's bootstrap a paired one.

Where the cell's comparisons cannot tell a parameter apart from the others (`_style_fit.held_out`: an anchor
always in slot B makes the slot effect and the anchor's strength one parameter; a feature that is a
combination of the slot and the systems' columns), it is held at 0 and reported null, the rest fitted
without it, and the slot row's `why` says so (audit._style_why.why_held): the systems' columns are
kept first (those of one connected group are always told apart), then the slot, then the features in
FEATURES order, each only where it is not a combination of those kept before it. So an anchored
cell is fitted without the slot effect, which the anchor's strength then includes. The same
parameters are held in every bootstrap resample (a resample's comparisons are a subset of the
cell's, so they cannot tell more apart).

Without a penalty the maximum-likelihood fit is finite only when no system or feature separates the
outcomes (a system that never lost, a length difference that always wins: small cells). Newton's
method then never settles, or settles only where the rounding lets it (_style_fit.finite_fit: a
number beyond SETTLED, 15, and the outcomes separated, _style_fit.separated); such a fit is
reported as `converged` = false with null numbers, not as the huge values it wandered to. In a resample without a finite fit (`boot_unconverged` counts them) the
parameters a separation drives away (still moving when Newton stops) count as +-infinity, the
settled ones as they are; an interval end that such draws reach is infinite.

Only systems in the largest connected group of the cell's comparison graph can be placed on one
scale; rows with a system outside it are left out. A system that a resample does not contain keeps
its full-fit strength in that resample (its column has no information there).
"""

from __future__ import annotations

import os
import re

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ._bias import cell_rng
from ._read import reading
from ._rank import _ranks       # 1 = strongest, equal strengths by id: as rank orders them
from ._style_fit import _boot_fit, fit_style, held_out
from ._style_why import why_held, why_no_fit

FEATURES = ("length", "headers", "lists", "bold")
COUNTS = ("chars", "headers", "lists", "bold")
STYLE_COLUMNS = ["judge", "format", "decoding", "part", "name", "value", "lo", "hi", "value_raw",
                 "rank", "rank_raw", "n", "converged", "boot_unconverged", "why"]
FENCE = re.compile(r"```.*?```", re.S)                 # a fenced code block (``` to the next ```)
HEADER = re.compile(r"#{1,6}\s")
LIST_ITEM = re.compile(r"\s*([-*+]|\d+\.)\s")
BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def style_counts(text: str) -> tuple[int, int, int, int]:
    """(chars, headers, lists, bold) of one response: its length in characters; after removing
    fenced code blocks, the lines matching ^#{1,6}\\s, the lines matching ^\\s*([-*+]|\\d+\\.)\\s and
    the matches of \\*\\*[^*\\n]+\\*\\*|__[^_\\n]+__."""
    body = FENCE.sub("", text)
    lines = body.split("\n")
    return (len(text), sum(1 for line in lines if HEADER.match(line)),
            sum(1 for line in lines if LIST_ITEM.match(line)), len(BOLD.findall(body)))


def style_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of counts (chars, headers, lists, bold) of slot A and slot B -> (N, 4) raw features:
    length = (chars_A - chars_B) / (chars_A + chars_B) (0 when both are empty); for each markdown
    count, d = count / (chars + 1) and feature = (d_A - d_B) / (d_A + d_B + 1)."""
    a, b = np.asarray(a, float).reshape(-1, 4), np.asarray(b, float).reshape(-1, 4)
    total = a[:, 0] + b[:, 0]
    length = np.divide(a[:, 0] - b[:, 0], total, out=np.zeros(len(a)), where=total > 0)
    da, db = a[:, 1:] / (a[:, :1] + 1), b[:, 1:] / (b[:, :1] + 1)
    return np.column_stack([length, (da - db) / (da + db + 1)])


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column: (mean, population sd, kept); a column with sd 0 is not kept."""
    mean, sd = x.mean(axis=0), x.std(axis=0)
    kept = sd > 1e-12 * np.maximum(1.0, np.abs(mean))
    return mean, np.where(kept, sd, 1.0), kept


def _codes(a_ids: list[str], b_ids: list[str]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Systems of the largest connected group, the rows inside it, and their codes."""
    ids = sorted(set(a_ids) | set(b_ids))
    code = {s: i for i, s in enumerate(ids)}
    a = np.array([code[s] for s in a_ids], np.int64)
    b = np.array([code[s] for s in b_ids], np.int64)
    graph = csr_matrix((np.ones(a.size), (a, b)), shape=(len(ids), len(ids)))
    _, group = connected_components(graph, directed=False)
    big = np.argmax(np.bincount(group))
    keep_sys = group == big
    remap = np.cumsum(keep_sys) - 1
    inside = keep_sys[a] & keep_sys[b]
    return [s for s, k in zip(ids, keep_sys) if k], inside, remap[a[inside]], remap[b[inside]]


def _outcome(value: np.ndarray) -> np.ndarray:
    return np.where(value > 0, 1.0, np.where(value < 0, 0.0, 0.5))


def _counts(frame: pl.DataFrame, side: str) -> np.ndarray:
    return frame.select([f"{side}_{c}" for c in COUNTS]).to_numpy().astype(float)


def _interval(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """95% percentile interval (numpy's linear interpolation) of draws that may hold +-inf (a
    resample whose fit has no finite maximum in that parameter): an end whose interpolation
    touches an infinite draw is infinite. NaN without draws."""
    if draws.shape[0] == 0:
        nan = np.full(draws.shape[1:], np.nan)
        return nan, nan
    with np.errstate(invalid="ignore"):                    # an excess of two infinite draws is NaN: left out
        ends = np.nanpercentile(np.clip(draws, -1e300, 1e300), [2.5, 97.5], axis=0)
    ends = np.where(ends >= 1e200, np.inf, np.where(ends <= -1e200, -np.inf, ends))
    return ends[0], ends[1]


def _coefficient_rows(part: str, kept: np.ndarray, gamma: np.ndarray | None, draws: np.ndarray | None,
                      ok: np.ndarray | None, rows_n: int, converged: bool, held: np.ndarray | None = None) -> list[dict]:
    """One row per feature: gamma (null where the feature was dropped, held (held_out, per column of
    gamma) or the fit has no finite maximum) with its interval."""
    out, col = [], 0
    failed = int((~ok).sum()) if ok is not None else 0
    for f, keep in zip(FEATURES, kept):
        value = lo = hi = None
        if keep:
            if converged and not (held is not None and held[col]):
                value = float(gamma[col])
                if draws is not None:
                    lo, hi = (float(v) for v in _interval(draws[:, col]))
            col += 1
        out.append({"part": part, "name": f, "value": value, "lo": lo, "hi": hi, "n": rows_n,
                    "converged": converged, "boot_unconverged": failed})
    return out


def prompt_draws(rng: np.random.Generator, n_prompts: int, n_boot: int) -> np.ndarray:
    """(n_boot, n_prompts): how often each of the cell's sorted prompts is drawn in each bootstrap resample
    (multinomial counts of n_prompts draws with replacement), as floats; no rows without a bootstrap."""
    if n_boot <= 0:
        return np.zeros((0, n_prompts))
    return rng.multinomial(n_prompts, np.full(n_prompts, 1.0 / n_prompts), size=n_boot).astype(float)


def held_parameters(a: np.ndarray, b: np.ndarray, z: np.ndarray, n: int, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """held_out of the fit with the style features and of the one without (its slot alone)."""
    return held_out(a, b, z, n, w), held_out(a, b, z[:, :0], n, w)


def slot_why(ids: list[str], a: np.ndarray, b: np.ndarray, y: np.ndarray, w: np.ndarray | None, kept: np.ndarray,
             ok_fit: bool, held: np.ndarray) -> str | None:
    """The slot row's `why`: why the fit has no finite maximum (why_no_fit, over the rows each counted
    w times) and what was held (why_held); None when neither."""
    n = len(ids)
    names = [f for f, k in zip(FEATURES, kept) if k]
    words = []
    if not ok_fit:
        rep = np.ones(a.size, np.int64) if w is None else np.asarray(w).astype(np.int64)
        words.append(why_no_fit(ids, np.repeat(a, rep), np.repeat(b, rep), np.repeat(y, rep),
                                [f for f, k in zip(FEATURES, kept) if not k]))
    if held.any():
        words.append(why_held(ids, a, b, bool(held[0]), [f for f, h in zip(names, held[n:]) if h]))
    return " ".join(words) or None


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
    held, held_plain = held_parameters(a, b, z, n, None)
    fit = fit_style(a, b, y, z, n, penalty=penalty, held=held)
    plain = fit_style(a, b, y, np.zeros((big_n, 0)), n, penalty=penalty, held=held_plain)
    prompts, unit = np.unique(cell["prompt_id"].to_numpy().astype(str), return_inverse=True)
    counts = prompt_draws(rng, prompts.size, n_boot)
    boot = _boot_fit(a, b, y, z, n, counts[:, unit], fit["theta"], penalty, held) \
        if n_boot > 0 and fit["finite"] else None
    human = _human_rows(cell, labels, prompts, mean, sd, kept)
    return _cell_rows(ids, a, b, y, None, kept, fit, plain, boot, held, big_n, human, mean, sd, counts, n_boot,
                      penalty)


def _cell_rows(ids: list[str], a, b, y, w, kept, fit: dict, plain: dict, boot: dict | None, held: np.ndarray,
               big_n: int, human, mean, sd, counts: np.ndarray, n_boot: int, penalty: float) -> list[dict]:
    """A cell's rows from its fits, per call (_style_cell, w None) or grouped (_style_cells.style_fit,
    each row standing for w calls): the slot, the coefficients, the systems and the human parts."""
    n, ok_fit = len(ids), fit["finite"]
    ok = boot["converged"] if boot else None
    slot_lo, slot_hi = _interval(boot["slot"]) if boot and not held[0] else (np.nan, np.nan)
    failed = int((~ok).sum()) if boot else 0
    rows = [{"part": "coefficient", "name": "slot", "value": float(fit["slot"]) if ok_fit and not held[0] else None,
             "lo": float(slot_lo), "hi": float(slot_hi), "n": big_n, "converged": ok_fit, "boot_unconverged": failed,
             "why": slot_why(ids, a, b, y, w, kept, ok_fit, held)}]
    rows += _coefficient_rows("coefficient", kept, fit["gamma"], boot["gamma"] if boot else None, ok, big_n, ok_fit,
                              held[n:])
    return rows + _system_and_human_rows(ids, fit, plain, boot, ok, failed, big_n, human, mean, sd, kept, counts,
                                         n_boot, penalty, held[n:])


def _system_and_human_rows(ids: list[str], fit: dict, plain: dict, boot: dict | None, ok, failed: int, big_n: int,
                           human, mean, sd, kept, counts: np.ndarray, n_boot: int, penalty: float,
                           held_f: np.ndarray) -> list[dict]:
    """The end of a cell's rows (_cell_rows): the systems, and the coefficients fitted to the humans and the
    judge's excess where `human` (_human_rows') is not None; held_f: the judge fit's features held (their
    excess is null too)."""
    n, ok_fit, ok_plain = len(ids), fit["finite"], plain["finite"]
    lo, hi = _interval(boot["beta"]) if boot else (np.full(n, np.nan), np.full(n, np.nan))
    rank, rank_raw = _ranks(fit["beta"], ids), _ranks(plain["beta"], ids)
    rows = [{"part": "system", "name": s, "value": float(fit["beta"][i]) if ok_fit else None,
             "lo": float(lo[i]), "hi": float(hi[i]), "value_raw": float(plain["beta"][i]) if ok_plain else None,
             "rank": int(rank[i]) if ok_fit else None, "rank_raw": int(rank_raw[i]) if ok_plain else None,
             "n": big_n, "converged": ok_fit, "boot_unconverged": failed} for i, s in enumerate(ids)]
    if human is not None:
        h_cell, h_unit = human
        h_ids, h_in, ha, hb = _codes(h_cell["a_id"].to_list(), h_cell["b_id"].to_list())
        h_cell, h_unit = h_cell.filter(pl.Series(h_in)), h_unit[h_in]
        hz = ((style_features(_counts(h_cell, "a"), _counts(h_cell, "b")) - mean) / sd)[:, kept]
        hy = h_cell["y"].to_numpy()
        h_held = held_out(ha, hb, hz, len(h_ids), None)
        h_fit = fit_style(ha, hb, hy, hz, len(h_ids), penalty=penalty, held=h_held)
        ok_h = h_fit["finite"]
        h_boot = _boot_fit(ha, hb, hy, hz, len(h_ids), counts[:, h_unit], h_fit["theta"], penalty, h_held) \
            if n_boot > 0 and ok_h else None
        h_ok = h_boot["converged"] if h_boot else None
        h_held_f = h_held[len(h_ids):]
        rows += _coefficient_rows("human", kept, h_fit["gamma"], h_boot["gamma"] if h_boot else None, h_ok,
                                  h_cell.height, ok_h, h_held_f)
        both = boot is not None and h_boot is not None
        with np.errstate(invalid="ignore"):                # inf - inf: NaN, left out of the interval
            excess = boot["gamma"] - h_boot["gamma"] if both else None
        rows += _coefficient_rows("excess", kept, fit["gamma"] - h_fit["gamma"], excess,
                                  ok & h_ok if both else None, h_cell.height, ok_fit and ok_h, held_f | h_held_f)
    return rows


def _human_rows(cell: pl.DataFrame, labels: pl.DataFrame | None, prompts: np.ndarray, mean, sd, kept):
    """The human labels on the pairs (prompt, two systems, either order) the cell compared, with y
    and each row's prompt unit in the cell's bootstrap; None when there are none (or fewer than
    two systems)."""
    if labels is None or labels.height == 0:
        return None
    pair = pl.concat_str([pl.col("prompt_id"), pl.min_horizontal("a_id", "b_id"),
                          pl.max_horizontal("a_id", "b_id")], separator="\x1f").alias("k")
    judged = cell.select(pair)["k"].unique()
    h = labels.with_columns(pair).filter(pl.col("k").is_in(judged.implode()))
    if h.height == 0 or len(set(h["a_id"]) | set(h["b_id"])) < 2:
        return None
    h = h.with_columns(pl.col("label").str.to_lowercase().replace_strict(
        {"a": 1.0, "b": 0.0, "tie": 0.5}, default=None).alias("y")).filter(pl.col("y").is_not_null())
    if h.height == 0:
        return None
    unit = np.searchsorted(prompts, h["prompt_id"].to_numpy().astype(str))
    return h, unit


def style_rank_calls(calls: pl.DataFrame, labels: pl.DataFrame | None = None, n_boot: int = 1000,
                     seed: int = 0, penalty: float = 0.0) -> pl.DataFrame:
    """Pure: the style-controlled fit per (judge, format, decoding) of `calls` (columns judge,
    format, [decoding,] prompt_id, a_id, b_id, value, and a_chars, a_headers, a_lists, a_bold,
    b_chars, ... from `style_counts`); `labels` (prompt_id, a_id, b_id, label, and the same count
    columns) gives the `human` and `excess` parts. Columns: STYLE_COLUMNS, one row per
    part = 'coefficient' (name slot, length, headers, lists, bold: gamma, null where dropped),
    'system' (name = the system: value = strength, value_raw = strength_raw, rank, rank_raw),
    'human' and 'excess' (judge - human) per feature; `n` = rows fitted (the human rows for
    'human' and 'excess'); lo, hi = 95% bootstrap interval over prompts; `converged` = the fit of
    the row's part has a finite maximum (else its numbers are null); `boot_unconverged` =
    resamples without one (their unbounded parameters count as +-inf in the interval); `why` (the
    slot row of a cell without a finite fit) = the reasons in words (audit._style_why.why_no_fit).
    penalty > 0: the ridge fit (newton_pairs), labelled as such by whoever shows it."""
    if "decoding" not in calls.columns:
        calls = calls.with_columns(pl.lit("greedy").alias("decoding"))
    frames = []
    for (judge, fmt, decoding), cell in calls.group_by("judge", "format", "decoding", maintain_order=True):
        rng = cell_rng(seed, judge, fmt, decoding, "style")
        rows = _style_cell(cell, labels, n_boot, rng, penalty)
        frames.append(pl.DataFrame(rows, schema={c: t for c, t in _SCHEMA.items() if c not in ("judge", "format", "decoding")})
                      .with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format"),
                                    pl.lit(decoding).alias("decoding")))
    if not frames:
        return pl.DataFrame(schema=_SCHEMA)
    return pl.concat(frames).select(STYLE_COLUMNS).with_columns(pl.selectors.float().fill_nan(None)) \
        .sort("judge", "format", "decoding", maintain_order=True)


_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "part": pl.String,
           "name": pl.String, "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
           "value_raw": pl.Float64, "rank": pl.Int64, "rank_raw": pl.Int64, "n": pl.Int64,
           "converged": pl.Boolean, "boot_unconverged": pl.Int64, "why": pl.String}


def _with_counts(frame: pl.DataFrame, counts: pl.DataFrame) -> pl.DataFrame:
    for side in ("a", "b"):
        frame = frame.join(counts.rename({c: f"{side}_{c}" for c in counts.columns}),
                           left_on=f"{side}_idx", right_on=f"{side}_cand_idx", how="left")
    return frame


def style_rank(db: str | os.PathLike | None, pool: str, n_boot: int = 1000, seed: int = 0,
               cell: tuple[str, str, str] | None = None, penalty: float = 0.0) -> pl.DataFrame:
    """Style-controlled Bradley-Terry fits per (judge, comparative format, decoding) of the pool,
    over systems (candidate_ids), with the pool's stored human labels as the `human` comparison.
    Columns: judge, format, decoding, part (coefficient | system | human | excess), name, value,
    lo, hi, value_raw (strength_raw, systems only), rank, rank_raw, n, converged, boot_unconverged, why
    (see style_rank_calls). `cell` = (judge, format, decoding) fits that cell alone, with the
    numbers it has among all cells (each cell's bootstrap has its own seeded stream)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        texts = read.frame("style_texts", pool_id=pid)
        labels = read.frame("style_labels", pool_id=pid)
        cells = read.frame("style_cells", pool_id=pid)
    if cell is not None:
        cells = cells.filter((pl.col("judge") == cell[0]) & (pl.col("format") == cell[1])
                             & (pl.col("decoding") == cell[2]))
    counts = np.array([style_counts(t) for t in texts["response"].to_list()], dtype=np.int64).reshape(-1, 4)
    table = pl.DataFrame({"cand_idx": texts["cand_idx"], **{c: counts[:, i] for i, c in enumerate(COUNTS)}})
    labels, frames = _with_counts(labels, table), []
    for judge_id, format_id, _, _, decoding in cells.iter_rows():
        with reading(db) as read:      # a cell's calls at a time, the file let go while they are fitted
            calls = read.frame("style_cell_calls", pool_id=pid, judge_id=judge_id, format_id=format_id, decoding=decoding)
        frames.append(style_rank_calls(_with_counts(calls, table), labels, n_boot=n_boot, seed=seed, penalty=penalty))
    return pl.concat(frames) if frames else pl.DataFrame(schema=_SCHEMA)
