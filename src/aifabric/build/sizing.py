"""Plans for a build: the link-class lengths from the layout, and a plan rebuilt from its JSON.

``plan --build`` without ``--lengths`` / ``--hall-size`` prices each link class at the longest
order length the layout needs for it (so the BOM's media reach every run and the cable plan's parts
are the BOM's); with them, the given lengths stand and a longer run is reported as a conflict.
"""

from __future__ import annotations

from aifabric.errors import InputError

_NEEDED = ("technology", "gpus", "gpu", "nic_rate_gbps", "switch", "nic", "planes", "oversubscription")


def layout_lengths(fp, catalog, layout_overrides: dict | None = None) -> dict[str, float]:
    """Link class → the longest order length of that class in ``fp``'s layout."""
    from aifabric.build.cables import build_cable_plan

    built = build_cable_plan(fp, catalog, layout_overrides)
    return {cls: v["layout_max_ordered_m"] for cls, v in built.checks["lengths"].items()}


def plan_from_dict(
    d: dict, catalog, where: str = "plan", lengths_m: dict | None = None, tco_inputs: dict | None = None
):
    """The FabricPlan a ``plan --json`` fabric object describes (re-planned from its options)."""
    from aifabric.design.plan import plan_fabric

    if not isinstance(d, dict):
        raise InputError("expected a fabric object", file=where, allowed="plan --json output")
    missing = [k for k in _NEEDED if k not in d]
    if missing:
        raise InputError(
            "not a plan: keys missing",
            file=where,
            value=", ".join(missing),
            allowed="aifabric plan --json output",
        )
    fp = plan_fabric(
        int(d["gpus"]),
        d["technology"],
        catalog,
        gpu=d["gpu"],
        nic_rate_gbps=float(d["nic_rate_gbps"]),
        oversubscription=float(d["oversubscription"]),
        switch_id=d["switch"],
        nic_id=d["nic"],
        planes=int(d["planes"]),
        lengths_m=lengths_m or dict(d.get("cable_lengths_m") or {}),
        server_cages=d.get("server_cages"),
        optics=d.get("optics", "any"),
        rail_only=d.get("design") == "rail-only",
        dual_tor=bool(d.get("dual_tor", False)),
        spine_spares=int(d.get("spine_spares", 0)),
        tco_inputs=tco_inputs,
    )
    fp.design_label = d.get("design_label")
    return fp


def sized_for_layout(fp, catalog, layout_overrides: dict | None = None, tco_inputs: dict | None = None):
    """``fp`` re-planned with each link class at its layout length (its notes kept, one added)."""
    lengths = layout_lengths(fp, catalog, layout_overrides)
    if all(abs(lengths[c] - fp.lengths_m[c]) < 1e-9 for c in lengths):
        return fp
    out = plan_from_dict(fp.to_dict(), catalog, lengths_m={**fp.lengths_m, **lengths}, tco_inputs=tco_inputs)
    out.notes = list(fp.notes) + [
        "link lengths from the build layout (longest order length per class): "
        + ", ".join(f"{c} {v:g} m" for c, v in lengths.items())
    ]
    return out
