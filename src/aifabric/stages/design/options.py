"""The buyer's options of ``compare`` (issue 14) as the *design* stage's input: which
:class:`~aifabric.stages.design.fabrics.DesignOption` s to design for the advisor's questions
(:func:`options_for`) — named designs side by side, or other parts, rates and planes for the two
default fabrics — and the routing mode of each named design."""

from __future__ import annotations

from aifabric.errors import InputError
from aifabric.stages.design.fabrics import (
    ROCE_ROUTINGS,
    ROUTING,
    DesignOption,
    default_options,
    nic_rate_for,
    roce_key,
)

# Routing of each named design (aifabric.design.plan.DESIGNS) in the flow model. Spectrum-X =
# Spectrum-4 adaptive routing with BlueField-3 / ConnectX-8 SuperNIC packet reordering (NVIDIA
# Spectrum-X documentation); Tomahawk 5 boxes under SONiC and Arista's 7060X6 hash with ECMP by
# default; a Jericho3-AI scheduled fabric sprays cells over its Ramon fabric elements with
# end-to-end credit-based scheduling (hardware-facts §A.5 [S43]): routing mode scheduled (ingress
# VOQs, egress-port grants, cells sprayed over every fabric link; README "Routing modes").
DESIGN_ROUTING = {
    "spectrum-x": ("adaptive-packet", "spectrum-x"),
    "jericho3-ai": ("scheduled", ""),
    "ib-": ("adaptive-packet", ""),
}


def _design_routing(label: str, technology: str, roce_routing: str | None, ib_routing: str | None):
    """(routing mode, preset) of a named design: its own where it has one, else the fabric's
    default or the advisor's --roce-routing / --ib-routing."""
    for prefix, routing in DESIGN_ROUTING.items():
        if label.startswith(prefix):
            if prefix == "ib-" and ib_routing:
                return ib_routing, ""
            return routing
    if technology == "infiniband":
        return ib_routing or ROUTING["infiniband"], ""
    return ROCE_ROUTINGS.get(roce_routing or "", (ROUTING["roce"], ""))


def _parts_by_technology(ids, kind: str, catalog) -> dict[str, str]:
    """``--switch`` / ``--nic`` ids keyed by the fabric they belong to (infiniband | roce)."""
    out: dict[str, str] = {}
    table = catalog.switches if kind == "switch" else catalog.nics
    for pid in ids or ():
        rec = table.get(pid)
        if rec is None:
            raise InputError(
                f"no such {kind}",
                field=f"--{kind} (advisor.{kind})",
                value=pid,
                allowed=", ".join(sorted(table)),
            )
        tech = "infiniband" if rec.technology == "infiniband" else "roce"
        if tech in out and out[tech] != pid:
            raise InputError(
                f"two {tech} {kind}es named" if kind == "switch" else f"two {tech} NICs named",
                field=f"--{kind} (advisor.{kind})",
                value=f"{out[tech]}, {pid}",
                allowed=f"one {kind} per technology (InfiniBand and/or Ethernet)",
            )
        out[tech] = pid
    return out


def _plan_kw(adv) -> dict:
    """plan_fabric's options the advisor sets (empty for the default comparison)."""
    kw: dict = {}
    if getattr(adv, "oversubscription", 1.0) != 1.0:
        kw["oversubscription"] = float(adv.oversubscription)
    if getattr(adv, "rail_only", False):
        kw["rail_only"] = True
    if getattr(adv, "max_tiers", 3) != 3:
        kw["max_tiers"] = int(adv.max_tiers)
    if getattr(adv, "lengths_m", None):
        kw["lengths_m"] = dict(adv.lengths_m)
    if getattr(adv, "hall_size_m", None) is not None:
        kw["data_hall_m"] = float(adv.hall_size_m)
    if getattr(adv, "host_link_media", "auto") != "auto":
        kw["host_link_media"] = adv.host_link_media
    if getattr(adv, "dual_tor", False):
        kw["dual_tor"] = True
    if getattr(adv, "spine_spares", 0):
        kw["spine_spares"] = int(adv.spine_spares)
    return kw


