"""The answer in front: compare's terminal at 80 columns, --help panels and examples, progress without
a terminal, units in keys (GB/s), the notebook API and the report's summary card."""

from __future__ import annotations

import io
import json

import pytest
from typer.testing import CliRunner

from aifabric.cli import app

runner = CliRunner()
NARROW = {"COLUMNS": "80", "LINES": "50"}


@pytest.fixture(scope="module")
def compare80():
    r = runner.invoke(app, ["compare", "--gpus", "256"], env=NARROW)
    assert r.exit_code == 0, r.output
    return r.stdout.splitlines()


def test_compare_leads_with_the_decision_at_80_columns(compare80):
    """Recommendation, verdict and the deciding numbers (capex, expected loss, the objective) come in
    the first 15 lines; no line is wider than 80 columns; risk tables wait for --details."""
    head = "\n".join(compare80[:15])
    assert "Recommendation:" in head and "Verdict:" in head
    assert "deciding numbers" in head and "network capex" in head and "expected loss" in head
    assert max(len(ln) for ln in compare80) <= 80
    assert not any(ln.startswith("risk on ") for ln in compare80)
    assert any("--details" in ln for ln in compare80)


def test_details_adds_risk_and_sensitivity_tables():
    r = runner.invoke(app, ["compare", "--gpus", "256", "--details"], env=NARROW)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert any(ln.startswith("risk on ") for ln in lines)
    assert any(ln.startswith("sensitivity:") for ln in lines)
    assert max(len(ln) for ln in lines) <= 80


def test_progress_lines_without_a_terminal():
    """stderr is not a terminal under the test runner: one line per stage, timed."""
    r = runner.invoke(app, ["compare", "--gpus", "256", "--json"], env=NARROW)
    assert r.exit_code == 0
    json.loads(r.stdout)  # stdout stays one JSON object
    stages = [ln for ln in r.stderr.splitlines() if ln.startswith("[") and " s] " in ln]
    assert any("planning" in ln for ln in stages) and any("advising" in ln for ln in stages)


def test_line_progress_estimates_the_time_left():
    from aifabric.cli._progress import LineProgress, eta_s
    from aifabric.stages.workers import Progress

    assert eta_s(10.0, 2, 10) == pytest.approx(40.0) and eta_s(5.0, 0, 10) is None
    t = iter([0.0, 0.0, 1.0, 20.0, 30.0])
    out = io.StringIO()
    p = LineProgress(out, clock=lambda: next(t))
    p("planning infiniband")
    p(Progress("testbed: run", 1, 4))  # a new stage: its name
    p(Progress("testbed: run", 2, 4))  # 19 s after the stage began, 2 of 4 done: 19 s left
    p(Progress("testbed: run", 4, 4))
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("planning infiniband") and lines[1].endswith("] testbed")
    assert "2/4, about 19 s left" in lines[2] and lines[3].endswith("4/4")


@pytest.mark.parametrize("command", ["compare", "train", "plan", "collective"])
def test_help_is_grouped_with_two_examples(command):
    r = runner.invoke(app, [command, "--help"], env=NARROW)
    assert r.exit_code == 0
    out = r.stdout
    assert "Examples" in out and out.count(f"aifabric {command} ") >= 2
    assert "─ Output " in out and "<bool>" not in out.split("─ Options ")[-1].split("─ ", 1)[-1]
    if command == "compare":
        assert all(f"─ {p} " in out for p in ("Buyer", "Design", "Workload", "Risk", "Output"))


def test_every_command_has_examples():
    from aifabric.cli._help import EXAMPLES

    names = {c.name for c in app.registered_commands}
    assert names <= set(EXAMPLES), names - set(EXAMPLES)
    assert all(len(v) == 2 for v in EXAMPLES.values())


def test_busbw_in_gbytes_per_s_beside_the_deprecated_alias():
    r = runner.invoke(app, ["compare", "--gpus", "256", "--json"])
    out = json.loads(r.stdout)
    for f in out["fabrics"]:
        assert f["busbw_gbytes_per_s"] == pytest.approx(f["busbw_gbps"] / 8)
        assert 300 < f["busbw_gbytes_per_s"] < 400  # a 400G NIC: 50 GB/s line rate x 8 GPUs' rails
        for row in f["busbw_sweep"]:
            assert row["busbw_gbytes_per_s"] == pytest.approx(row["busbw_gbps"] / 8)
    c = json.loads(
        runner.invoke(
            app, ["collective", "all-reduce", "--gpus", "16", "--max-bytes", "1GiB", "--json"]
        ).stdout
    )
    last = c["rows"][-1]
    assert last["busbw_gbytes_per_s"] == last["busbw_gbps"] and 300 < last["busbw_gbytes_per_s"] < 400


def test_rates_accept_400g():
    from aifabric.units import parse_rate

    assert parse_rate("400G") == parse_rate("400Gbps") == parse_rate("400Gb/s") == 400 * 10**9
    r = runner.invoke(app, ["plan", "--gpus", "64", "--nic-rate", "400G", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["fabrics"][0]["nic_rate_gbps"] == 400


def test_did_you_mean():
    r = runner.invoke(app, ["compare", "--gpu", "h10"])
    assert r.exit_code == 2 and "did you mean 'h100'?" in r.output
    from aifabric.errors import InputError

    assert "did you mean" not in str(InputError("bad", field="x", value="zzzz", allowed="h100, h200"))


def test_api_functions_are_visible_and_strict():
    import aifabric
    from aifabric.errors import InputError

    assert {"compare", "plan", "train", "collective", "calibrate", "simulate"} <= set(dir(aifabric))
    with pytest.raises(InputError, match=r"^gpus: must be an integer, not str"):
        aifabric.compare(gpus="64")
    with pytest.raises(InputError, match=r"^gpu: .*did you mean 'h100'"):
        aifabric.compare(gpu="h10")
    with pytest.raises(InputError, match=r"^gpus: must be an integer"):
        aifabric.train(gpus=True)


def test_api_collective_and_train_draw_themselves(tmp_path):
    import aifabric

    c = aifabric.collective("all-reduce", 16, nic_rate="400G", max_bytes="64MiB")
    assert list(c.frame["size_bytes"])[-1] == 64 * 2**20 and "busbw_gbytes_per_s" in c.frame
    assert "<table" in c._repr_html_() and c.to_html(tmp_path / "c.html").read_text().startswith("<!doctype")
    t = aifabric.train(64, model="llama3-8b", fabric="ib")
    assert len(t.fabrics) == 1 and 0 < t.fabrics["mfu"][0] <= 1


def test_report_summary_card_and_references():
    """The card carries the answer, verdict and deciding numbers; only used estimates and cited
    sources are listed, sources in numeric order."""
    from aifabric.api import compare

    res = compare(gpus=256)
    card = res._repr_html_()
    assert "Verdict" in card and "deciding numbers" in card and res.recommendation["fabric"] in card
    from aifabric.report.html import render_report, used_estimates, used_sources

    est = used_estimates(res.result)
    assert 0 < len(est) < len(res.result["estimates"])
    keys = [k for k, _ in used_sources(res.result)]
    nums = [(k[0], int(k[1:])) for k in keys]
    assert nums == sorted(nums) and len(keys) < len(res.result["sources"])
    html = render_report(res.result)
    assert "id='toc'" in html and "key=None" not in html and "product brief" not in html
    assert html.count("<script>") == 2  # plotly.js once, the figures once
