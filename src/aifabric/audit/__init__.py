"""Lossless-RoCE configuration audit for SONiC switches, plus a PFC deadlock check.

* :mod:`aifabric.audit.sonic` — CONFIG_DB parsers (nested, flat ``TABLE|key``, old ``[TABLE|key]``
  references) and ``pg_profile_lookup.ini`` → :class:`~aifabric.audit.sonic.Device`.
* :mod:`aifabric.audit.rules` — :data:`~aifabric.audit.rules.RULES`, one function per rule id.
* :mod:`aifabric.audit.headroom` — the SONiC headroom formula (hardware-facts §E.1).
* :mod:`aifabric.audit.deadlock` — buffer dependency graph and its cycles.
* :mod:`aifabric.audit.generate` — ``roce-config``: a lossless config_db fragment.

:func:`audit_files` is the entry point: it never raises for bad file content; each problem is
one line in :attr:`AuditReport.errors`, and the other files are still audited.

Path syntax: ``a.json+b.json+lookup.ini`` (or a directory) is *one* switch whose tables are split
over several files (as the rendered ``buffers.json`` / ``qos.json`` are). A standalone ``.ini``
binds to the devices whose ``hwsku`` appears in its file name, or to the only device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aifabric.audit.fleet import rule_fleet_inconsistent
from aifabric.audit.infer import infer_classes
from aifabric.audit.roles import assign_roles, read_roles
from aifabric.audit.rules import RULES, SEVERITIES, Fabric, Finding, Rule, run_rules
from aifabric.audit.sonic import Device, load_device
from aifabric.errors import InputError

RULES["fleet-inconsistent"] = Rule(
    "fleet-inconsistent",
    "warning",
    "a lossless-path field (scheduler, WRED thresholds, PFC watchdog, cable length, MTU, buffer "
    "profiles and PG/queue bindings, lookup table) differs from the majority of the switch's role "
    "(error for lossy/egress buffer profiles and lossless PG bindings)",
    rule_fleet_inconsistent,
)
INTENTS = ("auto", "dcqcn", "pfc-only")

__all__ = ["RULES", "AuditReport", "Device", "Finding", "audit_devices", "audit_files", "load_devices"]


@dataclass
class AuditReport:
    devices: list[str]
    findings: list[Finding]
    errors: list[InputError] = field(default_factory=list)
    deadlock: dict | None = None
    roce_classes: dict[str, dict] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    locator: Callable[[str, str], str | None] | None = field(default=None, repr=False, compare=False)

    def counts(self) -> dict[str, int]:
        return {s: sum(f.severity == s for f in self.findings) for s in SEVERITIES}

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    def exit_code(self) -> int:
        """2 bad input, 1 error findings (or a deadlock), 0 otherwise (interface.md)."""
        if self.errors:
            return 2
        return 1 if self.has_errors else 0

    def to_json(self) -> dict:
        out = {
            "devices": list(self.devices),
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.counts(),
            "errors": [{"file": e.file, "field": e.field, "message": str(e)} for e in self.errors],
        }
        if self.deadlock is not None:
            out["deadlock"] = self.deadlock
        out["roles"] = dict(self.roles)
        out["roce_classes"] = dict(self.roce_classes)
        out.update(self.extra)
        return out

    def frame(self):
        """Findings as a pandas DataFrame (columns: rule, severity, device, object, message, evidence, fix)."""
        import pandas as pd

        cols = ["rule", "severity", "device", "object", "message", "evidence", "fix"]
        return pd.DataFrame([f.to_dict() for f in self.findings], columns=cols)


CONFIG_SUFFIXES = (".json", ".ini")


def _expand(arg: str | Path) -> list[Path]:
    """One CONFIG argument → its files. Raises InputError for an empty part (``a.json+``, a lone
    ``+``: never the current directory) or a directory with no config file."""
    s = str(arg)
    parts = s.split("+") if "+" in s and not Path(s).exists() else [s]
    out: list[Path] = []
    for part in parts:
        if not part.strip():
            raise InputError(
                "empty file name in the argument",
                file=s,
                allowed="FILE, DIR, or FILE+FILE+... with no empty part",
            )
        p = Path(part)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.suffix.lower() in CONFIG_SUFFIXES and q.is_file())
            if not found:
                raise InputError(
                    "directory holds no config file",
                    file=part,
                    allowed=f"a directory with {' / '.join(CONFIG_SUFFIXES)} files",
                )
            out.extend(found)
        else:
            out.append(p)
    return out


def _is_ini(p: Path) -> bool:
    return p.suffix.lower() == ".ini"


def load_devices(paths, lookups=()) -> tuple[list[Device], list[InputError]]:
    """Parse each CONFIG argument (a file, ``a+b`` or a directory = one switch) → devices, problems."""
    devices: list[Device] = []
    errors: list[InputError] = []
    loose_ini: list[Path] = [Path(x) for x in lookups]
    for arg in paths:
        try:
            group = _expand(arg)
        except InputError as exc:
            errors.append(exc)
            continue
        configs = [p for p in group if not _is_ini(p)]
        inis = [p for p in group if _is_ini(p)]
        if not configs:
            loose_ini.extend(inis)
            continue
        dev, probs = load_device(configs, inis)
        errors.extend(probs)
        if dev is not None:
            devices.append(dev)
    if loose_ini:
        from aifabric.audit.sonic import read_pg_lookup

        for ini in loose_ini:
            try:
                table = read_pg_lookup(ini)
            except InputError as exc:
                errors.append(exc)
                continue
            hits = [d for d in devices if d.hwsku and d.hwsku.lower() in ini.name.lower()]
            if not hits and len(devices) == 1:
                hits = devices
            for d in hits:
                if d.lookup is None:
                    d.lookup = table
                    d.files.append(str(ini))
    # unique names: a second "sonic" becomes "sonic@file"
    seen: dict[str, int] = {}
    for d in devices:
        seen[d.name] = seen.get(d.name, 0) + 1
    for d in devices:
        if seen[d.name] > 1:
            d.name = f"{d.name}@{Path(d.files[0]).stem}"
    return devices, errors


def audit_devices(
    devices: list[Device],
    *,
    nic_dscp: int | None = None,
    cnp_dscp: int | None = None,
    only: list[str] | None = None,
    intent: str = "auto",
    roles: dict[str, str] | None = None,
) -> list[Finding]:
    """Run the rules. ``nic_dscp`` / ``cnp_dscp``: what the NICs send, when stated (None: not
    compared; the RoCE classes are inferred from the switches)."""
    fab = Fabric(devices, nic_dscp=nic_dscp, cnp_dscp=cnp_dscp, intent=intent, roles=dict(roles or {}))
    return run_rules(fab, only)


def audit_files(
    paths,
    topology=None,
    nic_dscp: int | None = None,
    failed_link=None,
    *,
    routing: str = "ecmp",
    lookups=(),
    cnp_dscp: int | None = None,
    only: list[str] | None = None,
    intent: str = "auto",
    roles_file: str | Path | None = None,
) -> AuditReport:
    """Audit switch config files (and, with ``topology``, check PFC deadlock).

    The RoCE classes are inferred from the configs (the DSCPs that reach the PFC-enabled
    classes); ``nic_dscp`` / ``cnp_dscp`` state what the NICs send and turn on the NIC/switch
    comparison. ``intent``: ``auto`` | ``dcqcn`` | ``pfc-only`` (how ECN-off is judged).
    ``roles_file``: ``PATTERN ROLE`` lines grouping switches that must be identical.
    ``topology`` is a :class:`~aifabric.topology.Topology`, a file path or a builder spec
    (``ring:4``, ``fat-tree:4``); ``failed_link`` one link or a list (``"agg0-tor1"``).
    Bad input never raises: see :attr:`AuditReport.errors`.
    """
    errors: list[InputError] = []
    if intent not in INTENTS:
        errors.append(
            InputError("unknown intent", field="--intent", value=intent, allowed=", ".join(INTENTS))
        )
        intent = "auto"
    rules = None
    if roles_file is not None:
        try:
            rules = read_roles(roles_file)
        except InputError as exc:
            errors.append(exc)
    paths = list(paths)
    if not paths and topology is None:
        errors.append(
            InputError("nothing to audit", field="CONFIG", allowed="one or more config files, or --topology")
        )
    devices, probs = load_devices(paths, lookups)
    errors.extend(probs)
    roles = assign_roles({d.name: d.metadata.get("type", "") for d in devices}, rules)
    findings = audit_devices(
        devices, nic_dscp=nic_dscp, cnp_dscp=cnp_dscp, only=only, intent=intent, roles=roles
    )
    deadlock = None
    if topology is not None:
        from aifabric.audit.deadlock import find_cycles, load_topology

        try:
            topo = load_topology(str(topology)) if isinstance(topology, str | Path) else topology
            failed = [failed_link] if isinstance(failed_link, str) else list(failed_link or [])
            prios = sorted({p for d in devices for v in d.lossless_ports().values() for p in v}) or [3]
            cycles, _ = find_cycles(topo, routing, failed, tuple(prios))
        except InputError as exc:
            errors.append(exc)
        else:
            deadlock = {
                "topology": topo.name,
                "routing": routing,
                "failed_links": failed,
                "priorities": prios,
                "cycles": [
                    {"priority": c.priority, "buffers": list(c.buffers), "switches": list(c.switches)}
                    for c in cycles
                ],
                "deadlock": bool(cycles),
            }
            findings.extend(_deadlock_findings(cycles, routing, failed))
    classes = {d.name: infer_classes(d).to_dict() for d in devices}
    report = AuditReport([d.name for d in devices], findings, errors, deadlock, classes, roles)
    report.locator = _locator(devices)
    return report


def _locator(devices: list[Device]) -> Callable[[str, str], str | None]:
    """(device, object) → the file the object came from (for SARIF locations)."""
    by_name = {d.name: d for d in devices}

    def locate(device: str, obj: str) -> str | None:
        d = by_name.get(device)
        if d is None:
            return None
        parts = obj.split("|")
        key = parts[1] if len(parts) > 2 else (parts[1] if len(parts) == 2 else None)
        return d.file_of(parts[0], key)

    return locate


def _deadlock_findings(cycles, routing: str, failed: list[str]) -> list[Finding]:
    out = []
    for c in cycles:
        out.append(
            Finding(
                "pfc-deadlock-cycle",
                "error",
                c.switches[0],
                "cycle: " + c.describe(),
                f"cyclic buffer dependency on priority {c.priority} through {len(c.buffers)} ingress buffers "
                f"({', '.join(c.switches)}) under {routing} routing"
                + (f" with {', '.join(failed)} failed" if failed else "")
                + ": if all of them fill, PFC pauses each one forever (PFC deadlock)",
                {
                    "priority": str(c.priority),
                    "buffers": " → ".join(c.buffers),
                    "routing": routing,
                    "failed_links": ",".join(failed) or "none",
                },
                "use up-down (valley-free) routing, drop packets that bounce down-up on a lossless class "
                "(or give bounced packets a different priority), and keep the PFC watchdog on",
            )
        )
    return out


def format_errors(errors: list[InputError]) -> list[str]:
    return [str(e) for e in errors]
