"""The routing modes checked on one case (issue 12): an 8 × 8 × 8 leaf-spine (8 leaves, 8 spines,
8 hosts per leaf, 100 Gb/s links, 1 µs per link), a random permutation of 2 MB flows, seeds 1–3.

Metric — **mean flow efficiency**: the mean over all 64 flows of the flow's alone-on-the-fabric
FCT divided by its FCT (1.0 = every flow at line rate). The slowest-flow efficiency (the largest
alone-on-the-fabric FCT over the slowest FCT: when the step ends, what ``compare`` uses) is
reported next to it.

Each mode runs on three models that share nothing but the topology builder and the flows:

* the packet engine (:mod:`aifabric.sim`), as ``aifabric simulate`` runs it (RoCE, PFC on);
* the flow model (:func:`aifabric.flow.simulate_flows`), as ``simulate --mode flow`` runs it;
* the measure stage's figure (:func:`aifabric.stages.measure.network.routed_efficiency`, what
  ``compare`` calls per pattern), one QP per connection.

References, computed here without the engines (:func:`fluid_reference`): each flow placed on a
spine — ``ecmp``: uniformly at random per flow (the balls-into-bins model of a 5-tuple hash;
:data:`MC_DRAWS` draws per seed), ``static``: D-mod-k (spine = the destination's index on its
leaf, as OpenSM's fat-tree LFT does) — then a max-min fluid progressive filling recomputed at
each completion gives every flow's FCT (latency ignored: ~3 % of a 2 MB flow's FCT here).
``adaptive-packet``: a non-blocking leaf-spine under an even split carries the permutation at
line rate (1.0); the target is ≥ 0.85. ``scheduled`` (a Jericho3-AI-class cell fabric): the same
non-blocking ideal, target ≥ 0.9 — Broadcom presents the fabric as "perfect load balancing",
"congestion-free" (:mod:`aifabric.flow.scheduled`). ``flowlet``: its flows are spread evenly over
the spines at the source leaf (a new flowlet avoids a loaded uplink) and kept (back-to-back RDMA
leaves no 10 µs gap), so the reference is a Monte-Carlo of that placement — each leaf's cross-leaf
flows on distinct random spines — then the same max-min filling. ``spray`` has no closed form:
its row shows the packet engine only (it pays NAK + go-back-N on a plain RC NIC, which only the
packet engine models).
"""

from __future__ import annotations

import numpy as np

LEAVES = SPINES = HOSTS_PER_LEAF = 8
TOPOLOGY = {
    "kind": "leaf-spine",
    "leaves": LEAVES,
    "spines": SPINES,
    "hosts_per_leaf": HOSTS_PER_LEAF,
    "link_rate": "100Gbps",
    "link_delay": "1us",
}
FLOW_SIZE = "2MB"
SEEDS = (1, 2, 3)
MC_DRAWS = 300
ECMP_TOLERANCE = 0.15  # ecmp within ±15 % of the balls-into-bins / max-min reference
ADAPTIVE_TARGET = 0.85  # adaptive-packet ≥ 0.85 of ideal
SCHEDULED_TARGET = 0.9  # scheduled ≥ 0.9 of ideal ("perfect load balancing", aifabric.flow.scheduled)
FLOWLET_TOLERANCE = 0.15  # flowlet within ±15 % of its placement reference, as ecmp
AGREEMENT = 0.10  # packet engine, flow model and measure stage within 10 % of each other
METRIC = "mean flow efficiency (mean over flows of alone-on-the-fabric FCT / FCT)"
# (row, technology, routing mode); IB's row uses compare's default (aifabric.stages.design.fabrics.ROUTING)
CASES = (
    ("ecmp", "roce", "ecmp"),
    ("flowlet", "roce", "flowlet"),
    ("adaptive-packet", "roce", "adaptive-packet"),
    ("spray", "roce", "spray"),
    ("scheduled (Jericho3-AI class)", "roce", "scheduled"),
    ("static (IB LFT)", "infiniband", "static"),
    ("IB default (compare)", "infiniband", None),
)


def _scenario(technology: str, routing: str, seed: int):
    from aifabric.scenario import scenario_from_dict

    fab: dict = {
        "technology": technology,
        "mtu": "4000B" if technology == "roce" else "4096B",
        "switch_latency": "0ns",
        "switch_buffer": "32MiB",
        "routing": routing,
    }
    if technology == "roce":
        fab.update(
            header="64B",
            pfc={"enabled": True, "mode": "static", "xoff": "60960B", "xon": "48768B"},
            ecn={"enabled": False},
        )
    return scenario_from_dict(
        {
            "name": f"routing-{routing}-{seed}",
            "seed": seed,
            "topology": TOPOLOGY,
            "fabric": fab,
            "workload": {"kind": "permutation", "flow_size": FLOW_SIZE},
            "sim": {"until": "100ms", "progress": False},
        }
    )


