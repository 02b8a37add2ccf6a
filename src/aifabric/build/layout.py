"""Floor layout of a built fabric: racks in rows, devices in racks, and each cable's length.

Every cable length is computed from this layout, never looked up: a cable leaves its port, rises
to the overhead tray, runs along the tray (Manhattan: along the row, then across rows), drops into
the other rack and down to the other port, plus a service slack; the order length is that rounded
up to the next stocked length. The assumptions (:data:`ASSUMPTIONS`) are inputs with their source
or "ASSUMPTION (no public source)"; ``plan --build DIR --layout FILE`` overrides any of them.

Placement: servers fill racks in order (``servers_per_rack``); server racks fill rows of whole
scalable units (SUs); each row has its network rack(s) in the middle holding the leaves of the SUs
in that row (middle-of-row leaves); spines and cores stand in one network row in the middle of the
hall.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from aifabric.errors import InputError

U_M = 0.04445  # EIA-310: 1 U = 1.75 in = 44.45 mm

#: name → (value, unit, source)
ASSUMPTIONS: dict[str, tuple[float | None, str, str]] = {
    "rack_width_m": (0.6, "m", "ASSUMPTION (no public source): the common 600 mm width of 19-inch IT racks"),
    "rack_depth_m": (1.2, "m", "ASSUMPTION (no public source): 1,200 mm deep racks for GPU servers"),
    "aisle_m": (1.2, "m", "ASSUMPTION (no public source): aisles of two 600 mm floor tiles"),
    "rack_units": (42, "U", "ASSUMPTION (no public source): 42 U racks; 1 U = 44.45 mm (EIA-310)"),
    "tray_height_m": (
        2.4,
        "m",
        "ASSUMPTION (no public source): overhead cable tray 0.3–0.4 m above a 2.0 m rack",
    ),
    "slack_m": (1.0, "m", "ASSUMPTION (no public source): 0.5 m service loop at each end"),
    "servers_per_rack": (
        None,
        "servers",
        "NVIDIA DGX SuperPOD B300 XDR reference architecture: 'four DGX B300 fit within a single rack' "
        "(docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr); an NVL72 "
        "system is one rack of 18 compute trays (its NVLink domain)",
    ),
    "switches_per_network_rack": (
        16,
        "switches",
        "ASSUMPTION (no public source): 1–2 U switches plus patch panels and PDUs in a 42 U rack",
    ),
    "max_server_racks_per_row": (
        16,
        "racks",
        "ASSUMPTION (no public source): rows of at most 16 server racks",
    ),
}
ORDER_STEPS = (
    "ASSUMPTION (no public source): lengths are ordered in 0.5 m steps up to 5 m, 1 m steps up to 20 m "
    "and 5 m steps beyond"
)


def ordered_length_m(length_m: float) -> float:
    """The stocked length to order for a run of ``length_m`` (see :data:`ORDER_STEPS`)."""
    step = 0.5 if length_m <= 5 else 1.0 if length_m <= 20 else 5.0
    return round(math.ceil(length_m / step - 1e-9) * step, 2)


@dataclass
class Rack:
    name: str
    role: str  # server | network
    row: int
    col: int
    devices: list[tuple[str, int, int]] = field(default_factory=list)  # (device, bottom U, height U)


@dataclass
class Layout:
    """Racks with positions and the devices in them; :meth:`route` gives a cable's length."""

    racks: list[Rack]
    assumptions: dict[str, float]
    where: dict[str, tuple[int, int, int]]  # device → (rack index, bottom U, height U)

    def xy_m(self, rack: Rack) -> tuple[float, float]:
        a = self.assumptions
        return (rack.col + 0.5) * a["rack_width_m"], rack.row * (a["rack_depth_m"] + a["aisle_m"])

    def height_m(self, device: str) -> float:
        _, u, h = self.where[device]
        return (u - 1 + h / 2) * U_M

    def route(self, dev_a: str, dev_b: str) -> dict:
        """The cable run between two devices: its parts (m) and ``length_m`` / ``ordered_m``."""
        a = self.assumptions
        ra, rb = self.racks[self.where[dev_a][0]], self.racks[self.where[dev_b][0]]
        ha, hb = self.height_m(dev_a), self.height_m(dev_b)
        if ra is rb:
            vertical, horizontal = abs(ha - hb), 0.0
        else:
            (xa, ya), (xb, yb) = self.xy_m(ra), self.xy_m(rb)
            vertical = (a["tray_height_m"] - ha) + (a["tray_height_m"] - hb)
            horizontal = abs(xa - xb) + abs(ya - yb)
        length = vertical + horizontal + a["slack_m"]
        return {
            "vertical_m": round(vertical, 3),
            "horizontal_m": round(horizontal, 3),
            "slack_m": a["slack_m"],
            "length_m": round(length, 3),
            "ordered_m": ordered_length_m(length),
            "a_rack": ra.name,
            "b_rack": rb.name,
        }

    def to_dict(self) -> dict:
        return {
            "assumptions": {
                k: {"value": self.assumptions[k], "unit": ASSUMPTIONS[k][1], "source": ASSUMPTIONS[k][2]}
                for k in ASSUMPTIONS
            },
            "order_lengths": ORDER_STEPS,
            "route_rule": "length = (tray height − port height) at each end + |dx| + |dy| along the tray "
            "+ slack; same rack: the height difference + slack. Port height = the device's mid-height.",
            "racks": [
                {
                    "name": r.name,
                    "role": r.role,
                    "row": r.row,
                    "col": r.col,
                    "x_m": round(self.xy_m(r)[0], 3),
                    "y_m": round(self.xy_m(r)[1], 3),
                    "devices": [{"device": d, "u": u, "height_u": h} for d, u, h in r.devices],
                }
                for r in self.racks
            ],
        }


