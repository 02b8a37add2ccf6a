"""``compare``'s JSON-ready result: the published keys (interface.md) built from the evidence chain,
plus ``evidence`` — every stage's evidence in stage order, so a user sees which stage produced
each number."""

from __future__ import annotations

import math

from aifabric.stages.deployment import Deployment as _dep
from aifabric.stages.measure.placed import placed_note
from aifabric.stages.performance import server_usd_per_gpu
from aifabric.stages.pipeline import Comparison
from aifabric.stages.risk.assess import MISCONFIG_PROBABILITY_BASIS
from aifabric.stages.risk.testbed import SMALL_JITTER_DUTY
from aifabric.units import gbytes_per_s as gbytes

FCT_POINTS = 20_000  # FCT samples kept per chart (the report's CDFs)
STAGE_ORDER = ("design", "workload", "measure", "performance", "risk", "decide")


def register(c: Comparison) -> list[dict]:
    """The assumption register (``assumptions[]``: objects, :mod:`aifabric.stages.decide.assumptions`)."""
    from aifabric.stages.decide.assumptions import register as build
    from aifabric.stages.deployment import Deployment

    dep = c.deployment or Deployment()
    net = getattr(c, "network", None)
    return [
        a.to_dict()
        for a in build(c.inputs.advisor, dep, c.design, c.risk, c.decision, c.performance, network=net)
    ]


def assumptions(c: Comparison) -> list[str]:
    """The assumptions each stage made, in words (the report's notes; ``assumption_notes`` in JSON)."""
    perf, congestion_share = c.performance, c.risk.congestion_share
    roce = next((f for f in c.design.fabrics if f.technology == "roce"), None)
    ib = next((f for f in c.design.fabrics if f.technology == "infiniband"), None)
    out = [
        "compute from first principles (aifabric.workload.llm: per-layer GEMM, attention and element-wise time at "
        "one fitted parameter set, validated against published step times — README 'Training step model'); "
        "MFU is an output; the layout is searched per fabric",
        (
            "InfiniBand routes adaptively per packet (adaptive-packet: AR as deployed on AI clusters, NCCL "
            "enables it on IB above 8 KiB, S15)"
            if ib is None or ib.routing != "static"
            else "InfiniBand routes statically (a plain OpenSM's LFT, D-mod-k)"
        )
        + "; RoCE "
        + (
            "hashes with ECMP (NCCL default on RoCE, S15; 2 QPs per connection hashed: NCCL's 2 channels "
            "per network peer × 1 QP per connection)"
            if roce is None or roce.routing == "ecmp"
            else (
                "routes adaptively (Spectrum-X class switches, adaptive-packet: per-packet AR with a NIC that "
                "reorders; NCCL leaves AR off on RoCE by default, S15)"
                if roce.routing == "adaptive-packet"
                else f"routes {roce.routing}"
            )
        ),
        "switch hop latency from the catalog (low confidence: no primary figure for QM9700 or SN5600)",
        f"training cost = (servers at {perf.server_usd_per_gpu:,.0f} USD per GPU ("
        + server_usd_per_gpu(c.inputs.catalog.get("gpu", c.inputs.advisor.gpu))[1]
        + f") + network) amortised over 4 years, for {perf.train_tokens:.3g} tokens; energy and operations "
        "excluded",
        MISCONFIG_PROBABILITY_BASIS,
        "failure and misconfiguration impacts come from a packet-level leaf-spine pod derived from each planned "
        "fabric (same rate, hop latency, buffer per port, oversubscription, routing; congestion control by the "
        "tuning state, the same for both fabrics: as shipped = IB without congestion control, RoCE PFC + DCQCN "
        "at vendor defaults; tuned = IB CC on, RoCE DCQCN tuned or HPCC-class) (aifabric.stages.risk.testbed); each "
        "scenario's added step time over the fabric's own ideal step, per scenario p x d x l with l = 1 - "
        "1/(1 + iteration slowdown), combined as 1 - prod(1 - p d l) (aifabric.stages.risk)",
        "job interruptions: NIC, host-link and leaf faults (and fabric-link / spine faults whose re-route "
        "outlasts NCCL's ~34 s retry budget) counted from the bill of materials (StepFun fault trace, "
        "Gill et al. 2011; checked against the Llama 3 paper by validate --interruptions), 15 min (6-40) "
        "lost per interruption on every GPU (assumption); reported as goodput_loss",
        f"congestion share {congestion_share:.1%}: "
        + (
            "the storage share (storage incast is the congested traffic mix; 0 with storage off the compute "
            "fabric)"
            if c.risk.congestion_is_storage
            else "set by the user (--congestion-share)"
        ),
        f'"small network jitter" = PAUSE bursts {SMALL_JITTER_DUTY:.0%} of the time (one spine, or a share of '
        "the NICs; assumption, no public source)",
        "switch shared buffer for the risk testbed: the catalog's (else 128 MB, Spectrum-4, the conservative of "
        "two conflicting public figures, hardware-facts) per port x the pod leaf's ports",
    ]
    note = placed_note(c.network)
    if note:
        out.append(note)
    wl = c.workload
    if wl.inference is not None:
        out.append(
            "inference (aifabric.workload.llm.inference): decode is memory-bound (weights touched + KV cache at "
            "the GPUs' sustained HBM bandwidth); wide expert parallelism across nodes = a DeepEP-style FP8 "
            "dispatch + BF16 combine all-to-all per MoE layer per decode step, not overlapped unless asked; "
            "disaggregated prefill sends the request's KV cache once; served tokens/s = gpus x output tokens / "
            "(GPUs per instance x (prefill + output tokens x ITL / batch)) at the largest batch that meets the "
            f"budgets (TTFT {wl.inference.ttft_budget_s * 1e3:g} ms, ITL {wl.inference.itl_budget_s * 1e3:g} ms; "
            "default: MLPerf Inference v5.0 Llama2-70B-Interactive p99 bounds); queueing ignored"
        )
    if wl.storage is not None:
        out.append(
            "storage (aifabric.workload.llm.storage): "
            + "; ".join(f"{k}: {v}" for k, v in wl.storage.basis.items())
        )
    for f in c.performance.fabrics:
        if f.iteration is not None:
            lay = f.iteration.layout
            out.append(
                f"{f.key}: layout TP {lay.tp} × CP {lay.cp} × PP {lay.pp} (VP {lay.vp}) × DP {lay.dp}"
                + (f", EP {lay.ep}" if lay.ep > 1 else "")
                + f", micro-batch {lay.micro_batch}, rank order {lay.order}"
                + f" for {c.workload.model.name} (searched on this fabric)"
            )
    return out


