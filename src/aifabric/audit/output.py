"""Audit report renderings: terminal table, JSON, SARIF 2.1.0 and Markdown (plain strings).

The table groups findings by rule (errors first) and prints each finding — device, object,
message — from one line, the message wrapped to the terminal width (80 columns without a terminal),
never cut; ``verbose`` adds the full object, the evidence and the fix under each finding, wrapped to
the same width.
SARIF lets CI systems annotate the config repository: each result points at the file the
object came from and, when the key is found in it, at its line.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from aifabric.audit.rules import SEVERITIES

FORMATS = ("table", "json", "sarif", "markdown")
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_TAG = {"error": "ERROR", "warning": "WARN ", "info": "info "}


def _cut(text: str, width: int) -> str:
    text = str(text)
    lead = text[: len(text) - len(text.lstrip(" "))]
    text = lead + " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _wrapped(head: str, text: str, width: int) -> list[str]:
    """``head`` then ``text`` wrapped to ``width``, continuation lines indented under the text (a
    narrow head column, at most half the width, so the text keeps room)."""
    indent = " " * min(len(head), width // 2)
    wrap = textwrap.TextWrapper(
        width=width, initial_indent=head, subsequent_indent=indent, break_on_hyphens=False
    )
    return wrap.wrap(" ".join(str(text).split())) or [head.rstrip()]


def ranges(values) -> str:
    """[2, 3, 4, 6, 24, 25, 26] → ``2-4,6,24-26``."""
    vals = sorted(set(values))
    out, i = [], 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        out.append(
            str(vals[i]) if j == i else f"{vals[i]},{vals[j]}" if j == i + 1 else f"{vals[i]}-{vals[j]}"
        )
        i = j + 1
    return ",".join(out)


def _short_object(obj: str, width: int = 30) -> str:
    """``PORT_QOS_MAP|Ethernet136,Ethernet144,...|3`` → ``PORT_QOS_MAP|Ethernet136+19|3``."""
    parts = obj.split("|")
    parts = [p.split(",")[0] + f"+{p.count(',')}" if "," in p else p for p in parts]
    return _cut("|".join(parts), width)


def _by_rule(findings) -> list[tuple[str, str, list]]:
    order = {s: i for i, s in enumerate(SEVERITIES)}
    groups: dict[tuple[str, str], list] = {}
    for f in findings:
        groups.setdefault((f.severity, f.rule), []).append(f)
    keys = sorted(groups, key=lambda k: (order[k[0]], k[1]))
    return [(sev, rule, groups[(sev, rule)]) for sev, rule in keys]


def _summary_line(report) -> str:
    c = report.counts()
    n_hosts = len(report.extra.get("hosts", {}))
    n_ib = len(report.extra.get("infiniband", []))
    what = f"{len(report.devices)} switch(es)" + (f", {n_hosts} host(s)" if n_hosts else "")
    what += f", {n_ib} InfiniBand dump(s)" if n_ib else ""
    return f"aifabric audit: {what} — {c['error']} error, {c['warning']} warning, {c['info']} info"


def render_table(report, width: int = 100, verbose: bool = False) -> str:
    """Findings grouped by rule, each from its own line, every line at most ``width`` columns."""
    width = max(int(width), 40)
    lines = [_cut(_summary_line(report), width)]
    for name, c in report.roce_classes.items():
        if c.get("lossless_ports"):
            d = ranges(c["dscps"]) or "none"
            some = f" (+{ranges(c['dscps_some_ports'])} on some ports)" if c["dscps_some_ports"] else ""
            cnp = (
                f"; strict: DSCP {ranges(c['cnp_candidate_dscps'])} → queue {ranges(c['strict_queues'])}"
                if c.get("cnp_candidate_dscps")
                else ""
            )
            lines.append(
                _cut(
                    f"  RoCE classes {name}: DSCP {d}{some} → TC {ranges(c['tcs']) or '-'}, "
                    f"PFC {ranges(c['lossless_priorities'])} on {c['lossless_ports']} port(s){cnp}",
                    width,
                )
            )
    for ib in report.extra.get("infiniband", []):
        if ib.get("format") == "opensm.conf":
            lines.append(
                _cut(
                    f"  InfiniBand SM {Path(ib['file']).name}: routing engine {ib['routing_engine']}, adaptive "
                    f"routing {'on' if ib['adaptive_routing'] else 'off'}",
                    width,
                )
            )
            continue
        kinds = ", ".join(
            f"{k} {v['links']} × {v['width']}{v['speed']}" for k, v in ib.get("by_kind", {}).items()
        )
        lines.append(
            _cut(
                f"  InfiniBand {Path(ib['file']).name}: {ib['links']} links, {ib['degraded']} degraded"
                + (f" ({kinds})" if kinds else ""),
                width,
            )
        )
    if not report.findings:
        lines.append("no findings")
    dev_w = min(max((len(f.device) for f in report.findings), default=6), 22)
    for sev, rule, fs in _by_rule(report.findings):
        lines.append("")
        lines.append(_cut(f"{_TAG[sev]} {rule} ({len(fs)})", width))
        for f in fs:
            obj = _short_object(f.object)
            head = f"  {_cut(f.device, dev_w):<{dev_w}}  {obj}  "
            lines.extend(_wrapped(head, f.message, width))
            if verbose:
                wrap = textwrap.TextWrapper(width=width, initial_indent="      ", subsequent_indent="      ")
                lines.extend(wrap.wrap(f"object: {f.object}"))
                lines.extend(wrap.wrap(f.message))
                if f.evidence:
                    lines.extend(
                        wrap.wrap("evidence: " + "; ".join(f"{k}={v}" for k, v in f.evidence.items()))
                    )
                if f.fix:
                    lines.extend(wrap.wrap(f"fix: {f.fix}"))
    if report.deadlock is not None:
        d = report.deadlock
        lines.append("")
        lines.append(
            _cut(
                f"deadlock check ({d['routing']}, failed: {', '.join(d['failed_links']) or 'none'}): "
                f"{len(d['cycles'])} cycle(s)",
                width,
            )
        )
    if report.findings and not verbose:
        lines.append("")
        lines.append(_cut("details: --verbose (evidence and fix per finding) or --format json", width))
    return "\n".join(lines) + "\n"


def render_json(report) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"


def render_markdown(report) -> str:
    def esc(s: str) -> str:
        return " ".join(str(s).split()).replace("|", "\\|")

    out = [f"## {_summary_line(report)}", ""]
    if report.roce_classes:
        out += ["| switch | RoCE DSCPs | TCs | PFC priorities | lossless ports |", "|---|---|---|---|---|"]
        for name, c in report.roce_classes.items():
            out.append(
                f"| {esc(name)} | {ranges(c['dscps']) or '-'} | {ranges(c['tcs']) or '-'} "
                f"| {ranges(c['lossless_priorities']) or '-'} | {c['lossless_ports']} |"
            )
        out.append("")
    for sev, rule, fs in _by_rule(report.findings):
        from aifabric.audit import rule_catalog

        summary = rule_catalog().get(rule, ("", ""))[1]
        out += [f"### {sev}: `{rule}` ({len(fs)})", ""]
        if summary:
            out += [esc(summary), ""]
        out += ["| device | object | message | fix |", "|---|---|---|---|"]
        for f in fs:
            out.append(f"| {esc(f.device)} | `{esc(f.object)}` | {esc(f.message)} | {esc(f.fix)} |")
        out.append("")
    if not report.findings:
        out += ["No findings.", ""]
    return "\n".join(out)


def _line_of(path: str, needle: str) -> int | None:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    return None


def _location(report, f) -> dict:
    locate = report.locator
    file = locate(f.device, f.object) if locate else None
    loc: dict = {"logicalLocations": [{"name": f.object, "fullyQualifiedName": f"{f.device}/{f.object}"}]}
    if file:
        phys: dict = {"artifactLocation": {"uri": Path(file).as_posix()}}
        parts = f.object.split("|")
        needle = parts[1].split(",")[0] if len(parts) > 1 else parts[0]
        line = _line_of(file, f'"{needle}') or _line_of(file, needle)
        phys["region"] = {"startLine": line or 1}
        loc["physicalLocation"] = phys
    return loc


def render_sarif(report) -> str:
    """SARIF 2.1.0: one run, the rules as ``tool.driver.rules``, one result per finding."""
    from aifabric.audit import rule_catalog

    catalog = rule_catalog()
    used = sorted({f.rule for f in report.findings})
    rules = []
    for rid in sorted(set(catalog) | set(used)):
        sev, summary = catalog.get(rid, ("error", rid))
        rules.append(
            {
                "id": rid,
                "shortDescription": {"text": summary},
                "defaultConfiguration": {"level": _SARIF_LEVEL[sev]},
            }
        )
    results = []
    for f in report.findings:
        results.append(
            {
                "ruleId": f.rule,
                "level": _SARIF_LEVEL[f.severity],
                "message": {"text": f"{f.device}: {f.message}" + (f" Fix: {f.fix}" if f.fix else "")},
                "locations": [_location(report, f)],
                "properties": {"device": f.device, "object": f.object, "evidence": dict(f.evidence)},
            }
        )
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "aifabric-audit", "informationUri": "README.md", "rules": rules}},
                "results": results,
                "invocations": [
                    {
                        "executionSuccessful": not report.errors,
                        "toolExecutionNotifications": [
                            {"level": "error", "message": {"text": str(e)}} for e in report.errors
                        ],
                    }
                ],
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def render(report, fmt: str = "table", *, width: int = 100, verbose: bool = False) -> str:
    if fmt == "table":
        return render_table(report, width=width, verbose=verbose)
    if fmt == "json":
        return render_json(report)
    if fmt == "sarif":
        return render_sarif(report)
    if fmt == "markdown":
        return render_markdown(report)
    raise ValueError(fmt)
