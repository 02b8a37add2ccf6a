"""Lossless-layer misconfigurations: per-switch PFC thresholds (fabric.pfc_overrides) and injected
PAUSE frames (fabric.pause_storms) — closed forms, losslessness, validation, JIT parity."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.errors import InputErrors
from aifabric.scenario import Scenario, scenario_from_dict
from aifabric.sim import kernel as K
from aifabric.sim import simulate
from test_sim_lossless_regression import _check_lossless
from test_sim_support import PKT, SER_100G_PS, run_parity_snippet, scenario, star

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
US = 1_000_000  # ps
XOFF_LOW, XON_LOW = 3 * PKT, 2 * PKT  # 12,192 B / 8,128 B against the helpers' 60,960 / 48,768


def _headroom(delay_ps: int, rate_bps: int = 100 * 10**9) -> int:
    """Bytes that can still reach an ingress after it crossed xoff: the packet that crossed it, the
    packet the sender had started, and a round trip of the link (plus the PAUSE frame) at line rate."""
    return 2 * PKT + (2 * delay_ps + 64 * 8 * 10**12 // rate_bps) * rate_bps // (8 * 10**12)


def _incast(fabric=None, n=4, size="400KB", **kw):
    return scenario(
        star(n + 1), {"kind": "incast", "senders": n, "receiver": 0, "flow_size": size}, fabric=fabric, **kw
    )


def _dumbbell(fabric=None):
    """h0, h1, h2 on sw0 → h3 on sw1 over a 200 Gb/s bottleneck: both switches send PAUSE."""
    topo = {
        "kind": "dumbbell",
        "hosts_left": 3,
        "hosts_right": 1,
        "link_rate": "100Gbps",
        "bottleneck_rate": "200Gbps",
        "link_delay": "100ns",
    }
    return scenario(
        topo, {"kind": "incast", "senders": 3, "receiver": 3, "flow_size": "400KB"}, fabric=fabric
    )


def _one_flow(fabric=None, size="4000000B"):
    """h0 → sw0 → h1, one 4 MB flow (1000 packets, ~330 µs)."""
    return scenario(
        star(2), {"kind": "incast", "senders": 1, "receiver": 1, "flow_size": size}, fabric=fabric
    )


def _rows(r, node_name):
    return r.ports[r.ports["node_name"] == node_name]


# ---- fabric.pfc_overrides ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "pfc",
    [
        {"enabled": True, "mode": "static", "xoff": "60960B", "xon": "48768B"},
        {"enabled": True, "mode": "dynamic", "alpha": 0.25},
    ],
    ids=["static", "dynamic"],
)
def test_override_equal_to_the_fabric_is_bit_identical(pfc):
    """An override that restates the fabric's thresholds changes nothing, to the last bit."""
    same = {"switches": ["sw0"]}
    if pfc["mode"] == "static":
        same.update(xoff=pfc["xoff"], xon=pfc["xon"])
    else:
        same.update(alpha=pfc["alpha"])
    fab = {"pfc": pfc, "switch_buffer": "400KB"}
    a = simulate(_incast(fab, size="500KB"))
    b = simulate(_incast({**fab, "pfc_overrides": [same]}, size="500KB"))
    assert a.summary["pause_frames"] > 0
    assert a.flows["fct_us"].equals(b.flows["fct_us"])
    assert a.flows.equals(b.flows)
    assert a.ports.equals(b.ports)
    assert a.summary == b.summary
    assert a.engine["events"] == b.engine["events"]
    assert b.engine["pfc_overrides"][0]["switches"] == ["sw0"]


