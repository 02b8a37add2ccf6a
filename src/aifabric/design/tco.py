"""Total cost of ownership of a fabric, a hybrid back-end + front-end design, and rent vs build.

What this module holds:

- :func:`tco_inputs` — the TCO parameters from the catalog's ``tco:`` section (each sourced, or an
  input range), optionally overridden by key (``{"pue": 1.2}``), as ``{key: TcoInput}``.
- :func:`fabric_tco` — TCO of one :class:`~aifabric.design.plan.FabricPlan` over the lifetime:

  ``capex + spares + lifetime × (support + licences + energy)`` where
  spares = ``spares_share`` × network capex; support per year = ``support_share_per_year.<class>``
  × switch capex (class from the switch's ``software``: NVIDIA (ufm, cumulus), branded (eos,
  nx-os, junos, vendor) or white-box (sonic)); licences per year = ``licence_usd_per_switch_year.
  <software>`` × switches, plus ``ufm_usd_per_node_year`` × servers on InfiniBand (UFM is licensed
  per managed node); energy = network power × PUE × hours × USD/kWh. The range holds the lifetime
  fixed and puts every price and input at the low / high end of its range.
- :func:`price_hybrid` — a back-end fabric plus an Ethernet front-end/storage network sized from
  the servers' storage NICs and the storage nodes (given, or derived from checkpoint bandwidth).
- :func:`rent_vs_build` — owning the cluster (servers + network TCO) against renting GPU-hours at
  sourced, dated prices; break-even months.
- :func:`break_even_unit_price` — the unit price of one catalog part at which one plan's capex or
  TCO equals a target (for the decision stage's "verdict holds while X costs < Y").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from aifabric.errors import InputError

#: switch software → support class key
SUPPORT_CLASS = {
    "ufm": "nvidia",
    "cumulus": "nvidia",
    "eos": "branded",
    "nx-os": "branded",
    "junos": "branded",
    "vendor": "branded",
    "sonic": "white-box",
}


def tco_inputs(catalog, overrides: dict[str, float] | None = None) -> dict[str, Any]:
    """``{key: TcoInput}`` from the catalog, with ``overrides`` (key → value) replacing points."""
    from aifabric.hardware.catalog import TcoInput

    out = dict(catalog.tco)
    for key, value in (overrides or {}).items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError("a TCO override must be a number", field=f"tco.{key}", value=value)
        if value < 0:
            raise InputError("must be ≥ 0", field=f"tco.{key}", value=value)
        unit = out[key].unit if key in out else "user unit"
        if key not in out and not key.startswith(("rent_usd_per_gpu_hour.", "licence_usd_per_switch_year.")):
            raise InputError("unknown TCO parameter", field=f"tco.{key}", allowed=", ".join(sorted(out)))
        out[key] = TcoInput(value=float(value), unit=unit, source="user override", confidence="user")
    return out


def _get(inputs: dict[str, Any], key: str, *fallbacks: str):
    for k in (key, *fallbacks):
        if k in inputs:
            return inputs[k]
    raise InputError("missing TCO parameter", field=f"tco.{key}", allowed=", ".join(sorted(inputs)))


@dataclass(frozen=True)
class Tco:
    """TCO of one fabric over ``lifetime_years`` (USD unless named otherwise)."""

    lifetime_years: float
    capex_usd: float
    spares_usd: float
    support_usd_per_year: float
    licences_usd_per_year: float
    power_kw: float
    energy_kwh_per_year: float
    energy_usd_per_year: float
    tco_usd: float
    tco_low_usd: float
    tco_high_usd: float
    gpus: int
    inputs: dict[str, str] = field(default_factory=dict)

    @property
    def opex_usd_per_year(self) -> float:
        return self.support_usd_per_year + self.licences_usd_per_year + self.energy_usd_per_year

    def to_dict(self) -> dict[str, Any]:
        """Plan-JSON keys: ``tco_usd``, ``tco_range_usd``, ``tco_per_gpu_usd`` and a ``tco`` block."""
        return {
            "tco_usd": round(self.tco_usd, 2),
            "tco_range_usd": [round(self.tco_low_usd, 2), round(self.tco_high_usd, 2)],
            "tco_per_gpu_usd": round(self.tco_usd / max(1, self.gpus), 2),
            "tco": {
                "lifetime_years": self.lifetime_years,
                "capex_usd": round(self.capex_usd, 2),
                "spares_usd": round(self.spares_usd, 2),
                "support_usd_per_year": round(self.support_usd_per_year, 2),
                "licences_usd_per_year": round(self.licences_usd_per_year, 2),
                "energy_kwh_per_year": round(self.energy_kwh_per_year, 1),
                "energy_usd_per_year": round(self.energy_usd_per_year, 2),
                "opex_usd_per_year": round(self.opex_usd_per_year, 2),
                "power_kw": round(self.power_kw, 3),
                "inputs": dict(self.inputs),
            },
        }


def _tco_parts(
    *,
    capex: float,
    switch_capex: float,
    switches: int,
    nodes: int,
    software: str,
    power_w: float,
    inputs: dict[str, Any],
    end: str,
) -> tuple[float, float, float, float, float]:
    """(spares, support/yr, licences/yr, energy kWh/yr, energy USD/yr) at ``end`` = value|low|high."""

    def v(x) -> float:
        return float(x.value if end == "value" else (x.low if end == "low" else x.high))

    klass = SUPPORT_CLASS.get(software or "vendor", "branded")
    spares = v(_get(inputs, "spares_share")) * capex
    support = v(_get(inputs, f"support_share_per_year.{klass}")) * switch_capex
    lic = (
        v(_get(inputs, f"licence_usd_per_switch_year.{software}", "licence_usd_per_switch_year.vendor"))
        * switches
    )
    if software == "ufm":
        lic += v(_get(inputs, "ufm_usd_per_node_year")) * nodes
    kwh = power_w / 1000 * v(_get(inputs, "pue")) * float(_get(inputs, "hours_per_year").value)
    usd = kwh * v(_get(inputs, "electricity_usd_per_kwh"))
    return spares, support, lic, kwh, usd


def _describe_inputs(inputs: dict[str, Any], software: str) -> dict[str, str]:
    klass = SUPPORT_CLASS.get(software or "vendor", "branded")
    keys = [
        "lifetime_years",
        "electricity_usd_per_kwh",
        "pue",
        "spares_share",
        f"support_share_per_year.{klass}",
        f"licence_usd_per_switch_year.{software}"
        if f"licence_usd_per_switch_year.{software}" in inputs
        else "licence_usd_per_switch_year.vendor",
    ]
    if software == "ufm":
        keys.append("ufm_usd_per_node_year")
    return {k: inputs[k].describe() for k in keys if k in inputs}


def fabric_tco(plan, catalog, overrides: dict[str, float] | None = None) -> Tco:
    """TCO of ``plan`` (a FabricPlan) with the catalog's TCO inputs and ``overrides``."""
    inputs = tco_inputs(catalog, overrides)
    switch = catalog.switches[plan.switch_id]
    years = float(_get(inputs, "lifetime_years").value)
    capex = plan.capex_usd
    low_capex, high_capex = plan.capex_range_usd
    sw_lines = [x for x in plan.bom.lines if x.category == "switch"]
    sw = sum(x.total_usd for x in sw_lines)
    sw_low = sum(x.count * x.unit_price_low_usd for x in sw_lines)
    sw_high = sum(x.count * x.unit_price_high_usd for x in sw_lines)
    n_sw = sum(x.count for x in sw_lines)
    nodes = int(getattr(plan, "nodes", 0) or max(1, plan.gpus // 8))
    common = dict(
        switches=n_sw, nodes=nodes, software=switch.software or "vendor", power_w=plan.power_w, inputs=inputs
    )
    sp, su, li, kwh, eu = _tco_parts(capex=capex, switch_capex=sw, end="value", **common)
    lo = _tco_parts(capex=low_capex, switch_capex=sw_low, end="low", **common)
    hi = _tco_parts(capex=high_capex, switch_capex=sw_high, end="high", **common)
    total = capex + sp + years * (su + li + eu)
    t_low = low_capex + lo[0] + years * (lo[1] + lo[2] + lo[4])
    t_high = high_capex + hi[0] + years * (hi[1] + hi[2] + hi[4])
    return Tco(
        lifetime_years=years,
        capex_usd=capex,
        spares_usd=sp,
        support_usd_per_year=su,
        licences_usd_per_year=li,
        power_kw=plan.power_w / 1000,
        energy_kwh_per_year=kwh,
        energy_usd_per_year=eu,
        tco_usd=total,
        tco_low_usd=t_low,
        tco_high_usd=t_high,
        gpus=plan.gpus,
        inputs=_describe_inputs(inputs, switch.software or "vendor"),
    )


# --------------------------------------------------------------------------------------------
# Break-even
# --------------------------------------------------------------------------------------------
def break_even_unit_price(
    plan,
    catalog,
    catalog_id: str,
    target_usd: float,
    metric: str = "tco",
    overrides: dict[str, float] | None = None,
) -> float | None:
    """Unit price of ``catalog_id`` at which ``plan``'s ``metric`` (``capex`` or ``tco``) equals
    ``target_usd`` (e.g. the other fabric's). Capex and TCO are linear in one unit price, so two
    evaluations give the line. None when the part is not in the plan; may be negative (the plan
    costs more than the target even with the part free)."""
    n = plan.count_of(catalog_id)
    if n == 0:
        return None
    if metric not in ("capex", "tco"):
        raise InputError("unknown metric", field="metric", value=metric, allowed="capex, tco")

    def at(price: float) -> float:
        if metric == "capex":
            return plan.capex_at({catalog_id: price})
        return _repriced_tco(plan, catalog, catalog_id, price, overrides)

    f0, f1 = at(0.0), at(1000.0)
    slope = (f1 - f0) / 1000.0
    return round((target_usd - f0) / slope, 2) if slope else None


def _repriced_tco(plan, catalog, catalog_id: str, price: float, overrides) -> float:
    import copy

    p2 = copy.copy(plan)
    bom = copy.deepcopy(plan.bom)
    for line in bom.lines:
        if line.catalog_id == catalog_id:
            line.unit_price_usd = price
            line.total_usd = round(price * line.count, 2)
            line.unit_price_low_usd = line.unit_price_high_usd = price
    p2.bom = bom
    return fabric_tco(p2, catalog, overrides).tco_usd


# --------------------------------------------------------------------------------------------
# Hybrid: back-end fabric + Ethernet front-end / storage network
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HybridPrice:
    """A whole design: GPU back-end plus the Ethernet front-end/storage network."""

    backend_technology: str
    backend_capex_usd: float
    backend_tco_usd: float
    front_end_switch: str
    front_end_rate_gbps: float
    front_end_endpoints: int
    storage_nodes: int
    front_end_capex_usd: float
    front_end_tco_usd: float
    front_end_switches: dict[str, int]
    notes: tuple[str, ...] = ()
    bom: Any = field(default=None, repr=False, compare=False)  # the front end's bill of materials

    @property
    def capex_usd(self) -> float:
        return self.backend_capex_usd + self.front_end_capex_usd

    @property
    def tco_usd(self) -> float:
        return self.backend_tco_usd + self.front_end_tco_usd

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend_technology": self.backend_technology,
            "backend_capex_usd": round(self.backend_capex_usd, 2),
            "backend_tco_usd": round(self.backend_tco_usd, 2),
            "front_end_switch": self.front_end_switch,
            "front_end_rate_gbps": self.front_end_rate_gbps,
            "front_end_endpoints": self.front_end_endpoints,
            "storage_nodes": self.storage_nodes,
            "front_end_switches": dict(self.front_end_switches),
            "front_end_capex_usd": round(self.front_end_capex_usd, 2),
            "front_end_tco_usd": round(self.front_end_tco_usd, 2),
            "capex_usd": round(self.capex_usd, 2),
            "tco_usd": round(self.tco_usd, 2),
            "notes": list(self.notes),
        }


def storage_nodes_for(checkpoint_gbytes_per_s: float, node_gbps: float) -> int:
    """Storage nodes needed to absorb ``checkpoint_gbytes_per_s`` at ``node_gbps`` of NIC each."""
    if checkpoint_gbytes_per_s < 0 or node_gbps <= 0:
        raise InputError(
            "must be > 0", field="checkpoint bandwidth / storage NIC rate", value=checkpoint_gbytes_per_s
        )
    return max(1, math.ceil(checkpoint_gbytes_per_s * 8 / node_gbps))


def price_hybrid(
    backend,
    catalog,
    *,
    storage_nodes: int | None = None,
    checkpoint_gbytes_per_s: float | None = None,
    storage_node_gbps: float = 400.0,
    front_end_switch: str = "sn5600",
    oversubscription: float = 1.0,
    lengths_m: dict[str, float] | None = None,
    optics: str = "any",
    overrides: dict[str, float] | None = None,
) -> HybridPrice:
    """Price ``backend`` (a FabricPlan: IB or RoCE) plus an Ethernet front-end/storage network.

    Endpoints: every server's storage NIC ports (catalog ``storage_nics_per_node`` × the storage
    NIC's ports) plus ``storage_nodes`` (given, or enough to take ``checkpoint_gbytes_per_s`` at
    ``storage_node_gbps`` each). The front end is a non-blocking (or ``oversubscription``:1)
    leaf-spine of ``front_end_switch`` at the storage NIC's port rate; the storage NICs ship with
    the servers and storage systems, so only switches, optics and cables are added.
    """
    from aifabric.topology import rail_sizing

    gpu, nic = _storage_nic(backend, catalog)
    if storage_nodes is None:
        storage_nodes = (
            storage_nodes_for(checkpoint_gbytes_per_s, storage_node_gbps) if checkpoint_gbytes_per_s else 0
        )
    if storage_nodes < 0:
        raise InputError("must be ≥ 0", field="storage_nodes", value=storage_nodes)
    switch, rate, radix = _front_end_switch(catalog, front_end_switch, nic)
    server_ports = backend.nodes * gpu.storage_nics_per_node * nic.ports
    storage_ports = storage_nodes * max(1, math.ceil(storage_node_gbps / rate))
    endpoints = server_ports + storage_ports
    design = rail_sizing(endpoints, 1, radix, oversubscription, 1)
    bom = _front_end_bom(catalog, design, switch, nic, radix, lengths_m, optics)
    fe_capex = bom.total("total_usd")
    fe_tco = _front_end_tco(catalog, switch, bom, backend, overrides)
    notes = (
        f"front end: {server_ports} server storage ports ({gpu.storage_nics_per_node} × {nic.id} per node) + "
        f"{storage_ports} storage-node ports at {rate:g}G",
    )
    return HybridPrice(
        backend_technology=backend.technology,
        backend_capex_usd=backend.capex_usd,
        backend_tco_usd=backend.tco.tco_usd
        if backend.tco is not None
        else fabric_tco(backend, catalog, overrides).tco_usd,
        front_end_switch=switch.id,
        front_end_rate_gbps=rate,
        front_end_endpoints=endpoints,
        storage_nodes=storage_nodes,
        front_end_capex_usd=fe_capex,
        front_end_tco_usd=fe_tco,
        front_end_switches=design.switches,
        notes=notes,
        bom=bom,
    )


def _storage_nic(backend, catalog):
    """(GPU system record, storage / front-end NIC) of the backend's servers; refused when the
    system lists none."""
    gpu = catalog.get("gpu", backend.gpu)
    nic = catalog.get("nic", gpu.storage_nic) if gpu.storage_nic else None
    if nic is None or not gpu.storage_nics_per_node:
        raise InputError(
            f"GPU system {backend.gpu} lists no storage / front-end NICs",
            field="gpu",
            value=backend.gpu,
            allowed="a system with storage_nics_per_node (h100, h200, b200, gb200-nvl72, ...)",
        )
    return gpu, nic


def _front_end_switch(catalog, front_end_switch: str, nic):
    """(switch, port rate, radix at it): an Ethernet switch with ports at the storage NIC's rate."""
    from aifabric.design.cost import radix_at

    switch = catalog.get("switch", front_end_switch)
    if switch.technology != "ethernet":
        raise InputError("the front end is Ethernet", field="front_end_switch", value=front_end_switch)
    rate = float(nic.port_rate_gbps)
    radix = radix_at(switch, rate)
    if radix is None:
        raise InputError(
            f"switch {front_end_switch} has no {rate:g}G ports",
            field="front_end_switch",
            value=front_end_switch,
        )
    return switch, rate, radix


def _front_end_bom(catalog, design, switch, nic, radix, lengths_m, optics):
    """The front end's switches, optics and cables: the NIC line is dropped (the NICs ship with
    the servers and storage systems)."""
    from aifabric.design.cost import DEFAULT_LENGTHS_M, price_rail_fabric

    lengths = dict(DEFAULT_LENGTHS_M)
    lengths.update(lengths_m or {})
    bom, _media = price_rail_fabric(
        catalog,
        design,
        "roce",
        switch,
        nic,
        float(nic.port_rate_gbps),
        lengths,
        server_cages="per-nic",
        radix=radix,
        optics=optics,
    )
    bom.lines = [x for x in bom.lines if x.category != "nic"]
    return bom


def _front_end_tco(catalog, switch, bom, backend, overrides) -> float:
    """The front end's TCO: its capex, power and the catalog's TCO inputs (``overrides`` by key)."""
    from types import SimpleNamespace

    fe_plan = SimpleNamespace(
        switch_id=switch.id,
        capex_usd=bom.total("total_usd"),
        capex_range_usd=bom.total_range(),
        bom=bom,
        power_w=bom.total("total_power_w"),
        gpus=backend.gpus,
        nodes=0,
    )
    return fabric_tco(fe_plan, catalog, overrides).tco_usd


# --------------------------------------------------------------------------------------------
# Rent vs build
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RentVsBuild:
    """Owning (servers + network) against renting the same GPUs by the hour."""

    gpus: int
    gpu: str
    rent_usd_per_gpu_hour: float
    rent_basis: str
    build_capex_usd: float
    build_opex_usd_per_month: float
    rent_usd_per_month: float
    break_even_months: float | None
    lifetime_months: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpus": self.gpus,
            "gpu": self.gpu,
            "rent_usd_per_gpu_hour": self.rent_usd_per_gpu_hour,
            "rent_basis": self.rent_basis,
            "build_capex_usd": round(self.build_capex_usd, 2),
            "build_opex_usd_per_month": round(self.build_opex_usd_per_month, 2),
            "rent_usd_per_month": round(self.rent_usd_per_month, 2),
            "break_even_months": None if self.break_even_months is None else round(self.break_even_months, 1),
            "lifetime_months": self.lifetime_months,
            "notes": list(self.notes),
        }


