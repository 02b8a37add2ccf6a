"""SVG drawings of a built fabric's layout: the floor plan (racks in rows, to scale) and rack
elevations (each rack's devices by U position)."""

from __future__ import annotations

from xml.sax.saxutils import escape

from aifabric.build.layout import Layout

PX_PER_M = 60
COLOURS = {"server": "#cfe3f7", "network": "#f7dccf"}


def floorplan_svg(lay: Layout, title: str) -> str:
    a = lay.assumptions
    w_m, d_m = a["rack_width_m"], a["rack_depth_m"]
    cols = max((r.col for r in lay.racks), default=0) + 1
    rows = max((r.row for r in lay.racks), default=0) + 1
    pitch = a["rack_depth_m"] + a["aisle_m"]
    width = int((cols * w_m + 2) * PX_PER_M)
    height = int((rows * pitch + 2) * PX_PER_M) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">',
        f'<text x="10" y="20" font-size="14">{escape(title)} — floor plan (1 m = {PX_PER_M} px; '
        f"rack {w_m:g} × {d_m:g} m, row pitch {pitch:g} m)</text>",
    ]
    for r in lay.racks:
        x = (r.col * w_m + 1) * PX_PER_M
        y = (r.row * pitch + 1) * PX_PER_M + 30
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w_m * PX_PER_M:.1f}" height="{d_m * PX_PER_M:.1f}" '
            f'fill="{COLOURS[r.role]}" stroke="#333"><title>{escape(r.name)}: '
            f"{escape(', '.join(d for d, _u, _h in r.devices))}</title></rect>"
        )
        out.append(
            f'<text x="{x + 2:.1f}" y="{y + 12:.1f}" font-size="8">{escape(r.name)}</text>'
            f'<text x="{x + 2:.1f}" y="{y + 24:.1f}" font-size="7">{len(r.devices)} {r.role[:3]}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def elevations_svg(lay: Layout, title: str) -> str:
    units = int(lay.assumptions["rack_units"])
    upx, colw, gap = 10, 120, 20
    width = len(lay.racks) * (colw + gap) + gap
    height = units * upx + 80
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">',
        f'<text x="10" y="20" font-size="14">{escape(title)} — rack elevations ({units} U)</text>',
    ]
    for i, r in enumerate(lay.racks):
        x0 = gap + i * (colw + gap)
        y0 = 50
        out.append(
            f'<rect x="{x0}" y="{y0}" width="{colw}" height="{units * upx}" fill="none" stroke="#333"/>'
            f'<text x="{x0}" y="{y0 - 5}" font-size="10">{escape(r.name)}</text>'
        )
        for dev, u, h in r.devices:
            y = y0 + (units - (u - 1) - h) * upx
            out.append(
                f'<rect x="{x0 + 2}" y="{y}" width="{colw - 4}" height="{h * upx - 1}" '
                f'fill="{COLOURS[r.role]}" stroke="#666"/>'
                f'<text x="{x0 + 5}" y="{y + min(h * upx - 2, 9)}" font-size="8">U{u} {escape(dev)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"
