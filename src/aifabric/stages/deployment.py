"""The deployment settings: the *categorical* choices that shape what every stage measures and that
apply to every fabric alike — where storage traffic runs (:data:`STORAGE_PLACEMENTS`, off the compute
fabric by default, as the reference designs build it), the tuning state (:data:`TUNING_STATES`: both
fabrics as shipped by default, or both tuned) and SHARP (:data:`SHARP_STATES`).

:func:`resolve` reads them from the advisor's questions and the scenario's ``assumptions:`` section;
:func:`storage_share` resolves the storage share from the job; :func:`baseline_for` maps the tuning state
to each fabric's congestion control on the risk testbed. :func:`check_overrides` checks a scenario's
``assumptions:`` mapping (name -> value): the deployment settings here, the decision's uncertain inputs
(prices as multipliers of the catalog, probabilities, efficiencies) in *decide*; unknown names and
values out of range are refused with one line. The register of every assumption that reached the
verdict is :mod:`aifabric.stages.decide.assumptions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aifabric.errors import InputError

STORAGE_PLACEMENTS = ("separate", "on-fabric")
TUNING_STATES = ("as-shipped", "tuned")
STORAGE_SOURCE = (
    "reference designs keep storage off the compute fabric: NVIDIA DGX SuperPOD RA (a separate storage "
    "fabric), NVIDIA GB200 NVL72 Enterprise RA (compute fabric not recommended for storage), NVIDIA HGX AI "
    "Factory RA; Meta's Llama 3 cluster (a separate front-end network for ingestion and checkpoints, "
    "arXiv 2407.21783 §3.3.1)"
)
TUNING_SOURCE = {
    "as-shipped": "what each fabric does out of the box: InfiniBand — OpenSM/UFM congestion control off "
    "(OpenSM congestion_control FALSE by default), adaptive routing as the AI-cluster RA enables it; RoCE — "
    "the switch's lossless profile (PFC + ECN at NVIDIA Cumulus 'nv set qos roce' defaults 150 KB / 1.5 MB / "
    "100 %, S11) with ConnectX DCQCN at its firmware defaults (S12); a Spectrum-X design runs its own "
    "telemetry congestion control (HPCC-class) as shipped",
    "tuned": "both fabrics tuned by an expert: InfiniBand congestion control on; RoCE DCQCN with ECN above an "
    "ECMP collision's queue (this project's tuning, README risk testbed) or HPCC-class telemetry congestion "
    "control on Spectrum-X",
}
# the risk testbed's congestion control for each fabric by tuning state (aifabric.stages.risk.testbed BASELINES)
_BASELINE = {
    ("as-shipped", "roce"): "dcqcn-vendor",
    ("as-shipped", "infiniband"): "none",
    ("tuned", "roce"): "dcqcn",
    ("tuned", "infiniband"): "ib-cc",
}
# names a scenario's assumptions: section may set, beyond the deployment ones: the decision's uncertain
# inputs (aifabric.stages.decide.objective.uncertain_inputs)
_INPUT_PATTERNS = (
    r"price\.(switch|nic|transceiver|cable)\.[a-z0-9.\-]+",
    r"nic_efficiency\.[a-z0-9.\-]+",
    r"misconfiguration_probability",
    r"compute_efficiency",
)
DEPLOYMENT_NAMES = ("storage.placement", "storage.share", "tuning", "congestion_share", "sharp")
#: SHARP on the InfiniBand designs whose switches have it (aifabric.stages.measure.sharp): on by default
SHARP_STATES = ("on", "off")


@dataclass(frozen=True)
class Deployment:
    """The categorical settings every stage reads, the same for every fabric."""

    storage_placement: str = "separate"
    storage_share: float | None = None  # set by the user; else from the job's storage model when on-fabric
    tuning: str = "as-shipped"
    source: dict | None = None  # setting -> "default" | "advisor" | "assumptions:"
    # resolved by the pipeline (:func:`storage_share`): the share of time storage traffic shares the
    # compute fabric, its (low, high) and where it comes from
    storage_share_range: tuple[float, float] | None = None
    storage_basis: str = ""
    sharp: str = "on"  # SHARP_STATES: in-network reduction where the IB switch has it

    @property
    def storage_on_fabric(self) -> bool:
        return self.storage_placement == "on-fabric"


def baseline_for(tuning: str, technology: str, preset: str = "") -> str:
    """The risk testbed's congestion control for a fabric in this tuning state (Spectrum-X's own CC
    is its shipped state)."""
    if technology == "roce" and preset == "spectrum-x":
        return "hpcc"
    return _BASELINE[(tuning, technology)]


def _allowed(name: str) -> bool:
    return name in DEPLOYMENT_NAMES or any(re.fullmatch(p, name) for p in _INPUT_PATTERNS)


def check_overrides(overrides: dict | None, file: str | None = None) -> dict:
    """The scenario's ``assumptions:`` mapping, checked: known names, values in range (one-line errors)."""
    out: dict = {}
    for name, value in (overrides or {}).items():
        field = f"assumptions.{name}"

        def bad(problem: str, allowed: str, value=value, field=field) -> InputError:
            e = InputError(problem, field=field, value=value, allowed=allowed)
            return e.with_file(file) if file else e

        if not isinstance(name, str) or not _allowed(name):
            raise bad(
                "no such assumption (the names are those of compare --json's assumptions[])",
                "storage.placement, storage.share, tuning, congestion_share, sharp, misconfiguration_probability, "
                "compute_efficiency, price.<switch|nic|transceiver|cable>.<design>, nic_efficiency.<design>",
                value=name,
            )
        if name == "storage.placement":
            if value not in STORAGE_PLACEMENTS:
                raise bad("not an allowed value", ", ".join(STORAGE_PLACEMENTS))
        elif name == "tuning":
            if value not in TUNING_STATES:
                raise bad("not an allowed value", ", ".join(TUNING_STATES))
        elif name == "sharp":
            if value not in SHARP_STATES:
                raise bad("not an allowed value", ", ".join(SHARP_STATES))
        else:
            if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
                raise bad("must be a number", "a finite number")
            value = float(value)
            share = name in ("storage.share", "congestion_share", "misconfiguration_probability")
            if share and not 0 <= value <= 1:
                raise bad("out of range", "a fraction in [0, 1]")
            if name.startswith("price.") and not 0 < value <= 100:
                raise bad("out of range", "a multiplier of the catalog price in (0, 100]")
            if (name == "compute_efficiency" or name.startswith("nic_efficiency.")) and not 0 < value <= 1:
                raise bad("out of range", "a fraction in (0, 1]")
        out[name] = value
    return out


