"""Collectives: α-β limits (link-rate bound at large sizes, latency bound at small), bytes on the
wire, hierarchical NVLink + rail decomposition, SHARP, NVLS / NVLSTree, the nccl-tests-shaped
table, 16k-GPU estimates."""

import math
import time
from pathlib import Path

import numpy as np
import pytest

from aifabric.errors import InputError
from aifabric.hardware.catalog import default_value
from aifabric.topology import leaf_spine, rail_optimized
from aifabric.workload.collectives import (
    NIC_EFFICIENCY,
    OPS,
    NvlsDomain,
    busbw_factor,
    collective_flows,
    default_sizes,
    format_nccl_table,
    nccl_constants,
    nccl_sweep,
    nvlink_busbw_gbps,
    nvls_allreduce_busbw,
    rank_layout,
    run_collective,
)

R400 = 400 * 10**9
GIB = 2**30


@pytest.fixture(scope="module")
def flat16():
    """16 single-NIC ranks on a non-blocking 4 × 4 leaf-spine at 400 Gb/s."""
    return leaf_spine(4, 4, 4, R400, 10**6)


def payload_rate_gbps(header=64, mtu=4000):
    return R400 / 8 / 1e9 * mtu / (mtu + header)


@pytest.mark.parametrize("op", OPS)
def test_busbw_reaches_link_rate_minus_headers_at_1gib(flat16, op):
    """At 1 GiB every collective's busbw is the NIC's achieved rate, 0.94 of the line rate minus
    header overhead (49.2 × 0.94 = 46.3 GB/s; the sourced NIC efficiency, nccl-tests 46–48 GB/s per
    400G NIC), within 2 % — the α terms are < 2 %
    of the time; with an ideal NIC (``nic_efficiency=1``) it is the link rate minus header overhead
    (50 GB/s × 4000/4064 = 49.2 GB/s). (All-to-all with adaptive routing: ECMP collisions would
    slow it, tested separately.)"""
    routing = "adaptive" if op == "all-to-all" else "ecmp"
    for engine in ("analytic", "flow"):
        r = run_collective(op, GIB, flat16, engine=engine, routing=routing)
        assert r.busbw_gbps == pytest.approx(payload_rate_gbps() * NIC_EFFICIENCY, rel=0.02), (op, engine)
        assert r.protocol == "simple" and r.nic_efficiency == NIC_EFFICIENCY
        ideal = run_collective(op, GIB, flat16, engine=engine, routing=routing, nic_efficiency=1.0)
        assert ideal.busbw_gbps == pytest.approx(payload_rate_gbps(), rel=0.02), (op, engine)


def test_without_nccl_latency_busbw_is_exactly_the_payload_rate(flat16):
    """With NCCL's software latencies off and a near-zero-latency fabric the ring all-reduce busbw
    equals the payload rate to 0.1 %."""
    r = run_collective(
        "all-reduce", GIB, flat16, engine="analytic", nccl_latency=False, protocol="simple", nic_efficiency=1
    )
    assert r.busbw_gbps == pytest.approx(payload_rate_gbps(), rel=1e-3)
    capped = run_collective(
        "all-reduce", GIB, flat16, engine="analytic", nccl_latency=False, protocol="simple"
    )
    assert capped.busbw_gbps == pytest.approx(payload_rate_gbps() * NIC_EFFICIENCY, rel=1e-3)


def test_small_sizes_are_latency_bound_by_nccl_constants(flat16):
    """8 B ring all-reduce on 16 NICs costs NCCL's LL model latency: base 6.6 µs + 2(n−1) = 30
    network steps × 2.7 µs = 87.6 µs (hardware-facts §D); busbw is ~0. The flow engine charges
    max(2.7 µs, the physical path latency) per step: here 4 hops × 1 µs of cable, so ≈ 4 µs."""
    c = nccl_constants()
    base, alpha = c["base"]["ring"]["ll"], c["net"]["ring"]["ll"]
    r = run_collective("all-reduce", 8, flat16, engine="analytic")
    assert r.protocol == "ll"
    assert r.time_s * 1e6 == pytest.approx(base + 30 * alpha, rel=0.01)
    assert r.busbw_gbps < 0.01
    f = run_collective("all-reduce", 8, flat16, engine="flow")
    assert f.time_s * 1e6 == pytest.approx(base + 30 * max(alpha, 4.0), rel=0.01)


def test_busbw_grows_monotonically_from_latency_to_bandwidth_bound(flat16):
    """Across the 8 B … 1 GiB ladder busbw rises (never falls by more than the protocol switch
    noise) and ends near the link rate."""
    df = nccl_sweep("all-reduce", default_sizes(8, GIB), flat16, engine="analytic")
    bw = df["busbw_gbps"].to_numpy()
    assert np.all(np.diff(bw) > -0.05 * bw[1:])
    assert bw[0] < 0.01 and bw[-1] == pytest.approx(payload_rate_gbps() * NIC_EFFICIENCY, rel=0.02)


