"""Lossless means lossless: with PFC on, adaptive routing must not drop (regression).

Adaptive routing started its least-occupied scan from the packet's precomputed ECMP port
``fpath[row, hop]``. Once a packet had left its ECMP path (say a different aggregation switch),
that port belonged to *another* switch; when it was the least occupied the packet was queued
there, charged to the shared buffer of the switch it arrived at and released from the other one.
The leak grew with the bytes moved until a switch's ``swused`` passed the buffer and the
"lossless" fabric dropped (k=8 fat-tree, 64 MiB tree all-reduce step: 196,301 drops, 55 of 508
flows never finished). Static PFC bounds every ingress to xoff + one round trip of headroom, so
these configurations are lossless by construction: any drop is an engine bug.
"""

from __future__ import annotations

import numpy as np
import pytest

from aifabric.scenario import scenario_from_dict
from aifabric.sim import kernel as K
from aifabric.sim import simulate
from aifabric.topology import fat_tree
from aifabric.workload.collectives import collective_flows


def _step(k: int, size: int):
    import pandas as pd

    topo = fat_tree(k, 100 * 10**9, 10**6)
    step = [
        s
        for s in collective_flows("all-reduce", size, topo, algorithm="tree", gpus_per_node=1)
        if s.domain == "network"
    ][0]
    fl = step.flows
    n = len(fl)
    flows = pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "src": fl[:, 0].astype(np.int64),
            "dst": fl[:, 1].astype(np.int64),
            "size_bytes": fl[:, 2].astype(np.int64),
            "start_ps": np.zeros(n, dtype=np.int64),
            "dport": np.full(n, 4791, dtype=np.int64),
        }
    )
    return topo, flows


def _scenario(technology: str, routing: str, buffer: str, granularity: str = "packet"):
    fabric = {
        "technology": technology,
        "mtu": "4000B",
        "header": "64B",
        "routing": routing,
        "switch_buffer": buffer,
        "adaptive": {"granularity": granularity},
    }
    if technology == "roce":
        fabric.update(
            {
                "pfc": {"enabled": True, "mode": "static"},
                "ecn": {"enabled": False},
                "congestion_control": "none",
            }
        )
    return scenario_from_dict(
        {
            "name": "lossless",
            "seed": 1,
            "topology": {"kind": "star", "hosts": 2, "link_rate": "100Gbps"},
            "fabric": fabric,
            "sim": {"until": "1s", "progress": False},
        }
    )


def _check_lossless(res):
    st = res.extra["state"]
    eng = res.engine
    assert res.summary["drops"] == 0
    assert "lossless_violation" not in eng
    assert eng["status"] == "done"
    assert res.summary["completed_flows"] == res.summary["flows"]
    assert bool(res.flows["completed"].all())
    # byte conservation: every injected payload byte is delivered, nothing dropped or in flight
    assert eng["injected_bytes"] == eng["delivered_bytes"] == int(res.flows["size_bytes"].sum())
    assert eng["dropped_bytes"] == 0 and eng["in_flight_bytes"] == 0
    # buffer accounting drains to zero on every switch and every ingress
    assert not st.swused.any()
    assert not st.pt[:, K.PT_INBYTES].any()
    assert not st.pt[:, K.PT_QBYTES].any()


@pytest.mark.parametrize("granularity", ["packet", "flowlet"])
def test_adaptive_pfc_small_buffer_never_drops(granularity):
    """Smallest reproduction: k=4 fat-tree, 2 MiB tree all-reduce step (60 flows). A 1 MiB buffer
    holds 4 ingress ports × (15-packet xoff + headroom) ≈ 0.37 MB, so it is lossless by
    construction; the leak used to overflow it (drops, unfinished flows)."""
    topo, flows = _step(4, 2 * 2**20)
    res = simulate(_scenario("roce", "adaptive", "1MiB", granularity), flows=flows, topology=topo)
    _check_lossless(res)
    assert res.summary["pause_frames"] > 0  # PFC really was exercised


@pytest.mark.parametrize(
    "technology,routing", [("roce", "ecmp"), ("infiniband", "adaptive"), ("infiniband", "static")]
)
def test_other_fabrics_small_buffer_lossless(technology, routing):
    topo, flows = _step(4, 2 * 2**20)
    res = simulate(_scenario(technology, routing, "1MiB"), flows=flows, topology=topo)
    _check_lossless(res)


def test_lossless_violation_is_reported():
    """A buffer smaller than the PFC headroom can drop; the engine says so instead of staying silent."""
    topo, flows = _step(4, 2**20)
    with pytest.warns(RuntimeWarning, match="lossless fabric dropped"):
        res = simulate(_scenario("roce", "ecmp", "64KiB"), flows=flows, topology=topo)
    assert res.summary["drops"] > 0
    assert "lossless_violation" in res.engine


@pytest.mark.validation
def test_k8_tree_allreduce_64mib_adaptive_lossless():
    """The reported case: k=8 fat-tree, 64 MiB tree all-reduce network step (508 flows),
    32 MiB buffer, adaptive routing (before the fix: 196,301 drops, 453 / 508 flows done)."""
    topo, flows = _step(8, 64 * 2**20)
    res = simulate(_scenario("roce", "adaptive", "32MiB"), flows=flows, topology=topo)
    _check_lossless(res)


_DETOUR = """name: fail-adaptive
seed: 2
topology: {kind: fat-tree, k: 4, link_rate: 100Gbps, link_delay: 1us}
fabric:
  technology: roce
  routing: adaptive
  adaptive: {granularity: flowlet}
  failures: [{link: tor0-agg0, at: 5us}]
workload: {kind: all-to-all, flow_size: 50KB}
sim: {until: 10ms}
"""


def test_detour_after_a_failure_stays_inside_the_tables(tmp_path):
    """A packet already travelling when a link fails may detour (hops taken + the new distance):
    adaptive routing indexes the path and flowlet tables by hop, which once read and wrote past
    their end (flowlet[f, 15] on a 14-wide table, a segfault about 1 run in 5). Interpreted
    (NUMBA_DISABLE_JIT=1: numpy bounds-checks every index) and compiled runs complete and agree."""
    import json

    from test_sim_support import run_python

    f = tmp_path / "detour.yaml"
    f.write_text(_DETOUR)
    outs = [
        json.loads(run_python(["-m", "aifabric", "simulate", str(f), "--json"], disable_jit))
        for disable_jit in (True, False)
    ]
    assert outs[0]["summary"]["completed_flows"] == 240
    assert outs[0]["summary"] == outs[1]["summary"]
    assert outs[0]["flows"] == outs[1]["flows"]