def test_lower_xoff_on_the_incast_switch_pauses_more_and_holds_less():
    """4 → 1 through sw0: lowering sw0's xoff by an override sends more PAUSE frames, and every
    ingress of sw0 then holds at most xoff + headroom (a packet each way and a link round trip);
    lossless, every byte delivered."""
    base = simulate(_incast())
    low = simulate(
        _incast({"pfc_overrides": [{"switches": ["sw0"], "xoff": f"{XOFF_LOW}B", "xon": f"{XON_LOW}B"}]})
    )
    for r in (base, low):
        _check_lossless(r)
    b, lo = _rows(base, "sw0"), _rows(low, "sw0")
    b, lo = b[b["peer"] != 0], lo[lo["peer"] != 0]  # sw0's ingress from the four senders
    assert lo["pause_sent"].sum() > b["pause_sent"].sum() > 0
    assert low.summary["pause_frames"] > base.summary["pause_frames"]
    assert lo["max_ingress_bytes"].max() < b["max_ingress_bytes"].min()
    assert lo["max_ingress_bytes"].max() <= XOFF_LOW + _headroom(US)
    assert b["max_ingress_bytes"].min() > 60960  # the fabric's xoff still rules without the override
    st = low.extra["state"]
    assert low.engine["pfc_overrides"] == [
        {"switches": ["sw0"], "mode": "static", "xoff_bytes": XOFF_LOW, "xon_bytes": XON_LOW, "alpha": None}
    ]
    assert st.info["pfc_overrides"] == low.engine["pfc_overrides"]
    assert low.engine["pfc_default"]["xoff_bytes"] == 60960


@pytest.mark.parametrize("target", ["sw0", "sw1"])
def test_override_applies_to_the_listed_switch_only(target):
    """Two switches on the path, both sending PAUSE: an override on one of them bounds that switch's
    ingress by its xoff and leaves the other at the fabric's xoff (60,960 B) and, for sw1, sw0's
    PAUSE counts."""
    base = simulate(_dumbbell())
    ov = simulate(
        _dumbbell({"pfc_overrides": [{"switches": [target], "xoff": f"{XOFF_LOW}B", "xon": f"{XON_LOW}B"}]})
    )
    for r in (base, ov):
        _check_lossless(r)
    other = "sw1" if target == "sw0" else "sw0"
    # the ingress ports of a switch are its interfaces' rows (max_ingress_bytes, pause_sent)
    t_b, t_o = _rows(base, target), _rows(ov, target)
    assert t_o["pause_sent"].sum() > t_b["pause_sent"].sum() > 0
    assert 0 < t_o["max_ingress_bytes"].max() <= XOFF_LOW + _headroom(100_000, 200 * 10**9)
    assert _rows(ov, other)["max_ingress_bytes"].max() > 60960
    if target == "sw0":  # sw1's ingress sees the same traffic pattern: unchanged
        assert _rows(ov, "sw1")["pause_sent"].tolist() == _rows(base, "sw1")["pause_sent"].tolist()
    pt = ov.extra["state"].pt
    tid = ov.extra["state"].info["topo"].node_id(target)
    into = pt[:, K.PT_PEER] == tid
    assert (pt[into, K.PT_XOFF] == XOFF_LOW).all() and (pt[~into, K.PT_XOFF] == 60960).all()


def test_dynamic_override_on_a_static_fabric_is_lossless():
    """A switch batch on dynamic thresholds (alpha × free buffer) in a static fabric: its own alpha
    slot, lossless on a buffer the fabric's static thresholds overflow (4 × (xoff + headroom) > 300 KB),
    more PAUSE than with the static 15-packet xoff."""
    fab = {
        "switch_buffer": "300KB",
        "pfc_overrides": [{"switches": ["sw0"], "mode": "dynamic", "alpha": 0.0625}],
    }
    r = simulate(_incast(fab))
    _check_lossless(r)
    st = r.extra["state"]
    assert st.cf[K.CF_NUM] == 0.0625
    into = st.pt[:, K.PT_PEER] == st.info["topo"].node_id("sw0")
    assert (st.pt[into, K.PT_ALPHA_IDX] == K.CF_NUM).all() and (st.pt[into, K.PT_PFC_DYN] == 1).all()
    assert (
        r.engine["pfc_overrides"][0]["mode"] == "dynamic" and r.engine["pfc_overrides"][0]["alpha"] == 0.0625
    )
    # 0.0625 × (300 KB − used) < 19 KB: far below the fabric's 60,960 B
    assert _rows(r, "sw0")["max_ingress_bytes"].max() <= 19_200 + _headroom(US)
    assert r.summary["pause_frames"] > simulate(_incast()).summary["pause_frames"]


