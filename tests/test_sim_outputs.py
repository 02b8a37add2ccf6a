"""simulate outputs: the interface.md JSON, --out files in ns-3 formats, CLI errors, smoke runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.sim import simulate
from aifabric.sim.results import SUMMARY_KEYS, load, read_fct_txt, read_pfc_txt
from test_sim_support import scenario, star

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted(p.stem for p in (ROOT / "scenarios").glob("*.yaml"))


def _cli(*args, check=False):
    return subprocess.run(
        [sys.executable, "-m", "aifabric", *args], capture_output=True, text=True, cwd=ROOT, check=check
    )


def _small():
    return scenario(
        star(4),
        {"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "60KB"},
        fabric={"pfc": {"enabled": True, "mode": "static", "xoff": "12192B", "xon": "8128B"}},
    )


def test_json_has_exactly_the_interface_keys():
    """to_dict(): scenario, summary (exactly interface.md's keys), engine (events, packets, wall_s)
    and one record per flow with the required fields."""
    d = simulate(_small()).to_dict()
    assert list(d["summary"]) == list(SUMMARY_KEYS)
    assert {"events", "packets", "wall_s"} <= set(d["engine"])
    assert len(d["flows"]) == 3
    assert {"id", "src", "dst", "size_bytes", "start_us", "fct_us", "ideal_fct_us"} <= set(d["flows"][0])
    json.dumps(d)


def test_cli_json_prints_one_object(tmp_path):
    """`simulate --json` writes exactly one JSON object on stdout."""
    f = tmp_path / "s.yaml"
    f.write_text(
        "name: tiny\ntopology: {kind: star, hosts: 4, link_rate: 100Gbps, link_delay: 1us}\n"
        "workload: {kind: incast, senders: 3, receiver: 0, flow_size: 40KB}\n"
    )
    p = _cli("simulate", str(f), "--json", check=True)
    d = json.loads(p.stdout)
    assert d["scenario"] == "tiny" and d["summary"]["completed_flows"] == 3


def test_out_writes_parquet_json_and_ns3_files(tmp_path):
    """save(): flows/ports Parquet with column descriptions, summary.json, fct.txt with 8 ns-3 columns
    (IP 0x0b000001 + id<<8), pfc.txt with one line per PFC frame received; load() reads it back."""
    r = simulate(_small())
    r.save(tmp_path)
    back = load(tmp_path)
    assert back.summary == json.loads(json.dumps(r.summary))
    assert len(back.flows) == 3 and "paused_time_us" in back.ports
    fct = read_fct_txt(tmp_path / "fct.txt")
    assert len(fct) == 3
    assert fct["dst_ip"].iloc[0] == 0x0B000001
    assert (fct["fct_ns"] >= fct["standalone_fct_ns"]).all()
    pfc = read_pfc_txt(tmp_path / "pfc.txt")
    assert len(pfc) == r.summary["pause_frames"] + r.engine["resume_frames"]
    assert set(pfc["type"]) == {0, 1}
    import pyarrow.parquet as pq

    schema = pq.read_schema(tmp_path / "flows.parquet")
    assert b"completion" in schema.field("fct_us").metadata[b"description"]


def test_cli_bad_scenario_exits_2_with_one_line(tmp_path):
    """A scenario the engine cannot run (a collective over more ranks than the topology's hosts)
    → exit 2, one error line naming the file and the field, no traceback."""
    f = tmp_path / "bad.yaml"
    f.write_text(
        "topology: {kind: star, hosts: 4}\n"
        "workload: {kind: collective, op: all-reduce, size: 1MB, hosts: 8}\n"
    )
    p = _cli("simulate", str(f))
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and str(f) in p.stderr and "workload.hosts" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_hpcc_flow_file_start_offset_round_trips_into_fct_txt(tmp_path):
    """ns-3 flow files start at 2 s: the run starts at 0 and fct.txt reports the original start."""
    flows = tmp_path / "flow.txt"
    flows.write_text("2\n1 0 3 100 8000 2.0\n2 0 3 100 8000 2.000001\n")
    sc = scenario(star(3), {"kind": "flows-file", "path": str(flows)})
    r = simulate(sc)
    assert list(r.flows["start_us"]) == [0.0, 1.0]
    r.save(tmp_path / "o")
    fct = read_fct_txt(tmp_path / "o" / "fct.txt")
    assert list(fct["start_ns"]) == [2_000_000_000, 2_000_001_000]
    assert list(fct["dport"]) == [100, 100]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[pytest.mark.validation] + ([pytest.mark.slow] if n == "perm1024" else []))
        for n in SCENARIOS
    ],
)
def test_shipped_scenario_runs(name):
    """Every scenario in scenarios/ runs losslessly — no queue drops; the only drops are corrupted
    frames where a scenario asks for link frame errors without link-level retry — to completion,
    or (the deadlock example) to a detected deadlock."""
    from aifabric.scenario import load_scenario

    r = simulate(load_scenario(ROOT / "scenarios" / f"{name}.yaml"))
    corrupted = r.engine.get("link_errors", {}).get("corrupted_dropped_packets", 0)
    assert r.summary["drops"] == corrupted
    if "deadlock" in name:
        assert r.summary["deadlock"]
    else:
        assert r.summary["completed_flows"] == r.summary["flows"]


def test_deadlock_is_detected_and_cycle_reported():
    """A PFC cyclic buffer dependency on a 5-switch ring stops the run with deadlock: true, names
    the cycle of paused ring ports, and the CLI exits 1."""
    from aifabric.scenario import load_scenario

    r = simulate(load_scenario(ROOT / "scenarios" / "ring5-deadlock.yaml"))
    assert r.summary["deadlock"] is True
    cyc = r.engine["deadlock_cycle"]
    assert sorted(cyc) == ["sw0->sw1", "sw1->sw2", "sw2->sw3", "sw3->sw4", "sw4->sw0"]
    assert r.summary["completed_flows"] == 0
    p = _cli("simulate", str(ROOT / "scenarios" / "ring5-deadlock.yaml"), "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["summary"]["deadlock"] is True


def test_cli_mode_flow_runs_the_same_flows():
    """`--mode flow` hands the packet engine's flows (here from an htsim .cm file) to the flow model
    and prints the same JSON shape."""
    p = _cli("simulate", str(ROOT / "scenarios" / "incast32.yaml"), "--mode", "flow", "--json", check=True)
    d = json.loads(p.stdout)
    assert list(d["summary"]) == list(SUMMARY_KEYS)
    assert d["summary"]["flows"] == 32
