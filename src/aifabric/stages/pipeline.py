"""``aifabric compare``: both fabrics designed, priced and simulated for one cluster and workload,
then a recommendation whose reasons carry the numbers.

Per fabric (InfiniBand and RoCE at the NIC rate rule 7 picks):

1. :func:`aifabric.design.plan.plan_fabric` → topology size, BOM, capex, power.
2. The rail-optimised topology is built and a **flow-level** run (max-min fair, the fabric's
   routing) of one ring step of the data-parallel all-reduce — every node sending to the next on
   every rail at once — measures the achieved fraction of line rate: InfiniBand uses adaptive
   routing (NCCL enables AR on IB by default, S15), RoCE uses ECMP hashing of the RoCEv2 UDP source
   port (NCCL leaves AR off on RoCE, S15), so hash collisions show up as a slower step.
3. The training model's collectives (each parallel group, all groups at once) follow the α-β
   model: α = NCCL's per-step latency constant (S16) + the path's switch hops × the fabric's switch
   latency + propagation; β = link rate × payload/(payload + header) × the step efficiency
   measured in 2; NVLink collectives use the measured ~370 GB/s ring busbw of 8 × H100 (S3),
   scaled by NVLink rate for other GPUs. The busbw-vs-size sweep over the whole cluster comes from
   :func:`aifabric.workload.collectives.nccl_sweep` on the same topology and routing (flow
   engine, NCCL's protocol choice; the better of ring and tree per size, as NCCL's tuner picks).
4. :mod:`aifabric.workload.training` turns the collectives into iteration time, tokens/s and cost
   per trained token.

Risk (:mod:`aifabric.stages.testbed`): for the RoCE fabric, each lossless mistake the packet engine
reproduces (ECN off, DCQCN left at the NIC firmware defaults, a PFC threshold mismatch between
switch batches, a PAUSE storm from a faulty switch) is run on a packet-level leaf-spine testbed at the fabric's NIC rate, the ring-step
slowdown is fed back into the training model, and the expected loss is the team's
misconfiguration probability × that iteration slowdown. A RoCE plan that relies on adaptive
routing (``--roce-routing adaptive``) also carries "adaptive routing off" (flow model with ECMP).
InfiniBand has none of these knobs; its risk is 0 (subnet-manager mistakes are not modelled).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from aifabric.design.plan import plan_fabric
from aifabric.errors import InputError
from aifabric.stages.decide import (
    MISCONFIG_PROBABILITY,
    MISCONFIG_PROBABILITY_BASIS,
    FabricEvidence,
    nic_rate_for,
    recommend,
)
from aifabric.stages.testbed import (
    CONGESTION_SHARE,
    CONGESTION_SHARE_BASIS,
    MISCONFIGS,
    SMALL_JITTER_DUTY,
    measure,
    slowed_comm,
    testbed_for,
)
from aifabric.workload.training import default_parallelism, get_model, iteration_time, training_cost

H100_NVLINK_RING_BUSBW_GBPS = 370.0 * 8  # measured 8 × H100 ring busbw ~370 GB/s (S3), in Gb/s
H100_NVLINK_GBYTES = 450.0  # per direction (S3/S86)
SWITCH_HOP_NS = {"infiniband": 130.0, "roce": 600.0}  # defaults.yaml latency.*_switch_hop (low confidence)
NIC_PATH_NS = 550.0 + 550.0  # defaults.yaml latency.nic_tx + nic_rx (estimate, midpoints of 0.3–0.8 µs)
HEADER_BYTES = {"infiniband": 26, "roce": 64}
MTU_BYTES = {"infiniband": 4096, "roce": 4096}
ROUTING = {"infiniband": "adaptive", "roce": "ecmp"}
TRAIN_TOKENS = 15e12  # Llama 3 405B was pre-trained on ~15.6T tokens (Llama 3 paper) — the default "N tokens"
SERVER_USD_PER_GPU = 310_000 / 8  # HGX H100 node incl. 8 × 400G IB NICs ~310 k USD (S60, low, Aug 2024)
SWEEP_SIZES = [2**i for i in range(3, 34, 2)]  # 8 B … 8 GiB, ×4 steps (nccl-tests -f 4 style)


def _nccl_step_us(domain: str) -> float:
    """NCCL's tuner per-step latency, ring/Simple (the bandwidth-bound protocol), hardware-facts §D."""
    from aifabric.workload.collectives import nccl_constants

    return float(nccl_constants()[domain]["ring"]["simple"])