def with_gbytes(row: dict) -> dict:
    """A busbw sweep row with ``busbw_gbytes_per_s`` (GB/s) beside the deprecated ``busbw_gbps`` (Gb/s)."""
    return {**row, "busbw_gbytes_per_s": gbytes(row.get("busbw_gbps"))}


def _fabric_row(c: Comparison, fd) -> dict:
    net, fp, fr = c.network.fabric(fd.key), c.performance.fabric(fd.key), c.risk.fabric(fd.key)
    ev = c.decision.evidence[fd.key]
    return {
        "technology": fd.technology,
        "fabric": fd.key,
        "label": fd.label,
        "design": ev.design,
        "family": fd.family,
        "lossy": fd.lossy,
        "front_end": fd.front_end,
        "tco_usd": fd.plan.tco.tco_usd if fd.plan.tco is not None else None,
        "capex_usd": fd.capex_usd,
        "power_w": fd.power_w,
        "iteration_time_s": ev.iteration_time_s,
        "tokens_per_s": ev.tokens_per_s,
        "busbw_gbytes_per_s": gbytes(net.busbw_gbps),
        "busbw_gbps": net.busbw_gbps,  # deprecated alias in Gb/s (one release)
        "risk": fr.rows(),
        "expected_loss": fr.expected_loss,
        "expected_loss_range": list(fr.expected_loss_range),
        "goodput_loss": fr.goodput_loss,
        "goodput": fr.goodput_detail,
        "risk_detail": {r.scenario: r.detail() for r in fr.items},
        "risk_testbed": fr.testbed.to_dict() if fr.testbed is not None else None,
        "small_message_latency_us": fd.small_message_latency_us,
        "routing": net.routing,
        "ecmp_entropy": net.ecmp_entropy,
        **({"preset": fd.preset} if getattr(fd, "preset", "") else {}),
        "ring_step_efficiency": net.ring_step_efficiency,
        "permutation_efficiency": net.permutation_efficiency,
        "pp_send_recv_efficiency": net.pp_efficiency,
        "placed_patterns": net.placed,
        "placement": net.placement,
        "switch_hop_ns": fd.switch_hop_ns,
        "plan": fd.plan.to_dict(),
        "iteration": fp.iteration_dict(),
        "training_cost": fp.training_cost,
        "inference": fp.inference,
        "storage": fp.storage,
        "busbw_sweep": [with_gbytes(r) for r in net.busbw_sweep],
        "fct_us": [float(x) for x in net.ring_fct_us[:FCT_POINTS]],
        "fct_title": net.fct_title,
        "permutation_fct_us": [float(x) for x in net.permutation_fct_us[:FCT_POINTS]],
        "permutation_fct_p99_us": net.permutation_fct_p99_us,
    }