def test_static_override_on_a_dynamic_fabric():
    """The other way round: a dynamic fabric (alpha 1 on 32 MiB never pauses this incast) with one
    switch on static thresholds: that switch pauses, and holds at most its xoff + headroom."""
    fab = {"pfc": {"enabled": True, "mode": "dynamic", "alpha": 1.0}}
    base = simulate(_incast(fab))
    r = simulate(
        _incast({**fab, "pfc_overrides": [{"switches": [5], "mode": "static", "xoff": f"{XOFF_LOW}B"}]})
    )
    _check_lossless(r)
    assert base.summary["pause_frames"] == 0 < r.summary["pause_frames"]
    assert r.engine["pfc_overrides"][0]["xon_bytes"] == XOFF_LOW  # min(the default xon, xoff)
    assert _rows(r, "sw0")["max_ingress_bytes"].max() <= XOFF_LOW + _headroom(US)


# ---- fabric.pause_storms -------------------------------------------------------------------------
def test_one_injected_pause_delays_a_lone_flow_by_its_duration():
    """A 2 µs pause of sw0 → h1 (h1's NIC sends the spurious PAUSE) in the middle of a lone flow:
    the FCT grows by 2 µs less the part of a packet that was in service (< one serialisation); the
    queue it builds (25 KB) stays under xoff, so no real PFC anywhere."""
    d = 2 * US
    base = simulate(_one_flow())
    r = simulate(_one_flow({"pause_storms": [{"node": "h1", "start": "100us", "duration": "2us"}]}))
    _check_lossless(r)
    grow = (r.flows["fct_us"][0] - base.flows["fct_us"][0]) * 1e6
    assert d - SER_100G_PS < grow <= d
    assert r.summary["pause_frames"] == 0 and r.summary["pause_time_us"] == 0
    assert r.summary["injected_pauses"] == 1 and r.summary["injected_pause_time_us"] == pytest.approx(2.0)
    held = r.ports[r.ports["injected_pause_us"] > 0]
    assert held[["node_name", "peer"]].values.tolist() == [["sw0", 1]]  # sw0's egress toward h1
    assert held["injected_pause_us"].iloc[0] == pytest.approx(2.0)
    assert r.ports["paused_time_us"].sum() == 0
    assert "injected_pauses" not in base.summary and base.ports["injected_pause_us"].sum() == 0
    assert r.engine["pause_storms"][0]["peers"] == ["sw0"]


def test_periodic_pauses_cost_their_duty_cycle():
    """count N, period T, duration d: N·d of injected pause on the paused egress, each pause costs
    d less < one packet, and over a long flow the throughput drops by ≈ d/T (10 %) — PFC
    backpressure keeps the paused egress's queue from draining, so no pause is absorbed."""
    base = simulate(_one_flow())
    n, d, period = 15, 2 * US, 20 * US
    r = simulate(
        _one_flow(
            {
                "pause_storms": [
                    {
                        "node": "h1",
                        "peers": ["sw0"],
                        "start": "10us",
                        "duration": "2us",
                        "period": "20us",
                        "count": n,
                    }
                ]
            }
        )
    )
    _check_lossless(r)
    assert r.summary["injected_pauses"] == n
    assert _rows(r, "sw0")["injected_pause_us"].max() == pytest.approx(n * d / 1e6)
    grow = (r.flows["fct_us"][0] - base.flows["fct_us"][0]) * 1e6
    assert n * (d - SER_100G_PS) < grow <= n * d
    # pauses for the whole flow: throughput × (1 − d/T)
    long = simulate(
        _one_flow({"pause_storms": [{"node": "h1", "duration": "2us", "period": "20us", "count": 40}]})
    )
    _check_lossless(long)
    ratio = base.flows["rx_fct_us"][0] / long.flows["rx_fct_us"][0]
    assert ratio == pytest.approx(1 - d / period, abs=0.02)
    assert long.summary["pause_frames"] > 0  # the queue behind the paused egress reached xoff