@dataclass
class FabricComm:
    """Collective-time model of one fabric (see module docstring)."""

    technology: str
    link_rate_bps: float
    step_efficiency: float
    path_latency_us: float
    nvlink_busbw_gbps: float
    a2a_efficiency: float = 1.0  # measured on the same-rail random permutation (all-to-all-like)
    gpu: str | None = None  # NVLS-capable GPU id: NVLink all-reduce also weighs NVLS (NCCL's tuner does)

    def _alpha_net(self) -> float:
        return (_nccl_step_us("net") + self.path_latency_us) * 1e-6

    def _beta_net(self, op: str = "all-reduce") -> float:
        payload = MTU_BYTES[self.technology]
        goodput = self.link_rate_bps * payload / (payload + HEADER_BYTES[self.technology])
        eff = self.a2a_efficiency if op in ("all-to-all", "send-recv") else self.step_efficiency
        return goodput * eff / 8.0  # bytes/s

    def collective_s(self, op: str, size_bytes: float, ranks: int, span: str) -> float:
        n = max(2, int(ranks))
        if span == "nvlink":
            alpha, beta = _nccl_step_us("nvlink") * 1e-6, self.nvlink_busbw_gbps * 1e9 / 8
            if op == "all-reduce" and self.gpu is not None:
                ring = 2 * (n - 1) * alpha + size_bytes * 2 * (n - 1) / n / beta
                nvls = _nvls_allreduce_s(self.gpu, n, size_bytes)
                return ring if nvls is None else min(ring, nvls)
        else:
            alpha, beta = self._alpha_net(), self._beta_net(op)
        if op == "all-reduce":
            return 2 * (n - 1) * alpha + size_bytes * 2 * (n - 1) / n / beta
        if op in ("all-gather", "reduce-scatter", "all-to-all"):
            return (n - 1) * alpha + size_bytes * (n - 1) / n / beta
        if op in ("send-recv", "broadcast"):
            return alpha + size_bytes / beta
        raise InputError(
            "unknown collective",
            field="op",
            value=op,
            allowed="all-reduce, all-gather, reduce-scatter, all-to-all, send-recv, broadcast",
        )


@lru_cache(maxsize=64)
def _nvls_busbw_bytes(gpu: str, n: int) -> float | None:
    from aifabric.workload.collectives import nvlink_busbw_gbps

    busbw, algo = nvlink_busbw_gbps("all-reduce", gpu, n)
    return busbw * 1e9 if algo == "nvls" else None


def _nvls_allreduce_s(gpu: str, n: int, size_bytes: float) -> float | None:
    """NVLS all-reduce inside one server (NVSwitch reduction + multicast, hardware-facts §D/§G):
    NCCL's one NVLS latency (25 µs, S16) + size at the NVLS busbw (480 GB/s on 8 × H100, S3/S80);
    None when the GPU has no NVLS or the ring is faster at large sizes."""
    from aifabric.workload.collectives import nccl_constants

    bw = _nvls_busbw_bytes(gpu, n)
    if bw is None:
        return None
    return float(nccl_constants()["nvlink"]["nvls"]["simple"]) * 1e-6 + size_bytes * 2 * (n - 1) / n / bw


def busbw_sweep(
    topo, technology: str, gpu: str, hop_ns: float, seed: int, gpus: int, routing: str
) -> list[dict]:
    """All-reduce over every GPU, nccl-tests sizes 8 B … 8 GiB, with NCCL's tuner choice per size
    (``algorithm="auto"``: ring, tree, and NVLSTree on NVSwitch GPUs; protocol too), flow engine
    with the fabric's routing. busbw in Gb/s."""
    if topo is None:
        return []
    from aifabric.workload.collectives import nccl_sweep

    df = nccl_sweep(
        "all-reduce",
        SWEEP_SIZES,
        topo,
        algorithm="auto",
        engine="flow",
        routing=routing,
        technology=technology,
        gpu=gpu,
        seed=seed,
        switch_latency_ps=hop_ns * 1000,
        header_bytes=HEADER_BYTES[technology],
        mtu_bytes=MTU_BYTES[technology],
    )
    return [
        {
            "size_bytes": int(r.size_bytes),
            "time_us": float(r.time_us),
            "busbw_gbps": float(r.busbw_gbps) * 8,
            "algorithm": str(r.algorithm),
            "protocol": r.protocol,
        }
        for r in df.itertuples(index=False)
    ]


