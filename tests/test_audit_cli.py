"""The audit and roce-config commands, registered on a local typer app."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from aifabric.cli.audit import register
from test_audit_fixtures import ARISTA_BUF, ARISTA_QOS, SN2700, sn2700, write

app = typer.Typer()
register(app)
try:
    runner = CliRunner(mix_stderr=False)
except TypeError:  # click >= 8.2 keeps stderr apart already
    runner = CliRunner()


def test_audit_json_is_one_object_and_exit_0_on_known_good():
    """--json on the real Arista split files (one switch) → one JSON object with the interface keys; exit 0."""
    res = runner.invoke(app, ["audit", f"{ARISTA_QOS}+{ARISTA_BUF}", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["devices"] == ["qos-arista7260-t1"]
    assert set(out["findings"][0]) == {"rule", "severity", "device", "object", "message", "evidence", "fix"}


def test_audit_exit_1_on_error_finding(tmp_path):
    """An injected error (MTU mismatch across a link) → exit 1."""
    a, b = sn2700("leaf-a"), sn2700("leaf-b")
    a["DEVICE_NEIGHBOR|Ethernet0"] = {"name": "leaf-b", "port": "Ethernet0"}
    b["PORT|Ethernet0"]["mtu"] = "1500"
    res = runner.invoke(app, ["audit", write(tmp_path, "a.json", a), write(tmp_path, "b.json", b)])
    assert res.exit_code == 1
    assert "mtu-mismatch" in res.stdout


def test_audit_exit_2_one_line_per_bad_file(tmp_path):
    """Two bad files → exit 2, one 'error:' line each on stderr, no traceback; the good one still audited."""
    bad1 = write(tmp_path, "bad1.json", "{not json")
    bad2 = write(tmp_path, "bad2.json", '{"PORT": {"Ethernet0": {"mtu": "big"}}}')
    res = runner.invoke(app, ["audit", bad1, bad2, str(SN2700), "--json"])
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln]
    assert len(lines) == 2 and lines[0].startswith(f"error: {bad1}") and "PORT|Ethernet0|mtu" in lines[1]
    assert "Traceback" not in res.stderr
    assert json.loads(res.stdout)["devices"] == ["sonic"]


def test_audit_deadlock_exit_1():
    """--topology ring:4 → a deadlock cycle, exit 1."""
    res = runner.invoke(app, ["audit", str(SN2700), "--topology", "ring:4", "--json"])
    assert res.exit_code == 1
    assert json.loads(res.stdout)["deadlock"]["deadlock"] is True


def test_roce_config_passes_audit(tmp_path):
    """roce-config --switch leaf-1 --speed 400G --cable 5m emits config_db that audits clean (exit 0)."""
    res = runner.invoke(app, ["roce-config", "--switch", "leaf-1", "--speed", "400G", "--cable", "5m"])
    assert res.exit_code == 0
    cfg = json.loads(res.stdout)
    prof = cfg["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]
    assert (prof["xon"], prof["xoff"], prof["size"]) == ("19456", "230400", "249856")
    p = write(tmp_path, "gen.json", res.stdout)
    res2 = runner.invoke(app, ["audit", p, "--nic-dscp", "26", "--json"])
    assert res2.exit_code == 0 and json.loads(res2.stdout)["findings"] == []


def test_roce_config_bad_os_is_exit_2():
    """--os junos → exit 2 with one line naming --os and what is allowed."""
    res = runner.invoke(app, ["roce-config", "--switch", "x", "--os", "junos"])
    assert res.exit_code == 2
    assert res.stderr.strip() == "error: --os: unsupported OS (got 'junos'); allowed: sonic, nvue, eos, host"
