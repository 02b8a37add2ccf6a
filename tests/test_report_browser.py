"""The HTML report opened in headless Chromium (Debian's, driven by Playwright): every chart renders."""

import shutil

import pytest

from aifabric.api import compare_advisor as compare
from aifabric.hardware.catalog import load_catalog
from aifabric.report.html import CHART_IDS, write_report
from aifabric.scenario import AdvisorSpec

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
    """Each chart div gets a plotly SVG with data traces; the recommendation is on the page."""
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
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert not errors, errors
