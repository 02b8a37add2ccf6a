"""numba kernels of the flow engine: exact max-min progressive filling over CSR arrays, and the
whole fluid drain loop (arrivals, rate recomputation, completions) in one compiled call.

Every kernel is plain Python over numpy arrays, so ``NUMBA_DISABLE_JIT=1`` runs the very same code
(slowly) with identical results; ``tests/test_flow_speed.py`` checks that.

Progressive filling, heap form: with every unfrozen flow at the common level, link ``l`` fills
when the level reaches ``C[l] / N[l]`` (``C``: capacity minus the rates of the flows already
frozen on it, ``N``: the summed weight of its unfrozen flows). The next link to fill is the heap
minimum; its unfrozen flows freeze at that level, which updates ``C`` and ``N`` of the links they
cross. Those updates only raise a link's fill level, so a heap key is a lower bound: a popped link
whose flows changed since its push (per-link version) is re-pushed at its current level, one that
did not is the true minimum and fills. That is the same allocation as
one ``bincount`` round per bottleneck level, in O(E log L) for E (flow, link) entries instead of
O(E × levels). Ties pop in (level, link id) order, so the result does not depend on heap layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _less(k1, l1, k2, l2):
    return k1 < k2 or (k1 == k2 and l1 < l2)


@njit(cache=True)
def _push(hkey, hlink, hver, n, key, link, ver):
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if _less(key, link, hkey[p], hlink[p]):
            hkey[i] = hkey[p]
            hlink[i] = hlink[p]
            hver[i] = hver[p]
            i = p
        else:
            break
    hkey[i] = key
    hlink[i] = link
    hver[i] = ver
    return n + 1


@njit(cache=True)
def _pop(hkey, hlink, hver, n):
    """Remove the root (read it before calling); returns the new size."""
    n -= 1
    if n == 0:
        return 0
    key, link, ver = hkey[n], hlink[n], hver[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _less(hkey[c + 1], hlink[c + 1], hkey[c], hlink[c]):
            c += 1
        if _less(hkey[c], hlink[c], key, link):
            hkey[i] = hkey[c]
            hlink[i] = hlink[c]
            hver[i] = hver[c]
            i = c
        else:
            break
    hkey[i] = key
    hlink[i] = link
    hver[i] = ver
    return n


@njit(cache=True)
def _key(c, nw, npos):
    if npos <= 0 or not nw > 0.0:
        return np.inf
    return c / nw


class Work:
    """Scratch arrays reused across max-min calls (sized for ``num_links`` and ``num_entries``)."""

    def __init__(self, num_links: int, num_entries: int, num_flows: int):
        self.c = np.zeros(num_links)
        self.nw = np.zeros(num_links)
        self.npos = np.zeros(num_links, dtype=np.int64)
        self.deg = np.zeros(num_links, dtype=np.int64)
        self.lptr = np.zeros(num_links + 1, dtype=np.int64)
        self.lfill = np.zeros(num_links, dtype=np.int64)
        # per-entry indices (entries, flows, links) fit int32 below 2^31 entries: 16 bytes less per
        # entry in the drain (a 16,384-GPU permutation under per-packet routing has 65 M entries)
        idx = np.int32 if num_entries + num_links + num_flows < 2**31 - 1 else np.int64
        self.lflow = np.zeros(max(num_entries, 1), dtype=idx)
        self.ver = np.zeros(num_links, dtype=np.int64)
        self.touched = np.zeros(num_links, dtype=np.int64)
        self.mark = np.full(num_links, -1, dtype=np.int64)
        m = num_entries + num_links + 1
        self.hkey = np.zeros(m)
        self.hlink = np.zeros(m, dtype=idx)
        self.hver = np.zeros(m, dtype=np.int64)
        self.frozen = np.zeros(num_flows, dtype=np.bool_)
        self.stamp = np.zeros(1, dtype=np.int64)

    def arrays(self) -> tuple:
        """The scratch arrays in the order the kernels take them (after ``rate`` / ``finish``)."""
        return (
            self.c,
            self.nw,
            self.npos,
            self.deg,
            self.lptr,
            self.lfill,
            self.lflow,
            self.ver,
            self.touched,
            self.mark,
            self.hkey,
            self.hlink,
            self.hver,
            self.frozen,
            self.stamp,
        )


@njit(cache=True)
def maxmin_active(
    act,
    na,
    fptr,
    flink,
    fw,
    cap,
    rate,
    c,
    nw,
    npos,
    deg,
    lptr,
    lfill,
    lflow,
    ver,
    touched,
    mark,
    hkey,
    hlink,
    hver,
    frozen,
    stamp,
):
    """Max-min rates of the flows ``act[:na]`` (written to ``rate[flow]``; other entries untouched).

    Flow ``i`` crosses links ``flink[fptr[i]:fptr[i+1]]`` with weights ``fw[...]``. A flow with no
    entries, or whose links never fill (infinite capacity, zero weight), gets ``inf``.
    """
    st = stamp[0]
    stamp[0] = st + 1
    nt = 0
    unfrozen = 0
    for a in range(na):
        i = act[a]
        frozen[i] = False
        if fptr[i + 1] == fptr[i]:
            rate[i] = np.inf
            frozen[i] = True
            continue
        unfrozen += 1
        for j in range(fptr[i], fptr[i + 1]):
            lk = flink[j]
            if mark[lk] != st:
                mark[lk] = st
                touched[nt] = lk
                nt += 1
                c[lk] = cap[lk]
                nw[lk] = 0.0
                npos[lk] = 0
                deg[lk] = 0
            w = fw[j]
            nw[lk] += w
            deg[lk] += 1
            if w > 0.0:
                npos[lk] += 1
    # link -> unfrozen flows (CSR over the touched links, in act order)
    pos = 0
    for t in range(nt):
        lk = touched[t]
        lptr[lk] = pos
        lfill[lk] = pos
        pos += deg[lk]
    for a in range(na):
        i = act[a]
        for j in range(fptr[i], fptr[i + 1]):
            lk = flink[j]
            lflow[lfill[lk]] = i
            lfill[lk] += 1
    hn = 0
    for t in range(nt):
        lk = touched[t]
        ver[lk] += 1
        k = _key(c[lk], nw[lk], npos[lk])
        if k < np.inf:
            hn = _push(hkey, hlink, hver, hn, k, lk, ver[lk])
    while hn > 0 and unfrozen > 0:
        k, lk, v = hkey[0], hlink[0], hver[0]
        hn = _pop(hkey, hlink, hver, hn)
        if v != ver[lk]:  # its flows changed since the push: the key was a lower bound
            k = _key(c[lk], nw[lk], npos[lk])
            if k < np.inf:
                hn = _push(hkey, hlink, hver, hn, k, lk, ver[lk])
            continue
        ver[lk] += 1  # filled
        level = k if k > 0.0 else 0.0
        for q in range(lptr[lk], lfill[lk]):
            i = lflow[q]
            if frozen[i]:
                continue
            frozen[i] = True
            rate[i] = level
            unfrozen -= 1
            for j in range(fptr[i], fptr[i + 1]):
                l2 = flink[j]
                w = fw[j]
                c[l2] -= level * w
                nw[l2] -= w
                if w > 0.0:
                    npos[l2] -= 1
                ver[l2] += 1
    if unfrozen > 0:
        for a in range(na):
            i = act[a]
            if not frozen[i]:
                rate[i] = np.inf
                frozen[i] = True
    return 0


@njit(cache=True)
def _link_fill_level(lk, cap, lstart, lcnt, lmem, eflow, fw, rate, isnew, st, buf, wbuf):
    """Level at which link ``lk`` fills when its old members keep their old rates below that
    level and the new ones (``isnew == st``) grow from 0: the first ``x`` with
    ``cap = Σ_{r_old < x} r_old·w + x·Σ_{others} w`` (``inf`` if it never fills)."""
    if not cap[lk] < np.inf:
        return np.inf
    m = 0
    wt = 0.0
    for q in range(lstart[lk], lstart[lk] + lcnt[lk]):
        e = lmem[q]
        w = fw[e]
        wt += w
        i = eflow[e]
        if isnew[i] != st:
            buf[m] = rate[i]
            wbuf[m] = w
            m += 1
    if not wt > 0.0:
        return np.inf
    idx = np.argsort(buf[:m])
    used = 0.0
    for j in range(m):
        x = (cap[lk] - used) / wt
        r = buf[idx[j]]
        if x <= r:
            return x
        used += r * wbuf[idx[j]]
        wt -= wbuf[idx[j]]
    if not wt > 0.0:
        return np.inf
    return (cap[lk] - used) / wt


@njit(cache=True)
def drain(
    fptr,
    flink,
    fw,
    cap,
    drain_bits,
    start,
    order,
    finish,
    c,
    nw,
    npos,
    deg,
    lptr,
    lfill,
    lflow,
    ver,
    touched,
    mark,
    hkey,
    hlink,
    hver,
    frozen,
    stamp,
):
    """The fluid event loop of :func:`aifabric.flow.engine.simulate_drain`; fills ``finish`` and
    returns the number of rate computations. Same arithmetic and tolerances as the reference.

    Rates are recomputed incrementally but exactly: the new progressive filling agrees with the
    previous one below ``λ* = min(rate of each departed flow, fill level of each arrival's links
    with the old rates below it)``, so flows whose previous rate is below ``λ*`` keep it and only
    the others are filled again, from the capacity the kept ones leave. Link → active-entry lists
    are kept up to date (swap-remove) instead of rebuilt. ``deg`` / ``lptr`` / ``lfill`` /
    ``lflow`` serve as per-link list offsets, counts, members and per-entry slots."""
    f = drain_bits.shape[0]
    nl = cap.shape[0]
    ne = flink.shape[0]
    remaining = drain_bits.copy()
    tol = np.empty(f)
    for i in range(f):
        tol[i] = 1e-9 * max(remaining[i], 1.0)
    rate = np.zeros(f)
    act = np.empty(max(f, 1), dtype=np.int64)
    eflow = np.empty(max(ne, 1), dtype=lflow.dtype)  # int32 below 2^31 entries (Work.index_dtype)
    for i in range(f):
        for j in range(fptr[i], fptr[i + 1]):
            eflow[j] = i
    lstart = lptr  # static offsets: room for every entry that ever crosses the link
    lcnt = deg
    lmem = lflow
    epos = np.empty(max(ne, 1), dtype=lflow.dtype)
    for lk in range(nl):
        lcnt[lk] = 0
    for j in range(ne):
        lcnt[flink[j]] += 1
    pos = 0
    for lk in range(nl):
        lstart[lk] = pos
        pos += lcnt[lk]
        lcnt[lk] = 0
    lstart[nl] = pos
    isnew = np.full(max(f, 1), -1, dtype=np.int64)
    inu = np.full(max(f, 1), -1, dtype=np.int64)
    lmark = np.full(max(nl, 1), -1, dtype=np.int64)
    buf = np.empty(max(f, 1))
    wbuf = np.empty(max(f, 1))
    na = 0
    nxt = 0
    t = start[order[0]] if f > 0 else 0.0
    events = 0
    lam_dep = 0.0  # departures since the last filling bound λ* (0: fill everything)
    dep = np.empty(max(f, 1), dtype=np.int64)
    nd = 0
    while nxt < f or na > 0:
        st = stamp[0]
        stamp[0] = st + 1
        na0 = na
        while nxt < f and start[order[nxt]] <= t * (1 + 1e-15) + 1e-18:
            i = order[nxt]
            nxt += 1
            if remaining[i] <= tol[i]:
                finish[i] = t
            else:
                act[na] = i
                na += 1
        if na == 0:
            if nxt < f:
                t = start[order[nxt]]
                continue
            break
        events += 1
        # arrivals join their links' lists
        for a in range(na0, na):
            i = act[a]
            isnew[i] = st
            for j in range(fptr[i], fptr[i + 1]):
                lk = flink[j]
                q = lstart[lk] + lcnt[lk]
                lmem[q] = j
                epos[j] = q
                lcnt[lk] += 1
        lam = lam_dep
        for a in range(na0, na):
            i = act[a]
            for j in range(fptr[i], fptr[i + 1]):
                lk = flink[j]
                if lmark[lk] != st and lam > 0.0:
                    lmark[lk] = st
                    x = _link_fill_level(lk, cap, lstart, lcnt, lmem, eflow, fw, rate, isnew, st, buf, wbuf)
                    if x < lam:
                        lam = x
        lam_use = lam * (1.0 - 1e-12) if lam < np.inf else np.inf
        # flows filled again: above λ*, the filling splits into connected components (flows at or
        # above λ*, new flows, their links); only those holding a changed link can change.
        nt = 0
        for a in range(na0, na):
            i = act[a]
            if fptr[i + 1] == fptr[i]:
                rate[i] = np.inf
            for j in range(fptr[i], fptr[i + 1]):
                lk = flink[j]
                if mark[lk] != st:
                    mark[lk] = st
                    touched[nt] = lk
                    nt += 1
        for d in range(nd):
            i = dep[d]
            for j in range(fptr[i], fptr[i + 1]):
                lk = flink[j]
                if mark[lk] != st:
                    mark[lk] = st
                    touched[nt] = lk
                    nt += 1
        unfrozen = 0
        qh = 0
        while qh < nt:
            lk = touched[qh]
            qh += 1
            for q in range(lstart[lk], lstart[lk] + lcnt[lk]):
                i = eflow[lmem[q]]
                if inu[i] == st or not (isnew[i] == st or rate[i] >= lam_use):
                    continue
                inu[i] = st
                frozen[i] = False
                unfrozen += 1
                for j in range(fptr[i], fptr[i + 1]):
                    l2 = flink[j]
                    if mark[l2] != st:
                        mark[l2] = st
                        touched[nt] = l2
                        nt += 1
        for tt in range(nt):
            lk = touched[tt]
            cl = cap[lk]
            wl = 0.0
            pl = 0
            for q in range(lstart[lk], lstart[lk] + lcnt[lk]):
                e = lmem[q]
                i2 = eflow[e]
                w = fw[e]
                if inu[i2] == st:
                    wl += w
                    if w > 0.0:
                        pl += 1
                else:
                    cl -= rate[i2] * w
            c[lk] = cl
            nw[lk] = wl
            npos[lk] = pl
        hn = 0
        for tt in range(nt):
            lk = touched[tt]
            ver[lk] += 1
            k = _key(c[lk], nw[lk], npos[lk])
            if k < np.inf:
                hn = _push(hkey, hlink, hver, hn, k, lk, ver[lk])
        while hn > 0 and unfrozen > 0:
            k, lk, v = hkey[0], hlink[0], hver[0]
            hn = _pop(hkey, hlink, hver, hn)
            if v != ver[lk]:
                k = _key(c[lk], nw[lk], npos[lk])
                if k < np.inf:
                    hn = _push(hkey, hlink, hver, hn, k, lk, ver[lk])
                continue
            ver[lk] += 1
            level = k if k > 0.0 else 0.0
            for q in range(lstart[lk], lstart[lk] + lcnt[lk]):
                i = eflow[lmem[q]]
                if inu[i] != st or frozen[i]:
                    continue
                frozen[i] = True
                rate[i] = level
                unfrozen -= 1
                for j in range(fptr[i], fptr[i + 1]):
                    l2 = flink[j]
                    w = fw[j]
                    c[l2] -= level * w
                    nw[l2] -= w
                    if w > 0.0:
                        npos[l2] -= 1
                    ver[l2] += 1
        if unfrozen > 0:
            for a in range(na):
                i = act[a]
                if inu[i] == st and not frozen[i]:
                    rate[i] = np.inf
                    frozen[i] = True
        dt = np.inf
        for a in range(na):
            i = act[a]
            r = rate[i]
            if r > 0.0:
                x = remaining[i] / r
                if x < dt:
                    dt = x
        if nxt < f:
            x = start[order[nxt]] - t
            if x < dt:
                dt = x
        if dt < 0.0:
            dt = 0.0
        if dt == np.inf:
            break  # nothing can progress (zero-rate flows, no arrival left): unfinished, NaN
        for a in range(na):
            i = act[a]
            r = rate[i]
            if np.isfinite(r):
                remaining[i] -= r * dt
            else:
                remaining[i] -= remaining[i]
        t += dt
        m = max(t, 1e-12)
        k = 0
        lam_dep = np.inf
        nd = 0
        for a in range(na):
            i = act[a]
            if remaining[i] <= tol[i] + 1e-12 * rate[i] * m:
                finish[i] = t
                dep[nd] = i
                nd += 1
                if rate[i] < lam_dep:
                    lam_dep = rate[i]
                for j in range(fptr[i], fptr[i + 1]):  # leave the link lists (swap-remove)
                    lk = flink[j]
                    q = epos[j]
                    last = lstart[lk] + lcnt[lk] - 1
                    e2 = lmem[last]
                    lmem[q] = e2
                    epos[e2] = q
                    lcnt[lk] -= 1
                rate[i] = 0.0
            else:
                act[k] = i
                k += 1
        na = k
    return events