@pytest.mark.parametrize(
    "op, per_rank",
    [
        ("all-reduce", 2 * 15 / 16),
        ("reduce-scatter", 15 / 16),
        ("all-gather", 15 / 16),
        ("all-to-all", 15 / 16),
        ("broadcast", 1.0),
    ],
)
def test_bytes_on_the_wire_per_rank(flat16, op, per_rank):
    """Payload each rank's NIC sends: ring all-reduce 2(n−1)/n·S, reduce-scatter / all-gather /
    all-to-all (n−1)/n·S, broadcast S (chain: every rank but the last forwards S)."""
    r = run_collective(op, 16 * 2**20, flat16, engine="analytic")
    assert r.network_bytes_per_rank == pytest.approx(per_rank * 16 * 2**20, rel=1e-6)
    assert r.wire_bytes_total >= r.network_bytes_total


def test_busbw_factors():
    """nccl-tests factors (§G.1): all-reduce 2(n−1)/n, RS / AG / A2A (n−1)/n, broadcast 1."""
    assert busbw_factor("all-reduce", 8) == pytest.approx(1.75)
    assert busbw_factor("reduce-scatter", 8) == busbw_factor("all-gather", 8) == busbw_factor("all-to-all", 8)
    assert busbw_factor("broadcast", 8) == 1.0
    with pytest.raises(InputError):
        busbw_factor("gossip", 8)


def test_flat_ring_all_reduce_bytes_per_nic_and_nvlink():
    """NCCL's ring on 4 servers × 8 GPUs is one flat ring of n = 32 ranks per channel, channels on
    their rail: each NIC sends 2(n−1)/n · S/G = 2·31/32 · S/8 over the network (not the 2(N−1)/N
    of a hierarchical ring), each GPU forwards 7 of 8 channel groups over NVLink, 2(n−1)·7/8 ·
    S/(n·8)·8; network flows stay on their rail; NCCL's tuner latency: 2(N−1) = 6 network steps."""
    topo = rail_optimized(32, R400)
    s = 64 * 2**20
    r = run_collective("all-reduce", s, topo, engine="analytic")
    assert (r.servers, r.gpus_per_node) == (4, 8)
    assert r.network_bytes_per_rank == pytest.approx(2 * 31 / 32 * s / 8)
    assert r.nvlink_bytes_per_gpu == pytest.approx(2 * 31 * 7 * s / (32 * 8))
    steps = collective_flows("all-reduce", s, topo)
    assert sum(st.latency_count for st in steps if st.domain == "network") == 6
    assert sum(st.latency_count for st in steps if st.domain == "nvlink") == 62 - 6
    for st in collective_flows("all-reduce", s, topo):
        if st.domain == "network":
            fl = st.flows
            assert np.all(topo.node_rail[fl[:, 0]] == topo.node_rail[fl[:, 1]])


def test_single_server_all_reduce_is_nvlink_bound():
    """8 H100s in one server: ring all-reduce busbw → NCCL's NVLink bandwidth, 18 × 20.6 =
    370.8 GB/s, matching the ~370 GB/s measured (hardware-facts §G.3)."""
    topo = rail_optimized(8, R400)
    r = run_collective("all-reduce", 8 * GIB, topo, engine="flow")
    assert r.network_bytes_total == 0
    assert r.busbw_gbps == pytest.approx(370.8, rel=0.02)


def test_multi_server_ring_busbw_is_rail_bound():
    """32 servers × 8 GPUs at 400G per GPU: NCCL's flat ring's busbw is bounded by G × the NIC's
    achieved rate (8 × 49.2 × 0.94 = 370 GB/s, 64 B headers per 4000; hardware-facts §G.3 'derived ≈ 370–385') and by
    NVLink (each GPU forwards 7 of 8 channel groups: 370.8 × 8/7); it comes out within 5 % of the
    smaller bound and never above G × the NIC line rate."""
    topo = rail_optimized(256, R400)
    r = run_collective("all-reduce", 4 * GIB, topo, engine="flow", routing="adaptive")
    g = 8
    net_bound = g * payload_rate_gbps() * NIC_EFFICIENCY
    nvl_bound = 370.8 * g / (g - 1)
    bw_only = 4 * GIB * busbw_factor("all-reduce", 256) / max(r.network_time_s, r.nvlink_time_s) / 1e9
    assert bw_only == pytest.approx(min(net_bound, nvl_bound), rel=0.02)
    # NCCL's ring latency grows with n: 2(N−1) network + 2(n−N) NVLink steps ≈ 2.4 ms of 25 ms here
    assert 0.85 * net_bound < r.busbw_gbps < net_bound <= g * 50


def test_flow_and_analytic_agree_on_nonblocking_fabric(flat16):
    """On a non-blocking leaf-spine with adaptive spreading the flow engine reproduces α-β to 1 %."""
    a = run_collective("all-reduce", 256 * 2**20, flat16, engine="analytic")
    f = run_collective("all-reduce", 256 * 2**20, flat16, engine="flow", routing="adaptive")
    assert f.time_s == pytest.approx(a.time_s, rel=0.01)


