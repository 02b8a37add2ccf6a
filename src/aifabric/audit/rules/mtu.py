"""MTU rules: MTU across a link, and lossless ports too small for 4096-byte RoCE frames."""

from __future__ import annotations

from aifabric.audit import headroom as hr
from aifabric.audit.rules.common import _ports_key
from aifabric.audit.rules.model import Fabric, Finding

ROCE_MIN_PORT_MTU = 4200  # 4096-byte RoCE payload + headers (hardware-facts §E.3 [S72])


def rule_mtu_mismatch(fab: Fabric) -> list[Finding]:
    out = []
    for ln in fab.links:
        ma, mb = fab.device(ln.a).port_mtu(ln.a_port), fab.device(ln.b).port_mtu(ln.b_port)
        if ma is not None and mb is not None and ma != mb:
            out.append(
                Finding(
                    "mtu-mismatch",
                    "error",
                    ln.a,
                    f"PORT|{ln.a_port}",
                    f"MTU {ma} here vs {mb} at {ln.b}:{ln.b_port}: frames above {min(ma, mb)} B are dropped "
                    "on one direction of the link",
                    {"mtu": str(ma), "peer_mtu": str(mb), "peer": f"{ln.b}:{ln.b_port}"},
                    "set the same PORT mtu on both ends (SONiC default 9100)",
                )
            )
    for d in fab.devices:
        small = [p for p in d.lossless_ports() if (d.port_mtu(p) or hr.DEFAULT_PORT_MTU) < ROCE_MIN_PORT_MTU]
        if small:
            out.append(
                Finding(
                    "mtu-too-small",
                    "warning",
                    d.name,
                    f"PORT|{_ports_key(small)}",
                    f"{len(small)} lossless port(s) have MTU below {ROCE_MIN_PORT_MTU} B, too small for "
                    "4096-byte RoCE frames",
                    {"ports": _ports_key(small)},
                    f"set PORT mtu ≥ {ROCE_MIN_PORT_MTU} (9100 is the SONiC default)",
                )
            )
    return out
