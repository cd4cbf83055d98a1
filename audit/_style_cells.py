"""The style-controlled fit read out of core (the derived results at 10M candidates).

`style_rank(db, pool, ...)` (audit.style_rank; without a bootstrap: what the refresh stores for the
Rankings page) no longer reads, as audit._style.style_rank does, every comparative call with its
strings and counts each response's style in a Python loop. The style counts of the used responses are
computed in polars (`style_count_frame`: the regular expressions of audit._style.style_counts with
Python's `\\s` and `\\d` spelled out as the characters Python matches, so the counts are the same), and
every cell's calls are grouped, in one pass over them: one row per (cell, prompt, when the human labels
or a bootstrap need it) x system in slot A x system in slot B x outcome x both responses' style counts,
with the number of calls it stands for. DuckDB hands over the calls as integers only (style_rank_calls.sql:
one key of cell, outcome and prompt, and the two cand_idx), each candidate is a style kind (its system
and its four counts, numbered once per pool: `candidate_kinds`) and the calls are counted on one integer
of (key, kind of A, kind of B) in numpy (`style_groups`: np.bincount where the range is small, as when
responses repeat their style), instead of joining every call to its candidates' systems and counts and
grouping on fifteen columns in DuckDB (as style_rank_rows.sql did before). The fit weights each
row by that number (`newton_pairs`' one-dimensional `w`): the same likelihood, gradient and Hessian
as the calls one by one, summed in another order, so the numbers agree to rounding (1e-9 in
tests/audit/test_style_cells.py, against the per-call fit). Where responses repeat their style the
rows are far fewer than the calls; the Python loop and the strings per call are gone either way.

A design that does not tell its parameters apart (an anchor always in slot B: the slot effect and
the anchor's strength are one parameter) holds the same parameters at 0 in both (audit._style_fit.held_out,
from the rows' Gram matrix, which the weights scale but do not change the rank of), so it is grouped
too. A bootstrap reads the rows per prompt and sums them over prompts before fitting (style_fit):
each resample's weights are its multinomial counts over the cell's sorted prompts (the same draws as
the calls') times the prompts x distinct rows table of calls, so a resample costs a fit of the
distinct rows, not of the calls.

A fit with a separation (no finite maximum) is reported as none (null numbers, `converged` false) by
both, whether Newton kept moving or stopped where the rounding let it (audit._style_fit.finite_fit: a
number beyond 15 and the outcomes separated, by a linear programme on the distinct rows, which the
weights do not change), so it is grouped too: no cell is read call by call any more.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ingest.store.database import Database

from . import _metrics as m
from ._bias import cell_rng
from ._read import reading
from ._style import (_SCHEMA, COUNTS, STYLE_COLUMNS, _cell_rows, _human_rows, _with_counts, held_parameters,
                     prompt_draws, standardise, style_features)
from ._style_fit import _boot_fit, fit_style, held_out

# Python's `\s` within a line (str.isspace(), less the line break) and `\d` (str.isdecimal()), as
# explicit classes: the regex engines of polars and Python disagree on a few characters of each
_SPACE = [c for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 0x0A]
_DIGIT = [c for c in range(sys.maxunicode + 1) if chr(c).isdecimal()]


def _char_class(codes: list[int]) -> str:
    """A regex character class of exactly these code points, as ranges of \\x{..} escapes."""
    parts, start = [], None
    for k, c in enumerate(codes):
        if start is None:
            start = c
        if k + 1 == len(codes) or codes[k + 1] != c + 1:
            parts.append(f"\\x{{{start:X}}}" + (f"-\\x{{{c:X}}}" if c != start else ""))
            start = None
    return "[" + "".join(parts) + "]"


_S, _D = _char_class(_SPACE), _char_class(_DIGIT)
FENCE_RE = r"(?s)```.*?```"
HEADER_RE = rf"(?m)^#{{1,6}}{_S}"
LIST_RE = rf"(?m)^{_S}*(?:[-*+]|{_D}+\.){_S}"
BOLD_RE = r"\*\*[^*\n]+\*\*|__[^_\n]+__"


def style_count_frame(texts: pl.DataFrame) -> pl.DataFrame:
    """(cand_idx, response) -> (cand_idx, chars, headers, lists, bold): audit._style.style_counts of
    each response, vectorised."""
    body = pl.col("response").str.replace_all(FENCE_RE, "")
    return texts.select(pl.col("cand_idx").cast(pl.Int64),
                        pl.col("response").str.len_chars().cast(pl.Int64).alias("chars"),
                        body.str.count_matches(HEADER_RE).cast(pl.Int64).alias("headers"),
                        body.str.count_matches(LIST_RE).cast(pl.Int64).alias("lists"),
                        body.str.count_matches(BOLD_RE).cast(pl.Int64).alias("bold"))


POOL_BATCH = 200_000          # candidates whose texts are held at once while the pool's style is counted


def pool_style_counts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """(cand_idx, chars, headers, lists, bold) of every candidate of the pool (style_count_frame), its
    texts read a batch of POOL_BATCH cand_idx at a time: what the style fit joins its calls to. It depends
    on the pool's texts alone, so it is the derived result 'style_counts' (basis 'pool': stored by the
    pool's first refresh, deleted with the pool when it is replaced) that `style_rank` reads for every
    judging instead of counting the texts again. The counts are Int32 (10M candidates: 240 MB)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        end = int(read.frame("style_pool_size", pool_id=pid)["n"][0])
        parts = [style_count_frame(read.frame("style_pool_texts", pool_id=pid, lo=lo, hi=lo + POOL_BATCH))
                 for lo in range(0, end, POOL_BATCH)]
    frame = pl.concat(parts) if parts else style_count_frame(pl.DataFrame(schema={"cand_idx": pl.Int64,
                                                                                   "response": pl.String}))
    return frame.cast({c: pl.Int32 for c in ("chars", "headers", "lists", "bold")})


