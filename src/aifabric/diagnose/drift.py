"""Drift against the model (``diagnose --job``): the job's measured bus bandwidth against what
``aifabric collective`` predicts for the same collective, size, GPUs and NIC rate, and which
findings account for how much of the gap.

* **measured** — the nccl-tests output's (or ``-J`` JSON's) largest message: out-of-place busbw
  (GB/s), read by :mod:`aifabric.calibrate.parsers`.
* **model** — :func:`aifabric.workload.collectives.nccl_sweep` on the planned rail-optimised
  fabric of that many GPUs (the ``collective`` command's path: flow engine, NCCL's algorithm
  choice ``auto``), with ``--calibration`` applied when given (``calibrate_sweep``). Transport:
  InfiniBand for ``NET/IB`` runs, the Ethernet (RoCE) fabric otherwise (AWS EFA runs over Ethernet
  too; the model has no SRD transport — said in ``drift.note``).
* **band** — ±10 %: the tolerance the collective model meets against published NCCL figures
  (:mod:`aifabric.workload.collective_validation`); a ratio inside it is no measurable drift.
* **explained_by** — the findings whose fault the risk library models: each re-simulated on the
  risk testbed of that technology (:func:`aifabric.stages.risk.testbed.measure_testbed`, the risk
  stage's perturbation, cached on disk), giving the communication slowdown it causes alone; its
  share of the gap is ``slowdown / (1 + slowdown)`` against the measured shortfall ``1 − ratio``.
"""

from __future__ import annotations

from aifabric.errors import InputError

BAND = 0.10  # the collective model's tolerance against published figures (collective_validation)
# finding kind -> the risk-library fault that models it
KIND_TRIGGER = {
    "pause-storm": "pfc-storm",
    "pfc-threshold-mismatch": "pfc-threshold-mismatch",
    "slow-receiver": "straggler-nic",
    "stuck-receiver": "stuck-receiver",
    "lossy-class": "lossy-class",
    "ecmp-polarisation": "ecmp-polarisation",
    "ecmp-imbalance": "ib-no-ar",
    "link-down": "link-failure",
    "no-congestion-control": "ecn-off",
    "ecn-threshold-low": "dcqcn-defaults",
    "incast": "storage-incast",
}


def measured(job) -> tuple[object, float, int]:
    """(parsed run, busbw GB/s at the largest size, that size in bytes)."""
    from aifabric.calibrate.parsers import NcclTestsRun, parse_measurement

    run = parse_measurement(job)
    if not isinstance(run, NcclTestsRun) or not run.rows:
        raise InputError(
            "not an nccl-tests output with result rows",
            file=str(job),
            field="--job",
            allowed="nccl-tests text or -J JSON (all_reduce_perf ...)",
        )
    row = max(run.rows, key=lambda r: r.size_bytes)
    return run, float(row.busbw_gbps), int(row.size_bytes)


