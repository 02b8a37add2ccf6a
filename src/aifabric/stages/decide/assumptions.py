"""The assumption register: every input that reaches the verdict, named once, with its value, unit,
the fabrics it applies to, its source, its range or alternatives and its kind (issue 25).

:func:`register` gives the list of :class:`Assumption` entries a finished comparison used (deployment,
prices, probabilities, physics), which ``compare --json`` prints as ``assumptions[]`` and the report
shows as "assumptions that decide this". ``decides`` marks the entries the verdict hinges on. The
deployment settings it lists (storage placement and share, tuning, SHARP) are
:mod:`aifabric.stages.deployment`'s, which also checks a scenario's ``assumptions:`` overrides.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from aifabric.stages.deployment import (
    SHARP_STATES,
    STORAGE_PLACEMENTS,
    STORAGE_SOURCE,
    TUNING_SOURCE,
    TUNING_STATES,
    Deployment,
)

KINDS = ("price", "physics", "deployment", "probability")


@dataclass(frozen=True)
class Assumption:
    """One entry of the register (``assumptions[]`` of ``compare --json``)."""

    name: str
    value: Any
    unit: str | None
    applies_to: tuple[str, ...]
    source: str
    range: tuple[float, float] | None = None
    alternatives: tuple | None = None
    kind: str = "deployment"
    decides: bool = False

    def to_dict(self) -> dict:
        d = asdict(self)
        d["applies_to"] = list(self.applies_to)
        d["range"] = list(self.range) if self.range is not None else None
        d["alternatives"] = list(self.alternatives) if self.alternatives is not None else None
        return d


def _kind_of(name: str) -> tuple[str, str | None]:
    if name.startswith("price."):
        return "price", "x catalog price"
    if name in ("misconfiguration_probability",):
        return "probability", "probability per setting"
    return "physics", "fraction"


def _media(design, catalog) -> list[Assumption]:
    """The host-link media entries (:func:`aifabric.design.media.media_assumptions`), one name each."""
    from aifabric.design.media import media_assumptions

    out = []
    for d in media_assumptions({fd.key: fd.plan for fd in design.fabrics}, catalog):
        name = d["name"] + (f".{d['applies_to'][0]}" if d["name"] == "media.host_link" else "")
        out.append(
            Assumption(
                name,
                d["value"],
                d.get("unit"),
                tuple(d["applies_to"]),
                d["source"],
                tuple(d["range"]) if d.get("range") else None,
                tuple(d["alternatives"]) if d.get("alternatives") else None,
                d["kind"],
            )
        )
    return out


def in_network_reduction(design, network, dep: Deployment) -> list[Assumption]:
    """``sharp`` (on / off, the IB designs whose switches have it) and each fabric's in-network
    reduction: SHARP with its grant and limits, or none with the reason (Ethernet)."""
    from aifabric.stages.measure.sharp import NO_ETHERNET, SHARP_SOURCE

    ib = tuple(fd.key for fd in design.fabrics if fd.in_network_reduction)
    out = []
    if ib:
        basis = "set by the user" if (dep.source or {}).get("sharp") == "assumptions:" else SHARP_SOURCE
        out.append(Assumption("sharp", dep.sharp, None, ib, basis, alternatives=SHARP_STATES))
    for fd in design.fabrics:
        net = network.fabric(fd.key) if network is not None else None
        grant = getattr(net, "sharp", None)
        if fd.in_network_reduction:
            value = fd.in_network_reduction + (f": {grant['note']}" if grant else ": no network all-reduce")
            out.append(Assumption(f"in_network_reduction.{fd.key}", value, None, (fd.key,), SHARP_SOURCE))
        else:
            out.append(Assumption(f"in_network_reduction.{fd.key}", "none", None, (fd.key,), NO_ETHERNET))
    return out


def register(
    adv, dep: Deployment, design, risk, decision, perf, catalog=None, network=None
) -> list[Assumption]:
    """Every assumption that reached the verdict (module docstring), ``decides`` set from what the
    verdict hinges on and from the sensitivity rows that move the recommendation or the verdict."""
    from aifabric.stages.risk.library import _BASELINE_WORDS
    from aifabric.stages.risk.rates import DAYS_TO_FIND, RATES
    from aifabric.stages.risk.testbed import BASELINES, SMALL_JITTER_DUTY

    keys = tuple(fd.key for fd in design.fabrics)
    hinges = {h["assumption"] for h in decision.recommendation.hinges_on}
    moving = {s["input"] for s in decision.sensitivity if s.get("flips") or s.get("verdict_changes")}
    out = [
        Assumption(
            "storage.placement",
            dep.storage_placement,
            None,
            keys,
            STORAGE_SOURCE if (dep.source or {}).get("storage.placement") == "default" else "set by the user",
            alternatives=STORAGE_PLACEMENTS,
            kind="deployment",
        ),
        Assumption(
            "storage.share",
            dep.storage_share,
            "share of time",
            keys,
            dep.storage_basis,
            range=dep.storage_share_range,
            kind="deployment",
        ),
        Assumption(
            "congestion_share",
            risk.congestion_share,
            "share of communication time",
            keys,
            "the storage share: the risk testbed's congested traffic mix is the storage incast (one setting)"
            if risk.congestion_is_storage
            else "set by the user (--congestion-share or assumptions:)",
            kind="deployment",
        ),
        Assumption(
            "tuning",
            dep.tuning,
            None,
            keys,
            TUNING_SOURCE[dep.tuning],
            alternatives=TUNING_STATES,
            kind="deployment",
        ),
    ]
    out += in_network_reduction(design, network, dep)
    for fd in design.fabrics:
        fr = risk.fabric(fd.key)
        tb = fr.testbed.testbed if fr is not None and fr.testbed is not None else None
        if tb is not None:
            out.append(
                Assumption(
                    f"congestion_control.{fd.key}",
                    tb.baseline,
                    None,
                    (fd.key,),
                    _BASELINE_WORDS[tb.baseline],
                    alternatives=BASELINES[fd.technology],
                    kind="deployment",
                )
            )
        out.append(
            Assumption(
                f"routing.{fd.key}",
                fd.routing,
                None,
                (fd.key,),
                "the design's routing (advisor.ib_routing / roce_routing, or the named design's)",
                kind="deployment",
            )
        )
    for srow in decision.sensitivity:
        if srow.get("kind") == "categorical":
            continue
        kind, unit = _kind_of(srow["input"])
        out.append(
            Assumption(
                srow["input"],
                srow["base"],
                unit,
                (srow["design"],) if srow.get("design") else keys,
                srow.get("basis", ""),
                range=tuple(srow["range"]),
                kind=kind,
            )
        )
    for sid, r in RATES.items():
        out.append(
            Assumption(
                f"risk.{sid}",
                r.value,
                {"mistake": "probability", "share": "share of time"}.get(
                    r.kind, "per 1,000 components a year"
                ),
                keys,
                r.basis,
                range=(r.low, r.high),
                kind="probability",
            )
        )
    out.append(
        Assumption(
            "risk.days_to_find",
            DAYS_TO_FIND[adv.team_expertise][0],
            "days",
            keys,
            "assumption (no public source): a wrong lossless setting costs until found, by team expertise",
            range=tuple(DAYS_TO_FIND[adv.team_expertise][1:]),
            kind="probability",
        )
    )
    out.append(
        Assumption(
            "jitter.small_duty",
            SMALL_JITTER_DUTY,
            "share of time",
            tuple(fd.key for fd in design.fabrics if fd.technology == "roce"),
            "assumption (no public source): 'small network jitter' = PAUSE bursts 2 % of the time",
            kind="physics",
        )
    )
    if getattr(perf, "server_usd_per_gpu", None):
        out.append(
            Assumption(
                "price.server_per_gpu",
                perf.server_usd_per_gpu,
                "USD",
                keys,
                "the GPU system's price / GPUs per system (catalog)",
                kind="price",
            )
        )
    from aifabric.stages.risk.rates import failure_assumptions

    for d in failure_assumptions():
        out.append(
            Assumption(
                d["name"],
                d["value"],
                d.get("unit"),
                keys,
                d["source"],
                tuple(d["range"]) if d.get("range") else None,
                tuple(d["alternatives"]) if d.get("alternatives") else None,
                d["kind"],
            )
        )
    if catalog is not None:
        out += _media(design, catalog)
    decided = hinges | moving

    def decides(a: Assumption) -> bool:
        return a.name in decided or (a.name.startswith("media.host_link.") and "media.host_link" in decided)

    return [replace_decides(a, decides(a)) for a in out]


def replace_decides(a: Assumption, decides: bool) -> Assumption:
    from dataclasses import replace

    return replace(a, decides=decides)


__all__ = [
    "register",
    "in_network_reduction",
    "KINDS",
    "Assumption",
]
