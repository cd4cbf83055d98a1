"""The judges' leaderboard (`judgeaudit judges`): each quality column equals what its own command prints
for the same cell (calibrate, bias, consistency, rank --style), costs follow by hand from the stored
token counts and the prices in judgeaudit.toml, a jury pays for its members, and the Pareto front."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pytest

from app.cli import main
from audit import judges, pareto_front
from audit._judges import cell_cost
from ingest.scoring import ScoreRequest, score
from ingest.store import import_labels, import_pool, save_jury
from tests.fixtures import write_jsonl
from tests.audit.conftest import main_json

PRICES = {"alpha": {"input": 2.5, "output": 10.0}, "beta": {"input": 0.15, "output": 0.6}}


def build_board(tmp: Path) -> Path:
    """A pool of 8 prompts x 3 candidates scored by three simulated judges (tournament in both orders and
    likert5, 3 samples each, token counts and latencies as the fake judge reports them), their mean jury
    `panel`, human labels on 16 pairs, and judgeaudit.toml beside it pricing alpha and beta."""
    db = tmp / "b.duckdb"
    rows, labels = [], []
    for p in range(8):
        for i, c in enumerate("xyz"):
            rows.append({"prompt_id": f"p{p}", "prompt": f"question {p}", "candidate_id": c,
                         "response": f"answer {c} " + "words " * (3 * i + p % 3), "reference": float((i + p) % 3)})
        labels += [{"prompt_id": f"p{p}", "a_id": "x", "b_id": "y", "label": "AB"[p % 2]},
                   {"prompt_id": f"p{p}", "a_id": "y", "b_id": "z", "label": ["A", "B", "tie"][p % 3]}]
    import_pool(db, write_jsonl(tmp / "pool.jsonl", rows), "p")
    for name, query in (("alpha", "noise=0.6&slot_bias=0.4&seed=1"), ("beta", "noise=1.0&seed=2"),
                        ("gamma", "noise=0.8&length_bias=1&seed=3")):
        score(ScoreRequest(pool="p", judge=f"fake:{name}?{query}", formats=["tournament", "likert5"], db=db,
                           schedule="both", samples=3, temperature=0.7, progress=False, concurrency=4))
    save_jury(db, "p", "panel", ["alpha", "beta", "gamma"], "mean")
    import_labels(db, write_jsonl(tmp / "labels.jsonl", labels), "p")
    (tmp / "judgeaudit.toml").write_text("".join(f'[prices.{n}]\ninput = {p["input"]}\noutput = {p["output"]}\n'
                                                 for n, p in PRICES.items()), encoding="utf-8")
    return db


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    return build_board(tmp_path_factory.mktemp("judges"))


def _cells(doc: dict) -> dict:
    return {(c["judge"], c["format"], c["decoding"]): c for c in doc["cells"]}


def test_the_leaderboard_equals_what_each_command_prints_for_the_same_cell(board, capsys, monkeypatch):
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    board_doc = _cells(main_json(capsys, "judges", "--db", str(board), "--pool", "p", "--json"))
    calib = _cells(main_json(capsys, "calibrate", "--db", str(board), "--pool", "p", "--json"))
    slots = _cells(main_json(capsys, "bias", "--db", str(board), "--pool", "p", "--json"))
    repeats = _cells(main_json(capsys, "consistency", "--db", str(board), "--pool", "p", "--json"))
    style = _cells(main_json(capsys, "rank", "--style", "--db", str(board), "--pool", "p", "--json"))
    audit = {k: c for k, c in _cells(main_json(capsys, "audit", "--db", str(board), "--pool", "p", "--json")).items()}
    assert {k[:2] for k in board_doc} == {(j, f) for j in ("alpha", "beta", "gamma", "panel")
                                          for f in ("likert5", "tournament")} and len(board_doc) == 8
    for key, row in board_doc.items():
        assert row["parse_rate"] == audit[key]["parse_rate"]
        if key[1] == "likert5":
            assert row["kappa"] is None and row["reasons"]["agreement"] == "pointwise format"
            assert row["b"] is None
            continue
        c = calib[key]
        assert row["kappa"] == {"value": c["kappa"], "lo": c["kappa_lo"], "hi": c["kappa_hi"]}
        assert (row["agreement"], row["ece"], row["n_labelled"]) == (c["agreement"], c["ece"], c["n"])
        assert (row["b"], row["b_lo"], row["b_hi"]) == (slots[key]["b"], slots[key]["b_lo"], slots[key]["b_hi"])
        excess = style[key]["human"]["excess"]["length"]
        assert (row["length_excess"], row["length_excess_lo"], row["length_excess_hi"]) == \
            (excess["value"], excess["lo"], excess["hi"])
    for key, row in board_doc.items():
        if key[0] == "panel":   # a jury votes on sample 0: no repeats of its own
            assert row["flip_rate"] is None and row["reasons"]["flip_rate"] == "no repeats"
            assert row["aggregate"] == "jury" and row["members"] == ["alpha", "beta", "gamma"]
        else:
            assert row["flip_rate"] == repeats[key]["flip_rate"] and row["flip_rate"] is not None
    ece = {k[0]: r["ece"] for k, r in board_doc.items() if k[1] == "tournament"}
    assert ece["alpha"] is not None and ece["panel"] is not None    # from its repeats; from its members' shares
    worth: dict = {}                     # what `estimate` prints for the cell, over its targets and systems
    for target in ("accept", "winrate"):
        if main(["estimate", "--db", str(board), "--pool", "p", "--target", target, "--json"]) == 0:
            for c in json.loads(capsys.readouterr().out)["cells"]:
                if c["effective_labels"] is not None:
                    worth.setdefault((c["judge"], c["format"], c["decoding"]), []).append(c["effective_labels"])
        capsys.readouterr()
    assert worth, "the pool's pairwise labels give winrate estimates"
    for key, row in board_doc.items():
        if key in worth:
            assert row["effective_labels"] == pytest.approx(sum(worth[key]) / len(worth[key]))
        else:
            assert row["effective_labels"] is None and row["reasons"]["effective_labels"]


def _stored_tokens(db: Path, judge: str, fmt: str, sample0: bool) -> tuple[int, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT sum(tokens_in), sum(tokens_out) FROM verdicts v JOIN judges j USING (judge_id) "
                           "JOIN formats f USING (format_id) WHERE j.name = $j AND f.name = $f "
                           "AND (NOT $s0 OR v.sample = 0)", {"j": judge, "f": fmt, "s0": sample0}).fetchone()
    finally:
        con.close()


def test_costs_by_hand_from_the_stored_token_counts(board):
    rows = {(r["judge"], r["format"]): r for r in judges(board, "p", prices=PRICES).to_dicts()}
    t_in, t_out = _stored_tokens(board, "alpha", "tournament", sample0=False)   # every sample is paid for
    alpha = rows[("alpha", "tournament")]
    assert t_in > 0 and (alpha["tokens_in"], alpha["tokens_out"]) == (t_in, t_out)
    assert alpha["cost_usd"] == pytest.approx((t_in * 2.5 + t_out * 10.0) / 1e6, rel=1e-12)
    # 8 prompts x 3 pairs x 2 orders = 48 verdicts (sample 0)
    assert alpha["n_verdicts"] == 48 and alpha["cost_per_1000"] == pytest.approx(alpha["cost_usd"] / 48 * 1000)
    assert rows[("gamma", "tournament")]["cost_usd"] is None
    assert rows[("gamma", "tournament")]["reasons"]["cost_usd"] == "no price for gamma in judgeaudit.toml"
    # the jury pays for its members' sample-0 calls, each at the member's price
    priced = {**PRICES, "gamma": {"input": 1.0, "output": 2.0}}
    rows = {(r["judge"], r["format"]): r for r in judges(board, "p", prices=priced).to_dicts()}
    want = 0.0
    for member, price in priced.items():
        m_in, m_out = _stored_tokens(board, member, "likert5", sample0=True)
        want += (m_in * price["input"] + m_out * price["output"]) / 1e6
    assert rows[("panel", "likert5")]["cost_usd"] == pytest.approx(want, rel=1e-12)
    assert rows[("panel", "likert5")]["tokens_in"] == sum(_stored_tokens(board, m, "likert5", True)[0] for m in priced)
    without = judges(board, "p").to_dicts()
    assert all(r["cost_usd"] is None and r["reasons"]["cost_usd"] == "no prices" for r in without)


def test_a_cost_is_null_when_calls_report_no_tokens():
    usage = [{"payer": "a", "n_calls": 4, "n_with_tokens": 4, "tokens_in": 1000, "tokens_out": 10},
             {"payer": "b", "n_calls": 4, "n_with_tokens": 3, "tokens_in": 900, "tokens_out": 9}]
    prices = {"a": {"input": 1.0, "output": 3.0}, "b": {"input": 1.0, "output": 1.0}}
    # a alone: (1000 * 1 + 10 * 3) / 1e6 = 0.00103
    assert cell_cost(usage[:1], prices) == (pytest.approx(0.00103), None)
    assert cell_cost(usage, prices) == (None, "1 calls of b report no tokens")


def test_the_pareto_front_by_hand():
    # (cost, agreement): A (1, 0.6) B (2, 0.7) C (2, 0.65) dominated by B, D (3, 0.7) dominated by B,
    # E (0.5, 0.5), F (nan, 0.9) has no cost: off the front
    cost = np.array([1, 2, 2, 3, 0.5, np.nan])
    agree = np.array([0.6, 0.7, 0.65, 0.7, 0.5, 0.9])
    assert pareto_front(cost, agree).tolist() == [True, True, False, False, True, False]


def test_prices_are_read_from_judgeaudit_toml_and_checked(tmp_path, monkeypatch):
    from ingest import UserError
    from ingest.endpoints import prices
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    db = tmp_path / "x.duckdb"
    assert prices(db) == {}                                     # no file: no prices
    (tmp_path / "judgeaudit.toml").write_text('[prices.gpt-4o]\ninput = 2.5\noutput = 10\n', encoding="utf-8")
    assert prices(db) == {"gpt-4o": {"input": 2.5, "output": 10.0}}
    (tmp_path / "judgeaudit.toml").write_text('[prices.gpt-4o]\ninput = 2.5\n', encoding="utf-8")
    with pytest.raises(UserError, match="prices.gpt-4o"):
        prices(db)
    (tmp_path / "judgeaudit.toml").write_text('[prices.gpt-4o]\ninput = -1\noutput = 1\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"prices.gpt-4o.input': a number >= 0"):
        prices(db)


def test_the_stored_board_reads_the_stored_results_and_equals_the_computed_one(board, tmp_path, monkeypatch):
    """The derived result judges_board (audit/derived/: judges_frame) reads the stored cells, slot bias
    and consistency instead of computing them again, limited to the judgings it is computed for (a
    jury's included): whole and per judging, its rows equal the leaderboard computed from scratch."""
    import shutil

    from polars.testing import assert_frame_equal

    import audit._judges as J
    from audit import derived
    from audit.derived._registry import judges_frame, price_args
    from ingest import Database
    db = tmp_path / "copy.duckdb"
    shutil.copy(board, db)
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    want = judges(db, "p", PRICES)              # every column computed here, nothing stored yet
    assert set(want["aggregate"]) == {"single", "jury"} and want["b"].drop_nulls().len() > 0
    judgings = (("alpha", "tournament"), ("panel", "tournament"), ("beta", "likert5"))
    want_part = {j: judges(Database(db).scoped([j]), "p", PRICES) for j in judgings}   # so too, one judging's
    derived.forget()
    derived.refresh(db, "p")                     # stores cells, bias, consistency (and the board at no prices)
    for name in ("audit_cells", "bias", "consistency"):    # from here on they are read, not computed
        monkeypatch.setattr(J, name, lambda *a, _n=name, **k: pytest.fail(f"{_n} computed again"))
    whole = judges_frame(Database(db), "p", price_args(PRICES))
    assert_frame_equal(whole, want, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    for judging in judgings:
        part = judges_frame(Database(db).scoped([judging]), "p", price_args(PRICES))
        assert part.height == want_part[judging].height > 0
        assert set(zip(part["judge"], part["format"])) == {judging}
        assert_frame_equal(part, want_part[judging], check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    stored = derived.read(Database(db), "p", "judges_board", price_args(PRICES))   # in parts, put together
    assert_frame_equal(stored, want, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
