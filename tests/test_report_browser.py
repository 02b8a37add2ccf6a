"""The HTML report opened in headless Chromium (Debian's, driven by Playwright): every chart renders,
every section of the table of contents is on the page with content, and the first screen is saved as
docs/report-screenshot.png (the documentation's picture of the report)."""

import shutil
from pathlib import Path

import pytest

from aifabric.api import compare_advisor as compare
from aifabric.hardware.catalog import load_catalog
from aifabric.report.html import CHART_IDS, write_report
from aifabric.scenario import AdvisorSpec

SCREENSHOT = Path(__file__).parent.parent / "docs" / "report-screenshot.png"
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


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (make test installs it as root)")
def test_every_chart_renders(tmp_path):
    """Each chart div gets a plotly SVG with data traces; the summary card and every section of the
    table of contents render with content; the first screen becomes docs/report-screenshot.png."""
    from playwright.sync_api import sync_playwright

    path = write_report(compare(AdvisorSpec(), load_catalog()), tmp_path / "report.html")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_function("document.querySelectorAll('.chart .main-svg').length >= 4", timeout=30000)
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
        page.set_viewport_size({"width": 1280, "height": 900})
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOT))
        browser.close()
    assert not errors, errors
