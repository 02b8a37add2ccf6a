"""Collective workloads at packet level (aifabric.sim.collective): network step by network step,
the flow mode's `collective` result with packet-engine step times."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.errors import InputError
from aifabric.flow.scenario import simulate_flow_scenario
from aifabric.scenario import scenario_from_dict
from aifabric.sim import simulate
from aifabric.sim.collective import CollectiveResults
from aifabric.topology import from_spec
from aifabric.workload.collectives import NIC_EFFICIENCY, busbw_factor, collective_flows

RAIL16 = {"kind": "rail-optimized", "gpus": 16, "link_rate": "100Gbps"}  # 2 servers × 8 GPUs
LS8 = {
    "kind": "leaf-spine",
    "leaves": 2,
    "spines": 2,
    "hosts_per_leaf": 4,
    "link_rate": "100Gbps",
    "link_delay": "1us",
}
ROCE = {
    "technology": "roce",
    "mtu": "4000B",
    "header": "64B",
    "switch_buffer": "32MiB",
    "pfc": {"enabled": True, "mode": "static", "xoff": "60960B", "xon": "48768B"},
}
DCQCN = {
    "technology": "roce",
    "mtu": "4000B",
    "header": "64B",
    "switch_buffer": "32MiB",
    "pfc": {"enabled": True, "mode": "dynamic"},
    "ecn": {"enabled": True, "kmin": "40KB", "kmax": "160KB", "pmax": 0.2},
    "congestion_control": "dcqcn",
}
IB = {"technology": "infiniband", "mtu": "4000B", "header": "64B"}
WALL = ("wall_s",)


def sc_of(topology=LS8, fabric=ROCE, seed=1, **workload):
    wl = {"kind": "collective", "op": "all-reduce", "size": "8MB", **workload}
    return scenario_from_dict(
        {
            "name": "coll",
            "seed": seed,
            "topology": topology,
            "fabric": fabric,
            "workload": wl,
            "sim": {"until": "50ms"},
        }
    )


def _no_wall(x):
    if isinstance(x, dict):
        return {k: _no_wall(v) for k, v in x.items() if k not in WALL}
    if isinstance(x, list):
        return [_no_wall(v) for v in x]
    return x


@pytest.mark.parametrize("topology", [RAIL16, LS8], ids=["rail16", "leafspine8"])
def test_ring_allreduce_agrees_with_flow_mode(topology):
    """(a) On a non-blocking fabric the packet-mode ring all-reduce takes within 10 % of flow mode
    (bench/FLOW_RESULTS.md: ~1–3 % for ring), with the same result fields; busbw = algbw × 2(n−1)/n."""
    sc = sc_of(topology, size="16MB")
    res = simulate(sc)
    assert isinstance(res, CollectiveResults)
    p = res.to_dict()["collective"]
    f = simulate_flow_scenario(sc)["collective"]
    assert set(p) == set(f)
    assert p["engine"] == "packet" and f["engine"] == "flow"
    assert p["time_s"] == pytest.approx(f["time_s"], rel=0.10)
    assert (
        p["time_s"] >= f["time_s"] * 0.999
    )  # packets add queueing and ACK clocking, never remove drain time
    assert p["busbw_gbps"] == pytest.approx(p["algbw_gbps"] * busbw_factor("all-reduce", p["ranks"]))
    assert p["algbw_gbps"] == pytest.approx(16e6 / p["time_s"] / 1e9)
    for k in (
        "ranks",
        "servers",
        "gpus_per_node",
        "steps",
        "network_bytes_per_rank",
        "network_bytes_total",
        "nvlink_bytes_per_gpu",
        "nvlink_time_s",
        "latency_s",
        "wire_bytes_total",
    ):
        assert p[k] == pytest.approx(f[k]), k
    e = res.engine
    net = [
        s for s in collective_flows("all-reduce", 16_000_000, from_spec(sc.topology)) if s.domain == "network"
    ]
    assert e["steps_simulated"] == len(net) == 1
    # NCCL's flat ring: 2(n−1) steps, each NIC carrying one chunk per step
    assert e["steps_total"] == net[0].repeat == 2 * (p["ranks"] - 1)
    # the network term is Σ repeat × (packet step time − physical latency): the packet engine's own
    # NIC (line rate), not nccl-tests' achieved efficiency
    step = next(s for s in e["steps"] if s["simulated"])
    assert p["network_time_s"] == pytest.approx(step["repeat"] * step["bandwidth_us"] * 1e-6)
    assert p["network_time_s"] < p["network_bytes_per_rank"] * 8 / (100e9 * NIC_EFFICIENCY)
    assert p["time_s"] == pytest.approx(p["latency_s"] + max(p["network_time_s"], p["nvlink_time_s"]))


@pytest.mark.parametrize(
    "workload",
    [
        {"op": "all-reduce"},
        {"op": "all-reduce", "algorithm": "tree"},
        {"op": "all-to-all"},
        {"op": "reduce-scatter"},
        {"op": "broadcast"},
    ],
    ids=lambda w: "-".join(w.values()),
)
def test_bytes_delivered_times_repeat_equal_the_collectives_network_bytes(workload):
    """(b) Byte conservation: Σ over simulated steps of delivered payload × repeat is the
    collective's network bytes — for ring all-reduce 2(N−1)/N · S per NIC (one rank per host), as
    tests/test_collectives.py asserts on the wire."""
    sc = sc_of(**workload)
    res = simulate(sc)
    c, e = res.collective, res.engine
    steps = collective_flows(
        workload["op"], 8_000_000, from_spec(sc.topology), algorithm=workload.get("algorithm", "ring")
    )
    expected = sum(s.repeat * s.total_bytes() for s in steps if s.domain == "network")
    assert e["network_payload_bytes"] == expected == pytest.approx(c["network_bytes_total"])
    sim = [s for s in e["steps"] if s["simulated"]]
    assert sum(s["repeat"] * s["delivered_bytes"] for s in sim) == expected
    f = res.flows
    rep = {s["step"]: s["repeat"] for s in sim}
    assert int((f["size_bytes"] * f["step"].map(rep)).sum()) == expected
    assert res.summary["completed_flows"] == res.summary["flows"] == len(f)
    assert res.summary["drops"] == 0 and e["dropped_bytes"] == 0
    if workload == {"op": "all-reduce"}:
        assert c["network_bytes_per_rank"] == pytest.approx(2 * 7 / 8 * 8e6, rel=1e-6)


def test_same_seed_gives_identical_json():
    """(c) Same scenario and seed → the same JSON (wall-clock fields aside)."""
    a = simulate(sc_of(op="all-to-all", seed=3)).to_dict()
    b = simulate(sc_of(op="all-to-all", seed=3)).to_dict()
    assert json.dumps(_no_wall(a), sort_keys=True) == json.dumps(_no_wall(b), sort_keys=True)


@pytest.mark.parametrize("fabric", [IB, DCQCN], ids=["ib-credits", "roce-dcqcn"])
def test_infiniband_credits_and_roce_dcqcn_run(fabric):
    """(d) A contended all-to-all completes losslessly with IB credit flow control and with
    RoCE + DCQCN (which marks and throttles)."""
    res = simulate(sc_of(fabric=fabric, op="all-to-all"))
    s, e = res.summary, res.engine
    assert s["completed_flows"] == s["flows"] == 56 and s["drops"] == 0 and not s["deadlock"]
    assert res.collective["time_s"] > 0
    if fabric is IB:
        assert (
            e["ib_vl_buffer_bytes"] > 0 and s["pause_frames"] == 0 and e["routing"] == "adaptive-packet"
        )  # IB default (interface.md)
    else:
        assert s["ecn_marks"] > 0 and e["cnps"] > 0


def test_counters_are_one_step_times_repeat():
    """A ring step simulated once counts ×repeat in the summary: PAUSE frames and injected pauses
    of a PAUSE storm are 14 × those of one run of the step's flows; FCTs are those of that run."""
    fab = {**ROCE, "pause_storms": [{"node": "leaf0", "duration": "2us", "period": "10us", "count": 1000}]}
    sc = sc_of(fabric=fab)
    res = simulate(sc)
    topo = from_spec(sc.topology)
    step = next(s for s in collective_flows("all-reduce", 8_000_000, topo) if s.domain == "network")
    fl = step.flows
    table = pd.DataFrame(
        {
            "id": np.arange(len(fl)),
            "src": fl[:, 0],
            "dst": fl[:, 1],
            "size_bytes": fl[:, 2],
            "start_ps": np.zeros(len(fl), np.int64),
            "dport": np.full(len(fl), 4791),
        }
    )
    one = simulate(sc, flows=table, topology=topo)
    assert step.repeat == 14 == res.engine["steps_total"]
    assert res.summary["injected_pauses"] == 14 * one.summary["injected_pauses"] > 0
    assert res.summary["pause_frames"] == 14 * one.summary["pause_frames"]
    assert res.summary["fct_max_us"] == pytest.approx(one.summary["fct_max_us"])
    assert res.engine["packets"] == one.engine["packets"]  # simulated once
    assert res.collective["time_s"] > simulate(sc_of()).collective["time_s"]  # the storm slows every step


