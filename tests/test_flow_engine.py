"""Flow engine: latency terms, sharing over time, routing parity with the packet engine's tables,
ECMP collision statistics, determinism, and the simulate --json shape."""

import numpy as np
import pytest

from aifabric.flow import PathModel, simulate_flows
from aifabric.flow.hashing import ecmp_hashes, flow_sport, switch_salts
from aifabric.topology import (
    ecmp_hash,
    fat_tree,
    ib_linear_forwarding,
    leaf_spine,
    path_of,
    rail_optimized,
    shortest_path_next_hops,
    switch_salt,
)

G100 = 100 * 10**9


def test_lone_flow_fct_is_closed_form():
    """A flow alone: fct = Σ delay + serialise the first packet on each hop + the rest at the
    bottleneck; slowdown exactly 1. Star: 2 hops of 1 µs, 100 Gb/s, 1 MB, 4000 B MTU + 64 B."""
    from aifabric.topology import star

    topo = star(2, G100, 10**6)
    df = simulate_flows(
        topo, {"src": [0], "dst": [1], "size_bytes": [10**6]}, header_bytes=64, mtu_bytes=4000
    )
    wire = 10**6 + 250 * 64
    first = 4064
    expect_us = 2.0 + 2 * first * 8 / G100 * 1e6 + (wire - first) * 8 / G100 * 1e6
    assert df["fct_us"].iloc[0] == pytest.approx(expect_us, rel=1e-9)
    assert df["slowdown"].iloc[0] == pytest.approx(1.0)


def test_shared_bottleneck_small_flow_leaves_early():
    """Two flows into one receiver (incast 2:1): the 1 MB flow drains at half rate and finishes at
    2·1 MB/B; the 2 MB flow then speeds up to full rate and ends at 3 MB/B (rates recomputed at
    the completion)."""
    from aifabric.topology import star

    topo = star(3, G100, 0)
    df = simulate_flows(
        topo, {"src": [0, 1], "dst": [2, 2], "size_bytes": [10**6, 2 * 10**6]}, header_bytes=0
    )
    b = G100 / 8
    assert df["fct_us"].iloc[0] == pytest.approx(2 * 1e6 / b * 1e6, rel=1e-3)
    assert df["fct_us"].iloc[1] == pytest.approx(3 * 1e6 / b * 1e6, rel=1e-3)


def test_late_arrival_shares_from_its_start():
    """A flow starting when the first is half done: they share for a while, the first ends at
    1.5 × its alone time (half alone + the other half at half rate)."""
    from aifabric.topology import star

    topo = star(3, G100, 0)
    t_alone = 1e6 * 8 / G100 * 1e6
    df = simulate_flows(
        topo,
        {"src": [0, 1], "dst": [2, 2], "size_bytes": [10**6, 10**6], "start_us": [0.0, t_alone / 2]},
        header_bytes=0,
    )
    assert df["fct_us"].iloc[0] == pytest.approx(1.5 * t_alone, rel=1e-3)


def test_vectorised_hash_is_bit_identical():
    """The numpy ECMP hash equals the scalar routing.ecmp_hash / switch_salt used by the packet engine."""
    rng = np.random.default_rng(0)
    s, d = rng.integers(0, 2**31, 50), rng.integers(0, 2**31, 50)
    sp, nodes = rng.integers(0, 65536, 50), rng.integers(0, 10**5, 50)
    v = ecmp_hashes(s, d, sp, 4791, 17, switch_salts(7, nodes))
    for i in range(50):
        assert int(v[i]) == ecmp_hash(
            int(s[i]), int(d[i]), int(sp[i]), 4791, 17, switch_salt(7, int(nodes[i]))
        )


