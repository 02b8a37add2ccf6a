"""The hardware catalog and the sourced simulation defaults.

What this module holds:

- ``SwitchSpec``, ``NicSpec``, ``OpticSpec``, ``CableSpec``, ``GpuSpec``: frozen records of one
  part each, read from ``aifabric/data/catalog.yaml``. A record's ``source`` / ``confidence``
  cover its spec fields; ``<field>_source``, ``<field>_confidence`` and ``<field>_basis`` override
  them for one field (``price_source``, ``power_confidence``, ``latency_basis``, ...).
- ``Catalog``: the records keyed by id per kind, the source list, and ``get`` / ``is_estimate`` /
  ``provenance`` / ``estimates``.
- ``load_catalog(override)``: the packaged catalog (cached), optionally merged with a user YAML
  file of the same shape (records matched by id, updated field by field; new ids added). Every
  problem in that file is an :class:`~aifabric.errors.InputError` naming the file and the field.
- ``load_defaults()`` / ``default_value(path)``: ``aifabric/data/defaults.yaml``, sourced defaults
  for the simulator and the advisor (``default_value("dcqcn.nvidia-firmware.rate_ai")``).
- ``catalog_frame(catalog, kind)``: a pandas table for terminals and reports.
- Prices: every priced record has ``price_usd`` (the point value used by default), and may have
  ``price_range_usd: [low, high]``, ``price_date`` and ``price_input: true`` (no public price
  exists: the range is an input the user should replace with a quote). A record with only a range
  gets the range midpoint as its point (``price_point: midpoint``). Callers read prices through
  :func:`price_usd`, :func:`price_range_usd`, :func:`price_basis` and :func:`price_info` (also
  methods of :class:`Catalog`), never by inventing one.
- Cages and lanes: switches say which module form factor, electrical lanes, lane rates and
  cooling (finned = integrated heat sink, flat-top = riding heat sink) their cages take; optics
  say what they are. :func:`module_fits_cage` is the one rule the bill of materials and the tests
  use.
- ``tco``: sourced or input TCO parameters (lifetime, electricity price, PUE, support, licences,
  spares, rental prices), each ``{value, range, unit, source, confidence, basis, date}``, read by
  :mod:`aifabric.design.tco` and overridable in a user catalog's ``tco:`` section.

Confidence words: ``high``, ``medium``, ``low`` (research grades H/M/L), ``derived`` (arithmetic
on cited inputs), ``estimate`` (no source; the ``basis`` says how the number was made) and
``user`` (given in a user catalog file) and ``input`` (no public number exists: a range the
user is expected to replace; the decision reports the break-even value instead of trusting it).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from aifabric.errors import InputError, InputErrors

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CONFIDENCES",
    "KINDS",
    "CableSpec",
    "Catalog",
    "GpuSpec",
    "NicSpec",
    "OpticSpec",
    "PortMode",
    "SwitchSpec",
    "catalog_frame",
    "default_leaf",
    "default_value",
    "is_estimate",
    "load_catalog",
    "load_defaults",
    "provenance",
]

Confidence = Literal["high", "medium", "low", "derived", "estimate", "user", "input"]
CONFIDENCES: tuple[str, ...] = get_args(Confidence)
Technology = Literal["infiniband", "ethernet"]
FormFactor = Literal["OSFP", "QSFP112", "QSFP-DD"]
#: module top: finned = integrated heat sink (IHS, air-cooled switch cages); flat-top = riding heat
#: sink (RHS: NIC cards, DGX server cages, liquid-cooled switches); any = the cage takes both
Cooling = Literal["finned", "flat-top", "any"]

PACKAGED_CATALOG = "aifabric/data/catalog.yaml"
PACKAGED_DEFAULTS = "aifabric/data/defaults.yaml"
_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------
def _types_of(annotation) -> set:
    """The plain types an annotation admits (``int | None`` → {int, NoneType}; Literals → {str})."""
    args = get_args(annotation)
    if get_origin(annotation) is Literal:
        return {type(a) for a in args}
    if not args:
        return {annotation}
    out: set = set()
    for a in args:
        out |= _types_of(a)
    return out


class _Record(BaseModel):
    """Fields every catalog record has."""

    # allow_inf_nan=False: .inf / .nan in a catalog file are errors, not prices (issue 32)
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    #: provenance prefixes this kind accepts (``price`` → ``price_source`` / ``_confidence`` / ``_basis``)
    PROVENANCE: ClassVar[tuple[str, ...]] = ()

    id: str = Field(pattern=_ID_PATTERN)
    name: str = Field(min_length=1)
    source: str | None = None
    confidence: Confidence
    basis: str | None = None
    notes: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_bool_numbers(cls, data: Any) -> Any:
        """``true`` / ``false`` are not numbers (pydantic would read ``ports: true`` as 1)."""
        if isinstance(data, dict):
            for key, v in data.items():
                field = cls.model_fields.get(key) if isinstance(key, str) else None
                if isinstance(v, bool) and field is not None and bool not in _types_of(field.annotation):
                    raise ValueError(f"{key}: a boolean is not a number (got {v!r})")
        return data

    @model_validator(mode="before")
    @classmethod
    def _price_point_from_range(cls, data: Any) -> Any:
        """A record priced only by a range gets the range midpoint as its point value."""
        if not isinstance(data, dict) or "price_range_usd" not in cls.model_fields:
            return data
        rng = data.get("price_range_usd")
        if data.get("price_usd") is None and isinstance(rng, list | tuple) and len(rng) == 2:
            try:
                low, high = float(rng[0]), float(rng[1])
            except (TypeError, ValueError):
                return data
            data = {**data, "price_usd": round((low + high) / 2, 2), "price_point": "midpoint"}
        elif data.get("price_usd") is not None and data.get("price_point") is None:
            data = {**data, "price_point": "source"}
        return data

    @model_validator(mode="after")
    def _estimates_have_a_basis(self) -> _Record:
        if self.confidence in ("estimate", "input") and not self.basis:
            raise ValueError(f"confidence '{self.confidence}' needs a basis saying how the numbers were made")
        for prefix in self.PROVENANCE:
            conf = getattr(self, f"{prefix}_confidence")
            if conf in ("estimate", "input") and not getattr(self, f"{prefix}_basis"):
                raise ValueError(
                    f"{prefix}_confidence '{conf}' needs {prefix}_basis saying how it was derived"
                )
        rng = getattr(self, "price_range_usd", None)
        if rng is not None:
            low, high = rng
            if low > high:
                raise ValueError("price_range_usd must be [low, high] with low ≤ high")
            price = getattr(self, "price_usd", None)
            if price is not None and not low - 0.01 <= price <= high + 0.01:
                raise ValueError(f"price_usd {price:g} lies outside price_range_usd [{low:g}, {high:g}]")
        if getattr(self, "price_input", False):
            if rng is None:
                raise ValueError("price_input: true needs price_range_usd (the range the user should check)")
            if getattr(self, "price_confidence", None) != "input":
                raise ValueError("price_input: true needs price_confidence: input")
        return self


def _with_provenance(*prefixes: str) -> type[_Record]:
    """A ``_Record`` subclass with optional ``<prefix>_source/_confidence/_basis`` fields."""
    fields: dict[str, Any] = {}
    for prefix in prefixes:
        fields[f"{prefix}_source"] = (str | None, None)
        fields[f"{prefix}_confidence"] = (Confidence | None, None)
        fields[f"{prefix}_basis"] = (str | None, None)
    base = create_model(f"_Provenance_{'_'.join(prefixes)}", __base__=_Record, **fields)
    base.PROVENANCE = prefixes
    return base


class _Priced(BaseModel):
    """Price fields shared by every priced record (see the module docstring)."""

    price_usd: float | None = Field(default=None, ge=0)
    price_range_usd: tuple[float, float] | None = None
    price_date: str | None = None
    price_input: bool = False
    price_point: Literal["source", "midpoint"] | None = None
    #: where each bound of ``price_range_usd`` comes from (a new-equipment price, a ratio, or
    #: "ASSUMPTION (no public source)"); the packaged catalog gives both for every range
    price_low_basis: str | None = None
    price_high_basis: str | None = None

    #: False for kinds whose price is optional (GPU systems)
    PRICE_REQUIRED: ClassVar[bool] = True

    @model_validator(mode="after")
    def _has_a_price(self) -> _Priced:
        if self.price_usd is None and self.PRICE_REQUIRED:
            raise ValueError("needs price_usd or price_range_usd (an input range when no price is public)")
        if self.price_range_usd is not None and min(self.price_range_usd) < 0:
            raise ValueError("price_range_usd must not be negative")
        return self


class PortMode(BaseModel):
    """One supported breakout of a switch: ``ports`` ports at ``rate_gbps``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ports: int = Field(gt=0)
    rate_gbps: int = Field(gt=0)


