"""Topology builders, counts against closed forms, file import/export, routing tables."""

from pathlib import Path

import numpy as np
import pytest

from aifabric.errors import InputError
from aifabric.topology import (
    dumbbell,
    fat_tree,
    leaf_spine,
    rail_optimized,
    rail_sizing,
    read_hpcc_topology,
    read_ibnetdiscover,
    ring,
    shortest_path_next_hops,
    star,
    up_down_next_hops,
    write_hpcc_topology,
)
from aifabric.topology.routing import ib_linear_forwarding, path_of
from closed_form import rail_closed_form

G = 10**9
FIX = Path(__file__).parent / "fixtures" / "real" / "nvidia-topograph"
PEER = Path(__file__).parent.parent / "scenarios" / "peer"


def test_fat_tree_k8_counts():
    """k=8 fat-tree: 128 hosts, 32 ToR, 32 agg, 16 core, 384 links, 6 hops host to far host."""
    t = fat_tree(8, 100 * G, 10**6)
    assert t.num_hosts == 128
    assert t.switches_per_tier() == {"tor": 32, "agg": 32, "core": 16}
    assert t.num_links == 384
    assert t.max_host_hops() == 6
    assert t.hop_count(0, 1) == 2  # same ToR


def test_fat_tree_matches_ns3_peer_file():
    """Our k=8 fat-tree serialises to exactly the ns-3 HPCC peer topology file."""
    ours = write_hpcc_topology(fat_tree(8, 100 * G, 10**6)).split()
    assert ours == (PEER / "fattree_k8.txt").read_text().split()


def test_hpcc_roundtrip(tmp_path):
    """Export then import keeps nodes, links, rates and delays."""
    t = leaf_spine(4, 2, 3, 400 * G, 500_000)
    p = tmp_path / "t.txt"
    write_hpcc_topology(t, p)
    r = read_hpcc_topology(p)
    assert r.num_nodes == t.num_nodes and r.num_links == t.num_links
    assert set(zip(r.link_a.tolist(), r.link_b.tolist(), strict=True)) == set(
        zip(t.link_a.tolist(), t.link_b.tolist(), strict=True)
    )
    assert (r.link_rate_bps == 400 * G).all() and (r.link_delay_ps == 500_000).all()
    assert r.switches_per_tier() == {"leaf": 4, "spine": 2}


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("", "line 1"),
        ("3 1 1\n2\n0 2 100Gbps\n", "line 3"),
        ("3 1 1\n2\n0 2 fastGbps 1us 0\n", "line 3"),
        ("3 1 2\n2\n0 2 100Gbps 1us 0\n", "line 1"),
        ("3 1 1\n7\n0 2 100Gbps 1us 0\n", "line 2"),
        ("x y z\n", "line 1"),
    ],
)
def test_hpcc_bad_files_name_file_and_line(tmp_path, text, field):
    """A malformed topology.txt raises one InputError naming the file and the line."""
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        read_hpcc_topology(p)
    assert str(p) in str(exc.value) and field in str(exc.value)


def test_unreadable_topology_file():
    """A missing file is an InputError, not an OSError traceback."""
    with pytest.raises(InputError, match="cannot read"):
        read_hpcc_topology("/nonexistent/topology.txt")


def test_ibnetdiscover_ndr_example_counts():
    """The real Quantum-2 dump: 582 CAs, 40 switches (31 leaves, 9 spines), 1114 links = 2228 ends."""
    t = read_ibnetdiscover(FIX / "ibnetdiscover-ndr-example.out.txt")
    assert t.num_hosts == 582
    assert t.num_switches == 40
    assert t.switches_per_tier() == {"leaf": 31, "spine": 9}
    assert t.num_links == 1114
    assert (t.link_rate_bps == 400 * G).all()  # 4xNDR
    assert len(t.meta["aggregation_nodes"]) == 40  # one SHARP aggregation node per switch
    spine_names = [t.node_names[i] for i in t.switches if t.node_tier[i] == 2]
    assert all("IBSPINE" in n for n in spine_names)


def test_ibnetdiscover_isolated_ca():
    """The lone-CA dump loads as one host and no links."""
    t = read_ibnetdiscover(FIX / "ibnetdiscover-isolated-ca.out.txt")
    assert (t.num_hosts, t.num_switches, t.num_links) == (1, 0, 0)