def stored_style_counts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame | None:
    """The derived result 'style_counts' (pool_style_counts' frame) as stored, when it is current (the
    database of `db`, whichever judgings `db` is scoped to: the counts are the pool's); None where it
    is not stored (a pool not refreshed yet, a database before the derived results). Read, never
    computed or stored here: storing is the derived layer's (audit.derived)."""
    whole = Database(Database.of(db).path)
    mark = whole.derived_mark(pool, "pool")
    return None if mark is None else whole.derived_result(mark, "style_counts")[0]


def _standardise(raw: np.ndarray, mult: np.ndarray | None):
    """audit._style.standardise over the rows, each counted `mult` times (None: once)."""
    if mult is None:
        return standardise(raw)
    w = mult[:, None] / mult.sum()
    mean = (w * raw).sum(axis=0)
    sd = np.sqrt((w * (raw - mean) ** 2).sum(axis=0))
    kept = sd > 1e-12 * np.maximum(1.0, np.abs(mean))
    return mean, np.where(kept, sd, 1.0), kept


def identified(a: np.ndarray, b: np.ndarray, z: np.ndarray, n: int, mult: np.ndarray | None) -> bool:
    """Whether the design [1, e_A - e_B (reference coding), z] of the rows tells every parameter apart
    (audit._style_fit.held_out holds none; an anchor always in slot B does not: the slot and its strength
    are one parameter)."""
    return not held_out(np.asarray(a), np.asarray(b), z, n, mult).any()


