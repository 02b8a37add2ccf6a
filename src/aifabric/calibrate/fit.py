"""Fit the model's parameters to one measurement file, on the sizes ≤ ``fit_max_bytes`` only, and
report every point: measured, model after the fit, and whether it was held out.

* **nccl-tests** (:mod:`aifabric.calibrate.model`): staged, each parameter on the sizes where it
  shows — ``δ`` (extra latency per network step) on the latency-dominated sizes (the model's
  bandwidth time < 20 % of its total), ``η`` (per-NIC efficiency) on the network-bound
  bandwidth-dominated sizes (if there are none — NVLS binds — the file cannot pin it and a lower
  bound is reported instead), then ``k`` (pipeline fill in chunk rounds) on the
  bandwidth-dominated sizes (bandwidth time ≥ 50 %). Quantity: busbw in GB/s (1e9 B/s).
  Errors are model / measured − 1 of busbw, computed from the times (busbw printed as 0.00 at
  tiny sizes still has a time).
* **perftest bandwidth**: per direction (a bidirectional run's figure is the sum of both),
  ``BW(S) = min(P, m · S)`` — the plateau ``P`` (Gb/s) and the message rate ``m`` (Mpps);
  ``η = P / goodput ceiling`` (line rate × MTU / (MTU + headers)) when the line rate is known.
* **perftest latency**: ``t(S) = t0 + S / R`` — the small-message latency ``t0`` (µs) and the
  per-byte rate ``R`` (Gb/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aifabric.calibrate.model import Layout, Params, decompose, evaluate, log_error, nelder_mead
from aifabric.calibrate.parsers import NcclTestsRun, PerftestRun
from aifabric.errors import InputError

DEFAULT_FIT_MAX_BYTES = 256 * 2**20
TARGET_HELD_OUT_ERROR = 0.10
LATENCY_DOMINATED = 0.2  # model bandwidth share below which a size pins the latency
BANDWIDTH_DOMINATED = 0.5  # … and above which it pins the bandwidth terms
HEADER_BYTES = {"ib": 26, "roce": 64, "efa": 64}  # RoCEv2: Eth+IP+UDP+BTH+ICRC+FCS; IB: LRH+BTH+ICRC+VCRC


@dataclass
class FitResult:
    """One file's fit: the contract rows (``fits``), parameters with units, and the quality."""

    source: str
    kind: str  # nccl-tests | perftest-bw | perftest-lat
    transport: str
    quantity: str
    rows: list[dict]
    parameters: dict  # name → {value, unit, how}
    notes: list[str] = field(default_factory=list)
    layout: dict = field(default_factory=dict)

    @property
    def held_out(self) -> list[dict]:
        return [r for r in self.rows if r["held_out"]]

    def summary(self) -> dict:
        """Fit quality: mean |error| on fitted points, max |error| on held-out points, target met."""
        fit = [abs(r["error"]) for r in self.rows if not r["held_out"] and r["error"] is not None]
        held = [abs(r["error"]) for r in self.held_out if r["error"] is not None]
        return {
            "points": len(self.rows),
            "fitted_points": len(self.rows) - len(self.held_out),
            "held_out_points": len(held),
            "fit_mean_abs_error": float(np.mean(fit)) if fit else None,
            "held_out_mean_abs_error": float(np.mean(held)) if held else None,
            "held_out_max_abs_error": float(max(held)) if held else None,
            "held_out_within_10pct": int(sum(e <= TARGET_HELD_OUT_ERROR for e in held)),
            "target_met": bool(held) and bool(max(held) <= TARGET_HELD_OUT_ERROR),
        }


def _param(value, unit: str, how: str) -> dict:
    v = None if value is None else float(value)
    return {"value": v, "unit": unit, "how": how}


def _row(source: str, quantity: str, size: int, measured: float, model: float, held: bool, **extra) -> dict:
    err = None
    if measured and measured > 0 and math.isfinite(model):
        err = model / measured - 1
    return {
        "source": Path(source).name,
        "quantity": quantity,
        "size_bytes": int(size),
        "measured": float(measured),
        "model": float(model),
        "held_out": bool(held),
        "error": err,
        **extra,
    }


