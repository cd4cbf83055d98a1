"""The Judges page, the Score page's jury form and the Overview's jury sentence, through AppTest on
the MT-Bench demo (its jury of the four MT-Bench judges is seeded with it)."""

import pytest
from streamlit.testing.v1 import AppTest

from audit import juries
from ingest.demo import seed_demo
from tests.conftest import REPO


@pytest.fixture(scope="module")
def mtbench_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("judges-page") / "demo.duckdb"
    seed_demo(path, pools=("mtbench",))
    return path


def _app(db, monkeypatch):
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    return AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=240).run()


def test_the_judges_page_shows_the_leaderboard_with_the_demo_jury(mtbench_db, monkeypatch):
    at = _app(mtbench_db, monkeypatch)            # the dashboard seeds the rest of the demo beside it
    at.sidebar.selectbox[0].select("mtbench").run()
    at.switch_page("views/judges/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["juries"] == "1" and metrics["cells"] == "10"     # 5 judges (the jury too) x 2 formats
    table = at.dataframe[0].value
    assert "mtbench-jury" in set(table["judge"]) and "why –" in table.columns
    # the demo's verdicts carry no token counts: every cell is off the chart, and the page says why
    assert any("off the chart: 10 cells" in c.value and "no token counts" in c.value for c in at.caption)
    # the jury's effective size, per format: four judges whose errors correlate are worth about 1.4 and 1.3
    sizes = [c.value for c in at.caption if "independent judges" in c.value]
    assert any("llmbar-pair-metrics-reference / greedy: worth 1.4 independent judges of its 4" in c for c in sizes)
    assert any("llmbar-pair-vanilla-norules / greedy: worth 1.3 independent judges of its 4" in c for c in sizes)


def test_the_overview_says_whether_the_jury_beats_its_best_member(mtbench_db, monkeypatch):
    at = _app(mtbench_db, monkeypatch)
    at.sidebar.selectbox[0].select("mtbench").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    # GPT-4's kappa (0.53-0.55) is above the mean jury's (0.40-0.43), the intervals overlapping; the mean
    # of four votes breaks ties at the top of a prompt
    assert "The jury **mtbench-jury** (mean of GPT-4, ChatGPT, PaLM2, LLaMA2)" in text
    assert "its best member GPT-4 against humans" in text and "breaks ties" in text


def test_a_jury_defined_on_the_score_page_is_stored(mtbench_db, monkeypatch):
    at = _app(mtbench_db, monkeypatch)
    at.sidebar.selectbox[0].select("mtbench").run()
    at.switch_page("views/score/page.py").run()
    assert not at.exception
    assert "mtbench-jury" not in at.multiselect(key="jury_members").options     # a jury is not a member
    at.multiselect(key="jury_members").set_value(["GPT-4", "PaLM2", "LLaMA2"])
    at.text_input(key="jury_name").set_value("three")
    at.radio(key="jury_vote").set_value("majority").run()
    at.button(key="jury-save").click().run()
    assert not at.exception and at.success, [e.value for e in at.error]
    assert {"judge": "three", "vote": "majority", "members": ["GPT-4", "PaLM2", "LLaMA2"]} in \
        juries(mtbench_db, "mtbench").to_dicts()


def test_the_formats_page_offers_the_jury_as_a_judge(mtbench_db, monkeypatch):
    at = _app(mtbench_db, monkeypatch)
    at.sidebar.selectbox[0].select("mtbench").run()
    at.switch_page("views/formats/page.py").run()
    assert "mtbench-jury" in at.selectbox(key="formats_judge").options
    at.selectbox(key="formats_judge").select("mtbench-jury").run()
    assert not at.exception and at.subheader[0].value == "Score histograms — mtbench-jury"
