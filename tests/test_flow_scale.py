"""Flow mode at internet scale (issue 19): the symmetry-reduced all-pairs loads of
:mod:`aifabric.flow.symmetric` equal the numpy propagation they replace (kept here as the
reference), the one-plane reduction equals the all-planes result, and the kernel runs with
numba's JIT disabled."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.flow.engine import _path_model
from aifabric.flow.paths import PathModel
from aifabric.flow.symmetric import group_even_loads, plane_copies
from aifabric.topology import fat_tree, leaf_spine, rail_optimized
from aifabric.topology.core import HOST_TIER
from aifabric.workload.collectives import rank_layout, run_collective

G = 400 * 10**9


def _reference(pm, groups: np.ndarray, pair_bytes: float) -> np.ndarray:
    """``collectives._group_even_loads`` + ``_propagate`` as they were before the numba kernel
    (vectorised per level; (switch, leaf, neighbour) temporaries)."""
    topo = pm.topo
    loads = np.zeros(2 * topo.num_links)
    grp = groups
    m = grp.shape[1]
    h = pm.host_index[grp]
    p = pm.up_link.shape[1]
    na = len(pm.att_nodes)
    mass = np.zeros((len(pm.switches), na))
    for q in range(p):
        share = pair_bytes * (m - 1) / p
        lk = pm.up_link[h.ravel(), q]
        host = grp.ravel()
        np.add.at(loads, 2 * lk + (topo.link_a[lk] != host), share)
        np.add.at(loads, 2 * lk + (topo.link_a[lk] == host), share)
        att = pm.up_att[h, q]
        for row in att:
            c = np.bincount(row, minlength=na).astype(np.float64)
            mat = np.outer(c, c) * (pair_bytes / p)
            np.fill_diagonal(mat, 0.0)
            mass[pm.sw_index[pm.att_nodes]] += mat
    far = 1 << 20
    level = int(pm.dist[pm.dist < far].max()) if pm.dist.size else 0
    for lev in range(level, 0, -1):
        s_i, a_i = np.nonzero((pm.dist == lev) & (mass > 0))
        if not len(s_i):
            continue
        nb = pm.nbr_sw[s_i]
        valid = (nb >= 0) & (pm.dist[np.maximum(nb, 0), a_i[:, None]] == lev - 1)
        mm = mass[s_i, a_i] / valid.sum(axis=1)
        rr, cc = np.nonzero(valid)
        lk = pm.nbr_link[s_i[rr], cc]
        u = pm.switches[s_i[rr]]
        loads += np.bincount(2 * lk + (topo.link_a[lk] != u), weights=mm[rr], minlength=len(loads))
        np.add.at(mass, (nb[rr, cc], a_i[rr]), mm[rr])
        mass[s_i, a_i] = 0.0
    return loads


def _rail_groups(topo) -> np.ndarray:
    return rank_layout(topo).hosts.T  # the rail-local all-pairs step's groups


CASES = {
    # (topology, groups): rail-local groups on multi-plane three-tier and two-tier fabrics, a
    # partial scalable unit, and arbitrary groups on fabrics without planes
    "rail-3tier-2planes": lambda: rail_optimized(64, G, gpus_per_node=4, radix=8, planes=2),
    "rail-3tier-3planes": lambda: rail_optimized(96, G, gpus_per_node=4, radix=8, planes=3),
    "rail-2tier-2planes": lambda: rail_optimized(256, G, gpus_per_node=8, radix=64, planes=2),
    "rail-3tier-partial": lambda: rail_optimized(200, G, gpus_per_node=8, radix=16, planes=2),
    "rail-3tier-1plane": lambda: rail_optimized(512, G, gpus_per_node=8, radix=16),
    "fat-tree-k4": lambda: fat_tree(4, G, 1000),
    "leaf-spine": lambda: leaf_spine(6, 3, 4, G, 1000),
}


def _groups(name, topo):
    if name.startswith("rail"):
        return _rail_groups(topo)
    hosts = np.asarray(topo.hosts)
    return hosts[: len(hosts) // 4 * 4].reshape(4, -1)  # 4 groups, hosts of several leaves each


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_equals_the_numpy_propagation(name):
    topo = CASES[name]()
    pm = _path_model(topo)
    grp = _groups(name, topo)
    ref = _reference(pm, grp, 3_000_017.0)
    got = group_even_loads(pm, grp, 3_000_017.0, one_plane=False)
    assert np.array_equal(got, ref)  # the same additions in the same order: bit-identical
    assert ref.max() > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_plane_equals_all_planes(name):
    topo = CASES[name]()
    pm = _path_model(topo)
    grp = _groups(name, topo)
    full = group_even_loads(pm, grp, 1e6, one_plane=False)
    one = group_even_loads(pm, grp, 1e6, one_plane=True)
    copies = plane_copies(pm)
    planes = topo.meta["design"].planes if "design" in topo.meta else 1
    assert (copies is not None) == (planes > 1)
    if copies is not None:
        assert copies.planes == planes
        assert len(copies.leaves0) * planes == len(pm.att_nodes)
        assert len(copies.link_dst) > 0
    # the planes are built plane by plane in the same order, so the copies add the same numbers
    # in the same order: bit-identical
    assert np.array_equal(one, full)


def test_planes_that_differ_are_not_copies():
    """A plane with one slower switch link is not a copy: the all-planes propagation runs and its
    loads still equal the reference."""
    topo = rail_optimized(64, G, gpus_per_node=4, radix=8, planes=2)
    assert plane_copies(PathModel(topo)) is not None
    rate = topo.link_rate_bps.copy()
    sw = (topo.node_tier[topo.link_a] != HOST_TIER) & (topo.node_plane[topo.link_a] == 1)
    rate[np.flatnonzero(sw)[0]] //= 2
    slow = dataclasses.replace(topo, link_rate_bps=rate)
    pm = PathModel(slow)
    assert plane_copies(pm) is None
    grp = _rail_groups(slow)
    assert np.array_equal(group_even_loads(pm, grp, 1e6), _reference(pm, grp, 1e6))


def test_runs_with_the_jit_disabled():
    """The kernel is plain Python under ``NUMBA_DISABLE_JIT=1`` (slow, so a small case) and
    gives the same loads as the reference."""
    code = (
        "import numpy as np, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_flow_scale import _reference, _rail_groups\n"
        "from aifabric.flow.engine import _path_model\n"
        "from aifabric.flow.symmetric import group_even_loads\n"
        "from aifabric.topology import rail_optimized\n"
        "t = rail_optimized(64, 400 * 10**9, gpus_per_node=4, radix=8, planes=2)\n"
        "pm = _path_model(t); g = _rail_groups(t)\n"
        "a = group_even_loads(pm, g, 12345.0, one_plane=False)\n"
        "b = group_even_loads(pm, g, 12345.0)\n"
        "r = _reference(pm, g, 12345.0)\n"
        "assert np.array_equal(a, r), 'kernel'\n"
        "assert np.allclose(b, r, rtol=1e-12, atol=0), 'one plane'\n"
        "print('ok', float(r.max()))\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(root / "src")}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok ")


AGREE = {
    # three tiers × 2 planes (64 GPUs), two tiers × 2 planes (256 GPUs), three tiers × 1 plane
    "3tier-2planes": lambda: rail_optimized(64, G, gpus_per_node=4, radix=8, planes=2),
    "2tier-2planes": lambda: rail_optimized(256, G, gpus_per_node=8, radix=64, planes=2),
    "3tier-1plane": lambda: rail_optimized(128, G, gpus_per_node=4, radix=8),
}


@pytest.mark.parametrize("name", sorted(AGREE))
@pytest.mark.parametrize(
    ("op", "algo"), [("all-reduce", "ring"), ("all-reduce", "tree"), ("all-to-all", "ring")]
)
def test_reduced_agrees_with_flow_by_flow_within_5_percent(name, op, algo):
    """The 5 % agreement check of ``bench/flow_scale.py --check`` at small sizes: the
    symmetry-reduced step (``max_flows=0``: even-split link loads; the all-to-all by the kernel,
    one plane) against every flow routed and drained by max-min, per-packet adaptive routing (the
    routing whose fluid limit the even split is), NIC cap off; 64 GiB so that a flow's first
    packet (which the flow-by-flow run counts as latency) is < 1 % of it."""
    topo = AGREE[name]()
    kw = dict(engine="flow", algorithm=algo, routing="adaptive-packet", protocol="simple", nic_efficiency=1.0)
    red = run_collective(op, 64 * 2**30, topo, max_flows=0, **kw)
    full = run_collective(op, 64 * 2**30, topo, max_flows=10**12, **kw)
    assert "even split" in red.model and full.model == "max-min"
    assert red.network_time_s == pytest.approx(full.network_time_s, rel=0.05)


def test_flowlet_on_two_planes_is_not_the_even_split():
    """Flowlet routing keeps a flow on one plane: a ring step (one flow per GPU) then uses half
    of a two-plane NIC, which the even split (every flow over both planes) does not see — the
    reduction stands for per-packet adaptive routing, not for flowlet on several planes."""
    topo = AGREE["3tier-2planes"]()
    kw = dict(engine="flow", algorithm="ring", routing="flowlet", protocol="simple", nic_efficiency=1.0)
    red = run_collective("all-reduce", 64 * 2**30, topo, max_flows=0, **kw)
    full = run_collective("all-reduce", 64 * 2**30, topo, max_flows=10**12, **kw)
    assert full.network_time_s == pytest.approx(2 * red.network_time_s, rel=0.05)


@settings(max_examples=25, deadline=None)
@given(
    leaves=st.integers(2, 6),
    spines=st.integers(1, 4),
    hosts_per_leaf=st.integers(1, 4),
    groups=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    pair_bytes=st.floats(1.0, 1e9),
)
def test_kernel_equals_the_reference_on_random_groups(
    leaves, spines, hosts_per_leaf, groups, seed, pair_bytes
):
    """Any grouping of hosts (not only rails) on any leaf-spine: the same loads bit for bit."""
    topo = leaf_spine(leaves, spines, hosts_per_leaf, G, 1000)
    hosts = np.random.default_rng(seed).permutation(np.asarray(topo.hosts))
    m = len(hosts) // groups
    if m < 2:
        return
    grp = hosts[: groups * m].reshape(groups, m)
    pm = PathModel(topo)
    assert np.array_equal(group_even_loads(pm, grp, pair_bytes), _reference(pm, grp, pair_bytes))
