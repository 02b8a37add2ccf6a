"""The calibration file (``aifabric calibrate --out CAL.yaml``) and how it is applied.

A calibration holds, per transport measured (``ib``, ``roce``, ``efa``, ``socket`` or ``unknown``),
the parameters with units and how each was obtained, the fit quality and the source files. It is
applied to a fabric of the matching technology — IB calibration → the InfiniBand fabric, RoCE →
the RoCE fabric; a calibration of another transport (EFA, …) is applied to both with a warning —
by :func:`calibrate_fabric` (a :class:`~aifabric.stages.measure.network.FabricNetwork` in, a calibrated
copy out) and to a collective sweep by :func:`calibrate_sweep`.

What applying means:

* ``nic_efficiency`` η multiplies the flow model's ring-step and permutation efficiencies (those
  are relative to an ideal NIC at the goodput ceiling; η is what the measured NIC achieves on an
  uncontended path);
* ``extra_step_latency_us`` δ is added to the path latency, i.e. to every network step's α in
  *performance*'s α-β model (α = NCCL's step constant + path latency);
* ``nic_latency_us`` (perftest) raises the path latency to at least the measured one when no δ is
  known;
* ``pipeline_fill_rounds`` k is used by ``collective --calibration`` (the chunked pipeline model);
  *compare*'s α-β collective model has no chunk term and does not use it.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from aifabric.errors import InputError

FORMAT = 1
TECH_TRANSPORT = {"infiniband": "ib", "roce": "roce"}
TRANSPORTS = ("ib", "roce", "efa", "socket", "unknown")


def merge(fits) -> dict:
    """Per-transport parameters from several files' fits: NIC efficiency from perftest bandwidth
    when measured (else from nccl-tests when identifiable), latency terms from nccl-tests and
    perftest latency. The first file of a kind wins; later ones are listed per source."""
    out: dict[str, dict] = {}
    order = {"perftest-bw": 0, "nccl-tests": 1, "perftest-lat": 2}
    for f in sorted(fits, key=lambda f: order.get(f.kind, 9)):
        d = out.setdefault(f.transport, {})
        for name, p in f.parameters.items():
            if p is None or p.get("value") is None or name in d:
                continue
            d[name] = {**p, "source": Path(f.source).name}
    return out


def build(fits, fit_max_bytes: int, version: str = "") -> dict:
    """The calibration document (what ``--out`` writes and ``--json`` prints, less the rows)."""
    transports = sorted({f.transport for f in fits})
    return {
        "aifabric_calibration": FORMAT,
        "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "created_by": f"aifabric {version} calibrate".strip(),
        "fit_max_bytes": int(fit_max_bytes),
        "transport": transports[0] if len(transports) == 1 else "mixed",
        "parameters": merge(fits),
        "sources": [
            {
                "file": str(f.source),
                "kind": f.kind,
                "transport": f.transport,
                "quantity": f.quantity,
                "layout": f.layout or None,
                "parameters": f.parameters,
                "quality": f.summary(),
                "notes": f.notes,
            }
            for f in fits
        ],
    }


def _plain(x):
    """numpy scalars → Python, recursively (YAML / JSON safe)."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, str | bytes):
        return x.item()
    return x


def write(doc: dict, path) -> Path:
    p = Path(path)
    if not p.parent.exists():
        raise InputError("folder does not exist", field="--out", value=str(p))
    p.write_text(yaml.safe_dump(_plain(doc), sort_keys=False, allow_unicode=True), encoding="utf-8")
    return p


@dataclass
class Calibration:
    """A loaded calibration file; ``warnings`` collects what applying it had to say."""

    path: str
    transport: str
    parameters: dict  # transport → name → {value, unit, how, source}
    warnings: list[str] = field(default_factory=list)

    def value(self, transport: str, name: str) -> float | None:
        p = self.parameters.get(transport, {}).get(name)
        return None if not p or p.get("value") is None else float(p["value"])

    def params_for(self, technology: str) -> tuple[str | None, bool]:
        """The transport whose parameters apply to a fabric of ``technology`` and whether that is
        a different transport (→ warn): the matching one; else, when the file holds neither IB
        nor RoCE, its first transport."""
        want = TECH_TRANSPORT.get(technology, technology)
        if want in self.parameters:
            return want, False
        others = [t for t in self.parameters if t not in ("ib", "roce")]
        if others:
            return others[0], True
        return None, False

    def apply_network(self, evidence):
        """A :class:`~aifabric.stages.measure.network.NetworkEvidence` with every fabric calibrated."""
        from aifabric.stages.measure.network import NetworkEvidence

        return NetworkEvidence(tuple(calibrate_fabric(f, self) for f in evidence.fabrics))


