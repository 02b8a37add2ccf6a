"""The main job (``aifabric compare``) as a chain of stages; this module only chains them.

```
design      fabric options          → DesignEvidence   (topology size, BOM, capex, power, path latency)
workload    model + job             → Workload         (per-group collectives, patterns with endpoints)
measure     design × workload       → NetworkEvidence  (achieved bandwidth/latency per pattern; cached)
performance workload × network      → PerformanceEvidence (iteration, tokens/s, cost per token)
risk        perturbed measurements  → RiskEvidence     (each scenario → measure → performance again)
decide      all of the above        → Decision         (recommendation, reasons, claims)
```
Rendering (terminal, ``--json``, HTML) is :mod:`aifabric.report`. Each stage is callable on its own
(see ``docs/architecture.md``); no stage imports this module or a later stage (import-linter).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from aifabric.errors import InputError
from aifabric.stages.decide.choose import Decision, decide
from aifabric.stages.decide.verdict import Alternative, hinge
from aifabric.stages.deployment import (
    STORAGE_PLACEMENTS,
    TUNING_STATES,
    Deployment,
    check_overrides,
    resolve,
    storage_share,
)
from aifabric.stages.design.fabrics import DesignEvidence, DesignInput, design
from aifabric.stages.design.options import options_for
from aifabric.stages.measure.network import NetworkEvidence, measure
from aifabric.stages.performance import PerformanceEvidence, performance, server_usd_per_gpu
from aifabric.stages.risk.assess import RiskEvidence, assess
from aifabric.stages.workload import Workload, WorkloadInput, workload


@dataclass(frozen=True)
class CompareInputs:
    """What ``compare`` is asked: the advisor's questions, the catalog and the model knobs."""

    advisor: Any  # aifabric.scenario.AdvisorSpec
    catalog: Any = field(repr=False, compare=False)
    seed: int = 1
    compute_efficiency: float | None = None  # measured GEMM efficiency (else the step model's fitted one)
    # share of communication time under congestion; None: the storage share (the congested traffic
    # mix is the storage incast — one setting, aifabric.stages.deployment)
    congestion_share: float | None = None
    training: dict | None = None  # the scenario's training: section
    scenario_file: str | None = None
    # `aifabric calibrate`'s file, loaded (aifabric.calibrate.Calibration): anything with
    # apply_network(NetworkEvidence) -> NetworkEvidence; applied right after *measure*
    calibration: Any = field(default=None, compare=False)
    risk: Any = None  # the scenario's risk: section (aifabric.scenario.RiskSpec): baseline, rates, overrides
    inference: dict | None = None  # the scenario's inference: section (+ --ttft-ms / --itl-ms)
    storage: dict | None = None  # the scenario's storage: section (+ --checkpoint-period)
    assumptions: dict | None = None  # the scenario's assumptions: section (name -> value), checked
    # validate --symmetry: keep this technology's design and add its twin (the same design under
    # another key) — every stage must treat the two alike
    mirror: str | None = None
    single_protocol_media: bool = False  # set by run(): auto media picked a part one protocol lacks


@dataclass(frozen=True)
class Comparison:
    """The evidence chain, in stage order."""

    inputs: CompareInputs
    design: DesignEvidence
    workload: Workload
    network: NetworkEvidence
    performance: PerformanceEvidence
    risk: RiskEvidence
    decision: Decision
    wall_s: float
    deployment: Deployment | None = None  # the settings every stage read (storage share resolved)


def workload_input(
    adv,
    gpu,
    nic_rate_gbps: float,
    seed: int = 1,
    training: dict | None = None,
    compute_efficiency: float | None = None,
    file: str | None = None,
    kind: str | None = None,
    inference: dict | None = None,
    storage: dict | None = None,
) -> WorkloadInput:
    """The workload stage's input for the advisor's questions on the catalog's ``gpu`` (``kind``
    overrides the advisor's workload: ``train`` and ``validate`` time a training job)."""
    return WorkloadInput(
        kind or adv.workload,
        adv.gpus,
        int(gpu.gpus_per_node or 8),
        float(gpu.hbm_gbytes or 80),
        adv.model,
        seed,
        training,
        adv.gpu,
        nic_rate_gbps,
        compute_efficiency,
        file,
        inference,
        storage,
        getattr(adv, "placement", "ideal"),
        getattr(adv, "occupancy", None),
        getattr(adv, "background_jobs", None),
        getattr(adv, "channels_per_nic", 2),
        getattr(adv, "qps_per_connection", 1),
    )


