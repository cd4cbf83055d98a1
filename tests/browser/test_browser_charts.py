"""Every chart draws whole, in a real browser (Debian's chromium through Playwright, against `judgeaudit
app`), at a laptop's 1280 px and at 1400 px: on every page of the demo (with the runs a user's walk adds:
probes, training curves, an evaluation study; Curate & Train also with its DPO pairs shown), no axis tick label and no legend entry lies outside the
chart's bounding box (the chart's SVG, within the page element that holds it) or is shortened with "…",
and no tick label is written with more digits than it means ("6.000000"). The charts are SVG
(app.charts' theme), so each label is a <text> whose box the browser measures.

    PYTHONPATH=. .venv/bin/python -m tests.browser.test_browser_charts DB_PATH [POOL]

prints the same count for a database (the issue's before and after)."""

from __future__ import annotations

import pytest

from tests.app.table_rules import PAGES, add_runs, noise
from tests.browser.test_browser import ARGS, CHROMIUM, _serve_app, _settled

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install "
                                                         "chromium); .ci/run installs it where apt works")
WIDTHS = (1280, 1400)
POOL = "mtbench-formats"        # the demo pool with every kind of chart: five formats, juries, probabilities
# charts a page draws only on a choice: (page, the radio option that shows them)
CHOICES = {"curate": "DPO on the judge's preference pairs"}

# each chart's labels: text, role, whether its box reaches past the chart's (the SVG's box, clipped to the
# Streamlit element that holds it), and a chart drawn on canvas (whose labels cannot be measured)
LABELS = """() => {
  const out = [];
  document.querySelectorAll('.vega-embed').forEach((embed, chart) => {
    const svg = embed.querySelector('svg.marks');
    if (!svg) { if (embed.querySelector('canvas')) out.push({chart, role: 'canvas', text: '', cut: true}); return; }
    const s = svg.getBoundingClientRect();
    if (s.width === 0 || s.height === 0) return;               // in a closed expander: not drawn
    const holder = (embed.closest('[data-testid="stElementContainer"]') || embed).getBoundingClientRect();
    const box = {left: Math.max(s.left, holder.left), right: Math.min(s.right, holder.right),
                 top: Math.max(s.top, holder.top), bottom: Math.min(s.bottom, holder.bottom)};
    for (const role of ['axis-label', 'legend-label']) {
      svg.querySelectorAll(`.role-${role} text`).forEach(t => {
        const r = t.getBoundingClientRect();
        if (r.width === 0 || !t.textContent) return;
        const cut = r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5
                    || r.bottom > box.bottom + 0.5;
        out.push({chart, role, text: t.textContent, cut});
      });
    }
  });
  return out;
}"""


def chart_faults(page) -> list[str]:
    """The open page's labels that are cut by the chart's box, shortened with "…", or noise (tick labels)."""
    out = []
    for label in page.evaluate(LABELS):
        where = f"chart {label['chart']} {label['role']} {label['text']!r}"
        if label["cut"]:
            out.append(f"{where}: cut by the chart's box")
        elif label["text"].endswith("…"):
            out.append(f"{where}: shortened")
        elif label["role"] == "axis-label" and noise(label["text"], zeros=4):
            out.append(f"{where}: more digits than it means")
    return out


def drawn(page) -> int:
    """The charts drawn on the open page (an SVG of some size)."""
    return page.evaluate("""() => [...document.querySelectorAll('.vega-embed svg.marks')]
                              .filter(s => s.getBoundingClientRect().width > 0).length""")


def _drawn_all(page) -> int:
    """Wait until the page's script has run and its charts are drawn: every chart element holds its
    SVG, and the count has held for three looks a second apart, six while it is 0 (the browser lays out
    a first visit's elements a few seconds after the run ends, later on a loaded machine; the tests'
    counts of each page's charts catch a look taken too early); that count."""
    seen: list[int] = []
    for _ in range(180):
        _settled(page)
        page.wait_for_timeout(1000)
        now, elements = drawn(page), page.get_by_test_id("stVegaLiteChart").count()
        seen = seen + [now] if now == elements and (not seen or seen[-1] == now) else [now] if now == elements else []
        if len(seen) >= (3 if now else 6):
            return now
    return seen[-1] if seen else drawn(page)