def test_ecmp_collisions_slow_all_to_all_but_adaptive_does_not():
    """All-to-all over a 2:1-free leaf-spine: ECMP hash collisions make it slower than adaptive
    spreading, which matches the NIC-bound α-β time."""
    topo = leaf_spine(8, 8, 8, R400, 10**6)
    a = run_collective("all-to-all", GIB, topo, engine="analytic")
    ad = run_collective("all-to-all", GIB, topo, engine="flow", routing="adaptive")
    ec = run_collective("all-to-all", GIB, topo, engine="flow", routing="ecmp")
    assert ad.time_s == pytest.approx(a.time_s, rel=0.02)
    assert ec.time_s > ad.time_s * 1.02


def test_sharp_moves_each_shard_once():
    """SHARP all-reduce (InfiniBand): each NIC sends S/G once instead of 2(N−1)/N · S/G, so at 16
    single-GPU servers the network time drops by 2·15/16 = 1.875×; RoCE rejects it."""
    topo = leaf_spine(4, 4, 4, R400, 10**6)
    ring = run_collective("all-reduce", GIB, topo, engine="analytic", nccl_latency=False, protocol="simple")
    sharp = run_collective(
        "all-reduce", GIB, topo, engine="analytic", sharp=True, technology="infiniband", nccl_latency=False
    )
    assert sharp.network_bytes_per_rank == pytest.approx(GIB)
    assert ring.network_time_s / sharp.network_time_s == pytest.approx(1.875, rel=1e-3)
    with pytest.raises(InputError):
        run_collective("all-reduce", GIB, topo, sharp=True, technology="roce")


def test_tree_has_logarithmic_latency():
    """At 64 servers small all-reduces are faster with NCCL's double binary tree (2·log2 N
    network latencies) than with the ring (2(N−1))."""
    topo = leaf_spine(8, 8, 8, R400, 10**6)
    ring = run_collective("all-reduce", 1024, topo, engine="analytic", algorithm="ring")
    tree = run_collective("all-reduce", 1024, topo, engine="analytic", algorithm="tree")
    assert tree.time_s < ring.time_s / 3


def _nccl_btree_ref(n, r):
    """Reference for NCCL's ``ncclGetBtree`` (src/graph/trees.cc), written from its rules:
    (parent, child 0, child 1), -1 for none. Root 0 has one child (child 1): the largest power
    of two below n. Else with b = the lowest set bit of r: parent r − b with bit 2b set (xx01·· →
    xx10··, xx11·· → xx10··), or r − b if that is ≥ n; children r − b/2 and r + b/2 (b/2 halved until r + b/2 < n; none once it is 0)."""
    if r == 0:
        return -1, -1, (1 << ((n - 1).bit_length() - 1)) if n > 1 else -1
    b = r & -r
    up = (r - b) | 2 * b
    if up >= n:
        up = r - b
    half = b // 2
    if half == 0:
        return up, -1, -1
    d1 = half
    while d1 and r + d1 >= n:
        d1 //= 2
    return up, r - half, r + d1 if d1 else -1


def _children(edges, n):
    kids = [[] for _ in range(n)]
    for c, p in edges:
        kids[p].append(c)
    return [sorted(k) for k in kids]


def _check_tree(edges, n, root):
    parent = dict(edges)
    assert len(parent) == len(edges) == n - 1 and root not in parent
    assert all(0 <= x < n for e in edges for x in e)
    for r in range(n):  # every rank reaches the root: connected and acyclic
        seen, x = set(), r
        while x != root:
            assert x not in seen
            seen.add(x)
            x = parent[x]
    assert max(len(k) for k in _children(edges, n)) <= 2


def test_double_binary_tree_is_nccls_for_2_to_64_ranks():
    """NCCL's ``ncclGetDtree``: tree 0 is the bit-pattern binary tree rooted at 0, tree 1 is tree
    0 mirrored (r → n−1−r, root n−1) for even n and shifted by one (r → r+1 mod n, root 1) for odd
    n (``ncclGetDtreeRoots``). Even n: every rank is interior in exactly one tree and a leaf in
    the other. Odd n: rank 0 is interior in both (one child in each: tree 0's root, and tree 0's
    rank n−1 shifted), every other rank in exactly one. Depth ⌈log2 n⌉ + 1 servers in both."""
    from aifabric.workload.collectives import _double_binary_tree

    for n in range(2, 65):
        e0, e1, depth = _double_binary_tree(n)
        root1 = n - 1 if n % 2 == 0 else 1
        _check_tree(e0, n, 0)
        _check_tree(e1, n, root1)
        k0, k1 = _children(e0, n), _children(e1, n)
        par0 = dict(e0)
        for r in range(n):
            up, d0, d1 = _nccl_btree_ref(n, r)
            assert par0.get(r, -1) == up, (n, r)
            assert k0[r] == sorted(x for x in (d0, d1) if x >= 0), (n, r)
        moved = (
            {(n - 1 - c, n - 1 - p) for c, p in e0}
            if n % 2 == 0
            else {((c + 1) % n, (p + 1) % n) for c, p in e0}
        )
        assert set(e1) == moved, n
        int0 = {r for r in range(n) if k0[r]}
        int1 = {r for r in range(n) if k1[r]}
        assert int0 | int1 == set(range(n)), n
        if n % 2 == 0:
            assert int0 & int1 == set(), n
            assert int0 == set(range(0, n, 2)) and int1 == set(range(1, n, 2)), n
        else:
            assert int0 & int1 == {0} and len(k0[0]) == len(k1[0]) == 1, n
        assert depth == math.ceil(math.log2(n)) + 1, n
    # the two pictures in NCCL's trees.cc: n = 12 mirrored, n = 13 shifted
    _, e12, _ = _double_binary_tree(12)
    assert dict(e12) == {3: 11, 1: 3, 7: 3, 0: 1, 2: 1, 5: 7, 9: 7, 4: 5, 6: 5, 8: 9, 10: 9}
    _, e13, _ = _double_binary_tree(13)
    assert dict(e13) == {9: 1, 5: 9, 0: 9, 3: 5, 7: 5, 11: 0, 2: 3, 4: 3, 6: 7, 8: 7, 10: 11, 12: 11}


