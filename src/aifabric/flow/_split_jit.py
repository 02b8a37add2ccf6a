"""The per-packet split (:meth:`aifabric.flow.paths.PathModel.split`) as a numba kernel, in its own
module so that importing :mod:`aifabric.flow.paths` does not import numba (``aifabric simulate``
with an ahead-of-time build runs without it, :mod:`aifabric.flow._aot`).

Each flow's mass leaves its host evenly over the uplinks nearest to the destination and, hop by
hop, is divided evenly over the equal-cost next hops. The kernel walks one flow at a time: the
nodes of a hop in ascending node id, each node's options in column (link-id) order, the masses
arriving at the same next node added in that order — the order in which the vectorised numpy
expansion it replaces (:meth:`~aifabric.flow.paths.PathModel._split_reference`) adds them, so the
shares are bit-identical to it (tested). A flow's entries come out sorted by directed link id, as
that code's ``np.unique`` left them. On a 16,384-GPU three-tier fabric a permutation splits into
about 2,000 (link, share) entries per flow; the numpy expansion took 100 s for 16,384 flows there.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _dist_to_host(dist_t, up_att, sw, d_h, far):  # pragma: no cover - compiled
    best = far
    if sw >= 0:
        for q in range(up_att.shape[1]):
            a = up_att[d_h, q]
            if a >= 0:
                v = dist_t[a, sw]  # leaf-major: one destination's distances are contiguous
                if v < best:
                    best = v
    return best + 1 if best < far else far


@njit(cache=True)
def split_flows(
    src,
    dst,
    host_index,
    sw_index,
    up_node,
    up_link,
    up_att,
    nbr_sw,
    nbr_link,
    dist_t,
    link_a,
    link_b,
    num_nodes,
    far,
    fptr,
    flink,
    fw,
    start,
    stop,
):  # pragma: no cover - compiled
    """Split flows ``start..stop`` into ``fptr``/``flink``/``fw`` (``fptr[start]`` already set)
    until the buffers are full. Returns ``(next flow, status, bad flow)``: status 0 = done or
    buffer full (next < stop), 1 = no route, 2 = routing loop."""
    f_n = stop
    cap = len(flink)
    acc = np.zeros(num_nodes)
    seen = np.zeros(num_nodes, np.bool_)
    touched = np.empty(num_nodes, np.int64)
    cur = np.empty(num_nodes, np.int64)
    cur_m = np.empty(num_nodes)
    deg_up = up_link.shape[1]
    deg_sw = nbr_sw.shape[1]
    opt = np.empty(max(deg_up, deg_sw), np.int64)
    ent_l = np.empty(64, np.int64)
    ent_w = np.empty(64)
    # each switch's next hops towards the current destination's attachment switches, filled when
    # first needed (callers pass the flows grouped by destination attachment: one fill per group)
    ns = nbr_sw.shape[0]
    stamp = np.full(ns, -1, np.int64)
    nh = np.empty((ns, max(deg_sw, 1)), np.int64)
    nh_n = np.zeros(ns, np.int64)
    epoch = -1
    prev_att = np.full(up_att.shape[1], -2, np.int64)
    for f in range(start, f_n):
        s = src[f]
        d = dst[f]
        s_h = host_index[s]
        d_h = host_index[d]
        n_ent = 0
        same = epoch >= 0
        for q in range(up_att.shape[1]):
            if up_att[d_h, q] != prev_att[q]:
                same = False
            prev_att[q] = up_att[d_h, q]
        if not same:
            epoch += 1
        # the source host holds the whole mass; each hop below spreads it over the next hops
        seen[s] = True
        acc[s] = 1.0
        touched[0] = s
        n_t = 1
        hops = 0
        while True:
            # the next hop's nodes, ascending (np.unique's order), without the destination
            t = np.sort(touched[:n_t])
            n_cur = 0
            for i in range(n_t):
                v = t[i]
                seen[v] = False
                if v != d:
                    cur[n_cur] = v
                    cur_m[n_cur] = acc[v]
                    n_cur += 1
            if n_cur == 0:
                break
            n_t = 0
            # the vectorised code expands the nodes attached to the destination first, then the
            # rest; their entries never share a next node, so only the entry order differs (the
            # entries are sorted by link at the end)
            for i in range(n_cur):
                u = cur[i]
                m = cur_m[i]
                k = 0
                down = False
                for q in range(deg_up):
                    if up_node[d_h, q] == u:
                        down = True
                if u == s:  # the host's uplinks whose switch is nearest to the destination
                    dmin = far
                    for p in range(deg_up):
                        v = up_node[s_h, p]
                        dd = _dist_to_host(dist_t, up_att, sw_index[v] if v >= 0 else -1, d_h, far)
                        if dd < dmin:
                            dmin = dd
                    for p in range(deg_up):
                        v = up_node[s_h, p]
                        dd = _dist_to_host(dist_t, up_att, sw_index[v] if v >= 0 else -1, d_h, far)
                        if up_link[s_h, p] >= 0 and dd == dmin and dd < far:
                            opt[k] = up_link[s_h, p]
                            k += 1
                    if k == 0:
                        return f, 1, f
                elif down:
                    for q in range(deg_up):
                        if up_node[d_h, q] == u:
                            opt[k] = up_link[d_h, q]
                            k += 1
                else:
                    usw = sw_index[u]
                    if stamp[usw] != epoch:
                        here = _dist_to_host(dist_t, up_att, usw, d_h, far)
                        kk = 0
                        for j in range(deg_sw):
                            nb = nbr_sw[usw, j]
                            if nb >= 0 and _dist_to_host(dist_t, up_att, nb, d_h, far) == here - 1:
                                nh[usw, kk] = nbr_link[usw, j]
                                kk += 1
                        nh_n[usw] = kk
                        stamp[usw] = epoch
                    k = nh_n[usw]
                    if k == 0:
                        return f, 1, f
                    for c in range(k):
                        opt[c] = nh[usw, c]
                w = m / k
                for c in range(k):
                    lk = opt[c]
                    la = link_a[lk]
                    if n_ent == len(ent_l):
                        ent_l = np.concatenate((ent_l, np.empty(len(ent_l), np.int64)))
                        ent_w = np.concatenate((ent_w, np.empty(len(ent_w))))
                    ent_l[n_ent] = 2 * lk + (1 if la != u else 0)
                    ent_w[n_ent] = w
                    n_ent += 1
                    nxt = link_b[lk] if la == u else la
                    if not seen[nxt]:
                        seen[nxt] = True
                        acc[nxt] = 0.0
                        touched[n_t] = nxt
                        n_t += 1
                    acc[nxt] += w
            hops += 1
            if hops > num_nodes:
                return f, 2, f
        if fptr[f] + n_ent > cap:
            for i in range(n_t):
                seen[touched[i]] = False
            return f, 0, -1
        order = np.argsort(ent_l[:n_ent])
        base = fptr[f]
        for i in range(n_ent):
            flink[base + i] = ent_l[order[i]]
            fw[base + i] = ent_w[order[i]]
        fptr[f + 1] = base + n_ent
    return f_n, 0, -1


@njit(cache=True)
def gather_pairs(u_start, inv, fptr, u_link, u_w, flink, fw):  # pragma: no cover - compiled
    """Copy each flow's pair's entries (``u_start[inv[i]]`` onwards, ``fptr[i+1] - fptr[i]`` of them)
    to the flow's place in ``flink`` / ``fw``."""
    for i in range(len(inv)):
        a = u_start[inv[i]]
        b = fptr[i]
        for j in range(fptr[i + 1] - b):
            flink[b + j] = u_link[a + j]
            fw[b + j] = u_w[a + j]
