"""The shipped example study runs end to end and its report renders in headless Chromium (slow:
18 compare points, about 15 s on two cores with warm caches, a few minutes cold)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.sweep.query import query

pytestmark = pytest.mark.slow
STUDY = Path(__file__).resolve().parents[1] / "scenarios" / "studies" / "size-vs-gpu.yaml"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def test_example_study_runs_and_its_report_renders(tmp_path):
    """Every point of scenarios/studies/size-vs-gpu.yaml runs ok; the report's Pareto charts and
    heat maps draw in a browser without script errors, and it lists recommendation flips."""
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["sweep", str(STUDY), "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    pts = query(out)
    assert len(pts) == 18 and (pts["status"] == "ok").all()
    assert set(pts["recommendation"]) <= {"infiniband", "roce-400g", "roce-800g", "hybrid", "none"}
    html = (out / "report.html").read_text()
    assert "Where the recommendation flips" in html
    if CHROMIUM is None:
        pytest.skip("Debian chromium not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((out / "report.html").as_uri())
        page.wait_for_function("document.querySelectorAll('.chart .main-svg').length >= 2", timeout=60000)
        for cid in ("chart-pareto-step", "chart-pareto-token"):
            assert page.locator(f"#{cid} .main-svg .trace").count() >= 3, cid
        assert page.locator("#heat-map td[style]").count() == 18
        browser.close()
    assert not errors
