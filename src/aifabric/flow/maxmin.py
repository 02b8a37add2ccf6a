"""Max-min fair rates by progressive filling (water-filling), vectorised with numpy.

All unfrozen flows grow their rate at the same pace; when a link fills up, every flow crossing it
is frozen at the current level. Each round is one ``bincount`` over the (flow, link) incidence
entries, and the number of rounds is the number of distinct bottleneck levels (a handful for
collectives and permutations), so tens of thousands of flows cost milliseconds.

The incidence may carry weights (a flow using a fraction of its rate on a link, or an aggregate
of ``count`` identical flows); plain paths use weight 1.
"""

from __future__ import annotations

import numpy as np

_EPS = 1e-9


def max_min_rates(entry_flow: np.ndarray, entry_link: np.ndarray, capacity: np.ndarray,
                  num_flows: int, entry_weight: np.ndarray | None = None,
                  active: np.ndarray | None = None) -> np.ndarray:
    """Max-min fair rate of each flow (same unit as ``capacity``; 0 for inactive flows).

    ``entry_flow[i]`` uses link ``entry_link[i]`` with weight ``entry_weight[i]`` (default 1).
    A flow with no entries (or only on infinite-capacity links) gets ``inf``.
    """
    entry_flow = np.asarray(entry_flow, dtype=np.int64)
    entry_link = np.asarray(entry_link, dtype=np.int64)
    w = np.ones(len(entry_flow)) if entry_weight is None else np.asarray(entry_weight, dtype=np.float64)
    rate = np.zeros(num_flows)
    frozen = np.zeros(num_flows, dtype=bool) if active is None else ~np.asarray(active, dtype=bool)
    if active is not None:
        keep = ~frozen[entry_flow]
        entry_flow, entry_link, w = entry_flow[keep], entry_link[keep], w[keep]
    has_entry = np.zeros(num_flows, dtype=bool)
    has_entry[entry_flow] = True
    rate[~frozen & ~has_entry] = np.inf
    frozen |= ~has_entry
    rem = np.asarray(capacity, dtype=np.float64).copy()
    nl = len(rem)
    level = 0.0
    while len(entry_flow):
        wl = np.bincount(entry_link, weights=w, minlength=nl)
        used = wl > 0
        share = np.full(nl, np.inf)
        share[used] = rem[used] / wl[used]
        inc = share.min()
        if not np.isfinite(inc):
            rate[~frozen] = np.inf
            break
        inc = max(inc, 0.0)
        level += inc
        rem[used] -= inc * wl[used]
        full = used & (share <= inc * (1 + _EPS) + 1e-300)
        hit = np.zeros(num_flows, dtype=bool)
        hit[entry_flow[full[entry_link]]] = True
        newly = hit & ~frozen
        rate[newly] = level
        frozen |= newly
        rem[full] = 0.0
        keep = ~frozen[entry_flow]
        entry_flow, entry_link, w = entry_flow[keep], entry_link[keep], w[keep]
    return rate


def paths_to_entries(paths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(entry_flow, entry_link)`` of a ``(F, L)`` -1-padded directed-link path array."""
    f_idx, h_idx = np.nonzero(paths >= 0)
    return f_idx.astype(np.int64), paths[f_idx, h_idx].astype(np.int64)


def jain_index(x: np.ndarray) -> float:
    """Jain's fairness index (Σx)² / (n Σx²): 1 when all equal, 1/n when one takes all."""
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if not len(x) or not np.any(x):
        return 0.0
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))