def test_real_and_injected_pause_are_independent():
    """4 → 1 incast with a low xoff (real PFC all the time) and sw0 injecting a 10 µs PAUSE into
    h1's NIC: a real RESUME that arrives during the injected pause does not let h1 send; lossless,
    every flow completes, bytes conserved; real and injected pause time are reported apart."""
    fab = {
        "pfc": {"enabled": True, "mode": "static", "xoff": f"{XOFF_LOW}B", "xon": f"{XON_LOW}B"},
        "pause_storms": [
            {"node": "sw0", "peers": ["h1"], "start": "20us", "duration": "10us"},
            {"node": "h0", "start": "5us", "duration": "3us", "period": "15us", "count": 10},
        ],
    }
    r = simulate(_incast(fab))
    _check_lossless(r)
    h1 = r.ports[(r.ports["node_name"] == "h1")].iloc[0]
    assert h1["injected_pause_us"] == pytest.approx(10.0) and h1["paused_time_us"] > 0
    assert _rows(r, "sw0")["injected_pause_us"].max() == pytest.approx(30.0)
    assert r.summary["injected_pauses"] == 11 and r.summary["injected_pause_time_us"] == pytest.approx(40.0)
    log = r.pfc_log
    during = log[(log["node"] == 1) & (log["time_ns"] > 20_000) & (log["time_ns"] < 30_000)]
    assert (during["type"] == 0).any()  # a real RESUME reached h1 while the injected pause held
    tx = [simulate(_incast(fab, until=u)).ports["tx_packets"][2] for u in ("20001ns", "29999ns", "30001ns")]
    assert tx[0] == tx[1] < tx[2]


def test_storm_on_every_neighbour_of_a_switch_and_lossy_recovery():
    """Without peers a storm pauses every neighbour's egress toward the node; with PFC off a long
    injected pause overflows a small buffer, and go-back-N still completes every flow."""
    fab = {
        "pfc": {"enabled": False},
        "switch_buffer": "40KB",
        "pause_storms": [
            {"node": "h0", "start": "20us", "duration": "20us"},
            {"node": "sw0", "start": "100us", "duration": "5us"},
        ],
    }
    r = simulate(_incast(fab, n=2, size="200KB"))
    assert r.summary["completed_flows"] == 2 and r.summary["drops"] > 0
    e = r.engine
    assert e["injected_bytes"] == (
        e["delivered_bytes"] + e["in_flight_bytes"] + e["dropped_bytes"] + e["discarded_bytes"]
    )
    held = r.ports[r.ports["injected_pause_us"] > 0]
    assert sorted(held["node_name"]) == ["h0", "h1", "h2", "sw0"]  # sw0 → h0; every neighbour of sw0 → sw0
    assert r.summary["injected_pauses"] == 4


def test_long_injected_pause_is_not_a_deadlock():
    """An injected pause longer than sim.deadlock_timeout holds packets without anything moving;
    it ends on its own, so the run is not stopped as a deadlock."""
    r = simulate(
        _incast(
            {"pause_storms": [{"node": "h0", "start": "10us", "duration": "300us"}]},
            n=2,
            size="200KB",
            deadlock_timeout="100us",
        )
    )
    _check_lossless(r)
    assert not r.summary["deadlock"]
    assert _rows(r, "sw0")["injected_pause_us"].max() == pytest.approx(300.0)


def test_python_api():
    """Scenarios built in code take the same fields (units parsed, names resolved at simulate)."""
    sc = Scenario.model_validate(
        {
            "topology": {
                "kind": "leaf-spine",
                "leaves": 2,
                "spines": 2,
                "hosts_per_leaf": 2,
                "link_rate": "100Gbps",
            },
            "workload": {"kind": "permutation", "flow_size": "1MB"},
            "fabric": {
                "pfc_overrides": [{"switches": ["leaf1", "spine0"], "xoff": "30KB"}],
                "pause_storms": [
                    {
                        "node": "spine1",
                        "peers": ["leaf0"],
                        "start": "5us",
                        "duration": "2us",
                        "period": "10us",
                        "count": 5,
                    }
                ],
            },
            "sim": {"progress": False},
        }
    )
    assert sc.fabric.pause_storms[0].duration == 2 * US and sc.fabric.pfc_overrides[0].xoff == 30_000
    r = simulate(sc)
    _check_lossless(r)
    assert r.engine["pfc_overrides"][0]["switches"] == ["leaf1", "spine0"]
    assert r.engine["pfc_overrides"][0]["xon_bytes"] == 30_000  # min(the default xon, xoff)
    assert r.summary["injected_pauses"] == 5
    assert _rows(r, "leaf0")["injected_pause_us"].sum() == pytest.approx(10.0)


# ---- validation ------------------------------------------------------------------------------------
def _problems(fabric):
    with pytest.raises(InputErrors) as exc:
        scenario_from_dict({"topology": star(4), "fabric": fabric}, file="s.yaml")
    return exc.value.lines()


