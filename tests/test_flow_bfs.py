"""PathModel's switch-to-leaf distances from the numba BFS (aifabric.flow._bfs) equal the earlier
vectorised level-synchronous BFS's, cell for cell, on every kind of fabric (issue 19: results
unchanged by the speed-up)."""

from __future__ import annotations

import numpy as np
import pytest

from aifabric.flow._bfs import leaf_distances
from aifabric.flow.paths import _FAR, PathModel
from aifabric.topology import fat_tree, leaf_spine, rail_optimized, ring
from aifabric.topology.core import HOST_TIER


def _reference(pm: PathModel) -> np.ndarray:
    """The level-synchronous BFS PathModel used before (one column block)."""
    topo = pm.topo
    tier = topo.node_tier
    la, lb = topo.link_a.astype(np.int64), topo.link_b.astype(np.int64)
    ss = np.flatnonzero((tier[la] != HOST_TIER) & (tier[lb] != HOST_TIER))
    es = pm.sw_index[np.concatenate([la[ss], lb[ss]])]
    ed = pm.sw_index[np.concatenate([lb[ss], la[ss]])]
    ns, na = len(pm.switches), len(pm.att_nodes)
    d = np.full((ns, na), _FAR, dtype=np.int32)
    d[pm.sw_index[pm.att_nodes], np.arange(na)] = 0
    level = 0
    while True:
        cand = (d[ed] == level) & (d[es] == _FAR)
        if not cand.any():
            return d
        e_i, a_i = np.nonzero(cand)
        d[es[e_i], a_i] = level + 1
        level += 1


G = 400 * 10**9
TOPOS = {
    "fat-tree-k8": lambda: fat_tree(8, G, 1000),
    "leaf-spine": lambda: leaf_spine(6, 3, 4, G, 1000),
    "rail-2tier-2planes": lambda: rail_optimized(256, G, radix=32, planes=2),
    "rail-3tier": lambda: rail_optimized(2048, G, radix=32),
    "rail-3tier-oversubscribed-2planes": lambda: rail_optimized(
        1024, G, radix=16, oversubscription=2, planes=2
    ),
    "ring": lambda: ring(5, 2, G, 1000),
}


@pytest.mark.parametrize("name", list(TOPOS))
def test_numba_bfs_equals_the_level_synchronous_bfs(name):
    pm = PathModel(TOPOS[name]())
    ref = _reference(pm)
    assert pm.dist.dtype == ref.dtype and pm.dist.shape == ref.shape
    assert np.array_equal(pm.dist, ref)


def test_unreachable_leaves_stay_far():
    """Two disconnected switch pairs: each leaf is unreachable from the other component."""
    src, dst = np.array([0, 1, 2, 3]), np.array([1, 0, 3, 2])
    d = leaf_distances(4, src, dst, np.array([0, 2]), int(_FAR))
    assert d.tolist() == [[0, _FAR], [1, _FAR], [_FAR, 0], [_FAR, 1]]
