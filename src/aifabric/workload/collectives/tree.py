"""NCCL's double binary tree (``ncclGetDtree``) and the per-rail tree all-reduce step built on it."""

from __future__ import annotations

import math

import numpy as np

from aifabric.workload.collectives.base import Step
from aifabric.workload.collectives.layout import Layout


def _btree_parent(n: int, r: int) -> int:
    """Parent of rank ``r`` in NCCL's binary tree over ``n`` ranks (-1 for the root, rank 0).
    With ``b`` the lowest set bit of ``r``, the parent clears ``b`` and sets the next bit up;
    if that rank does not exist it only clears ``b``. Odd ranks are leaves, so a rank's children
    are ``r − b/2`` and ``r + b/2`` (the latter halved until it is in range, or none), and the
    root has one child, the highest power of two below ``n``."""
    if r == 0:
        return -1
    low = r & -r
    up = (r ^ low) | (low << 1)
    return up if up < n else r ^ low


def _dtree_parents(n: int) -> tuple[list[int], list[int]]:
    """Parent of every rank (-1 at the root) in NCCL's two trees (``ncclGetDtree``): tree 0 is
    the bit-pattern binary tree rooted at rank 0; tree 1 is tree 0 mirrored (rank r plays tree
    0's rank n−1−r, root n−1) when ``n`` is even, shifted by one (rank r plays r−1, root 1) when
    ``n`` is odd. Even n: every rank is interior in exactly one tree; odd n: rank 0 is interior
    in both (one child in each), every other rank in exactly one."""
    p0 = [_btree_parent(n, r) for r in range(n)]
    if n % 2 == 0:
        p1 = [-1 if p0[n - 1 - r] < 0 else n - 1 - p0[n - 1 - r] for r in range(n)]
    else:
        p1 = [-1 if p0[(r - 1) % n] < 0 else (p0[(r - 1) % n] + 1) % n for r in range(n)]
    return p0, p1


def _double_binary_tree(n: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """NCCL's double binary tree on ``n`` servers (:func:`_dtree_parents`): the (child, parent)
    edges of tree 0 and of tree 1, ordered by child, and the depth — the most servers on a
    root-to-leaf path in either tree (⌈log2 n⌉ + 1; both trees have the same shape)."""
    trees = _dtree_parents(n) if n > 1 else ([-1] * n, [-1] * n)
    edges = [[(c, p) for c, p in enumerate(par) if p >= 0] for par in trees]
    level = [0] * n  # servers from the root down to r, in tree 0 (tree 1 is a relabelling of it)
    for r in range(n):
        path, x = [], r
        while x >= 0 and not level[x]:
            path.append(x)
            x = trees[0][x]
        d = level[x] if x >= 0 else 0
        for y in reversed(path):
            d += 1
            level[y] = d
    return edges[0], edges[1], max(level, default=0)


def _rail_tree(lay: Layout, shard: int) -> Step:
    """Per-rail double binary tree all-reduce of each NIC's ``shard`` (two trees, half each)."""
    e1, e2, depth = _double_binary_tree(lay.servers)
    half = math.ceil(shard / 2)
    rows = []
    for edges in (e1, e2):
        for c, p in edges:
            rows.append(np.stack([lay.hosts[c], lay.hosts[p]], axis=1))  # reduce: up
            rows.append(np.stack([lay.hosts[p], lay.hosts[c]], axis=1))  # broadcast: down
    pr = np.concatenate(rows)
    return Step(
        "network",
        "double binary tree reduce+broadcast (pipelined)",
        latency_hops=2 * max(depth - 1, 1),
        pairs=np.concatenate([pr, np.full((len(pr), 1), half)], axis=1),
    )