def walk(url: str, widths=WIDTHS, pool: str = POOL, pages=PAGES, counts: dict | None = None
         ) -> dict[tuple[int, str], list[str]]:
    """(width, page) -> the faults of its charts, every page opened fresh at each width; `counts`, when
    given, gets (width, page) -> the charts measured (a choice's charts under (width, page + "+"))."""
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=180_000)
    found = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for width in widths:
            # tall enough that every chart of a page is laid out at once (Streamlit draws what scrolls into view)
            page = browser.new_page(viewport={"width": width, "height": 6000})
            page.set_default_timeout(180_000)
            for name in pages:
                page.goto(f"{url}/{name}?pool={pool}")
                expect(page.get_by_test_id("stSidebar")).to_be_visible()
                (counts if counts is not None else {})[(width, name)] = _drawn_all(page)
                found[(width, name)] = chart_faults(page)
                if name in CHOICES:
                    page.get_by_text(CHOICES[name], exact=True).click()
                    (counts if counts is not None else {})[(width, name + "+")] = _drawn_all(page)
                    found[(width, name)] += [f"({CHOICES[name]}) {f}" for f in chart_faults(page)]
            page.close()
        browser.close()
    return found


@pytest.fixture(scope="module")
def walked_demo(tmp_path_factory):
    from ingest.demo import seed_demo
    db = tmp_path_factory.mktemp("charts") / "charts.duckdb"
    seed_demo(db)
    add_runs(db)
    yield from _serve_app({"JUDGEAUDIT_DB": str(db)})


# the pages whose charts a new user found broken (the Pool and Curate histograms, the Pool reference
# chart, the DPO pairs, the loss curves, the reliability diagram) and the Overview's grid: what `make
# test` walks at both widths; `make test-slow` walks every page
CHART_PAGES = ("overview", "pool", "formats", "calibration", "curate")


def test_the_chart_pages_draw_every_label_whole_at_1280_and_1400_px(walked_demo):
    counts = {}
    found = walk(walked_demo, pages=CHART_PAGES, counts=counts)
    assert len(found) == len(WIDTHS) * len(CHART_PAGES)
    for width in WIDTHS:
        assert counts[(width, "overview")] >= 6 and counts[(width, "pool")] == 3 and counts[(width, "formats")] >= 8
        assert counts[(width, "calibration")] >= 2 and counts[(width, "curate")] >= 3
        assert counts[(width, "curate+")] >= counts[(width, "curate")] + 3
    assert {key: v for key, v in found.items() if v} == {}


@pytest.mark.slow
def test_no_chart_label_is_cut_at_1280_or_1400_px(walked_demo):
    counts = {}
    found = walk(walked_demo, counts=counts)
    assert len(found) == len(WIDTHS) * len(PAGES)
    # the walk measured real charts: the Overview's grid, the Pool page's three, the Formats page's histograms and bars, the
    # reliability diagram, the loss curves, and on choosing DPO its pairs and two curves more
    for width in WIDTHS:
        assert counts[(width, "overview")] >= 6 and counts[(width, "pool")] == 3 and counts[(width, "formats")] >= 8
        assert counts[(width, "calibration")] >= 2 and counts[(width, "curate")] >= 3
        assert counts[(width, "curate+")] >= counts[(width, "curate")] + 3
    faults = {key: v for key, v in found.items() if v}
    assert faults == {}


def test_the_label_check_finds_a_cut_label(tmp_path):
    """The check itself, on a page with a chart whose last tick label hangs past its SVG (the Pool
    page's reference chart before its fix: the plot as wide as the box, the label centred on its end)."""
    from playwright.sync_api import sync_playwright
    html = tmp_path / "cut.html"
    html.write_text("""<div data-testid="stElementContainer" style="width:300px;overflow:hidden">
      <div class="vega-embed"><svg class="marks" width="200" height="60">
        <g class="mark-text role-axis-label"><text x="10" y="30">0.0</text><text x="196" y="30">1.0</text>
        <text x="100" y="50">6.000000</text></g>
        <g class="mark-text role-legend-label"><text x="60" y="20">smollm2-demo-t…</text></g>
      </svg></div></div>""")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 400, "height": 200})
        page.goto(html.as_uri())
        faults = chart_faults(page)
        browser.close()
    assert faults == ["chart 0 axis-label '1.0': cut by the chart's box",
                      "chart 0 axis-label '6.000000': more digits than it means",
                      "chart 0 legend-label 'smollm2-demo-t…': shortened"]


if __name__ == "__main__":     # the count over one database (default pool mtbench-formats), at both widths
    import sys
    from tests.conftest import free_port, wait_http   # noqa: F401 (the server helper's)
    url_gen = _serve_app({"JUDGEAUDIT_DB": sys.argv[1]})
    url = next(url_gen)
    try:
        counts = {}
        result = walk(url, pool=sys.argv[2] if len(sys.argv) > 2 else POOL, counts=counts)
    finally:
        next(url_gen, None)
    total = 0
    for (width, name), faults in result.items():
        total += len(faults)
        charts = counts.get((width, name)), counts.get((width, name + "+"))
        print(f"{width} {name:12} charts {charts[0]}{f' (+choice: {charts[1]})' if charts[1] is not None else ''}"
              f" faults {len(faults)}", *faults[:20], sep="\n    " if faults else " ", flush=True)
    print("TOTAL", total)