def model_busbw(run, size: int, calibration=None) -> tuple[float, dict]:
    """The model's busbw (GB/s) for ``run``'s collective at ``size``, and what it assumed."""
    from aifabric.design.plan import plan_fabric
    from aifabric.hardware.catalog import load_catalog
    from aifabric.stages.design.fabrics import ROUTING, SWITCH_HOP_NS
    from aifabric.stages.measure.network import HEADER_BYTES, MTU_BYTES
    from aifabric.topology import rail_optimized
    from aifabric.workload.collectives import nccl_sweep

    if run.ranks is None or run.ranks < 2:
        raise InputError(
            "the job's rank count is unknown",
            file=run.source,
            field="--job",
            allowed="nccl-tests output with its '# Rank' lines or NCCL_DEBUG=INFO",
        )
    tech = "infiniband" if run.transport == "ib" else "roce"
    gpu = run.gpu or "h100"
    cat = load_catalog()
    speeds = [s for s in run.info.nic_speeds_mbps if s > 0]
    nic_gbps = max(speeds) / 1000 if speeds else None
    p = plan_fabric(run.ranks, tech, cat, gpu=gpu, nic_rate_gbps=nic_gbps)
    sw = cat.switches[p.switch_id]
    hop_ns = float(sw.latency_ns) if sw.latency_ns else SWITCH_HOP_NS[tech]
    topo = rail_optimized(
        run.ranks, int(p.nic_rate_gbps * 1e9), gpus_per_node=p.design.gpus_per_node, radix=p.radix, planes=1
    )
    op = run.op or "all-reduce"
    df = nccl_sweep(
        op,
        [size],
        topo,
        algorithm="auto",
        routing=ROUTING[tech],
        technology=tech,
        gpu=gpu,
        switch_latency_ps=hop_ns * 1000,
        header_bytes=HEADER_BYTES[tech],
        mtu_bytes=MTU_BYTES[tech],
    )
    if calibration is not None:
        from aifabric.calibrate import calibrate_sweep, load

        cal = load(calibration)
        df = calibrate_sweep(
            df,
            cal,
            op,
            run.ranks,
            p.design.gpus_per_node,
            gpu,
            p.nic_rate_gbps * 1e9,
            tech,
            str(df["algorithm"].iloc[0]),
        )
    assumed = {
        "op": op,
        "ranks": run.ranks,
        "gpu": gpu,
        "technology": tech,
        "nic_rate_gbps": p.nic_rate_gbps,
        "algorithm": str(df["algorithm"].iloc[0]),
        "size_bytes": size,
        "switch": p.switch_id,
    }
    return float(df["busbw_gbps"].iloc[0]), assumed


def explain(kinds: list[str], technology: str) -> list[dict]:
    """Each finding kind the risk library models: its slowdown alone on the testbed."""
    from aifabric.stages.risk.scenario_files import SHIPPED_BASELINE, shipped_testbed
    from aifabric.stages.risk.testbed import LIBRARY, measure_testbed

    out = []
    for kind in dict.fromkeys(kinds):
        sid = KIND_TRIGGER.get(kind)
        if sid is None or technology not in LIBRARY[sid].fabrics:
            continue
        tb = shipped_testbed(technology, SHIPPED_BASELINE.get(sid) if technology == "roce" else None)
        if not LIBRARY[sid].applies(tb)[0] or "three-tier" in LIBRARY[sid].traffic:
            continue
        m = measure_testbed(tb, jitter_sweep=False, only=(sid,))
        s = m.scenario_slowdown(sid)
        out.append(
            {
                "kind": kind,
                "library_fault": sid,
                "comm_slowdown": round(s, 4),
                "busbw_ratio_alone": round(1 / (1 + s), 4) if s != float("inf") else 0.0,
            }
        )
    return out


def drift(job, findings, calibration=None) -> dict:
    """The ``drift`` object of ``diagnose --json`` (interface.md: measured, model, ratio, explained_by)."""
    run, meas, size = measured(job)
    model, assumed = model_busbw(run, size, calibration)
    ratio = meas / model if model > 0 else 0.0
    kinds = [f.kind for f in findings if f.severity in ("error", "warning")]
    parts = explain(kinds, assumed["technology"]) if ratio < 1 - BAND else []
    gap = max(0.0, 1 - ratio)
    for p in parts:
        p["share_of_gap"] = round(min(1.0, (1 - p["busbw_ratio_alone"]) / gap), 3) if gap > 0 else 0.0
    note = (
        ""
        if run.transport in ("ib", "roce")
        else (f"transport {run.transport or 'unknown'}: modelled as the Ethernet (RoCE) fabric")
    )
    return {
        "measured": round(meas, 3),
        "model": round(model, 3),
        "ratio": round(ratio, 4),
        "band": [round(1 - BAND, 2), round(1 + BAND, 2)],
        "within_band": abs(ratio - 1) <= BAND,
        "unit": "GB/s busbw",
        "explained_by": [p["kind"] for p in parts],
        "explained": parts,
        "assumed": assumed,
        "note": note,
        "source": str(job),
    }