def style_fit(ids: list[str], a: np.ndarray, b: np.ndarray, y: np.ndarray, raw: np.ndarray,
              mult: np.ndarray | None, unit: np.ndarray, prompts: np.ndarray, judged: pl.DataFrame | None,
              labels: pl.DataFrame | None, n_boot: int, rng: np.random.Generator, penalty: float = 0.0) -> list[dict]:
    """The rows of STYLE_COLUMNS (without the cell's identity) for one cell's rows inside its largest
    connected group: systems `ids` (codes a, b), outcomes y, raw features (style_features), each row
    standing for `mult` calls (None: one), its prompt as `unit` (an index into `prompts`, the cell's
    sorted prompt_ids); `judged` (prompt_id, a_id, b_id of the rows; needed only with labels).

    The rows are first summed over prompts (`_over_prompts`): a row's likelihood does not depend on its
    prompt, so the fit is that of the distinct (a, b, y, style) rows weighted by their calls; a bootstrap
    resample's weights are its multinomial counts over the prompts times the prompts' calls in each
    distinct row (counts @ M, M the prompts x distinct rows table of calls), the same likelihood as the
    calls reweighted prompt by prompt."""
    mult = np.ones(a.size) if mult is None else np.asarray(mult, float)
    big_n = int(mult.sum())
    a, b, y, raw, calls = _over_prompts(a, b, y, raw, mult, unit, prompts.size)
    mult = np.asarray(calls.sum(axis=0)).ravel()
    n = len(ids)
    mean, sd, kept = _standardise(raw, mult)
    z = ((raw - mean) / sd)[:, kept]
    held, held_plain = held_parameters(a, b, z, n, mult)
    fit = fit_style(a, b, y, z, n, w=mult, penalty=penalty, held=held)
    plain = fit_style(a, b, y, np.zeros((a.size, 0)), n, w=mult, penalty=penalty, held=held_plain)
    counts = prompt_draws(rng, prompts.size, n_boot)
    boot = None
    if n_boot > 0 and fit["finite"]:
        boot = _boot_fit(a, b, y, z, n, np.asarray((calls.T @ counts.T).T), fit["theta"], penalty, held)
    human = _human_rows(judged, labels, prompts, mean, sd, kept) if judged is not None else None
    return _cell_rows(ids, a, b, y, mult, kept, fit, plain, boot, held, big_n, human, mean, sd, counts, n_boot,
                      penalty)


def _over_prompts(a, b, y, raw, mult, unit, n_prompts: int):
    """The distinct (a, b, y, raw) rows and M (n_prompts x distinct rows, sparse): the calls of each
    prompt in each distinct row."""
    keys = np.column_stack([a, b, y, raw])
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    calls = csr_matrix((mult, (np.asarray(unit), inverse.ravel())), shape=(n_prompts, first.size))
    return a[first], b[first], y[first], raw[first], calls


def _largest_group(a_code: np.ndarray, b_code: np.ndarray, systems: np.ndarray):
    """audit._style._codes on system codes (their rank among the pool's candidate_ids, so sorted codes
    are sorted ids): the systems of the largest connected group, the rows inside it, their codes."""
    present = np.unique(np.concatenate([a_code, b_code]))
    local = np.full(systems.size, -1, np.int64)
    local[present] = np.arange(present.size)
    a, b = local[a_code], local[b_code]
    graph = csr_matrix((np.ones(a.size), (a, b)), shape=(present.size, present.size))
    _, group = connected_components(graph, directed=False)
    keep_sys = group == np.argmax(np.bincount(group))
    remap = np.cumsum(keep_sys) - 1
    inside = keep_sys[a] & keep_sys[b]
    return systems[present[keep_sys]].tolist(), inside, remap[a[inside]], remap[b[inside]]


