"""Symmetry-reduced link loads of an all-pairs step (issue 19: flow mode at 100,000 GPUs).

A rail-local all-to-all over 100,000 GPUs is 1.25 G flows; flow by flow it cannot be routed. Flows
between the same pair of leaves are interchangeable under even splitting, so the step's bytes are
aggregated per (source leaf, destination leaf) — the matrix ``M`` — and each destination leaf's
column is pushed down the switch graph's shortest-path DAG, split evenly over the equal-cost next
hops at every switch (adaptive routing's ideal, and ECMP's expectation): the same propagation as
:meth:`aifabric.flow.paths.PathModel.even_split_loads`, for a compact :class:`~aifabric.workload.
collectives.Step` (``groups``) without materialising its flows.

Two reductions, both exact:

* **The propagation runs in a numba kernel** (:func:`_propagate_columns`), one destination leaf at
  a time with one ``switches``-long mass vector. The vectorised numpy propagation this replaces
  (kept as the reference in ``tests/test_flow_scale.py``) built (switch, leaf, neighbour)
  temporaries: 21 GiB and 233 s at 100,000 GPUs. The kernel adds the same numbers in the same
  order (per level, per directed link by destination leaf; per switch by source switch and port),
  so its loads are bit-identical to that code's.
* **One plane stands for all** when the planes are identical copies (:func:`plane_copies`: the
  same switches, switch links, rates and host attachments, plane by plane). Every host splits its
  bytes evenly over its uplinks — one per plane — so each plane carries ``1 / planes`` of the bytes
  along the same paths; only plane 0's destination leaves are propagated and every other plane's
  switch links get their plane-0 counterpart's load (checked against the all-planes result in
  ``tests/test_flow_scale.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from numba import njit

_FAR = 1 << 20


@njit(cache=True)
def _propagate_columns(
    cols, att_mass, att_sw, dist_t, nbr_sw, nbr_link, link_a, switches, lev_buf
):  # pragma: no cover - compiled
    """Push each destination leaf ``a`` in ``cols``'s mass (``att_mass[i, a]`` starting at the
    switch ``att_sw[i]``) down the shortest-path DAG towards ``a``, highest distance first; the
    bytes crossing directed link ``2*link + dir`` at distance ``lev`` go to ``lev_buf[lev]``."""
    ns = dist_t.shape[1]
    deg = nbr_sw.shape[1]
    maxlev = lev_buf.shape[0] - 1
    mass = np.zeros(ns)
    ok = np.empty(deg, np.int64)
    for a in cols:
        for s in range(ns):
            mass[s] = 0.0
        for i in range(att_mass.shape[0]):
            mass[att_sw[i]] += att_mass[i, a]
        d = dist_t[a]
        for lev in range(maxlev, 0, -1):
            buf = lev_buf[lev]
            for s in range(ns):
                if d[s] != lev or not mass[s] > 0:
                    continue
                k = 0
                for c in range(deg):  # the equal-cost next hops, in port (link-id) order
                    nb = nbr_sw[s, c]
                    if nb >= 0 and d[nb] == lev - 1:
                        ok[k] = c
                        k += 1
                m = mass[s] / k
                u = switches[s]
                for j in range(k):
                    c = ok[j]
                    lk = nbr_link[s, c]
                    buf[2 * lk + (1 if link_a[lk] != u else 0)] += m
                    mass[nbr_sw[s, c]] += m
                mass[s] = 0.0


@dataclass(frozen=True)
class PlaneCopies:
    """Planes that are identical copies: ``leaves0`` are plane 0's attachment-switch indices
    (columns of the path model's distance table); ``link_src[i]`` (a plane-0 switch link) has the
    same load as ``link_dst[i]`` (its counterpart in another plane, same orientation)."""

    planes: int
    leaves0: np.ndarray
    link_src: np.ndarray
    link_dst: np.ndarray


def plane_copies(pm) -> PlaneCopies | None:
    """:class:`PlaneCopies` when every plane of ``pm.topo`` is an identical copy of plane 0 (same
    number of switches; the same switch-to-switch links between the same local switches — a
    switch's local index is its rank among its plane's switches — in the same orientation at the
    same rate; every host with one uplink per plane, to the same local switch at the same rate),
    else ``None`` (one plane, a topology without planes, or planes that differ)."""
    topo = pm.topo
    npl = topo.node_plane
    if npl is None:
        return None
    sw = pm.switches
    sp = np.asarray(npl, dtype=np.int64)[sw]
    if len(sw) == 0 or (sp < 0).any():
        return None
    planes, sp = np.unique(sp, return_inverse=True)
    nplanes = len(planes)
    if nplanes < 2:
        return None
    per = np.bincount(sp, minlength=nplanes)
    if (per != per[0]).any():
        return None
    order = np.lexsort((sw, sp))  # by plane, then node id
    local = np.empty(len(sw), dtype=np.int64)
    local[order] = np.arange(len(sw)) - np.repeat(np.arange(nplanes) * per[0], per)
    la = topo.link_a.astype(np.int64)
    lb = topo.link_b.astype(np.int64)
    sa, sb = pm.sw_index[la], pm.sw_index[lb]
    ss = np.flatnonzero((sa >= 0) & (sb >= 0))
    pa, pb = sp[sa[ss]], sp[sb[ss]]
    if (pa != pb).any():
        return None
    rate = topo.link_rate_bps.astype(np.float64)
    n0 = int(per[0])
    key = local[sa[ss]] * n0 + local[sb[ss]]
    by_plane = [ss[pa == q][np.lexsort((ss[pa == q], key[pa == q]))] for q in range(nplanes)]
    ref = by_plane[0]
    ref_key = local[pm.sw_index[la[ref]]] * n0 + local[pm.sw_index[lb[ref]]]
    src, dst = [], []
    for q in range(1, nplanes):
        lq = by_plane[q]
        if len(lq) != len(ref):
            return None
        kq = local[pm.sw_index[la[lq]]] * n0 + local[pm.sw_index[lb[lq]]]
        if (kq != ref_key).any() or (rate[lq] != rate[ref]).any():
            return None
        src.append(ref)
        dst.append(lq)
    # hosts: one uplink per plane, to the same local switch, the same rate and orientation
    up = pm.up_link
    if up.shape[1] != nplanes or (up < 0).any():
        return None
    up_sw = pm.sw_index[pm.up_node]
    up_pl = sp[up_sw]
    if (np.sort(up_pl, axis=1) != np.arange(nplanes)).any():
        return None
    col = np.argsort(up_pl, axis=1)
    rows = np.arange(up.shape[0])[:, None]
    up_sw, up = up_sw[rows, col], up[rows, col]
    if (local[up_sw] != local[up_sw[:, :1]]).any():
        return None
    if (rate[up] != rate[up[:, :1]]).any():
        return None
    host_is_a = la[up] == pm.hosts[:, None]
    if (host_is_a != host_is_a[:, :1]).any():
        return None
    att_pl = sp[pm.sw_index[pm.att_nodes]]
    return PlaneCopies(
        nplanes,
        np.flatnonzero(att_pl == 0),
        np.concatenate(src) if src else np.zeros(0, np.int64),
        np.concatenate(dst) if dst else np.zeros(0, np.int64),
    )


def group_even_bytes(num_switches: int, num_leaves: int, num_links: int, levels: int = 6) -> int:
    """Peak bytes :func:`group_even_loads` adds to a built path model: the leaf × leaf mass
    matrix, one outer product, the per-level link buffers and the loads."""
    return 16 * num_leaves**2 + 16 * num_links * (levels + 2)


def group_even_loads(pm, groups: np.ndarray, pair_bytes: float, one_plane: bool = True) -> np.ndarray:
    """Bytes per directed link (``2*link + dir``) of an all-pairs step — every ordered pair of hosts
    within a row of ``groups`` (node ids) exchanges ``pair_bytes`` — each flow's bytes split evenly
    over its host's uplinks and over the equal-cost next hops at every switch. ``one_plane``:
    propagate plane 0 only when :func:`plane_copies` finds the planes identical (same result).
    The result is read-only and kept on ``pm`` (the last few steps): the same step timed again —
    once per protocol, or per candidate algorithm — is not propagated again."""
    grp = np.ascontiguousarray(groups, dtype=np.int64)
    # the same step is timed once per protocol (and per algorithm candidate): reuse its loads
    key = (hashlib.sha1(grp.tobytes()).hexdigest(), grp.shape, float(pair_bytes), bool(one_plane))
    cache = pm.__dict__.setdefault("_group_even_cache", {})
    if key in cache:
        return cache[key]
    loads = _group_even_loads(pm, grp, pair_bytes, one_plane)
    loads.setflags(write=False)
    if len(cache) >= _CACHE_ENTRIES:
        cache.pop(next(iter(cache)))
    cache[key] = loads
    return loads


_CACHE_ENTRIES = 4


def _group_even_loads(pm, grp: np.ndarray, pair_bytes: float, one_plane: bool) -> np.ndarray:
    topo = pm.topo
    loads = np.zeros(2 * topo.num_links)
    m = grp.shape[1]
    h = pm.host_index[grp]
    p = pm.up_link.shape[1]
    na = len(pm.att_nodes)
    att_mass = np.zeros((na, na))
    for q in range(p):
        share = pair_bytes * (m - 1) / p
        lk = pm.up_link[h.ravel(), q]
        host = grp.ravel()
        np.add.at(loads, 2 * lk + (topo.link_a[lk] != host), share)  # up from each host
        np.add.at(loads, 2 * lk + (topo.link_a[lk] == host), share)  # down to each host
        att = pm.up_att[h, q]  # (g, m)
        for row in att:
            c = np.bincount(row, minlength=na).astype(np.float64)
            # the leaves this row reaches: adding the zeros elsewhere would change no bit
            on = np.flatnonzero(c)
            mat = np.outer(c[on], c[on]) * (pair_bytes / p)
            np.fill_diagonal(mat, 0.0)
            att_mass[np.ix_(on, on)] += mat
    copies = plane_copies(pm) if one_plane else None
    cols = copies.leaves0 if copies is not None else np.arange(na, dtype=np.int64)
    level = int(pm.dist[pm.dist < _FAR].max()) if pm.dist.size else 0
    if level < 1 or not len(cols):
        return loads
    lev_buf = np.zeros((level + 1, len(loads)))
    _propagate_columns(
        np.ascontiguousarray(cols, dtype=np.int64),
        att_mass,
        np.ascontiguousarray(pm.sw_index[pm.att_nodes], dtype=np.int64),
        pm.dist_t,
        np.ascontiguousarray(pm.nbr_sw, dtype=np.int64),
        np.ascontiguousarray(pm.nbr_link, dtype=np.int64),
        np.ascontiguousarray(topo.link_a, dtype=np.int64),
        np.ascontiguousarray(pm.switches, dtype=np.int64),
        lev_buf,
    )
    for lev in range(level, 0, -1):  # the order the level-synchronous propagation added them in
        loads += lev_buf[lev]
    if copies is not None:
        for d in (0, 1):
            loads[2 * copies.link_dst + d] = loads[2 * copies.link_src + d]
    return loads


__all__ = ["PlaneCopies", "group_even_bytes", "group_even_loads", "plane_copies"]