def evidence_chain(c: Comparison) -> dict:
    """Every stage's evidence, keyed by stage, in stage order."""
    return {
        "design": c.design.to_dict(),
        "workload": c.workload.to_dict(),
        "measure": c.network.to_dict(),
        "performance": c.performance.to_dict(),
        "risk": c.risk.to_dict(),
        "decide": c.decision.to_dict(),
    }


def json_safe(o):
    """The same structure with every non-finite float (NaN, ±inf) as None: strict JSON, as
    interface.md asks of ``--json`` (Python's json writes NaN otherwise)."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: json_safe(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [json_safe(v) for v in o]
    return o


def comparison_dict(c: Comparison) -> dict:
    """The JSON-ready result of ``compare`` (interface.md keys + report data + the evidence chain)."""
    from aifabric._version import __version__

    adv, cat, wl = c.inputs.advisor, c.inputs.catalog, c.workload
    return json_safe(
        {
            "version": __version__,
            "scenario": "built-in default" if adv.model is None else adv.model,
            "inputs": adv.model_dump() if hasattr(adv, "model_dump") else dict(adv.__dict__),
            "model": wl.model.name if wl.model else None,
            "parallelism": wl.parallelism.to_dict() if wl.parallelism is not None else None,
            "inference": ({"model": wl.inference.model, **wl.serving} if wl.inference is not None else None),
            "storage": wl.storage.to_dict() if wl.storage is not None else None,
            "recommendation": c.decision.recommendation.to_dict(),
            "fabrics": [_fabric_row(c, fd) for fd in c.design.fabrics],
            "radix_note": c.design.radix_note,
            "claims": list(c.decision.claims),
            "sensitivity": list(c.decision.sensitivity),
            "probability_best": dict(c.decision.probability_best),
            "rules": list(c.decision.rules),
            "jitter": c.risk.jitter,
            "congestion_share": c.risk.congestion_share,
            "assumptions": register(c),
            "assumption_notes": assumptions(c),
            "deployment": {
                "storage_placement": (c.deployment or _dep()).storage_placement,
                "storage_share": (c.deployment or _dep()).storage_share,
                "tuning": (c.deployment or _dep()).tuning,
            },
            "estimates": cat.estimates(),
            "sources": dict(cat.sources),
            "stages": list(STAGE_ORDER),
            "evidence": evidence_chain(c),
            "wall_s": c.wall_s,
        }
    )


__all__ = ["STAGE_ORDER", "assumptions", "register", "comparison_dict", "evidence_chain", "json_safe"]


def step_with_band(f: dict) -> str:
    """``7.020 s (±6 %, p90 of 31 validation cases)``: the step time and its error band, or "—"."""
    if not f.get("iteration_time_s"):
        return "—"
    band = (f.get("iteration") or {}).get("band")
    return f"{f['iteration_time_s']:.3f} s" + (f" ({band['text']})" if band else "")
