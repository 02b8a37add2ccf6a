"""ECMP collision statistics and adaptive routing on a non-blocking leaf-spine."""

from __future__ import annotations

import numpy as np
import pytest

from aifabric.sim import simulate
from test_sim_support import scenario

LEAVES = SPINES = HPL = 8
TOPO = {
    "kind": "leaf-spine",
    "leaves": LEAVES,
    "spines": SPINES,
    "hosts_per_leaf": HPL,
    "link_rate": "100Gbps",
    "link_delay": "1us",
}
PAYLOAD_GBPS = 100 * 4000 / 4064


def _mean_cross_leaf_throughput(routing: str, seeds=(1, 2, 3), **fabric) -> float:
    out = []
    for seed in seeds:
        r = simulate(
            scenario(
                TOPO,
                {"kind": "permutation", "flow_size": "2MB"},
                fabric={"routing": routing, **fabric},
                seed=seed,
            )
        )
        f = r.flows
        assert r.summary["drops"] == 0 and r.summary["completed_flows"] == len(f)
        cross = f[(f["src"] // HPL) != (f["dst"] // HPL)]
        out.append(cross["throughput_gbps"].mean())
    return float(np.mean(out))


def _balls_into_bins() -> float:
    """Each cross-leaf flow shares its uplink with Bin(7, 1/8) others and its spine downlink with
    Bin(7, 1/8) others; its rate is the payload rate over the larger count."""
    rng = np.random.default_rng(0)
    up = 1 + rng.binomial(HPL - 1, 1 / SPINES, 400_000)
    down = 1 + rng.binomial(HPL - 1, 1 / SPINES, 400_000)
    return float((1 / np.maximum(up, down)).mean() * PAYLOAD_GBPS)


@pytest.mark.validation
def test_ecmp_permutation_matches_balls_into_bins():
    """Leaf-spine permutation under ECMP: mean flow throughput within 10 % of the balls-into-bins
    expectation (about half the line rate for 8 flows on 8 uplinks)."""
    assert _mean_cross_leaf_throughput("ecmp") == pytest.approx(_balls_into_bins(), rel=0.10)


@pytest.mark.validation
def test_adaptive_per_packet_beats_ecmp():
    """Per-packet adaptive routing (least-occupied uplink, ties sprayed round robin per flow) lifts
    the mean throughput far above ECMP, to ≥ 90 % of the ideal: the payload line rate
    100 Gb/s × 4000 / (4000 + 64) of a non-blocking permutation (the rest is mostly the flow's
    base round trip inside its FCT)."""
    ada = _mean_cross_leaf_throughput("adaptive", adaptive={"granularity": "packet"})
    ecmp = _mean_cross_leaf_throughput("ecmp")
    assert ada >= 0.9 * PAYLOAD_GBPS
    assert ada >= 1.4 * ecmp


def test_flowlet_adaptive_ties_follow_ecmp():
    """On an idle fabric flowlet routing breaks ties by the ECMP hash, so flows that start together
    spread over the uplinks instead of all taking the first one."""
    r = simulate(
        scenario(
            TOPO,
            {"kind": "permutation", "flow_size": "40KB"},
            fabric={"routing": "adaptive", "adaptive": {"granularity": "flowlet"}},
        )
    )
    up = r.ports[
        (r.ports["node"] >= LEAVES * HPL)
        & (r.ports["node"] < LEAVES * HPL + LEAVES)
        & (r.ports["peer"] >= LEAVES * HPL + LEAVES)
    ]
    assert (up["tx_packets"] > 0).sum() > LEAVES * 2
