"""Units, parsed once at the edge: sizes → bytes, rates → bit/s, times → picoseconds (all ``int``).

Sizes accept B, KB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024); rates
bps, Kbps, Mbps, Gbps, Tbps (also ``Gb/s``); times ps, ns, us (or µs), ms, s. A bare number is
taken in the base unit (bytes, bit/s, picoseconds) only where a caller allows it.

Integer picoseconds keep 400/800 Gb/s serialisation exact: one byte at 800 Gb/s is 10 ps.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

SIZE_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
RATE_UNITS = {
    "bps": 1,
    "kbps": 10**3,
    "mbps": 10**6,
    "gbps": 10**9,
    "tbps": 10**12,
    "b/s": 1,
    "kb/s": 10**3,
    "mb/s": 10**6,
    "gb/s": 10**9,
    "tb/s": 10**12,
    "k": 10**3,  # 400G, as switch and NIC data sheets write port speeds
    "m": 10**6,
    "g": 10**9,
    "t": 10**12,
}
TIME_UNITS_PS = {"ps": 1, "ns": 10**3, "us": 10**6, "µs": 10**6, "ms": 10**9, "s": 10**12}

SIZE_ALLOWED = "a number with B, KB, MB, GB, KiB, MiB or GiB, e.g. 4000B or 32MiB"
RATE_ALLOWED = "a number with bps, Kbps, Mbps, Gbps or Tbps (or K, M, G, T), e.g. 400Gbps or 400G"
TIME_ALLOWED = "a number with ps, ns, us, ms or s, e.g. 1.5us"
LENGTH_ALLOWED = "a number with m or km, e.g. 5m"

_NUM = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ/]*)\s*$")


class UnitError(ValueError):
    """A value that does not parse with the expected unit; message says what is allowed."""

    def __init__(self, value: object, allowed: str) -> None:
        self.value = value
        self.allowed = allowed
        super().__init__(f"cannot read {value!r} as {allowed}")


def _parse(value: object, table: dict[str, int], allowed: str, bare_ok: bool) -> Decimal:
    if isinstance(value, bool):
        raise UnitError(value, allowed)
    if isinstance(value, int | float):
        if not bare_ok or (isinstance(value, float) and not math.isfinite(value)):
            raise UnitError(value, allowed)  # also Infinity / NaN: never a size, rate or time
        return Decimal(str(value))
    if not isinstance(value, str):
        raise UnitError(value, allowed)
    m = _NUM.match(value)
    if not m:
        raise UnitError(value, allowed)
    number, unit = m.group(1), m.group(2)
    if not unit:
        if not bare_ok:
            raise UnitError(value, allowed)
        factor = 1
    else:
        factor = table.get(unit.lower() if unit != "µs" else unit)
        if factor is None:
            raise UnitError(value, allowed)
    try:
        return Decimal(number) * factor
    except InvalidOperation as exc:  # pragma: no cover - regex guards this
        raise UnitError(value, allowed) from exc


def _to_int(d: Decimal) -> int:
    """Round to the nearest base unit (bytes, bit/s, ps); sub-unit remainders do not exist."""
    return int(d.to_integral_value())


def parse_size(value: object, *, bare_ok: bool = True) -> int:
    """Return bytes. ``'4000B'`` → 4000, ``'32MiB'`` → 33554432, ``'100KB'`` → 100000."""
    return _to_int(_parse(value, SIZE_UNITS, SIZE_ALLOWED, bare_ok))


def parse_rate(value: object, *, bare_ok: bool = False) -> int:
    """Return bit/s. ``'400Gbps'`` → 400_000_000_000."""
    return _to_int(_parse(value, RATE_UNITS, RATE_ALLOWED, bare_ok))


def parse_time(value: object, *, bare_ok: bool = False) -> int:
    """Return picoseconds. ``'1us'`` → 1_000_000, ``'1.5ns'`` → 1500."""
    return _to_int(_parse(value, TIME_UNITS_PS, TIME_ALLOWED, bare_ok))


def parse_length_m(value: object) -> float:
    """Return metres. ``'5m'`` → 5.0, ``'2km'`` → 2000.0; a bare number is metres."""
    d = _parse(value, {"m": 1, "km": 1000}, LENGTH_ALLOWED, True)
    return float(d)


def gbytes_per_s(gbits_per_s: float | None) -> float | None:
    """Gb/s → GB/s (10^9 bytes/s, as nccl-tests prints busbw); None stays None."""
    return None if gbits_per_s is None else gbits_per_s / 8


def serialisation_ps(size_bytes: int, rate_bps: int) -> int:
    """Time to put ``size_bytes`` on a ``rate_bps`` link, in ps, rounded up to a whole ps."""
    num = size_bytes * 8 * 10**12
    return -(-num // rate_bps)