def candidate_kinds(cand_idx: np.ndarray, code: np.ndarray, counts: pl.DataFrame, n_cand: int):
    """(kind, table): kind[cand_idx] = the candidate's style kind, 1.. (0: no style counts), one per distinct
    (system code, chars, headers, lists, bold) among the candidates `counts` (style_count_frame's frame)
    holds, numbered in that order; table[kind] = that (code, chars, headers, lists, bold). code: the
    system code of each cand_idx. The five numbers are packed into one integer where they fit 63 bits."""
    system = np.zeros(n_cand, np.int64)
    system[cand_idx] = code
    styled_idx = counts["cand_idx"].to_numpy()
    columns = [system[styled_idx], *(counts[c].to_numpy() for c in COUNTS)]
    bits = [max(1, int(c.max(initial=0)).bit_length()) for c in columns]
    kind = np.zeros(n_cand, np.int64)
    if sum(bits) <= 63 and min(int(c.min(initial=0)) for c in columns) >= 0:
        packed = columns[0]                                 # a fresh array: packed in place
        for c, width in zip(columns[1:], bits[1:]):
            packed <<= width
            packed |= c
        distinct, inverse = np.unique(packed, return_inverse=True)
        table = np.zeros((distinct.size + 1, 5), np.int64)
        for j in range(4, -1, -1):                          # unpacked, the last number first
            table[1:, j] = distinct & ((1 << bits[j]) - 1)
            distinct = distinct >> bits[j]
    else:
        rows, inverse = np.unique(np.column_stack(columns), axis=0, return_inverse=True)
        table = np.vstack([np.zeros((1, 5), np.int64), rows])
    kind[styled_idx] = inverse.ravel() + 1
    return kind, table


def style_groups(key: np.ndarray, a_idx: np.ndarray, b_idx: np.ndarray, kind: np.ndarray, table: np.ndarray) -> dict:
    """Pure: the calls grouped as the style fit weighs them alike. A call: its `key` (a non-negative
    integer standing for its cell, outcome and, when the caller needs it, its prompt) and its candidates
    in slot A and slot B; kind and table: candidate_kinds'. One group per (key, kind of A, kind of B) of
    the calls between two different systems whose candidates both have style counts: {"key",
    "a_code", "b_code", "a" and "b" (n, 4: chars, headers, lists, bold), "n" (the calls)}, in that
    order. The calls are counted on one integer per call (np.bincount where its range is small, as
    when responses repeat their style; a sort otherwise), and only the groups are then looked at."""
    small = np.int32 if table.shape[0] < 1 << 31 else np.int64
    kind = kind.astype(small, copy=False)
    sizes = [int(key.max(initial=0)) + 1, table.shape[0], table.shape[0]]
    key, ka, kb, n = m.distinct_counts([key, kind[a_idx], kind[b_idx]], sizes)
    keep = (ka > 0) & (kb > 0) & (table[ka, 0] != table[kb, 0])
    key, ka, kb, n = key[keep], ka[keep], kb[keep], n[keep]
    return {"key": key, "a_code": table[ka, 0], "b_code": table[kb, 0], "a": table[ka, 1:], "b": table[kb, 1:],
            "n": n}