def test_qp_split_and_failure_at_zero():
    """fabric.qp_split splits every step's flows into QPs; a link failed from 0 is down for the
    whole collective; a failure time inside the collective is refused (steps run from t = 0)."""
    res = simulate(sc_of(fabric={**ROCE, "qp_split": 4}))
    assert res.summary["flows"] == 4 * 8 and set(res.flows["parent_id"]) == set(range(8))
    assert res.engine["network_payload_bytes"] == 14 * 8 * 1_000_000
    down = simulate(sc_of(fabric={**ROCE, "failures": [{"link": "leaf0-spine0", "at": "0us"}]}))
    assert down.summary["completed_flows"] == down.summary["flows"]
    with pytest.raises(InputError, match="fabric.failures.0.at"):
        simulate(sc_of(fabric={**ROCE, "failures": [{"link": "leaf0-spine0", "at": "5us"}]}))


def test_one_server_has_no_network_step():
    """A collective inside one server is all NVLink: nothing to simulate, an empty flows table."""
    res = simulate(sc_of(topology={"kind": "rail-optimized", "gpus": 8, "link_rate": "100Gbps"}))
    assert res.engine["steps_simulated"] == res.engine["steps_total"] == 0
    assert res.summary["flows"] == 0 and res.collective["time_s"] > 0
    assert res.collective["time_s"] == pytest.approx(res.collective["nvlink_time_s"])