@pytest.mark.parametrize(
    ("fabric", "field", "words"),
    [
        (
            {"pfc_overrides": [{"switches": ["sw0"], "xoff": "10KB", "xon": "20KB"}]},
            "fabric.pfc_overrides.0.xon",
            "must not exceed",
        ),
        (
            {"pfc_overrides": [{"switches": ["sw0"], "xon": "200KB"}]},
            "fabric.pfc_overrides.0.xon",
            "must not exceed",
        ),
        (
            {"pfc_overrides": [{"switches": ["sw0"], "mode": "static", "alpha": 0.5}]},
            "fabric.pfc_overrides.0.alpha",
            "dynamic only",
        ),
        (
            {"pfc_overrides": [{"switches": ["sw0"], "alpha": 0.5}]},
            "fabric.pfc_overrides.0.alpha",
            "dynamic only",
        ),
        (
            {"pfc_overrides": [{"switches": ["sw0"], "mode": "dynamic", "xoff": "10KB"}]},
            "fabric.pfc_overrides.0.xoff",
            "static only",
        ),
        ({"pfc_overrides": [{"switches": []}]}, "fabric.pfc_overrides.0.switches", "at least 1"),
        (
            {"pfc_overrides": [{"switches": ["sw0"], "xof": "1KB"}]},
            "fabric.pfc_overrides.0.xof",
            "allowed: alpha, mode",
        ),
        (
            {"pfc": {"enabled": False}, "pfc_overrides": [{"switches": ["sw0"]}]},
            "fabric.pfc_overrides",
            "enabled",
        ),
        (
            {"technology": "infiniband", "pfc_overrides": [{"switches": ["sw0"]}]},
            "fabric.pfc_overrides",
            "RoCE",
        ),
        (
            {"technology": "infiniband", "pause_storms": [{"node": "sw0", "duration": "1us"}]},
            "fabric.pause_storms",
            "no PAUSE",
        ),
        (
            {"pause_storms": [{"node": "sw0", "duration": "1us", "count": 3}]},
            "fabric.pause_storms.0.period",
            "required when count > 1",
        ),
        (
            {"pause_storms": [{"node": "sw0", "duration": "10us", "period": "5us", "count": 3}]},
            "fabric.pause_storms.0.duration",
            "must not exceed period",
        ),
        ({"pause_storms": [{"node": "sw0"}]}, "fabric.pause_storms.0.duration", "required"),
        (
            {"pause_storms": [{"node": "sw0", "duration": "0us"}]},
            "fabric.pause_storms.0.duration",
            "greater than 0",
        ),
        (
            {"pause_storms": [{"node": "sw0", "duration": "1us", "count": 0}]},
            "fabric.pause_storms.0.count",
            "greater than or equal to 1",
        ),
    ],
)
def test_bad_fields_one_line_each(fabric, field, words):
    lines = _problems(fabric)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"s.yaml: {field}:") and words in lines[0], lines


def _yaml(tmp_path, fabric_lines: str) -> Path:
    p = tmp_path / "bad.yaml"
    p.write_text(
        "name: x\ntopology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
        "workload: {kind: permutation, flow_size: 100KB}\nfabric:\n" + fabric_lines
    )
    return p