@pytest.mark.parametrize("servers", [2, 4, 8, 16, 32])
@pytest.mark.parametrize("algorithm", ["tree", "nvls-tree"])
def test_tree_all_reduce_bytes_per_nic(servers, algorithm):
    """Per rail, each NIC carries its S/G shard through NCCL's two trees, half in each, up
    (reduce) and down (broadcast) every edge. N = 2: every NIC sends and receives exactly S/G.
    N = 4…32 (powers of two: every interior rank has two children, the roots one): the two
    roots' NICs (servers 0 and N−1) 1 · S/G, every other NIC exactly 2 · S/G (3 halves as a
    two-child interior node, 1 as a leaf) — never 2.5 · S/G (interior in both trees)."""
    s = 64 * 2**20
    shard = s / 8
    topo = rail_optimized(8 * servers, R400)
    hi = np.full(topo.num_nodes, -1)
    hi[topo.hosts] = np.arange(len(topo.hosts))
    (net,) = [
        st for st in collective_flows("all-reduce", s, topo, algorithm=algorithm) if st.domain == "network"
    ]
    tx, rx = net.host_bytes(len(topo.hosts), hi)
    lay_hosts = rank_layout(topo).hosts  # (servers, 8): row = server, column = rail
    per_server_tx = tx[hi[lay_hosts]] / shard
    per_server_rx = rx[hi[lay_hosts]] / shard
    want = np.full(servers, 1.0 if servers == 2 else 2.0)
    want[[0, -1]] = 1.0
    assert np.array_equal(per_server_tx, np.repeat(want[:, None], 8, axis=1))
    assert np.array_equal(per_server_rx, per_server_tx)
    assert np.all(topo.node_rail[net.flows[:, 0]] == topo.node_rail[net.flows[:, 1]])
    r = run_collective("all-reduce", s, topo, engine="analytic", algorithm=algorithm)
    assert r.network_bytes_per_rank == pytest.approx(want.max() * shard)
    assert net.latency_hops == 2 * math.ceil(math.log2(servers))


def test_steps_expand_for_a_packet_engine(flat16):
    """A ring all-reduce is one Step with repeat 2(n−1); expand() unrolls it into 30 steps of 16
    flows of S/n each."""
    steps = collective_flows("all-reduce", 16 * 2**20, flat16)
    assert len(steps) == 1 and steps[0].repeat == 30
    ex = steps[0].expand()
    assert len(ex) == 30 and ex[0].flows.shape == (16, 3) and int(ex[0].flows[0, 2]) == 2**20


def test_same_seed_same_result(flat16):
    """Same seed → identical times; the flow engine is deterministic."""
    a = run_collective("all-to-all", 64 * 2**20, flat16, seed=3)
    b = run_collective("all-to-all", 64 * 2**20, flat16, seed=3)
    assert a.time_s == b.time_s