def load(path) -> Calibration:
    """Read a calibration file, or a one-line InputError."""
    from aifabric import yamlsafe
    from aifabric.memory import read_text

    p = Path(path)
    try:
        doc = yamlsafe.load(read_text(p, "calibration file", bytes_per_byte=100), str(p))
    except InputError as exc:
        raise InputError(exc.problem, file=str(p), field="--calibration", allowed=exc.allowed) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            "not YAML",
            file=str(p),
            field=f"line {mark.line + 1}" if mark else None,
            allowed="aifabric calibrate --out output",
        ) from None
    if not isinstance(doc, dict) or doc.get("aifabric_calibration") != FORMAT:
        raise InputError(
            "not an aifabric calibration file",
            file=str(p),
            field="aifabric_calibration",
            value=(doc or {}).get("aifabric_calibration") if isinstance(doc, dict) else None,
            allowed=f"{FORMAT} (written by aifabric calibrate --out)",
        )
    params = doc.get("parameters")
    if not isinstance(params, dict):
        raise InputError(
            "missing parameters", file=str(p), field="parameters", allowed="a mapping per transport"
        )
    for t, d in params.items():
        if not isinstance(d, dict):
            raise InputError("not a mapping", file=str(p), field=f"parameters.{t}")
        for name, v in d.items():
            val = v.get("value") if isinstance(v, dict) else None
            if val is not None and not isinstance(val, int | float):
                raise InputError(
                    "value is not a number", file=str(p), field=f"parameters.{t}.{name}.value", value=val
                )
        eta = (d.get("nic_efficiency") or {}).get("value")
        if eta is not None and not 0 < float(eta) <= 1.5:
            raise InputError(
                "NIC efficiency out of range",
                file=str(p),
                field=f"parameters.{t}.nic_efficiency",
                value=eta,
                allowed="(0, 1.5]",
            )
    return Calibration(str(p), str(doc.get("transport", "unknown")), params)


def calibrate_fabric(fabric, cal: Calibration):
    """``fabric`` (a FabricNetwork) with the calibration of its transport applied (module
    docstring); unchanged, with a warning, when the file has nothing for it."""
    tr, other = cal.params_for(fabric.technology)
    name = Path(cal.path).name
    if tr is None:
        cal.warnings.append(
            f"calibration {name} has no {TECH_TRANSPORT.get(fabric.technology, fabric.technology)} measurement; "
            f"{fabric.key} is not calibrated"
        )
        return fabric
    if other:
        cal.warnings.append(
            f"calibration {name} was measured on {tr}, applied to the {fabric.technology} fabric {fabric.key} "
            "(a different transport)"
        )
    eta = cal.value(tr, "nic_efficiency")
    delta = cal.value(tr, "extra_step_latency_us")
    nic_lat = cal.value(tr, "nic_latency_us")
    changes, what = {}, []
    if eta is not None:
        e = min(float(eta), 1.0)
        changes["nic_efficiency"] = e  # replaces the default NIC efficiency (NCCL's 0.94)
        changes["nic_efficiency_source"] = f"fitted by aifabric calibrate ({name})"
        what.append(f"NIC efficiency {e:.3f}")
    else:
        cal.warnings.append(
            f"calibration {name} ({tr}) has no NIC efficiency; {fabric.key} keeps the model's"
        )
    if delta is not None:
        changes["path_latency_us"] = fabric.path_latency_us + delta
        what.append(f"{delta:+.1f} µs per network step")
    elif nic_lat is not None and nic_lat > fabric.path_latency_us:
        changes["path_latency_us"] = nic_lat
        what.append(f"path latency {nic_lat:.2f} µs (perftest)")
    if not changes:
        return fabric
    return replace(
        fabric, **changes, source=f"{fabric.source}, calibrated by {name} [{tr}: {', '.join(what)}]"
    )


def calibrate_sweep(
    df,
    cal: Calibration,
    op: str,
    ranks: int,
    gpus_per_node: int,
    gpu: str,
    nic_rate_bps: float,
    technology: str,
    algorithm: str,
):
    """An ``nccl_sweep`` DataFrame re-timed by the calibrated model (:mod:`.model`) with the
    parameters of ``technology``'s transport."""
    from aifabric.calibrate.model import Layout, Params, decompose, evaluate
    from aifabric.workload.collectives import NIC_EFFICIENCY

    tr, other = cal.params_for(technology)
    name = Path(cal.path).name
    if tr is None:
        cal.warnings.append(
            f"calibration {name} has no {TECH_TRANSPORT.get(technology, technology)} measurement; sweep not calibrated"
        )
        return df
    if other:
        cal.warnings.append(
            f"calibration {name} was measured on {tr}, applied to {technology} (a different transport)"
        )
    eta = cal.value(tr, "nic_efficiency")
    if eta is None:
        cal.warnings.append(
            f"calibration {name} ({tr}) has no NIC efficiency; the NIC runs at the sourced default "
            f"{NIC_EFFICIENCY:g}"
        )
    p = Params(
        min(eta, 1.0) if eta is not None else NIC_EFFICIENCY,
        cal.value(tr, "extra_step_latency_us") or 0.0,
        cal.value(tr, "pipeline_fill_rounds") or 0.0,
    )
    lay = Layout(op, ranks, gpus_per_node, gpu, nic_rate_bps, technology, algorithm)
    pts = decompose(lay, df["size_bytes"].tolist())
    t, bound = evaluate(pts, p)
    out = df.copy()
    out["time_us"] = t * 1e6
    out["algbw_gbps"] = out["size_bytes"] / t / 1e9
    out["busbw_gbps"] = out["algbw_gbps"] * (df["busbw_gbps"] / df["algbw_gbps"]).fillna(1.0)
    out["algorithm"] = [q.algorithm for q in pts]
    out["protocol"] = [q.protocol for q in pts]
    out["model"] = f"calibrated ({name}, {tr})"
    out["bound"] = bound
    out.attrs.update(df.attrs)
    out.attrs["engine"] = f"{df.attrs.get('engine', 'analytic')} + calibration"
    return out


