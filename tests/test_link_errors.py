"""Link frame errors (``fabric.link_errors.fer``) and Ethernet link-level retry (``llr``) in the
packet engine: every fabric recovers a corrupted frame end to end (RoCE and InfiniBand go-back-N,
UET selective retransmission) unless LLR replays it on the link."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.errors import InputError, InputErrors
from aifabric.scenario import scenario_from_dict
from aifabric.sim import simulate
from aifabric.sim.engine import K
from test_sim_support import fat_tree, run_parity_snippet

ROOT = Path(__file__).resolve().parents[1]
INCAST8 = {"kind": "incast", "senders": 8, "receiver": 0, "flow_size": "200KB"}
FABRICS = {
    "roce": {"technology": "roce"},
    "infiniband": {"technology": "infiniband"},
    "uet": {"transport": "uet"},
}


def scenario(fabric: dict, link_errors: dict, seed: int = 1):
    fab = {**fabric, "mtu": "4000B", "link_errors": link_errors}
    return scenario_from_dict(
        {"name": "le", "seed": seed, "topology": fat_tree(4), "workload": INCAST8, "fabric": fab}
    )


def _delivered_once(r):
    st = r.extra["state"]
    size = st.fl[:, K.FL_SIZE]
    assert r.summary["complete"] and r.summary["completed_flows"] == 8
    assert (st.fl[:, K.FL_RCVD] == size).all() and r.engine["delivered_bytes"] == size.sum()
    return size


@pytest.mark.parametrize("name", FABRICS)
def test_every_byte_delivered_once_corrupted_frames_retransmitted(name):
    """fer 1 %: frames are lost on every fabric, every flow completes, each byte is delivered once
    and the bytes add up — injected = delivered + lost (corrupted or trimmed) + discarded or
    duplicated + in flight; the transport sent the corrupted payload again."""
    r = simulate(scenario(FABRICS[name], {"fer": 0.01}))
    e, le = r.engine, r.engine["link_errors"]
    size = _delivered_once(r)
    assert le["corrupted_dropped_packets"] > 0 and le["llr_replays"] == 0
    assert e["dropped_bytes"] >= le["corrupted_dropped_bytes"] > 0
    if name == "uet":
        u = e["uet"]
        lost = u["trimmed_payload_bytes"] + e["dropped_bytes"]
        wasted = u["duplicate_bytes"] + u["out_of_sequence_bytes"]
        assert e["injected_bytes"] == e["delivered_bytes"] + lost + wasted + e["in_flight_bytes"]
        assert e["injected_bytes"] - u["retransmitted_bytes"] == size.sum()
        assert u["retransmitted_packets"] >= u["trimmed_packets"] + le["corrupted_dropped_packets"]
        return
    wasted = e["dropped_bytes"] + e["discarded_bytes"] + e["in_flight_bytes"]
    assert e["injected_bytes"] == e["delivered_bytes"] + wasted
    assert e["retransmissions"] > 0 and e["injected_bytes"] - size.sum() >= le["corrupted_dropped_bytes"]


@pytest.mark.parametrize("name", FABRICS)
def test_llr_hides_the_errors(name):
    """LLR on: no corrupted frame reaches the transport (nothing dropped, no end-to-end
    retransmission beyond UET's trims); the incast ends at most one replay (link round trip +
    replay delay) per replayed frame later than without errors."""
    clean = simulate(scenario(FABRICS[name], {}))
    r = simulate(scenario(FABRICS[name], {"fer": 0.01, "llr": True, "llr_replay_delay": "200ns"}))
    e, le = r.engine, r.engine["link_errors"]
    _delivered_once(r)
    assert le["llr_replays"] > 0 and le["corrupted_dropped_packets"] == 0 and e["dropped_bytes"] == 0
    if name == "uet":
        assert e["uet"]["timeouts"] == 0
        assert e["uet"]["retransmitted_packets"] == e["uet"]["trimmed_packets"]
    else:
        assert e["retransmissions"] == 0 and e["injected_bytes"] == e["delivered_bytes"]
    replay_us = 2 * 1.0 + 4064 * 8 / 100e3 + 0.2  # 1 µs links, a 4 KB frame at 100 Gb/s, 200 ns
    late = r.summary["fct_max_us"] - clean.summary["fct_max_us"]
    assert late <= le["llr_replays"] * replay_us + 1e-6


def test_same_seed_same_errors_other_seed_other_errors():
    a = simulate(scenario(FABRICS["roce"], {"fer": 0.01}))
    b = simulate(scenario(FABRICS["roce"], {"fer": 0.01}))
    c = simulate(scenario(FABRICS["roce"], {"fer": 0.01}, seed=2))
    assert a.flows.equals(b.flows) and a.engine["link_errors"] == b.engine["link_errors"]
    assert not a.flows["fct_us"].equals(c.flows["fct_us"])


def test_fer_zero_is_the_engine_without_errors():
    """fer 0 (with or without llr) leaves the gate off: the same flows as no link_errors at all."""
    for fab in FABRICS.values():
        a = simulate(scenario(fab, {}))
        b = simulate(scenario(fab, {"fer": 0, "llr": True}))
        assert a.flows.equals(b.flows) and "link_errors" not in b.engine
        assert b.extra["state"].cfg[K.C_FER] == 0


_PARITY = r"""
import json, sys
sys.path.insert(0, {tests!r})
from test_sim_support import fat_tree
from aifabric.scenario import scenario_from_dict
from aifabric.sim import simulate
W = {{"kind": "incast", "senders": 4, "receiver": 0, "flow_size": "60KB"}}
def sc(fab, le):
    return scenario_from_dict({{"name": "p", "topology": fat_tree(4), "workload": W,
        "fabric": {{**fab, "link_errors": le}}}})