@pytest.mark.parametrize("case", ["rail16-ring", "rail16-all-to-all", "flat16-tree", "flat16-all-to-all"])
def test_network_timer_replaces_the_network_step_timing(flat16, case):
    """``run_collective(network_timer=...)``: a timer answering twice the flow engine's bandwidth
    term (and its physical latency) doubles ``network_time_s``, leaves the latency and NVLink terms
    alone, gives ``time_s = latency + max(2 × network, nvlink)``, labels ``model``; it is called
    once per network step, in order, and not by the tuner (protocol auto weighs 3 protocols)."""
    topo, op, algo = {
        "rail16-ring": (rail_optimized(16, 100 * 10**9), "all-reduce", "ring"),
        "rail16-all-to-all": (rail_optimized(16, 100 * 10**9), "all-to-all", "ring"),
        "flat16-tree": (flat16, "all-reduce", "tree"),
        "flat16-all-to-all": (flat16, "all-to-all", "ring"),
    }[case]
    size = 256 * 2**20
    steps = collective_flows(op, size, topo, algorithm=algo)
    net = [s for s in steps if s.domain == "network"]
    kw = dict(engine="flow", algorithm=algo, steps=steps, nic_efficiency=1.0)
    ref = run_collective(op, size, topo, **kw)
    assert ref.protocol == "simple" and ref.model == "max-min"
    calls = []

    def twice_flow(step, proto_eff):
        calls.append(step)
        assert proto_eff == 1.0
        one = run_collective(
            op,
            size,
            topo,
            engine="flow",
            protocol="simple",
            nccl_latency=False,
            steps=[step],
            nic_efficiency=1.0,
        )
        return 2 * one.network_time_s / step.repeat, one.latency_s / step.repeat, "2x max-min"

    r = run_collective(op, size, topo, network_timer=twice_flow, **kw)
    assert [id(s) for s in calls] == [id(s) for s in net] and len(net) >= 1
    assert r.model == "2x max-min" and r.protocol == "simple"
    assert r.network_time_s == pytest.approx(2 * ref.network_time_s, rel=1e-12)
    assert r.latency_s == pytest.approx(ref.latency_s, rel=1e-12)
    assert r.nvlink_time_s == ref.nvlink_time_s
    assert r.time_s == pytest.approx(
        ref.latency_s + max(2 * ref.network_time_s, ref.nvlink_time_s), rel=1e-12
    )
    assert r.time_s > 1.5 * ref.time_s  # network-bound here: the doubled step time shows
    assert r.busbw_gbps == pytest.approx(r.algbw_gbps * busbw_factor(op, r.ranks))
    # the timer stands in for either engine; without it, nothing changed
    a = run_collective(
        op,
        size,
        topo,
        engine="analytic",
        algorithm=algo,
        steps=steps,
        network_timer=twice_flow,
        nic_efficiency=1.0,
    )
    assert a.model == "2x max-min" and a.time_s == pytest.approx(r.time_s, rel=1e-12)
    assert run_collective(op, size, topo, **kw).time_s == ref.time_s


def test_nccl_table_has_the_nccl_tests_columns(flat16):
    """The table has nccl-tests' out-of-place header and rows, and the '# Avg bus bandwidth' line;
    numbers parse back to the DataFrame's."""
    df = nccl_sweep("all-reduce", default_sizes(8, 2**20), flat16, engine="analytic")
    text = format_nccl_table(df)
    assert "#       size         count      type   redop    root     time   algbw   busbw #wrong" in text
    assert "# Avg bus bandwidth" in text
    rows = [ln.split() for ln in text.splitlines() if not ln.startswith("#")]
    assert len(rows) == len(df)
    assert int(rows[-1][0]) == 2**20 and float(rows[-1][7]) == pytest.approx(
        df["busbw_gbps"].iloc[-1], abs=0.01
    )


def test_bad_inputs_are_one_line_errors(flat16):
    """Unknown op / algorithm / engine and ranks splitting a server raise InputError."""
    with pytest.raises(InputError):
        collective_flows("gossip", 8, flat16)
    with pytest.raises(InputError):
        collective_flows("all-reduce", 8, flat16, algorithm="butterfly")
    with pytest.raises(InputError):
        run_collective("all-reduce", 8, flat16, engine="magic")
    with pytest.raises(InputError):
        collective_flows("all-reduce", 8, rail_optimized(16, R400), ranks=12)


def test_16k_gpu_ring_all_reduce_and_all_to_all_run_in_seconds():
    """16,384 GPUs (2,048 servers, 3-tier rail-optimised, 400G): ring all-reduce (16k flows a step,
    ECMP) and all-to-all (33 M flows → even-split link-load bound) estimates finish within 30 s
    together (measured ~4 s; bench/flow_bench.py records the numbers)."""
    t0 = time.perf_counter()
    topo = rail_optimized(16384, R400)
    ar = run_collective("all-reduce", GIB, topo, engine="flow")
    a2a = run_collective("all-to-all", GIB, topo, engine="flow")
    wall = time.perf_counter() - t0
    assert ar.ranks == a2a.ranks == 16384
    assert ar.model == "max-min" and "link-load" in a2a.model
    assert 0 < a2a.busbw_gbps <= payload_rate_gbps() * 1.001
    assert wall < 30


# ---- NVLS (NVLink SHARP) and NVLSTree ------------------------------------------------------
S8G = 8 * GIB


def _nvls_steps(steps):
    return [st for st in steps if st.domain == "nvls"]