@pytest.mark.parametrize("routing", ["ecmp", "static"])
@pytest.mark.parametrize("build", [lambda: fat_tree(4, G100, 10**6), lambda: rail_optimized(512, 4 * G100)])
def test_paths_match_next_hop_tables(routing, build):
    """Per-flow paths equal those the full next-hop table gives with the same choice rule (ECMP:
    options[hash % k] with the switch salt; static: IB linear forwarding, destination mod k)."""
    topo = build()
    nh = shortest_path_next_hops(topo)
    lft = ib_linear_forwarding(topo, nh) if routing == "static" else None
    rng = np.random.default_rng(1)
    src, dst = rng.choice(topo.hosts, 200), rng.choice(topo.hosts, 200)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    sport = flow_sport(np.arange(len(src)))
    paths = PathModel(topo).route(src, dst, routing=routing, seed=3, sport=sport)
    for i in range(len(src)):

        def choose(node, opts, i=i):
            if routing == "ecmp":
                h = ecmp_hash(int(src[i]), int(dst[i]), int(sport[i]), 4791, 17, switch_salt(3, node))
                return opts[h % len(opts)]
            return lft[node, nh.host_index[dst[i]]]

        assert [x // 2 for x in paths[i] if x >= 0] == path_of(
            topo, nh, int(src[i]), int(dst[i]), choose=choose
        )


def _leaf_to_leaf(k=16):
    topo = leaf_spine(2, k, k, G100, 10**6)
    hosts = topo.hosts
    return topo, hosts[:k], hosts[k : 2 * k]


def test_ecmp_collisions_follow_balls_into_bins():
    """k flows from leaf 0 to leaf 1 over k spines under ECMP are k balls in k bins: the expected
    fraction of idle uplinks is (1 − 1/k)^k (0.356 for k = 16). Averaged over 100 seeds. Each flow's
    flow-level rate is the link rate over the number of flows on its spine."""
    k = 16
    topo, src, dst = _leaf_to_leaf(k)
    pm = PathModel(topo)
    empties = []
    for seed in range(100):
        p = pm.route(src, rng_perm(dst, seed), routing="ecmp", seed=seed)
        up = p[:, 1] // 2  # leaf → spine link
        empties.append(1 - len(np.unique(up)) / k)
    assert np.mean(empties) == pytest.approx((1 - 1 / k) ** k, abs=0.03)
    df = simulate_flows(
        topo, {"src": src, "dst": dst, "size_bytes": np.full(k, 10**7)}, seed=5, header_bytes=0
    )
    p = pm.route(src, dst, routing="ecmp", seed=5)
    up = p[:, 1] // 2
    count = np.array([np.sum(up == u) for u in up])
    drain = 10**7 * 8 / G100 * 1e6
    # the most-collided flows take count × longer; flows finishing early free nothing (same spine)
    worst = df["fct_us"].to_numpy()[count == count.max()]
    assert worst == pytest.approx(count.max() * drain, rel=0.01)


def rng_perm(dst, seed):
    return np.random.default_rng(seed).permutation(dst)


def test_adaptive_and_static_avoid_collisions_on_leaf_spine():
    """Adaptive spreading (and IB's destination-mod-k over consecutive destinations) put the k
    leaf-to-leaf flows on k distinct spines: every slowdown is ~1."""
    topo, src, dst = _leaf_to_leaf(16)
    for routing in ("adaptive", "static"):
        df = simulate_flows(topo, {"src": src, "dst": dst, "size_bytes": np.full(16, 10**7)}, routing=routing)
        assert df["slowdown"].max() == pytest.approx(1.0, rel=1e-6), routing


def test_same_seed_same_output_and_seed_matters():
    """Same seed → identical table; another seed → another ECMP draw (different FCTs)."""
    topo, src, dst = _leaf_to_leaf(16)
    fl = {"src": src, "dst": dst, "size_bytes": np.full(16, 10**6)}
    a = simulate_flows(topo, fl, seed=1)
    b = simulate_flows(topo, fl, seed=1)
    c = simulate_flows(topo, fl, seed=2)
    assert a.equals(b)
    assert not np.allclose(a["fct_us"], c["fct_us"])


def test_flow_scenario_json_shape():
    """simulate_flow_scenario returns interface.md's simulate --json keys; queue fields are 0."""
    from aifabric.flow import simulate_flow_scenario
    from aifabric.scenario import scenario_from_dict
    from test_sim_support import LS

    sc = scenario_from_dict(
        {
            "name": "perm16",
            "topology": LS,
            "workload": {"kind": "permutation", "flow_size": "1MB"},
            "sim": {"mode": "flow"},
        }
    )
    out = simulate_flow_scenario(sc)
    keys = {
        "flows",
        "completed_flows",
        "fct_p50_us",
        "fct_p99_us",
        "fct_max_us",
        "slowdown_p50",
        "slowdown_p99",
        "goodput_gbps",
        "jain_fairness",
        "drops",
        "pause_frames",
        "pause_time_us",
        "ecn_marks",
        "max_queue_bytes",
        "deadlock",
    }
    assert keys <= set(out["summary"])
    assert out["summary"]["flows"] == out["summary"]["completed_flows"] == 16
    assert out["summary"]["drops"] == 0 and out["summary"]["deadlock"] is False
    assert {"events", "packets", "wall_s"} <= set(out["engine"]) and out["engine"]["packets"] == 0
    assert set(out["flows"][0]) == {"id", "src", "dst", "size_bytes", "start_us", "fct_us", "ideal_fct_us"}