@dataclass(frozen=True)
class Performance:
    """The first four stages' evidence (what ``aifabric train`` reports; ``compare`` goes on)."""

    gpu: Any  # the catalog's GPU system
    options: tuple  # the DesignOptions designed
    design: DesignEvidence
    workload: Workload
    network: NetworkEvidence
    performance: PerformanceEvidence
    # the step-time model's answers on these four stages' evidence, shared by every risk → decide
    # run on them (the Monte-Carlo draws the same efficiencies each time): a what-if re-weighs in
    # milliseconds (``aifabric serve``); values are the model's own, so no number changes
    memo: dict = field(default_factory=dict, repr=False, compare=False)


def run_performance(
    inputs: CompareInputs,
    progress=None,
    *,
    technologies: tuple[str, ...] | None = None,
    kind: str | None = None,
    sweep: bool = True,
) -> Performance:
    """design → workload → measure (+ calibration) → performance, the chain ``compare`` and
    ``train`` share. ``technologies`` keeps only those fabric families' options (``train
    --fabric``), ``kind`` overrides the advisor's workload (``train`` times a training job) and
    ``sweep=False`` skips the busbw sweep only the report draws."""
    adv, cat = inputs.advisor, inputs.catalog
    gpu = cat.get("gpu", adv.gpu)
    options = options_for(adv, gpu, cat)
    if technologies is not None:
        kept = tuple(o for o in options if o.technology in technologies)
        if not kept:
            raise InputError(
                "no design of that fabric family among the designs asked",
                field="--fabric",
                value="/".join(technologies),
                allowed="a family that --designs (advisor.designs) names, or both",
            )
        options = kept
    if inputs.mirror is not None:
        from dataclasses import replace

        from aifabric.stages.design.fabrics import MIRROR_SUFFIX

        one = next(o for o in options if o.technology == inputs.mirror)
        options = (one, replace(one, key=one.key + MIRROR_SUFFIX))
    des = design(DesignInput(adv.gpus, adv.gpu, options, cat), progress)
    dep = resolve(adv, inputs.assumptions, inputs.storage)
    storage_sec = inputs.storage
    if (adv.workload == "storage" or storage_sec) and kind is None:  # one setting: storage placement
        storage_sec = {**(storage_sec or {}), "on_backend": dep.storage_on_fabric}
    wl = workload(
        workload_input(
            adv,
            gpu,
            options[0].nic_rate_gbps,
            inputs.seed,
            inputs.training,
            inputs.compute_efficiency,
            inputs.scenario_file,
            kind,
            inference=inputs.inference,
            storage=storage_sec,
        )
    )
    net = measure(des, wl, gpu, inputs.seed, progress, sweep=sweep)
    if dep.sharp == "off":  # the scenario's assumptions: sharp: off — every all-reduce on the ring
        net = sharp_off(net)
    if inputs.calibration is not None:  # the user's measured NIC efficiency / latency (issue 12)
        net = inputs.calibration.apply_network(net)
    server_usd, _ = server_usd_per_gpu(gpu)
    perf = performance(wl, des, net, progress, server_usd)
    return Performance(gpu, options, des, wl, net, perf)


def sharp_off(net):
    """The measured fabrics with SHARP not used (``assumptions: {sharp: off}``), said in its grant."""
    from dataclasses import replace

    from aifabric.stages.measure.network import NetworkEvidence

    def off(f):
        if not f.sharp:
            return f
        return replace(
            f, sharp={**f.sharp, "granted": False, "note": "off (the scenario's assumptions: sharp: off)"}
        )

    return NetworkEvidence(tuple(off(f) for f in net.fabrics))


def run(inputs: CompareInputs, progress=None) -> Comparison:
    """Run the stages in order and return their evidence."""
    if inputs.congestion_share is not None and not 0 <= inputs.congestion_share <= 1:
        raise InputError(
            "must be between 0 and 1",
            field="--congestion-share",
            value=inputs.congestion_share,
            allowed="a fraction in [0, 1]",
        )
    t0 = time.perf_counter()
    overrides = check_overrides(inputs.assumptions, inputs.scenario_file)
    if overrides != (inputs.assumptions or {}):
        inputs = replace(inputs, assumptions=overrides)
    front = run_performance(inputs, progress)
    return finish(inputs, front, progress, t0)