class UetSupport(BaseModel):
    """What a part does of Ultra Ethernet (UEC 1.0): ``transport`` (a NIC runs the UET transport:
    spraying, unordered delivery, selective retransmission), ``trimming`` (a switch trims a full
    queue's packets to their header), ``llr`` (link-level retry), ``cbfc`` (credit-based flow
    control). None = not stated in the sources (never read as "no")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    transport: bool | None = None
    trimming: bool | None = None
    llr: bool | None = None
    cbfc: bool | None = None


_SWITCH_PROV = (
    "uet",
    "ports",
    "port_modes",
    "cages",
    "latency",
    "buffer",
    "power",
    "price",
    "adaptive_routing",
    "in_network_reduction",
)


class SwitchSpec(_Priced, _with_provenance(*_SWITCH_PROV)):
    """A switch: ``ports`` × ``port_rate_gbps`` in its default mode; ``power_w`` without optics.

    Cage fields: ``cage_form_factor`` (OSFP, QSFP-DD), ``lanes_per_cage`` (electrical lanes, 8 on
    an 800G OSFP cage), ``lane_rates_gbps`` (SerDes lane rates the cages run: 100 on Spectrum-4 and
    Tomahawk 5, 200 on Quantum-X800 and Tomahawk 6) and ``cage_cooling`` (finned on air-cooled
    twin-port OSFP switches). ``software`` names the switch OS / fabric manager for licences
    (``ufm``, ``cumulus``, ``sonic``, ``eos``, ``nx-os``, ``junos``, ``vendor``).
    """

    vendor: str
    technology: Technology
    family: str | None = None
    ports: int = Field(gt=0)
    port_rate_gbps: int = Field(gt=0)
    port_modes: tuple[PortMode, ...] = ()
    cages: int | None = Field(default=None, gt=0)
    ports_per_cage: int | None = Field(default=None, gt=0)
    cage_form_factor: FormFactor | None = None
    lanes_per_cage: int | None = Field(default=None, gt=0)
    lane_rates_gbps: tuple[int, ...] = ()
    cage_cooling: Cooling | None = None
    capacity_tbps: float | None = Field(default=None, gt=0)
    latency_ns: float | None = Field(default=None, ge=0)
    buffer_bytes: int | None = Field(default=None, ge=0)
    power_w: float = Field(ge=0)
    adaptive_routing: bool | None = None
    in_network_reduction: str | None = None
    software: str | None = None
    uet: UetSupport | None = None

    @property
    def rate_gbps(self) -> int:
        return self.port_rate_gbps


class NicSpec(_Priced, _with_provenance("ports", "power", "price", "uet")):
    """A host adapter (NIC) without optics; its cages are ``form_factor`` with ``lane_rate_gbps``
    lanes and take flat-top (riding heat sink) modules."""

    vendor: str | None = None
    technology: Technology
    ports: int = Field(gt=0)
    port_rate_gbps: int = Field(gt=0)
    lane_rate_gbps: int | None = Field(default=None, gt=0)
    host_interface: str | None = None
    form_factor: FormFactor | None = None
    role: Literal["scale-out", "storage", "any"] = "any"
    power_w: float = Field(ge=0)
    uet: UetSupport | None = None

    @property
    def rate_gbps(self) -> int:
        return self.port_rate_gbps


Protocol = Literal["infiniband", "ethernet"]


class _Parts(BaseModel):
    """Real part numbers per protocol (``parts``) and the protocols a record is offered to
    (``technology``: ``any`` = both). A record listing parts for both protocols must be offered
    to both, one listing a single protocol only to it: one media table serves both fabrics."""

    parts: dict[Protocol, tuple[str, ...]] | None = None

    @model_validator(mode="after")
    def _parts_match_technology(self) -> _Parts:
        if not self.parts:
            return self
        have = {k for k, v in self.parts.items() if v}
        want = {"any": {"infiniband", "ethernet"}}.get(self.technology, {self.technology})
        if have != want:
            raise ValueError(
                f"technology '{self.technology}' does not match the protocols with parts "
                f"({', '.join(sorted(have)) or 'none'}): list parts for each protocol offered"
            )
        return self


class OpticSpec(_Parts, _Priced, _with_provenance("reach", "power", "price", "technology")):
    """A transceiver module; ``ports`` = 2 for twin-port modules (``rate_gbps`` is the module total).

    ``lanes`` × ``lane_rate_gbps`` is its electrical interface (8 × 100G for an 800G twin-port
    module, 4 × 200G for an XDR 800G module); ``cooling`` is its top (finned / flat-top);
    ``brand`` is ``nvidia`` or ``third-party``; ``optical`` is the optical interface of each port
    (``400G-SR4``, ``400G-DR4``, ``800G-DR4``, ...): the two ends of a link must have the same one.
    """

    form_factor: FormFactor
    rate_gbps: int = Field(gt=0)
    ports: int = Field(gt=0)
    port_rate_gbps: int = Field(gt=0)
    lanes: int = Field(gt=0)
    lane_rate_gbps: int = Field(gt=0)
    cooling: Cooling
    brand: Literal["nvidia", "third-party"] = "nvidia"
    media: Literal["mmf", "smf"]
    optical: str = Field(min_length=1)
    reach_m: float = Field(gt=0)
    side: Literal["switch", "nic", "any"]
    technology: Literal["any", "infiniband", "ethernet"]
    power_w: float = Field(ge=0)

    @model_validator(mode="after")
    def _lanes_carry_the_rate(self) -> OpticSpec:
        if self.lanes * self.lane_rate_gbps != self.rate_gbps:
            raise ValueError(
                f"lanes × lane_rate_gbps ({self.lanes} × {self.lane_rate_gbps}) "
                f"must equal rate_gbps {self.rate_gbps}"
            )
        if self.ports * self.port_rate_gbps != self.rate_gbps:
            raise ValueError(f"ports × port_rate_gbps must equal rate_gbps {self.rate_gbps}")
        return self


class CableSpec(
    _Parts, _Priced, _with_provenance("max_reach", "delay", "power", "price", "price_per_m", "technology")
):
    """A cable; its price is ``price_usd + price_usd_per_m × length``. ``rate_gbps`` None = any rate.

    Copper (``dac`` passive, ``lacc`` linear active, ``aec`` retimed active) and ``aoc`` cables
    carry their own ends: ``lane_rate_gbps`` must be run by both cages and ``lanes`` (the switch-end
    plug's electrical lanes) must fill the switch cage. ``rate_gbps`` is the cable's total rate and
    ``ports`` its far ends (2 for a 1:2 splitter), so one cable carries ``rate_gbps / link rate``
    links; ``links: switch-switch`` for cables that are not offered to hosts.
    Fibre (``mmf``, ``smf``) has no ends and needs a transceiver at each.
    """

    kind: Literal["dac", "lacc", "aec", "aoc", "mmf", "smf"]
    max_reach_m: float | None = Field(default=None, gt=0)
    rate_gbps: int | None = Field(default=None, gt=0)
    lane_rate_gbps: int | None = Field(default=None, gt=0)
    lanes: int | None = Field(default=None, gt=0)
    form_factor: FormFactor | None = None
    ports: int | None = Field(default=None, gt=0)
    links: Literal["any", "switch-switch"] = "any"
    technology: Literal["any", "infiniband", "ethernet"] = "any"
    delay_ns_per_m: float = Field(gt=0)
    power_w: float = Field(ge=0)
    price_usd_per_m: float = Field(ge=0)

    def price_for_length(self, length_m: float) -> float:
        """Price in USD of one cable of ``length_m`` metres."""
        return self.price_usd + self.price_usd_per_m * length_m


class GpuSpec(
    _Priced,
    _with_provenance(
        "bf16",
        "fp8",
        "hbm",
        "nvlink",
        "nvlink_latency",
        "tdp",
        "gpus_per_node",
        "nics_per_node",
        "nic_rate",
        "server_cages",
        "storage_nics",
        "server_power",
        "price",
    ),
):
    """A GPU and the system it ships in (one node = ``gpus_per_node`` GPUs: an 8-GPU HGX/DGX
    server or a 4-GPU NVL72 compute tray).

    Network of the system: ``nics_per_node`` scale-out NICs at ``nic_rate_gbps`` each (default
    ``nic_ib`` / ``nic_eth`` catalog ids), reached through ``server_cages``: ``twin-port`` (DGX-class
    boards: two NICs behind one flat-top twin-port OSFP cage) or ``per-nic`` (each NIC card's own
    cage); plus ``storage_nics_per_node`` front-end/storage NICs (``storage_nic``).
    ``scale_up_gpus`` is the NVLink domain (8 on HGX, 72 on NVL72). ``price_usd`` is one node as
    sold (with its NICs), ``server_power_w`` one node's power.
    """

    vendor: str | None = None
    system: str | None = None
    bf16_tflops: float = Field(gt=0)
    fp8_tflops: float | None = Field(default=None, gt=0)
    hbm_gbytes: float = Field(gt=0)
    hbm_tbytes_per_s: float = Field(gt=0)
    nvlink_gbytes_per_s: float = Field(gt=0)
    nvlink_latency_us: float | None = Field(default=None, ge=0)
    tdp_w: float = Field(gt=0)
    gpus_per_node: int = Field(gt=0)
    scale_up_gpus: int | None = Field(default=None, gt=0)
    nics_per_node: int = Field(gt=0)
    nic_rate_gbps: int = Field(default=400, gt=0)
    nic_ib: str | None = None
    nic_eth: str | None = None
    server_cages: Literal["twin-port", "per-nic"] = "per-nic"
    storage_nics_per_node: int = Field(default=0, ge=0)
    storage_nic: str | None = None
    server_power_w: float | None = Field(default=None, gt=0)

    PRICE_REQUIRED: ClassVar[bool] = False


#: catalog kind (what users type) → (YAML section, record class)
KINDS: dict[str, tuple[str, type[_Record]]] = {
    "switch": ("switches", SwitchSpec),
    "nic": ("nics", NicSpec),
    "optic": ("optics", OpticSpec),
    "cable": ("cables", CableSpec),
    "gpu": ("gpus", GpuSpec),
}
_SECTION_KIND = {section: kind for kind, (section, _cls) in KINDS.items()}
_TOP_LEVEL = ("schema_version", "sources", *(_SECTION_KIND), "tco")


class TcoInput(BaseModel):
    """One TCO parameter: a point ``value`` (or the midpoint of ``range``), unit and provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    value: float | None = None
    range: tuple[float, float] | None = None
    unit: str = Field(min_length=1)
    source: str | None = None
    date: str | None = None
    confidence: Confidence
    basis: str | None = None
    point: Literal["source", "midpoint"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _midpoint(cls, data: Any) -> Any:
        if (
            isinstance(data, dict)
            and data.get("value") is None
            and isinstance(data.get("range"), list | tuple)
        ):
            try:
                low, high = (float(x) for x in data["range"])
            except (TypeError, ValueError):
                return data
            return {**data, "value": (low + high) / 2, "point": "midpoint"}
        if isinstance(data, dict) and data.get("value") is not None and data.get("point") is None:
            return {**data, "point": "source"}
        return data

    @model_validator(mode="after")
    def _check(self) -> TcoInput:
        if self.value is None:
            raise ValueError("needs value or range")
        if self.value < 0 or (self.range is not None and min(self.range) < 0):
            raise ValueError("must not be negative")
        if self.confidence in ("estimate", "input") and not self.basis:
            raise ValueError(f"confidence '{self.confidence}' needs a basis")
        if self.range is not None:
            low, high = self.range
            if low > high or not low - 1e-9 <= self.value <= high + 1e-9:
                raise ValueError("range must be [low, high] containing value")
        return self

    @property
    def low(self) -> float:
        return float(self.range[0]) if self.range else float(self.value)

    @property
    def high(self) -> float:
        return float(self.range[1]) if self.range else float(self.value)

    def describe(self) -> str:
        """``"0.0806 USD/kWh — EIA … (high, 2023)"`` or ``"input 0.1 [0.05, 0.15] …: basis"``."""
        rng = f" [{self.low:g}, {self.high:g}]" if self.range else ""
        head = f"{self.value:g} {self.unit}{rng}"
        if self.point == "midpoint":
            head += " (range midpoint)"
        where = "; ".join(x for x in (self.source, self.date) if x)
        tail = f"{self.confidence}" + (f", {where}" if where else "")
        return f"{head} — {tail}" + (f": {self.basis}" if self.basis else "")


#: value field → provenance prefix (a prefix also names itself)
_FIELD_PREFIX = {
    "price_usd": "price",
    "price_range_usd": "price",
    "price_date": "price",
    "price_input": "price",
    "price_point": "price",
    "nic_rate_gbps": "nic_rate",
    "server_power_w": "server_power",
    "storage_nics_per_node": "storage_nics",
    "price_usd_per_m": "price_per_m",
    "power_w": "power",
    "latency_ns": "latency",
    "buffer_bytes": "buffer",
    "reach_m": "reach",
    "max_reach_m": "max_reach",
    "delay_ns_per_m": "delay",
    "tdp_w": "tdp",
    "bf16_tflops": "bf16",
    "fp8_tflops": "fp8",
    "hbm_gbytes": "hbm",
    "hbm_tbytes_per_s": "hbm",
    "nvlink_gbytes_per_s": "nvlink",
    "nvlink_latency_us": "nvlink_latency",
}


def _prefix_of(record: _Record, field: str) -> str:
    prefix = _FIELD_PREFIX.get(field, field)
    if prefix not in record.PROVENANCE and field not in type(record).model_fields:
        allowed = sorted(set(record.PROVENANCE) | set(type(record).model_fields))
        raise InputError("unknown catalog field", field=field, value=None, allowed=", ".join(allowed))
    return prefix


def _field_provenance(record: _Record, field: str) -> tuple[str | None, str, str | None]:
    """(source, confidence, basis) of one field, falling back to the record's own."""
    prefix = _prefix_of(record, field)
    if prefix in record.PROVENANCE:
        src = getattr(record, f"{prefix}_source")
        conf = getattr(record, f"{prefix}_confidence")
        basis = getattr(record, f"{prefix}_basis")
        if src is not None or conf is not None or basis is not None:
            return src, conf or record.confidence, basis
    return record.source, record.confidence, record.basis


def is_estimate(record: _Record, field: str = "price") -> bool:
    """True when ``field`` of ``record`` (``price``, ``power``, ``price_usd``, ...) is not a sourced
    fact: an estimate, or an input range (no public number)."""
    return _field_provenance(record, field)[1] in ("estimate", "input")


def is_input(record: _Record, field: str = "price") -> bool:
    """True when ``field`` is an input range: no public number exists, the user should replace it."""
    if field in ("price", "price_usd") and getattr(record, "price_input", False):
        return True
    return _field_provenance(record, field)[1] == "input"


def price_usd(record: _Record) -> float:
    """The point price used by default: a sourced price, or the midpoint of ``price_range_usd``."""
    value = getattr(record, "price_usd", None)
    if value is None:
        raise InputError(
            "catalog record has no price",
            field=f"{record.id}.price_usd",
            allowed="price_usd or price_range_usd (override with --catalog FILE)",
        )
    return float(value)


def price_range_usd(record: _Record) -> tuple[float, float]:
    """``(low, high)`` USD: the record's ``price_range_usd``, else ``(price, price)``."""
    rng = getattr(record, "price_range_usd", None)
    if rng is not None:
        return float(rng[0]), float(rng[1])
    p = price_usd(record)
    return p, p


def price_basis(record: _Record) -> str:
    """Where the price comes from, the range and which value is used: for reports and BOM lines."""
    text = provenance(record, "price")
    low, high = price_range_usd(record)
    date = getattr(record, "price_date", None)
    parts = []
    if low != high:
        point = "midpoint" if getattr(record, "price_point", None) == "midpoint" else "point"
        parts.append(f"range {low:,.0f}–{high:,.0f} USD, {point} {price_usd(record):,.0f} used")
    if date:
        parts.append(f"dated {date}")
    if is_input(record):
        parts.append("INPUT: no public price, replace with a quote")
    return text + (f" [{'; '.join(parts)}]" if parts else "")


def price_info(record: _Record) -> dict[str, Any]:
    """Everything about one price, JSON-ready: ``point_usd``, ``low_usd``, ``high_usd``,
    ``point_is`` (source | midpoint), ``source``, ``date``, ``confidence``, ``basis``, ``input``."""
    src, conf, basis = _field_provenance(record, "price")
    low, high = price_range_usd(record)
    return {
        "point_usd": price_usd(record),
        "low_usd": low,
        "high_usd": high,
        "point_is": getattr(record, "price_point", None) or "source",
        "source": src,
        "date": getattr(record, "price_date", None),
        "confidence": conf,
        "basis": basis,
        "input": is_input(record),
    }


def module_fits_cage(
    module: Any,
    *,
    form_factor: str | None,
    lanes: int | None,
    lane_rates_gbps: Iterable[int],
    cooling: str | None,
) -> list[str]:
    """Why ``module`` (an optic, or a copper/AOC cable end) does not fit a cage; empty when it fits.

    Rules (NVIDIA LinkX documentation, P9/P10): the form factor must match; the module fills the
    cage's electrical lanes (a single-port 4-lane 400G OSFP does not go into a twin-port 8-lane
    switch cage); its lane rate must be one the cage's SerDes runs (200G-PAM4 modules cannot
    downshift to 100G-PAM4, so 200G-lane optics only fit 200G-SerDes switches and ConnectX-8);
    finned (IHS) modules only fit air-cooled switch cages, flat-top (RHS) modules fit NIC, server
    and liquid-cooled cages (cage cooling ``any`` takes both).
    """
    why = []
    ff = getattr(module, "form_factor", None)
    if form_factor and ff and ff != form_factor:
        why.append(f"form factor {ff} ≠ cage {form_factor}")
    m_lanes = getattr(module, "lanes", None)
    if lanes and m_lanes and m_lanes != lanes:
        why.append(f"{m_lanes} lanes ≠ cage {lanes} lanes")
    rates = tuple(lane_rates_gbps)
    m_rate = getattr(module, "lane_rate_gbps", None)
    if rates and m_rate and m_rate not in rates:
        why.append(f"{m_rate}G lanes not run by the cage ({', '.join(f'{r}G' for r in rates)})")
    m_cool = getattr(module, "cooling", None)
    if cooling and cooling != "any" and m_cool and m_cool != "any" and m_cool != cooling:
        why.append(f"{m_cool} module in a {cooling} cage")
    return why


def provenance(record: _Record, field: str) -> str:
    """Short human string: ``"S60 (low): midpoint of …"``, ``"estimate: IB NIC × 0.7 …"`` or
    ``"input: quote-only … [P28]"``."""
    src, conf, basis = _field_provenance(record, field)
    if conf in ("estimate", "input"):
        text = f"{conf}: {basis}" if basis else conf
        return f"{text} [{src}]" if src else text
    head = f"{src} ({conf})" if src else f"({conf})"
    return f"{head}: {basis}" if basis else head


# --------------------------------------------------------------------------------------------
# Catalog
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Catalog:
    """All catalog records, keyed by id per kind (read-only mappings), plus the source list."""

    switches: Mapping[str, SwitchSpec]
    nics: Mapping[str, NicSpec]
    optics: Mapping[str, OpticSpec]
    cables: Mapping[str, CableSpec]
    gpus: Mapping[str, GpuSpec]
    sources: Mapping[str, str]
    files: tuple[str, ...] = (PACKAGED_CATALOG,)
    tco: Mapping[str, TcoInput] = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    def tco_input(self, key: str) -> TcoInput:
        """The TCO parameter ``key`` (``pue``, ``electricity_usd_per_kwh``, ...)."""
        if key not in self.tco:
            raise InputError("unknown TCO parameter", field=f"tco.{key}", allowed=", ".join(sorted(self.tco)))
        return self.tco[key]

    def price_usd(self, record: _Record) -> float:
        """Point price used by default (sourced, or the range midpoint)."""
        return price_usd(record)

    def price_range_usd(self, record: _Record) -> tuple[float, float]:
        """``(low, high)`` USD of one record."""
        return price_range_usd(record)

    def price_basis(self, record: _Record) -> str:
        """Source, range, date and input flag of a record's price, as one line."""
        return price_basis(record)

    def price_info(self, record: _Record) -> dict[str, Any]:
        """JSON-ready price facts of one record (see :func:`price_info`)."""
        return price_info(record)

    def is_input(self, record: _Record, field: str = "price") -> bool:
        """True when the field is an input range (no public number)."""
        return is_input(record, field)

    def section(self, kind: str) -> Mapping[str, Any]:
        """The records of one kind (``switch``, ``nic``, ``optic``, ``cable``, ``gpu``)."""
        if kind not in KINDS:
            raise InputError("unknown catalog kind", field="kind", value=kind, allowed=", ".join(KINDS))
        return getattr(self, KINDS[kind][0])

    def get(self, kind: str, id: str) -> Any:
        """The record ``id`` of ``kind``; an unknown id is an InputError listing the known ones."""
        records = self.section(kind)
        if id not in records:
            raise InputError(f"unknown {kind} id", field=kind, value=id, allowed=", ".join(sorted(records)))
        return records[id]

    def records(self) -> Iterator[tuple[str, _Record]]:
        """(kind, record) for every record, kinds in catalog order."""
        for kind in KINDS:
            for record in self.section(kind).values():
                yield kind, record

    def is_estimate(self, record: _Record, field: str = "price") -> bool:
        """True when ``field`` of ``record`` is an estimate (confidence ``estimate``)."""
        return is_estimate(record, field)

    def provenance(self, record: _Record, field: str) -> str:
        """Short human string saying where ``field`` of ``record`` comes from."""
        return provenance(record, field)

    def estimates(self, fields: Iterable[str] = ("price", "price_per_m", "power")) -> list[dict[str, str]]:
        """Every (kind, id, field) whose value is an estimate or input, with its basis, for reports."""
        rows = []
        for kind, record in self.records():
            for field in fields:
                if field in record.PROVENANCE and is_estimate(record, field):
                    rows.append(
                        {
                            "kind": kind,
                            "id": record.id,
                            "field": field,
                            "confidence": _field_provenance(record, field)[1],
                            "basis": _field_provenance(record, field)[2] or "",
                        }
                    )
        return rows

    def price_summary(self) -> dict[str, int]:
        """How many priced records are sourced, estimates or input ranges (kinds switch … cable)."""
        out = {"sourced": 0, "estimate": 0, "input": 0}
        for kind, record in self.records():
            if kind == "gpu" and getattr(record, "price_usd", None) is None:
                continue
            if is_input(record):
                out["input"] += 1
            elif is_estimate(record):
                out["estimate"] += 1
            else:
                out["sourced"] += 1
        return out


def _resource_text(name: str) -> str:
    return resources.files("aifabric").joinpath("data", name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _packaged_raw() -> dict[str, Any]:
    data = _parse_packaged(_resource_text("catalog.yaml"), PACKAGED_CATALOG)
    _check_top_level(data, PACKAGED_CATALOG)
    return data


@functools.lru_cache(maxsize=1)
def _packaged_catalog() -> Catalog:
    data = _packaged_raw()
    sections: dict[str, dict[str, _Record]] = {}
    errors: list[InputError] = []
    for section, kind in _SECTION_KIND.items():
        sections[section] = {}
        for rid, entry in _section_entries(data.get(section) or [], section, PACKAGED_CATALOG):
            if rid in sections[section]:
                errors.append(InputError("duplicate id", file=PACKAGED_CATALOG, field=f"{section}[{rid}]"))
                continue
            record = _validate(KINDS[kind][1], entry, section, rid, PACKAGED_CATALOG, errors, new=True)
            if record is not None:
                sections[section][rid] = record
    tco = _tco_section(data.get("tco"), PACKAGED_CATALOG, {}, errors, packaged=True)
    _raise(errors)
    return _freeze(sections, _sources(data, PACKAGED_CATALOG), (PACKAGED_CATALOG,), tco)


def _tco_section(
    raw: Any, file: str, base: Mapping[str, TcoInput], errors: list[InputError], *, packaged: bool = False
) -> dict[str, TcoInput]:
    """``tco:`` mapping of key → {value, range, unit, source, confidence, basis, date}; a user
    file's entry updates the packaged one field by field (a new value without provenance becomes
    ``confidence: user``)."""
    out = dict(base)
    if raw is None:
        return out
    if not isinstance(raw, dict):
        errors.append(InputError("tco must be a mapping of parameter → fields", file=file, field="tco"))
        return out
    for key, entry in raw.items():
        key = str(key)
        if isinstance(entry, int | float) and not isinstance(entry, bool):
            entry = {"value": entry}
        if not isinstance(entry, dict):
            errors.append(
                InputError("a TCO parameter must be a number or a mapping", file=file, field=f"tco.{key}")
            )
            continue
        if key in out:
            merged = out[key].model_dump()
            merged.update(entry)
            if "value" in entry or "range" in entry:
                # a new number: the packaged range / point kind / provenance no longer describe it
                merged["point"] = None
                if "range" not in entry:
                    merged["range"] = None
                if "value" not in entry:
                    merged["value"] = None
                for prov, default in (
                    ("source", f"user catalog {file}"),
                    ("confidence", "user"),
                    ("basis", None),
                    ("date", None),
                ):
                    if prov not in entry:
                        merged[prov] = default
            data = merged
        elif packaged:
            data = dict(entry)
        else:
            data = {"confidence": "user", "source": f"user catalog {file}", **entry}
        try:
            out[key] = TcoInput.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(x) for x in err["loc"])
                errors.append(
                    InputError(
                        err["msg"].removeprefix("Value error, "),
                        file=file,
                        field=f"tco.{key}" + (f".{loc}" if loc else ""),
                        allowed="value (number), range [low, high], unit, source, confidence, basis, date",
                    )
                )
    return out


def load_catalog(override: str | Path | None = None) -> Catalog:
    """The packaged catalog, merged with the user catalog file ``override`` when given.

    In the override, records are matched by ``id`` and updated field by field; a changed field
    whose provenance is not given becomes ``<field>_source: "user catalog FILE"`` and
    ``<field>_confidence: user``. New ids are added and must carry every required field.
    Raises InputError (naming the file and the field path) for any problem in the file.
    """
    base = _packaged_catalog()
    if override is None:
        return base
    file = str(override)
    from aifabric.memory import read_text

    try:  # a regular file (not /dev/zero, not a folder), of a size memory can hold, UTF-8
        text = read_text(Path(override), "catalog file", bytes_per_byte=100)
    except InputError as exc:
        raise InputError(
            exc.problem, file=file, field="catalog", allowed="a readable UTF-8 YAML file"
        ) from None
    data = _parse_yaml(text, file)
    if data is None:
        raise InputError(
            "the catalog file is empty",
            file=file,
            field="catalog",
            allowed="a mapping with sections " + ", ".join(_TOP_LEVEL),
        )
    _check_top_level(data, file)

    errors: list[InputError] = []
    sources = dict(base.sources)
    sources.update(_sources(data, file))
    sections: dict[str, dict[str, _Record]] = {}
    for section, kind in _SECTION_KIND.items():
        current = dict(getattr(base, section))
        seen: set[str] = set()
        for rid, entry in _section_entries(data.get(section) or [], section, file):
            if rid in seen:
                errors.append(
                    InputError("duplicate id in the catalog file", file=file, field=f"{section}[{rid}]")
                )
                continue
            seen.add(rid)
            cls = KINDS[kind][1]
            if rid in current:
                merged = _merge(current[rid], entry, file)
                record = _validate(cls, merged, section, rid, file, errors, new=False)
            else:
                fresh = dict(entry)
                fresh.setdefault("source", f"user catalog {file}")
                fresh.setdefault("confidence", "user")
                record = _validate(cls, fresh, section, rid, file, errors, new=True)
            if record is not None:
                current[rid] = record
        sections[section] = current
    tco = _tco_section(data.get("tco"), file, base.tco, errors)
    if not errors:
        _check_ceilings(sections, tco, base, file, errors)
    _raise(errors)
    return _freeze(sections, sources, (*base.files, file), tco)


#: A user catalog's number may be at most this many times the largest value the packaged (sourced)
#: catalog has for the same field of the same section (TCO: the same parameter). ASSUMPTION (no
#: public source): a plausibility ceiling — prices and powers 100 × the dearest or hungriest
#: sourced record are typing mistakes, and sums of them overflow to Infinity in the totals.
CEILING_FACTOR = 100


def _numbers(record: BaseModel) -> dict[str, float]:
    """A record's numeric fields (tuples: their largest element), booleans left out."""
    out = {}
    for name, v in record:
        if isinstance(v, tuple) and v and all(isinstance(x, int | float) for x in v):
            v = max(v)
        if isinstance(v, int | float) and not isinstance(v, bool):
            out[name] = float(v)
    return out


@functools.cache
def _ceilings() -> dict[tuple[str, str], float]:
    base = _packaged_catalog()
    out: dict[tuple[str, str], float] = {}
    for section in _SECTION_KIND:
        for rec in getattr(base, section).values():
            for name, v in _numbers(rec).items():
                out[(section, name)] = max(out.get((section, name), 0.0), abs(v))
    for key, item in base.tco.items():
        out[("tco", key)] = max(abs(item.value or 0.0), item.high)
    return out


def _check_ceilings(sections, tco, base: Catalog, file: str, errors: list[InputError]) -> None:
    """Every number a user catalog changes or adds within :data:`CEILING_FACTOR` × the packaged
    catalog's largest value for that field."""
    caps = _ceilings()

    def check(section: str, rid: str, name: str, v: float) -> None:
        top = caps.get((section, name if section != "tco" else rid))
        if top is not None and top > 0 and abs(v) > CEILING_FACTOR * top:
            where = f"{section}[{rid}].{name}" if section != "tco" else f"tco.{rid}.{name}"
            errors.append(
                InputError(
                    "implausibly large",
                    file=file,
                    field=where,
                    value=v,
                    allowed=f"at most {CEILING_FACTOR * top:g} ({CEILING_FACTOR} × the largest "
                    f"{name} in the packaged catalog, {top:g})",
                )
            )

    for section, records in sections.items():
        old = getattr(base, section)
        for rid, rec in records.items():
            if old.get(rid) is rec:
                continue
            for name, v in _numbers(rec).items():
                check(section, rid, name, v)
    for key, item in tco.items():
        if base.tco.get(key) is not item:
            for name in ("value", "range"):
                v = getattr(item, name)
                if v is not None:
                    check("tco", key, name, max(v) if isinstance(v, tuple) else v)


def _freeze(
    sections: dict[str, dict[str, _Record]],
    sources: dict[str, str],
    files: tuple[str, ...],
    tco: dict[str, TcoInput] | None = None,
) -> Catalog:
    return Catalog(
        **{name: MappingProxyType(recs) for name, recs in sections.items()},
        sources=MappingProxyType(sources),
        files=files,
        tco=MappingProxyType(dict(tco or {})),
    )


def _merge(record: _Record, entry: dict[str, Any], file: str) -> dict[str, Any]:
    """``record`` updated by the user's ``entry``; changed fields get user provenance."""
    merged = record.model_dump()
    merged.update(entry)
    if "price_usd" in entry or "price_range_usd" in entry:
        # a user price replaces the packaged one: a point alone drops the packaged range (and its
        # input flag); a range alone gets its midpoint
        merged["price_point"] = None
        if "price_range_usd" not in entry:
            merged["price_range_usd"] = None
        if "price_usd" not in entry:
            merged["price_usd"] = None
        if "price_input" not in entry:
            merged["price_input"] = False
        if "price_date" not in entry:
            merged["price_date"] = None
    user_tag = f"user catalog {file}"
    for field in entry:
        prefix = _FIELD_PREFIX.get(field, field)
        if prefix not in record.PROVENANCE:  # not a value with provenance (name, notes, price_source, ...)
            continue
        if f"{prefix}_source" not in entry:
            merged[f"{prefix}_source"] = user_tag
        if f"{prefix}_confidence" not in entry:
            merged[f"{prefix}_confidence"] = "user"
        if f"{prefix}_basis" not in entry:
            merged[f"{prefix}_basis"] = None
    return merged


# --------------------------------------------------------------------------------------------
# Parsing helpers and error messages
# --------------------------------------------------------------------------------------------
def _parse_yaml(text: str, file: str) -> Any:
    from aifabric import yamlsafe

    try:
        return yamlsafe.load(text, file)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "YAML"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(
            f"YAML syntax error: {problem}",
            file=file,
            field=where,
            allowed="valid YAML (check indentation, colons and quotes)",
        ) from None


def _parse_packaged(text: str, file: str) -> Any:
    """A packaged YAML file: parsed by libyaml when PyYAML has it (defaults.yaml in 6 ms instead of
    50 ms; same safe constructor, so the same data), else — and for the error message of a broken
    file — by :func:`_parse_yaml`."""
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is not None:
        try:
            return yaml.load(text, Loader=loader)
        except yaml.YAMLError:
            pass
    return _parse_yaml(text, file)


def _check_top_level(data: Any, file: str) -> None:
    if not isinstance(data, dict):
        raise InputError(
            "the catalog must be a mapping of sections",
            file=file,
            field="(top level)",
            value=type(data).__name__,
            allowed=", ".join(_TOP_LEVEL),
        )
    for key in data:
        if key not in _TOP_LEVEL:
            raise InputError("unknown section", file=file, field=str(key), allowed=", ".join(_TOP_LEVEL))
    version = data.get("schema_version", 1)
    if version != 1 or isinstance(version, bool):
        raise InputError(
            "unsupported schema_version", file=file, field="schema_version", value=version, allowed="1"
        )


def _sources(data: dict[str, Any], file: str) -> dict[str, str]:
    raw = data.get("sources") or {}
    if not isinstance(raw, dict):
        raise InputError(
            "sources must be a mapping of tag to description",
            file=file,
            field="sources",
            allowed='e.g. {Q1: "our vendor quote, 2026-11"}',
        )
    out = {}
    for tag, text in raw.items():
        if not isinstance(text, str) or not text:
            raise InputError(
                "a source must be a non-empty text",
                file=file,
                field=f"sources.{tag}",
                value=text,
                allowed="text: URL — what was read",
            )
        out[str(tag)] = text
    return out


def _section_entries(raw: Any, section: str, file: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, fields) per entry; a section is a list of records with ``id`` or a mapping id → fields."""
    if isinstance(raw, dict):
        items: list[tuple[str, Any]] = []
        for rid, fields in raw.items():
            if fields is None:
                fields = {}
            if not isinstance(fields, dict):
                raise InputError(
                    "a record must be a mapping of fields",
                    file=file,
                    field=f"{section}[{rid}]",
                    allowed="field: value pairs",
                )
            items.append((str(rid), {"id": rid, **fields}))
        entries: Iterable[tuple[str, Any]] = items
    elif isinstance(raw, list):
        entries = ((str(i), e) for i, e in enumerate(raw))
    else:
        raise InputError(
            f"{section} must be a list of records",
            file=file,
            field=section,
            value=type(raw).__name__,
            allowed=f"a list like [{{id: ..., ...}}] under {section}",
        )
    for label, entry in entries:
        if not isinstance(entry, dict):
            raise InputError(
                "a record must be a mapping of fields",
                file=file,
                field=f"{section}[{label}]",
                allowed="field: value pairs including id",
            )
        rid = entry.get("id")
        if not isinstance(rid, str) or not rid:
            raise InputError(
                "a record needs an id",
                file=file,
                field=f"{section}[{label}].id",
                value=rid,
                allowed="a lowercase id such as qm9700",
            )
        yield rid, entry


def _describe(annotation: Any) -> str:
    """Human words for a field's type: 'a number', 'an integer or null', 'one of: a, b'."""
    args = get_args(annotation)
    if get_origin(annotation) is Literal:
        return "one of: " + ", ".join(str(a) for a in args)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return " or ".join(_describe(a) for a in rest) + " or null"
    if args and get_origin(annotation) not in (tuple, list):
        return " or ".join(_describe(a) for a in args)
    return {int: "an integer", float: "a number", str: "text", bool: "true or false"}.get(
        annotation, "a list of {ports, rate_gbps}" if get_origin(annotation) is tuple else str(annotation)
    )


def _allowed_for(cls: type[BaseModel], err: dict[str, Any], new: bool) -> str:
    loc = err["loc"]
    kind = err["type"]
    fields = cls.model_fields
    if kind == "extra_forbidden":
        model = PortMode if len(loc) > 1 and loc[0] == "port_modes" else cls
        prefixes = getattr(model, "PROVENANCE", ())
        prov = {f"{p}_{s}" for p in prefixes for s in ("source", "confidence", "basis")}
        core = [n for n in model.model_fields if n not in prov]
        close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
        text = f"did you mean {close[0]}? " if close else ""
        text += "fields: " + ", ".join(core)
        if prefixes:
            text += f"; per-field provenance <field>_source / _confidence / _basis for {', '.join(prefixes)}"
        return text
    if kind == "missing":
        if len(loc) > 1 and loc[0] == "port_modes":
            return "each port mode needs: " + ", ".join(PortMode.model_fields)
        required = [n for n, f in fields.items() if f.is_required() and n not in ("id", "confidence")]
        return f"required for a new record: {', '.join(required)}" if new else ", ".join(required)
    ctx = err.get("ctx") or {}
    if kind in ("greater_than_equal", "greater_than"):
        op = "≥" if kind == "greater_than_equal" else ">"
        bound = ctx.get("ge", ctx.get("gt"))
        return f"a number {op} {bound:g}" if isinstance(bound, int | float) else f"a number {op} {bound}"
    if kind == "literal_error":
        return str(ctx.get("expected", ""))
    if kind == "string_pattern_mismatch":
        return "lowercase letters, digits, '.', '_' or '-' (e.g. qm9700)"
    if loc and loc[0] in fields:
        return _describe(fields[loc[0]].annotation)
    return ""


def _validate(
    cls: type[_Record],
    data: dict[str, Any],
    section: str,
    rid: str,
    file: str,
    errors: list[InputError],
    *,
    new: bool,
) -> _Record | None:
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            path = f"{section}[{rid}]" + "".join(
                f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]
            )
            value = None if err["type"] in ("missing", "value_error") else err.get("input")
            msg = err["msg"]
            if err["type"] == "value_error":
                msg = msg.removeprefix("Value error, ")
            elif err["type"] == "missing":
                msg = "missing required field"
            elif err["type"] == "extra_forbidden":
                msg = "unknown field"
            errors.append(
                InputError(
                    msg[0].lower() + msg[1:],
                    file=file,
                    field=path,
                    value=value,
                    allowed=_allowed_for(cls, err, new) or None,
                )
            )
        return None


def _raise(errors: list[InputError]) -> None:
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise InputErrors(errors)


# --------------------------------------------------------------------------------------------
# Defaults
# --------------------------------------------------------------------------------------------
def _is_leaf(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node


@functools.lru_cache(maxsize=1)
def _defaults() -> dict[str, Any]:
    data = _parse_packaged(_resource_text("defaults.yaml"), PACKAGED_DEFAULTS)
    if not isinstance(data, dict):
        raise InputError("defaults must be a mapping", file=PACKAGED_DEFAULTS, field="(top level)")
    return data


def load_defaults() -> dict[str, Any]:
    """The sourced defaults (a fresh copy): nested sections whose leaves are
    ``{value, unit, source, confidence, basis?, note?}``; ``sources`` maps tags to URLs."""
    return copy.deepcopy(_defaults())


def _walk_defaults(path: str) -> tuple[Any, bool]:
    """The node at a dotted ``path`` and whether it lies inside a leaf's value."""
    node: Any = _defaults()
    inside_value = False
    keys = path.split(".")
    for i, key in enumerate(keys):
        if not inside_value and _is_leaf(node):
            node, inside_value = node["value"], True
        if not isinstance(node, dict) or key not in _keys(node):
            allowed = ", ".join(str(k) for k in node) if isinstance(node, dict) else None
            raise InputError("unknown default", field=path, value=".".join(keys[: i + 1]), allowed=allowed)
        node = node[_keys(node)[key]]
    return node, inside_value


def _keys(node: dict[Any, Any]) -> dict[str, Any]:
    """String form of each key → the key itself (YAML may give int keys such as 400)."""
    return {str(k): k for k in node}


def default_leaf(path: str) -> dict[str, Any]:
    """The whole leaf ``{value, unit, source, confidence, ...}`` at a dotted ``path``."""
    node, inside_value = _walk_defaults(path)
    if inside_value or not _is_leaf(node):
        raise InputError(
            "not a default leaf",
            field=path,
            allowed="a path ending at a {value, unit, source, confidence} entry",
        )
    return copy.deepcopy(node)


def default_value(path: str) -> Any:
    """The ``value`` at a dotted path, e.g. ``default_value("dcqcn.nvidia-firmware.rate_ai")`` → 5.

    A path may continue into a leaf's value mapping: ``"nccl.hw_latency.net.ring.simple"`` → 14.0.
    A path ending at a section (not a single default) is an InputError listing what is inside.
    """
    node, inside_value = _walk_defaults(path)
    if not inside_value and _is_leaf(node):
        return copy.deepcopy(node["value"])
    if not inside_value and isinstance(node, dict) and path.split(".")[0] != "sources":
        raise InputError(
            "not a single default (a section)", field=path, allowed=", ".join(f"{path}.{k}" for k in node)
        )
    return copy.deepcopy(node)


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------
_NET_COLUMNS = [
    "id",
    "kind",
    "name",
    "technology",
    "ports",
    "rate_gbps",
    "price_usd",
    "price_low_usd",
    "price_high_usd",
    "price_usd_per_m",
    "price_confidence",
    "price_date",
    "power_w",
    "source",
]
_GPU_COLUMNS = [
    "id",
    "kind",
    "name",
    "bf16_tflops",
    "nvlink_gbytes_per_s",
    "hbm_gbytes",
    "power_w",
    "gpus_per_node",
    "scale_up_gpus",
    "nics_per_node",
    "nic_rate_gbps",
    "server_price_usd",
    "source",
]


def _row(kind: str, record: _Record) -> dict[str, Any]:
    row: dict[str, Any] = {"id": record.id, "kind": kind, "name": record.name, "source": record.source}
    if isinstance(record, GpuSpec):
        row.update(
            bf16_tflops=record.bf16_tflops,
            nvlink_gbytes_per_s=record.nvlink_gbytes_per_s,
            hbm_gbytes=record.hbm_gbytes,
            power_w=record.tdp_w,
            gpus_per_node=record.gpus_per_node,
            scale_up_gpus=record.scale_up_gpus,
            nics_per_node=record.nics_per_node,
            nic_rate_gbps=record.nic_rate_gbps,
            server_price_usd=record.price_usd,
        )
        return row
    technology = getattr(record, "technology", None)
    if isinstance(record, CableSpec):
        technology = record.kind
    row.update(
        technology=technology,
        ports=getattr(record, "ports", None),
        rate_gbps=getattr(record, "rate_gbps", None),
        price_usd=getattr(record, "price_usd", None),
        price_low_usd=price_range_usd(record)[0],
        price_high_usd=price_range_usd(record)[1],
        price_usd_per_m=getattr(record, "price_usd_per_m", None),
        price_confidence=_field_provenance(record, "price")[1],
        price_date=getattr(record, "price_date", None),
        power_w=record.power_w,  # type: ignore[attr-defined]
    )
    return row


def catalog_frame(catalog: Catalog, kind: str | None = None) -> pd.DataFrame:
    """A table of the catalog (one kind, or all): units in column names, one row per record.

    Columns: id, kind, name, technology, ports, rate_gbps, price_usd (the point used by default),
    price_low_usd, price_high_usd (the range; equal when one sourced price), (price_usd_per_m for
    cables), price_confidence (``input`` = no public price), price_date, power_w, source; for
    GPUs bf16_tflops, nvlink_gbytes_per_s, hbm_gbytes, power_w (= TDP), gpus_per_node,
    scale_up_gpus, nics_per_node, nic_rate_gbps and server_price_usd (one node). For cables
    ``technology`` holds the cable kind (dac, aoc, mmf, smf).
    """
    import pandas as pd  # noqa: F811 - imported lazily: pandas is slow to import

    kinds = list(KINDS) if kind is None else [kind]
    for k in kinds:
        catalog.section(k)  # validates the kind
    rows = [_row(k, r) for k in kinds for r in catalog.section(k).values()]
    if kind == "gpu":
        columns = _GPU_COLUMNS
    else:
        columns = [c for c in _NET_COLUMNS if c != "price_usd_per_m" or kind in (None, "cable")]
        if kind is None:
            columns += [c for c in _GPU_COLUMNS if c not in columns]
    frame = pd.DataFrame(rows, columns=columns)
    for column in ("ports", "rate_gbps"):
        if column in frame:
            frame[column] = frame[column].astype("Int64")
    return frame
