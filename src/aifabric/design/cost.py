"""Bill of materials, capex and power of a sized fabric.

Counting rules (each BOM line names its catalog id and where its unit price comes from):

* **Switches** per tier from :class:`~aifabric.topology.RailDesign`.
* **NICs**: one per GPU (rail-optimised: one NIC per GPU); with several planes the NIC's rate is
  split over the planes (one port or breakout leg per plane).
* **Cages**: every link end is a cage. A switch cage has the switch's form factor, electrical
  lanes, SerDes lane rates and cooling (finned on air-cooled twin-port OSFP switches). A server
  end is either a DGX-class twin-port cage (two NICs behind one flat-top twin-port OSFP) or the
  NIC card's own flat-top cage. A module (or a copper cable's switch-end plug) is only placed in a
  cage it fits (:func:`aifabric.hardware.catalog.module_fits_cage`): same form factor, it fills the
  cage's lanes, a lane rate the cage runs (200G-lane optics only in 200G-SerDes cages), the right
  top. XDR (200G lanes) therefore gets no passive DAC and no multimode optics: none exist at
  200G lanes (catalog test).
* **Link media by length and cost** (per link class: host-leaf, leaf-spine, spine-core): ONE
  media table (the catalog's cables and optics) and ONE rule for every fabric: every copper / AOC
  cable within reach whose lanes fit both cages, and every pair of transceivers with the same
  optical interface (400G-DR4 ↔ 400G-DR4, ...) that fit the two cages, reach the length and have
  a fibre of their media, are priced per link; the cheapest is used. A record is offered to the
  protocols it has real parts for (``parts``, ``technology``: the LinkX DACs, LACCs and
  transceivers serve InfiniBand and Ethernet alike; an AEC only Ethernet, with its source).
  ``optics`` restricts the brand (``nvidia``, ``third-party``; default any); ``host_link_media``
  (:data:`HOST_LINK_MEDIA`) imposes a media kind on host links (default ``auto``: the rule).
* **Transceivers per cage**: a module carries ``ports × (port rate / link rate)`` links (a
  twin-port 2 × 400G module carries two 400G links, or four 200G links on splitter fibres), so a
  switch tier needs ``ceil(links / that)`` modules and a server ``ceil(links per server / that)``.
* **Cables**: one fibre per link; a copper cable carries ``rate_gbps / link rate`` links.
* **Power**: switch power without optics + every module + every NIC + active cables.

Each BOM line carries its unit price's range (``unit_price_low_usd`` / ``_high_usd``) and whether
it is an input (no public price), so totals come with a range too.

Not counted (stated in every plan's ``not_included``): GPU servers, management network, racks,
PDUs and installation labour. Licences, support, spares and energy are in :mod:`aifabric.design.tco`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict, dataclass, field

from aifabric.errors import InputError
from aifabric.hardware.catalog import module_fits_cage, price_basis, price_range_usd
from aifabric.topology import RailDesign

NOT_INCLUDED = (
    "GPU servers",
    "management/front-end network (see design.tco.price_hybrid)",
    "racks, PDUs and installation labour",
    "licences, support, spares and energy (see the tco block)",
)

LINK_CLASSES = ("host-leaf", "leaf-spine", "spine-core")
# default cable lengths per link class (hardware-facts "Recommended defaults": 5 m server–leaf,
# 40 m leaf–spine, 300 m spine–superspine; SONiC buffers_config.j2 role defaults [S9])
DEFAULT_LENGTHS_M = {"host-leaf": 5.0, "leaf-spine": 40.0, "spine-core": 300.0}
OPTICS_BRANDS = ("any", "nvidia", "third-party")
COPPER = ("dac", "lacc", "aec", "aoc")
#: host-link media a buyer may impose (``advisor.host_link_media``, ``--host-link-media``) → the
#: catalog kinds allowed (``acc`` = linear active copper, catalog kind ``lacc``; ``optics`` =
#: transceivers plus multimode or single-mode fibre); ``auto`` = the cheapest that reaches
HOST_LINK_MEDIA: dict[str, tuple[str, ...] | None] = {
    "auto": None,
    "dac": ("dac",),
    "acc": ("lacc",),
    "aec": ("aec",),
    "aoc": ("aoc",),
    "optics": ("mmf", "smf"),
}
MEDIA_FIELD = "--host-link-media (advisor.host_link_media)"


def check_host_link_media(value: str) -> str:
    """``value`` when it names a :data:`HOST_LINK_MEDIA` choice, else one InputError line."""
    if value not in HOST_LINK_MEDIA:
        raise InputError(
            "unknown host-link media", field=MEDIA_FIELD, value=value, allowed=" | ".join(HOST_LINK_MEDIA)
        )
    return value


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
    unit_price_low_usd: float = 0.0
    unit_price_high_usd: float = 0.0
    price_input: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Cage:
    """One end of a link: what a module or copper plug must match there."""

    where: str  # switch | server
    form_factor: str | None
    lanes: int | None
    lane_rates_gbps: tuple[int, ...]
    cooling: str | None
    ports: int  # logical ports per cage at the link rate (2 on a twin-port cage at 400G)

    def describe(self) -> str:
        rates = "/".join(f"{r}G" for r in self.lane_rates_gbps) or "?"
        lanes = f"{self.lanes or '?'}×{rates} lanes"
        return f"{self.where} cage {self.form_factor or '?'} {lanes}, {self.cooling or 'any'}"


@dataclass
class Media:
    kind: str  # dac | lacc | aec | aoc | mmf | smf
    cable_id: str
    switch_optic: str | None
    nic_optic: str | None
    length_m: float
    links_per_cable: int = 1
    links_per_switch_optic: int = 1
    links_per_far_optic: int = 1
    cost_per_link_usd: float = 0.0


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
        low, high = price_range_usd(record)
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
                price_source=price_basis(record),
                estimate=catalog.is_estimate(record, "price"),
                where=where,
                unit_price_low_usd=round(low + extra_usd, 2),
                unit_price_high_usd=round(high + extra_usd, 2),
                price_input=bool(catalog.is_input(record, "price")),
            )
        )

    def total(self, attr: str, category: str | None = None) -> float:
        return float(sum(getattr(x, attr) for x in self.lines if category is None or x.category == category))

    def total_range(self, category: str | None = None) -> tuple[float, float]:
        """(low, high) USD with every line at the low / high end of its price range."""
        lines = [x for x in self.lines if category is None or x.category == category]
        return (
            round(sum(x.count * x.unit_price_low_usd for x in lines), 2),
            round(sum(x.count * x.unit_price_high_usd for x in lines), 2),
        )

    def count(self, category: str) -> int:
        return int(sum(x.count for x in self.lines if x.category == category))


# --------------------------------------------------------------------------------------------
# Cages
# --------------------------------------------------------------------------------------------
def switch_cage(switch, link_rate_gbps: float, ports_at_rate: int | None = None) -> Cage:
    """The cage of ``switch`` used at ``link_rate_gbps`` (``ports_at_rate`` = its radix there)."""
    lanes = switch.lanes_per_cage
    rates = tuple(switch.lane_rates_gbps or ())
    if switch.cages and ports_at_rate:
        per_cage = max(1, ports_at_rate // switch.cages)
    elif lanes and rates:
        per_cage = max(1, int(lanes * max(rates) // link_rate_gbps))
    else:
        per_cage = int(switch.ports_per_cage or 1)
    return Cage("switch", switch.cage_form_factor, lanes, rates, switch.cage_cooling, per_cage)


def server_cage(nic, server_cages: str) -> Cage:
    """The server-side cage: a DGX-class twin-port flat-top OSFP (two NIC ports behind it) or the
    NIC card's own flat-top cage."""
    lane = nic.lane_rate_gbps
    rates = (lane,) if lane else ()
    if server_cages == "twin-port":
        return Cage("server", "OSFP", 8, rates, "flat-top", 2)
    # a NIC port's cage is a 4-lane QSFP112 or single-port OSFP (8 lanes on QSFP-DD), also when the
    # port runs slower than 4 lanes (a 200G port takes a 400G SR4 module in 200G mode, S58)
    lanes = 8 if nic.form_factor == "QSFP-DD" else 4
    return Cage("server", nic.form_factor, lanes, rates, "flat-top", 1)