def test_nvls_single_server_bytes_through_the_nvswitch():
    """8 H100s, NVLS all-reduce: no network bytes; each GPU sends S into the NVSwitch (ld_reduce of
    every slice) + S/8 (multicast of its reduced slice) and receives S/8 + S: 9/8 · S each way,
    against the NVLink ring's 2·7/8 · S."""
    topo = rail_optimized(8, R400)
    s = 64 * 2**20
    ring = run_collective("all-reduce", s, topo, engine="analytic", algorithm="ring")
    nvls = run_collective("all-reduce", s, topo, engine="analytic", algorithm="nvls")
    assert nvls.algorithm == "nvls" and nvls.protocol == "simple"
    assert nvls.network_bytes_total == 0 and nvls.network_bytes_per_rank == 0
    assert nvls.nvlink_bytes_per_gpu == pytest.approx(9 / 8 * s)
    assert ring.nvlink_bytes_per_gpu == pytest.approx(2 * 7 / 8 * s)
    red, mc = _nvls_steps(collective_flows("all-reduce", s, topo, algorithm="nvls"))
    hi = np.full(topo.num_nodes, -1)
    hi[topo.hosts] = np.arange(len(topo.hosts))
    tx, rx = red.host_bytes(len(topo.hosts), hi)
    assert tx[:8].tolist() == [s] * 8 and rx[:8].tolist() == [s / 8] * 8
    tx, rx = mc.host_bytes(len(topo.hosts), hi)
    assert tx[:8].tolist() == [s / 8] * 8 and rx[:8].tolist() == [s] * 8
    assert (red.latency_hops, mc.latency_hops) == (1, 0)  # one NVLS kernel: NCCL charges 25 µs once


def test_nvls_tree_network_carries_one_shard_per_rail():
    """NVLSTree on 2 servers × 8: the NVSwitch reduces inside each server, so each NIC sends only
    its S/8 shard (half up one tree, half down the other) — the same S/G the 2-server ring sends,
    while NVLink carries 9/8 · S instead of 7/4 · S; flows stay on their rail. At 4 servers an
    interior tree node's NIC sends 2 · S/8 (3 halves in its interior tree, 1 as a leaf), the ring
    2·3/4 · S/8. NVLS+SHARP (InfiniBand) sends each shard once: S/8 at any server count."""
    s = 64 * 2**20
    topo = rail_optimized(16, R400)
    r = run_collective("all-reduce", s, topo, engine="analytic", algorithm="nvls-tree")
    assert (r.servers, r.gpus_per_node, r.algorithm) == (2, 8, "nvls-tree")
    assert r.network_bytes_per_rank == pytest.approx(s / 8)
    assert r.network_bytes_total == pytest.approx(16 * s / 8)
    assert r.nvlink_bytes_per_gpu == pytest.approx(9 / 8 * s)
    assert r.wire_bytes_total > r.network_bytes_total
    for st in collective_flows("all-reduce", s, topo, algorithm="nvls-tree"):
        if st.domain == "network":
            fl = st.flows
            assert np.all(topo.node_rail[fl[:, 0]] == topo.node_rail[fl[:, 1]])
    topo4 = rail_optimized(32, R400)
    t4 = run_collective("all-reduce", s, topo4, engine="analytic", algorithm="nvls-tree")
    ring4 = run_collective("all-reduce", s, topo4, engine="analytic", algorithm="ring")
    assert t4.network_bytes_per_rank == pytest.approx(2 * s / 8)
    assert ring4.network_bytes_per_rank == pytest.approx(2 * 31 / 32 * s / 8)
    sh = run_collective(
        "all-reduce", s, topo4, engine="analytic", algorithm="nvls", sharp=True, technology="infiniband"
    )
    assert sh.algorithm == "nvls+sharp" and sh.network_bytes_per_rank == pytest.approx(s / 8)


def test_nvls_reduce_scatter_and_all_gather_one_server():
    """NVLS reduce-scatter = the ld_reduce half (send S, receive S/8), all-gather = the multicast
    half (send S/8, receive S): at the same NVLS rate both are slower than the NVLink ring (busbw
    7/8 × 308.6 = 270 vs 370.8 GB/s), so 'auto' keeps the ring for them."""
    topo = rail_optimized(8, R400)
    for op, sent in (("reduce-scatter", 1.0), ("all-gather", 1 / 8)):
        r = run_collective(op, 4 * GIB, topo, engine="analytic", algorithm="nvls")
        assert r.nvlink_bytes_per_gpu == pytest.approx(sent * 4 * GIB)
        assert r.busbw_gbps == pytest.approx(7 / 8 * 480 * 9 / 14, rel=0.01)
        assert run_collective(op, 4 * GIB, topo, engine="analytic", algorithm="auto").algorithm == "ring"


def test_nvls_latency_is_nccls_constants():
    """NCCL's NVLS latency model (tuning.cc, hardware-facts §D): base 0; NVLS = NVLink 25 µs (+ net
    18 µs with SHARP across servers); NVLSTree = 25 + 2·log2(N) × 20.9 µs."""
    c = nccl_constants()
    nvl, net_t, net_s = (
        c["nvlink"]["nvls"]["simple"],
        c["net"]["nvls-tree"]["simple"],
        c["net"]["nvls"]["simple"],
    )
    assert (nvl, net_t, net_s) == (25.0, 20.9, 18.0)
    one = run_collective("all-reduce", 8, rail_optimized(8, R400), engine="analytic", algorithm="nvls")
    assert one.latency_s * 1e6 == pytest.approx(nvl)
    for servers in (2, 4, 8):
        r = run_collective(
            "all-reduce", 8, rail_optimized(8 * servers, R400), engine="analytic", algorithm="nvls-tree"
        )
        assert r.latency_s * 1e6 == pytest.approx(nvl + 2 * np.log2(servers) * net_t), servers
    sh = run_collective(
        "all-reduce",
        8,
        rail_optimized(32, R400),
        engine="analytic",
        algorithm="nvls",
        sharp=True,
        technology="infiniband",
    )
    assert sh.latency_s * 1e6 == pytest.approx(nvl + net_s)


