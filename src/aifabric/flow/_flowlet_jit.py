"""The flow model's flowlet choice (:meth:`aifabric.flow.paths.PathModel` under ``flowlet``) as a
numba kernel, in its own module so that importing :mod:`aifabric.flow.paths` does not import numba
(``aifabric simulate`` with an ahead-of-time build runs without it, :mod:`aifabric.flow._aot`)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _flowlet_pick(valid, links, dirs, jh, load):
    """Per row (flows in order): the index among its valid options of the least-loaded egress
    (directed link ``2*link + dir``), the hashed option ``jh`` when it is one of the least loaded,
    else the first in link order; the chosen egress's load grows by one flow."""
    n, w = valid.shape
    out = np.zeros(n, np.int64)
    for r in range(n):
        best = -1
        jbest = 0
        jhash = -1
        c = 0
        for col in range(w):
            if not valid[r, col]:
                continue
            d = 2 * links[r, col] + dirs[r, col]
            if best < 0 or load[d] < best:
                best = load[d]
                jbest = c
            if c == jh[r]:
                jhash = load[d]
            c += 1
        j = jh[r] if jhash == best else jbest
        out[r] = j
        c = 0
        for col in range(w):
            if valid[r, col]:
                if c == j:
                    load[2 * links[r, col] + dirs[r, col]] += 1
                    break
                c += 1
    return out