# ---- nccl-tests ------------------------------------------------------------------------------
def nccl_layout(
    run: NcclTestsRun,
    gpus_per_node: int | None,
    nic_rate_bps: float | None,
    gpu: str | None,
    transport: str | None,
    algorithm: str | None = None,
) -> tuple[Layout, dict, list[str]]:
    """The layout the fit assumes, what each value came from, and warnings for assumptions."""
    notes = []
    if run.op is None:
        raise InputError(
            "cannot tell which collective this is",
            file=run.source,
            allowed="a '# Collective test starting:' line or a file name with all_reduce_perf, all_gather_perf, …",
        )
    if not run.ranks:
        raise InputError(
            "cannot tell the number of ranks",
            file=run.source,
            allowed="a '# Using devices' block, NCCL INFO 'nRanks' lines, or an op whose busbw/algbw ratio gives it",
        )
    how = {"ranks": run.ranks_from}
    if gpus_per_node is None and run.nodes:
        gpus_per_node, how["gpus_per_node"] = run.ranks // run.nodes, "hostnames in the file"
    if gpus_per_node is None and run.info.local_ranks:
        gpus_per_node, how["gpus_per_node"] = run.info.local_ranks, "NCCL INFO localRanks"
    if gpus_per_node is None:
        gpus_per_node, how["gpus_per_node"] = min(8, run.ranks), "assumed (pass --gpus-per-node)"
        notes.append(f"{Path(run.source).name}: GPUs per node not in the file; assumed {gpus_per_node}")
    else:
        how.setdefault("gpus_per_node", "--gpus-per-node")
    if gpu is None:
        gpu, how["gpu"] = run.gpu, "device line"
    else:
        how["gpu"] = "--gpu"
    if gpu is None:
        gpu, how["gpu"] = "h100", "assumed (pass --gpu)"
        notes.append(f"{Path(run.source).name}: GPU model not in the file; assumed h100")
    if nic_rate_bps is not None:
        how["nic_rate"] = "--nic-rate"
    elif run.info.nic_speeds_mbps and gpus_per_node:
        # NCCL INFO lists the node's NICs with their speed: their sum shared by the node's GPUs
        nic_rate_bps = sum(run.info.nic_speeds_mbps) * 1e6 / gpus_per_node
        how["nic_rate"] = f"NCCL INFO NIC speeds ({len(run.info.nic_speeds_mbps)} NICs) / GPUs per node"
    if nic_rate_bps is None:
        nic_rate_bps, how["nic_rate"] = 400e9, "assumed (pass --nic-rate)"
        notes.append(f"{Path(run.source).name}: NIC rate per GPU not in the file; assumed 400 Gb/s")
    tech = {"roce": "roce"}.get(transport or "", "infiniband")
    algo = run.info.algorithm if run.info.algorithm in ("ring", "tree", "nvls", "nvls-tree") else "auto"
    how["algorithm"] = "NCCL_ALGO / tuner lines" if algo != "auto" else "NCCL's tuner choice by the model"
    if algorithm is not None and run.info.algorithm is None:
        algo, how["algorithm"] = algorithm, "--algorithm"
    elif algorithm is not None and algorithm != run.info.algorithm:
        notes.append(
            f"{Path(run.source).name}: the file sets NCCL_ALGO {run.info.algorithm}; --algorithm not used"
        )
    proto = run.info.protocol if run.info.protocol in ("ll", "ll128", "simple") else "auto"
    if proto != "auto":
        how["protocol"] = "NCCL_PROTO"
    if run.info.tuning:
        how["per_size"] = f"{len({b for b, _, _ in run.info.tuning})} sizes from NCCL INFO tuner lines"
    lay = Layout(run.op, int(run.ranks), int(gpus_per_node), gpu, float(nic_rate_bps), tech, algo, proto)
    return lay, how, notes