RING4 = {"kind": "ring", "switches": 4, "hosts_per_switch": 2, "link_rate": "100Gbps", "link_delay": "1us"}
TIGHT = {"technology": "roce", "pfc": {"enabled": True, "mode": "static", "xoff": "20320B", "xon": "12192B"}}


def _write(tmp_path, topology, fabric, workload, name="c.yaml", sim=None):
    doc = {
        "name": "cli",
        "topology": topology,
        "fabric": fabric,
        "workload": {"kind": "collective", **workload},
        "sim": sim or {"until": "50ms"},
    }
    p = tmp_path / name
    p.write_text(json.dumps(doc))  # JSON is YAML
    return p


def test_cli_simulate_collective_packet_mode(tmp_path):
    """(e) `aifabric simulate FILE --json` runs a collective in packet mode (exit 0, a `collective`
    key, flows with their step); `--out` writes the usual files with `collective` in summary.json."""
    f = _write(tmp_path, LS8, ROCE, {"op": "all-reduce", "size": "8MB"})
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["simulate", str(f), "--json", "--no-progress", "--out", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert {"scenario", "summary", "engine", "flows", "collective"} <= set(d)
    assert d["engine"]["mode"] == "packet" and d["collective"]["engine"] == "packet"
    assert d["engine"]["steps_simulated"] == 1 and d["engine"]["steps_total"] == 14
    assert len(d["flows"]) == 8 and {"step", "id", "fct_us", "rx_fct_us"} <= set(d["flows"][0])
    meta = json.loads((out / "summary.json").read_text())
    assert meta["collective"]["time_s"] == pytest.approx(d["collective"]["time_s"])
    for name in ("flows.parquet", "ports.parquet", "fct.txt", "pfc.txt"):
        assert (out / name).is_file()
    assert len((out / "fct.txt").read_text().splitlines()) == 8
    text = CliRunner().invoke(app, ["simulate", str(f), "--no-progress"])
    assert text.exit_code == 0 and "network steps simulated" in text.output and "busbw" in text.output


def test_cli_collective_bad_input_and_deadlock(tmp_path):
    """More ranks than hosts / an algorithm NCCL does not run: one line, exit 2. A PFC deadlock in
    a step (all-to-all on a 4-switch ring, tight thresholds): exit 1, the run stops at that step."""
    for wl, needle in [
        ({"op": "all-reduce", "size": "8MB", "hosts": 32}, "workload.hosts"),
        ({"op": "all-to-all", "size": "8MB", "algorithm": "nvls"}, "workload.algorithm"),
        ({"op": "all-sum", "size": "8MB"}, "workload.op"),
    ]:
        f = _write(tmp_path, LS8, ROCE, wl, name="bad.yaml")
        r = CliRunner().invoke(app, ["simulate", str(f), "--json"])
        assert r.exit_code == 2, (wl, r.output)
        assert needle in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    f = _write(
        tmp_path,
        RING4,
        TIGHT,
        {"op": "all-to-all", "size": "40MB"},
        name="dl.yaml",
        sim={"until": "10ms", "deadlock_timeout": "100us"},
    )
    r = CliRunner().invoke(app, ["simulate", str(f), "--json", "--no-progress"])
    assert r.exit_code == 1, r.output
    d = json.loads(r.stdout)
    assert d["summary"]["deadlock"] is True and d["engine"]["status"] == "deadlock"
    assert d["engine"]["deadlock_step"] == 0 and len(d["engine"]["deadlock_cycle"]) >= 2
    assert d["collective"]["time_s"] is None and "did not complete" in d["collective"]["notes"][-1]
