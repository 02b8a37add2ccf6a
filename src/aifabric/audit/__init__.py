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
from dataclasses import dataclass, field, replace
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
    "a lossless-path field (pfc_enable per port, scheduler, WRED thresholds, PFC watchdog, cable "
    "length, MTU, buffer profiles and PG/queue bindings, lookup-table rows) differs from the majority "
    "of the switch's role (error for pfc_enable, buffer profiles and PG bindings)",
    rule_fleet_inconsistent,
)
INTENTS = ("auto", "dcqcn", "pfc-only")


def rule_catalog() -> dict[str, tuple[str, str]]:
    """Every rule id the audit can report → (usual severity, one-line summary)."""
    from aifabric.audit.host import HOST_RULES
    from aifabric.audit.ib import IB_RULES
    from aifabric.audit.rules import EXTRA_IDS

    out = {rid: (r.severity, r.summary) for rid, r in RULES.items()}
    for rid, sev in EXTRA_IDS.items():
        out.setdefault(rid, (sev, rid))
    out.update(HOST_RULES)
    out.update(IB_RULES)
    return out


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


CONFIG_SUFFIXES = (".json", ".ini", ".yaml", ".yml", ".txt", ".conf", ".cfg", ".env", ".out")
MAX_TEXT_BYTES = 64 * 1024 * 1024  # larger files are refused before reading (memory guard)


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


def _read(p: Path) -> str:
    import stat

    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError("no such file", file=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.__class__.__name__}", file=str(p)) from None
    if not stat.S_ISREG(st.st_mode):  # /dev/zero, a FIFO: reading would never end
        raise InputError("not a regular file", file=str(p), allowed="a config file")
    size = st.st_size
    if size > MAX_TEXT_BYTES:
        raise InputError(
            f"file too large ({size} bytes)", file=str(p), allowed=f"at most {MAX_TEXT_BYTES} bytes"
        )
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc.__class__.__name__}", file=str(p)) from None


def classify(p: Path, text: str | None = None) -> str:
    """``sonic`` | ``ini`` | ``nvue`` | ``eos`` | ``host`` | ``ib``, by suffix and content.
    Raises InputError for a file none of the readers recognises."""
    from aifabric.audit import eos, host, ib, nvue

    suf = p.suffix.lower()
    if suf == ".json":
        return "sonic"
    if suf == ".ini":
        return "ini"
    text = _read(p) if text is None else text
    if ib.kind_of(text):
        return "ib"
    if nvue.looks_like_nvue(text) or suf in (".yaml", ".yml"):
        return "nvue"
    if eos.looks_like_eos(text):
        return "eos"
    if host.kind_of(text):
        return "host"
    if text.lstrip().startswith("{"):
        return "sonic"
    raise InputError(
        "unrecognised config",
        file=str(p),
        allowed="SONiC config_db .json, pg_profile_lookup .ini, NVUE yaml or nv set lines, EOS running-config, "
        "mlnx_qos / mlxconfig / sysfs ecn / NCCL env text, ibnetdiscover / iblinkinfo output",
    )


@dataclass
class Inputs:
    devices: list[Device] = field(default_factory=list)
    hosts: list = field(default_factory=list)
    ib: list[tuple[str, str]] = field(default_factory=list)  # (file, text)
    errors: list[InputError] = field(default_factory=list)


def load_inputs(paths, lookups=()) -> Inputs:
    """Parse each CONFIG argument → switches, hosts and InfiniBand dumps, plus one line per problem.

    A group (``a+b+c`` or a directory) of SONiC JSON files and INI tables is one switch; a group
    of host files is one host (named after the directory or the first file); NVUE and EOS files
    and IB dumps are one each."""
    from aifabric.audit import eos, nvue
    from aifabric.audit.host import load_host

    res = Inputs()
    loose_ini: list[Path] = [Path(x) for x in lookups]
    for arg in paths:
        try:
            group = _expand(arg)
        except InputError as exc:
            res.errors.append(exc)
            continue
        kinds: dict[str, list[tuple[Path, str | None]]] = {}
        bad = False
        for p in group:
            try:
                text = None if p.suffix.lower() in (".json", ".ini") else _read(p)
                kinds.setdefault(classify(p, text), []).append((p, text))
            except InputError as exc:
                res.errors.append(exc)
                bad = True
        if bad:
            continue
        for kind, items in kinds.items():
            if kind in ("nvue", "eos"):
                mod = nvue if kind == "nvue" else eos
                for p, text in items:
                    try:
                        res.devices.append(mod.to_device(p, text or ""))
                    except InputError as exc:
                        res.errors.append(exc)
            elif kind == "ib":
                res.ib.extend((str(p), text or "") for p, text in items)
            elif kind == "host":
                hp = [p for p, _ in items]
                arg_path = Path(str(arg))
                name = arg_path.name if arg_path.is_dir() else hp[0].stem
                try:
                    res.hosts.append(load_host(hp, name))
                except InputError as exc:
                    res.errors.append(exc)
        configs = [p for p, _ in kinds.get("sonic", [])]
        inis = [p for p, _ in kinds.get("ini", [])]
        if not configs:
            loose_ini.extend(inis)
            continue
        dev, probs = load_device(configs, inis)
        res.errors.extend(probs)
        if dev is not None:
            res.devices.append(dev)
    devices, errors = res.devices, res.errors
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
    seen_h: dict[str, int] = {}
    for h in res.hosts:
        seen_h[h.name] = seen_h.get(h.name, 0) + 1
    for h in res.hosts:
        if seen_h[h.name] > 1 or h.name in seen:
            h.name = f"{h.name}@{Path(h.files[0]).parent.name or Path(h.files[0]).stem}"
    return res


