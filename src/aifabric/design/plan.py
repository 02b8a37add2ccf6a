"""``aifabric plan``: design a rail-optimised InfiniBand and/or RoCE fabric for N GPUs and price it.

The number of tiers follows from the switch radix at the NIC rate (see
:func:`aifabric.topology.rail_sizing`): one switch while every NIC fits one radix, two tiers up to
radix²/2 GPUs (non-blocking), three up to radix³/4. When the chosen switch cannot reach the size the
error names the catalog switches that can (and suggests planes).

Default parts per technology and NIC rate (override with ``--switch`` / ``--nic``):
``DEFAULT_SWITCH`` and ``DEFAULT_NIC``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aifabric.design.cost import LINK_CLASSES, NOT_INCLUDED, Bom, Media, price_rail_fabric
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
# default cable lengths per link class (hardware-facts "Recommended defaults": 5 m server–leaf,
# 40 m leaf–spine, 300 m spine–superspine; SONiC buffers_config.j2 role defaults [S9])
DEFAULT_LENGTHS_M = {"host-leaf": 5.0, "leaf-spine": 40.0, "spine-core": 300.0}
TECH_OF_SWITCH = {"infiniband": "infiniband", "roce": "ethernet"}


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

    @property
    def capex_usd(self) -> float:
        return round(self.bom.total("total_usd"), 2)

    @property
    def power_w(self) -> float:
        return round(self.bom.total("total_power_w"), 2)

    def to_dict(self) -> dict:
        d = self.design
        return {
            "technology": self.technology,
            "gpus": self.gpus,
            "gpu": self.gpu,
            "tiers": d.tiers,
            "switch": self.switch_id,
            "nic": self.nic_id,
            "nic_rate_gbps": self.nic_rate_gbps,
            "link_rate_gbps": self.nic_rate_gbps / self.planes,
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
            "network_capex_per_gpu_usd": round(self.capex_usd / self.gpus, 2),
            "power_w": self.power_w,
            "power_per_gpu_w": round(self.power_w / self.gpus, 2),
            "max_gpus_at_this_radix": d.max_gpus,
            "media": {cls: m.kind for cls, m in self.media.items()},
            "cable_lengths_m": {cls: self.lengths_m[cls] for cls in self.media},
            "estimated_lines": sum(1 for x in self.bom.lines if x.estimate),
            "bom": [x.to_dict() for x in self.bom.lines],
            "not_included": list(NOT_INCLUDED),
            "notes": self.notes,
        }


def radix_at(switch, rate_gbps: float) -> int | None:
    """Ports of ``switch`` at ``rate_gbps`` (default mode or a breakout mode), else None."""
    if switch.port_rate_gbps == rate_gbps:
        return int(switch.ports)
    for mode in switch.port_modes or ():
        r = mode["rate_gbps"] if isinstance(mode, dict) else mode.rate_gbps
        p = mode["ports"] if isinstance(mode, dict) else mode.ports
        if r == rate_gbps:
            return int(p)
    return None


def _rates(switch) -> list[float]:
    rates = [switch.port_rate_gbps]
    for mode in switch.port_modes or ():
        rates.append(mode["rate_gbps"] if isinstance(mode, dict) else mode.rate_gbps)
    return sorted(set(rates))


def plan_fabric(
    gpus: int,
    technology: str,
    catalog,
    gpu: str = "h100",
    nic_rate_gbps: float = 400,
    oversubscription: float = 1.0,
    switch_id: str | None = None,
    nic_id: str | None = None,
    planes: int = 1,
    lengths_m: dict[str, float] | None = None,
) -> FabricPlan:
    """Design and price one fabric. Raises :class:`InputError` on bad input or an impossible size."""
    if technology not in TECHNOLOGIES:
        raise InputError(
            "unknown technology", field="--technology", value=technology, allowed="ib, infiniband, roce, both"
        )
    gpu_spec = catalog.get("gpu", gpu)
    if planes < 1:
        raise InputError("must be ≥ 1", field="--planes", value=planes, allowed="1, 2, 4")
    key = (technology, int(nic_rate_gbps))
    sw_id = switch_id or DEFAULT_SWITCH.get(key)
    nc_id = nic_id or DEFAULT_NIC.get(key)
    if sw_id is None or nc_id is None:
        raise InputError(
            "no default parts for this NIC rate",
            field="--nic-rate",
            value=f"{nic_rate_gbps:g}Gbps",
            allowed="200Gbps, 400Gbps, 800Gbps, or name --switch and --nic",
        )
    switch = catalog.get("switch", sw_id)
    nic = catalog.get("nic", nc_id)
    if switch.technology != TECH_OF_SWITCH[technology]:
        raise InputError(
            f"switch {sw_id} is {switch.technology}, not usable for {technology}",
            field="--switch",
            value=sw_id,
            allowed=", ".join(
                sorted(s.id for s in catalog.switches.values() if s.technology == TECH_OF_SWITCH[technology])
            ),
        )
    if nic.technology != TECH_OF_SWITCH[technology]:
        raise InputError(
            f"NIC {nc_id} is {nic.technology}, not usable for {technology}",
            field="--nic",
            value=nc_id,
            allowed=", ".join(
                sorted(n.id for n in catalog.nics.values() if n.technology == TECH_OF_SWITCH[technology])
            ),
        )
    link_rate = nic_rate_gbps / planes
    radix = radix_at(switch, link_rate)
    if radix is None:
        raise InputError(
            f"switch {sw_id} has no {link_rate:g}G ports",
            field="--switch",
            value=sw_id,
            allowed=f"a switch with {link_rate:g}G ports (its rates: "
            f"{', '.join(f'{r:g}G' for r in _rates(switch))})",
        )
    gpn = int(gpu_spec.gpus_per_node or 8)
    try:
        design = rail_sizing(gpus, gpn, radix, oversubscription, planes)
    except InputError as exc:
        if exc.field != "gpus" or "exceed" not in exc.problem:
            raise InputError(
                exc.problem, field=f"--{exc.field.replace('_', '-')}", value=exc.value, allowed=exc.allowed
            ) from None
        can = [
            s.id
            for s in catalog.switches.values()
            if s.technology == switch.technology
            and (r := radix_at(s, link_rate))
            and max_rail_gpus(r, gpn, oversubscription)[3] >= gpus
        ]
        hint = f"switches that reach it: {', '.join(sorted(can))}" if can else "no catalog switch reaches it"
        raise InputError(
            f"{gpus} GPUs exceed what {sw_id} ({radix} × {link_rate:g}G) reaches in 3 tiers "
            f"({max_rail_gpus(radix, gpn, oversubscription)[3]} GPUs at {oversubscription:g}:1)",
            field="--gpus",
            value=gpus,
            allowed=f"{hint}; or --planes 2",
        ) from None
    lengths = dict(DEFAULT_LENGTHS_M)
    lengths.update(lengths_m or {})
    bom, media = price_rail_fabric(catalog, design, technology, switch, nic, link_rate, lengths)
    notes = []
    if planes > 1:
        notes.append(
            f"{planes} planes: each NIC's {nic_rate_gbps:g}G split into {planes} × {link_rate:g}G legs"
        )
    if radix != switch.ports:
        notes.append(f"{sw_id} used in its {radix} × {link_rate:g}G mode")
    return FabricPlan(
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
        notes,
    )


def plan(gpus: int, technologies: tuple[str, ...], catalog, **kw) -> list[FabricPlan]:
    """Plan each technology; ``switch_id``/``nic_id`` apply only to the technology they belong to."""
    out = []
    sw, nc = kw.pop("switch_id", None), kw.pop("nic_id", None)
    for tech in technologies:
        want = TECH_OF_SWITCH[tech]
        s = sw if sw and (len(technologies) == 1 or catalog.get("switch", sw).technology == want) else None
        n = nc if nc and (len(technologies) == 1 or catalog.get("nic", nc).technology == want) else None
        out.append(plan_fabric(gpus, tech, catalog, switch_id=s, nic_id=n, **kw))
    return out
