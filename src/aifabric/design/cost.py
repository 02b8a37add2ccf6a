"""Bill of materials, capex and power of a sized fabric.

Counting rules (each BOM line names its catalog id and where its unit price comes from):

* **Switches** per tier from :class:`~aifabric.topology.RailDesign`.
* **NICs**: one per GPU (rail-optimised: one NIC per GPU); with several planes the NIC's rate is
  split over the planes (one port or breakout leg per plane).
* **Link media by length** (per link class: host-leaf, leaf-spine, spine-core): passive DAC when
  the length is within the catalog DAC's reach (no transceivers); otherwise fibre with a
  transceiver at each end — multimode (SR) when within its reach, else single-mode (DR, then FR).
* **Transceivers per link end**: on a switch end, twin-port modules carry two logical ports where
  the catalog says so (``ports: 2``), so a tier's switch-side module count is
  ``ceil(ports / ports_per_module)``; the NIC end takes a single-port module. The cheapest catalog
  module per port that matches side, media, reach and rate is used.
* **Cables**: one per link (an MPO fibre per logical port, or a DAC), priced as
  ``price_usd + price_usd_per_m × length``.
* **Power**: switch power without optics + every module + every NIC (catalog ``power_w``).

Not counted (stated in every plan's ``not_included``): GPU servers, management network, subnet
manager / UFM or switch-OS licences, support contracts, racks, PDUs, installation labour.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from aifabric.errors import InputError
from aifabric.topology import RailDesign

NOT_INCLUDED = (
    "GPU servers",
    "management/front-end network",
    "subnet manager, UFM or switch-OS licences",
    "support contracts",
    "racks, PDUs and installation labour",
)

LINK_CLASSES = ("host-leaf", "leaf-spine", "spine-core")


@dataclass
class BomLine:
    """One line of a bill of materials."""

    item: str
    catalog_id: str
    category: str  # switch | nic | transceiver | cable
    count: int
    unit_price_usd: float
    total_usd: float
    unit_power_w: float
    total_power_w: float
    price_source: str
    estimate: bool
    where: str = ""  # tier or link class

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Media:
    kind: str  # dac | mmf | smf
    cable_id: str
    switch_optic: str | None
    nic_optic: str | None
    length_m: float


@dataclass
class Bom:
    lines: list[BomLine] = field(default_factory=list)

    def add(
        self,
        catalog,
        record,
        category: str,
        count: int,
        where: str,
        extra_usd: float = 0.0,
        item: str | None = None,
    ) -> None:
        if count <= 0:
            return
        price = record.price_usd
        if price is None:
            raise InputError(
                "catalog record has no price",
                field=f"{category}s[{record.id}].price_usd",
                allowed="a price in USD (override with --catalog FILE)",
            )
        unit = float(price) + extra_usd
        power = float(record.power_w or 0.0)
        self.lines.append(
            BomLine(
                item=item or record.name,
                catalog_id=record.id,
                category=category,
                count=int(count),
                unit_price_usd=round(unit, 2),
                total_usd=round(unit * count, 2),
                unit_power_w=power,
                total_power_w=round(power * count, 2),
                price_source=catalog.provenance(record, "price"),
                estimate=catalog.is_estimate(record, "price"),
                where=where,
            )
        )

    def total(self, attr: str, category: str | None = None) -> float:
        return float(sum(getattr(x, attr) for x in self.lines if category is None or x.category == category))

    def count(self, category: str) -> int:
        return int(sum(x.count for x in self.lines if x.category == category))


def _optic_candidates(catalog, side: str, rate_gbps: float, media: str, length_m: float, technology: str):
    out = []
    for o in catalog.optics.values():
        if o.side not in (side, "any") or o.media != media:
            continue
        if o.technology not in ("any", technology):
            continue
        if o.reach_m is None or o.reach_m < length_m:
            continue
        per_port = o.port_rate_gbps if o.port_rate_gbps else o.rate_gbps / max(1, o.ports)
        if per_port < rate_gbps or o.price_usd is None:
            continue
        out.append((per_port != rate_gbps, o.price_usd / max(1, o.ports), o.id, o))
    # exact-rate modules first; a faster module run at the lower rate (e.g. 400G SR4 in 200G mode)
    # only when no exact one exists
    return [x[-1] for x in sorted(out, key=lambda x: x[:3])]


def choose_media(
    catalog, rate_gbps: float, length_m: float, technology: str, host_end: bool, link_class: str = ""
) -> Media:
    """Pick DAC, multimode or single-mode for a link class (see module docstring)."""
    dacs = sorted(
        (
            c
            for c in catalog.cables.values()
            if c.kind == "dac"
            and (c.max_reach_m or 0) >= length_m
            and (c.rate_gbps is None or c.rate_gbps >= rate_gbps)
        ),
        key=lambda c: (c.price_usd + (c.price_usd_per_m or 0) * length_m, c.id),
    )
    if dacs:
        return Media("dac", dacs[0].id, None, None, length_m)
    for media in ("mmf", "smf"):
        cables = sorted(
            (
                c
                for c in catalog.cables.values()
                if c.kind == media and (c.max_reach_m is None or c.max_reach_m >= length_m)
            ),
            key=lambda c: c.id,
        )
        sw = _optic_candidates(catalog, "switch", rate_gbps, media, length_m, technology)
        far = _optic_candidates(
            catalog, "nic" if host_end else "switch", rate_gbps, media, length_m, technology
        )
        if cables and sw and far:
            return Media(media, cables[0].id, sw[0].id, far[0].id, length_m)
    reach = [
        o.reach_m
        for o in catalog.optics.values()
        if o.reach_m and (o.port_rate_gbps or o.rate_gbps / max(1, o.ports)) >= rate_gbps
    ]
    longest = (
        f"longest {rate_gbps:g}G reach in the catalog: {max(reach):g} m"
        if reach
        else f"no {rate_gbps:g}G optics"
    )
    raise InputError(
        f"no cable/transceiver in the catalog for {rate_gbps:g}G {link_class} links of {length_m:g} m "
        f"({longest})",
        field="--lengths",
        allowed="shorter links via --lengths host-leaf,leaf-spine,spine-core, or add a module "
        "with enough reach via --catalog FILE",
    )


def price_rail_fabric(
    catalog,
    design: RailDesign,
    technology: str,
    switch,
    nic,
    link_rate_gbps: float,
    lengths_m: dict[str, float],
) -> tuple[Bom, dict[str, Media]]:
    """Build the BOM of a rail-optimised fabric sized by ``design``."""
    bom = Bom()
    tiers = design.switches
    for tier, n in tiers.items():
        bom.add(catalog, switch, "switch", n, tier)
    bom.add(catalog, nic, "nic", design.gpus, "host")
    media_used: dict[str, Media] = {}
    for cls, links in design.links.items():
        length = float(lengths_m[cls])
        media = choose_media(
            catalog, link_rate_gbps, length, technology, host_end=(cls == "host-leaf"), link_class=cls
        )
        media_used[cls] = media
        cable = catalog.cables[media.cable_id]
        extra = float(cable.price_usd_per_m or 0.0) * length
        bom.add(catalog, cable, "cable", links, cls, extra_usd=extra, item=f"{cable.name}, {length:g} m")
        if media.kind == "dac":
            continue
        sw_optic = catalog.optics[media.switch_optic]
        far_optic = catalog.optics[media.nic_optic]
        if cls == "host-leaf":
            bom.add(
                catalog, sw_optic, "transceiver", math.ceil(links / max(1, sw_optic.ports)), "host-leaf @leaf"
            )
            bom.add(
                catalog,
                far_optic,
                "transceiver",
                math.ceil(links / max(1, far_optic.ports)),
                "host-leaf @NIC",
            )
        else:
            # both ends on switches: 2 × links logical ports, paired into twin-port modules per tier
            bom.add(catalog, sw_optic, "transceiver", 2 * math.ceil(links / max(1, sw_optic.ports)), cls)
    return bom, media_used
