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

Confidence words: ``high``, ``medium``, ``low`` (research grades H/M/L), ``derived`` (arithmetic
on cited inputs), ``estimate`` (no source; the ``basis`` says how the number was made) and
``user`` (given in a user catalog file).
"""

from __future__ import annotations

import copy
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

Confidence = Literal["high", "medium", "low", "derived", "estimate", "user"]
CONFIDENCES: tuple[str, ...] = get_args(Confidence)
Technology = Literal["infiniband", "ethernet"]
FormFactor = Literal["OSFP", "QSFP112", "QSFP-DD"]

PACKAGED_CATALOG = "aifabric/data/catalog.yaml"
PACKAGED_DEFAULTS = "aifabric/data/defaults.yaml"
_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------
class _Record(BaseModel):
    """Fields every catalog record has."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: provenance prefixes this kind accepts (``price`` → ``price_source`` / ``_confidence`` / ``_basis``)
    PROVENANCE: ClassVar[tuple[str, ...]] = ()

    id: str = Field(pattern=_ID_PATTERN)
    name: str = Field(min_length=1)
    source: str | None = None
    confidence: Confidence
    basis: str | None = None
    notes: str | None = None

    @model_validator(mode="after")
    def _estimates_have_a_basis(self) -> _Record:
        if self.confidence == "estimate" and not self.basis:
            raise ValueError("confidence 'estimate' needs a basis saying how the numbers were made")
        for prefix in self.PROVENANCE:
            if getattr(self, f"{prefix}_confidence") == "estimate" and not getattr(self, f"{prefix}_basis"):
                raise ValueError(
                    f"{prefix}_confidence 'estimate' needs {prefix}_basis saying how it was derived"
                )
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


