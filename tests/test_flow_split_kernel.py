"""The per-packet split's numba kernel (aifabric.flow._split_jit) against the numpy expansion it
replaced (PathModel._split_reference): the same entries, the same order, the same shares to the
last bit — on two- and three-tier fabrics, two planes, and repeated (src, dst) pairs."""

from __future__ import annotations

import numpy as np
import pytest

from aifabric.flow.paths import PathModel
from aifabric.topology import fat_tree, rail_optimized


def _flows(topo, n, seed, repeat=1):
    rng = np.random.default_rng(seed)
    h = np.asarray(topo.hosts)
    src = rng.choice(h, n)
    dst = rng.choice(h, n)
    keep = src != dst
    return np.repeat(src[keep], repeat), np.repeat(dst[keep], repeat)


@pytest.mark.parametrize(
    "make",
    [
        lambda: fat_tree(8, 100 * 10**9, 1_000_000),
        lambda: rail_optimized(512, 400 * 10**9, gpus_per_node=8, radix=16),  # three tiers
        lambda: rail_optimized(256, 200 * 10**9, gpus_per_node=8, radix=16, planes=2),
    ],
)
def test_kernel_split_is_bit_identical_to_the_numpy_expansion(make):
    topo = make()
    pm = PathModel(topo)
    for seed, repeat in ((1, 1), (2, 3)):
        src, dst = _flows(topo, 700, seed, repeat)
        ref = pm._split_reference(src, dst)
        got = pm.split(src, dst)
        assert len(got[1]) > len(src)  # multipath: more entries than flows
        for a, b in zip(ref, got, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def test_shares_of_each_flow_sum_to_one_per_hop_level():
    """Mass is conserved: a flow's shares over its host uplinks, and over the links into its
    destination, each sum to 1."""
    topo = rail_optimized(512, 400 * 10**9, gpus_per_node=8, radix=16)
    pm = PathModel(topo)
    src, dst = _flows(topo, 200, 5)
    fptr, flink, fw = pm.split(src, dst)
    link = flink // 2
    for i in range(len(src)):
        sl = slice(fptr[i], fptr[i + 1])
        a, b = topo.link_a[link[sl]], topo.link_b[link[sl]]
        out_src = (a == src[i]) | (b == src[i])
        into_dst = (a == dst[i]) | (b == dst[i])
        assert fw[sl][out_src].sum() == pytest.approx(1.0)
        assert fw[sl][into_dst].sum() == pytest.approx(1.0)