def test_nvls_rate_calibrated_on_h100_and_scaled_for_others():
    """H100: 480 GB/s measured 8-GPU NVLS busbw × 9/14 = 308.6 GB/s per GPU per direction (not an
    estimate). H200 (same 450 GB/s NVLink): the same, flagged estimate; B200: × 900/450 × NCCL's
    NVLS efficiency 0.74/0.85 = 537.3 GB/s, estimate. nvlink_busbw_gbps gives compare-style busbw."""
    h100, h200, b200 = (NvlsDomain.for_gpu(g) for g in ("h100", "h200", "b200"))
    assert h100.gbytes_per_s == pytest.approx(480 * 9 / 14) and not h100.estimate
    assert h200.gbytes_per_s == pytest.approx(h100.gbytes_per_s) and h200.estimate
    assert b200.gbytes_per_s == pytest.approx(h100.gbytes_per_s * 2 * 0.74 / 0.85) and b200.estimate
    assert nvls_allreduce_busbw(h100.gbytes_per_s, 8) == pytest.approx(480)
    assert nvlink_busbw_gbps("all-reduce", "h100", 8) == (pytest.approx(480), "nvls")
    assert nvlink_busbw_gbps("all-gather", "h100", 8) == (pytest.approx(370.8), "ring")
    assert nvlink_busbw_gbps("all-reduce", "h100", 4)[1] == "ring"  # 2·3/5 × 308.6 = 370.3 < 370.8
    b = run_collective(
        "all-reduce", S8G, rail_optimized(8, R400), engine="analytic", algorithm="nvls", gpu="b200"
    )
    assert any("estimate" in n for n in b.notes)
    assert b.busbw_gbps == pytest.approx(nvls_allreduce_busbw(b200.gbytes_per_s, 8), rel=0.01)


def test_auto_picks_nvls_where_nccl_does():
    """'auto' (NCCL-style tuner over the valid algorithms by the α-β model): 8 B → ring/LL on one
    server; 1 GiB → NVLS; 2 servers at 16 GiB → NVLSTree; NVLS never on 1-GPU servers or for
    all-to-all."""
    one = rail_optimized(8, R400)
    small = run_collective("all-reduce", 8, one, engine="analytic", algorithm="auto")
    assert (small.algorithm, small.protocol) == ("ring", "ll")
    assert run_collective("all-reduce", GIB, one, engine="analytic", algorithm="auto").algorithm == "nvls"
    two = run_collective(
        "all-reduce", 16 * GIB, rail_optimized(16, R400), engine="analytic", algorithm="auto"
    )
    assert two.algorithm == "nvls-tree" and any("auto" in n for n in two.notes)
    flat = leaf_spine(4, 4, 4, R400, 10**6)
    assert run_collective("all-reduce", GIB, flat, engine="analytic", algorithm="auto").algorithm in (
        "ring",
        "tree",
    )
    assert run_collective("all-to-all", GIB, one, engine="analytic", algorithm="auto").algorithm == "pxn"


def test_nvls_rejections_are_one_line_errors():
    """NCCL's limits: NVLS for all-reduce / reduce-scatter / all-gather only, NVLSTree all-reduce
    only and multi-server only, multi-server NVLS only with SHARP, Simple protocol only, NVSwitch
    GPUs of Hopper or later, ≥ 2 GPUs per server; the error lists what is allowed."""
    one, two = rail_optimized(8, R400), rail_optimized(16, R400)
    cases = [
        ("all-to-all", one, "nvls", {}),
        ("broadcast", one, "nvls", {}),
        ("all-gather", two, "nvls-tree", {}),
        ("all-reduce", one, "nvls-tree", {}),
        ("all-reduce", two, "nvls", {}),
        ("reduce-scatter", two, "nvls", {}),
        ("all-reduce", one, "nvls", {"protocol": "ll"}),
        ("all-reduce", one, "nvls", {"gpu": "a100"}),
        ("all-reduce", one, "nvls", {"gpus_per_node": 1}),
        ("all-reduce", two, "nvls-tree", {"sharp": True, "technology": "infiniband"}),
    ]
    for op, topo, algo, kw in cases:
        with pytest.raises(InputError) as err:
            run_collective(op, GIB, topo, engine="analytic", algorithm=algo, **kw)
        assert err.value.allowed, (op, algo, kw)
    with pytest.raises(InputError, match="auto"):
        collective_flows("all-reduce", 8, one, algorithm="auto")