def finish(inputs: CompareInputs, front: Performance, progress=None, t0: float | None = None) -> Comparison:
    """risk → decide (and the verdict across the register's categorical assumptions) on the first four
    stages' evidence ``front``: the pipeline re-entered after *measure*. ``inputs.assumptions`` and the
    advisor's weighing questions (expertise, jitter sensitivity, budget, growth, tuning, storage
    placement) may differ from those ``front`` was measured with, its job and design questions not;
    ``run`` is ``run_performance`` then this."""
    t0 = time.perf_counter() if t0 is None else t0
    overrides = check_overrides(inputs.assumptions, inputs.scenario_file)
    adv = inputs.advisor
    media_single = _single_protocol(front.design, inputs.catalog)
    inputs = replace(inputs, assumptions=overrides or inputs.assumptions, single_protocol_media=media_single)
    dep = storage_share(resolve(adv, overrides, inputs.storage), front.workload, front.performance)
    share = inputs.congestion_share
    if "congestion_share" in overrides:
        share = overrides["congestion_share"]
    rsk, dec = _weigh(inputs, front, dep, share, overrides, progress)
    if progress:
        progress("advising")
    alternatives = []
    if front.design.has_network and dec.recommendation.fabric != "none" and inputs.mirror is None:
        for name, values in _categorical(adv, inputs).items():
            now = {"storage.placement": dep.storage_placement, "tuning": dep.tuning}.get(
                name, getattr(adv, "host_link_media", "auto")
            )
            for v in (x for x in values if x != now):
                if progress:
                    progress(f"what if {name} = {v}")
                alt_front, alt_dep = front, dep
                if name == "media.host_link":  # another design: the chain runs again (measurements cached)
                    alt_in = replace(inputs, advisor=adv.model_copy(update={"host_link_media": v}))
                    alt_front = run_performance(alt_in, None)
                else:
                    alt_dep = resolve(adv, {**overrides, name: v}, inputs.storage)
                alt_dep = storage_share(alt_dep, alt_front.workload, alt_front.performance)
                alt = _weigh(inputs, alt_front, alt_dep, share, overrides, sensitivity=False)[1]
                alternatives.append(Alternative(name, now, v, alt))
    media = {_host_media(fd) for fd in front.design.fabrics} if front.design.has_network else set()
    same = (
        next(iter(media))
        if len(media) == 1 and not any(a.assumption == "media.host_link" for a in alternatives)
        else None
    )
    dec = hinge(dec, alternatives, same)
    f = front
    return Comparison(
        inputs, f.design, f.workload, f.network, f.performance, rsk, dec, time.perf_counter() - t0, dep
    )


def _weigh(
    inputs: CompareInputs, front: Performance, dep: Deployment, share, overrides, tick=None, sensitivity=True
):
    """risk → decide on the first four stages' evidence with the deployment ``dep`` (``sensitivity``:
    :func:`aifabric.stages.decide.choose.decide`'s)."""
    adv = inputs.advisor
    des, wl, net, perf = front.design, front.workload, front.network, front.performance
    rsk = assess(
        des,
        wl,
        net,
        perf,
        front.gpu,
        adv.team_expertise,
        dep.storage_share if share is None else share,
        inputs.seed,
        tick,
        inputs.risk,
        deployment=dep,
        congestion_is_storage=share is None,
    )
    dec = decide(
        adv,
        des,
        wl,
        net,
        perf,
        rsk,
        front.gpu,
        inputs.catalog,
        front.options,
        inputs.seed,
        overrides,
        memo=front.memo,
        sensitivity=sensitivity,
    )
    return rsk, dec


def _host_media(fd) -> str | None:
    m = fd.plan.media.get("host-leaf") if hasattr(fd.plan, "media") else None
    return getattr(m, "kind", None)


def _single_protocol(design, catalog) -> bool:
    """Whether some fabric's host links use a part that only one protocol has (e.g. an AEC)."""
    for fd in design.fabrics:
        m = fd.plan.media.get("host-leaf") if hasattr(fd.plan, "media") else None
        cid = getattr(m, "cable_id", None)
        if not cid:
            continue
        try:
            rec = catalog.get("cable", cid)
        except Exception:  # not a cable record of this catalog: nothing to say
            continue
        if getattr(rec, "technology", "any") not in ("any", None):
            return True
    return False


def _categorical(adv, inputs: CompareInputs) -> dict[str, tuple[str, ...]]:
    """The register's categorical assumptions whose alternatives the verdict is checked across: storage
    placement (not for the storage workload itself, nor when the risk: section fixes the share) and
    the tuning state (not when the risk: section fixes both fabrics' congestion control)."""
    out: dict[str, tuple[str, ...]] = {}
    spec = inputs.risk
    fixed_share = spec is not None and "storage-incast" in spec.probability
    if adv.workload != "storage" and not fixed_share:
        out["storage.placement"] = STORAGE_PLACEMENTS
    if spec is None or spec.roce_baseline is None or spec.ib_congestion_control is None:
        out["tuning"] = TUNING_STATES
    # the host-link media: the cheapest part that reaches (auto) against the one kind every protocol
    # has at every length (optics) — only where auto picked a single-protocol part on some fabric
    media = getattr(adv, "host_link_media", "auto")
    if media != "auto":
        out["media.host_link"] = (media, "auto")
    elif inputs.single_protocol_media:
        out["media.host_link"] = ("auto", "optics")
    return out


__all__ = ["CompareInputs", "Comparison", "Performance", "finish", "run", "run_performance", "workload_input"]
