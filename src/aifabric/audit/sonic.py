"""SONiC CONFIG_DB parsers → one normalised model per switch (:class:`Device`).

Accepts the three serialisation forms of formats.md §1.0 and mixes of them:

1. nested ``config_db.json`` (``{"BUFFER_PROFILE": {"name": {...}}}``);
2. the flat redis-dump form (``{"BUFFER_PG|Ethernet0|3-4": {...}}``), with or without the
   ``{"type": "hash", "value": {...}}`` wrapper that ``redis-dump`` writes;
3. the pre-3.0 reference syntax ``[BUFFER_PROFILE|name]`` / ``[BUFFER_PROFILE_TABLE:name]`` and
   lists of them, normalised to plain names (``"a,b"``).

Keys with port lists and index ranges (``"Ethernet0,Ethernet4|3-4"``) are expanded by the
accessors of :class:`Device`. ``pg_profile_lookup.ini`` (formats.md §1.13) is read by
:func:`read_pg_lookup`.

Bad input never raises out of :func:`load_device`: every problem becomes one
:class:`~aifabric.errors.InputError` line naming the file, ``TABLE|key`` and field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from aifabric.errors import InputError

Tables = dict[str, dict[str, dict[str, str]]]

_REF = re.compile(r"^\[([A-Z0-9_]+)[|:]([^\]]*)\]$")
_PRIO_LIST = re.compile(r"^([0-7](,[0-7])*)?$")
_CABLE = re.compile(r"^[0-9]+m$")
_INT = re.compile(r"^-?[0-9]+$")

# Fields whose value must be a decimal integer string, per table (YANG types, formats.md §1).
_INT_FIELDS: dict[str, tuple[str, ...]] = {
    "PORT": ("speed", "mtu"),
    "BUFFER_POOL": ("size", "xoff"),
    "BUFFER_PROFILE": ("size", "xon", "xoff", "xon_offset", "dynamic_th", "static_th"),
    "WRED_PROFILE": tuple(
        f"{c}_{k}"
        for c in ("green", "yellow", "red")
        for k in ("min_threshold", "max_threshold", "drop_probability")
    ),
    "PFC_WD": ("detection_time", "restoration_time", "POLL_INTERVAL"),
    "SCHEDULER": ("weight", "priority"),
}
# Value ranges of integer fields (SONiC YANG, formats.md §1.1, §1.4, §1.5): a value outside is an
# invalid file (exit 2), not a finding. Byte counts are uint64 (≥ 0); dynamic_th is the exponent
# of alpha = 2^n, YANG range -8..7; a port's speed is 1..1600000 Mb/s and its MTU 68..9216 B.
_RANGES: dict[tuple[str, str], tuple[int, int | None]] = {
    ("PORT", "speed"): (1, 1_600_000),
    ("PORT", "mtu"): (68, 9216),
    ("BUFFER_POOL", "size"): (0, None),
    ("BUFFER_POOL", "xoff"): (0, None),
    **{("BUFFER_PROFILE", f): (0, None) for f in ("size", "xon", "xoff", "xon_offset", "static_th")},
    ("BUFFER_PROFILE", "dynamic_th"): (-8, 7),
    **{
        ("WRED_PROFILE", f"{c}_{k}"): (
            0,
            None,
        )  # a probability above 100 % is the wred-probability-range finding
        for c in ("green", "yellow", "red")
        for k in ("min_threshold", "max_threshold", "drop_probability")
    },
    **{("PFC_WD", f): (0, None) for f in ("detection_time", "restoration_time", "POLL_INTERVAL")},
}
# Tables keyed PORT[,PORT...]|INDEX[-INDEX]: the index (priority group, queue) is 0..15
_INDEXED = ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE")
_WRAPPER_KEYS = {"type", "value", "ttl", "expireat"}
_MAP_TABLES = (
    "DSCP_TO_TC_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    "DOT1P_TO_TC_MAP",
)
# Tables the audit reads; entries of other tables are kept but not type-checked.
USED_TABLES = (
    "PORT",
    "DEVICE_METADATA",
    "CABLE_LENGTH",
    "BUFFER_POOL",
    "BUFFER_PROFILE",
    "BUFFER_PG",
    "BUFFER_QUEUE",
    "PORT_QOS_MAP",
    "QUEUE",
    "SCHEDULER",
    "WRED_PROFILE",
    "PFC_WD",
    "DEVICE_NEIGHBOR",
    "VERSIONS",
    "LOSSLESS_TRAFFIC_PATTERN",
    *_MAP_TABLES,
)


def _norm_ref(value: str) -> str:
    """``[BUFFER_PROFILE|a],[BUFFER_PROFILE|b]`` → ``a,b``; plain names unchanged."""
    if "[" not in value:
        return value
    parts = [p.strip() for p in value.split(",")]
    out = []
    for p in parts:
        m = _REF.match(p)
        out.append(m.group(2) if m else p)
    return ",".join(out)


def _expand_index(spec: str) -> list[int] | None:
    """``"3-4"`` → [3, 4]; ``"0"`` → [0]; None when not an index or range."""
    m = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", spec.strip())
    if not m:
        return None
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    if hi < lo or hi - lo > 64:
        return None
    return list(range(lo, hi + 1))


def parse_prio_list(text: str) -> tuple[int, ...]:
    """``"3,4"`` → (3, 4); the caller has validated it against ``[0-7](,[0-7])*``."""
    return tuple(sorted({int(x) for x in text.split(",") if x.strip()}))


# ---------------------------------------------------------------------------------------------
# pg_profile_lookup.ini
@dataclass(frozen=True)
class LookupRow:
    speed: str  # Mb/s as a string, must equal PORT.speed (formats.md §1.13)
    cable: str  # e.g. "5m", must equal the CABLE_LENGTH string
    size_bytes: int
    xon_bytes: int
    xoff_bytes: int
    threshold: int  # becomes dynamic_th (or static_th when the pool is static)
    xon_offset_bytes: int | None = None

    def profile(self) -> dict[str, str]:
        """The BUFFER_PROFILE fields buffermgrd writes for this row (no pool), as CONFIG_DB strings."""
        prof = {
            "size": str(self.size_bytes),
            "xon": str(self.xon_bytes),
            "xoff": str(self.xoff_bytes),
            "dynamic_th": str(self.threshold),
        }
        if self.xon_offset_bytes is not None:
            prof["xon_offset"] = str(self.xon_offset_bytes)
        return prof


@dataclass(frozen=True)
class PgLookup:
    file: str
    rows: dict[tuple[str, str], LookupRow]

    def get(self, speed: str, cable: str) -> LookupRow | None:
        return self.rows.get((speed, cable))


def read_pg_lookup(path: str | Path, text: str | None = None) -> PgLookup:
    """Parse ``pg_profile_lookup.ini`` (buffermgr.cpp readPgProfileLookupFile): ``#`` comments,
    whitespace columns ``speed cable size xon xoff threshold [xon_offset]``. Raises InputError."""
    f = str(path)
    if text is None:
        from aifabric.memory import read_text

        text = read_text(Path(path), "pg_profile_lookup.ini")  # a regular file (not /dev/zero)
    rows: dict[tuple[str, str], LookupRow] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        cols = s.split()
        allowed = "speed cable size xon xoff threshold [xon_offset], e.g. '100000 5m 1248 1248 96928 0 2496'"
        if len(cols) not in (6, 7):
            raise InputError(
                f"expected 6 or 7 columns, found {len(cols)}",
                file=f,
                field=f"line {lineno}",
                value=s[:60],
                allowed=allowed,
            )
        speed, cable, *nums = cols
        if not speed.isdigit() or not _CABLE.match(cable) or not all(_INT.match(x) for x in nums):
            raise InputError("bad row", file=f, field=f"line {lineno}", value=s[:60], allowed=allowed)
        vals = [int(x) for x in nums]
        if min(vals[:3]) < 0:
            raise InputError("negative size, xon or xoff", file=f, field=f"line {lineno}", value=s[:60])
        rows[(speed, cable)] = LookupRow(
            speed, cable, vals[0], vals[1], vals[2], vals[3], vals[4] if len(vals) == 5 else None
        )
    if not rows:
        raise InputError(
            "no profile rows", file=f, allowed="lines 'speed cable size xon xoff threshold [xon_offset]'"
        )
    return PgLookup(f, rows)


# ---------------------------------------------------------------------------------------------
# CONFIG_DB JSON
def _unwrap(entry):
    if (
        isinstance(entry, dict)
        and set(entry) >= {"type", "value"}
        and set(entry) <= {"type", "value", "ttl", "expireat"}
        and isinstance(entry["value"], dict)
    ):
        return entry["value"]
    return entry


def parse_config_text(text: str, file: str) -> tuple[Tables, list[InputError]]:
    """Parse CONFIG_DB JSON text in any of the three forms → (tables, problems)."""
    problems: list[InputError] = []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, [
            InputError(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", file=file)
        ]
    except RecursionError:
        return {}, [InputError("malformed JSON: nested too deeply", file=file)]
    if not isinstance(data, dict):
        return {}, [
            InputError(
                "top level must be a JSON object of tables",
                file=file,
                value=type(data).__name__,
                allowed='{"TABLE": {"key": {...}}} or {"TABLE|key": {...}}',
            )
        ]
    tables: Tables = {}
    if not data:
        return {}, [
            InputError(
                "an empty CONFIG_DB object: no tables",
                file=file,
                allowed='{"TABLE": {"key": {...}}} or {"TABLE|key": {...}}',
            )
        ]
    for top, body in data.items():
        if (
            isinstance(body, dict)
            and body
            and set(body) <= _WRAPPER_KEYS
            and "type" in body
            and not isinstance(body.get("value"), dict)
        ):
            problems.append(
                InputError(
                    "malformed redis-dump wrapper: 'value' must be an object of fields",
                    file=file,
                    field=top,
                    allowed='{"type": "hash", "value": {"field": "value", ...}}',
                )
            )
            continue
        body = _unwrap(body)
        if "|" in top:  # flat redis-dump form
            table, key = top.split("|", 1)
            if not isinstance(body, dict):
                problems.append(
                    InputError(
                        "entry must be an object of fields", file=file, field=top, value=type(body).__name__
                    )
                )
                continue
            tables.setdefault(table, {})[key] = body
        else:
            if not isinstance(body, dict):
                if top in USED_TABLES:
                    problems.append(
                        InputError(
                            "table must be an object of keys", file=file, field=top, value=type(body).__name__
                        )
                    )
                continue
            tab = tables.setdefault(top, {})
            for key, entry in body.items():
                tab[key] = _unwrap(entry)
    out: Tables = {}
    for table, entries in tables.items():
        used = table in USED_TABLES
        clean: dict[str, dict[str, str]] = {}
        for key, entry in entries.items():
            where = f"{table}|{key}"
            if not isinstance(entry, dict):
                if used:
                    problems.append(
                        InputError(
                            "entry must be an object of fields",
                            file=file,
                            field=where,
                            value=type(entry).__name__,
                        )
                    )
                continue
            fields: dict[str, str] = {}
            for name, val in entry.items():
                if isinstance(val, bool) or not isinstance(val, str | int):
                    if used and table != "CABLE_LENGTH":
                        problems.append(
                            InputError(
                                "field value must be a string",
                                file=file,
                                field=f"{where}|{name}",
                                value=val if not isinstance(val, dict | list) else type(val).__name__,
                                allowed='a string such as "9100"',
                            )
                        )
                        continue
                    if table == "CABLE_LENGTH":
                        problems.append(
                            InputError(
                                "cable length must be a string",
                                file=file,
                                field=f"{where}|{name}",
                                value=val,
                                allowed='"<metres>m", e.g. "5m"',
                            )
                        )
                    continue
                fields[str(name)] = _norm_ref(str(val))
            clean[str(key)] = fields
        out[table] = clean
    problems.extend(_check_types(out, file))
    return out, problems


def _check_ranges(t: Tables, file: str) -> list[InputError]:
    """Integer fields within their YANG range, and index keys (``Ethernet0|3-4``) well formed."""
    probs: list[InputError] = []
    for (table, name), (lo, hi) in _RANGES.items():
        for key, fields in t.get(table, {}).items():
            v = fields.get(name)
            if v is None or not _INT.match(v.strip()):
                continue
            n = int(v)
            if n < lo or (hi is not None and n > hi):
                probs.append(
                    InputError(
                        "out of range",
                        file=file,
                        field=f"{table}|{key}|{name}",
                        value=v,
                        allowed=f"{lo}..{hi}" if hi is not None else f"≥ {lo}",
                    )
                )
    for table in _INDEXED:
        for key in t.get(table, {}):
            ports, _, idx = key.rpartition("|")
            m = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", idx.strip())
            lo_i = int(m.group(1)) if m else -1
            hi_i = int(m.group(2)) if m and m.group(2) else lo_i
            if not ports or not m or hi_i < lo_i or hi_i > 15:
                probs.append(
                    InputError(
                        "bad key: expected PORT[,PORT...]|INDEX or |LOW-HIGH",
                        file=file,
                        field=f"{table}|{key}",
                        allowed="indices 0..15, LOW ≤ HIGH, e.g. Ethernet0|3-4",
                    )
                )
    return probs


def _check_types(t: Tables, file: str) -> list[InputError]:
    probs: list[InputError] = []
    for table, names in _INT_FIELDS.items():
        for key, fields in t.get(table, {}).items():
            for name in names:
                v = fields.get(name)
                if v is not None and not _INT.match(v.strip()):
                    probs.append(
                        InputError(
                            "not an integer",
                            file=file,
                            field=f"{table}|{key}|{name}",
                            value=v,
                            allowed="a decimal integer string (bytes, Mb/s, ms or percent)",
                        )
                    )
    probs.extend(_check_ranges(t, file))
    for key, fields in t.get("CABLE_LENGTH", {}).items():
        for port, v in fields.items():
            if not _CABLE.match(v.strip()):
                probs.append(
                    InputError(
                        "bad cable length",
                        file=file,
                        field=f"CABLE_LENGTH|{key}|{port}",
                        value=v,
                        allowed='"<metres>m", e.g. "5m" or "300m"',
                    )
                )
    for key, fields in t.get("PORT_QOS_MAP", {}).items():
        for name in ("pfc_enable", "pfcwd_sw_enable"):
            v = fields.get(name)
            if v is not None and not _PRIO_LIST.match(v.replace(" ", "")):
                probs.append(
                    InputError(
                        "bad priority list",
                        file=file,
                        field=f"PORT_QOS_MAP|{key}|{name}",
                        value=v,
                        allowed='comma-separated priorities 0-7, e.g. "3,4"',
                    )
                )
    for table in _MAP_TABLES:
        for key, fields in t.get(table, {}).items():
            top = 63 if table == "DSCP_TO_TC_MAP" else 7
            for k, v in fields.items():
                if not (k.isdigit() and int(k) <= top and v.isdigit() and int(v) <= 15):
                    probs.append(
                        InputError(
                            "bad map entry",
                            file=file,
                            field=f"{table}|{key}|{k}",
                            value=v,
                            allowed=f"keys 0..{top} mapped to a class 0..15",
                        )
                    )
    return probs


def load_config(path: str | Path) -> tuple[Tables, list[InputError]]:
    """Read one CONFIG_DB JSON file → (tables, problems); never raises for bad content."""
    from aifabric.memory import read_text

    f = str(path)
    if not Path(path).exists():
        return {}, [InputError("no such file", file=f)]
    try:  # a regular file (not /dev/zero) that fits in memory, UTF-8
        text = read_text(Path(path), "switch config", bytes_per_byte=40)
    except InputError as exc:
        return {}, [exc.with_file(f)]
    return parse_config_text(text, f)


# ---------------------------------------------------------------------------------------------
# The normalised device
@dataclass
class Device:
    """One switch: merged CONFIG_DB tables of its files, plus an optional pg_profile_lookup."""

    name: str
    files: list[str]
    tables: Tables
    lookup: PgLookup | None = None
    key_file: dict[str, str] = field(default_factory=dict)  # "TABLE|key" -> file it came from
    dialect: str = "sonic"  # sonic | nvue | eos: NVUE and EOS configs are translated into these tables
    # TABLE → how the dialect names that object: a format string with {key} (and {idx} for
    # port|index keys); findings on non-SONiC switches are renamed with it.
    native: dict[str, str] = field(default_factory=dict)
    # memo of the derived per-port views below; the tables are not changed after loading
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def native_object(self, obj: str) -> str:
        """A finding's ``TABLE|key[|idx]`` object in this switch's own configuration language."""
        parts = obj.split("|")
        fmt = self.native.get(parts[0])
        if not fmt or self.dialect == "sonic":
            return obj
        key = parts[1] if len(parts) > 1 else ""
        idx = parts[2] if len(parts) > 2 else ""
        return fmt.format(key=key, idx=idx)

    # ---- metadata -----------------------------------------------------------------------------
    def table(self, name: str) -> dict[str, dict[str, str]]:
        return self.tables.get(name, {})

    def has(self, name: str) -> bool:
        return bool(self.tables.get(name))

    @property
    def metadata(self) -> dict[str, str]:
        return self.table("DEVICE_METADATA").get("localhost", {})

    @property
    def hwsku(self) -> str:
        return self.metadata.get("hwsku", "")

    @property
    def platform(self) -> str:
        return self.metadata.get("platform", "")

    @property
    def role(self) -> str:
        return self.metadata.get("type", "") or "unknown"

    @property
    def vendor(self) -> str:
        """``mellanox`` | ``broadcom`` | ``unknown`` — from platform/hwsku (formats.md §1.5)."""
        text = f"{self.platform} {self.hwsku}".lower()
        if "mlnx" in text or "nvidia" in text or "mellanox" in text:
            return "mellanox"
        if any(v in text for v in ("arista", "dell", "celestica", "broadcom", "accton", "quanta", "_bcm")):
            return "broadcom"
        return "unknown"

    @property
    def asic(self) -> str | None:
        """Mellanox Spectrum generation from the platform string (x86_64-mlnx_msn2700-r0 → spectrum-1)."""
        m = re.search(r"(?:mlnx_msn|nvidia_sn|mlnx_sn)(\d)", self.platform.lower())
        if not m:
            return None
        return {
            "2": "spectrum-1",
            "3": "spectrum-2",
            "4": "spectrum-3",
            "5": "spectrum-4",
            "6": "spectrum-6",
        }.get(m.group(1))

    # ---- ports -----------------------------------------------------------------------------
    def port(self, name: str) -> dict[str, str]:
        return self.table("PORT").get(name, {})

    def port_speed(self, name: str) -> str | None:
        return self.port(name).get("speed")

    def port_mtu(self, name: str) -> int | None:
        v = self.port(name).get("mtu")
        return int(v) if v is not None else None

    def cable(self, port: str) -> str | None:
        for fields in self.table("CABLE_LENGTH").values():
            if port in fields:
                return fields[port]
        return None

    def qos_ports(self) -> dict[str, dict[str, str]]:
        """PORT_QOS_MAP expanded per port (comma-separated keys split; ``global`` left out). Read-only."""
        memo = self._memo.get("qos_ports")
        if memo is not None:
            return memo
        out: dict[str, dict[str, str]] = {}
        for key, fields in self.table("PORT_QOS_MAP").items():
            if key == "global":
                continue
            for p in key.split(","):
                out.setdefault(p.strip(), {}).update(fields)
        self._memo["qos_ports"] = out
        return out

    def lossless(self, port: str) -> tuple[int, ...]:
        v = self.qos_ports().get(port, {}).get("pfc_enable", "")
        return parse_prio_list(v)

    def lossless_ports(self) -> dict[str, tuple[int, ...]]:
        memo = self._memo.get("lossless_ports")
        if memo is None:
            memo = {
                p: parse_prio_list(f.get("pfc_enable", ""))
                for p, f in self.qos_ports().items()
                if parse_prio_list(f.get("pfc_enable", ""))
            }
            self._memo["lossless_ports"] = memo
        return dict(memo)

    def port_map(self, port: str, kind: str, table: str) -> tuple[str | None, dict[str, str] | None]:
        """The map a port uses (its own PORT_QOS_MAP reference, else ``global``, else ``AZURE`` if
        it is the only one), with its entries."""
        key = ("port_map", port, kind, table)
        if key in self._memo:
            return self._memo[key]
        name = self.qos_ports().get(port, {}).get(kind) or self.table("PORT_QOS_MAP").get("global", {}).get(
            kind
        )
        maps = self.table(table)
        if name is None and len(maps) == 1:
            name = next(iter(maps))
        res = (None, None) if name is None else (name, maps.get(name))
        self._memo[key] = res
        return res

    def _indexed(self, table: str) -> dict[tuple[str, int], tuple[str, dict[str, str]]]:
        memo = self._memo.get(("indexed", table))
        if memo is not None:
            return memo
        out = self._index(table)
        self._memo[("indexed", table)] = out
        return out

    def _index(self, table: str) -> dict[tuple[str, int], tuple[str, dict[str, str]]]:
        out: dict[tuple[str, int], tuple[str, dict[str, str]]] = {}
        for key, fields in self.table(table).items():
            if "|" not in key:
                continue
            ports, idx = key.rsplit("|", 1)
            nums = _expand_index(idx)
            if nums is None:
                continue
            for p in ports.split(","):
                for i in nums:
                    out[(p.strip(), i)] = (key, fields)
        return out

    def buffer_pg(self) -> dict[tuple[str, int], tuple[str, dict[str, str]]]:
        """(port, pg) → (BUFFER_PG key, fields)."""
        return self._indexed("BUFFER_PG")

    def buffer_queue(self) -> dict[tuple[str, int], tuple[str, dict[str, str]]]:
        return self._indexed("BUFFER_QUEUE")

    def queues(self) -> dict[tuple[str, int], tuple[str, dict[str, str]]]:
        return self._indexed("QUEUE")

    def profile(self, name: str | None) -> dict[str, str] | None:
        if not name:
            return None
        return self.table("BUFFER_PROFILE").get(name)

    def file_of(self, table: str, key: str | None = None) -> str:
        return self.key_file.get(f"{table}|{key}") or self.key_file.get(table) or self.files[0]


def _check_refs(dev: Device) -> list[InputError]:
    """References to missing profiles/pools/maps: one line naming file, table and key."""
    probs: list[InputError] = []

    def need(table: str, key: str, fld: str, target: str, names: str) -> None:
        if not dev.has(target):
            return  # the referenced table is in none of this device's files: partial config
        for name in names.split(","):
            name = name.strip()
            if name and name != "NULL" and name not in dev.table(target):
                probs.append(
                    InputError(
                        f"references missing {target} '{name}'",
                        file=dev.file_of(table, key),
                        field=f"{table}|{key}|{fld}",
                        allowed=", ".join(sorted(dev.table(target))[:6]) or None,
                    )
                )

    for table in ("BUFFER_PG", "BUFFER_QUEUE"):
        for key, f in dev.table(table).items():
            if "profile" in f:
                need(table, key, "profile", "BUFFER_PROFILE", f["profile"])
    for table in ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"):
        for key, f in dev.table(table).items():
            if "profile_list" in f:
                need(table, key, "profile_list", "BUFFER_PROFILE", f["profile_list"])
    for key, f in dev.table("BUFFER_PROFILE").items():
        if "pool" in f:
            need("BUFFER_PROFILE", key, "pool", "BUFFER_POOL", f["pool"])
    refs = {
        "dscp_to_tc_map": "DSCP_TO_TC_MAP",
        "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
        "tc_to_queue_map": "TC_TO_QUEUE_MAP",
        "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
        "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    }
    for key, f in dev.table("PORT_QOS_MAP").items():
        for fld, target in refs.items():
            if fld in f:
                need("PORT_QOS_MAP", key, fld, target, f[fld])
    for key, f in dev.table("QUEUE").items():
        if "wred_profile" in f:
            need("QUEUE", key, "wred_profile", "WRED_PROFILE", f["wred_profile"])
        if "scheduler" in f:
            need("QUEUE", key, "scheduler", "SCHEDULER", f["scheduler"])
    probs.extend(_check_ports(dev))
    return probs


def _check_ports(dev: Device) -> list[InputError]:
    """Keys naming a port the PORT table does not have (when the device has a PORT table)."""
    known = dev.table("PORT")
    if not known:
        return []
    probs: list[InputError] = []
    for table in (*_INDEXED, "PORT_QOS_MAP"):
        for key in dev.table(table):
            ports = key.rpartition("|")[0] if table in _INDEXED else key
            if table == "PORT_QOS_MAP" and key == "global":
                continue
            missing = [p.strip() for p in ports.split(",") if p.strip() and p.strip() not in known]
            if missing:
                probs.append(
                    InputError(
                        f"port {missing[0]} is not in the PORT table",
                        file=dev.file_of(table, key),
                        field=f"{table}|{key}",
                        allowed="ports of the PORT table, e.g. " + ", ".join(sorted(known)[:3]),
                    )
                )
    return probs


def load_device(
    paths: list[str | Path], lookup_paths: list[str | Path] = ()
) -> tuple[Device | None, list[InputError]]:
    """Merge the CONFIG_DB files of one switch (and its pg_profile_lookup.ini) into a Device.

    Returns ``(None, problems)`` when any file of the device has a problem: the lines name file,
    ``TABLE|key`` and field; the caller goes on with the other devices.
    """
    problems: list[InputError] = []
    merged: Tables = {}
    key_file: dict[str, str] = {}
    files = [str(p) for p in paths]
    for p in paths:
        tables, probs = load_config(p)
        problems.extend(probs)
        for t, entries in tables.items():
            key_file.setdefault(t, str(p))
            tab = merged.setdefault(t, {})
            for k, v in entries.items():
                tab.setdefault(k, {}).update(v)
                key_file[f"{t}|{k}"] = str(p)
    lookup = None
    for lp in lookup_paths:
        try:
            lookup = read_pg_lookup(lp)
        except InputError as exc:
            problems.append(exc)
        files.append(str(lp))
    if problems:
        return None, problems
    host = merged.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname")
    name = host or Path(files[0]).stem
    dev = Device(name=name, files=files, tables=merged, lookup=lookup, key_file=key_file)
    problems = _check_refs(dev)
    if problems:
        return None, problems
    return dev, []