def resolve(adv, overrides: dict | None = None, storage_section: dict | None = None) -> Deployment:
    """The deployment settings: the scenario's ``assumptions:`` over the advisor's questions
    (``advisor.storage_placement`` / ``--storage-on-fabric``, ``advisor.tuning`` / ``--tuning``) over
    the ``storage:`` section's ``on_backend``, over the defaults."""
    o = overrides or {}
    src = {}
    placement = "separate"
    src["storage.placement"] = "default"
    if storage_section and storage_section.get("on_backend") is not None:
        placement, src["storage.placement"] = (
            "on-fabric" if storage_section["on_backend"] else "separate",
            "storage.on_backend",
        )
    if getattr(adv, "storage_placement", None):
        placement, src["storage.placement"] = adv.storage_placement, "advisor"
    if "storage.placement" in o:
        placement, src["storage.placement"] = o["storage.placement"], "assumptions:"
    tuning = getattr(adv, "tuning", None) or "as-shipped"
    src["tuning"] = "advisor" if getattr(adv, "tuning", None) not in (None, "as-shipped") else "default"
    if "tuning" in o:
        tuning, src["tuning"] = o["tuning"], "assumptions:"
    share = o.get("storage.share")
    if share is not None:
        src["storage.share"] = "assumptions:"
        if "storage.placement" not in o and share > 0:
            placement = "on-fabric"  # a share on the fabric means storage is on it
    src["sharp"] = "assumptions:" if "sharp" in o else "default"
    return Deployment(placement, share, tuning, src, sharp=o.get("sharp", "on"))


# the checkpoint period's plausible span around the storage model's 30-minute assumption (15-60 min)
# scales the modelled share by 2 and 1/2 (ASSUMPTION, no public source for a typical period)
SHARE_SPAN = (0.5, 2.0)


def storage_share(dep: Deployment, workload, perf) -> Deployment:
    """``dep`` with the storage share resolved (one setting, read by risk, the tail check and
    performance): 0 off the compute fabric; the user's value; else the job's own storage model —
    training: a checkpoint (14 B per parameter) written at the storage system's ingest every 30 min
    (:mod:`aifabric.workload.llm.storage`); the storage workload: its own burst share; inference: no
    checkpoints, 0."""
    from dataclasses import replace

    if not dep.storage_on_fabric:
        return replace(dep, storage_share=0.0, storage_share_range=(0.0, 0.0), storage_basis=STORAGE_SOURCE)
    if dep.storage_share is not None:
        v = float(dep.storage_share)
        return replace(dep, storage_share_range=(v, v), storage_basis="set in the scenario's assumptions:")
    share, basis = 0.0, "inference writes no checkpoints: model and KV reads only (0)"
    st = next((f.storage for f in perf.fabrics if getattr(f, "storage", None)), None)
    if st is not None:
        share = float(st["backend_busy_share"])
        basis = "the storage workload's checkpoint burst / period on the compute fabric"
    elif workload.model is not None and workload.spec is not None:
        from aifabric.workload.llm import storage as stm

        nodes = stm.default_storage_nodes(workload.gpus)
        ingest = nodes * stm.STORAGE_NODE_GBPS / 8 * 1e9
        t = stm.storage_traffic(
            workload.model,
            workload.gpus,
            0.0,
            stm.CHECKPOINT_PERIOD_S,
            storage_ingest_bytes_per_s=ingest,
            on_backend=True,
        )
        share = t.backend_busy_share
        basis = (
            f"the job's checkpoint model: {t.checkpoint_bytes / 1e12:.2f} TB (14 B per parameter) written in "
            f"{t.burst_s:.1f} s at {nodes} storage nodes' ingest every {t.checkpoint_period_s / 60:g} min "
            "(aifabric.workload.llm.storage; period an assumption, 15-60 min spans x0.5-x2)"
        )
    lo, hi = (min(1.0, share * k) for k in SHARE_SPAN)
    return replace(dep, storage_share=share, storage_share_range=(lo, hi), storage_basis=basis)
