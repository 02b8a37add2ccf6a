"""Scenario files load into frozen models; every problem is one line naming file, field, allowed."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.errors import InputErrors
from aifabric.scenario import load_scenario, scenario_from_dict

ROOT = Path(__file__).parent.parent
runner = CliRunner()


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_scenarios_validate(path):
    """Every shipped scenario loads, and its flow file path resolves next to it."""
    sc = load_scenario(path)
    assert sc.topology is not None
    if sc.workload.path:
        assert Path(sc.workload.path).is_file()


def test_units_parsed_once():
    """YAML strings with units become integers in base units."""
    sc = load_scenario(ROOT / "scenarios" / "perm128.yaml")
    assert sc.topology.link_rate_bps == 100 * 10**9
    assert sc.topology.link_delay_ps == 10**6
    assert sc.fabric.mtu_bytes == 4000
    assert sc.fabric.switch_buffer_bytes == 32 * 2**20
    assert sc.fabric.pfc.xoff == 60000
    assert sc.sim.until_ps == 100 * 10**9


def test_frozen():
    """Scenarios are immutable."""
    sc = load_scenario(ROOT / "scenarios" / "perm128.yaml")
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError on frozen assignment
        sc.seed = 3


def test_defaults_filled():
    """Omitted values come from the sourced defaults table."""
    sc = scenario_from_dict({"topology": {"kind": "star", "hosts": 4}})
    assert sc.fabric.mtu_bytes == 4000
    assert sc.fabric.header_bytes == 64
    ib = scenario_from_dict({"fabric": {"technology": "infiniband"}})
    assert ib.fabric.header_bytes == 26 and ib.fabric.lossless


def _problems(data):
    with pytest.raises(InputErrors) as exc:
        scenario_from_dict(data, file="s.yaml")
    return exc.value.lines()


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"colour": 1}, "colour", "unknown key"),
        ({"fabric": {"pfc": {"xof": "1KB"}}}, "fabric.pfc.xof", "allowed: alpha, enabled"),
        ({"fabric": {"mtu": "4000 parsecs"}}, "fabric.mtu", "cannot read"),
        ({"topology": {"kind": "star", "hosts": 4, "link_rate": "fast"}}, "topology.link_rate", "Gbps"),
        ({"fabric": {"mtu": "-4000B"}}, "fabric.mtu", "greater than or equal to 64"),
        ({"fabric": {"mtu": "0B"}}, "fabric.mtu", "greater than or equal to 64"),
        ({"topology": {"kind": "fat-tree", "k": 7}}, "topology.k", "even"),
        ({"topology": {"kind": "fat-tree"}}, "topology", "needs k"),
        (
            {"topology": {"kind": "fat-tree", "k": 4, "hosts": 3}},
            "topology",
            "hosts not used by kind fat-tree",
        ),
        ({"topology": {"kind": "torus", "k": 4}}, "topology.kind", "allowed: fat-tree"),
        ({"fabric": {"routing": "magic"}}, "fabric.routing", "ecmp"),
        ({"fabric": {"pfc": {"xoff": "1KB", "xon": "2KB"}}}, "fabric.pfc", "must not exceed"),
        ({"fabric": {"ecn": {"kmin": "2MB", "kmax": "1MB"}}}, "fabric.ecn", "kmin"),
        ({"fabric": {"ecn": {"pmax": 1.5}}}, "fabric.ecn.pmax", "less than or equal to 1"),
        ({"fabric": {"technology": "infiniband", "congestion_control": "dcqcn"}}, "fabric", "RoCE"),
        ({"fabric": {"congestion_control": "dcqcn", "ecn": {"enabled": False}}}, "fabric", "needs ecn"),
        (
            {"topology": {"kind": "star", "hosts": 4}, "workload": {"kind": "incast"}},
            "workload",
            "needs senders",
        ),
        ({"workload": {"kind": "incast", "senders": 3}}, "(top level)", "needs a topology"),
    ],
)
def test_bad_input_one_line_each(data, field, words):
    """Each mistake yields a line 's.yaml: <field>: ...' containing what is allowed or wrong."""
    lines = _problems(data)
    assert any(line.startswith(f"s.yaml: {field}:") and words in line for line in lines), lines


def test_many_problems_reported_together():
    """All problems in one file are reported, one line each."""
    lines = _problems({"colour": 1, "fabric": {"mtu": "x", "routing": "y"}})
    assert len(lines) == 3


def test_non_mapping():
    """A YAML list is not a scenario."""
    assert "mapping" in _problems([1, 2])[0]


def test_validate_cli_ok():
    """`aifabric validate` on a good file exits 0 and summarises the built topology."""
    r = runner.invoke(app, ["validate", str(ROOT / "scenarios" / "incast32.yaml")])
    assert r.exit_code == 0
    assert "128 hosts" in r.output


def test_validate_cli_bad(tmp_path):
    """Bad files exit 2 with one error line per problem, no traceback."""
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\ntopology: {kind: fat-tree, k: 7}\nfabric: {mtu: 4 parsecs, colour: red}\n")
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln]
    assert len(lines) == 3 and all(ln.startswith(f"error: {p}:") for ln in lines)
    assert "Traceback" not in r.output


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a: [\n", "YAML syntax error"),
        (
            "name: x\ntopology: {kind: star, hosts: 4}\nworkload: {kind: incast, senders: 9}\n",
            "workload.senders",
        ),
        ("name: x\ntopology: {kind: hpcc-file, path: nothere.txt}\n", "cannot read topology file"),
        ("name: x\ntopology: {kind: rail-optimized, gpus: 200000}\n", "gpus"),
        (
            "name: x\ntopology: {kind: star, hosts: 4}\nfabric: {failures: [{link: h0-sw9, at: 1us}]}\n",
            "fabric.failures.0.link",
        ),
    ],
)
def test_validate_cli_more_bad(tmp_path, text, needle):
    """Syntax errors, workloads too big for the topology and unreadable topology files: exit 2."""
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2, r.output
    assert needle in r.output and str(p) in r.output


def test_validate_missing_file():
    """A missing scenario file is one line, exit 2."""
    r = runner.invoke(app, ["validate", "/nonexistent.yaml"])
    assert r.exit_code == 2 and "cannot read scenario file" in r.output


def test_defaults_have_sources():
    """Every scenario default has a value and a stated source; PFC/ECN ones come from defaults.yaml."""
    from aifabric.scenario import DEFAULTS, default_with_source

    for name in DEFAULTS:
        value, source = default_with_source(name)
        assert source and (value is not None or "no public" in source)
    # htsim: 15 payload MTUs (4000 B), so PAUSE fires on the 15th 4,064 B packet (aifabric.pfc)
    assert default_with_source("pfc.xoff_bytes") == (15 * 4000, default_with_source("pfc.xoff_bytes")[1])
    assert default_with_source("pfc.xon_bytes")[0] == 12 * 4000
    assert "defaults.yaml" in default_with_source("ecn.kmin_bytes")[1]


def test_python_api_simulate_and_module_entry():
    """`aifabric.simulate(scenario)` is the packet engine; `python -m aifabric --version` works."""
    import subprocess
    import sys

    import aifabric
    from aifabric.sim import simulate

    assert aifabric.simulate is simulate
    out = subprocess.run(
        [sys.executable, "-m", "aifabric", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("aifabric ")