def test_sweep_and_table_with_nvls_algorithms():
    """nccl_sweep / format_nccl_table run nvls, nvls-tree and auto: an ``algorithm`` column per
    row, the header names the algorithm (auto: which one over which sizes), rows still parse."""
    topo = rail_optimized(16, R400)
    df = nccl_sweep("all-reduce", default_sizes(8, GIB), topo, engine="analytic", algorithm="auto")
    first = df["algorithm"].iloc[0]
    assert first in ("ring", "tree") and df["algorithm"].iloc[-1] == "nvls-tree"
    assert (df["algorithm"] == df["nccl_choice"]).all()
    text = format_nccl_table(df)
    assert f"algorithm auto: {first} 8–" in text.splitlines()[0] and "nvls-tree" in text.splitlines()[0]
    rows = [ln.split() for ln in text.splitlines() if not ln.startswith("#")]
    assert len(rows) == len(df) and float(rows[-1][7]) == pytest.approx(df["busbw_gbps"].iloc[-1], abs=0.01)
    t = nccl_sweep("all-reduce", [2**20, GIB], topo, engine="flow", algorithm="nvls-tree")
    assert set(t["algorithm"]) == {"nvls-tree"} and "algorithm nvls-tree" in format_nccl_table(t)
    one = nccl_sweep("all-reduce", [GIB], rail_optimized(8, R400), engine="flow", algorithm="nvls")
    assert one["busbw_gbps"].iloc[0] == pytest.approx(480, rel=0.02)


# nccl-tests all_reduce_perf, 2 × p5.48xlarge (16 × H100, 8 × 400 Gb/s-class EFA per node), the
# 16 GiB row (line 34 of the fixture), out-of-place busbw; see tests/fixtures/real/SOURCES.md.
_P5_FIXTURE = "aws-awsome-distributed-training/all_reduce_perf.2x-p5.48xlarge.srun-labelled.txt"


def _p5_fixture_busbw_16gib() -> float:
    """The 16 GiB out-of-place busbw (line 34) of the copied fixture (tests/fixtures/real/SOURCES.md)."""
    f = Path(__file__).parent / "fixtures" / "real" / _P5_FIXTURE
    line = f.read_text().splitlines()[33]
    cols = line.split(":", 1)[1].split()
    assert int(cols[0]) == 16 * GIB
    return float(cols[7])


@pytest.mark.validation
def test_nvls_busbw_matches_published_single_server_numbers():
    """8 × H100 NVLS all-reduce at 8 GiB within 5 % of the measured 480 GB/s [S3][S80] (the
    calibration point); the (1 + 1/G) traffic model then predicts 5 / 6 / 7 GPUs within 5 % of the
    measured 420 / 440 / 460 GB/s [S80] (model 411 / 440 / 462), and 8 × H200 within 5 % of the
    measured 475 GB/s [S81] (model 480)."""
    topo = rail_optimized(8, R400)
    r = run_collective("all-reduce", S8G, topo, engine="flow", algorithm="nvls")
    assert r.busbw_gbps == pytest.approx(default_value("nccl.h100_8gpu_nvls_allreduce_busbw"), rel=0.05)
    for g, measured in default_value("nccl.h100_nvls_allreduce_busbw_by_gpus").items():
        m = run_collective("all-reduce", S8G, topo, engine="analytic", algorithm="nvls", ranks=int(g))
        assert m.gpus_per_node == int(g)
        assert m.busbw_gbps == pytest.approx(measured, rel=0.05), g
    h200 = run_collective("all-reduce", S8G, topo, engine="analytic", algorithm="nvls", gpu="h200")
    assert h200.busbw_gbps == pytest.approx(default_value("nccl.h200_8gpu_allreduce_busbw"), rel=0.05)


@pytest.mark.validation
def test_two_server_nvls_tree_matches_the_p5_fixture():
    """2 × 8 H100 at 400G per GPU, 16 GiB all-reduce: NVLSTree (and 'auto', which picks it) within
    10 % of the 487.09 GB/s busbw measured in all_reduce_perf.2x-p5.48xlarge (line 34; model
    ≈ 514, NVLS-bound: 308.6/(9/8) algbw × 2·15/16). The ring model (≈ 397, NVLink-ring bound)
    is > 15 % below it — why NVLS had to be modelled."""
    measured = _p5_fixture_busbw_16gib()
    assert measured == pytest.approx(487.09, abs=0.005)  # the value README and bench quote
    topo = rail_optimized(16, R400)
    kw = dict(engine="flow", routing="adaptive")
    for algo in ("nvls-tree", "auto"):
        r = run_collective("all-reduce", 16 * GIB, topo, algorithm=algo, **kw)
        assert r.algorithm == "nvls-tree"
        assert r.busbw_gbps == pytest.approx(measured, rel=0.10), algo
    ring = run_collective("all-reduce", 16 * GIB, topo, algorithm="ring", **kw)
    assert ring.busbw_gbps < 0.85 * measured
