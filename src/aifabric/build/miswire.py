"""What a miswire costs: the job's rail-local traffic on the as-built fabric against the plan.

The job's rail-local traffic is what the plan keeps under one leaf: on every planned leaf, a ring
over the NICs attached to it (each NIC sends one message to the next, as NCCL's rings do within
a rail). Planned, none of it crosses a spine. For each difference the fabric is the plan with that
difference alone applied (a link removed, moved, added or slowed), and the flow model
(:mod:`aifabric.flow`, ECMP paths and max-min fair rates) runs the same traffic on it:

* ``rail_traffic_moved`` — the share of rail traffic whose path now climbs above its leaf
  (0.12 = "this swap moves 12 % of rail traffic to the spine");
* ``rail_traffic_unroutable`` — the share with no path at all (a NIC cut off);
* ``rail_step_slowdown`` — the ring step's completion time as built / as planned (flow model).

Differences beyond :data:`MAX_COSTED` keep 0 and are counted in the summary; the summary also
gives the cost of all differences together.
"""

from __future__ import annotations

from collections import deque

import numpy as np

MAX_COSTED = 64
MESSAGE_BYTES = 16 * 2**20


def _node(end: tuple[str, str], devices: dict) -> str:
    role = devices.get(end[0], {}).get("role")
    if role in ("server", "aggregation-node"):
        return f"{end[0]}:{end[1].split('/')[0]}"
    return end[0]


def _tier(name: str, devices: dict, links: dict) -> int:
    dev = name.split(":")[0]
    x = devices.get(dev)
    if x is not None:
        return 0 if ":" in name else int(x.get("tier", 1))
    # not in the plan: one tier above its lowest planned neighbour
    near = [
        devices[d]["tier"]
        for (p, q) in links
        for d in (p.split(":")[0], q.split(":")[0])
        if name in (p, q) and d in devices
    ]
    return min(near, default=0) + 1


def _links(exp: dict, devices: dict) -> dict[tuple[str, str], float]:
    out = {}
    for x in exp.values():
        out[(_node(x["_a"], devices), _node(x["_b"], devices))] = float(x.get("rate_gbps") or 100.0)
    return out


def _applied(base: dict, exp: dict, devices: dict, effect: dict) -> dict:
    links = dict(base)
    for k in effect.get("remove", []):
        x = exp[k]
        links.pop((_node(x["_a"], devices), _node(x["_b"], devices)), None)
    for s in effect.get("add", []):
        rate = s.rate_gbps or float(np.median(list(base.values()))) if base else 100.0
        links[(_node(s.a, devices), _node(s.b, devices))] = rate
    for k, rate in effect.get("rate", []):
        x = exp[k]
        if rate:
            links[(_node(x["_a"], devices), _node(x["_b"], devices))] = float(rate)
    return links


def _topology(links: dict, devices: dict):
    from aifabric.topology import Topology

    nodes = sorted({n for ab in links for n in ab})
    tier = {n: _tier(n, devices, links) for n in nodes}
    nodes.sort(key=lambda n: (tier[n], n))
    idx = {n: i for i, n in enumerate(nodes)}
    pairs = [(a, b) if tier[a] <= tier[b] else (b, a) for a, b in links]
    rates = [links[ab] for ab in links]
    top = max(tier.values(), default=1)
    return Topology(
        name="as-built",
        kind="as-built",
        node_names=tuple(nodes),
        node_tier=np.array([tier[n] for n in nodes]),
        tier_names=tuple(
            ("host", "leaf", "spine", "core")[t] if t < 4 else f"tier{t}" for t in range(top + 1)
        ),
        link_a=np.array([idx[a] for a, _ in pairs], dtype=np.int64),
        link_b=np.array([idx[b] for _, b in pairs], dtype=np.int64),
        link_rate_bps=np.array([int(r * 1e9) for r in rates], dtype=np.int64),
        link_delay_ps=np.zeros(len(pairs), dtype=np.int64),
        link_length_m=np.full(len(pairs), np.nan),
    )