def fit_nccl(
    run: NcclTestsRun,
    fit_max_bytes: int = DEFAULT_FIT_MAX_BYTES,
    gpus_per_node: int | None = None,
    nic_rate_bps: float | None = None,
    gpu: str | None = None,
    transport: str | None = None,
    algorithm: str | None = None,
) -> FitResult:
    """Fit ``δ``, ``η`` (when identifiable) and ``k`` to an nccl-tests run (module docstring)."""
    given = transport
    transport = run.transport or transport or "unknown"  # the file says it, else the flag
    lay, how, notes = nccl_layout(run, gpus_per_node, nic_rate_bps, gpu, transport, algorithm)
    notes += _transport_note(run, given)
    try:
        choices = {b: (a, p) for b, a, p in run.info.tuning}
        pts = decompose(lay, [r.size_bytes for r in run.rows], choices)
    except InputError as exc:
        raise exc.with_file(run.source) from None
    meas = np.array([r.time_us * 1e-6 for r in run.rows])
    fit = np.array([r.size_bytes <= fit_max_bytes for r in run.rows])
    if not fit.any():
        raise InputError(
            "no size at or below --fit-max-bytes",
            file=run.source,
            field="--fit-max-bytes",
            value=fit_max_bytes,
            allowed=f"≥ {min(r.size_bytes for r in run.rows)} B (the smallest size in the file)",
        )
    t0, _ = evaluate(pts, Params())
    bw0 = np.array([max(p.t_net_s, p.t_nvl_s) for p in pts])
    share = bw0 / t0
    lat_sel = fit & (share < LATENCY_DOMINATED)
    bw_sel = fit & (share >= BANDWIDTH_DOMINATED)
    simple = np.array([p.protocol == "simple" for p in pts])
    net_bound = bw_sel & simple & np.array([p.t_net_s >= p.t_nvl_s for p in pts])

    def sub(mask):
        return [p for p, m in zip(pts, mask, strict=True) if m], meas[mask]

    delta = 0.0
    if lat_sel.any():
        sp, sm = sub(lat_sel)
        delta = float(
            nelder_mead(lambda x: log_error(evaluate(sp, Params(1.0, x[0]))[0], sm), [10.0], [5.0])[0]
        )
        how_delta = f"fitted on {int(lat_sel.sum())} latency-dominated sizes"
    else:
        how_delta = "no latency-dominated size ≤ --fit-max-bytes: not fitted (0)"
    eta, eta_how, eta_lb, k = 1.0, "", None, 0.0
    how_k = "no bandwidth-dominated size ≤ --fit-max-bytes: not fitted (0)"
    if net_bound.sum() >= 2:  # η and the fill together, on the network-bound Simple-protocol sizes
        sp, sm = sub(net_bound)
        x = nelder_mead(
            lambda x: log_error(evaluate(sp, Params(_clip(x[0]), delta, max(x[1], 0.0)))[0], sm),
            [0.8, 2.0],
            [0.1, 1.0],
            iters=2000,
        )
        eta, k = _clip(x[0]), max(float(x[1]), 0.0)
        eta_how = how_k = (
            f"fitted (η and k together) on {int(net_bound.sum())} network-bound Simple-protocol sizes"
        )
    elif bw_sel.any():  # the fill alone, on the bandwidth-dominated sizes, δ fixed
        sp, sm = sub(bw_sel)
        x = nelder_mead(
            lambda x: log_error(evaluate(sp, Params(1.0, delta, max(x[0], 0.0)))[0], sm), [2.0], [1.0]
        )
        k = max(float(x[0]), 0.0)
        how_k = f"fitted on {int(bw_sel.sum())} bandwidth-dominated sizes"
    p = Params(eta, delta, k)
    t, bound = evaluate(pts, p)
    if net_bound.sum() < 2:
        # η is not observable: the NVLink / NVLS term binds. Lower bound: below it the network
        # would bind and the model would be slower than measured at some fitted size.
        lat_fill = np.array([q.latency_other_s + q.net_hops * (q.net_alpha_s + delta * 1e-6) for q in pts])
        room = meas - lat_fill
        cand = [q.t_net_s / r for q, r, m in zip(pts, room, bw_sel, strict=True) if m and r > 0]
        eta_lb = max(cand) if cand else None
        eta = None
        eta_how = "not identifiable: the NVLink/NVLS term binds at every fitted size" + (
            f"; lower bound {eta_lb:.2f} (below it the network would bind)" if eta_lb else ""
        )
        notes.append(f"{Path(run.source).name}: {eta_how}")
    factor = {"all-reduce": lambda n: 2 * (n - 1) / n}.get(run.op)
    rows = []
    for r, q, tm, b, f in zip(run.rows, pts, t, bound, fit, strict=True):
        ratio = r.busbw_gbps / r.algbw_gbps if r.algbw_gbps > 0 else (factor(lay.ranks) if factor else 1.0)
        meas_bus = r.size_bytes / (r.time_us * 1e-6) / 1e9 * ratio
        model_bus = r.size_bytes / tm / 1e9 * ratio
        row = _row(
            run.source,
            "busbw_gbytes_per_s",
            r.size_bytes,
            meas_bus,
            model_bus,
            not f,
            measured_time_us=r.time_us,
            model_time_us=float(tm * 1e6),
            algorithm=q.algorithm,
            protocol=q.protocol,
            bound=b,
        )
        row["error"] = r.time_us * 1e-6 / tm - 1  # busbw ratio, exact from the times
        rows.append(row)
    params = {
        "nic_efficiency": _param(
            eta, "fraction of the goodput ceiling (line rate × MTU/(MTU + headers)) per NIC", eta_how
        ),
        "nic_efficiency_lower_bound": _param(eta_lb, "fraction", "when not identifiable")
        if eta is None
        else None,
        "extra_step_latency_us": _param(
            delta, "µs per network step, added to NCCL's hwLat.net (tuning.cc)", how_delta
        ),
        "pipeline_fill_rounds": _param(
            k, "chunk rounds (NCCL calcCollChunking chunks × channels × heads)", how_k
        ),
    }
    params = {k2: v for k2, v in params.items() if v is not None}
    layout = {
        "op": run.op,
        "test": run.test,
        "ranks": lay.ranks,
        "gpus_per_node": lay.gpus_per_node,
        "nodes": lay.nodes,
        "gpu": lay.gpu,
        "nic_rate_gbps": lay.nic_rate_bps / 1e9,
        "algorithm": lay.algorithm,
        "how": how,
    }
    return FitResult(run.source, "nccl-tests", transport, "busbw_gbytes_per_s", rows, params, notes, layout)