def ring_step_flows(gpus: int, gpus_per_node: int, group_nodes: int, size_bytes: int) -> dict:
    """Flows of one ring step of the DP all-reduce on every rail at once: node i → i+1 inside each
    group of ``group_nodes`` consecutive nodes (host id = node · g + rail)."""
    nodes = gpus // gpus_per_node
    node = np.arange(nodes)
    group_start = (node // group_nodes) * group_nodes
    nxt = group_start + (node - group_start + 1) % group_nodes
    src = (node[:, None] * gpus_per_node + np.arange(gpus_per_node)[None, :]).ravel()
    dst = (nxt[:, None] * gpus_per_node + np.arange(gpus_per_node)[None, :]).ravel()
    keep = src != dst
    return {"src": src[keep], "dst": dst[keep], "size_bytes": np.full(int(keep.sum()), size_bytes)}


def rail_permutation_flows(gpus: int, gpus_per_node: int, size_bytes: int, seed: int) -> dict:
    """Every GPU sends to the same-rail GPU of a random other node (a seeded node derangement per
    rail): the all-to-all-like pattern where hash collisions on leaf uplinks show."""
    nodes = gpus // gpus_per_node
    rng = np.random.default_rng(seed)
    src, dst = [], []
    for rail in range(gpus_per_node):
        perm = rng.permutation(nodes)
        while nodes > 1 and np.any(perm == np.arange(nodes)):
            perm = rng.permutation(nodes)
        src.append(np.arange(nodes) * gpus_per_node + rail)
        dst.append(perm * gpus_per_node + rail)
    src_a, dst_a = np.concatenate(src), np.concatenate(dst)
    return {"src": src_a, "dst": dst_a, "size_bytes": np.full(len(src_a), size_bytes)}


def measure_step(topo, technology: str, flows: dict, seed: int, switch_latency_ps: float, routing: str):
    """Flow-level run of one ring step; returns (efficiency, fct_us array). Efficiency = the
    alone-on-the-fabric FCT over the slowest flow's FCT (a ring step ends with its slowest flow)."""
    from aifabric.flow import simulate_flows

    df = simulate_flows(
        topo,
        flows,
        routing=routing,
        seed=seed,
        switch_latency_ps=switch_latency_ps,
        mtu_bytes=MTU_BYTES[technology],
        header_bytes=HEADER_BYTES[technology],
    )
    eff = float(df["ideal_fct_us"].max() / df["fct_us"].max())
    return min(1.0, eff), df["fct_us"].to_numpy()


def measure_fabric(
    topo,
    technology: str,
    ring_flows: dict,
    perm_flows: dict | None,
    seed: int,
    switch_latency_ps: float,
    routing: str,
) -> tuple[float, np.ndarray, float, np.ndarray]:
    """Ring-step efficiency (mean over three hash seeds: the expected collision cost, not one
    draw) with the first seed's FCTs, and the permutation's efficiency and FCTs (1.0 / empty when
    there is no permutation)."""
    effs, ring_fct = [], np.zeros(0)
    for s in range(3):
        e, f = measure_step(topo, technology, ring_flows, seed + s, switch_latency_ps, routing)
        effs.append(e)
        if s == 0:
            ring_fct = f
    a2a_eff, perm_fct = 1.0, np.zeros(0)
    if perm_flows is not None:
        a2a_eff, perm_fct = measure_step(topo, technology, perm_flows, seed, switch_latency_ps, routing)
    return float(np.mean(effs)), ring_fct, a2a_eff, perm_fct


def _iteration_slowdown(
    model, par, gpus, gpu, comm, it, mfu, gpn, factor: float = 1.0, changed: FabricComm | None = None
) -> float:
    """Iteration slowdown when every network collective's bandwidth term is ``factor``× slower
    (or, with ``changed``, on that collective model instead of ``comm``); without a training
    iteration (inference, storage, trading), the communication slowdown ``factor − 1``."""
    if it is None:
        return factor - 1
    slow = iteration_time(
        model,
        par,
        gpus,
        float(gpu.bf16_tflops),
        changed or slowed_comm(comm, factor),
        mfu=mfu,
        gpus_per_node=gpn,
    )
    return slow.iteration_s / it.iteration_s - 1


def _jitter_evidence(rm, model, par, gpus, gpu, comm, it, mfu, gpn) -> dict:
    """The jitter claim's numbers: the storm sweep (quiet traffic) mapped to the iteration."""
    sweep = [
        {
            "duty": r["duty"],
            "comm_slowdown": r["comm_slowdown"],
            "slowdown": _iteration_slowdown(
                model, par, gpus, gpu, comm, it, mfu, gpn, 1 + max(0.0, r["comm_slowdown"])
            ),
        }
        for r in rm.jitter_sweep
    ]
    small = next((r for r in sweep if r["duty"] == SMALL_JITTER_DUTY), None)
    need = next((r["duty"] for r in sweep if r["slowdown"] >= 0.2), None)
    return {
        "sweep": sweep,
        "small": small,
        "duty_for_20pct": need,
        "slowdown_of": "training iteration" if it is not None else "network communication",
    }


def compare(
    adv,
    catalog,
    model_name: str | None = None,
    seed: int = 1,
    mfu: float = 0.40,
    progress=None,
    congestion_share: float = CONGESTION_SHARE,
) -> dict:
    """Run the comparison; returns the JSON-ready result (interface.md keys + report data).

    ``adv.roce_routing`` picks ECMP (NCCL's RoCE default) or adaptive routing (Spectrum-X class
    switches) for the RoCE fabric; InfiniBand always routes adaptively. ``congestion_share`` is
    the share of communication time the risk model spends congested (:mod:`aifabric.stages.testbed`)."""
    if not 0 <= congestion_share <= 1:
        raise InputError(
            "must be between 0 and 1",
            field="--congestion-share",
            value=congestion_share,
            allowed="a fraction in [0, 1]",
        )
    jitter = None
    t0 = time.perf_counter()
    tick = progress or (lambda msg: None)
    gpu = catalog.get("gpu", adv.gpu)
    gpn = int(gpu.gpus_per_node or 8)
    nic_rate, rate_reason = nic_rate_for(gpu)
    roce_key = "roce-800g" if nic_rate >= 800 else "roce-400g"
    model = None
    par = None
    if adv.workload == "training":
        model = get_model(model_name or adv.model or "llama3-70b")
        if adv.gpus > gpn:
            par = default_parallelism(model, adv.gpus, gpn, float(gpu.hbm_gbytes or 80))
    nvl_busbw = (
        H100_NVLINK_RING_BUSBW_GBPS
        * float(gpu.nvlink_gbytes_per_s or H100_NVLINK_GBYTES)
        / H100_NVLINK_GBYTES
    )
    from aifabric.workload.collectives import NVLS_GPUS

    nvls_gpu = adv.gpu if adv.gpu in NVLS_GPUS else None
    evidence: dict[str, FabricEvidence] = {}
    fabrics_out = []
    if adv.gpus > gpn and adv.gpus % gpn:
        raise InputError(f"must be a multiple of {gpn} GPUs per node", field="--gpus", value=adv.gpus)
    routing_of = {
        "infiniband": ROUTING["infiniband"],
        "roce": getattr(adv, "roce_routing", None) or ROUTING["roce"],
    }
    for tech, key in (("infiniband", "infiniband"), ("roce", roce_key)):
        tick(f"planning {key}")
        route = routing_of[tech]
        p = plan_fabric(adv.gpus, tech, catalog, gpu=adv.gpu, nic_rate_gbps=nic_rate)
        d = p.design
        sw = catalog.switches[p.switch_id]
        hop_ns = float(sw.latency_ns) if sw.latency_ns else SWITCH_HOP_NS[tech]
        hops = {1: 2, 2: 4, 3: 6}[d.tiers] if adv.gpus > gpn else 0  # links on the longest host-host path
        prop_ns = (
            2 * 5.05 * p.lengths_m["host-leaf"]
            + (2 * 5.05 * p.lengths_m["leaf-spine"] if d.tiers >= 2 else 0)
            + (2 * 5.05 * p.lengths_m["spine-core"] if d.tiers >= 3 else 0)
        )
        path_us = (max(0, hops - 1) * hop_ns + prop_ns) / 1000
        eff, a2a_eff, fct, topo, perm_fct = 1.0, 1.0, np.zeros(0), None, np.zeros(0)
        fct_title = "FCT of one data-parallel ring step"
        if adv.gpus > gpn:
            tick(f"flow model of a ring step on {key}")
            from aifabric.topology import rail_optimized

            topo = rail_optimized(
                adv.gpus,
                int(p.nic_rate_gbps * 1e9),
                gpus_per_node=gpn,
                radix=p.radix,
                lengths_m=tuple(p.lengths_m[c] for c in ("host-leaf", "leaf-spine", "spine-core")),
            )
            group = par.dp if par else adv.gpus // gpn
            group = max(2, min(group, adv.gpus // gpn))
            flows = ring_step_flows(adv.gpus, gpn, group, 16 * 2**20)
            perm = rail_permutation_flows(adv.gpus, gpn, 16 * 2**20, seed) if adv.gpus // gpn > 1 else None
            eff, fct, a2a_eff, perm_fct = measure_fabric(topo, tech, flows, perm, seed, hop_ns * 1000, route)
            fct_title = (
                f"FCT: one DP ring step and a same-rail random permutation ({len(fct):,} flows of 16 MiB "
                f"each; adaptive on IB, {routing_of['roce']} on RoCE)"
            )
        comm = FabricComm(tech, p.nic_rate_gbps * 1e9, eff, path_us, nvl_busbw, a2a_eff, gpu=nvls_gpu)
        it = None
        cost = None
        if model is not None and par is not None:
            tick(f"training iteration on {key}")
            it = iteration_time(
                model, par, adv.gpus, float(gpu.bf16_tflops), comm, mfu=mfu, gpus_per_node=gpn
            )
            cost = training_cost(TRAIN_TOKENS, it.tokens_per_s, adv.gpus, p.capex_usd, SERVER_USD_PER_GPU)
        risk: dict[str, float] = {}
        risk_detail: dict[str, dict] = {}
        testbed = None
        if tech == "roce" and adv.gpus > gpn:
            tick("packet-level testbed: lossless misconfigurations")
            rm = measure(testbed_for(p.nic_rate_gbps, sw, hop_ns, p.lengths_m["leaf-spine"], route))
            testbed = rm.to_dict()
            prob = MISCONFIG_PROBABILITY[adv.team_expertise]
            for mid, what in MISCONFIGS.items():
                comm_slow = rm.blended(mid, congestion_share)
                it_slow = _iteration_slowdown(model, par, adv.gpus, gpu, comm, it, mfu, gpn, 1 + comm_slow)
                risk[mid] = prob * it_slow
                risk_detail[mid] = {
                    "what": what,
                    "probability": prob,
                    "comm_slowdown_quiet": rm.comm_slowdown["quiet"][mid],
                    "comm_slowdown_congested": rm.comm_slowdown["congested"][mid],
                    "comm_slowdown": comm_slow,
                    "slowdown": it_slow,
                    "expected_loss": risk[mid],
                    "slowdown_of": "training iteration" if it is not None else "network communication",
                }
            jitter = _jitter_evidence(rm, model, par, adv.gpus, gpu, comm, it, mfu, gpn)
        if tech == "roce" and route == "adaptive" and it is not None and topo is not None:
            # The plan relies on adaptive routing; a team that cannot enable or keep it working runs
            # ECMP: same flow-model measurement with ECMP, weighted by the misconfiguration chance.
            tick("flow model of the same steps with ECMP (adaptive routing off)")
            e_ecmp, _, a_ecmp, _ = measure_fabric(topo, tech, flows, perm, seed, hop_ns * 1000, "ecmp")
            impact = _iteration_slowdown(
                model,
                par,
                adv.gpus,
                gpu,
                comm,
                it,
                mfu,
                gpn,
                changed=replace(comm, step_efficiency=e_ecmp, a2a_efficiency=a_ecmp),
            )
            prob = MISCONFIG_PROBABILITY[adv.team_expertise]
            risk["adaptive-routing-off"] = prob * impact
            risk_detail["adaptive-routing-off"] = {
                "what": "adaptive routing off: ECMP hash collisions (flow model, ring step and permutation)",
                "probability": prob,
                "comm_slowdown": eff / e_ecmp - 1 if e_ecmp else None,
                "slowdown": impact,
                "expected_loss": risk["adaptive-routing-off"],
                "slowdown_of": "training iteration",
            }
        sweep = busbw_sweep(topo if adv.gpus > gpn else None, tech, adv.gpu, hop_ns, seed, adv.gpus, route)
        big = sweep[-1]["busbw_gbps"] if sweep else None
        small_lat = (NIC_PATH_NS + max(0, hops - 1) * hop_ns + prop_ns) / 1000 if hops else None
        ev = FabricEvidence(
            key,
            tech,
            p.nic_rate_gbps,
            p.capex_usd,
            p.power_w,
            d.max_gpus,
            iteration_time_s=it.iteration_s if it else None,
            tokens_per_s=it.tokens_per_s if it else None,
            cost_per_million_tokens_usd=cost["cost_per_million_tokens_usd"] if cost else None,
            busbw_gbps=big,
            small_msg_latency_us=small_lat,
            risk=risk,
        )
        evidence[key] = ev
        fabrics_out.append(
            {
                "technology": tech,
                "fabric": key,
                "label": f"{key} ({p.switch_id})",
                "capex_usd": p.capex_usd,
                "power_w": p.power_w,
                "iteration_time_s": ev.iteration_time_s,
                "tokens_per_s": ev.tokens_per_s,
                "busbw_gbps": big,
                "risk": dict(ev.risk),
                "expected_loss": ev.expected_loss,
                "risk_detail": risk_detail,
                "risk_testbed": testbed,
                "small_message_latency_us": small_lat,
                "routing": route,
                "ring_step_efficiency": eff,
                "permutation_efficiency": a2a_eff,
                "switch_hop_ns": hop_ns,
                "plan": p.to_dict(),
                "iteration": it.to_dict() if it else None,
                "training_cost": cost,
                "busbw_sweep": sweep,
                "fct_us": [float(x) for x in fct[:20000]],
                "fct_title": fct_title,
                "permutation_fct_us": [float(x) for x in perm_fct[:20000]],
                "permutation_fct_p99_us": float(np.percentile(perm_fct, 99)) if len(perm_fct) else None,
            }
        )
    tick("advising")
    rec = recommend(adv, gpn, evidence, nic_rate, rate_reason)
    claims = evaluate_claims(evidence, roce_key, jitter)
    assumptions = [
        f"MFU {mfu:.0%} for compute (planning default, hardware-facts §H, S92); published MFUs include the "
        "exposed communication of their own cluster, so iteration times are conservative",
        "InfiniBand routes adaptively (NCCL default on IB, S15); RoCE "
        + (
            "hashes with ECMP (NCCL default on RoCE, S15)"
            if routing_of["roce"] == "ecmp"
            else "routes adaptively (Spectrum-X class switches; NCCL leaves AR off on RoCE by default, S15)"
        ),
        "switch hop latency from the catalog (low confidence: no primary figure for QM9700 or SN5600)",
        f"training cost = (servers at {SERVER_USD_PER_GPU:,.0f} USD per GPU (S60, low) + network) amortised over 4 "
        f"years, for {TRAIN_TOKENS:.3g} tokens; energy and operations excluded",
        MISCONFIG_PROBABILITY_BASIS,
        "misconfiguration impacts (ECN off, DCQCN at firmware defaults, PFC threshold mismatch, PFC storm) come "
        "from a packet-level "
        "leaf-spine testbed at the RoCE fabric's NIC rate, tuned = PFC dynamic thresholds + HPCC "
        "(aifabric.stages.testbed); expected loss per mistake = probability x the iteration slowdown it causes",
        f"congestion share {congestion_share:.0%}: "
        + (
            CONGESTION_SHARE_BASIS
            if congestion_share == CONGESTION_SHARE
            else "set by the user (--congestion-share)"
        ),
        f'"small network jitter" = one spine emitting spurious PAUSE {SMALL_JITTER_DUTY:.0%} of the time '
        "(assumption, no public source)",
        "switch shared buffer for the risk testbed: the catalog's, else 128 MB (Spectrum-4, the conservative of "
        "two conflicting public figures, hardware-facts)",
    ]
    if par is not None:
        assumptions.append(
            f"parallelism TP {par.tp} × PP {par.pp} × DP {par.dp}"
            + (f", EP {par.ep}" if par.ep > 1 else "")
            + f" for {model.name}"
        )
    from aifabric import __version__

    return {
        "version": __version__,
        "scenario": "built-in default" if adv.model is None else adv.model,
        "inputs": adv.model_dump() if hasattr(adv, "model_dump") else dict(adv.__dict__),
        "model": model.name if model else None,
        "parallelism": par.to_dict() if par else None,
        "recommendation": rec.to_dict(),
        "fabrics": fabrics_out,
        "claims": claims,
        "jitter": jitter,
        "congestion_share": congestion_share,
        "assumptions": assumptions,
        "estimates": catalog.estimates(),
        "sources": dict(catalog.sources),
        "wall_s": time.perf_counter() - t0,
    }


def evaluate_claims(
    evidence: dict[str, FabricEvidence], roce_key: str, jitter: dict | None = None
) -> list[dict]:
    """The brochure claims of mission.md, tested on this cluster's numbers."""
    ib, roce = evidence.get("infiniband"), evidence.get(roce_key)
    out = []
    if ib and roce:
        r = roce.capex_usd / ib.capex_usd
        out.append(
            {
                "claim": "RoCE hardware costs 30–50 % of InfiniBand",
                "holds": 0.3 <= r <= 0.5,
                "evidence": f"network capex ratio RoCE/IB = {r:.2f} ({roce.capex_usd:,.0f} vs {ib.capex_usd:,.0f} USD; "
                "Ethernet switch prices are catalog estimates)",
            }
        )
        out.append(
            {
                "claim": "RoCE is about 30 % cheaper than InfiniBand",
                "holds": 0.6 <= r <= 0.8,
                "evidence": f"RoCE is {1 - r:.0%} cheaper on this cluster (held if 20–40 %)",
            }
        )
        if ib.small_msg_latency_us and roce.small_msg_latency_us:
            gap = roce.small_msg_latency_us / ib.small_msg_latency_us - 1
            out.append(
                {
                    "claim": "HPCC-era RoCE latency is within 10 % of InfiniBand",
                    "holds": gap <= 0.10,
                    "evidence": f"small-message one-way latency across the fabric: IB {ib.small_msg_latency_us:.2f} us, "
                    f"RoCE {roce.small_msg_latency_us:.2f} us ({gap:+.0%}); switch hops from the "
                    "catalog (low confidence)",
                }
            )
        if ib.iteration_time_s and roce.iteration_time_s:
            d = roce.iteration_time_s / ib.iteration_time_s - 1
            out.append(
                {
                    "claim": "RoCE training performance is within 10 % of InfiniBand",
                    "holds": d <= 0.10,
                    "evidence": f"iteration time IB {ib.iteration_time_s:.3f} s vs RoCE {roce.iteration_time_s:.3f} s "
                    f"({d:+.1%}), well-tuned RoCE with ECMP",
                }
            )
        elif ib.busbw_gbps and roce.busbw_gbps:
            d = 1 - roce.busbw_gbps / ib.busbw_gbps
            out.append(
                {
                    "claim": "RoCE performance is within 10 % of InfiniBand",
                    "holds": d <= 0.10,
                    "evidence": f"8 GiB all-reduce busbw IB {ib.busbw_gbps:.0f} vs RoCE {roce.busbw_gbps:.0f} Gb/s",
                }
            )
    claim = "Small network jitter from a flow-control bug costs ~20 % cluster efficiency"
    if jitter and jitter.get("small"):
        sm = jitter["small"]
        loss = sm["slowdown"]
        need = jitter["duty_for_20pct"]
        need_txt = (
            f"a 20 % loss needs spurious pauses {need:.0%} of the time"
            if need is not None
            else f"even {jitter['sweep'][-1]['duty']:.0%} of the time costs "
            f"{jitter['sweep'][-1]['slowdown']:.1%}"
        )
        out.append(
            {
                "claim": claim,
                "holds": bool(0.10 <= loss <= 0.30),
                "evidence": f"one spine pausing its ports {sm['duty']:.0%} of the time slows a ring step by "
                f"{sm['comm_slowdown']:+.1%} on the packet testbed and the {jitter['slowdown_of']} "
                f"by {loss:+.1%} (held if 10-30 %); {need_txt}",
            }
        )
    else:
        out.append(
            {
                "claim": claim,
                "holds": None,
                "evidence": "not tested: the cluster has no inter-node RoCE fabric to jitter",
            }
        )
    return out


__all__ = ["FabricComm", "compare", "evaluate_claims", "rail_permutation_flows", "ring_step_flows"]