def options_for(adv, gpu, catalog) -> tuple[DesignOption, ...]:
    """The options ``compare`` designs for the advisor's questions: InfiniBand and RoCE at the
    GPU system's reference parts (:func:`default_options`) unless the buyer's options say
    otherwise — named ``designs`` side by side, or ``switch`` / ``nic`` / ``nic_rate_gbps`` /
    ``planes`` for the two default fabrics; the plan options, ``lossy_roce`` and the hybrid's
    front end apply to every design."""
    kw = _plan_kw(adv)
    sn, ck = getattr(adv, "storage_nodes", None), getattr(adv, "checkpoint_gbytes_per_s", None)
    hybrid = (sn, ck) if sn is not None or ck is not None else None
    lossy = bool(getattr(adv, "lossy_roce", False))
    planes = getattr(adv, "planes", None)
    roce_routing = getattr(adv, "roce_routing", None)
    ib_routing = getattr(adv, "ib_routing", None)
    default_options(gpu, roce_routing, ib_routing)  # the routing words' checks (one error line)
    designs = getattr(adv, "designs", None)
    if designs:
        from aifabric.design.plan import DESIGNS

        for flag, value in (
            ("--switch", adv.switch),
            ("--nic", adv.nic),
            ("--nic-rate", adv.nic_rate_gbps),
        ):
            if value:
                raise InputError(
                    "a named design brings its own switch, NIC and rate",
                    field=flag,
                    value=value if not isinstance(value, list) else ",".join(value),
                    allowed="leave it out with --designs, or drop --designs",
                )
        out = []
        for label in designs:
            if label not in DESIGNS:
                raise InputError(
                    "unknown design",
                    field="--designs (advisor.designs)",
                    value=label,
                    allowed=", ".join(DESIGNS),
                )
            if any(o.design == label for o in out):
                raise InputError(
                    "named twice",
                    field="--designs (advisor.designs)",
                    value=label,
                    allowed="each design once",
                )
            d = DESIGNS[label]
            tech = d["technology"]
            rate = float(d.get("nic_rate_gbps") or nic_rate_for(gpu)[0])
            is_lossy = lossy and tech == "roce"
            routing, preset = _design_routing(label, tech, roce_routing, ib_routing)
            out.append(
                DesignOption(
                    label + ("-lossy" if is_lossy else ""),
                    tech,
                    rate,
                    routing,
                    preset,
                    design=label,
                    switch_id=d.get("switch_id"),
                    nic_id=d.get("nic_id"),
                    planes=planes if planes is not None else d.get("planes"),
                    lossy=is_lossy,
                    hybrid=hybrid,
                    plan_kw=kw,
                )
            )
        return tuple(out)
    rate = float(adv.nic_rate_gbps) if getattr(adv, "nic_rate_gbps", None) else nic_rate_for(gpu)[0]
    sw = _parts_by_technology(getattr(adv, "switch", None), "switch", catalog)
    nc = _parts_by_technology(getattr(adv, "nic", None), "nic", catalog)
    return (
        DesignOption(
            "infiniband",
            "infiniband",
            rate,
            ib_routing or ROUTING["infiniband"],
            switch_id=sw.get("infiniband"),
            nic_id=nc.get("infiniband"),
            planes=planes,
            hybrid=hybrid,
            plan_kw=kw,
        ),
        DesignOption(
            roce_key(rate),
            "roce",
            rate,
            *ROCE_ROUTINGS.get(roce_routing or "", (ROUTING["roce"], "")),
            switch_id=sw.get("roce"),
            nic_id=nc.get("roce"),
            planes=planes,
            lossy=lossy,
            hybrid=hybrid,
            plan_kw=kw,
        ),
    )


__all__ = ["DESIGN_ROUTING", "options_for"]