def rent_vs_build(
    plan,
    catalog,
    *,
    rent_usd_per_gpu_hour: float | None = None,
    server_price_usd: float | None = None,
    utilisation: float = 1.0,
    overrides: dict[str, float] | None = None,
) -> RentVsBuild:
    """Break-even months of building ``plan``'s cluster (servers at the catalog system price, or
    ``server_price_usd`` per node; network capex and yearly network opex from the plan's TCO;
    server energy at the system's power × PUE) against renting its GPUs for ``utilisation`` of
    the hours at ``rent_usd_per_gpu_hour`` (default: the catalog's sourced rental range midpoint
    for that GPU). None when renting is never dearer."""
    inputs = tco_inputs(catalog, overrides)
    gpu = catalog.get("gpu", plan.gpu)
    key = f"rent_usd_per_gpu_hour.{plan.gpu}"
    if rent_usd_per_gpu_hour is None:
        if key not in inputs:
            raise InputError(
                f"no rental price for {plan.gpu} in the catalog",
                field=f"tco.{key}",
                allowed="pass rent_usd_per_gpu_hour or add the key in a --catalog tco: section",
            )
        rent_usd_per_gpu_hour = float(inputs[key].value)
        basis = inputs[key].describe()
    else:
        basis = "given"
    if not 0 < utilisation <= 1:
        raise InputError("must be in (0, 1]", field="utilisation", value=utilisation)
    node_price = server_price_usd if server_price_usd is not None else gpu.price_usd
    if node_price is None:
        raise InputError(
            f"no server price for {plan.gpu} in the catalog",
            field=f"gpus[{plan.gpu}].price_usd",
            allowed="pass server_price_usd or set price_usd / price_range_usd via --catalog",
        )
    notes = []
    node_w = gpu.server_power_w
    if node_w is None:
        node_w = gpu.tdp_w * gpu.gpus_per_node
        notes.append(f"server power unknown: GPU TDP only ({node_w:g} W per node), a lower bound")
    hours_month = float(inputs["hours_per_year"].value) / 12
    pue = float(inputs["pue"].value)
    price_kwh = float(inputs["electricity_usd_per_kwh"].value)
    tco = plan.tco if plan.tco is not None else fabric_tco(plan, catalog, overrides)
    capex = node_price * plan.nodes + tco.capex_usd + tco.spares_usd
    opex = tco.opex_usd_per_year / 12 + plan.nodes * node_w / 1000 * pue * hours_month * price_kwh
    rent = plan.gpus * hours_month * utilisation * rent_usd_per_gpu_hour
    be = capex / (rent - opex) if rent > opex else None
    notes.append("server support, staff, space and financing are not counted on the build side")
    return RentVsBuild(
        gpus=plan.gpus,
        gpu=plan.gpu,
        rent_usd_per_gpu_hour=rent_usd_per_gpu_hour,
        rent_basis=basis,
        build_capex_usd=capex,
        build_opex_usd_per_month=opex,
        rent_usd_per_month=rent,
        break_even_months=be,
        lifetime_months=float(inputs["lifetime_years"].value) * 12,
        notes=tuple(notes),
    )
