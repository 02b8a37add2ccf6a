"""The checks-skipped rule: tables absent from the given files, and the checks that needed them."""

from __future__ import annotations

from aifabric.audit.rules.model import Fabric, Finding


def rule_checks_skipped(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        if d.dialect != "sonic":
            continue  # NVUE/EOS: buffers are managed by the platform, nothing to list
        absent = [
            t
            for t in (
                "PORT",
                "PORT_QOS_MAP",
                "CABLE_LENGTH",
                "BUFFER_PROFILE",
                "BUFFER_PG",
                "QUEUE",
                "WRED_PROFILE",
                "DEVICE_METADATA",
            )
            if not d.has(t)
        ]
        if absent:
            out.append(
                Finding(
                    "checks-skipped",
                    "info",
                    d.name,
                    "config",
                    f"tables not in these files: {', '.join(absent)}; checks that need them were skipped"
                    + (
                        " (no PORT_QOS_MAP, so no port is known to be lossless)"
                        if "PORT_QOS_MAP" in absent
                        else ""
                    )
                    + (
                        " (no DEVICE_METADATA: the role comes from the name's pattern, or --roles)"
                        if "DEVICE_METADATA" in absent
                        else ""
                    ),
                    {"absent": ",".join(absent)},
                    "audit the full running CONFIG_DB, or give the switch's files together (a.json+b.json)",
                )
            )
    return out