cases = {{"roce": sc({{}}, {{"fer": 0.02}}), "ib": sc({{"technology": "infiniband"}}, {{"fer": 0.02}}),
          "uet": sc({{"transport": "uet"}}, {{"fer": 0.02}}),
          "llr": sc({{"transport": "uet"}}, {{"fer": 0.02, "llr": True}}),
          "switch": sc({{}}, {{"fer": 0.05, "links": "switch"}})}}
out = {{n: {{"flows": simulate(s).flows.drop(columns=["throughput_gbps"]).to_json(),
            "le": simulate(s).engine["link_errors"]}} for n, s in cases.items()}}
print(json.dumps(out))
"""


def test_parity_with_numba_disabled():
    jit = run_parity_snippet(_PARITY, False)
    nojit = run_parity_snippet(_PARITY, True)
    assert jit["roce"]["le"]["corrupted_dropped_packets"] > 0 and jit["llr"]["le"]["llr_replays"] > 0
    assert jit == nojit


@pytest.mark.parametrize(
    "fabric,field,allowed",
    [
        ({"link_errors": {"fer": 0.5}}, "fabric.link_errors.fer", "less than 0.1"),
        ({"link_errors": {"fer": -1e-6}}, "fabric.link_errors.fer", "greater than or equal to 0"),
        ({"link_errors": {"llr": "yes please"}}, "fabric.link_errors.llr", "boolean"),
    ],
)
def test_bad_link_errors_are_one_line_naming_the_field(fabric, field, allowed):
    base = {"name": "x", "topology": fat_tree(4), "workload": INCAST8}
    with pytest.raises((InputError, InputErrors)) as exc:
        scenario_from_dict({**base, "fabric": fabric})
    msg = str(exc.value)
    assert msg.count("\n") == 0 and msg.startswith(field) and allowed in msg


def test_cli_fer_out_of_range_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "topology: {kind: fat-tree, k: 4}\nfabric: {link_errors: {fer: 0.2}}\n"
        "workload: {kind: incast, senders: 2}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.run(
        [sys.executable, "-m", "aifabric", "simulate", str(bad), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "fabric.link_errors.fer" in p.stderr


def test_flow_model_refuses_link_errors():
    from aifabric.flow.scenario import simulate_flow_scenario

    with pytest.raises(InputError) as exc:
        simulate_flow_scenario(scenario(FABRICS["roce"], {"fer": 1e-4}))
    assert "fabric.link_errors.fer" in str(exc.value) and "packet engine" in str(exc.value)


def test_switch_links_only_spare_the_host_links():
    """links: switch draws errors only on switch-to-switch links: fewer corrupted frames than on
    every link, none on a single-switch fabric (every link there is a host link)."""
    every = simulate(scenario(FABRICS["roce"], {"fer": 0.01}))
    inter = simulate(scenario(FABRICS["roce"], {"fer": 0.01, "links": "switch"}))
    n_all = every.engine["link_errors"]["corrupted_dropped_packets"]
    n_sw = inter.engine["link_errors"]["corrupted_dropped_packets"]
    assert inter.engine["link_errors"]["links"] == "switch" and 0 < n_sw < n_all
    _delivered_once(inter)
    star = scenario_from_dict(
        {
            "name": "s",
            "topology": {"kind": "star", "hosts": 4},
            "workload": {"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "200KB"},
            "fabric": {"link_errors": {"fer": 0.05, "links": "switch"}},
        }
    )
    r = simulate(star)
    assert r.engine["link_errors"]["corrupted_dropped_packets"] == 0 and r.engine["retransmissions"] == 0