def links_per_module(module_ports: int, module_port_rate: float, link_rate: float) -> int:
    """Links one module (or cable) carries at ``link_rate``: 0 when its ports are slower or do not
    split evenly into the link rate."""
    if module_port_rate < link_rate or module_port_rate % link_rate:
        return 0
    return int(module_ports * (module_port_rate // link_rate))


def optic_fits(optic, cage: Cage, link_rate: float) -> list[str]:
    """Why ``optic`` cannot serve ``link_rate`` links in ``cage`` (empty when it can)."""
    why = module_fits_cage(
        optic,
        form_factor=cage.form_factor,
        lanes=cage.lanes,
        lane_rates_gbps=cage.lane_rates_gbps,
        cooling=cage.cooling,
    )
    if not links_per_module(optic.ports, optic.port_rate_gbps, link_rate):
        why.append(f"{optic.ports} × {optic.port_rate_gbps}G ports do not carry {link_rate:g}G links")
    return why


def cable_fits(cable, ends: tuple[Cage, Cage], link_rate: float) -> list[str]:
    """Why a copper / AOC cable cannot join the two cages at ``link_rate`` (empty when it can)."""
    why = []
    if cable.kind not in COPPER:
        return ["fibre needs transceivers"]
    host = any(c.where == "server" for c in ends)
    if host and cable.links == "switch-switch":
        why.append("offered switch to switch only")
    for cage in ends:
        if cable.lane_rate_gbps and cage.lane_rates_gbps and cable.lane_rate_gbps not in cage.lane_rates_gbps:
            why.append(f"{cable.lane_rate_gbps}G lanes not run by the {cage.where} cage")
        if cage.where == "switch" and cable.lanes and cage.lanes and cable.lanes != cage.lanes:
            why.append(f"{cable.lanes}-lane plug in a {cage.lanes}-lane switch cage")
    total = float(cable.rate_gbps or link_rate)
    per_end = total / (cable.ports or 1)
    if per_end < link_rate:
        why.append(f"{per_end:g}G ends are slower than {link_rate:g}G links")
    legs = max(1, int(total // link_rate))
    for cage in ends:
        if cage.where == "server" and legs > cage.ports * (cable.ports or 1):
            why.append(f"{legs} links per cable do not fit a {cage.ports}-port server cage")
    if host and legs > 1 and (cable.ports or 1) < legs:
        # a straight cable from a twin-port server cage (two NICs, two rails) lands both links in one
        # switch cage, i.e. on one leaf: rail-optimised wiring gives each NIC its own rail's leaf
        # (found by the cable plan, aifabric.build); splitters and optics (one fibre per NIC) are fine
        why.append(f"a straight cable puts its {legs} NIC links (two rails) in one switch cage")
    return why


# --------------------------------------------------------------------------------------------
# Media choice
# --------------------------------------------------------------------------------------------
def _cage_links(optic, cage: Cage, link_rate: float) -> int:
    """Links a module carries in ``cage``: at a server, no more than the cage's NIC ports."""
    n = links_per_module(optic.ports, optic.port_rate_gbps, link_rate)
    return min(n, cage.ports) if cage.where == "server" else n


def _brand_ok(optic, brand: str) -> bool:
    return brand == "any" or optic.brand == brand


def choose_media(
    catalog,
    rate_gbps: float,
    length_m: float,
    technology: str,
    host_end: bool,
    link_class: str = "",
    *,
    switch=None,
    far_cage: Cage | None = None,
    near_cage: Cage | None = None,
    optics: str = "any",
    kinds: tuple[str, ...] | None = None,
) -> Media:
    """The cheapest copper cable or transceiver pair (plus fibre) for one link class, from the one
    catalog table whatever the protocol: a part is a candidate when its ``technology`` is ``any``
    or the fabric's protocol.

    ``near_cage`` is the switch cage (from ``switch`` when not given); ``far_cage`` the other end
    (the same switch cage for switch-to-switch links); ``kinds`` limits the media kinds (see
    :data:`HOST_LINK_MEDIA`). Raises InputError naming the longest reach available when nothing
    fits.
    """
    if optics not in OPTICS_BRANDS:
        raise InputError(
            "unknown optics brand", field="--optics", value=optics, allowed=", ".join(OPTICS_BRANDS)
        )
    if near_cage is None:
        near_cage = (
            switch_cage(switch, rate_gbps) if switch is not None else Cage("switch", None, None, (), None, 1)
        )
    if far_cage is None:
        far_cage = near_cage if not host_end else Cage("server", None, None, (), None, 1)
    tech = "ethernet" if technology in ("roce", "ethernet") else "infiniband"
    cages = (near_cage, far_cage)
    options, rejected = _cable_options(catalog, cages, rate_gbps, length_m, tech, kinds)
    options += _optic_options(catalog, cages, rate_gbps, length_m, tech, optics, kinds)
    if options:
        # exact-rate modules first only as a tie-break: cost decides
        options.sort(key=lambda x: (round(x[0], 6), x[1], x[2]))
        return options[0][3]
    if kinds is not None:
        asked = next((k for k, v in HOST_LINK_MEDIA.items() if v == kinds), "/".join(kinds))
        raise InputError(
            f"no {asked} part in the catalog for {rate_gbps:g}G {technology} {link_class} links of {length_m:g} m "
            f"({'; '.join(rejected) or f'far end: {far_cage.describe()}'})",
            field=MEDIA_FIELD,
            value=asked,
            allowed="auto, another media kind, a shorter --lengths, or add a part via --catalog FILE",
        )
    raise _no_reach(catalog, cages, rate_gbps, length_m, tech, optics, link_class)


def _cable_options(catalog, cages, rate_gbps, length_m, tech, kinds):
    """(options, rejected): each copper cable that serves the link as ``(cost per link, 0, id,
    Media)``, and why each cable of an imposed kind does not (for the error)."""
    options: list[tuple[float, int, str, Media]] = []
    rejected: list[str] = []
    for cable in catalog.cables.values():
        if cable.kind not in COPPER or (kinds is not None and cable.kind not in kinds):
            continue
        why = cable_fits(cable, cages, rate_gbps)
        if (cable.max_reach_m or 0) < length_m:
            why.insert(0, f"reaches {cable.max_reach_m or 0:g} m")
        if cable.technology not in ("any", tech):
            why.insert(0, f"{cable.technology} only")
        if why:
            rejected.append(f"{cable.id}: {'; '.join(why)}")
            continue
        legs = max(1, int(float(cable.rate_gbps or rate_gbps) // rate_gbps))
        cost = cable.price_for_length(length_m) / legs
        options.append(
            (cost, 0, cable.id, Media(cable.kind, cable.id, None, None, length_m, legs, 1, 1, cost))
        )
    return options, rejected


def _optic_options(catalog, cages, rate_gbps, length_m, tech, optics, kinds) -> list:
    """Each transceiver pair that fits both cages (same optics and fibre, within reach) plus the
    cheapest fibre that reaches: ``(cost per link, inexact-rate modules, ids, Media)``."""
    near_cage, far_cage = cages
    fibres = {
        media: sorted(
            (
                c
                for c in catalog.cables.values()
                if c.kind == media and (c.max_reach_m or math.inf) >= length_m
            ),
            key=lambda c: (c.price_for_length(length_m), c.id),
        )
        for media in ("mmf", "smf")
    }
    usable = [
        o
        for o in catalog.optics.values()
        if o.technology in ("any", tech) and o.reach_m >= length_m and _brand_ok(o, optics)
    ]
    near = [
        (o, links_per_module(o.ports, o.port_rate_gbps, rate_gbps))
        for o in usable
        if not optic_fits(o, near_cage, rate_gbps)
    ]
    far = [(o, _cage_links(o, far_cage, rate_gbps)) for o in usable if not optic_fits(o, far_cage, rate_gbps)]
    options = []
    for a, la in near:
        for b, lb in far:
            if a.optical != b.optical or a.media != b.media or not fibres[a.media]:
                continue
            if kinds is not None and a.media not in kinds:
                continue
            fibre = fibres[a.media][0]
            cost = fibre.price_for_length(length_m) + a.price_usd / la + b.price_usd / lb
            inexact = int(a.port_rate_gbps != rate_gbps) + int(b.port_rate_gbps != rate_gbps)
            media = Media(a.media, fibre.id, a.id, b.id, length_m, 1, la, lb, cost)
            options.append((cost, inexact, f"{a.id}|{b.id}", media))
    return options


def _no_reach(catalog, cages, rate_gbps, length_m, tech, optics, link_class) -> InputError:
    """The error when no part serves the link: the longest reach that fits the switch cage."""
    near_cage, far_cage = cages
    reach = [
        o.reach_m
        for o in catalog.optics.values()
        if o.technology in ("any", tech) and _brand_ok(o, optics) and not optic_fits(o, near_cage, rate_gbps)
    ]
    longest = (
        f"longest reach fitting the {near_cage.describe()} at {rate_gbps:g}G: {max(reach):g} m"
        if reach
        else f"no {rate_gbps:g}G module fits the {near_cage.describe()}"
        + (f" (optics brand {optics})" if optics != "any" else "")
    )
    return InputError(
        f"no cable/transceiver in the catalog for {rate_gbps:g}G {link_class} links of {length_m:g} m "
        f"({longest}; far end: {far_cage.describe()})",
        field="--lengths",
        allowed="shorter links via --lengths host-leaf,leaf-spine,spine-core, another --optics brand, "
        "or add a module with enough reach via --catalog FILE",
    )


def price_rail_fabric(
    catalog,
    design: RailDesign,
    technology: str,
    switch,
    nic,
    link_rate_gbps: float,
    lengths_m: dict[str, float],
    *,
    server_cages: str = "per-nic",
    radix: int | None = None,
    optics: str = "any",
    nics: int | None = None,
    nodes: int | None = None,
    legs_per_port: int = 1,
    host_link_media: str = "auto",
) -> tuple[Bom, dict[str, Media]]:
    """Build the BOM of a rail-optimised fabric sized by ``design`` (``nics`` / ``nodes`` default
    to the design's GPUs and servers). ``legs_per_port`` > 1 (dual-ToR): each NIC port breaks out
    into that many host links, so a server-side module carries that many more links.
    ``host_link_media`` imposes a media kind on host links (:data:`HOST_LINK_MEDIA`)."""
    host_kinds = HOST_LINK_MEDIA[check_host_link_media(host_link_media)]
    bom = Bom()
    for tier, n in design.switches.items():
        bom.add(catalog, switch, "switch", n, tier)
    bom.add(catalog, nic, "nic", nics if nics is not None else design.gpus, "host")
    near = switch_cage(switch, link_rate_gbps, radix)
    host = server_cage(nic, server_cages)
    if legs_per_port > 1:
        host = dataclasses.replace(host, ports=host.ports * legs_per_port)
    nodes = max(1, nodes or design.nodes)
    media_used: dict[str, Media] = {}
    for cls, links in design.links.items():
        length = float(lengths_m[cls])
        host_end = cls == "host-leaf"
        media = choose_media(
            catalog,
            link_rate_gbps,
            length,
            technology,
            host_end,
            link_class=cls,
            near_cage=near,
            far_cage=host if host_end else near,
            optics=optics,
            kinds=host_kinds if host_end else None,
        )
        media_used[cls] = media
        cable = catalog.cables[media.cable_id]
        extra = float(cable.price_usd_per_m or 0.0) * length
        n_cables = math.ceil(links / media.links_per_cable)
        bom.add(catalog, cable, "cable", n_cables, cls, extra_usd=extra, item=f"{cable.name}, {length:g} m")
        if media.switch_optic is None:
            continue
        sw_optic = catalog.optics[media.switch_optic]
        far_optic = catalog.optics[media.nic_optic]
        if host_end:
            bom.add(
                catalog,
                sw_optic,
                "transceiver",
                math.ceil(links / media.links_per_switch_optic),
                "host-leaf @leaf",
            )
            per_node = math.ceil(links / nodes)
            bom.add(
                catalog,
                far_optic,
                "transceiver",
                nodes * math.ceil(per_node / media.links_per_far_optic),
                "host-leaf @server" if server_cages == "twin-port" else "host-leaf @NIC",
            )
        else:
            # both ends on switches: 2 × links logical ports, packed into modules per end
            bom.add(
                catalog, sw_optic, "transceiver", 2 * math.ceil(links / media.links_per_switch_optic), cls
            )
    return bom, media_used


def bom_cage_violations(catalog, plan) -> list[str]:
    """Every BOM transceiver or copper line that does not fit the cage it is counted in (empty
    when the plan is sound). Used by tests over a grid of plans."""
    out = []
    switch = catalog.switches[plan.switch_id]
    nic = catalog.nics[plan.nic_id]
    near = switch_cage(switch, plan.link_rate_gbps, plan.radix)
    host = server_cage(nic, plan.server_cages)
    legs = int(getattr(plan, "legs_per_nic", 1))
    host = dataclasses.replace(host, ports=host.ports * legs) if legs > 1 else host
    for line in plan.bom.lines:
        if line.category == "transceiver":
            optic = catalog.optics[line.catalog_id]
            cage = host if line.where.startswith("host-leaf @") and not line.where.endswith("@leaf") else near
            why = optic_fits(optic, cage, plan.link_rate_gbps)
            if why:
                out.append(f"{line.catalog_id} at {line.where}: {'; '.join(why)}")
        elif line.category == "cable":
            cable = catalog.cables[line.catalog_id]
            if cable.kind in COPPER:
                ends = (near, host if line.where == "host-leaf" else near)
                why = cable_fits(cable, ends, plan.link_rate_gbps)
                if why:
                    out.append(f"{line.catalog_id} at {line.where}: {'; '.join(why)}")
    return out


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