def _effs(ideal, fct) -> tuple[float, float]:
    ideal, fct = np.asarray(ideal, float), np.asarray(fct, float)
    return float(np.mean(ideal / fct)), float(ideal.max() / fct.max())


def _maxmin_rates(paths: list[np.ndarray], active: np.ndarray, n_links: int) -> np.ndarray:
    """Max-min fair rates (units of the common link capacity) by progressive filling."""
    rate = np.zeros(len(paths))
    cap = np.ones(n_links)
    todo = set(np.flatnonzero(active).tolist())
    while todo:
        cnt = np.zeros(n_links)
        for i in todo:
            cnt[paths[i]] += 1
        share = np.where(cnt > 0, cap / np.maximum(cnt, 1), np.inf)
        lk = int(np.argmin(share))
        level = share[lk]
        for i in [i for i in todo if lk in paths[i]]:
            rate[i] = level
            cap[paths[i]] -= level
            todo.discard(i)
    return rate


def _fluid_efficiency(src: np.ndarray, dst: np.ndarray, spine: np.ndarray) -> float:
    """Mean flow efficiency of equal-size flows placed on ``spine`` (cross-leaf flows), max-min
    sharing recomputed at each completion, latency ignored."""
    h = LEAVES * HOSTS_PER_LEAF
    ls, ld = src // HOSTS_PER_LEAF, dst // HOSTS_PER_LEAF
    paths = []
    for i in range(len(src)):
        p = [src[i], h + dst[i]]  # host uplink, host downlink
        if ls[i] != ld[i]:
            p += [2 * h + ls[i] * SPINES + spine[i], 2 * h + LEAVES * SPINES + spine[i] * LEAVES + ld[i]]
        paths.append(np.array(p))
    n_links = 2 * h + 2 * LEAVES * SPINES
    left = np.ones(len(src))
    fct = np.zeros(len(src))
    t = 0.0
    active = np.ones(len(src), bool)
    while active.any():
        r = _maxmin_rates(paths, active, n_links)
        dt = float(np.min(left[active] / r[active]))
        t += dt
        left[active] -= r[active] * dt
        done = active & (left <= 1e-9)
        fct[done] = t
        active &= ~done
    return float(np.mean(1.0 / fct))


