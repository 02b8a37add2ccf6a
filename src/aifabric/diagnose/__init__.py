"""``aifabric diagnose``: what is wrong with a running fabric, from its counters, and how far the
job falls short of the model.

Pipeline: :mod:`~aifabric.diagnose.readers` (counter files → samples) →
:mod:`~aifabric.diagnose.fabric` (the topology: every port ``device:port`` with its link) →
:mod:`~aifabric.diagnose.counters` (increases over the interval, per egress, both ends merged) →
:mod:`~aifabric.diagnose.findings` (the rules) → optional ``audit`` join (``--configs``) and
:mod:`~aifabric.diagnose.drift` (``--job``: measured busbw against the model).
:mod:`~aifabric.diagnose.export` writes a simulated run's counters in the same formats
(``aifabric simulate --counters``), and :mod:`~aifabric.diagnose.closed_loop` checks the rules on
every risk-library fault (``aifabric validate --diagnose``).
"""

from __future__ import annotations

from pathlib import Path

from aifabric.diagnose.counters import FabricCounters, build
from aifabric.diagnose.fabric import FabricMap, load_fabric
from aifabric.diagnose.findings import Finding, diagnose_counters
from aifabric.diagnose.readers import read_counters
from aifabric.errors import InputError


def diagnose(
    topology,
    counters: list,
    *,
    configs=None,
    job=None,
    interval_s: float | None = None,
    calibration=None,
) -> dict:
    """The ``aifabric diagnose --json`` object (interface.md): ``findings``, ``drift`` (with
    ``job``), plus ``fabric``, ``interval_s``, ``unmatched_ports`` and ``not_checked``."""
    if not counters and job is None:
        raise InputError("missing", field="--counters", allowed="one or more counter files (or --job alone)")
    if counters and topology is None:
        raise InputError("missing", field="--topology", allowed="the fabric the counters come from")
    findings: list[Finding] = []
    out: dict = {
        "fabric": None,
        "formats": [],
        "interval_s": None,
        "findings": [],
        "unmatched_ports": [],
        "not_checked": [] if counters else ["no counters given: drift only"],
    }
    if counters:
        fm = load_fabric(topology)
        fc = build(fm, [read_counters(c) for c in counters], interval_s)
        findings, notes = diagnose_counters(fc)
        if configs is not None:
            findings += config_findings(configs, fm)
        out["fabric"] = {
            "source": fm.source,
            "kind": fm.kind,
            "technology": fm.technology,
            "devices": len(fm.devices),
            "links": len({p.link for p in fm.ports.values()}),
        }
        out.update(
            formats=fc.formats,
            interval_s=fc.interval_s,
            findings=[f.to_dict() for f in findings],
            unmatched_ports=fc.unmatched[:50],
            not_checked=notes,
        )
    if job is not None:
        from aifabric.diagnose.drift import drift

        out["drift"] = drift(job, findings, calibration=calibration)
    return out


def config_findings(folder, fm: FabricMap) -> list[Finding]:
    """``aifabric audit`` of the switch configs in ``folder``, as findings (error / warning only)."""
    from aifabric.audit import audit_files

    d = Path(folder)
    if not d.is_dir():
        raise InputError("not a folder", file=str(d), field="--configs", allowed="a folder of switch configs")
    res = audit_files([d])
    if res.errors:
        raise res.errors[0]
    out = []
    for f in res.findings:
        sev = f.severity if f.severity in ("error", "warning") else None
        if sev is None:
            continue
        dev = fm.device_name(f.device) or f.device
        out.append(
            Finding(
                f.rule,
                dev,
                sev,
                {"config": f.object, **{k: str(v) for k, v in (f.evidence or {}).items()}},
                f"{f.message} — {f.fix}",
            )
        )
    return out


__all__ = ["FabricCounters", "FabricMap", "Finding", "build", "diagnose", "diagnose_counters", "load_fabric"]