def robust_log_error(t_model: np.ndarray, t_meas: np.ndarray, scale: float = 0.1) -> float:
    """Cauchy loss on log ratios: a warm-up row (perftest's first size) does not drag the fit."""
    r = np.log(np.maximum(t_model, 1e-15) / t_meas) / scale
    return float(np.sum(np.log1p(r * r)))


def _transport_note(run, given: str | None) -> list[str]:
    if given and run.transport and given != run.transport:
        return [
            f"{Path(run.source).name}: the file says transport {run.transport}; --transport {given} not used"
        ]
    return []


def _clip(x: float) -> float:
    return min(max(float(x), 0.05), 1.0)


# ---- perftest --------------------------------------------------------------------------------
def _goodput_ceiling_gbps(rate_bps: float, mtu: int, transport: str) -> float:
    hdr = HEADER_BYTES.get(transport, 64)
    return rate_bps / 1e9 * mtu / (mtu + hdr)


def fit_perftest(
    run: PerftestRun,
    fit_max_bytes: int = DEFAULT_FIT_MAX_BYTES,
    nic_rate_bps: float | None = None,
    transport: str | None = None,
) -> FitResult:
    """Fit a perftest bandwidth or latency sweep (module docstring)."""
    given = transport
    transport = run.transport or transport or "unknown"  # the file says it, else the flag
    sizes = np.array([r.size_bytes for r in run.rows], dtype=float)
    fit = sizes <= fit_max_bytes
    notes: list[str] = _transport_note(run, given)
    if not fit.any():
        raise InputError(
            "no size at or below --fit-max-bytes",
            file=run.source,
            field="--fit-max-bytes",
            value=fit_max_bytes,
            allowed=f"≥ {int(sizes.min())} B (the smallest size in the file)",
        )
    name = Path(run.source).name
    if not (~fit).any():
        notes.append(
            f"{name}: every size is ≤ --fit-max-bytes ({fit_max_bytes} B), so no point is held out; "
            "pass a smaller --fit-max-bytes to validate the fit"
        )
    if run.kind == "perftest-bw":
        per_dir = 0.5 if run.bidirectional else 1.0
        meas = np.array([r.values["avg_gbps"] for r in run.rows]) * per_dir
        ok = meas > 0
        sel = fit & ok

        def model(x):
            plateau, rate = abs(x[0]), abs(x[1])
            return np.minimum(plateau, rate * 1e6 * sizes * 8 / 1e9)

        x0 = [float(meas[sel].max()), float(np.median((meas[sel] / (sizes[sel] * 8 / 1e9)) / 1e6))]

        def err(x):
            return robust_log_error(model(x)[sel], meas[sel])

        x = nelder_mead(err, x0, [x0[0] * 0.1, x0[1] * 0.1], iters=2000)
        plateau, rate = abs(float(x[0])), abs(float(x[1]))
        mod = model(x)
        eta = None
        how = "--nic-rate not given: efficiency needs the line rate"
        if nic_rate_bps:
            ceiling = _goodput_ceiling_gbps(nic_rate_bps, run.mtu_bytes or 4096, transport)
            eta = plateau / ceiling
            how = f"plateau / goodput ceiling {ceiling:.1f} Gb/s ({nic_rate_bps / 1e9:g} Gb/s line, MTU {run.mtu_bytes or 4096} B)"
            if eta > 1.0:
                notes.append(
                    f"{name}: plateau {plateau:.1f} Gb/s per direction is above the goodput ceiling of "
                    f"{nic_rate_bps / 1e9:g} Gb/s — check --nic-rate"
                )
        else:
            notes.append(f"{name}: pass --nic-rate to turn the {plateau:.1f} Gb/s plateau into an efficiency")
        params = {
            "achieved_gbps": _param(
                plateau, "Gb/s per direction (1e9 bit/s, payload)", "plateau of BW average"
            ),
            "message_rate_mpps": _param(rate, "million messages/s per direction", "small-size slope"),
            "nic_efficiency": _param(
                eta, "fraction of the goodput ceiling (line rate × MTU/(MTU + headers))", how
            ),
        }
        rows = [
            _row(
                run.source,
                "bw_gbps",
                s,
                m,
                md,
                not f,
                direction="per direction" if run.bidirectional else "one way",
            )
            for s, m, md, f in zip(sizes, meas, mod, fit, strict=True)
        ]
        if run.bidirectional:
            notes.append(f"{name}: bidirectional run; its figures (sum of both directions) are halved")
        return FitResult(run.source, run.kind, transport, "bw_gbps", rows, params, notes)
    key = "t_typical_us" if "t_typical_us" in run.rows[0].values else "t_avg_us"
    meas = np.array([r.values.get(key, math.nan) for r in run.rows])
    sel = fit & np.isfinite(meas) & (meas > 0)
    if not sel.any():
        raise InputError("no usable latency rows", file=run.source, allowed="t_typical or t_avg > 0")

    def model(x):
        return abs(x[0]) + sizes * 8 / (abs(x[1]) * 1e3)  # µs; rate in Gb/s

    x0 = [float(meas[sel].min()), 100.0]
    x = nelder_mead(lambda x: robust_log_error(model(x)[sel], meas[sel]), x0, [x0[0] * 0.2, 50.0], iters=2000)
    t0, rate = abs(float(x[0])), abs(float(x[1]))
    mod = model(x)
    params = {
        "nic_latency_us": _param(
            t0,
            "µs (perftest's figure: one way for *_lat send/write, round trip for read)",
            f"{key} intercept",
        ),
        "latency_rate_gbps": _param(rate, "Gb/s (per-byte slope of latency)", f"{key} slope"),
    }
    rows = [
        _row(run.source, "latency_us", s, m, md, not f)
        for s, m, md, f in zip(sizes, meas, mod, fit, strict=True)
    ]
    return FitResult(run.source, run.kind, transport, "latency_us", rows, params, notes)