def fluid_reference(src: np.ndarray, dst: np.ndarray, placement: str, seed: int = 0) -> float:
    """The reference mean flow efficiency of a permutation (``src``/``dst`` host ids, hosts
    numbered leaf by leaf): ``hash`` — the mean over :data:`MC_DRAWS` uniform random spine
    choices; ``dmodk`` — spine = destination index on its leaf (deterministic); ``spread`` — the
    mean over :data:`MC_DRAWS` placements with each leaf's cross-leaf flows on distinct random
    spines (flowlets that avoid a loaded uplink at their start)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if placement == "dmodk":
        return _fluid_efficiency(src, dst, dst % HOSTS_PER_LEAF % SPINES)
    rng = np.random.default_rng(seed)
    if placement == "spread":
        leaf = src // HOSTS_PER_LEAF

        def draw():
            spine = np.zeros(len(src), np.int64)
            for lf in np.unique(leaf):
                idx = np.flatnonzero(leaf == lf)
                spine[idx] = rng.permutation(SPINES)[: len(idx)]
            return spine

        return float(np.mean([_fluid_efficiency(src, dst, draw()) for _ in range(MC_DRAWS)]))
    return float(
        np.mean([_fluid_efficiency(src, dst, rng.integers(0, SPINES, len(src))) for _ in range(MC_DRAWS)])
    )


def routing_table() -> list[dict]:
    """One row per mode: packet engine, flow model and measure stage (mean over :data:`SEEDS`),
    the reference where one exists, and the checks."""
    from aifabric.flow import simulate_flows
    from aifabric.sim import simulate
    from aifabric.stages.design.fabrics import ROUTING
    from aifabric.stages.measure.network import routed_efficiency
    from aifabric.topology.builders import from_spec

    topo = None
    rows = []
    for name, tech, mode in CASES:
        mode = mode or ROUTING[tech]
        pk, fm, ms, ref = [], [], [], []
        for seed in SEEDS:
            sc = _scenario(tech, mode, seed)
            topo = topo or from_spec(sc.topology)
            r = simulate(sc, topology=topo)
            f = r.flows
            pk.append(_effs(f["ideal_fct_us"], f["fct_us"]))
            flows = f[["id", "src", "dst", "size_bytes"]]
            if mode != "spray":
                df = simulate_flows(
                    topo,
                    flows,
                    routing=mode,
                    seed=seed,
                    mtu_bytes=sc.fabric.mtu_bytes,
                    header_bytes=sc.fabric.header_bytes,
                )
                fm.append(_effs(df["ideal_fct_us"], df["fct_us"]))
                _, fct, ideal = routed_efficiency(topo, flows, tech, seed, 0.0, mode)
                ms.append(_effs(ideal, fct))
            src, dst = f["src"].to_numpy(), f["dst"].to_numpy()
            if mode == "ecmp":
                ref.append(fluid_reference(src, dst, "hash", seed))
            elif mode == "static":
                ref.append(fluid_reference(src, dst, "dmodk"))
            elif mode == "flowlet":
                ref.append(fluid_reference(src, dst, "spread", seed))
            elif mode in ("adaptive-packet", "scheduled"):
                ref.append(1.0)

        def mean(xs, k):
            return float(np.mean([x[k] for x in xs])) if xs else None

        row = {
            "mode": name,
            "technology": tech,
            "routing": mode,
            "packet": mean(pk, 0),
            "flow": mean(fm, 0),
            "measure": mean(ms, 0),
            "packet_slowest": mean(pk, 1),
            "flow_slowest": mean(fm, 1),
            "measure_slowest": mean(ms, 1),
            "reference": float(np.mean(ref)) if ref else None,
        }
        figs = [row[k] for k in ("packet", "flow", "measure") if row[k] is not None]
        row["spread"] = (max(figs) - min(figs)) / max(figs) if len(figs) > 1 else None
        row["engines_agree"] = None if row["spread"] is None else bool(row["spread"] <= AGREEMENT)
        if mode in ("ecmp", "static", "flowlet"):
            row["reference_kind"] = {
                "ecmp": "balls-into-bins + max-min (MC)",
                "static": "D-mod-k + max-min",
                "flowlet": "even spread at the leaf + max-min (MC)",
            }[mode]
            row["vs_reference"] = row["packet"] / row["reference"] - 1
            tol = FLOWLET_TOLERANCE if mode == "flowlet" else ECMP_TOLERANCE
            row["within_reference"] = bool(abs(row["vs_reference"]) <= tol)
        elif mode in ("adaptive-packet", "scheduled"):
            target = ADAPTIVE_TARGET if mode == "adaptive-packet" else SCHEDULED_TARGET
            row["reference_kind"] = f"non-blocking ideal (target ≥ {target})"
            row["vs_reference"] = row["packet"] / row["reference"] - 1
            row["within_reference"] = bool(row["packet"] >= target)
        else:
            row["reference_kind"] = "none (no closed form)"
            row["vs_reference"] = None
            row["within_reference"] = None
        rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    def f(x, fmt="{:.3f}"):
        return "—" if x is None else fmt.format(x)

    out = [
        f"Routing modes on an 8×8×8 leaf-spine permutation (100G, 2 MB flows, seeds {SEEDS[0]}–{SEEDS[-1]}); "
        f"metric: {METRIC}; slowest-flow efficiency in brackets",
        "",
        "| mode | fabric / routing | packet engine | flow model | measure (compare) | reference | "
        "vs reference | engines agree (≤10 %) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ref = "—" if r["reference"] is None else f"{r['reference']:.3f} ({r['reference_kind']})"
        vs = "—" if r["vs_reference"] is None else f"{r['vs_reference']:+.1%}"
        if r["within_reference"] is not None:
            vs += " ok" if r["within_reference"] else " OUT"
        agree = "—" if r["engines_agree"] is None else ("yes" if r["engines_agree"] else "no")
        agree += "" if r["spread"] is None else f" ({r['spread']:.1%})"
        out.append(
            f"| {r['mode']} | {r['technology']} / {r['routing']} | {f(r['packet'])} [{f(r['packet_slowest'])}] | "
            f"{f(r['flow'])} [{f(r['flow_slowest'])}] | {f(r['measure'])} [{f(r['measure_slowest'])}] | {ref} | "
            f"{vs} | {agree} |"
        )
    return "\n".join(out)


__all__ = ["CASES", "METRIC", "fluid_reference", "format_table", "routing_table"]
