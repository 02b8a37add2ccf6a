"""Routing for the flow model without the O(nodes × hosts) next-hop table.

:class:`PathModel` keeps, per switch, the hop distance to every *attachment switch* (a switch
with hosts below it — the leaf / ToR), computed by one vectorised BFS over the switch graph
(hosts never transit). The distance from switch ``u`` to host ``d`` is ``1 + dist(u, leaf(d))``,
so the equal-cost next hops of (``u``, ``d``) are exactly those of
:func:`aifabric.topology.routing.shortest_path_next_hops` — the links to neighbours one hop
closer, sorted by link id — at O(switches × leaves) memory instead of O(nodes × hosts): a
16,384-GPU rail-optimised fabric needs 1,280 × 512 entries instead of 17,664 × 16,384.

Next-hop choice per flow and hop (same rules as the packet engine):

* ``ecmp`` — ``options[ecmp_hash(src, dst, sport, 4791, 17, switch_salt(seed, u)) % k]``.
* ``static`` — InfiniBand linear forwarding: ``options[(r // div[tier]) % k]`` with ``r`` the
  destination's leaf-ordered rank, one digit per tier, as
  :func:`aifabric.topology.routing.ib_linear_forwarding`.
* ``flowlet`` (and the old spelling ``adaptive``) — the packet engine's rule for a new flowlet:
  the least-loaded egress, ties keeping the ECMP hash's choice, otherwise the first least-loaded
  egress in link order; the load of an egress is the number of flows (in flow order, the engine's
  start order at equal times) that took it before. A fluid flow has no idle gaps, and
  back-to-back RDMA traffic never leaves one as long as the flowlet gap (10 µs), so the port
  chosen at the start is kept for the flow's life. (Before issue 12's fix the i-th flow at a
  switch took option ``i mod k`` — also an even spread, but other spines than the engine's.)
* ``adaptive-packet`` — per-packet adaptive routing with a NIC that places out-of-order packets:
  in the fluid limit every flow's bytes are split evenly over all its equal-cost next hops at
  every hop (:meth:`PathModel.split`; :meth:`route` returns the ECMP path as the flow's
  representative path for its latency). For the symmetric loads of a fat tree this is the
  least-loaded split; it is not re-balanced around asymmetric hot spots.
* ``scheduled`` — a cell-switched scheduled fabric (Jericho3-AI + Ramon, OCP DDC class): cells
  sprayed evenly over every fabric link, so in the fluid limit the same even split as
  ``adaptive-packet``; the ingress VOQs and egress-port credits of the packet engine only keep
  queues out of the fabric, which a fluid model has none of. The fabric links carry packet bytes at
  their rate under the cell tax (:func:`link_rates_bps`, :mod:`aifabric.flow.scheduled`).
* ``spray`` is refused here (:func:`flow_routing`): its cost on a plain RC NIC (out-of-order
  arrival → NAK and go-back-N) is a packet effect; the packet engine models it.

Paths are returned as directed link ids ``2*link + dir`` (``dir`` 0 when traversing
``link_a → link_b``, i.e. upward), padded with -1 to the longest path.
"""

from __future__ import annotations

import numpy as np

from aifabric.errors import InputError
from aifabric.flow.hashing import ROCE_DPORT, UDP_PROTO, ecmp_hashes, flow_sport, switch_salts
from aifabric.scenario import ROUTING_MODES, routing_mode
from aifabric.topology.core import HOST_TIER, Topology
from aifabric.topology.routing import ib_destination_rank, ib_tier_divisors

ROUTINGS = (*ROUTING_MODES, "adaptive")
# per-packet (per-cell): a flow's bytes use every equal-cost path
MULTIPATH = ("adaptive-packet", "spray", "scheduled")


def flow_routing(routing: str) -> str:
    """The flow model's mode for ``routing`` (the old spelling ``adaptive`` alone is ``flowlet``,
    the scenario default granularity); ``spray`` is refused with the reason (exit 2)."""
    mode = routing_mode(routing)
    if mode == "spray":
        raise InputError(
            "spray (oblivious per-packet spraying) is a packet-engine mode: on a plain RC NIC its "
            "cost is out-of-order arrival, NAKs and go-back-N, which a fluid flow model cannot show",
            field="fabric.routing",
            value=routing,
            allowed="sim.mode: packet, or routing adaptive-packet (a NIC that reorders), ecmp, flowlet, static",
        )
    return mode


