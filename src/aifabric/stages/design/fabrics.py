"""Stage 1 — *design*: the fabric options to compare → topology size, bill of materials, capex,
power and the latency of the longest host-to-host path.

Input: :class:`DesignInput` (GPU count and type, the options, the catalog). Output:
:class:`DesignEvidence`, one :class:`FabricDesign` per option. The pricing itself is
:func:`aifabric.design.plan.plan_fabric`; this stage picks the options (rule 7 of the product brief:
the NIC rate follows the GPU's NVLink rate) and derives what later stages need from the plan.

Add a fabric option here: a new :class:`DesignOption` in :func:`default_options` (or passed in by
the caller), priced by ``plan_fabric``; the later stages iterate over whatever options arrive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aifabric.design.plan import FabricPlan, plan_fabric
from aifabric.design.redundancy import ib_dual_tor_note
from aifabric.errors import InputError
from aifabric.hardware.catalog import default_value

# Per-hop switch latency when the catalog has none, and NIC transmit + receive: read from
# defaults.yaml (latency.*_switch_hop, latency.nic_tx + nic_rx; low confidence), one copy.
SWITCH_HOP_NS = {
    "infiniband": float(default_value("latency.ib_switch_hop")),
    "roce": float(default_value("latency.ethernet_switch_hop")),
}
NIC_PATH_NS = float(default_value("latency.nic_tx")) + float(default_value("latency.nic_rx"))
FIBRE_NS_PER_M = 5.05  # propagation in fibre (refractive index ~1.5)
# Routing mode (aifabric.scenario.ROUTING_MODES) each technology uses unless the option says
# otherwise (README "Routing modes"):
# * InfiniBand: adaptive-packet — AR as deployed on AI clusters: UFM / SuperPOD enable it on the
#   switches (OpenSM routing_engine ar_updn, audit/ib.py) and NCCL turns AR on by default when the
#   link layer is IB, for messages above NCCL_IB_AR_THRESHOLD = 8192 B (hardware-facts §D, S15);
#   the HCA places out-of-order packets. A plain OpenSM without AR routes static min-hop (its
#   default routing_engine minhop): compare --ib-routing static.
# * RoCE: ecmp — switches hash the 5-tuple, whose RoCEv2 UDP source port differs per QP; NCCL leaves
#   AR off on RoCE (S15). roce_routing adaptive-packet / spectrum-x: Spectrum-X class switches with
#   per-packet AR and a SuperNIC that reorders (hardware-facts A.3, S35/S36).
ROUTING = {"infiniband": "adaptive-packet", "roce": "ecmp"}
IB_ROUTINGS = ("adaptive-packet", "static")


def is_adaptive(routing: str) -> bool:
    """Whether ``routing`` chooses ports by fabric state (flowlet, adaptive-packet, old adaptive, and
    a scheduled fabric's credit-driven cell spraying)."""
    return routing in ("adaptive", "flowlet", "adaptive-packet", "scheduled")


# compare's roce_routing words → (mode, preset); ``adaptive`` is the old spelling (per packet)
ROCE_ROUTINGS = {
    "ecmp": ("ecmp", ""),
    "flowlet": ("flowlet", ""),
    "adaptive-packet": ("adaptive-packet", ""),
    "adaptive": ("adaptive-packet", ""),
    "spectrum-x": ("adaptive-packet", "spectrum-x"),
}


@dataclass(frozen=True)
class DesignOption:
    """One fabric to design: ``key`` names it in every later stage (``infiniband``, ``roce-400g``,
    or a named design's label such as ``spectrum-x-400g``).

    The buyer's options (issue 14) ride along: ``design`` names a :data:`aifabric.design.plan.DESIGNS`
    entry (its switch, NIC, rate and planes), ``switch_id`` / ``nic_id`` / ``planes`` override the
    parts, ``plan_kw`` holds the rest of :func:`aifabric.design.plan.plan_fabric`'s options
    (oversubscription, rail_only, max_tiers, lengths_m, data_hall_m, dual_tor, spine_spares),
    ``lossy`` runs RoCE without PFC (NIC retransmission) and ``hybrid`` = (storage nodes,
    checkpoint GB/s) adds the Ethernet front-end/storage network to the priced design."""

    key: str
    technology: str  # infiniband | roce
    nic_rate_gbps: float
    routing: str  # a routing mode: adaptive-packet | static | ecmp | flowlet
    preset: str = ""  # spectrum-x: per-packet AR + its telemetry congestion control (HPCC here)
    design: str | None = None
    switch_id: str | None = None
    nic_id: str | None = None
    planes: int | None = None
    lossy: bool = False
    hybrid: tuple[int | None, float | None] | None = None
    plan_kw: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class DesignInput:
    gpus: int
    gpu: str
    options: tuple[DesignOption, ...]
    catalog: Any = field(repr=False, compare=False)


@dataclass(frozen=True)
class FabricDesign:
    """One designed and priced fabric, plus the path facts later stages use."""

    key: str
    technology: str
    routing: str
    switch_id: str
    nic_rate_gbps: float
    tiers: int
    radix: int
    max_gpus: int
    capex_usd: float
    power_w: float
    switch_hop_ns: float  # the catalog's, else SWITCH_HOP_NS
    switch_buffer_bytes: int | None  # the catalog's shared buffer (None: unknown)
    lengths_m: dict[str, float]
    links_on_longest_path: int  # host → host, 0 when every GPU is in one node
    propagation_ns: float  # fibre on the longest path
    path_latency_us: float  # switch hops + propagation on the longest path
    small_message_latency_us: float | None  # + NIC transmit/receive; None without a network
    plan: FabricPlan = field(repr=False, compare=False)
    design_name: str = ""  # the design's label (recommendation.design)
    family: str = ""  # infiniband | roce-400g | roce-800g | hybrid (recommendation.fabric)
    lossy: bool = False  # RoCE without PFC: NIC retransmission recovers drops
    front_end: dict | None = None  # hybrid: the Ethernet front-end/storage network priced in
    preset: str = ""  # spectrum-x (see DesignOption)
    # the switch's in-network reduction (the catalog's in_network_reduction, e.g. SHARPv3 on
    # Quantum-2); None on Ethernet switches: no shipping, sourced equivalent (stages.measure.sharp)
    in_network_reduction: str | None = None

    @property
    def label(self) -> str:
        return f"{self.key} ({self.switch_id})"

    def to_dict(self) -> dict:
        return {
            "fabric": self.key,
            "technology": self.technology,
            "routing": self.routing,
            "switch": self.switch_id,
            "nic_rate_gbps": self.nic_rate_gbps,
            "tiers": self.tiers,
            "radix": self.radix,
            "max_gpus": self.max_gpus,
            "capex_usd": self.capex_usd,
            "power_w": self.power_w,
            "switch_hop_ns": self.switch_hop_ns,
            "switch_buffer_bytes": self.switch_buffer_bytes,
            "lengths_m": dict(self.lengths_m),
            "links_on_longest_path": self.links_on_longest_path,
            "propagation_ns": self.propagation_ns,
            "path_latency_us": self.path_latency_us,
            "small_message_latency_us": self.small_message_latency_us,
            "design": self.design_name,
            "family": self.family,
            "nic": self.plan.nic_id,
            "planes": self.plan.planes,
            "oversubscription": self.plan.oversubscription,
            "lossy": self.lossy,
            "front_end": self.front_end,
            "in_network_reduction": self.in_network_reduction,
        } | ({"preset": self.preset} if self.preset else {})


@dataclass(frozen=True)
class DesignEvidence:
    gpus: int
    gpu: str
    gpus_per_node: int
    nic_rate_gbps: float
    nic_rate_basis: str  # rule 7's reasoning, in words
    nic_rate_evidence: dict[str, str]
    fabrics: tuple[FabricDesign, ...]
    scale_up_gpus: int = 0  # NVLink domain (72 on GB200/GB300 NVL72; = gpus_per_node on HGX)
    radix_note: str | None = None  # when the designs' switches differ in radix at their link rate

    @property
    def nodes(self) -> int:
        return -(-self.gpus // self.gpus_per_node)

    @property
    def has_network(self) -> bool:
        """More GPUs than one node: collectives cross the scale-out fabric."""
        return self.gpus > self.gpus_per_node

    def fabric(self, key: str) -> FabricDesign | None:
        return next((f for f in self.fabrics if f.key == key), None)

    def to_dict(self) -> dict:
        return {
            "gpus": self.gpus,
            "gpu": self.gpu,
            "gpus_per_node": self.gpus_per_node,
            "nic_rate_gbps": self.nic_rate_gbps,
            "nic_rate_basis": self.nic_rate_basis,
            "scale_up_gpus": self.scale_up_gpus or self.gpus_per_node,
            "radix_note": self.radix_note,
            "fabrics": [f.to_dict() for f in self.fabrics],
        }


def nic_rate_for(gpu) -> tuple[float, str, dict[str, str]]:
    """Rule 7: per-GPU NIC rate. The catalog's system record says what its reference design ships
    (``nic_rate_gbps``: DGX/HGX H100, H200 and B200 eight 400G ConnectX-7, B300 and GB300 800G
    ConnectX-8, hardware-facts §B); without it, the NVLink generation decides (≥ 900 GB/s → 800G).
    Returns (rate in Gb/s, the reason, its evidence)."""
    nvl = float(gpu.nvlink_gbytes_per_s or 0)
    listed = getattr(gpu, "nic_rate_gbps", None)
    if listed:
        rate = float(listed)
        nics = getattr(gpu, "nics_per_node", None) or gpu.gpus_per_node
        text = (
            f"{gpu.id.upper()} systems ship with {nics} scale-out NICs of {rate:g}G per node in their reference "
            f"design (catalog: {getattr(gpu, 'nic_rate_source', None) or getattr(gpu, 'source', None) or 'gpu record'}), {rate / 8:g} GB/s per GPU = "
            f"{rate / 8 / nvl:.0%} of its {nvl:g} GB/s NVLink"
        )
        return (
            rate,
            text,
            {
                "nic_rate": f"{rate:g} Gb/s",
                "nics_per_node": str(nics),
                "nvlink_gbytes_per_s": f"{nvl:g} GB/s",
            },
        )
    rate = 800.0 if nvl >= 900 else 400.0
    text = (
        f"{gpu.id.upper()} has {nvl:g} GB/s NVLink per direction, so one {rate:g}G NIC per GPU "
        f"({rate / 8:g} GB/s) keeps the network at {rate / 8 / nvl:.0%} of the NVLink rate, as HGX reference "
        "designs do"
    )
    return rate, text, {"nvlink_gbytes_per_s": f"{nvl:g} GB/s", "nic_rate": f"{rate:g} Gb/s"}


def roce_key(nic_rate_gbps: float) -> str:
    return "roce-800g" if nic_rate_gbps >= 800 else "roce-400g"


def default_options(
    gpu, roce_routing: str | None = None, ib_routing: str | None = None
) -> tuple[DesignOption, ...]:
    """InfiniBand and RoCE at the NIC rate rule 7 picks, routed by :data:`ROUTING` unless
    ``roce_routing`` (:data:`ROCE_ROUTINGS`) or ``ib_routing`` (:data:`IB_ROUTINGS`) says otherwise."""
    rate, _, _ = nic_rate_for(gpu)
    roce, preset = ROCE_ROUTINGS.get(roce_routing or "", (ROUTING["roce"], ""))
    if roce_routing and roce_routing not in ROCE_ROUTINGS:
        raise InputError(
            "not an allowed value",
            field="--roce-routing",
            value=roce_routing,
            allowed=", ".join(ROCE_ROUTINGS),
        )
    if ib_routing and ib_routing not in IB_ROUTINGS:
        raise InputError(
            "not an allowed value", field="--ib-routing", value=ib_routing, allowed=", ".join(IB_ROUTINGS)
        )
    return (
        DesignOption("infiniband", "infiniband", rate, ib_routing or ROUTING["infiniband"]),
        DesignOption(roce_key(rate), "roce", rate, roce, preset),
    )


MIRROR_SUFFIX = "-mirror"


def design_name(option: DesignOption, p: FabricPlan) -> str:
    """The design's label: a named design's own, else technology, switch, rate and routing (as
    before issue 14) plus a suffix for every buyer's option that differs from the reference."""
    if option.design:
        base = option.design
    else:
        tech = "ib" if option.technology == "infiniband" else "roce"
        base = f"{tech}-{p.switch_id}-{p.nic_rate_gbps:g}g"
        if option.technology == "roce" and is_adaptive(option.routing):
            base += "-adaptive"
        if option.nic_id:
            base += f"-{p.nic_id}"
        if option.planes is not None and option.planes > 1:
            base += f"-{option.planes}plane"
    kw = option.plan_kw
    if kw.get("rail_only"):
        base += "-rail-only"
    if kw.get("oversubscription", 1.0) != 1.0:
        base += f"-{kw['oversubscription']:g}to1"
    if kw.get("max_tiers", 3) != 3:
        base += f"-max{kw['max_tiers']}tiers"
    if kw.get("dual_tor") and option.technology == "roce":
        base += "-dual-tor"
    if kw.get("spine_spares"):
        base += f"-{kw['spine_spares']}spare-spines"
    if option.lossy and not base.endswith("-lossy"):
        base += "-lossy"
    if option.hybrid is not None:
        base += "+ethernet-front-end"
    if option.key.endswith(MIRROR_SUFFIX):  # validate --symmetry's twin of the same design
        base += MIRROR_SUFFIX
    return base


def _front_end(option: DesignOption, p: FabricPlan, catalog) -> dict:
    """The hybrid: the Ethernet front-end/storage network (aifabric.design.tco.price_hybrid) added
    to the plan's bill of materials and TCO, so every later stage prices the whole design."""
    from aifabric.design.tco import fabric_tco, price_hybrid

    storage_nodes, checkpoint = option.hybrid
    hp = price_hybrid(
        p,
        catalog,
        storage_nodes=storage_nodes,
        checkpoint_gbytes_per_s=checkpoint,
        lengths_m=p.lengths_m,
    )
    for line in hp.bom.lines:
        line.where = f"front-end {line.where}".strip()
    p.bom.lines.extend(hp.bom.lines)
    p.tco = fabric_tco(p, catalog)
    out = hp.to_dict()
    p.front_end = {**p.front_end, "hybrid": out}
    p.notes.append(
        f"whole design: + Ethernet front-end/storage network on {hp.front_end_switch} "
        f"({hp.front_end_endpoints} ports, {hp.storage_nodes} storage nodes), "
        f"${hp.front_end_capex_usd:,.0f} in the bill of materials (lines 'front-end ...')"
    )
    return out


def _fabric(option: DesignOption, gpus: int, gpn: int, gpu_id: str, catalog) -> FabricDesign:
    kw = dict(option.plan_kw)
    ib_note = ib_dual_tor_note(option.technology, kw)  # pops dual_tor for IB: said in the notes
    if option.design:
        from aifabric.design.plan import plan_design

        if option.planes is not None:
            kw["planes"] = option.planes
        p = plan_design(option.design, gpus, catalog, gpu=gpu_id, nic_rate_gbps=option.nic_rate_gbps, **kw)
    else:
        p = plan_fabric(
            gpus,
            option.technology,
            catalog,
            gpu=gpu_id,
            nic_rate_gbps=option.nic_rate_gbps,
            switch_id=option.switch_id,
            nic_id=option.nic_id,
            planes=option.planes,
            **kw,
        )
    p.notes.extend([ib_note] if ib_note else [])
    front = _front_end(option, p, catalog) if option.hybrid is not None else None
    if option.lossy:
        p.notes.append(
            "lossy RoCE: PFC off, the NIC retransmits dropped packets (go-back-N); its slowdown is measured "
            "on the packet-level risk testbed (risk scenario 'lossy-by-design')"
        )
    d = p.design
    sw = catalog.switches[p.switch_id]
    hop_ns = float(sw.latency_ns) if sw.latency_ns else SWITCH_HOP_NS[option.technology]
    hops = {1: 2, 2: 4, 3: 6}[d.tiers] if gpus > gpn else 0  # links on the longest host-host path
    prop_ns = (
        2 * FIBRE_NS_PER_M * p.lengths_m["host-leaf"]
        + (2 * FIBRE_NS_PER_M * p.lengths_m["leaf-spine"] if d.tiers >= 2 else 0)
        + (2 * FIBRE_NS_PER_M * p.lengths_m["spine-core"] if d.tiers >= 3 else 0)
    )
    path_us = (max(0, hops - 1) * hop_ns + prop_ns) / 1000
    small_lat = (NIC_PATH_NS + max(0, hops - 1) * hop_ns + prop_ns) / 1000 if hops else None
    if option.technology == "infiniband":
        family = "hybrid" if option.hybrid is not None else "infiniband"
    else:
        family = roce_key(p.nic_rate_gbps)
    return FabricDesign(
        key=option.key,
        technology=option.technology,
        routing=option.routing,
        switch_id=p.switch_id,
        nic_rate_gbps=p.nic_rate_gbps,
        tiers=d.tiers,
        radix=p.radix,
        max_gpus=d.max_gpus,
        capex_usd=p.capex_usd,
        power_w=p.power_w,
        switch_hop_ns=hop_ns,
        switch_buffer_bytes=getattr(sw, "buffer_bytes", None),
        lengths_m=dict(p.lengths_m),
        links_on_longest_path=hops,
        propagation_ns=prop_ns,
        path_latency_us=path_us,
        small_message_latency_us=small_lat,
        plan=p,
        design_name=design_name(option, p),
        family=family,
        lossy=option.lossy,
        front_end=front,
        preset=option.preset,
        in_network_reduction=getattr(sw, "in_network_reduction", None)
        if option.technology == "infiniband"
        else None,
    )


def design(inp: DesignInput, progress=None) -> DesignEvidence:
    """Plan and price every option for ``inp.gpus`` GPUs of type ``inp.gpu``."""
    from aifabric.design.plan import radix_note

    tick = progress or (lambda msg: None)
    gpu = inp.catalog.get("gpu", inp.gpu)
    gpn = int(gpu.gpus_per_node or 8)
    if inp.gpus > gpn and inp.gpus % gpn:
        raise InputError(f"must be a multiple of {gpn} GPUs per node", field="--gpus", value=inp.gpus)
    rate, basis, evidence = nic_rate_for(gpu)
    asked = {o.nic_rate_gbps for o in inp.options}
    if len(asked) == 1 and rate not in asked:
        rate = asked.pop()
        basis = f"{rate:g}G per GPU as asked (the {gpu.id.upper()} reference design has {nic_rate_for(gpu)[0]:g}G)"
        evidence = {**evidence, "nic_rate": f"{rate:g} Gb/s (asked)"}
    if len({o.key for o in inp.options}) != len(inp.options):
        raise InputError(
            "two options with the same name", field="--designs", value=", ".join(o.key for o in inp.options)
        )
    fabrics = []
    for option in inp.options:
        tick(f"planning {option.key}")
        fabrics.append(_fabric(option, inp.gpus, gpn, inp.gpu, inp.catalog))
    note = radix_note([f.plan for f in fabrics]) if len(fabrics) > 1 and inp.gpus > gpn else None
    return DesignEvidence(
        inp.gpus,
        inp.gpu,
        gpn,
        rate,
        basis,
        evidence,
        tuple(fabrics),
        int(gpu.scale_up_gpus or gpn),
        note,
    )


__all__ = [
    "IB_ROUTINGS",
    "ROCE_ROUTINGS",
    "ROUTING",
    "DesignEvidence",
    "DesignInput",
    "DesignOption",
    "FabricDesign",
    "default_options",
    "is_adaptive",
    "design",
    "design_name",
    "nic_rate_for",
    "roce_key",
]