def test_ibnetdiscover_garbage(tmp_path):
    """A file that is not ibnetdiscover output gives a clear InputError."""
    p = tmp_path / "x.out"
    p.write_text("hello\nworld\n")
    with pytest.raises(InputError, match="no Switch/Ca"):
        read_ibnetdiscover(p)


# ---- rail-optimised closed forms ---------------------------------------------------------------
@pytest.mark.parametrize("gpus", [8, 64, 1024, 4096, 32768])
def test_rail_sizing_non_blocking_rail_closed_form(gpus):
    """Switch counts equal the closed form for non-blocking rail-optimised fabrics on 64-port switches."""
    assert rail_sizing(gpus, 8, 64).switches == rail_closed_form(gpus)


@pytest.mark.parametrize(
    ("gpus", "expected"),
    [
        # 2:1 on 64 ports: leaf 42 down / 21 up. 1024 GPUs = 128 nodes → 4 SUs (42,42,42,2 nodes)
        # → 32 leaves; uplinks 3·8·21 + 8·1 = 512 → 8 spines.
        (1024, {"leaf": 32, "spine": 8}),
        # 4096 GPUs = 512 nodes → 13 SUs (12 full + 8 nodes) → 104 leaves; pods of 4 SUs: 3 full pods
        # with 32·21 = 672 uplinks → 21 spines each, 1 pod with 8·4 = 32 → 1 spine: 64; core groups:
        # positions 0..20 carry 3·32 (+32 at position 0) links → 2 cores each (+0) = 42.
        (4096, {"leaf": 104, "spine": 64, "core": 42}),
    ],
)
def test_rail_sizing_two_to_one(gpus, expected):
    """2:1 leaf oversubscription: fewer spines and cores, per the documented port split."""
    d = rail_sizing(gpus, 8, 64, oversubscription=2)
    assert (d.leaf_down, d.leaf_up) == (42, 21)
    assert d.switches == expected


def test_two_to_one_halves_uplinks_for_full_units():
    """With full scalable units, 2:1 needs half the leaf-spine links of 1:1 (rounded up per leaf)."""
    full = rail_sizing(2016, 8, 64, oversubscription=1)  # 252 nodes
    over = rail_sizing(2688, 8, 64, oversubscription=2)  # 336 nodes = 8 SUs of 42
    assert over.links["leaf-spine"] * 2 == over.links["host-leaf"]
    assert full.links["leaf-spine"] == full.links["host-leaf"]


@pytest.mark.parametrize("gpus", [1024, 4096])
def test_rail_builder_agrees_with_sizing(gpus):
    """The built graph has the sized switch and link counts and respects every switch's radix."""
    for r in (1, 2):
        t = rail_optimized(gpus, 400 * G, oversubscription=r)
        d = t.meta["design"]
        assert t.switches_per_tier() == d.switches
        assert t.links_per_class() == d.links
        assert t.degree()[t.switches].max() <= 64


def test_rail_leaves_hold_one_rail():
    """Every leaf serves exactly one rail: GPU g of each server attaches to a rail-g leaf."""
    t = rail_optimized(1024, 400 * G)
    host_links = np.flatnonzero(t.node_tier[t.link_a] == 0)
    for lk in host_links[:200]:
        gpu, leaf = int(t.link_a[lk]), int(t.link_b[lk])
        assert t.node_rail[gpu] == t.node_rail[leaf]


def test_rail_too_big_for_radix_names_limit():
    """100,000 GPUs exceed a 64-port 3-tier fabric: InputError giving the limit."""
    with pytest.raises(InputError, match="65536"):
        rail_sizing(100_000, 8, 64)


def test_rail_gpus_multiple_of_node():
    """GPU counts above one node must fill whole nodes."""
    with pytest.raises(InputError, match="multiple"):
        rail_sizing(1030, 8, 64)


def test_rail_planes_multiply_switches():
    """Two planes double the switches and host links."""
    one, two = rail_sizing(1024, 8, 64), rail_sizing(1024, 8, 64, planes=2)
    assert two.total_switches == 2 * one.total_switches
    t = rail_optimized(1024, 200 * G, planes=2)
    assert t.switches_per_tier() == two.switches
    assert np.bincount(t.link_a[t.node_tier[t.link_a] == 0]).max() == 2


def test_build_100k_is_fast():
    """A 100k-GPU, 128-radix fabric builds (numpy-vectorised) with the sized counts."""
    t = rail_optimized(100_000, 400 * G, radix=128)
    assert t.num_hosts == 100_000
    assert t.switches_per_tier() == rail_sizing(100_000, 8, 128).switches


