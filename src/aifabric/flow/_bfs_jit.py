"""The numba kernel of :mod:`aifabric.flow._bfs` (one BFS per leaf), in its own module so that
importing ``_bfs`` does not import numba when an ahead-of-time build of this file is used
(:mod:`aifabric.flow._aot`)."""

from __future__ import annotations

import numpy as np
from numba import njit

# pycc signature of the ahead-of-time build (python -m aifabric.sim.aot)
SIGNATURE = "void(i8[::1], i8[::1], i8[::1], i4[:, ::1], i4)"


@njit(cache=True)
def _bfs_all(indptr, indices, att_sw, dist_t, far):  # pragma: no cover - compiled
    """``dist_t[a, s]``: one BFS per leaf ``a``, each writing a contiguous row (cache-friendly)."""
    ns = len(indptr) - 1
    queue = np.empty(ns, np.int64)
    for a in range(len(att_sw)):
        d = dist_t[a]
        for s in range(ns):
            d[s] = far
        root = att_sw[a]
        d[root] = 0
        queue[0] = root
        head, tail = 0, 1
        while head < tail:
            u = queue[head]
            head += 1
            du = d[u] + 1
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                if d[v] == far:
                    d[v] = du
                    queue[tail] = v
                    tail += 1
