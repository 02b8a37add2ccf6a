"""Audit output: one line per finding grouped by rule within 100 columns, --verbose details,
--format json|sarif|markdown, and the issue-16 command-line cases (empty directory, stray '+')."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from aifabric.cli.audit import register
from test_audit_fixtures import ARISTA_INI, arista, write

app = typer.Typer()
register(app)
try:
    runner = CliRunner(mix_stderr=False)
except TypeError:  # click >= 8.2 keeps stderr apart already
    runner = CliRunner()


def _five(tmp_path) -> list[str]:
    """Two Arista leaves (real Azure T1 QoS + buffers); leaf-2 has a moved lossless DSCP, a downlink
    that lost lossless priority 4 and a scheduler weight of its own; with the real template's
    pfcwd-partial warning on each switch → 5 error/warning findings (and the info lines)."""
    a, b = arista("leaf-1"), arista("leaf-2")
    down = next(p for p, f in b["PORT_QOS_MAP"].items() if f.get("pfc_enable") == "2,3,4,6")
    b["DSCP_TO_TC_MAP"]["AZURE"]["3"] = "1"
    b["PORT_QOS_MAP"][down]["pfc_enable"] = "2,3,6"
    b["SCHEDULER"]["scheduler.0"]["weight"] = "30"
    for c in (a, b):
        c["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] = "enable"
    return [
        write(tmp_path, "leaf-1.json", a) + f"+{ARISTA_INI}",
        write(tmp_path, "leaf-2.json", b) + f"+{ARISTA_INI}",
    ]


def test_five_findings_fit_100_columns_one_line_each(tmp_path):
    """A 5-finding audit (errors and warnings; infos too) printed with --width 100: every line is at
    most 100 columns, each finding starts one line (device + short object) and its message wraps,
    grouped under a rule header, and the exit status is 1 because there are errors."""
    res = runner.invoke(app, ["audit", *_five(tmp_path), "--width", "100"])
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    assert all(len(ln) <= 100 for ln in lines), max(lines, key=len)
    out = json.loads(runner.invoke(app, ["audit", *_five(tmp_path), "--json"]).stdout)
    worse = [f for f in out["findings"] if f["severity"] != "info"]
    assert len(worse) == 5, [(f["rule"], f["object"]) for f in worse]
    devices = tuple(f"  {f['device']}" for f in out["findings"])
    finding_lines = [ln for ln in lines if ln.startswith(devices)]
    assert len(finding_lines) == len(out["findings"])  # each finding starts its own line ...
    assert all("…" not in ln for ln in lines)  # ... and its message wraps, never cut
    headers = [
        ln
        for ln in lines
        if ln and not ln.startswith(" ") and "(" in ln and ln.split()[0] in ("ERROR", "WARN", "info")
    ]
    assert len(headers) == len({(f["severity"], f["rule"]) for f in out["findings"]})
    assert len(lines) < 4 * len(out["findings"]) + 6


def test_verbose_adds_evidence_and_fix_within_width(tmp_path):
    """--verbose prints the full message, evidence and fix under each finding, still ≤ 100 columns."""
    res = runner.invoke(app, ["audit", *_five(tmp_path), "--width", "100", "--verbose"])
    lines = res.stdout.splitlines()
    assert all(len(ln) <= 100 for ln in lines)
    assert sum(ln.strip().startswith("fix:") for ln in lines) >= 5
    assert any("lossless_dscps_made_lossy=3" in ln for ln in lines)


def test_json_flag_equals_format_json(tmp_path):
    """--json and --format json print the same object, with the interface.md keys plus roles and
    roce_classes."""
    a = runner.invoke(app, ["audit", *_five(tmp_path), "--json"]).stdout
    b = runner.invoke(app, ["audit", *_five(tmp_path), "--format", "json"]).stdout
    assert a == b
    out = json.loads(a)
    assert {"devices", "findings", "summary", "errors", "roles", "roce_classes"} <= set(out)
    assert set(out["findings"][0]) >= {"rule", "severity", "device", "object", "message", "evidence", "fix"}


def test_sarif_points_at_config_files(tmp_path):
    """--format sarif: SARIF 2.1.0 with one result per finding, rule ids declared in the driver,
    levels error/warning/note, and each switch finding located in the file it came from with a line."""
    files = _five(tmp_path)
    res = runner.invoke(app, ["audit", *files, "--format", "sarif"])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run["results"]} <= ids
    assert {r["level"] for r in run["results"]} <= {"error", "warning", "note"}
    dscp = next(r for r in run["results"] if r["ruleId"] == "qos-map-inconsistent")
    loc = dscp["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("leaf-2.json") and loc["region"]["startLine"] >= 1


def test_markdown_groups_by_rule(tmp_path):
    """--format markdown: a heading per rule with a device/object/message/fix table."""
    res = runner.invoke(app, ["audit", *_five(tmp_path), "--format", "markdown"])
    assert res.stdout.startswith("## aifabric audit: 2 switch(es)")
    assert "### error: `qos-map-inconsistent` (1)" in res.stdout
    assert "| device | object | message | fix |" in res.stdout


def test_unknown_format_is_one_line_exit_2(tmp_path):
    """--format yaml → exit 2, one line naming --format and the allowed values."""
    res = runner.invoke(app, ["audit", *_five(tmp_path), "--format", "yaml"])
    assert res.exit_code == 2
    assert (
        res.stderr.strip()
        == "error: --format: unknown format (got 'yaml'); allowed: table, json, sarif, markdown"
    )


def test_empty_directory_is_exit_2_one_line(tmp_path):
    """An empty audit folder (issue 16) → exit 2 and exactly one line naming the folder."""
    d = tmp_path / "empty"
    d.mkdir()
    res = runner.invoke(app, ["audit", str(d)])
    assert res.exit_code == 2
    assert len(res.stderr.splitlines()) == 1
    assert res.stderr.startswith(
        f"error: {d}: directory holds no config file; allowed: a directory with .json"
    )
    assert res.stdout == ""


def test_stray_plus_is_rejected_not_the_current_directory(tmp_path, monkeypatch):
    """A lone '+' (issue 16) or a trailing '+' never audits the current directory: exit 2, one line."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "x.json", arista("leaf-1"))
    for arg in ("+", "x.json+"):
        res = runner.invoke(app, ["audit", arg])
        assert res.exit_code == 2, arg
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and "empty file name" in lines[0] and res.stdout == ""