# perftest's latency tests send a 2-byte message by default (ib_send_lat / ib_write_lat -s 2)
_PERFTEST_SMALL_BYTES = 2


def calibrate_scenario(scenario, cal: Calibration, topology=None):
    """A packet-engine scenario with the calibration of its transport applied, and what was done.

    * ``nic_efficiency`` η → ``fabric.nic_efficiency`` (the host NIC's egress serialises at η × the
      link rate; capped at 1, multiplied into a value the scenario already gives);
    * ``nic_latency_us`` (perftest's zero-size latency, read as one way host → switch → host) →
      ``fabric.nic_latency``: half of what the measurement has above the engine's own one-way
      time for a small message over one switch (two host links: propagation + serialisation, plus
      the switch latency), since a one-way message crosses two NICs;
    * ``extra_step_latency_us`` and ``pipeline_fill_rounds`` are NCCL software terms (per network
      step / per chunk): the packet engine moves packets, not NCCL steps, so they are not applied
      (a warning says so).

    Returns ``(scenario, applied)`` with ``applied`` a dict for the JSON output."""
    fab = scenario.fabric
    tr, other = cal.params_for(fab.technology)
    name = Path(cal.path).name
    applied: dict = {"file": name, "transport": tr, "technology": fab.technology}
    if tr is None:
        cal.warnings.append(
            f"calibration {name} has no {TECH_TRANSPORT.get(fab.technology, fab.technology)} measurement; "
            "the scenario is not calibrated"
        )
        return scenario, applied
    if other:
        cal.warnings.append(
            f"calibration {name} was measured on {tr}, applied to the {fab.technology} fabric (a different transport)"
        )
    changes: dict = {}
    eta = cal.value(tr, "nic_efficiency")
    if eta is not None:
        e = min(float(eta), 1.0) * (fab.nic_efficiency if fab.nic_efficiency is not None else 1.0)
        changes["nic_efficiency"] = e
        applied["nic_efficiency"] = e
    else:
        cal.warnings.append(f"calibration {name} ({tr}) has no NIC efficiency; the NIC runs at line rate")
    lat = cal.value(tr, "nic_latency_us")
    if lat is not None:
        model_ps = _one_switch_one_way_ps(scenario, topology)
        extra = max(0, int(round((lat * 1e6 - model_ps) / 2)))
        applied["nic_latency_measured_us"] = float(lat)
        applied["engine_one_way_us"] = model_ps / 1e6
        if extra == 0:
            cal.warnings.append(
                f"calibration {name}: measured latency {lat:.2f} µs is not above the engine's one-way "
                f"{model_ps / 1e6:.2f} µs over one switch; no NIC latency added"
            )
        changes["nic_latency"] = fab.nic_latency + extra
        applied["nic_latency_us"] = (fab.nic_latency + extra) / 1e6
    for nccl_term in ("extra_step_latency_us", "pipeline_fill_rounds"):
        if cal.value(tr, nccl_term) is not None:
            cal.warnings.append(
                f"calibration {name}: {nccl_term} is an NCCL software term (per step / per chunk); "
                "the packet engine does not use it (compare, train and collective do)"
            )
    if not changes:
        return scenario, applied
    return scenario.model_copy(update={"fabric": fab.model_copy(update=changes)}), applied


def _one_switch_one_way_ps(scenario, topology=None) -> int:
    """The engine's one-way time of a perftest-size message host → switch → host: two host links'
    propagation and serialisation (header + 2 B) plus one switch latency, with the scenario's
    host-link delay and rate (the median over host links when a topology is given)."""
    import numpy as np

    fab = scenario.fabric
    if topology is not None and len(topology.link_a):
        is_host = np.asarray(topology.node_tier) == 0
        sel = is_host[topology.link_a] | is_host[topology.link_b]
        if not sel.any():
            sel = np.ones(len(topology.link_a), bool)
        delay = float(np.median(np.asarray(topology.link_delay_ps)[sel]))
        rate = float(np.median(np.asarray(topology.link_rate_bps)[sel]))
    else:
        delay = float(getattr(scenario.topology, "link_delay_ps", 0) or 0)
        rate = float(getattr(scenario.topology, "link_rate_bps", 0) or 100e9)
    ser = (fab.header_bytes + _PERFTEST_SMALL_BYTES) * 8 * 1e12 / rate
    return int(round(2 * (delay + ser) + fab.switch_latency_ps))