def test_collective_scenario_runs_in_flow_mode():
    """A collective workload in flow mode yields its network flows, step after step."""
    from aifabric.flow import simulate_flow_scenario
    from aifabric.scenario import scenario_from_dict

    sc = scenario_from_dict(
        {
            "name": "ar",
            "topology": {
                "kind": "leaf-spine",
                "leaves": 2,
                "spines": 2,
                "hosts_per_leaf": 4,
                "link_rate": "100Gbps",
                "link_delay": "1us",
            },
            "workload": {"kind": "collective", "op": "all-reduce", "size": "8MB"},
        }
    )
    out = simulate_flow_scenario(sc)
    assert out["summary"]["flows"] == 8 * 2 * 7  # 8 ranks × 2(n−1) ring steps
    assert out["collective"]["network_bytes_per_rank"] == pytest.approx(2 * 7 / 8 * 8e6, rel=1e-3)


def test_flow_mode_rejects_packet_only_fabric_features(tmp_path):
    """PFC overrides, PAUSE storms and link failures exist only in the packet engine: flow mode
    says so (one line, exit 2) instead of silently ignoring them."""
    from typer.testing import CliRunner

    from aifabric.cli import app

    base = (
        "name: fm\ntopology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2, link_rate: 100Gbps, "
        "link_delay: 1us}\nworkload: {kind: permutation, flow_size: 1MB}\nfabric:\n"
    )
    cases = {
        "pause_storms": "  pause_storms: [{node: spine1, duration: 2us}]\n",
        "pfc_overrides": "  pfc_overrides: [{switches: [leaf0], xoff: 30KB}]\n",
        "failures": "  failures: [{link: leaf0-spine0, at: 10us}]\n",
    }
    for field, text in cases.items():
        f = tmp_path / f"{field}.yaml"
        f.write_text(base + text)
        r = CliRunner().invoke(app, ["simulate", str(f), "--mode", "flow"])
        assert r.exit_code == 2, (field, r.output)
        assert f"fabric.{field}" in r.output and "Traceback" not in r.output


def test_flow_mode_one_server_collective(tmp_path):
    """A collective inside one server has no network flows: flow mode still answers (NVLink time),
    exit 0, instead of failing on the empty flows table."""
    import json

    from typer.testing import CliRunner

    from aifabric.cli import app

    f = tmp_path / "one.yaml"
    f.write_text(
        "name: one\ntopology: {kind: rail-optimized, gpus: 8, link_rate: 400Gbps}\n"
        "workload: {kind: collective, op: all-reduce, size: 64MB}\n"
    )
    r = CliRunner().invoke(app, ["simulate", str(f), "--mode", "flow", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["summary"]["flows"] == 0 and out["collective"]["time_s"] > 0


def test_flow_mode_prints_a_table_and_json_only_when_asked(tmp_path):
    """Without ``--json`` the flow model answers in the same table form as the packet engine (the
    collective's time and bus bandwidth included), not a JSON dump; ``--json`` stays parseable."""
    import json

    from typer.testing import CliRunner

    from aifabric.cli import app

    f = tmp_path / "one.yaml"
    f.write_text(
        "name: one\ntopology: {kind: rail-optimized, gpus: 8, link_rate: 400Gbps}\n"
        "workload: {kind: collective, op: all-reduce, size: 64MB}\n"
    )
    r = CliRunner().invoke(app, ["simulate", str(f), "--mode", "flow"])
    assert r.exit_code == 0, r.output
    assert "flow-level model" in r.stdout and "algbw / busbw" in r.stdout
    assert not r.stdout.lstrip().startswith("{")
    j = CliRunner().invoke(app, ["simulate", str(f), "--mode", "flow", "--json"])
    assert json.loads(j.stdout)["engine"]["mode"] == "flow"