_TOKENS = [
    "--format",
    "json",
    "sarif",
    "markdown",
    "table",
    "yaml",
    "--intent",
    "dcqcn",
    "pfc-only",
    "bogus",
    "--nic-dscp",
    "26",
    "64",
    "-1",
    "x",
    "--cnp-dscp",
    "48",
    "--width",
    "10",
    "100",
    "--verbose",
    "--roles",
    "+",
    "a.json+",
    "/nonexistent",
    "--routing",
    "up-down",
    "ring",
    "--json",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extra=st.lists(st.sampled_from(_TOKENS), max_size=6))
def test_fuzz_audit_flags(tmp_path, extra):
    """Random audit flags and values after a real config: exit 0, 1 or 2; on 2 every stderr line
    starts with 'error:' or is click's usage text, and there is never a traceback."""
    cfg = str(tmp_path / "leaf-1.json")
    if not Path(cfg).exists():
        write(tmp_path, "leaf-1.json", arista("leaf-1"))
    res = runner.invoke(app, ["audit", cfg, *extra])
    assert res.exit_code in (0, 1, 2), (extra, res.exit_code, res.output)
    assert res.exception is None or isinstance(res.exception, SystemExit), (extra, repr(res.exception))
    assert "Traceback" not in res.stderr


def test_ranges_compacts_dscp_lists():
    """ranges() prints runs as a-b and pairs as a,b: the RoCE-class line stays short."""
    from aifabric.audit.output import ranges

    assert ranges([24, 25, 26, 27, 28, 29, 30, 31]) == "24-31"
    assert ranges([2, 3, 4, 6, 16, 17]) == "2-4,6,16,17"
    assert ranges([]) == ""