def _groups(read, pid: int, counts: pl.DataFrame, by_prompt: bool):
    """(cells, groups, prompt_ids): the pool's comparative cells (judge, format, decoding) by their number,
    their calls grouped (style_groups, with "cell", "y" and "unit": the prompt's rank in prompt_id order,
    0 unless by_prompt) and, when by_prompt, the prompt_id of each unit. The calls come as integers
    (style_rank_calls.sql: a cell's number made of its ids, the outcome and the prompt in one key)."""
    decodings = read.frame("style_decodings", pool_id=pid)["decoding"].to_list()
    if not decodings:
        return {}, None, None
    names = read.frame("style_cell_names")
    judges, formats = (dict(names.filter(pl.col("what") == w).select("id", "name").iter_rows())
                       for w in ("judge", "format"))
    n_formats, n_decodings = max(formats) + 1, len(decodings)
    prompts = read.frame("style_prompt_ids", pool_id=pid) if by_prompt else None
    n_prompts = int(prompts["prompt_idx"].max()) + 1 if by_prompt and prompts.height else 1
    calls = read.numpy("style_rank_calls", pool_id=pid, decodings=decodings, n_formats=n_formats,
                       by_prompt=by_prompt, n_prompts=n_prompts)
    systems = read.numpy("rank_candidate_codes", pool_id=pid)      # the systems coded as the rankings code them
    n_cand = int(systems["cand_idx"].max(initial=-1)) + 1
    kind, table = candidate_kinds(systems["cand_idx"], systems["code"], counts, n_cand)
    groups = style_groups(calls["key"], calls["a_idx"], calls["b_idx"], kind, table)
    cell_y, prompt = (groups["key"] // n_prompts, groups["key"] % n_prompts) if by_prompt \
        else (groups["key"], np.zeros_like(groups["key"]))
    groups.update(cell=cell_y // 3, y=(cell_y % 3) / 2.0, unit=prompt)
    prompt_ids = None
    if by_prompt:
        unit_of = np.zeros(n_prompts, np.int64)
        unit_of[prompts["prompt_idx"].to_numpy()] = np.arange(prompts.height)
        groups["unit"] = unit_of[prompt]
        prompt_ids = np.array(prompts["prompt_id"].to_list(), object)
    cells = {c: (judges[c // n_decodings // n_formats], formats[c // n_decodings % n_formats],
                 decodings[c % n_decodings]) for c in np.unique(groups["cell"]).tolist()}
    return cells, groups, prompt_ids


def style_rank(db: str | os.PathLike | None, pool: str, n_boot: int = 1000, seed: int = 0,
               cell: tuple[str, str, str] | None = None, penalty: float = 0.0,
               counts: pl.DataFrame | None = None) -> pl.DataFrame:
    """audit.style_rank (its columns: audit._style.style_rank, which reads every call), each cell read
    grouped from DuckDB (the module's doc). `counts`: the pool's style counts (pool_style_counts' frame);
    None: the stored ones (stored_style_counts) where current, else those of the texts the calls and
    labels use, counted now."""
    frames = []
    if counts is None:
        counts = stored_style_counts(db, pool)
    with reading(db) as read:
        pid = read.pool_id(pool)
        if counts is None:
            counts = style_count_frame(read.frame("style_texts", pool_id=pid))
        labels = read.frame("style_labels", pool_id=pid)
        labels = _with_counts(labels, counts) if labels.height else None
        cells, groups, prompt_ids = _groups(read, pid, counts, by_prompt=n_boot > 0 or labels is not None)
        systems = None
        for c, (judge, fmt, decoding) in sorted(cells.items(), key=lambda item: item[1]):
            if cell is not None and (judge, fmt, decoding) != tuple(cell):
                continue
            mine = groups["cell"] == c
            if systems is None:
                systems = np.array(read.frame("rank_systems", pool_id=pid)["candidate_id"].to_list(), object)
            ids, inside, a, b = _largest_group(groups["a_code"][mine], groups["b_code"][mine], systems)
            rows = {k: v[mine][inside] for k, v in groups.items() if k not in ("cell", "key")}
            units, unit = np.unique(rows["unit"], return_inverse=True)
            judged = None
            if labels is not None:
                prompts = prompt_ids[units].astype(str)
                names = np.array(ids, dtype=object)
                judged = pl.DataFrame({"prompt_id": prompts[unit], "a_id": names[a], "b_id": names[b]},
                                      schema={"prompt_id": pl.String, "a_id": pl.String, "b_id": pl.String})
            else:
                prompts = units                      # only their number and order are used
            raw = style_features(rows["a"], rows["b"])
            out = style_fit(ids, a, b, rows["y"], raw, rows["n"].astype(float), unit, prompts, judged, labels,
                            n_boot, cell_rng(seed, judge, fmt, decoding, "style"), penalty)
            frames.append(pl.DataFrame(out, schema={c: t for c, t in _SCHEMA.items()
                                                    if c not in ("judge", "format", "decoding")})
                          .with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format"),
                                        pl.lit(decoding).alias("decoding")))
    if not frames:
        return pl.DataFrame(schema=_SCHEMA)
    return pl.concat(frames).select(STYLE_COLUMNS).with_columns(pl.selectors.float().fill_nan(None)) \
        .sort("judge", "format", "decoding", maintain_order=True)