def rail_rings(base: dict, devices: dict) -> list[tuple[str, str]]:
    """(src, dst) NIC pairs: a ring over the server NICs of each planned leaf."""
    under: dict[str, list[str]] = {}
    for a, b in base:
        for nic, sw in ((a, b), (b, a)):
            server = ":" in nic and devices.get(nic.split(":")[0], {}).get("role") == "server"
            if server and devices.get(sw, {}).get("tier") == 1:
                under.setdefault(sw, []).append(nic)
    flows = []
    for _sw, nics in sorted(under.items()):
        nics = sorted(set(nics))
        if len(nics) > 1:
            flows += [(nics[i], nics[(i + 1) % len(nics)]) for i in range(len(nics))]
    return flows


def _component(links: dict) -> dict[str, int]:
    adj: dict[str, list[str]] = {}
    for a, b in links:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    comp: dict[str, int] = {}
    for start in adj:
        if start in comp:
            continue
        comp[start] = len(comp)
        q = deque([start])
        while q:
            v = q.popleft()
            for w in adj[v]:
                if w not in comp:
                    comp[w] = comp[start]
                    q.append(w)
    return comp


def run_rings(links: dict, devices: dict, flows: list[tuple[str, str]]) -> dict:
    """Route and run the ring flows on a fabric: flows above the leaf, without a path, and the
    step time (max FCT, µs) of those with one."""
    from aifabric.flow.engine import simulate_flows
    from aifabric.flow.paths import PathModel

    comp = _component(links)
    ok = [(s, d) for s, d in flows if s in comp and d in comp and comp[s] == comp[d]]
    out = {"flows": len(flows), "unroutable": len(flows) - len(ok), "above_leaf": 0, "step_us": 0.0}
    if not ok:
        return out
    topo = _topology(links, devices)
    idx = {n: i for i, n in enumerate(topo.node_names)}
    src = np.array([idx[s] for s, _ in ok])
    dst = np.array([idx[d] for _, d in ok])
    paths = PathModel(topo).route(src, dst, routing="ecmp")
    out["above_leaf"] = int(((paths >= 0).sum(axis=1) > 2).sum())
    res = simulate_flows(topo, {"src": src, "dst": dst, "size_bytes": np.full(len(ok), MESSAGE_BYTES)})
    out["step_us"] = float(res["fct_us"].max())
    return out


def rail_costs(exp: dict, devices: dict, diffs: list[dict]) -> dict:
    """Fill each difference's ``rail_traffic_moved`` (and unroutable share, step slowdown) in
    place; return the summary keys (planned ring, all differences together)."""
    base = _links(exp, devices)
    flows = rail_rings(base, devices)
    if not flows:
        return {"rail_traffic": "no rail-local traffic in the plan (no leaf with two server NICs)"}
    planned = run_rings(base, devices, flows)
    n = planned["flows"]

    def effect_of(effect: dict) -> dict:
        r = run_rings(_applied(base, exp, devices, effect), devices, flows)
        return {
            "rail_traffic_moved": round((r["above_leaf"] - planned["above_leaf"]) / n, 4),
            "rail_traffic_unroutable": round(r["unroutable"] / n, 4),
            "rail_step_slowdown": round(r["step_us"] / planned["step_us"], 4) if r["step_us"] else None,
        }

    for d in diffs[:MAX_COSTED]:
        d.update(effect_of(d["_effect"]))
    together = {"remove": [], "add": [], "rate": []}
    for d in diffs:
        for k in together:
            together[k] += d["_effect"].get(k, [])
    return {
        "rail_traffic": {
            "flows": n,
            "message_bytes": MESSAGE_BYTES,
            "planned_step_us": round(planned["step_us"], 3),
            "costed_differences": min(len(diffs), MAX_COSTED),
            "all_differences": effect_of(together),
            "basis": "a ring over the NICs of each planned leaf, ECMP routing, max-min flow model",
        }
    }