# ---- other builders ---------------------------------------------------------------------------
def test_odd_fat_tree_k():
    """Odd k is rejected with the allowed values."""
    with pytest.raises(InputError, match="even"):
        fat_tree(7, 100 * G, 0)


def test_small_builders():
    """Star, dumbbell, ring and leaf-spine have the expected shapes."""
    assert star(4, G, 0).switches_per_tier() == {"switch": 1}
    d = dumbbell(3, 2, G, 0, bottleneck_rate_bps=G // 2)
    assert d.num_links == 6 and d.bisection_bandwidth_bps() == G // 2
    r = ring(4, 1, G, 0)
    assert r.num_links == 8 and r.hop_count(0, 2) == 4
    ls = leaf_spine(4, 2, 8, 100 * G, 0)
    assert ls.meta["oversubscription"] == 4.0 and ls.num_links == 32 + 8


def test_bisection_closed_form_matches_max_flow():
    """The fat-tree closed-form bisection equals a max-flow computation on the graph."""
    t = fat_tree(4, 10 * G, 0)
    from dataclasses import replace

    generic = replace(t, meta={})
    assert generic.bisection_bandwidth_bps() == pytest.approx(t.bisection_bandwidth_bps())


# ---- routing ------------------------------------------------------------------------------------
def test_fat_tree_ecmp_path_counts():
    """k=8: (k/2)² = 16 equal-cost shortest paths between hosts in different pods; ToR has 4 up choices."""
    t = fat_tree(8, 100 * G, 10**6)
    nh = shortest_path_next_hops(t)
    tor0 = 128
    assert len(nh.get(tor0, 127)) == 4
    assert len(nh.get(tor0, 1)) == 1  # down to the local host
    assert len(nh.get(0, 127)) == 1  # a host has one uplink
    assert len(path_of(t, nh, 0, 127)) == 6


def test_up_down_equals_shortest_path_on_fat_tree():
    """In an intact fat-tree, valley-free routing and min-hop routing coincide."""
    t = fat_tree(4, G, 0)
    a, b = shortest_path_next_hops(t), up_down_next_hops(t)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.links, b.links)


def test_hosts_never_transit():
    """No route passes through a host other than the destination."""
    t = leaf_spine(2, 1, 2, G, 0)
    nh = shortest_path_next_hops(t)
    for u in t.switches:
        for d in t.hosts:
            for lk in nh.get(int(u), int(d)):
                peer = t.link_a[lk] if t.link_b[lk] == u else t.link_b[lk]
                assert t.node_tier[peer] != 0 or peer == d


def test_ib_lft_is_single_port_and_spread():
    """Static IB forwarding: one port per destination, destinations spread over ToR uplinks."""
    t = fat_tree(4, G, 0)
    lft = ib_linear_forwarding(t)
    tor = 16
    ups = {int(lft[tor, d]) for d in range(4, 16)}
    assert len(ups) == 2


def test_ib_static_spreads_one_rail_over_all_uplinks():
    """On a rail-optimised fabric every GPU of one rail has the same id mod 8; IB static routing
    must still spread a leaf's destinations over all its uplinks (OpenSM orders by leaf and port)."""
    from aifabric.topology.routing import ib_destination_rank

    t = rail_optimized(1024, 400 * G)
    rank = ib_destination_rank(t)
    leaf_of = {
        int(t.link_a[i]): int(t.link_b[i]) for i in range(t.num_links) if t.node_tier[t.link_a[i]] == 0
    }
    one_leaf = [h for h, lf in leaf_of.items() if lf == leaf_of[0]]
    assert len(one_leaf) == 32
    assert len({int(rank[h]) % 32 for h in one_leaf}) == 32


def test_ib_static_uses_every_core_of_a_fat_tree():
    """d-mod-k takes one digit of the destination per tier, so a k=8 fat-tree's 128 destinations
    reach all 16 cores from one ToR (the same modulo at every tier would use only 4)."""
    t = fat_tree(8, G, 0)
    lft = ib_linear_forwarding(t)
    nh = shortest_path_next_hops(t)
    tor0 = 128
    cores = set()
    for d in range(4, 128):  # other racks
        link = int(lft[tor0, d])
        agg = int(t.link_b[link])
        cl = int(lft[agg, d])
        if t.node_tier[t.link_b[cl]] == 3:
            cores.add(int(t.link_b[cl]))
    assert len(cores) == 16
    assert nh is not None
