"""What the rules read and return: :class:`Finding`, the :class:`Fabric` (devices, links,
roles, the NIC-side assumptions) and the :class:`Rule` record."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from aifabric.audit.roles import assign_roles, hostname_pattern
from aifabric.audit.sonic import Device

SEVERITIES = ("error", "warning", "info")
NVIDIA_ROCE_DSCP = 26  # NVIDIA NIC / Cumulus default RoCE DSCP (formats.md §1.7, hardware-facts §E.3)
NVIDIA_CNP_DSCP = 48  # NVIDIA default CNP DSCP, strict priority (hardware-facts §E.3 [S11])


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    device: str
    object: str
    message: str
    evidence: dict[str, str] = field(default_factory=dict)
    fix: str = ""

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "device": self.device,
            "object": self.object,
            "message": self.message,
            "evidence": dict(self.evidence),
            "fix": self.fix,
        }


@dataclass(frozen=True)
class Link:
    a: str
    a_port: str
    b: str
    b_port: str


@dataclass
class Fabric:
    """The audited switches and what is known about the rest of the fabric.

    ``nic_dscp`` / ``cnp_dscp``: what the NICs send, when the user states it (``--nic-dscp``,
    ``--cnp-dscp`` or host configs; ``*_source`` says where from). None: not stated, and the
    NIC/switch rules are not run — the RoCE classes are inferred from the switches instead.
    ``intent``: ``auto`` (judge ECN by the role's majority), ``dcqcn`` (ECN + PFC intended) or
    ``pfc-only`` (a declared PFC-only design: ECN off is information).
    """

    devices: list[Device]
    nic_dscp: int | None = None
    nic_dscp_source: str = "--nic-dscp"
    cnp_dscp: int | None = None
    cnp_dscp_source: str = "--cnp-dscp"
    intent: str = "auto"
    links: list[Link] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.links:
            self.links = find_links(self.devices)
        if not self.roles:
            self.roles = assign_roles({d.name: d.metadata.get("type", "") for d in self.devices})

    @property
    def nic_dscp_given(self) -> bool:
        return self.nic_dscp is not None

    def device(self, name: str) -> Device:
        return next(d for d in self.devices if d.name == name)

    def role(self, d: Device) -> str:
        return self.roles.get(d.name) or hostname_pattern(d.name)

    def by_role(self) -> dict[str, list[Device]]:
        out: dict[str, list[Device]] = defaultdict(list)
        for d in self.devices:
            out[self.role(d)].append(d)
        return dict(out)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # the usual severity; some rules downgrade, documented in `summary`
    summary: str
    fn: Callable[[Fabric], list[Finding]]


def find_links(devices: list[Device]) -> list[Link]:
    """Links between audited devices: DEVICE_NEIGHBOR ``{name, port}``, else PORT ``description``
    of the form ``PEER:PORT`` when PEER is an audited device."""
    names = {d.name for d in devices}
    seen: set[frozenset] = set()
    out: list[Link] = []
    for d in devices:
        peers: dict[str, tuple[str, str]] = {}
        for port, f in d.table("PORT").items():
            desc = f.get("description", "")
            if ":" in desc:
                n, p = desc.split(":", 1)
                if n in names:
                    peers[port] = (n, p)
        for port, f in d.table("DEVICE_NEIGHBOR").items():
            if f.get("name") in names and f.get("port"):
                peers[port] = (f["name"], f["port"])
        for port, (n, p) in peers.items():
            key = frozenset({(d.name, port), (n, p)})
            if n == d.name or key in seen:
                continue
            seen.add(key)
            out.append(Link(d.name, port, n, p))
    return out