def layout_inputs(overrides: dict | None, servers_per_rack: int) -> dict[str, float]:
    """The assumption values, with ``overrides`` (from ``--layout FILE``) checked and applied."""
    vals = {k: v for k, (v, _u, _s) in ASSUMPTIONS.items()}
    vals["servers_per_rack"] = servers_per_rack
    for k, v in (overrides or {}).items():
        if k not in ASSUMPTIONS:
            raise InputError("unknown layout key", field=f"--layout {k}", allowed=", ".join(ASSUMPTIONS))
        if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
            raise InputError("must be a number > 0", field=f"--layout {k}", value=v)
        vals[k] = v
    for k in ("rack_units", "servers_per_rack", "switches_per_network_rack", "max_server_racks_per_row"):
        if float(vals[k]) != int(vals[k]):
            raise InputError("must be a whole number", field=f"--layout {k}", value=vals[k])
        vals[k] = int(vals[k])
    if vals["tray_height_m"] <= vals["rack_units"] * U_M:
        raise InputError(
            "the tray must run above the racks",
            field="--layout tray_height_m",
            value=vals["tray_height_m"],
            allowed=f"> {vals['rack_units'] * U_M:.2f} m ({vals['rack_units']} U)",
        )
    return vals


def place(
    servers: list[str],
    nodes_per_su: int,
    leaves_by_su: dict[int, list[str]],
    upper: list[str],
    a: dict[str, float],
) -> Layout:
    """Racks and positions for ``servers`` (in order), the leaves of each SU and the spine/core
    switches ``upper``."""
    spr = a["servers_per_rack"]
    n_racks = math.ceil(len(servers) / spr)
    per_su = nodes_per_su // spr if nodes_per_su % spr == 0 else 0
    max_row = a["max_server_racks_per_row"]
    per_row = per_su * max(1, max_row // per_su) if 0 < per_su <= max_row else max_row
    rows = max(1, math.ceil(n_racks / per_row))
    # the row holding the middle server of each SU holds its leaves
    leaf_row: dict[int, list[str]] = {}
    for su, leaves in sorted(leaves_by_su.items()):
        mid = min(len(servers) - 1, su * nodes_per_su + nodes_per_su // 2)
        leaf_row.setdefault((mid // spr) // per_row, []).extend(leaves)
    spine_row = rows // 2 if upper else None
    racks: list[Rack] = []
    where: dict[str, tuple[int, int, int]] = {}
    slot_u = max(1, min(10, (a["rack_units"] - 2) // spr))
    spn = a["switches_per_network_rack"]
    widest = 0
    for r in range(rows):
        row = r + (1 if spine_row is not None and r >= spine_row else 0)
        ks = list(range(r * per_row, min(n_racks, (r + 1) * per_row)))
        nets = _chunks(leaf_row.get(r, []), spn)
        half = len(ks) // 2
        cols = [(k, j if j < half else j + len(nets)) for j, k in enumerate(ks)]
        for k, col in cols:
            rack = Rack(f"R{row + 1:02d}-{col + 1:02d}", "server", row, col)
            for i, s in enumerate(servers[k * spr : (k + 1) * spr]):
                rack.devices.append((s, 2 + i * slot_u, slot_u))
            _add(racks, rack, where)
        for i, group in enumerate(nets):
            _add(racks, _network_rack(row, half + i, group, a["rack_units"]), where)
        widest = max(widest, len(ks) + len(nets))
    if upper:
        nets = _chunks(upper, spn)
        start = max(0, (widest - len(nets)) // 2)
        for i, group in enumerate(nets):
            _add(racks, _network_rack(spine_row, start + i, group, a["rack_units"]), where)
    return Layout(racks, a, where)


def _chunks(items: list[str], n: int) -> list[list[str]]:
    return [items[i : i + n] for i in range(0, len(items), n)]


def _network_rack(row: int, col: int, switches: list[str], units: int) -> Rack:
    rack = Rack(f"R{row + 1:02d}-{col + 1:02d}", "network", row, col)
    for i, sw in enumerate(switches):
        # 2 U slots from the top down, the top 2 U left for patch panels
        rack.devices.append((sw, max(1, units - 3 - 2 * i), 2))
    return rack


def _add(racks: list[Rack], rack: Rack, where: dict) -> None:
    for d, u, h in rack.devices:
        where[d] = (len(racks), u, h)
    racks.append(rack)
