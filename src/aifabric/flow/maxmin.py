"""Max-min fair rates by progressive filling (water-filling).

All unfrozen flows grow their rate at the same pace; when a link fills up, every flow crossing it
is frozen at the current level. The filling runs in a numba kernel
(:func:`aifabric.flow._kernels.maxmin_active`): a heap of links keyed by the level at which each
fills, O(E log L) for E (flow, link) entries whatever the number of distinct bottleneck levels.

The incidence may carry weights (a flow using a fraction of its rate on a link, or an aggregate
of ``count`` identical flows); plain paths use weight 1.
"""

from __future__ import annotations

import numpy as np

from aifabric.flow._kernels import Work, maxmin_active


def max_min_rates(
    entry_flow: np.ndarray,
    entry_link: np.ndarray,
    capacity: np.ndarray,
    num_flows: int,
    entry_weight: np.ndarray | None = None,
    active: np.ndarray | None = None,
) -> np.ndarray:
    """Max-min fair rate of each flow (same unit as ``capacity``; 0 for inactive flows).

    ``entry_flow[i]`` uses link ``entry_link[i]`` with weight ``entry_weight[i]`` (default 1).
    A flow with no entries (or only on infinite-capacity links) gets ``inf``.
    """
    entry_flow = np.asarray(entry_flow, dtype=np.int64).ravel()
    entry_link = np.asarray(entry_link, dtype=np.int64).ravel()
    cap = np.ascontiguousarray(capacity, dtype=np.float64)
    w = (
        np.ones(len(entry_flow))
        if entry_weight is None
        else np.asarray(entry_weight, dtype=np.float64).ravel()
    )
    fptr, flink, fw = flow_csr(entry_flow, entry_link, w, num_flows)
    act = (
        np.arange(num_flows, dtype=np.int64)
        if active is None
        else np.flatnonzero(np.asarray(active, dtype=bool))
    )
    rate = np.zeros(num_flows)
    ws = Work(len(cap), len(flink), num_flows)
    maxmin_active(act, len(act), fptr, flink, fw, cap, rate, *ws.arrays())
    return rate


def flow_csr(
    entry_flow: np.ndarray, entry_link: np.ndarray, weight: np.ndarray, num_flows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fptr, flink, fweight)``: the entries grouped by flow (stable), flow ``i`` owning
    ``flink[fptr[i]:fptr[i + 1]]``."""
    order = np.argsort(entry_flow, kind="stable")
    fptr = np.zeros(num_flows + 1, dtype=np.int64)
    np.cumsum(np.bincount(entry_flow, minlength=num_flows)[:num_flows], out=fptr[1:])
    return (
        fptr,
        np.ascontiguousarray(entry_link[order], dtype=np.int64),
        np.ascontiguousarray(weight[order], dtype=np.float64),
    )


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
