"""``aifabric plan``: design a rail-optimised InfiniBand and/or RoCE fabric for N GPUs and price it.

The number of tiers follows from the switch radix at the NIC rate (see
:func:`aifabric.topology.rail_sizing`): one switch while every NIC fits one radix, two tiers up to
radix²/2 GPUs (non-blocking), three up to radix³/4. When the chosen switch cannot reach the size the
error names the catalog switches that can (and suggests planes).

Defaults come from the GPU system's catalog record (``nic_rate_gbps``, ``nic_ib`` / ``nic_eth``,
``server_cages``): a B200 plan uses eight 400G ConnectX-7 per DGX/HGX B200, a B300 or GB300 plan
800G ConnectX-8. Other rates fall back to ``DEFAULT_SWITCH`` / ``DEFAULT_NIC`` (override with
``--switch`` / ``--nic``). A NIC whose rate per GPU is spread over several ports (ConnectX-8 C8240,
2 × 400G) runs as that many planes unless ``planes`` is given.

``rail_only=True`` drops the spine layer that joins rails (Wang et al., "Rail-only", S97): each
rail (GPU position in a server) × plane is its own fabric of ``nodes`` endpoints; traffic between
rails crosses NVLink inside a server.

``dual_tor=True`` (RoCE; refused on InfiniBand, which has no multi-chassis link aggregation) splits
each NIC's rate into two half-rate legs on a leaf pair; ``spine_spares=k`` adds k cabled spines per
plane beyond the non-blocking count (2-tier): rules and sources in :mod:`aifabric.design.redundancy`.

The plan carries its TCO (:func:`aifabric.design.tco.fabric_tco`) with the catalog's default TCO
inputs unless ``tco_inputs`` overrides them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from aifabric.design.cost import (
    DEFAULT_LENGTHS_M,
    LINK_CLASSES,
    NOT_INCLUDED,
    OPTICS_BRANDS,
    Bom,
    Media,
    check_host_link_media,
    price_rail_fabric,
    radix_at,
)
from aifabric.design.redundancy import (
    DUAL_TOR_SOURCE,
    add_spine_spares,
    check_dual_tor,
    check_spine_spares,
    dual_tor_sizing,
    ib_dual_tor_note,
    pair_leaves,
)
from aifabric.errors import InputError
from aifabric.topology import RailDesign, max_rail_gpus, rail_sizing

TECHNOLOGIES = ("infiniband", "roce")
DEFAULT_SWITCH = {
    ("infiniband", 400): "qm9700",
    ("infiniband", 800): "q3400",
    ("infiniband", 200): "qm9700",
    ("roce", 400): "sn5600",
    ("roce", 800): "sn5600",
    ("roce", 200): "sn5600",
}
DEFAULT_NIC = {
    ("infiniband", 400): "cx7-ib",
    ("infiniband", 800): "cx8-ib",
    ("infiniband", 200): "cx7-ib",
    ("roce", 400): "cx7-eth",
    ("roce", 800): "cx8-eth",
    ("roce", 200): "cx7-eth",
}
TECH_OF_SWITCH = {"infiniband": "infiniband", "roce": "ethernet"}
#: the transport a design runs end to end: InfiniBand RC, RoCE (RC, go-back-N) or Ultra Ethernet
TRANSPORTS = ("roce", "infiniband", "uet")


def default_transport(technology: str) -> str:
    """The transport a technology runs unless a design says otherwise (RoCE on Ethernet)."""
    return "infiniband" if technology == "infiniband" else "roce"


def transport_words(transport: str, nic) -> str:
    """One sentence on the transport a design runs and why (a UEC-ready NIC run as RoCE said so)."""
    if transport == "uet":
        return (
            "transport: Ultra Ethernet (UET, UEC 1.0): packets sprayed over 64 entropy values, "
            "unordered delivery with selective retransmission, switches trim, NSCC; lossy (no PFC)"
        )
    if transport == "roce" and nic is not None and nic.uet is not None and nic.uet.transport:
        return (
            f"transport: RoCE (RC, go-back-N) — {nic.id} is UEC-capable but this design runs it as plain "
            "RoCE; the uec-* designs run its UET transport"
        )
    return ""


def check_uet_parts(label: str, switch, nic) -> None:
    """A UET design needs a NIC that runs the UET transport (catalog ``uet.transport``)."""
    if nic.uet is None or not nic.uet.transport:
        raise InputError(
            f"design {label} runs the UET transport; NIC {nic.id} has no UET transport in the catalog",
            field="--nic",
            value=nic.id,
            allowed="a NIC with uet.transport: true (pollara400, thor-ultra)",
        )


@dataclass
class FabricPlan:
    """A designed and priced fabric."""

    technology: str
    gpus: int
    gpu: str
    nic_rate_gbps: float
    planes: int
    oversubscription: float
    switch_id: str
    nic_id: str
    radix: int
    design: RailDesign
    bom: Bom
    media: dict[str, Media]
    lengths_m: dict[str, float]
    notes: list[str] = field(default_factory=list)
    server_cages: str = "per-nic"
    optics: str = "any"
    rail_only: bool = False
    nodes: int = 0
    front_end: dict = field(default_factory=dict)
    tco: object | None = None  # aifabric.design.tco.Tco
    design_label: str | None = None
    dual_tor: bool = False
    spine_spares: int = 0
    spine_failures_tolerated: int = 0
    host_link_media: str = "auto"
    transport: str = ""  # roce | infiniband | uet (set by plan_fabric / plan_design)

    @property
    def legs_per_nic(self) -> int:
        """Host links per NIC per plane: 2 with dual-ToR (one per leaf of the pair), else 1."""
        return 2 if self.dual_tor else 1

    @property
    def link_rate_gbps(self) -> float:
        return self.nic_rate_gbps / self.planes / self.legs_per_nic

    @property
    def capex_usd(self) -> float:
        return round(self.bom.total("total_usd"), 2)

    @property
    def capex_range_usd(self) -> tuple[float, float]:
        """(low, high) capex with every price at the low / high end of its range."""
        return self.bom.total_range()

    @property
    def capex_input_usd(self) -> float:
        """The part of capex priced by input ranges (no public price): what the verdict depends on."""
        return round(sum(x.total_usd for x in self.bom.lines if x.price_input), 2)

    def capex_at(self, unit_prices_usd: dict[str, float]) -> float:
        """Capex with some catalog ids re-priced (``{"sn5600": 40000}``): for break-even searches."""
        return round(
            sum(x.count * unit_prices_usd.get(x.catalog_id, x.unit_price_usd) for x in self.bom.lines), 2
        )

    def count_of(self, catalog_id: str) -> int:
        """How many units of ``catalog_id`` the BOM holds."""
        return int(sum(x.count for x in self.bom.lines if x.catalog_id == catalog_id))

    @property
    def power_w(self) -> float:
        return round(self.bom.total("total_power_w"), 2)

    def _redundancy_keys(self) -> dict:
        """dual_tor / spine_spares keys, only when asked (the default plan's JSON is unchanged)."""
        if not self.dual_tor and not self.spine_spares:
            return {}
        return {
            "dual_tor": self.dual_tor,
            "legs_per_nic": self.legs_per_nic,
            "spine_spares": self.spine_spares,
            "spine_failures_tolerated": self.spine_failures_tolerated,
        }

    def to_dict(self) -> dict:
        d = self.design
        return {
            "technology": self.technology,
            "transport": self.transport or default_transport(self.technology),
            "gpus": self.gpus,
            "gpu": self.gpu,
            "tiers": d.tiers,
            "switch": self.switch_id,
            "nic": self.nic_id,
            "nic_rate_gbps": self.nic_rate_gbps,
            "link_rate_gbps": self.link_rate_gbps,
            "radix": self.radix,
            "planes": self.planes,
            "oversubscription": self.oversubscription,
            "leaf_ports_down": d.leaf_down,
            "leaf_ports_up": d.leaf_up,
            "switches": d.switches,
            "switch_count": d.total_switches,
            "links": d.links,
            "nics": self.bom.count("nic"),
            "transceivers": self.bom.count("transceiver"),
            "cables": self.bom.count("cable"),
            "capex_usd": self.capex_usd,
            "capex_range_usd": list(self.capex_range_usd),
            "capex_input_usd": self.capex_input_usd,
            "capex_by_category_usd": {
                c: round(self.bom.total("total_usd", c), 2) for c in ("switch", "nic", "transceiver", "cable")
            },
            "network_capex_per_gpu_usd": round(self.capex_usd / self.gpus, 2),
            "power_w": self.power_w,
            "power_per_gpu_w": round(self.power_w / self.gpus, 2),
            "max_gpus_at_this_radix": d.max_gpus,
            "media": {cls: m.kind for cls, m in self.media.items()},
            "cable_lengths_m": {cls: self.lengths_m[cls] for cls in self.media},
            "estimated_lines": sum(1 for x in self.bom.lines if x.estimate),
            "input_lines": sum(1 for x in self.bom.lines if x.price_input),
            "server_cages": self.server_cages,
            "optics": self.optics,
            **({"host_link_media": self.host_link_media} if self.host_link_media != "auto" else {}),
            "design": "rail-only" if self.rail_only else "rail-optimised",
            "design_label": self.design_label
            or f"{self.technology}-{self.switch_id}-{self.nic_id}-{self.nic_rate_gbps:g}g"
            + (f"-{self.planes}plane" if self.planes > 1 else ""),
            "nodes": self.nodes,
            **self._redundancy_keys(),
            "front_end": self.front_end,
            **(self.tco.to_dict() if self.tco is not None else {}),
            "bom": [x.to_dict() for x in self.bom.lines],
            "not_included": list(NOT_INCLUDED),
            "notes": self.notes,
        }


def _rates(switch) -> list[float]:
    rates = [switch.port_rate_gbps]
    for mode in switch.port_modes or ():
        rates.append(mode["rate_gbps"] if isinstance(mode, dict) else mode.rate_gbps)
    return sorted(set(rates))


def default_parts(gpu_spec, technology: str, nic_rate_gbps: float) -> tuple[str | None, str | None]:
    """(switch id, NIC id) used when none is named: the GPU system's own NIC at its own rate,
    else the table defaults for the technology and rate."""
    key = (technology, int(nic_rate_gbps))
    nic = None
    if int(nic_rate_gbps) == int(gpu_spec.nic_rate_gbps):
        nic = gpu_spec.nic_ib if technology == "infiniband" else gpu_spec.nic_eth
    return DEFAULT_SWITCH.get(key), nic or DEFAULT_NIC.get(key)


class _Parts(NamedTuple):
    """The parts and rates chosen for a plan."""

    switch_id: str
    switch: object
    nic_id: str
    nic: object
    planes: int
    server_cages: str
    link_rate_gbps: float
    radix: int


def plan_fabric(
    gpus: int,
    technology: str,
    catalog,
    gpu: str = "h100",
    nic_rate_gbps: float | None = None,
    oversubscription: float = 1.0,
    switch_id: str | None = None,
    nic_id: str | None = None,
    planes: int | None = None,
    lengths_m: dict[str, float] | None = None,
    *,
    server_cages: str | None = None,
    optics: str = "any",
    rail_only: bool = False,
    tco_inputs: dict[str, float] | None = None,
    max_tiers: int = 3,
    data_hall_m: float | None = None,
    dual_tor: bool = False,
    spine_spares: int = 0,
    host_link_media: str = "auto",
) -> FabricPlan:
    """Design and price one fabric. Raises :class:`InputError` on bad input or an impossible size.

    ``nic_rate_gbps`` defaults to the GPU system's scale-out rate per GPU (catalog
    ``nic_rate_gbps``); ``planes`` to the NIC's port count when its ports share the rate (else 1);
    ``server_cages`` to the system's (``twin-port`` on DGX-class servers, ``per-nic`` else);
    ``optics`` restricts transceivers to a brand (``any``, ``nvidia``, ``third-party``);
    ``tco_inputs`` overrides TCO parameters by key (``{"pue": 1.2}``); ``max_tiers`` caps the
    tiers (a size that needs more is refused with the switches that reach it); ``data_hall_m``
    (side of a square data hall) sets the switch-to-switch lengths to the worst-case run along
    cable trays, 2 × the side (a geometric rule, not a sourced figure), unless ``lengths_m``
    names them. ``dual_tor`` puts each NIC's two half-rate legs on two leaves (RoCE only; refused
    on InfiniBand) and ``spine_spares`` adds spines beyond the non-blocking count (2-tier): see
    :mod:`aifabric.design.redundancy` for the rules and sources. ``host_link_media`` imposes a
    media kind on host links (``auto``: the cheapest that reaches, the same rule and table for both
    protocols; see :data:`aifabric.design.cost.HOST_LINK_MEDIA`)."""
    gpu_spec, spine_spares, nic_rate_gbps = _checked_inputs(
        catalog, technology, gpu, nic_rate_gbps, planes, optics, dual_tor, spine_spares, host_link_media
    )
    p = _parts(
        catalog, gpu_spec, technology, nic_rate_gbps, switch_id, nic_id, planes, server_cages, dual_tor
    )
    sw_id, switch, nc_id, _nic, planes, cages, link_rate, radix = p
    legs = 2 if dual_tor else 1
    gpn = int(gpu_spec.gpus_per_node or 8)
    sizing = (gpus, gpn, radix, oversubscription, planes, max_tiers)
    design = _size(catalog, sizing, switch, sw_id, link_rate, rail_only, dual_tor)
    base_spines = design.spines
    design, tolerated = add_spine_spares(design, spine_spares, (1 if rail_only else gpn) * legs)
    lengths = _lengths(data_hall_m, lengths_m)
    nodes = max(1, -(-gpus // gpn))
    bom, media = _price(catalog, p, design, technology, lengths, optics, gpus, nodes, legs, host_link_media)
    fp = FabricPlan(
        technology,
        gpus,
        gpu,
        nic_rate_gbps,
        planes,
        float(oversubscription),
        sw_id,
        nc_id,
        radix,
        design,
        bom,
        media,
        {c: lengths[c] for c in LINK_CLASSES},
        [],
        server_cages=cages,
        optics=optics,
        rail_only=rail_only,
        nodes=nodes,
        front_end=_front_end(catalog, gpu_spec, nodes),
        dual_tor=bool(dual_tor),
        spine_spares=spine_spares,
        spine_failures_tolerated=tolerated,
        host_link_media=host_link_media,
        transport=default_transport(technology),
    )
    fp.notes.extend(_layout_notes(fp, gpu_spec, gpn, switch, _nic) + _redundancy_notes(fp, base_spines))
    from aifabric.design.tco import fabric_tco

    fp.tco = fabric_tco(fp, catalog, tco_inputs)
    return fp


def _price(catalog, p: _Parts, design, technology, lengths, optics, gpus, nodes, legs, host_link_media):
    """(bill of materials, media per link class) of the sized fabric with the chosen parts."""
    return price_rail_fabric(
        catalog,
        design,
        technology,
        p.switch,
        p.nic,
        p.link_rate_gbps,
        lengths,
        server_cages=p.server_cages,
        radix=p.radix,
        optics=optics,
        nics=gpus,
        nodes=nodes,
        legs_per_port=legs,
        host_link_media=host_link_media,
    )


def _checked_inputs(
    catalog, technology, gpu, nic_rate_gbps, planes, optics, dual_tor, spine_spares, host_link_media
):
    """The options checked before any part is chosen: (GPU system record, spine spares, NIC rate
    per GPU — the system's own when not given)."""
    if technology not in TECHNOLOGIES:
        raise InputError(
            "unknown technology", field="--technology", value=technology, allowed="ib, infiniband, roce, both"
        )
    gpu_spec = catalog.get("gpu", gpu)
    spine_spares = check_spine_spares(spine_spares)
    check_host_link_media(host_link_media)
    if dual_tor:
        check_dual_tor(technology)
    if planes is not None and planes < 1:
        raise InputError("must be ≥ 1", field="--planes", value=planes, allowed="1, 2, 4")
    if optics not in OPTICS_BRANDS:
        raise InputError(
            "unknown optics brand", field="--optics", value=optics, allowed=", ".join(OPTICS_BRANDS)
        )
    if nic_rate_gbps is None:
        nic_rate_gbps = float(gpu_spec.nic_rate_gbps)
    if nic_rate_gbps <= 0:
        raise InputError("must be > 0", field="--nic-rate", value=nic_rate_gbps, allowed="e.g. 400Gbps")
    return gpu_spec, spine_spares, nic_rate_gbps


def _parts(catalog, gpu_spec, technology, nic_rate_gbps, switch_id, nic_id, planes, server_cages, dual_tor):
    """The switch and NIC, the planes, the server cages, the host-link rate and the radix at it."""
    sw_id, switch, nc_id, nic = _choose_parts(
        catalog, gpu_spec, technology, nic_rate_gbps, switch_id, nic_id, planes
    )
    planes = _planes(catalog, nic, nc_id, nic_rate_gbps, planes)
    cages = _server_cages(server_cages, gpu_spec, nc_id)
    link_rate = nic_rate_gbps / planes / (2 if dual_tor else 1)
    sw_id, switch, radix = _leg_switch(catalog, technology, switch_id, sw_id, switch, link_rate)
    return _Parts(sw_id, switch, nc_id, nic, planes, cages, link_rate, radix)


def _choose_parts(catalog, gpu_spec, technology, nic_rate_gbps, switch_id, nic_id, planes):
    """(switch id, switch, NIC id, NIC): the named parts, else the defaults for the GPU system,
    technology and rate; a NIC with fewer ports than the planes asked becomes the catalog card
    whose ports are the planes. Each must be of the technology."""
    def_sw, def_nic = default_parts(gpu_spec, technology, nic_rate_gbps)
    sw_id = switch_id or def_sw
    nc_id = nic_id or def_nic
    if sw_id is None or nc_id is None:
        raise InputError(
            "no default parts for this NIC rate",
            field="--nic-rate",
            value=f"{nic_rate_gbps:g}Gbps",
            allowed="200Gbps, 400Gbps, 800Gbps, or name --switch and --nic",
        )
    switch = catalog.get("switch", sw_id)
    nic = catalog.get("nic", nc_id)
    if (
        nic_id is None
        and planes is not None
        and planes > nic.ports
        and nic_rate_gbps / planes < nic.port_rate_gbps
    ):
        nc_id, nic = _split_nic(catalog, nc_id, nic, planes, nic_rate_gbps)
    _check_technology(catalog, technology, "switch", sw_id, switch)
    _check_technology(catalog, technology, "nic", nc_id, nic)
    return sw_id, switch, nc_id, nic


def _split_nic(catalog, nc_id, nic, planes, nic_rate_gbps):
    """Planes asked of a NIC with fewer ports: the catalog card whose ports are the planes (an
    800G ConnectX-8 as 2 × NDR 400G is the C8240, cx8-ib-2x400, as on Ethernet cx8-eth)."""
    split = sorted(
        n.id
        for n in catalog.nics.values()
        if n.technology == nic.technology
        and n.role == "scale-out"
        and n.ports == planes
        and n.port_rate_gbps == nic_rate_gbps / planes
    )
    if split:
        return split[0], catalog.nics[split[0]]
    return nc_id, nic


def _check_technology(catalog, technology, kind, part_id, part) -> None:
    """InputError unless the switch / NIC ``part`` is of the fabric's technology."""
    if part.technology == TECH_OF_SWITCH[technology]:
        return
    parts = catalog.switches if kind == "switch" else catalog.nics
    raise InputError(
        f"{'switch' if kind == 'switch' else 'NIC'} {part_id} is {part.technology}, not usable for {technology}",
        field=f"--{kind}",
        value=part_id,
        allowed=", ".join(sorted(p.id for p in parts.values() if p.technology == TECH_OF_SWITCH[technology])),
    )


def _planes(catalog, nic, nc_id, nic_rate_gbps, planes) -> int:
    """The planes: as asked, else the NIC's port count when its ports share the rate (else 1);
    refused when a plane's share exceeds a port or the NIC is slower than the rate."""
    if planes is None:
        planes = int(nic.ports) if nic.ports > 1 and nic.ports * nic.port_rate_gbps == nic_rate_gbps else 1
    if nic_rate_gbps / planes > nic.port_rate_gbps:
        raise InputError(
            f"NIC {nc_id} has {nic.ports} × {nic.port_rate_gbps}G ports: {nic_rate_gbps:g}G per GPU needs "
            f"{math.ceil(nic_rate_gbps / nic.port_rate_gbps)} planes",
            field="--planes",
            value=planes,
            allowed=f"≥ {math.ceil(nic_rate_gbps / nic.port_rate_gbps)}, or a faster --nic",
        )
    if nic.ports * nic.port_rate_gbps < nic_rate_gbps:
        raise InputError(
            f"NIC {nc_id} ({nic.ports} × {nic.port_rate_gbps}G) is slower than {nic_rate_gbps:g}G per GPU",
            field="--nic",
            value=nc_id,
            allowed=", ".join(
                sorted(
                    n.id
                    for n in catalog.nics.values()
                    if n.technology == nic.technology and n.ports * n.port_rate_gbps >= nic_rate_gbps
                )
            )
            or "a faster NIC",
        )
    return planes


def _server_cages(server_cages, gpu_spec, nc_id) -> str:
    """The server-side cage style: as asked, else the GPU system's with its own NICs, else per-nic."""
    cages = server_cages or (
        gpu_spec.server_cages if nc_id in (gpu_spec.nic_ib, gpu_spec.nic_eth) else "per-nic"
    )
    if cages not in ("twin-port", "per-nic"):
        raise InputError(
            "unknown server cage style", field="--server-cages", value=cages, allowed="twin-port, per-nic"
        )
    return cages


def _leg_switch(catalog, technology, switch_id, sw_id, switch, link_rate):
    """(switch id, switch, radix) at the host-link rate. Planes asked without a switch: the
    default switch of the legs' rate (an 800G ConnectX-8 as 2 × 400G NDR planes on QM9700 when
    the XDR Q3400 has no 400G ports)."""
    radix = radix_at(switch, link_rate)
    if radix is None and switch_id is None and DEFAULT_SWITCH.get((technology, int(link_rate))):
        sw_id = DEFAULT_SWITCH[(technology, int(link_rate))]
        switch = catalog.get("switch", sw_id)
        radix = radix_at(switch, link_rate)
    if radix is None:
        raise InputError(
            f"switch {sw_id} has no {link_rate:g}G ports",
            field="--switch",
            value=sw_id,
            allowed=f"a switch with {link_rate:g}G ports (its rates: "
            f"{', '.join(f'{r:g}G' for r in _rates(switch))})",
        )
    return sw_id, switch, radix


def _size(catalog, sizing, switch, sw_id, link_rate, rail_only, dual_tor) -> RailDesign:
    """The tiers and switch counts (``sizing`` = gpus, GPUs per node, radix, oversubscription,
    planes, max tiers): rail-only (each rail × plane its own fabric of one endpoint per server),
    dual-ToR or rail-optimised. A size beyond the switch names the catalog switches that reach it."""
    gpus, gpn, radix, oversubscription, planes, max_tiers = sizing
    legs = 2 if dual_tor else 1
    if max_tiers not in (1, 2, 3):
        raise InputError("must be 1, 2 or 3", field="--max-tiers", value=max_tiers, allowed="1, 2, 3")
    if rail_only and gpus > gpn and gpus % gpn:
        raise InputError(f"must be a multiple of {gpn} GPUs per node", field="--gpus", value=gpus)
    try:
        if rail_only:
            design = rail_sizing(
                max(1, gpus // gpn) * legs, legs, radix, oversubscription, planes * min(gpn, gpus), max_tiers
            )
            return pair_leaves(design) if dual_tor else design
        if dual_tor:
            return dual_tor_sizing(gpus, gpn, radix, oversubscription, planes, max_tiers)
        return rail_sizing(gpus, gpn, radix, oversubscription, planes, max_tiers)
    except InputError as exc:
        if exc.field != "gpus" or "exceed" not in exc.problem:
            raise InputError(
                exc.problem, field=f"--{exc.field.replace('_', '-')}", value=exc.value, allowed=exc.allowed
            ) from None
        raise _too_large(catalog, sizing, switch, sw_id, link_rate) from None


def _too_large(catalog, sizing, switch, sw_id, link_rate) -> InputError:
    """The error for a size the switch does not reach in the allowed tiers, naming those that do."""
    gpus, gpn, radix, oversubscription, _planes, max_tiers = sizing
    can = [
        s.id
        for s in catalog.switches.values()
        if s.technology == switch.technology
        and (r := radix_at(s, link_rate))
        and max_rail_gpus(r, gpn, oversubscription)[max_tiers] >= gpus
    ]
    hint = f"switches that reach it: {', '.join(sorted(can))}" if can else "no catalog switch reaches it"
    return InputError(
        f"{gpus} GPUs exceed what {sw_id} ({radix} × {link_rate:g}G) reaches in {max_tiers} tiers "
        f"({max_rail_gpus(radix, gpn, oversubscription)[max_tiers]} GPUs at {oversubscription:g}:1)",
        field="--gpus",
        value=gpus,
        allowed=f"{hint}; or --planes 2",
    )


def _lengths(data_hall_m, lengths_m) -> dict[str, float]:
    """Cable lengths per link class: the defaults, switch-to-switch runs of 2 × the hall side when
    one is given, then the lengths named."""
    lengths = dict(DEFAULT_LENGTHS_M)
    if data_hall_m is not None:
        if data_hall_m <= 0:
            raise InputError("must be > 0", field="--hall-size", value=data_hall_m, allowed="e.g. 60m")
        lengths.update({"leaf-spine": 2 * data_hall_m, "spine-core": 2 * data_hall_m})
    lengths.update(lengths_m or {})
    return lengths


def _layout_notes(fp: FabricPlan, gpu_spec, gpn: int, switch, nic) -> list[str]:
    """Notes on how the fabric is laid out: rail-only fabrics, server cages, NVLink domains,
    planes, the switch's port mode."""
    gpus, planes, link_rate = fp.gpus, fp.planes, fp.link_rate_gbps
    notes = []
    if fp.rail_only:
        notes.append(
            f"rail-only: {min(gpn, gpus) * planes} separate rail fabrics of {fp.nodes} endpoints; "
            "traffic between rails crosses NVLink inside a server (S97)"
        )
    if fp.server_cages == "twin-port":
        notes.append("server side: DGX-class twin-port flat-top OSFP cages, 2 NIC ports per module")
    domain = int(gpu_spec.scale_up_gpus or gpn)
    if domain > gpn:
        racks = gpus / domain
        notes.append(
            f"{gpus} GPUs = {racks:.4g} NVLink domains of {domain} ({gpu_spec.system or fp.gpu}); "
            f"scale-out NICs per {gpn}-GPU tray"
            + (
                ""
                if float(racks).is_integer()
                else f" — a whole number of domains is {domain * math.ceil(racks)}"
            )
        )
    if planes > 1:
        notes.append(
            f"{planes} planes: each NIC's {fp.nic_rate_gbps:g}G split into {planes} × {link_rate:g}G legs"
        )
    if fp.radix != switch.ports:
        notes.append(f"{fp.switch_id} used in its {fp.radix} × {link_rate:g}G mode")
    roce_words = transport_words(default_transport(fp.technology), nic)  # a UEC-capable NIC run as RoCE
    notes.extend([roce_words] if roce_words else [])
    return notes


def _redundancy_notes(fp: FabricPlan, base_spines: int) -> list[str]:
    """Notes on dual-ToR legs and spine spares (:mod:`aifabric.design.redundancy`)."""
    notes = []
    design, spine_spares = fp.design, fp.spine_spares
    if fp.dual_tor:
        notes.append(
            f"dual-ToR: each NIC's {fp.nic_rate_gbps / fp.planes:g}G per plane as 2 × {fp.link_rate_gbps:g}G legs "
            f"on two leaves (MLAG / EVPN multihoming, LACP at the host); each leaf port carries half "
            f"({DUAL_TOR_SOURCE})"
        )
    if spine_spares and design.tiers == 1:
        notes.append("spine spares not applied: a 1-switch fabric has no spine tier")
    elif spine_spares:
        notes.append(
            f"spine spares: {spine_spares} asked per plane → {design.spines} spines per plane (non-blocking "
            f"needs {base_spines} at the original leaf split); every leaf has {design.leaf_up} uplinks for "
            f"{design.nodes_per_su} hosts; {fp.spine_failures_tolerated} spine failure(s) per plane cost no "
            "bandwidth"
        )
    return notes


def _front_end(catalog, gpu_spec, nodes: int) -> dict:
    """The GPU system's storage / front-end NICs, listed only (they ship with the servers)."""
    if not (gpu_spec.storage_nics_per_node and gpu_spec.storage_nic):
        return {}
    sn = catalog.nics.get(gpu_spec.storage_nic)
    return {
        "nic": gpu_spec.storage_nic,
        "per_node": int(gpu_spec.storage_nics_per_node),
        "count": int(gpu_spec.storage_nics_per_node) * nodes,
        "port_rate_gbps": sn.port_rate_gbps if sn else None,
        "ports": sn.ports if sn else None,
        "note": "storage / front-end NICs of the system, listed only: ship with the servers; their "
        "network is priced by aifabric.design.tco.price_hybrid",
    }


#: Named fabric designs buyers choose between (label → plan_fabric arguments). ``nic_rate_gbps``
#: None = the GPU system's own rate. Labels are what ``recommendation.design`` reports.
DESIGNS: dict[str, dict] = {
    "ib-ndr-400g": {"technology": "infiniband", "nic_rate_gbps": 400, "switch_id": "qm9700"},
    "ib-xdr-800g": {
        "technology": "infiniband",
        "nic_rate_gbps": 800,
        "switch_id": "q3400",
        "nic_id": "cx8-ib",
    },
    "spectrum-x-400g": {"technology": "roce", "nic_rate_gbps": 400, "switch_id": "sn5600", "nic_id": "bf3"},
    "spectrum-x-800g-2plane": {
        "technology": "roce",
        "nic_rate_gbps": 800,
        "switch_id": "sn5600",
        "nic_id": "cx8-eth",
        "planes": 2,
    },
    "roce-sn5600-cx7-400g": {
        "technology": "roce",
        "nic_rate_gbps": 400,
        "switch_id": "sn5600",
        "nic_id": "cx7-eth",
    },
    "th5-sonic-400g": {
        "technology": "roce",
        "nic_rate_gbps": 400,
        "switch_id": "tomahawk5",
        "nic_id": "cx7-eth",
    },
    "th5-sonic-thor2-400g": {
        "technology": "roce",
        "nic_rate_gbps": 400,
        "switch_id": "tomahawk5",
        "nic_id": "thor2",
    },
    "th5-pollara-400g": {
        "technology": "roce",
        "nic_rate_gbps": 400,
        "switch_id": "tomahawk5",
        "nic_id": "pollara400",
    },
    "arista-th5-400g": {
        "technology": "roce",
        "nic_rate_gbps": 400,
        "switch_id": "arista-7060x6",
        "nic_id": "cx7-eth",
    },
    "jericho3-ai-400g": {
        "technology": "roce",
        "nic_rate_gbps": 400,
        "switch_id": "jericho3-ai",
        "nic_id": "cx7-eth",
    },
    # Ultra Ethernet: UEC-capable NICs on a trimming Tomahawk 6 (catalog uet fields, sources P46–P49)
    "uec-400g": {
        "technology": "roce",
        "transport": "uet",
        "nic_rate_gbps": 400,
        "switch_id": "tomahawk6-100g",
        "nic_id": "pollara400",
    },
    "uec-800g": {
        "technology": "roce",
        "transport": "uet",
        "nic_rate_gbps": 800,
        "switch_id": "dell-z9964f",
        "nic_id": "thor-ultra",
    },
}


def plan_design(label: str, gpus: int, catalog, gpu: str = "h100", **kw) -> FabricPlan:
    """Plan the named design ``label`` (see :data:`DESIGNS`); ``kw`` overrides its arguments or adds
    plan_fabric's other options. The plan's ``design_label`` is the label."""
    if label not in DESIGNS:
        raise InputError("unknown design", field="--design", value=label, allowed=", ".join(DESIGNS))
    args = {**DESIGNS[label], **kw}
    technology = args.pop("technology")
    transport = args.pop("transport", default_transport(technology))
    note = ib_dual_tor_note(technology, args)
    p = plan_fabric(gpus, technology, catalog, gpu=gpu, **args)
    nic = catalog.get("nic", p.nic_id)
    if transport == "uet":
        check_uet_parts(label, catalog.get("switch", p.switch_id), nic)
    p.design_label = label
    p.transport = transport
    if transport != default_transport(technology):  # the RoCE sentence plan_fabric wrote gives way
        p.notes = [n for n in p.notes if n != transport_words(default_transport(technology), nic)]
        p.notes.append(transport_words(transport, nic))
    p.notes.extend([note] if note else [])
    return p


def radix_note(plans: list[FabricPlan]) -> str | None:
    """A sentence when the plans' switches differ in radix at their link rates (a real advantage:
    fewer switches and tiers), else None."""
    radixes = {(p.switch_id, p.radix, p.link_rate_gbps) for p in plans}
    if len({r for _s, r, _l in radixes}) <= 1:
        return None
    parts = [
        f"{p.switch_id} has {p.radix} ports at {p.link_rate_gbps:g}G "
        f"({p.design.total_switches} switches, {p.design.tiers} tiers)"
        for p in plans
    ]
    return (
        "radix differs: "
        + "; ".join(parts)
        + " — fewer switches and tiers are a real advantage of the larger radix"
    )


def plan(gpus: int, technologies: tuple[str, ...], catalog, **kw) -> list[FabricPlan]:
    """Plan each technology; ``switch_id``/``nic_id`` apply only to the technology they belong to."""
    out = []
    sw, nc = kw.pop("switch_id", None), kw.pop("nic_id", None)
    for tech in technologies:
        want = TECH_OF_SWITCH[tech]
        s = sw if sw and (len(technologies) == 1 or catalog.get("switch", sw).technology == want) else None
        n = nc if nc and (len(technologies) == 1 or catalog.get("nic", nc).technology == want) else None
        tkw = dict(kw)
        # asked of both: IB has no such option (design.redundancy), said in its notes; IB alone: refused
        note = ib_dual_tor_note(tech, tkw) if len(technologies) > 1 else None
        p = plan_fabric(gpus, tech, catalog, switch_id=s, nic_id=n, **tkw)
        p.notes.extend([note] if note else [])
        out.append(p)
    return out
