"""The address bar keeps the view (app/url_state.py): the pool in `?pool=`, a few form choices
beside it. The pure rules without Streamlit; then AppTest opening the app at an address, as a
reload, a bookmark or a shared link does (tests/browser/test_browser_reload.py does it in a browser)."""

import re

import pytest
from streamlit.testing.v1 import AppTest

from app import url_state
from tests.conftest import REPO

NAMES = ["arena-bench", "mine", "mtbench-formats"]


@pytest.mark.parametrize("asked, names, expected", [
    (None, NAMES, None),                                   # no ?pool=: nothing to say
    ("mine", NAMES, None),                                 # a pool the database holds
    ("gone", NAMES, "Pool 'gone' from the address is not in this database: showing 'mtbench-formats' instead."),
    ("Mine", NAMES, "Pool 'Mine' from the address is not in this database: showing 'mtbench-formats' instead."),
    ("gone", [], "Pool 'gone' from the address is not in this database, and no pool is yet."),
])
def test_pool_notice(asked, names, expected):
    assert url_state.pool_notice(asked, names, url_state.default_pool(names, "mtbench-formats")) == expected


def test_default_pool_is_the_demo_where_it_exists_else_the_first():
    assert url_state.default_pool(NAMES, "mtbench-formats") == "mtbench-formats"
    assert url_state.default_pool(["b", "a"], "mtbench-formats") == "b"
    assert url_state.default_pool([], "mtbench-formats") is None


WIDGETS = {"selectbox", "radio", "number_input", "text_input", "multiselect", "select_slider", "toggle", "checkbox",
           "slider", "text_area", "segmented_control", "pills", "date_input", "time_input", "color_picker"}
FORM_PAGES = ("score", "curate", "label", "probes", "evaluate", "align")     # every field of these pages is kept


def _unbound(path, text: str | None = None) -> list[str]:
    """The input widgets of a module (its text, when given) called without a key or without
    bind="query-params"."""
    import ast
    out = []
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WIDGETS:
            kw = {k.arg: k.value for k in node.keywords}
            bind = kw.get("bind")
            if "key" not in kw or not (isinstance(bind, ast.Constant) and bind.value == "query-params"):
                out.append(f"{path.relative_to(REPO)}:{node.lineno} {node.func.attr}")
    return out


def test_each_parameter_has_one_name_and_every_form_field_binds_one():
    names = [n for params in url_state.PAGE_PARAMS.values() for n in params]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert {"latency", "sim_name", "provider", "base_url", "model", "queue", "queue_cell", "probe_provider",
            "probe_sim", "eval_study", "eval_max_prompts", "hp_learning_rate", "grid_rates", "jury_vote"} <= set(names)
    main = (REPO / "app" / "main.py").read_text()
    assert "key = url_state.default_pool(names, data.DEFAULT_POOL), url_state.POOL" in main
    # the pool is written to the address on every run, the default pool too (issue 26)
    assert "st.query_params[key] = st.session_state[key]" in main
    assert url_state.opening_pool("mine", ["a", "mine"], "a") == "mine"
    assert url_state.opening_pool("gone", ["a", "mine"], "a") == "a" and url_state.opening_pool(None, ["a"], "a") == "a"
    # every input widget of the form pages (and their helpers beside them, and the judge picker they share)
    # has a key and is bound to the address; the check is run on a planted fault too
    files = [f for page in FORM_PAGES for f in sorted((REPO / "app" / "views" / page).glob("*.py"))]
    files.append(REPO / "app" / "judge_picker.py")
    unbound = [u for f in files for u in _unbound(f)]
    assert not unbound, unbound
    assert sum(len(_widget_calls(f)) for f in files) >= 50
    planted = REPO / "app" / "views" / "score" / "judge.py"
    assert _unbound(planted, planted.read_text().replace(', key=url_state.LATENCY, bind="query-params"', ""))
    # the reading pages' judge pickers: app/judge_picker.judge_select binds its key to the URL
    picker = (REPO / "app" / "judge_picker.py").read_text()
    assert 'key=key, bind="query-params"' in picker
    for page in ("overview.py", "formats.py", "rankings.py"):
        text = (REPO / "app" / "views" / page.removesuffix(".py") / "page.py").read_text()
        for name in url_state.PAGE_PARAMS[page]:
            const = next(k for k, v in vars(url_state).items() if k.isupper() and v == name)
            assert re.search(rf'judge_picker\.judge_select\([^)]*url_state\.{const}\)', text), (page, name)


def _widget_calls(path) -> list:
    import ast
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr in WIDGETS]