class PortMode(BaseModel):
    """One supported breakout of a switch: ``ports`` ports at ``rate_gbps``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ports: int = Field(gt=0)
    rate_gbps: int = Field(gt=0)


_SWITCH_PROV = (
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


class SwitchSpec(_with_provenance(*_SWITCH_PROV)):
    """A switch: ``ports`` × ``port_rate_gbps`` in its default mode; ``power_w`` without optics."""

    vendor: str
    technology: Technology
    ports: int = Field(gt=0)
    port_rate_gbps: int = Field(gt=0)
    port_modes: tuple[PortMode, ...] = ()
    cages: int | None = Field(default=None, gt=0)
    ports_per_cage: int | None = Field(default=None, gt=0)
    latency_ns: float | None = Field(default=None, ge=0)
    buffer_bytes: int | None = Field(default=None, ge=0)
    power_w: float = Field(ge=0)
    price_usd: float = Field(ge=0)
    adaptive_routing: bool | None = None
    in_network_reduction: str | None = None

    @property
    def rate_gbps(self) -> int:
        return self.port_rate_gbps


class NicSpec(_with_provenance("ports", "power", "price")):
    """A host adapter (NIC) without optics."""

    vendor: str | None = None
    technology: Technology
    ports: int = Field(gt=0)
    port_rate_gbps: int = Field(gt=0)
    host_interface: str | None = None
    form_factor: FormFactor | None = None
    power_w: float = Field(ge=0)
    price_usd: float = Field(ge=0)

    @property
    def rate_gbps(self) -> int:
        return self.port_rate_gbps


class OpticSpec(_with_provenance("reach", "power", "price")):
    """A transceiver module; ``ports`` = 2 for twin-port modules (``rate_gbps`` is the module total)."""

    form_factor: FormFactor
    rate_gbps: int = Field(gt=0)
    ports: int = Field(gt=0)
    port_rate_gbps: int = Field(gt=0)
    media: Literal["mmf", "smf"]
    reach_m: float = Field(gt=0)
    side: Literal["switch", "nic", "any"]
    technology: Literal["any", "infiniband", "ethernet"]
    power_w: float = Field(ge=0)
    price_usd: float = Field(ge=0)


class CableSpec(_with_provenance("max_reach", "delay", "power", "price", "price_per_m")):
    """A cable; its price is ``price_usd + price_usd_per_m × length``. ``rate_gbps`` None = any rate."""

    kind: Literal["dac", "aoc", "mmf", "smf"]
    max_reach_m: float | None = Field(default=None, gt=0)
    rate_gbps: int | None = Field(default=None, gt=0)
    delay_ns_per_m: float = Field(gt=0)
    power_w: float = Field(ge=0)
    price_usd: float = Field(ge=0)
    price_usd_per_m: float = Field(ge=0)

    def price_for_length(self, length_m: float) -> float:
        """Price in USD of one cable of ``length_m`` metres."""
        return self.price_usd + self.price_usd_per_m * length_m


class GpuSpec(
    _with_provenance(
        "bf16", "fp8", "hbm", "nvlink", "nvlink_latency", "tdp", "gpus_per_node", "nics_per_node"
    )
):
    """A GPU: dense TFLOPS, HBM, NVLink bandwidth per direction, and the node it ships in."""

    vendor: str | None = None
    bf16_tflops: float = Field(gt=0)
    fp8_tflops: float | None = Field(default=None, gt=0)
    hbm_gbytes: float = Field(gt=0)
    hbm_tbytes_per_s: float = Field(gt=0)
    nvlink_gbytes_per_s: float = Field(gt=0)
    nvlink_latency_us: float | None = Field(default=None, ge=0)
    tdp_w: float = Field(gt=0)
    gpus_per_node: int = Field(gt=0)
    nics_per_node: int = Field(gt=0)


#: catalog kind (what users type) → (YAML section, record class)
KINDS: dict[str, tuple[str, type[_Record]]] = {
    "switch": ("switches", SwitchSpec),
    "nic": ("nics", NicSpec),
    "optic": ("optics", OpticSpec),
    "cable": ("cables", CableSpec),
    "gpu": ("gpus", GpuSpec),
}
_SECTION_KIND = {section: kind for kind, (section, _cls) in KINDS.items()}
_TOP_LEVEL = ("schema_version", "sources", *(_SECTION_KIND))

#: value field → provenance prefix (a prefix also names itself)
_FIELD_PREFIX = {
    "price_usd": "price",
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
    """True when ``field`` of ``record`` (``price``, ``power``, ``price_usd``, ...) is an estimate."""
    return _field_provenance(record, field)[1] == "estimate"


def provenance(record: _Record, field: str) -> str:
    """Short human string: ``"S60 (low): midpoint of …"`` or ``"estimate: IB NIC × 0.7 …"``."""
    src, conf, basis = _field_provenance(record, field)
    if conf == "estimate":
        text = f"estimate: {basis}" if basis else "estimate"
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
        """Every (kind, id, field) whose value is an estimate, with its basis, for reports."""
        rows = []
        for kind, record in self.records():
            for field in fields:
                if field in record.PROVENANCE and is_estimate(record, field):
                    rows.append(
                        {
                            "kind": kind,
                            "id": record.id,
                            "field": field,
                            "basis": _field_provenance(record, field)[2] or "",
                        }
                    )
        return rows


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
    _raise(errors)
    return _freeze(sections, _sources(data, PACKAGED_CATALOG), (PACKAGED_CATALOG,))


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
    try:
        text = Path(override).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(
            f"cannot read catalog file: {reason}",
            file=file,
            field="catalog",
            allowed="a readable UTF-8 YAML file",
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
    _raise(errors)
    return _freeze(sections, sources, (*base.files, file))


def _freeze(
    sections: dict[str, dict[str, _Record]], sources: dict[str, str], files: tuple[str, ...]
) -> Catalog:
    return Catalog(
        **{name: MappingProxyType(recs) for name, recs in sections.items()},
        sources=MappingProxyType(sources),
        files=files,
    )


def _merge(record: _Record, entry: dict[str, Any], file: str) -> dict[str, Any]:
    """``record`` updated by the user's ``entry``; changed fields get user provenance."""
    merged = record.model_dump()
    merged.update(entry)
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
    try:
        return yaml.safe_load(text)
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
    "price_usd_per_m",
    "price_confidence",
    "power_w",
    "source",
]
_GPU_COLUMNS = ["id", "kind", "name", "bf16_tflops", "nvlink_gbytes_per_s", "hbm_gbytes", "power_w", "source"]


def _row(kind: str, record: _Record) -> dict[str, Any]:
    row: dict[str, Any] = {"id": record.id, "kind": kind, "name": record.name, "source": record.source}
    if isinstance(record, GpuSpec):
        row.update(
            bf16_tflops=record.bf16_tflops,
            nvlink_gbytes_per_s=record.nvlink_gbytes_per_s,
            hbm_gbytes=record.hbm_gbytes,
            power_w=record.tdp_w,
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
        price_usd_per_m=getattr(record, "price_usd_per_m", None),
        price_confidence=_field_provenance(record, "price")[1],
        power_w=record.power_w,  # type: ignore[attr-defined]
    )
    return row


def catalog_frame(catalog: Catalog, kind: str | None = None) -> pd.DataFrame:
    """A table of the catalog (one kind, or all): units in column names, one row per record.

    Columns: id, kind, name, technology, ports, rate_gbps, price_usd, (price_usd_per_m for cables),
    price_confidence, power_w, source; for GPUs bf16_tflops, nvlink_gbytes_per_s, hbm_gbytes and
    power_w (= TDP). For cables ``technology`` holds the cable kind (dac, aoc, mmf, smf).
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
