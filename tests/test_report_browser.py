"""The HTML reports opened in headless Chromium (Debian's, driven by Playwright): the compare report's
charts render, every section of its table of contents is on the page with content; the study report's
Pareto charts draw with their front and its heat map is coloured around parity. Screenshots go to the
test's temporary folder; ``AIFABRIC_DOCS_SCREENSHOTS=1`` (``make docs-screenshots``) writes them to
docs/ instead, the documentation's pictures of the reports."""

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.api import compare_advisor as compare
from aifabric.cli import app
from aifabric.hardware.catalog import load_catalog
from aifabric.report.html import CHART_IDS, write_report
from aifabric.scenario import AdvisorSpec
from aifabric.sweep.query import query

DOCS = Path(__file__).parent.parent / "docs"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian chromium not installed (make test installs it as root)"
)
MAX_BYTES = 1_500_000  # the default report: at most 1.5 MB
# the default compare's cluster under four answers to the buyer's questions: the points reuse the
# measurements the default report's compare made (the session's cache), only the decision differs
STUDY = """name: report-check
command: compare
base: {advisor: {}}
axes: {advisor.team_expertise: [none, expert], advisor.jitter_sensitivity: [low, medium]}
"""


def _shots(tmp_path: Path) -> Path:
    """Where screenshots go: docs/ when asked for, else the test's own folder (the checkout is left as
    it was)."""
    return DOCS if os.environ.get("AIFABRIC_DOCS_SCREENSHOTS") == "1" else tmp_path


@pytest.fixture(scope="module")
def default_report(tmp_path_factory):
    return write_report(compare(AdvisorSpec(), load_catalog()), tmp_path_factory.mktemp("r") / "report.html")


def test_default_report_is_at_most_1_5_mb(default_report):
    """The default report (plotly.js's basic bundle inlined once, each figure once) stays ≤ 1.5 MB."""
    size = default_report.stat().st_size
    assert size <= MAX_BYTES, f"{size:,} bytes"
    text = default_report.read_text(encoding="utf-8")
    assert text.count("plotly.js (basic - minified)") == 1


def _open(p, uri: str, charts: int):
    browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(uri)
    page.wait_for_function(f"document.querySelectorAll('.chart .main-svg').length >= {charts}", timeout=60000)
    return browser, page, errors


@needs_chromium
def test_every_chart_renders(default_report, tmp_path):
    """Each chart div gets a plotly SVG with data traces; the summary card and every section of the
    table of contents render with content; the difference charts come with their absolute values."""
    from playwright.sync_api import sync_playwright

    out = _shots(tmp_path)
    with sync_playwright() as p:
        browser, page, errors = _open(p, default_report.as_uri(), 4)
        for cid in CHART_IDS:
            traces = page.locator(f"#{cid} .main-svg .trace").count()
            assert traces > 0, f"{cid} has no rendered traces"
        assert page.locator("#recommendation").inner_text().strip()
        card = page.locator("#summary-card").inner_text()
        assert "Verdict" in card and "deciding numbers" in card
        links = page.locator("#toc a").evaluate_all("els => els.map(e => e.getAttribute('href').slice(1))")
        assert len(links) >= 12
        for sid in links:  # each section the contents name is there, visible and not empty
            sec = page.locator(f"#sec-{sid}") if sid != "recommendation" else page.locator("#summary-card")
            assert sec.is_visible() and len(sec.inner_text().strip()) > 40, sid
        assert "difference to" in (page.locator("#chart-busbw .gtitle").text_content() or "")
        assert (
            page.locator("#busbw-table tr").count() > 10 and page.locator("#iteration-table tr").count() >= 5
        )
        page.locator("#sec-iteration").screenshot(path=str(out / "report-iteration.png"))
        page.locator("#sec-busbw").screenshot(path=str(out / "report-busbw.png"))
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(out / "report-screenshot.png"))
        browser.close()
    assert not errors, errors
    assert (out / "report-screenshot.png").stat().st_size > 10_000


@needs_chromium
def test_study_report_renders(default_report, tmp_path):
    """A 4-point compare study (the shipped 18-point example when writing docs/): both Pareto charts draw their designs and the front; the heat map has
    one coloured cell per point, white-ish only near parity, and names the recommendation in each."""
    from playwright.sync_api import sync_playwright

    out = _shots(tmp_path)
    if out == DOCS:  # the documentation's pictures are of the shipped example study (18 points)
        study = DOCS.parent / "scenarios" / "studies" / "size-vs-gpu.yaml"
    else:
        study = tmp_path / "study.yaml"
        study.write_text(STUDY, encoding="utf-8")
    r = CliRunner().invoke(app, ["sweep", str(study), "--out", str(tmp_path / "run"), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    points = len(query(tmp_path / "run"))
    with sync_playwright() as p:
        browser, page, errors = _open(p, (tmp_path / "run" / "report.html").as_uri(), 2)
        for cid in ("chart-pareto-step", "chart-pareto-token"):
            names = page.locator(f"#{cid} .legendtext").evaluate_all("els => els.map(e => e.textContent)")
            assert any(n.startswith("Pareto front") for n in names), (cid, names)
            assert page.locator(f"#{cid} .main-svg .trace.scatter").count() >= 3, cid
        cells = page.locator("#heat-map td[style]")
        assert cells.count() == points
        assert all(t.split()[0] in ("infiniband", "roce-400g", "roce-800g") for t in cells.all_inner_texts())
        assert "parity (1)" in page.locator("#heat-legend").inner_text()
        page.locator("#chart-pareto-step").screenshot(path=str(out / "study-pareto.png"))
        page.locator("#heat-map").screenshot(path=str(out / "study-heatmap.png"))
        browser.close()
    assert not errors, errors