def load_devices(paths, lookups=()) -> tuple[list[Device], list[InputError]]:
    """Parse each CONFIG argument (a file, ``a+b`` or a directory = one switch) → switches, problems."""
    res = load_inputs(paths, lookups)
    return res.devices, res.errors


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
    inputs = load_inputs(paths, lookups)
    devices, hosts = inputs.devices, inputs.hosts
    errors.extend(inputs.errors)
    roles = assign_roles({d.name: d.metadata.get("type", "") for d in devices}, rules)
    for d in devices:  # switches of another OS are not compared field by field with SONiC ones
        if d.dialect != "sonic":
            roles[d.name] = f"{roles[d.name]}/{d.dialect}"
    cnp_source = "--cnp-dscp"
    if cnp_dscp is None:
        stated = {h.cnp_dscp for h in hosts if h.cnp_dscp is not None}
        if len(stated) == 1:
            cnp_dscp = stated.pop()
            cnp_source = "mlxconfig CNP_DSCP_P1 of " + ", ".join(
                h.name for h in hosts if h.cnp_dscp is not None
            )
    fab = Fabric(
        devices,
        nic_dscp=nic_dscp,
        cnp_dscp=cnp_dscp,
        cnp_dscp_source=cnp_source,
        intent=intent,
        roles=dict(roles),
    )
    findings = run_rules(fab, only)
    findings = [_native(devices, f) for f in findings]
    extra: dict = {}
    if hosts:
        from aifabric.audit.host import host_findings

        hf = host_findings(hosts, devices, intent=intent, nic_dscp=nic_dscp)
        findings.extend(f for f in hf if only is None or f.rule in only)
        extra["hosts"] = {h.name: h.to_dict() for h in hosts}
    if inputs.ib:
        from aifabric.audit.ib import ib_findings

        extra["infiniband"] = []
        for file, text in inputs.ib:
            try:
                fs, summary = ib_findings(file, text)
            except InputError as exc:
                errors.append(exc)
                continue
            findings.extend(f for f in fs if only is None or f.rule in only)
            extra["infiniband"].append(summary)
    if not devices and not hosts and not inputs.ib and paths and not errors:
        errors.append(InputError("no switch, host or fabric config found", field="CONFIG"))
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
    order = {sev: i for i, sev in enumerate(SEVERITIES)}
    findings.sort(key=lambda f: (order[f.severity], f.device, f.rule, f.object))
    report = AuditReport([d.name for d in devices], findings, errors, deadlock, classes, roles, extra)
    report.locator = _locator(devices, hosts, [fl for fl, _ in inputs.ib])
    return report


def _native(devices: list[Device], f: Finding) -> Finding:
    """On an NVUE or EOS switch, name the object as that switch's own configuration does."""
    d = next((x for x in devices if x.name == f.device), None)
    if d is None or d.dialect == "sonic":
        return f
    native = d.native_object(f.object)
    if native == f.object:
        return f
    return replace(f, object=native, evidence={**f.evidence, "model_object": f.object, "dialect": d.dialect})


def _locator(devices: list[Device], hosts=(), ib_files=()) -> Callable[[str, str], str | None]:
    """(device, object) → the file the object came from (for SARIF locations)."""
    by_name = {d.name: d for d in devices}
    host_files = {h.name: h for h in hosts}
    ib_by_stem = {Path(f).stem: f for f in ib_files}

    def locate(device: str, obj: str) -> str | None:
        d = by_name.get(device)
        if d is None:
            h = host_files.get(device)
            if h is not None:
                return h.file_for(obj)
            return ib_by_stem.get(device)
        if d.dialect != "sonic":
            return d.files[0]
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
