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

# Per-hop switch latency when the catalog has none (defaults.yaml latency.*_switch_hop, low confidence).
SWITCH_HOP_NS = {"infiniband": 130.0, "roce": 600.0}
# NIC transmit + receive (defaults.yaml latency.nic_tx + nic_rx: estimate, midpoints of 0.3–0.8 µs).
NIC_PATH_NS = 550.0 + 550.0
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


# Routing of each named design (aifabric.design.plan.DESIGNS) in the flow model. Spectrum-X =
# Spectrum-4 adaptive routing with BlueField-3 / ConnectX-8 SuperNIC packet reordering (NVIDIA
# Spectrum-X documentation); Tomahawk 5 boxes under SONiC and Arista's 7060X6 hash with ECMP by
# default; a Jericho3-AI scheduled fabric sprays cells over its Ramon fabric elements with
# end-to-end credit-based scheduling (hardware-facts §A.5 [S43]): routing mode scheduled (ingress
# VOQs, egress-port grants, cells sprayed over every fabric link; README "Routing modes").
DESIGN_ROUTING = {
    "spectrum-x": ("adaptive-packet", "spectrum-x"),
    "jericho3-ai": ("scheduled", ""),
    "ib-": ("adaptive-packet", ""),
}


def _design_routing(label: str, technology: str, roce_routing: str | None, ib_routing: str | None):
    """(routing mode, preset) of a named design: its own where it has one, else the fabric's
    default or the advisor's --roce-routing / --ib-routing."""
    for prefix, routing in DESIGN_ROUTING.items():
        if label.startswith(prefix):
            if prefix == "ib-" and ib_routing:
                return ib_routing, ""
            return routing
    if technology == "infiniband":
        return ib_routing or ROUTING["infiniband"], ""
    return ROCE_ROUTINGS.get(roce_routing or "", (ROUTING["roce"], ""))


def _parts_by_technology(ids, kind: str, catalog) -> dict[str, str]:
    """``--switch`` / ``--nic`` ids keyed by the fabric they belong to (infiniband | roce)."""
    out: dict[str, str] = {}
    table = catalog.switches if kind == "switch" else catalog.nics
    for pid in ids or ():
        rec = table.get(pid)
        if rec is None:
            raise InputError(
                f"no such {kind}",
                field=f"--{kind} (advisor.{kind})",
                value=pid,
                allowed=", ".join(sorted(table)),
            )
        tech = "infiniband" if rec.technology == "infiniband" else "roce"
        if tech in out and out[tech] != pid:
            raise InputError(
                f"two {tech} {kind}es named" if kind == "switch" else f"two {tech} NICs named",
                field=f"--{kind} (advisor.{kind})",
                value=f"{out[tech]}, {pid}",
                allowed=f"one {kind} per technology (InfiniBand and/or Ethernet)",
            )
        out[tech] = pid
    return out


def _plan_kw(adv) -> dict:
    """plan_fabric's options the advisor sets (empty for the default comparison)."""
    kw: dict = {}
    if getattr(adv, "oversubscription", 1.0) != 1.0:
        kw["oversubscription"] = float(adv.oversubscription)
    if getattr(adv, "rail_only", False):
        kw["rail_only"] = True
    if getattr(adv, "max_tiers", 3) != 3:
        kw["max_tiers"] = int(adv.max_tiers)
    if getattr(adv, "lengths_m", None):
        kw["lengths_m"] = dict(adv.lengths_m)
    if getattr(adv, "hall_size_m", None) is not None:
        kw["data_hall_m"] = float(adv.hall_size_m)
    if getattr(adv, "dual_tor", False):
        kw["dual_tor"] = True
    if getattr(adv, "spine_spares", 0):
        kw["spine_spares"] = int(adv.spine_spares)
    return kw


def options_for(adv, gpu, catalog) -> tuple[DesignOption, ...]:
    """The options ``compare`` designs for the advisor's questions: InfiniBand and RoCE at the
    GPU system's reference parts (:func:`default_options`) unless the buyer's options say
    otherwise — named ``designs`` side by side, or ``switch`` / ``nic`` / ``nic_rate_gbps`` /
    ``planes`` for the two default fabrics; the plan options, ``lossy_roce`` and the hybrid's
    front end apply to every design."""
    kw = _plan_kw(adv)
    sn, ck = getattr(adv, "storage_nodes", None), getattr(adv, "checkpoint_gbytes_per_s", None)
    hybrid = (sn, ck) if sn is not None or ck is not None else None
    lossy = bool(getattr(adv, "lossy_roce", False))
    planes = getattr(adv, "planes", None)
    roce_routing = getattr(adv, "roce_routing", None)
    ib_routing = getattr(adv, "ib_routing", None)
    default_options(gpu, roce_routing, ib_routing)  # the routing words' checks (one error line)
    designs = getattr(adv, "designs", None)
    if designs:
        from aifabric.design.plan import DESIGNS

        for flag, value in (
            ("--switch", adv.switch),
            ("--nic", adv.nic),
            ("--nic-rate", adv.nic_rate_gbps),
        ):
            if value:
                raise InputError(
                    "a named design brings its own switch, NIC and rate",
                    field=flag,
                    value=value if not isinstance(value, list) else ",".join(value),
                    allowed="leave it out with --designs, or drop --designs",
                )
        out = []
        for label in designs:
            if label not in DESIGNS:
                raise InputError(
                    "unknown design",
                    field="--designs (advisor.designs)",
                    value=label,
                    allowed=", ".join(DESIGNS),
                )
            if any(o.design == label for o in out):
                raise InputError(
                    "named twice",
                    field="--designs (advisor.designs)",
                    value=label,
                    allowed="each design once",
                )
            d = DESIGNS[label]
            tech = d["technology"]
            rate = float(d.get("nic_rate_gbps") or nic_rate_for(gpu)[0])
            is_lossy = lossy and tech == "roce"
            routing, preset = _design_routing(label, tech, roce_routing, ib_routing)
            out.append(
                DesignOption(
                    label + ("-lossy" if is_lossy else ""),
                    tech,
                    rate,
                    routing,
                    preset,
                    design=label,
                    switch_id=d.get("switch_id"),
                    nic_id=d.get("nic_id"),
                    planes=planes if planes is not None else d.get("planes"),
                    lossy=is_lossy,
                    hybrid=hybrid,
                    plan_kw=kw,
                )
            )
        return tuple(out)
    rate = float(adv.nic_rate_gbps) if getattr(adv, "nic_rate_gbps", None) else nic_rate_for(gpu)[0]
    sw = _parts_by_technology(getattr(adv, "switch", None), "switch", catalog)
    nc = _parts_by_technology(getattr(adv, "nic", None), "nic", catalog)
    return (
        DesignOption(
            "infiniband",
            "infiniband",
            rate,
            ib_routing or ROUTING["infiniband"],
            switch_id=sw.get("infiniband"),
            nic_id=nc.get("infiniband"),
            planes=planes,
            hybrid=hybrid,
            plan_kw=kw,
        ),
        DesignOption(
            roce_key(rate),
            "roce",
            rate,
            *ROCE_ROUTINGS.get(roce_routing or "", (ROUTING["roce"], "")),
            switch_id=sw.get("roce"),
            nic_id=nc.get("roce"),
            planes=planes,
            lossy=lossy,
            hybrid=hybrid,
            plan_kw=kw,
        ),
    )


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
    "options_for",
    "roce_key",
]
