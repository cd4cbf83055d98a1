"""Nothing typed is lost, in a real browser (Debian's chromium through Playwright, against `judgeaudit
app`): on every form page (Score with every judge kind and the jury, Label with the queue it draws,
Curate & Train, Probes & mitigations, Evaluate) each field is typed or picked as a user does, the
page is reloaded (a new session at the same address, app/url_state.py) and each field is read back.

Screenshots at 1400 px go to $JUDGEAUDIT_SHOTS (default: the test's folder)."""

import os
import re
from pathlib import Path

import pytest

from tests.browser.test_browser import ARGS, CHROMIUM, _serve_app

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install "
                                                         "chromium); .ci/run installs it where apt works")
POOL = "mtbench-formats"


def _settled(page) -> None:
    """Wait until the page's script runs are over: Streamlit's 'Running...' status absent at two looks half
    a second apart (it shows only some time into a run, so one look just after a change can miss a run
    that goes on computing a result; a change made during that run can be lost)."""
    from playwright.sync_api import expect
    status = page.get_by_test_id("stStatusWidget")
    quiet = 0
    while quiet < 2:
        page.wait_for_timeout(500)
        expect(status).to_have_count(0)
        page.wait_for_timeout(10)
        quiet = quiet + 1 if status.count() == 0 else 0


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The bundled demo, a probe pool judged by a simulated judge with and without a mitigation, and a
    finished training run of the demo pool (what the Evaluate form offers), served by the dashboard."""
    from ingest.demo import seed_demo
    from ingest.runs import running
    from ingest.scoring.probes import run_probe
    db = tmp_path_factory.mktemp("kept") / "kept.duckdb"
    seed_demo(db)
    for strategy in (None, "swap"):
        run_probe(db, "fake:sim?slot_bias=0.5", sample=1, strategy=strategy)
    with running(db, "train", pool=POOL, config={"curation": {"policy": "judge", "judge": "smollm2-demo",
                                                              "format": "likert5", "rate": 0.25}}):
        pass
    yield from _serve_app({"JUDGEAUDIT_DB": str(db)})


@pytest.fixture
def page(served, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        tab.set_default_timeout(60_000)
        tab.served, tab.shots = served, tmp_path
        yield tab
        browser.close()


def _shot(page, name: str) -> None:
    folder = Path(os.environ.get("JUDGEAUDIT_SHOTS") or page.shots)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"kept-{name}.png"), full_page=True)


def _open(page, path: str, ready: str) -> None:
    page.goto(page.served + path)
    from playwright.sync_api import expect
    expect(page.get_by_text(ready).first).to_be_visible()
    _settled(page)


def _one(locator):
    """The locator once it holds one element: while a long run (a result computed on a first visit) draws,
    the widget drawn by the run before can stand beside the new one for seconds, and a change made on that
    copy is lost with it."""
    from playwright.sync_api import expect
    expect(locator).to_have_count(1)
    return locator


def _kept(page, action, fragment: str | None) -> None:
    """Do `action` (idempotent) until the address holds `fragment` ("key=value", as the address writes it):
    on a loaded machine a click that lands while the page is still drawing can be lost, so it is done
    again; a change that never reaches the address fails here, before the reload."""
    from playwright.sync_api import expect
    for attempt in range(3):
        action()
        _settled(page)
        if fragment is None:          # a choice equal to its default: the address leaves it out
            return
        try:
            expect(page).to_have_url(re.compile(r"[?&]" + re.escape(fragment) + r"(&|$)"), timeout=15_000)
            return
        except AssertionError:
            if attempt == 2:
                raise


def _type(page, role: str, name: str, value: str, fragment: str | None, where=None) -> None:
    """Type into a text box or number field as a user does, then leave it (Tab: a field inside a form
    keeps the value staged; Enter would submit the form)."""
    def act():
        field = _one((where or page).get_by_role(role, name=name, exact=True))
        field.fill(value)
        field.press("Tab")
    _kept(page, act, fragment)


def _radio(page, group: str, option: str, fragment: str | None) -> None:
    _kept(page, lambda: _one(page.get_by_test_id("stRadio").filter(has_text=group)).get_by_text(option, exact=True)
          .click(), fragment)


def _pick(page, name: str, option: str) -> None:
    """Pick an option of a selectbox or multiselect (again when a late rerun closes the list first)."""
    box = page.get_by_role("combobox", name=name, exact=True)
    for attempt in range(4):
        _settled(page)
        _one(box).click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=10_000)
            page.keyboard.press("Escape")
            return
        except Exception:
            if attempt == 3:
                raise
            page.keyboard.press("Escape")


def _choose(page, name: str, option: str, fragment: str | None) -> None:
    _kept(page, lambda: _pick(page, name, option), fragment)


def _multi(page, label: str):
    return page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text(label, exact=True))


def _chips(page, label: str) -> list[str]:
    """The options a multiselect holds (each chip has its "Remove OPTION" button)."""
    names = _multi(page, label).get_by_role("button", name=re.compile(r"^Remove ")).evaluate_all(
        "els => els.map(e => e.getAttribute('aria-label'))")
    return sorted({n.removeprefix("Remove ") for n in names})


def _add(page, label: str, option: str, fragment: str | None) -> None:
    _kept(page, lambda: None if option in _chips(page, label) else _pick(page, label, option), fragment)


def _remove(page, label: str, option: str, fragment: str | None) -> None:
    _kept(page, lambda: option in _chips(page, label) and _multi(page, label).get_by_role(
        "button", name=f"Remove {option}").click(), fragment)


def _reload(page, ready: str) -> str:
    """Reload the page (a new session at the same address); the address it reloaded."""
    from playwright.sync_api import expect
    url = page.url
    page.reload()
    expect(page.get_by_text(ready).first).to_be_visible()
    _settled(page)
    assert page.url == url
    return url


def _value(page, role: str, name: str, value: str, where=None) -> None:
    from playwright.sync_api import expect
    expect((where or page).get_by_role(role, name=name, exact=True)).to_have_value(value)


def _checked(page, group: str, option: str) -> None:
    from playwright.sync_api import expect
    expect(page.get_by_test_id("stRadio").filter(has_text=group).get_by_role("radio", name=option, exact=True)) \
        .to_be_checked()


def _q(key: str, value: str) -> str:
    """key=value as the address writes it."""
    from urllib.parse import quote_plus
    return f"{key}={quote_plus(value)}"


def test_score_keeps_every_judge_kind_the_run_and_the_jury(page):
    from playwright.sync_api import expect
    _open(page, f"/score?pool={POOL}", "Tournament schedule")
    # a typed endpoint: its base URL and model
    _radio(page, "Judge", "Other endpoint (no API key)", _q("provider", "Other endpoint (no API key)"))
    _type(page, "textbox", "Base URL", "http://127.0.0.1:9/v1", _q("base_url", "http://127.0.0.1:9/v1"))
    _type(page, "textbox", "Model", "my-model", "model=my-model")
    # the run's settings
    _remove(page, "Formats", "numeric100", "formats=binary")
    _add(page, "Formats", "tournament", "formats=tournament")
    _radio(page, "Decoding", "constrained", "decoding=constrained")
    _choose(page, "Tournament schedule", "balanced", "schedule=balanced")
    _type(page, "spinbutton", "Concurrency", "3", "concurrency=3")
    _type(page, "textbox", "Swap sample (N or all)", "2", "swap=2")
    _type(page, "spinbutton", "Samples per call", "2", "samples=2")
    _type(page, "spinbutton", "Temperature", "0.7", "temperature=0.7")
    _reload(page, "Tournament schedule")
    _checked(page, "Judge", "Other endpoint (no API key)")
    _value(page, "textbox", "Base URL", "http://127.0.0.1:9/v1")
    _value(page, "textbox", "Model", "my-model")
    assert _chips(page, "Formats") == ["binary", "likert5", "tournament"]
    _checked(page, "Decoding", "constrained")
    _value(page, "combobox", "Tournament schedule", "balanced")
    _value(page, "spinbutton", "Concurrency", "3")
    _value(page, "textbox", "Swap sample (N or all)", "2")
    _value(page, "spinbutton", "Samples per call", "2")
    _value(page, "spinbutton", "Temperature", "0.70")

    # the simulated judge: noise, slot bias, latency and name (a reload used to give back the defaults)
    _radio(page, "Judge", "Simulated judge", None)          # the default kind without configured endpoints
    _type(page, "spinbutton", "Noise", "0.4", "noise=0.4")
    _type(page, "spinbutton", "Slot bias", "0.3", "slot_bias=0.3")
    _type(page, "spinbutton", "Latency (ms per call)", "250", "latency=250")
    _type(page, "textbox", "Simulated judge name", "mysim", "sim_name=mysim")
    _reload(page, "Tournament schedule")
    _checked(page, "Judge", "Simulated judge")
    _value(page, "spinbutton", "Noise", "0.40")
    _value(page, "spinbutton", "Slot bias", "0.30")
    _value(page, "spinbutton", "Latency (ms per call)", "250")
    _value(page, "textbox", "Simulated judge name", "mysim")
    # the estimate follows the latency typed, not the default's "under a second"
    expect(page.get_by_text(re.compile(r"simulated 250 ms per call")).first).to_be_visible()
    _value(page, "spinbutton", "Concurrency", "3")                              # the run's settings stayed

    # the bundled model: its kind alone
    _radio(page, "Judge", "Bundled SmolLM2 (in-process)", _q("provider", "Bundled SmolLM2 (in-process)"))
    _reload(page, "Tournament schedule")
    _checked(page, "Judge", "Bundled SmolLM2 (in-process)")

    # the jury form
    page.get_by_text("Define a jury from the judges already run").click()
    _add(page, "Members", "smollm2-demo", "jury_members=smollm2-demo")
    _add(page, "Members", "smollm2-local", "jury_members=smollm2-local")
    _type(page, "textbox", "Jury name", "pan", "jury_name=pan")
    _radio(page, "Vote", "median", "jury_vote=median")
    _reload(page, "Tournament schedule")
    page.get_by_text("Define a jury from the judges already run").click()
    assert _chips(page, "Members") == ["smollm2-demo", "smollm2-local"]
    _value(page, "textbox", "Jury name", "pan")
    _checked(page, "Vote", "median")
    _shot(page, "score")


def test_label_keeps_the_annotator_the_new_queues_fields_and_the_queue_it_draws(page):
    from playwright.sync_api import expect
    _open(page, f"/label?pool={POOL}", "Annotator")
    _type(page, "textbox", "Annotator", "kim", "annotator=kim")
    _radio(page, "Kind", "one response (accept / reject)", _q("queue_kind", "one response (accept / reject)"))
    _radio(page, "Strategy", "active", "queue_strategy=active")
    _type(page, "spinbutton", "Items", "7", "queue_items=7")
    _choose(page, "From the judged items of", "smollm2-demo / likert5 / constrained",
            _q("queue_cell", "smollm2-demo / likert5 / constrained"))
    _reload(page, "Draw the queue")
    _value(page, "textbox", "Annotator", "kim")
    _checked(page, "Kind", "one response (accept / reject)")
    _checked(page, "Strategy", "active")
    _value(page, "spinbutton", "Items", "7")
    _value(page, "combobox", "From the judged items of", "smollm2-demo / likert5 / constrained")
    # the queue drawn opens at once, and its number reaches the address (its tooltip says so)
    page.get_by_role("button", name="Draw the queue").click()
    expect(page.get_by_test_id("stProgress")).to_contain_text("0 labelled, 0 skipped, 7 to go")
    expect(page).to_have_url(re.compile(r"[?&]queue=1\b"))
    _reload(page, "Draw a new queue")
    _value(page, "combobox", "Queue", "1")
    expect(page.get_by_test_id("stProgress")).to_contain_text("0 labelled, 0 skipped, 7 to go")
    _shot(page, "label")


def _rate(page, steps_right: int):
    def act():
        from playwright.sync_api import expect
        thumb = page.get_by_role("slider", name="Rate")
        expect(thumb).to_have_count(1)            # a copy drawn by the run before goes once this one ends
        thumb.focus()
        page.keyboard.press("Home")               # 0.05, then to the right: 0.1, 0.25, 0.5, ...
        for _ in range(steps_right):
            page.keyboard.press("ArrowRight")
    return act


def test_curate_and_train_keeps_every_field(page):
    from playwright.sync_api import expect
    _open(page, f"/curate?pool={POOL}", "Tie-broken picks")
    _choose(page, "Judge", "smollm2-demo", None)           # the first judge: the default, left out of the address
    _choose(page, "Format", "likert5", "format=likert5")
    _choose(page, "Decoding", "greedy", "curate_decoding=greedy")
    _kept(page, _rate(page, 3), "rate=0.5")
    _add(page, "Seeds", "3", "seeds=3")
    _radio(page, "Preset", "paper", "preset=paper")
    _type(page, "spinbutton", "Max steps (0: epochs)", "4", "steps=4")
    _type(page, "spinbutton", "lora r", "8", "hp_lora_r=8")
    _type(page, "spinbutton", "learning rate", "0.0003", "hp_learning_rate=0.0003")
    _type(page, "spinbutton", "max length", "512", "hp_max_length=512")
    _add(page, "Grid formats", "binary", "grid_formats=binary")
    _remove(page, "Grid rates", "0.1", "grid_rates=0.25")
    _radio(page, "Method", "DPO on the judge's preference pairs", _q("method", "DPO on the judge's preference pairs"))
    _type(page, "spinbutton", "Min margin", "0.5", "min_margin=0.5")
    _kept(page, lambda: page.get_by_role("switch", name="Both orders").is_checked()
          or page.get_by_text("Both orders", exact=True).click(), "both_orders=true")
    _reload(page, "Tie-broken picks")
    _value(page, "combobox", "Judge", "smollm2-demo")
    _value(page, "combobox", "Format", "likert5")
    _value(page, "combobox", "Decoding", "greedy")
    expect(page.get_by_role("slider", name="Rate")).to_have_attribute("aria-valuetext", "0.5")
    assert _chips(page, "Seeds") == ["0", "3"]
    _checked(page, "Preset", "paper")
    _value(page, "spinbutton", "Max steps (0: epochs)", "4")
    _value(page, "spinbutton", "lora r", "8")
    _value(page, "spinbutton", "learning rate", "0.0003")
    _value(page, "spinbutton", "max length", "512")
    assert _chips(page, "Grid formats") == ["binary"] and _chips(page, "Grid rates") == ["0.25"]
    _checked(page, "Method", "DPO on the judge's preference pairs")
    _value(page, "spinbutton", "Min margin", "0.50")
    expect(page.get_by_role("switch", name="Both orders")).to_be_checked()
    _shot(page, "curate")


def test_probes_keeps_the_judge_the_strategy_the_sample_and_what_it_shows(page):
    _open(page, "/probes?pool=mtbench-formats", "Run the probes")
    _remove(page, "Judges", "sim+swap", "probe_judges=sim")
    _radio(page, "Judge", "Other endpoint (no API key)", _q("probe_provider", "Other endpoint (no API key)"))
    form = page.get_by_test_id("stForm")
    _type(page, "textbox", "Base URL (no API key is sent)", "http://127.0.0.1:9/v1",
          _q("probe_base_url", "http://127.0.0.1:9/v1"), form)
    _type(page, "textbox", "Model", "probe-model", "probe_model=probe-model", form)
    _type(page, "textbox", "Strategy (empty = baseline)", "swap,ensemble:3", _q("probe_strategy", "swap,ensemble:3"),
          form)
    _type(page, "spinbutton", "Pairs per probe type (0 = all 325 pairs)", "3", "probe_sample=3", form)
    _reload(page, "Run the probes")
    assert _chips(page, "Judges") == ["sim"]
    _checked(page, "Judge", "Other endpoint (no API key)")
    form = page.get_by_test_id("stForm")
    _value(page, "textbox", "Base URL (no API key is sent)", "http://127.0.0.1:9/v1", form)
    _value(page, "textbox", "Model", "probe-model", form)
    _value(page, "textbox", "Strategy (empty = baseline)", "swap,ensemble:3", form)
    _value(page, "spinbutton", "Pairs per probe type (0 = all 325 pairs)", "3", form)
    _radio(page, "Judge", "Simulated judge", None)         # the default kind
    _type(page, "textbox", "Simulated judge", "sim?slot_bias=0.9", _q("probe_sim", "sim?slot_bias=0.9"),
          page.get_by_test_id("stForm"))
    _reload(page, "Run the probes")
    _value(page, "textbox", "Simulated judge", "sim?slot_bias=0.9", page.get_by_test_id("stForm"))
    _shot(page, "probes")


def test_evaluate_keeps_every_field_of_its_form(page):
    _open(page, f"/evaluate?pool={POOL}", "Launch an evaluation")
    _radio(page, "Evaluation judge", "Other endpoint (no API key)", _q("eval_provider", "Other endpoint (no API key)"))
    form = page.get_by_test_id("stForm")
    _type(page, "textbox", "Base URL (no API key is sent)", "http://127.0.0.1:9/v1",
          _q("eval_base_url", "http://127.0.0.1:9/v1"), form)
    _type(page, "textbox", "Model", "eval-model", "eval_model=eval-model", form)
    _type(page, "textbox", "Study", "my-study", "eval_study=my-study", form)
    _type(page, "spinbutton", "Max new tokens", "64", "eval_max_new=64", form)
    _type(page, "spinbutton", "Batch size", "4", "eval_batch=4", form)
    _type(page, "spinbutton", "Max prompts (0 = all)", "10", "eval_max_prompts=10", form)
    run = _chips(page, "Training runs")
    assert len(run) == 1 and re.match(r"Run \d+ · smollm2-demo/likert5@0.25 · seed 0 · finished", run[0])  # pre-selected
    _remove(page, "Training runs", run[0], "eval_runs=")
    _reload(page, "Launch an evaluation")
    _checked(page, "Evaluation judge", "Other endpoint (no API key)")
    form = page.get_by_test_id("stForm")
    _value(page, "textbox", "Base URL (no API key is sent)", "http://127.0.0.1:9/v1", form)
    _value(page, "textbox", "Model", "eval-model", form)
    _value(page, "textbox", "Study", "my-study", form)
    _value(page, "spinbutton", "Max new tokens", "64", form)
    _value(page, "spinbutton", "Batch size", "4", form)
    _value(page, "spinbutton", "Max prompts (0 = all)", "10", form)
    assert _chips(page, "Training runs") == []             # emptied, and kept empty
    _shot(page, "evaluate")


def test_align_keeps_the_cell_the_demonstrations_the_budget_and_the_share(page):
    from playwright.sync_api import expect
    _open(page, f"/align?pool={POOL}", "Budget (judge calls)")
    form = page.get_by_test_id("stForm")
    _choose(page, "Cell (judge / format / decoding)", "smollm2-demo / likert5 / greedy",
            _q("align_cell", "smollm2-demo / likert5 / greedy"))
    _type(page, "spinbutton", "Demonstrations", "3", "align_k=3", form)
    _type(page, "spinbutton", "Budget (judge calls)", "300", "align_budget=300", form)

    def share():
        thumb = page.get_by_role("slider", name="Held-out share")
        expect(thumb).to_have_count(1)
        thumb.focus()
        page.keyboard.press("Home")                # 0.0, then 8 steps of 0.05
        for _ in range(8):
            page.keyboard.press("ArrowRight")
    _kept(page, share, "align_share=0.4")
    _reload(page, "Budget (judge calls)")
    form = page.get_by_test_id("stForm")
    _value(page, "combobox", "Cell (judge / format / decoding)", "smollm2-demo / likert5 / greedy")
    _value(page, "spinbutton", "Demonstrations", "3", form)
    _value(page, "spinbutton", "Budget (judge calls)", "300", form)
    expect(page.get_by_role("slider", name="Held-out share")).to_have_attribute("aria-valuetext", "0.40")
    _shot(page, "align")