@pytest.mark.parametrize(
    ("fabric", "field", "words"),
    [
        (
            "  pfc_overrides: [{switches: [leaf0, leaf9], xoff: 30KB}]\n",
            "fabric.pfc_overrides.0.switches",
            "no such node (got 'leaf9')",
        ),
        ("  pfc_overrides: [{switches: [h1], xoff: 30KB}]\n", "fabric.pfc_overrides.0.switches", "is a host"),
        ("  pfc_overrides: [{switches: [99]}]\n", "fabric.pfc_overrides.0.switches", "no such node (got 99)"),
        (
            "  pfc_overrides: [{switches: [leaf0]}, {switches: [4]}]\n",
            "fabric.pfc_overrides.1.switches",
            "also listed in fabric.pfc_overrides.0",
        ),
        ("  pause_storms: [{node: spine7, duration: 1us}]\n", "fabric.pause_storms.0.node", "no such node"),
        (
            "  pause_storms: [{node: spine0, peers: [leafx], duration: 1us}]\n",
            "fabric.pause_storms.0.peers",
            "no such node",
        ),
        (
            "  pause_storms: [{node: spine0, peers: [h0], duration: 1us}]\n",
            "fabric.pause_storms.0.peers",
            "not a neighbour of spine0",
        ),
        (
            "  pause_storms: [{node: h0, duration: 1us, period: 2us, count: 3}, {node: leaf0, duration: 1us, "
            "period: 1us, count: 600000}]\n",
            "fabric.pause_storms.1.count",
            "injected pauses",
        ),
        (
            "  pause_storms: [{node: leaf0, duration: 3us, period: 2us, count: 3}]\n",
            "fabric.pause_storms.0.duration",
            "must not exceed period",
        ),
        (
            "  technology: infiniband\n  pause_storms: [{node: leaf0, duration: 3us}]\n",
            "fabric.pause_storms",
            "InfiniBand has no PAUSE frames",
        ),
    ],
)
@pytest.mark.parametrize("command", ["validate", "simulate"])
def test_cli_names_the_field_exit_2(tmp_path, fabric, field, words, command):
    """`aifabric validate` (which builds the topology) and `aifabric simulate`: exit 2, one line
    naming the file and the field, no traceback."""
    p = _yaml(tmp_path, fabric)
    r = runner.invoke(app, [command, str(p)])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {p}: {field}:") and words in lines[0], lines
    assert "Traceback" not in r.output


def test_cli_validate_ok_with_overrides_and_storms(tmp_path):
    p = _yaml(
        tmp_path,
        "  pfc_overrides: [{switches: [leaf1, spine0], xoff: 30KB}]\n"
        "  pause_storms: [{node: spine1, peers: [leaf0], duration: 2us, period: 10us, count: 5}]\n",
    )
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 0, r.output
    assert "ok" in r.output


# ---- JIT parity ------------------------------------------------------------------------------------
_PARITY = r"""
import json, sys
sys.path.insert(0, {tests!r})
from test_sim_support import scenario, star, fat_tree
from aifabric.sim import simulate
db = {{"kind": "dumbbell", "hosts_left": 3, "hosts_right": 1, "link_rate": "100Gbps", "bottleneck_rate": "200Gbps",
       "link_delay": "100ns"}}
cases = {{
    "override_storm": scenario(star(4), {{"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "60KB"}},
        fabric={{"switch_buffer": "200KB",
                 "pfc_overrides": [{{"switches": ["sw0"], "mode": "dynamic", "alpha": 0.1}}],
                 "pause_storms": [{{"node": "sw0", "peers": ["h1"], "start": "3us", "duration": "2us",
                                   "period": "6us", "count": 4}},
                                  {{"node": "h0", "start": "1us", "duration": "1us"}}]}}),
    "static_override": scenario(db, {{"kind": "incast", "senders": 3, "receiver": 3, "flow_size": "40KB"}},
        fabric={{"pfc_overrides": [{{"switches": ["sw1"], "xoff": "12192B", "xon": "8128B"}}],
                 "pause_storms": [{{"node": "sw1", "peers": ["sw0"], "start": "2us", "duration": "1us"}}]}}),
    "adaptive_storm": scenario(fat_tree(4), {{"kind": "permutation", "flow_size": "20KB"}},
        fabric={{"routing": "adaptive", "adaptive": {{"granularity": "packet"}},
                 "pause_storms": [{{"node": "agg0", "start": "1us", "duration": "1us", "period": "3us", "count": 3}}]}}),
}}
out = {{}}
for name, sc in cases.items():
    r = simulate(sc)
    out[name] = {{"flows": r.flows.drop(columns=["throughput_gbps"]).to_json(), "ports": r.ports.to_json(),
                  "summary": r.summary, "events": r.engine["events"], "pfc": r.pfc_log.to_json()}}
print(json.dumps(out))
"""


def test_kernel_parity_with_numba_disabled():
    """Per-port thresholds (a dynamic alpha slot, a static override) and injected pauses give
    bit-identical results compiled and as plain Python (NUMBA_DISABLE_JIT=1)."""
    jit = run_parity_snippet(_PARITY, False)
    nojit = run_parity_snippet(_PARITY, True)
    for name, case in jit.items():
        assert case["summary"]["injected_pauses"] > 0 and case["summary"]["drops"] == 0
        assert case["summary"]["completed_flows"] == case["summary"]["flows"]
        assert name == "adaptive_storm" or case["summary"]["pause_frames"] > 0
    assert jit == nojit
