"""aifabric serve in headless Chromium (Debian's, driven by Playwright), as a buyer uses it: the SN5600
price moved past its break-even flips the recommendation; storage placement toggled moves the verdict
sentence and what it hinges on; a study folder opens with its charts and flip table; the what-if
exported as a scenario gives, through ``aifabric compare``, the page's numbers exactly; a bad value
gets a message next to its control."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from serve_support import SCENARIO, env, headline_of_compare, running

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
STUDY = """name: serve-expertise
command: compare
base: {advisor: {gpus: 64, gpu: h100, workload: training}}
axes: {advisor.team_expertise: [none, expert]}
"""
LONG = 900_000  # ms: a cold measurement cache on two busy cores


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    d = tmp_path_factory.mktemp("serve-ui")
    (d / "job.yaml").write_text(SCENARIO)
    (d / "study.yaml").write_text(STUDY)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "aifabric",
            "sweep",
            str(d / "study.yaml"),
            "--out",
            str(d / "study"),
            "--no-progress",
        ],
        env=env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return d


def _answers(page) -> int:
    return page.evaluate("answers")


def _wait_answer(page, n: int) -> None:
    page.wait_for_function(f"answers > {n} && !busy", timeout=LONG)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (make test installs it as root)")
def test_buyer_moves_assumptions_and_exports(folders, tmp_path):
    from playwright.sync_api import sync_playwright

    served = running(str(folders / "job.yaml"), "--study", str(folders / "study"))
    with served as (url, _proc), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        _wait_answer(page, 0)
        assert page.locator("#chart-tornado .main-svg").count() > 0
        _price_past_break_even(page)
        _storage_on_fabric(page)
        _study(page)
        _export_matches_compare(page, tmp_path)
        _bad_value_inline(page)
        browser.close()
    assert not errors, errors


def _price_past_break_even(page) -> None:
    """The SN5600 (the RoCE design's switch) quoted past its break-even: the recommendation flips to the
    design the sensitivity row names."""
    ctl = page.evaluate("last.controls.find((c) => c.item === 'sn5600')")
    before = page.locator("#recommendation").inner_text()
    usd = ctl["break_even_unit_price_usd"] * (0.95 if ctl["break_even"] < ctl["base"] else 1.05)
    n = _answers(page)
    box = page.locator(f"[data-usd-of='{ctl['name']}']")
    box.fill(f"{usd:.0f}")
    box.press("Enter")
    _wait_answer(page, n)
    after = page.locator("#recommendation").inner_text()
    assert after != before and ctl["design_then"] in after, (before, after, ctl)
    assert "risk → decide" in page.locator("#status").inner_text()
    assert page.locator(f"[id='ctl-{ctl['name']}']").get_attribute("class").endswith("set")


def _storage_on_fabric(page) -> None:
    """Storage on the compute fabric: the verdict sentence and what it hinges on are recomputed."""
    summary, hinges = page.locator("#summary").inner_text(), page.locator("#box-hinges").inner_text()
    n = _answers(page)
    page.select_option("[data-name='assumptions.storage.placement']", "on-fabric")
    _wait_answer(page, n)
    assert page.locator("#summary").inner_text() != summary
    assert page.locator("#box-hinges").inner_text() != hinges
    assert page.evaluate("last.numbers.deployment.storage_placement") == "on-fabric"


def _study(page) -> None:
    page.select_option("#study-pick", index=1)
    page.wait_for_function("document.querySelectorAll('#study-body .main-svg').length >= 1", timeout=60_000)
    body = page.locator("#study-body").inner_text()
    assert "Where the recommendation flips" in body and "serve-expertise" in body
    boxes = page.locator("#study-filters input[type=checkbox]")
    assert boxes.count() == 2
    boxes.nth(0).uncheck()
    page.wait_for_function("document.querySelector('#study-body').innerText.includes('at 1 of 2 points')")


def _export_matches_compare(page, tmp_path) -> None:
    with page.expect_download() as dl:
        page.click("#export-scenario")
    path = tmp_path / "whatif.yaml"
    dl.value.save_as(path)
    shown = page.evaluate("last.numbers")
    assert headline_of_compare(path) == shown


def _bad_value_inline(page) -> None:
    n = page.evaluate("failures")
    box = page.locator("[data-name='advisor.gpus']")
    box.fill("-8")
    box.press("Enter")
    page.wait_for_function(f"failures > {n}", timeout=60_000)
    msg = page.locator("[id='ctl-advisor.gpus'] .msg").inner_text()
    assert msg and "Traceback" not in page.content()
