"""PathModel.split expands flows in blocks (a 16,384-GPU permutation needed over 20 GB in one
piece): the blocked result is identical to the one-piece result."""

from __future__ import annotations

import numpy as np

import aifabric.flow.paths as paths
from aifabric.topology import fat_tree


def test_split_in_blocks_equals_one_piece(monkeypatch):
    topo = fat_tree(8, 100 * 10**9, 1_000_000)
    pm = paths.PathModel(topo)
    h = topo.hosts
    d = np.random.default_rng(1).permutation(h)
    keep = d != h
    one = pm.split(h[keep], d[keep])
    monkeypatch.setattr(paths, "SPLIT_BLOCK", 7)
    blocked = pm.split(h[keep], d[keep])
    assert len(one[1]) > 1000
    for a, b in zip(one, blocked, strict=True):
        assert np.array_equal(a, b)