SPLIT_BLOCK = 1024  # (source, destination) pairs split per kernel call; memory checked between calls
_FAR = np.int32(1 << 20)
_CHUNK = 262_144
_BFS_CELLS = 1 << 24


def path_model_bytes(num_switches: int, num_leaves: int, num_links: int) -> int:
    """Peak bytes of a :class:`PathModel`: the int32 switch × leaf distance table (both layouts), the BFS
    temporaries (bounded by ``_BFS_CELLS``) and per-link adjacency."""
    return (
        8 * num_switches * num_leaves  # dist and dist_t
        + 11 * min(_BFS_CELLS, 2 * num_links * max(num_leaves, 1))
        + 64 * num_links
    )


class PathModel:
    """Distances and padded adjacency of one topology, to route many flows at once."""

    def __init__(self, topo: Topology, same_hash_seed: bool = False):
        self.topo = topo
        # ECMP polarisation: every switch hashes with the same seed (the salt of node 0), so a
        # lower tier's choice repeats at the tier above
        self.same_hash_seed = same_hash_seed
        n = topo.num_nodes
        tier = topo.node_tier
        self.hosts = topo.hosts
        self.host_index = np.full(n, -1, dtype=np.int64)
        self.host_index[self.hosts] = np.arange(len(self.hosts))
        self.ib_rank = ib_destination_rank(topo)
        self.ib_div = ib_tier_divisors(topo)
        self.switches = topo.switches
        self.sw_index = np.full(n, -1, dtype=np.int64)
        self.sw_index[self.switches] = np.arange(len(self.switches))
        la = topo.link_a.astype(np.int64)
        lb = topo.link_b.astype(np.int64)
        # host uplinks (H, P), padded with -1
        host_end = np.where(tier[la] == HOST_TIER, la, np.where(tier[lb] == HOST_TIER, lb, -1))
        sw_end = np.where(tier[la] == HOST_TIER, lb, la)
        hl = np.flatnonzero((host_end >= 0) & (tier[sw_end] != HOST_TIER))
        h_of = self.host_index[host_end[hl]]
        order = np.lexsort((hl, h_of))
        hl, h_of = hl[order], h_of[order]
        counts = np.bincount(h_of, minlength=len(self.hosts))
        p = int(counts.max()) if len(counts) else 0
        if len(counts) and counts.min() == 0:
            raise InputError(
                "host without a link to a switch",
                field="topology",
                value=topo.node_names[int(self.hosts[np.argmin(counts)])],
            )
        start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        col = np.arange(len(hl)) - np.repeat(start, counts)
        self.up_link = np.full((len(self.hosts), p), -1, dtype=np.int64)
        self.up_node = np.full((len(self.hosts), p), -1, dtype=np.int64)
        self.up_link[h_of, col] = hl
        self.up_node[h_of, col] = sw_end[hl]
        # attachment switches (leaves)
        att_nodes = np.unique(sw_end[hl])
        self.att_nodes = att_nodes
        self.att_index = np.full(n, -1, dtype=np.int64)
        self.att_index[att_nodes] = np.arange(len(att_nodes))
        self.up_att = np.where(self.up_node >= 0, self.att_index[np.maximum(self.up_node, 0)], -1)
        # padded switch-to-switch neighbours per switch, ports in link-id order
        ss = np.flatnonzero((tier[la] != HOST_TIER) & (tier[lb] != HOST_TIER))
        src = np.concatenate([la[ss], lb[ss]])
        dst = np.concatenate([lb[ss], la[ss]])
        lid = np.concatenate([ss, ss])
        order = np.lexsort((lid, src))
        src, dst, lid = src[order], dst[order], lid[order]
        s_idx = self.sw_index[src]
        deg = np.bincount(s_idx, minlength=len(self.switches))
        dmax = int(deg.max()) if len(deg) and len(src) else 1
        st = np.concatenate([[0], np.cumsum(deg)[:-1]])
        c = np.arange(len(src)) - np.repeat(st, deg)
        self.nbr = np.full((len(self.switches), max(dmax, 1)), -1, dtype=np.int64)
        self.nbr_link = np.full_like(self.nbr, -1)
        self.nbr[s_idx, c] = dst
        self.nbr_link[s_idx, c] = lid
        self.nbr_sw = np.where(self.nbr >= 0, self.sw_index[np.maximum(self.nbr, 0)], -1)
        # BFS from every attachment switch over the switch graph: dist[s, a] (int32, _FAR = none),
        # one search per leaf in a numba kernel (aifabric.flow._bfs)
        from aifabric.flow._bfs import leaf_distances

        ns = len(self.switches)
        dist_t = leaf_distances(
            ns, self.sw_index[src], self.sw_index[dst], self.sw_index[att_nodes], int(_FAR), leaf_major=True
        )
        self.dist = np.ascontiguousarray(dist_t.T)
        #: the same table leaf-major, (leaves, switches): one destination leaf's distances are
        #: contiguous (aifabric.flow.symmetric walks them a leaf at a time)
        self.dist_t = dist_t

    # ---- distances ---------------------------------------------------------------------------
    def dist_to_host(self, sw: np.ndarray, d_host: np.ndarray) -> np.ndarray:
        """Hops from switches (switch indices, any shape) to hosts (host indices, same shape)."""
        best = np.full(np.shape(sw), _FAR, dtype=np.int32)
        valid_sw = sw >= 0
        for p in range(self.up_att.shape[1]):
            a = self.up_att[d_host, p]
            ok = valid_sw & (a >= 0)
            v = np.where(ok, self.dist[np.maximum(sw, 0), np.maximum(a, 0)], _FAR)
            best = np.minimum(best, v)
        return np.where(best < _FAR, best + 1, _FAR)

    # ---- routing -----------------------------------------------------------------------------
    def route(
        self,
        src: np.ndarray,
        dst: np.ndarray,
        routing: str = "ecmp",
        seed: int = 1,
        sport: np.ndarray | None = None,
    ) -> np.ndarray:
        """Directed link ids ``(F, L)`` (-1 padded) of each flow's path. ``src``/``dst`` are node
        ids of hosts; ``sport`` defaults to :func:`flow_sport` of the flow's position."""
        if routing not in ROUTINGS:
            raise InputError(
                "unknown routing", field="fabric.routing", value=routing, allowed=", ".join(ROUTINGS)
            )
        # per-packet modes: the flow's ECMP path stands for its latency (all equal-cost paths have
        # the same hops); the old spelling adaptive alone is flowlet (the scenario default)
        routing = "ecmp" if routing in MULTIPATH else routing_mode(routing)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        f = len(src)
        if sport is None:
            sport = flow_sport(np.arange(f))
        sport = np.asarray(sport, dtype=np.int64)
        bad = (self.host_index[src] < 0) | (self.host_index[dst] < 0)
        if f and bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                "flow endpoint is not a host", field="flows.src/dst", value=f"{src[i]}->{dst[i]}"
            )
        if f and (src == dst).any():
            raise InputError(
                "flow from a host to itself", field="flows.src/dst", value=int(src[src == dst][0])
            )
        self._flowlet_load = np.zeros(2 * self.topo.num_links, dtype=np.int64)  # flows per egress
        chunks = [
            self._route_chunk(
                src[i : i + _CHUNK], dst[i : i + _CHUNK], sport[i : i + _CHUNK], routing, seed, i
            )
            for i in range(0, f, _CHUNK)
        ]
        if not chunks:
            return np.zeros((0, 1), dtype=np.int64)
        width = max(c.shape[1] for c in chunks)
        return np.concatenate(
            [np.pad(c, ((0, 0), (0, width - c.shape[1])), constant_values=-1) for c in chunks]
        )

    def _choose(
        self,
        valid: np.ndarray,
        links: np.ndarray,
        node: np.ndarray,
        src,
        dst,
        sport,
        routing,
        seed,
        offset: int,
    ) -> np.ndarray:
        """Pick one valid option per row (options in link-id order) by the routing rule."""
        k = valid.sum(axis=1)
        if (k == 0).any():
            i = int(np.flatnonzero(k == 0)[0])
            t = self.topo
            raise InputError(
                "no route",
                field="topology",
                value=f"{t.node_names[int(src[i])]} -> {t.node_names[int(dst[i])]}",
            )
        if routing == "ecmp":
            salt_of = np.zeros_like(node) if self.same_hash_seed else node
            h = ecmp_hashes(src, dst, sport, ROCE_DPORT, UDP_PROTO, switch_salts(seed, salt_of))
            j = (h % k.astype(np.uint64)).astype(np.int64)
        elif routing == "static":
            j = (
                self.ib_rank[dst] // self.ib_div[np.minimum(self.topo.node_tier[node], len(self.ib_div) - 1)]
            ) % k
        else:  # flowlet: least-loaded egress at the flow's start, ties keep the hash
            salt_of = np.zeros_like(node) if self.same_hash_seed else node
            h = ecmp_hashes(src, dst, sport, ROCE_DPORT, UDP_PROTO, switch_salts(seed, salt_of))
            jh = (h % k.astype(np.uint64)).astype(np.int64)
            la = self.topo.link_a.astype(np.int64)
            dirs = (la[np.maximum(links, 0)] != node[:, None]).astype(np.int64)
            from aifabric.flow._flowlet_jit import _flowlet_pick  # numba only where flowlets run

            j = _flowlet_pick(valid, links, dirs, jh, self._flowlet_load)
        pos = np.argmax(np.cumsum(valid, axis=1) > j[:, None], axis=1)
        return links[np.arange(len(k)), pos]

    def _route_chunk(self, src, dst, sport, routing, seed, offset) -> np.ndarray:
        topo = self.topo
        f = len(src)
        d_h = self.host_index[dst]
        s_h = self.host_index[src]
        hops = []
        # first hop: host uplinks whose switch is nearest to dst
        up_sw = np.where(self.up_node[s_h] >= 0, self.sw_index[np.maximum(self.up_node[s_h], 0)], -1)
        dd = self.dist_to_host(up_sw, np.repeat(d_h[:, None], up_sw.shape[1], axis=1))
        valid = (self.up_link[s_h] >= 0) & (dd == dd.min(axis=1, keepdims=True)) & (dd < _FAR)
        link = self._choose(valid, self.up_link[s_h], src, src, dst, sport, routing, seed, offset)
        cur = np.where(topo.link_a[link] == src, topo.link_b[link], topo.link_a[link]).astype(np.int64)
        hops.append(2 * link + (topo.link_a[link] != src))
        active = cur != dst
        idx = np.arange(f)
        while active.any():
            a = idx[active]
            u = cur[a]
            dh = d_h[a]
            # attached to the destination? then the host link
            att = self.up_node[dh] == u[:, None]
            down = att.any(axis=1)
            nxt_link = np.full(len(a), -1, dtype=np.int64)
            if down.any():
                col = np.argmax(att[down], axis=1)
                nxt_link[down] = self.up_link[dh[down], col]
            rest = ~down
            if rest.any():
                r = a[rest]
                usw = self.sw_index[cur[r]]
                here = self.dist_to_host(usw, d_h[r])
                nb = self.nbr_sw[usw]
                dn = self.dist_to_host(nb, np.repeat(d_h[r][:, None], nb.shape[1], axis=1))
                valid = (nb >= 0) & (dn == (here - 1)[:, None])
                nxt_link[rest] = self._choose(
                    valid, self.nbr_link[usw], cur[r], src[r], dst[r], sport[r], routing, seed, offset
                )
            step = np.full(f, -1, dtype=np.int64)
            la = topo.link_a[nxt_link].astype(np.int64)
            step[a] = 2 * nxt_link + (la != u)
            hops.append(step)
            cur[a] = np.where(la == u, topo.link_b[nxt_link], la)
            active = cur != dst
            if len(hops) > topo.num_nodes:
                raise InputError("routing loop", field="topology")
        return np.stack(hops, axis=1)

    # ---- per-packet modes: every flow split evenly over its equal-cost paths ----------------------
    def split(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(fptr, flink, fw)``: flow ``i`` crosses directed links ``flink[fptr[i]:fptr[i+1]]``
        (ascending) carrying the shares ``fw`` of its bytes — at every hop its mass is divided evenly
        over the equal-cost next hops (the fluid limit of per-packet adaptive routing / spraying).
        Flows with the same (source, destination) split alike, so each pair is split once, in the
        numba kernel :func:`aifabric.flow._split_jit.split_flows` (bit-identical to the numpy
        expansion :meth:`_split_reference`, tested), and its entries are copied to every flow of
        the pair. The entries are checked against memory as they are built, extrapolated from the
        pairs split so far (a flow leaving its pod on a three-tier fabric spreads over every spine
        and core link of its plane: thousands of entries)."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        f = len(src)
        if not f:
            return np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0)
        n = self.topo.num_nodes
        uk, inv = np.unique(src * n + dst, return_inverse=True)
        memo = getattr(self, "_split_memo", None)  # the last pairs split (a step's QP variants repeat them)
        if memo is not None and np.array_equal(memo[0], uk):
            u_ptr, u_link, u_w = memo[1]
        else:
            # pairs grouped by the destination's attachment switches: the kernel finds each
            # switch's next hops towards them once per group
            u_src, u_dst = uk // n, uk % n
            by_dst = np.lexsort((np.arange(len(uk)), *self.up_att[self.host_index[u_dst]].T[::-1]))
            p_ptr, u_link, u_w = self._split_pairs(u_src[by_dst], u_dst[by_dst], f)
            pos = np.empty(len(uk), np.int64)
            pos[by_dst] = np.arange(len(uk))
            u_ptr = (p_ptr[:-1][pos], np.diff(p_ptr)[pos])  # start, count of each pair
            self._split_memo = (uk, (u_ptr, u_link, u_w))
        counts = u_ptr[1][inv]
        fptr = np.zeros(f + 1, np.int64)
        np.cumsum(counts, out=fptr[1:])
        total = int(fptr[-1])
        if len(uk) < f:  # the copies for repeated pairs (several QPs of one connection)
            _check_split_memory(total, f, f)
        from aifabric.flow._split_jit import gather_pairs

        flink, fw = np.empty(total, np.int64), np.empty(total)
        gather_pairs(u_ptr[0], inv.astype(np.int64), fptr, u_link, u_w, flink, fw)
        return fptr, flink, fw

    def _split_pairs(self, src: np.ndarray, dst: np.ndarray, flows: int):
        """Split distinct (src, dst) pairs in the kernel, :data:`SPLIT_BLOCK` pairs a call, growing
        its buffers as needed; the memory the whole step's ``flows`` will take is extrapolated and
        checked after the first block, the eighth and every 64th."""
        from aifabric.flow._split_jit import split_flows  # numba only where per-packet modes run

        topo = self.topo
        f = len(src)
        fptr = np.zeros(f + 1, np.int64)
        cap = 64 * min(f, SPLIT_BLOCK)
        flink = np.empty(cap, np.int64)
        fw = np.empty(cap)
        la = topo.link_a.astype(np.int64)
        lb = topo.link_b.astype(np.int64)
        start = blocks = 0
        while start < f:
            stop = min(f, start + SPLIT_BLOCK)
            while start < stop:
                start, status, bad = split_flows(
                    src, dst, self.host_index, self.sw_index, self.up_node, self.up_link, self.up_att,
                    self.nbr_sw, self.nbr_link, self.dist_t, la, lb, topo.num_nodes, int(_FAR),
                    fptr, flink, fw, start, stop,
                )  # fmt: skip
                if status:
                    what = "no route" if status == 1 else "routing loop"
                    raise InputError(
                        what,
                        field="topology",
                        value=f"{topo.node_names[src[bad]]} -> {topo.node_names[dst[bad]]}",
                    )
                if start < stop:  # buffers full: grow to the size the pairs so far extrapolate to
                    per = fptr[start] / max(start, 1)
                    cap = max(2 * cap, int(per * f * 1.1) + 1024)
                    _check_split_memory(int(fptr[start]) * flows // f, max(start, 1) * flows // f, flows)
                    flink = np.concatenate([flink[: fptr[start]], np.empty(cap - fptr[start], np.int64)])
                    fw = np.concatenate([fw[: fptr[start]], np.empty(cap - fptr[start])])
            blocks += 1
            if blocks in (1, 8) or blocks % 64 == 0:
                _check_split_memory(int(fptr[start]) * flows // f, max(start * flows // f, 1), flows)
        m = int(fptr[-1])
        return fptr, flink[:m].copy(), fw[:m].copy()

    def _split_reference(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The vectorised numpy expansion the kernel replaced (kept as the reference of the tests)."""
        topo = self.topo
        f = len(src)
        nd = 2 * topo.num_links
        d_h = self.host_index[dst]
        s_h = self.host_index[src]
        up_sw = np.where(self.up_node[s_h] >= 0, self.sw_index[np.maximum(self.up_node[s_h], 0)], -1)
        dd = self.dist_to_host(up_sw, np.repeat(d_h[:, None], up_sw.shape[1], axis=1))
        valid = (self.up_link[s_h] >= 0) & (dd == dd.min(axis=1, keepdims=True)) & (dd < _FAR)
        if f and (valid.sum(axis=1) == 0).any():
            i = int(np.flatnonzero(valid.sum(axis=1) == 0)[0])
            raise InputError(
                "no route", field="topology", value=f"{topo.node_names[src[i]]} -> {topo.node_names[dst[i]]}"
            )
        ent_f, ent_l, ent_w = [], [], []

        def expand(rows_f, rows_u, rows_m, ok, links):
            k = ok.sum(axis=1)
            rr, cc = np.nonzero(ok)
            lk = links[rr, cc]
            u = rows_u[rr]
            la = topo.link_a[lk].astype(np.int64)
            ent_f.append(rows_f[rr])
            ent_l.append(2 * lk + (la != u))
            ent_w.append(rows_m[rr] / k[rr])
            nxt = np.where(la == u, topo.link_b[lk], la).astype(np.int64)
            # merge rows at the same (flow, node): the mass adds, the row count stays bounded
            key = rows_f[rr] * topo.num_nodes + nxt
            uk, inv = np.unique(key, return_inverse=True)
            return uk // topo.num_nodes, uk % topo.num_nodes, np.bincount(inv, weights=rows_m[rr] / k[rr])

        fi, cur, m = expand(np.arange(f), src, np.ones(f), valid, self.up_link[s_h])
        hops = 0
        while len(fi):
            live = cur != dst[fi]
            fi, cur, m = fi[live], cur[live], m[live]
            if not len(fi):
                break
            dh = d_h[fi]
            att = self.up_node[dh] == cur[:, None]
            down = att.any(axis=1)
            nf_, nu, nm = [], [], []
            if down.any():
                a, b, c = expand(fi[down], cur[down], m[down], att[down], self.up_link[dh[down]])
                nf_.append(a), nu.append(b), nm.append(c)
            rest = ~down
            if rest.any():
                usw = self.sw_index[cur[rest]]
                here = self.dist_to_host(usw, dh[rest])
                nb = self.nbr_sw[usw]
                dn = self.dist_to_host(nb, np.repeat(dh[rest][:, None], nb.shape[1], axis=1))
                ok = (nb >= 0) & (dn == (here - 1)[:, None])
                if (ok.sum(axis=1) == 0).any():
                    raise InputError("no route", field="topology")
                a, b, c = expand(fi[rest], cur[rest], m[rest], ok, self.nbr_link[usw])
                nf_.append(a), nu.append(b), nm.append(c)
            fi, cur, m = np.concatenate(nf_), np.concatenate(nu), np.concatenate(nm)
            hops += 1
            if hops > topo.num_nodes:
                raise InputError("routing loop", field="topology")
        if not ent_f:
            return np.zeros(f + 1, np.int64), np.zeros(0, np.int64), np.zeros(0)
        key = np.concatenate(ent_f) * nd + np.concatenate(ent_l)
        uk, inv = np.unique(key, return_inverse=True)
        fw = np.bincount(inv, weights=np.concatenate(ent_w))
        flow_of = uk // nd
        fptr = np.zeros(f + 1, np.int64)
        np.cumsum(np.bincount(flow_of, minlength=f), out=fptr[1:])
        return fptr, (uk % nd).astype(np.int64), fw

    # ---- aggregate even-split loads (huge flow counts) -----------------------------------------
    def even_split_loads(self, src: np.ndarray, dst: np.ndarray, size: np.ndarray) -> np.ndarray:
        """Bytes per directed link when every flow's bytes are split evenly over the equal-cost
        next hops at every hop (adaptive routing's ideal, and ECMP's expectation). Routes a
        leaf-to-leaf traffic matrix instead of single flows: O(switches × leaves × ports)."""
        topo = self.topo
        loads = np.zeros(2 * topo.num_links)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        size = np.asarray(size, dtype=np.float64)
        s_h, d_h = self.host_index[src], self.host_index[dst]
        p = self.up_link.shape[1]
        na = len(self.att_nodes)
        mass = np.zeros((len(self.switches), na))
        for q in range(p):
            share = size / np.maximum((self.up_link[s_h] >= 0).sum(axis=1), 1)
            ok = self.up_link[s_h, q] >= 0
            lk = self.up_link[s_h[ok], q]
            up_dir = (topo.link_a[lk] != src[ok]).astype(np.int64)
            np.add.at(loads, 2 * lk + up_dir, share[ok])
            lk2 = self.up_link[d_h[ok], q]
            dn_dir = (topo.link_a[lk2] == dst[ok]).astype(np.int64)
            np.add.at(loads, 2 * lk2 + dn_dir, share[ok])
            sa = self.up_att[s_h[ok], q]
            da = self.up_att[d_h[ok], q]
            cross = sa != da
            np.add.at(mass, (self.sw_index[self.att_nodes[sa[cross]]], da[cross]), share[ok][cross])
        level = int(self.dist[self.dist < _FAR].max()) if na else 0
        for lev in range(level, 0, -1):
            s_i, a_i = np.nonzero((self.dist == lev) & (mass > 0))
            if not len(s_i):
                continue
            nb = self.nbr_sw[s_i]
            valid = (nb >= 0) & (self.dist[np.maximum(nb, 0), a_i[:, None]] == lev - 1)
            k = valid.sum(axis=1)
            m = mass[s_i, a_i] / k
            rr, cc = np.nonzero(valid)
            lk = self.nbr_link[s_i[rr], cc]
            u = self.switches[s_i[rr]]
            np.add.at(loads, 2 * lk + (topo.link_a[lk] != u), m[rr])
            np.add.at(mass, (nb[rr, cc], a_i[rr]), m[rr])
            mass[s_i, a_i] = 0.0
        return loads


SPLIT_ENTRY_BYTES = 40  # a (flow, link) entry: link id + share (16 B), twice while concatenated, + slack


def _check_split_memory(entries: int, done: int, total: int) -> None:
    """Refuse (exit 2, one line) a per-packet split whose entries, extrapolated from the flows
    split so far, would not fit: a flow leaving its pod on a three-tier fabric spreads over every
    spine and core link of its plane (thousands of entries), so the whole step's size is known
    only once its first blocks are split."""
    from aifabric import memory

    rest = entries / max(done, 1) * (total - done)
    memory.check(
        rest * SPLIT_ENTRY_BYTES,
        f"splitting {total:,} flows over their equal-cost paths (per-packet adaptive routing; "
        f"{entries / max(done, 1):,.0f} links per flow so far)",
        field="fabric.routing",
        hint="fewer flows or GPUs, or flowlet / ecmp routing (one path per flow)",
    )


def directed_rates_bps(topo: Topology) -> np.ndarray:
    """Capacity of each directed link id (``2*link + dir``): the link rate, both directions."""
    return np.repeat(topo.link_rate_bps.astype(np.float64), 2)


def link_rates_bps(topo: Topology, routing: str) -> np.ndarray:
    """The directed-link capacities a routing mode sees: the link rates, with a scheduled fabric's
    fabric links at their packet-byte rate under the cell tax (:mod:`aifabric.flow.scheduled`)."""
    rates = directed_rates_bps(topo)
    if routing == "scheduled":
        from aifabric.flow.scheduled import scheduled_rates_bps

        rates = scheduled_rates_bps(topo, rates)
    return rates


def directed_delays_ps(topo: Topology) -> np.ndarray:
    return np.repeat(topo.link_delay_ps.astype(np.float64), 2)