@pytest.fixture
def user_db(db, write_jsonl):
    """A user's pool 'mine' with verdicts of two judges x five formats, and a second pool 'other'."""
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    from tests.fixtures import synthetic_pool, synthetic_verdicts
    rows = synthetic_pool(10, seed=4)
    import_pool(db, write_jsonl("pool.jsonl", rows), "mine")
    import_pool(db, write_jsonl("other.jsonl", synthetic_pool(4, seed=5)), "other")
    import_verdicts(db, write_jsonl("verdicts.jsonl", synthetic_verdicts(rows, seed=4)), "mine")
    return db


def _open(path: str, **params) -> AppTest:
    """A new session on the page at `path` with the address's query parameters."""
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180)
    at.query_params.update(params)
    at.run()
    if path:
        at.switch_page(path)
        at.query_params.update(params)                      # switch_page starts from a bare address
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_pool_in_the_address_opens_and_a_missing_one_falls_back_with_a_notice(user_db):
    at = _open("views/score/page.py", pool="other")
    assert at.sidebar.selectbox[0].value == "other" and not at.sidebar.warning
    # 'mine' is the first pool by name, so the fallback (the demo is absent) is 'mine'
    at = _open("views/score/page.py", pool="deleted-pool")
    assert at.sidebar.selectbox[0].value == "mine"
    assert at.sidebar.warning[0].value == ("Pool 'deleted-pool' from the address is not in this database: "
                                           "showing 'mine' instead.")
    at.sidebar.selectbox[0].select("other").run()           # choosing a pool retires the notice
    assert at.sidebar.selectbox[0].value == "other" and not at.sidebar.warning


def test_the_score_and_curate_choices_in_the_address_come_back(user_db):
    from tests.fixtures import synthetic_pool
    other_candidates = {}
    for row in synthetic_pool(4, seed=5):
        other_candidates.setdefault(row["prompt_id"], []).append(row["candidate_id"])
    at = _open("views/score/page.py", pool="other", formats=["likert5", "tournament"], swap="3", decoding="constrained",
               schedule="balanced", concurrency="5")
    assert at.header[0].value == "Score" and at.sidebar.selectbox[0].value == "other"
    assert at.multiselect(key="formats").value == ["likert5", "tournament"] and at.text_input(key="swap").value == "3"
    assert (at.radio(key="decoding").value, at.selectbox(key="schedule").value,
            at.number_input(key="concurrency").value) == ("constrained", "balanced", 5)
    # the count is planned for the URL's pool and formats: one likert5 call per candidate, one tournament
    # call per pair within a prompt (k(k-1)/2) and 3 swapped repeats; the seeded pool has k = 5, 2, 5, 5:
    # 17 likert5 + (10 + 1 + 10 + 10 + 3 =) 34 tournament = 51 calls
    ks = [len(c) for c in other_candidates.values()]
    pointwise, pairs = sum(ks), sum(k * (k - 1) // 2 for k in ks) + 3
    assert any(f"**{pointwise + pairs} calls** ({pointwise} likert5 + {pairs} tournament)" in i.value
               for i in at.info), ([i.value for i in at.info], ks)

    at = _open("views/curate/page.py", pool="mine", judge="beta", format="numeric100", preset="paper", steps="7",
               rate="0.5", seeds=["1", "2"])
    assert at.selectbox(key="judge").value == "beta" and at.selectbox(key="format").value == "numeric100"
    assert at.select_slider(key="rate").value == 0.5 and at.multiselect(key="seeds").value == [1, 2]
    assert at.selectbox(key="policy").value == "judge"
    # the address holds the words the page shows for an option (?policy=longest)
    assert _open("views/curate/page.py", pool="mine", policy="longest").selectbox(key="policy").value == "length"
    assert at.radio(key="preset").value == "paper" and at.number_input(key="steps").value == 7
    assert any("--max-steps 7" in c.value and "--format numeric100" in c.value for c in at.code)
    # a format the judge lacks is dropped: the first of the judge's formats, not an error
    at = _open("views/curate/page.py", pool="mine", format="no-such-format")
    assert at.selectbox(key="format").value == at.selectbox(key="format").options[0]


def test_a_preset_sets_max_steps_and_a_typed_value_stays(user_db):
    import train
    at = _open("views/curate/page.py", pool="mine")
    steps = at.number_input(key="steps")
    assert at.radio(key="preset").value == "quick" and steps.value == train.PRESETS["quick"]["max_steps"]
    steps.set_value(2).run()
    at.selectbox(key="format").select(at.selectbox(key="format").options[-1]).run()    # another choice: 2 stays
    assert at.number_input(key="steps").value == 2
    at.radio(key="preset").set_value("paper").run()             # the preset's own value (0: train by epochs)
    assert at.number_input(key="steps").value == train.PRESETS["paper"]["max_steps"] == 0
    at.radio(key="preset").set_value("quick").run()
    assert at.number_input(key="steps").value == train.PRESETS["quick"]["max_steps"]
