"""DCQCN at 100G / 400G: long flows sharing one bottleneck, and the risk testbed's ring step.

    .venv/bin/python bench/dcqcn_400g.py                  # dumbbell summary, every preset, 100G and 400G
    .venv/bin/python bench/dcqcn_400g.py --trace          # + per-flow rate / target / alpha every slice
    .venv/bin/python bench/dcqcn_400g.py --ring           # + the risk testbed ring step (quiet, seeds 1, 2)
    .venv/bin/python bench/dcqcn_400g.py --presets nvidia-firmware --rates 400 --flows 2 --trace

Dumbbell: ``--flows`` senders on a star, each sending ``--size`` to host 0, so the switch egress to
host 0 is the one bottleneck (the ECMP collision of the ring step reduced to its core). The engine
runs in ``--slice-us`` slices; after each the per-flow DCQCN state (``fr[:, FR_RATE / FR_TARGET /
FR_ALPHA]``), the CNPs each flow received, the bytes it delivered in the slice and the bottleneck
queue are sampled. The summary gives per preset and line rate: the time until every flow's
delivered rate stays within ±``--tol`` of the fair share (``conv``), the mean of the per-slice
Jain index after it, the lowest pacing rate any flow was cut to, CNPs per flow, mean / max queue,
and the last flow's completion against the max-min time.

Sanity reference: Zhu et al. (SIGCOMM 2015), figs. 14-16: two DCQCN flows on a 40G bottleneck reach
their fair share within a few ms and the queue settles between Kmin and Kmax.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

KMIN, KMAX, PMAX = 150_000, 1_500_000, 1.0  # the risk testbed's ECN ramp (risk.py, S11)


def dumbbell(preset: str, gbps: int, n: int, size: int, seed: int = 1, ecn=(KMIN, KMAX, PMAX), over=None):
    """A star of ``n`` + 1 hosts: hosts 1..n each send ``size`` bytes to host 0 at t = 0."""
    from aifabric.scenario import scenario_from_dict
    from aifabric.topology import from_spec
    from aifabric.workload.traffic import _table

    kmin, kmax, pmax = ecn
    sc = scenario_from_dict(
        {
            "name": f"dumbbell-{preset}-{gbps}g",
            "seed": seed,
            "topology": {"kind": "star", "hosts": n + 1, "link_rate": f"{gbps}Gbps", "link_delay": "200ns"},
            "fabric": {
                "technology": "roce",
                "mtu": "4096B",
                "header": "64B",
                "switch_latency": "600ns",
                "switch_buffer": "128000000B",
                "pfc": {"enabled": True, "mode": "dynamic", "alpha": 0.125},
                "ecn": {"enabled": True, "kmin": f"{kmin}B", "kmax": f"{kmax}B", "pmax": pmax},
                "congestion_control": "dcqcn",
                "dcqcn": {"preset": preset, **(over or {})},
                "routing": "ecmp",
            },
            "sim": {"until": "1s"},
        }
    )
    topo = from_spec(sc.topology)
    flows = _table(np.arange(1, n + 1), np.zeros(n, dtype=np.int64), size, 0)
    return sc, topo, flows


def trace(sc, topo, flows, slice_us: float, until_us: float):
    """Run in slices; returns (State, samples) with samples a dict of per-slice arrays."""
    from aifabric.sim import engine
    from aifabric.sim import kernel as K

    st = engine.compile_scenario(sc, topo, flows)
    step = int(slice_us * 1e6)
    t = 0
    cols = {k: [] for k in ("t_us", "rate", "target", "alpha", "cnps", "bytes", "queue")}
    last_rx = st.fl[:, K.FL_RCVD].copy()
    status = K.ST_UNTIL
    while t < until_us * 1e6 and status != K.ST_DONE:
        t += step
        status = engine.run_state(st, t)
        rx = st.fl[:, K.FL_RCVD].copy()
        cols["t_us"].append(t / 1e6)
        cols["rate"].append(st.fr[:, K.FR_RATE].copy())
        cols["target"].append(st.fr[:, K.FR_TARGET].copy())
        cols["alpha"].append(st.fr[:, K.FR_ALPHA].copy())
        cols["cnps"].append(st.fl[:, K.FL_CNP_RX].copy())
        cols["bytes"].append(rx - last_rx)
        cols["queue"].append(int(st.pt[:, K.PT_QBYTES].max()))
        last_rx = rx
    return st, {k: np.array(v) for k, v in cols.items()}


def summarize(st, s, gbps: int, n: int, size: int, slice_us: float, tol: float) -> dict:
    from aifabric.sim import kernel as K

    fair = gbps * 1e9 / n
    thr = s["bytes"] * 8 / (slice_us * 1e-6)  # delivered bit/s per slice and flow
    active = st.fl[:, K.FL_DONE_T] < 0
    done_t = np.where(st.fl[:, K.FL_DONE_T] >= 0, st.fl[:, K.FL_DONE_T], np.iinfo(np.int64).max)
    # slices while every flow is still sending (the fair-share phase)
    both = s["t_us"] * 1e6 <= done_t.min()
    ok = (np.abs(thr - fair) <= tol * fair).all(axis=1) & both
    bad = np.flatnonzero(~ok & both)
    conv = None
    if ok.any():
        first_ok_after_bad = bad[-1] + 1 if len(bad) else 0
        if first_ok_after_bad < both.sum():
            conv = float(s["t_us"][first_ok_after_bad] - slice_us)
    jain = (thr.sum(axis=1) ** 2) / (n * (thr**2).sum(axis=1).clip(1e-9))
    payload_bits = size * 8 * n * (4160 / 4096)
    ideal_us = payload_bits / (gbps * 1e9) * 1e6
    last = st.fl[:, K.FL_DONE_T].max() / 1e6 if not active.any() else float("nan")
    return {
        "conv_us": conv,
        "jain": float(jain[both].mean()) if both.any() else float("nan"),
        "min_rate_gbps": float(s["rate"].min() / 1e9),
        "cnps_per_flow": float(st.fl[:, K.FL_CNP_RX].mean()),
        "q_mean_kb": float(s["queue"][both].mean() / 1e3) if both.any() else 0.0,
        "q_max_kb": float(s["queue"].max() / 1e3),
        "last_us": last,
        "maxmin_us": ideal_us,
    }


def ring(presets, seeds, over=None) -> None:
    """The risk testbed (risk.Testbed: 4 leaves x 8 hosts, 8 spines, 400G, 4 MiB ring step, ECMP)
    with DCQCN in place of HPCC (ECN 150 KB / 1.5 MB / Pmax 1, as risk.py's mismatch scenario)."""
    import aifabric.stages.risk.testbed as R

    tb = R.Testbed()
    orig = R._fabric

    def with_cc(preset):
        def fab(tb_, mis, duty=None):
            f = orig(tb_, mis, duty)
            if preset != "hpcc":
                f.update(
                    {
                        "ecn": {"enabled": True, "kmin": f"{KMIN}B", "kmax": f"{KMAX}B", "pmax": PMAX},
                        "congestion_control": "dcqcn",
                        "dcqcn": {"preset": preset, **(over or {})},
                    }
                )
            return f

        return fab

    print("\n| cc | seed | ring step (µs) | ECN marks |")
    print("|---|---:|---:|---:|")
    try:
        for p in ["hpcc", *presets]:
            R._fabric = with_cc(p)
            for seed in seeds:
                r = R.run_testbed(tb, None, "quiet", seed)
                print(f"| {p} | {seed} | {r.step_us:.1f} | {r.ecn_marks} |", flush=True)
    finally:
        R._fabric = orig


def main(argv=None) -> int:
    from aifabric.sim.dcqcn import DCQCN_PRESETS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default=",".join(sorted(DCQCN_PRESETS)))
    ap.add_argument("--rates", default="100,400", help="line rates in Gb/s")
    ap.add_argument("--flows", type=int, default=2)
    ap.add_argument("--size", type=int, default=32 * 2**20, help="bytes per flow")
    ap.add_argument("--slice-us", type=float, default=20.0)
    ap.add_argument("--tol", type=float, default=0.2, help="convergence band around the fair share")
    ap.add_argument("--trace", action="store_true", help="print the per-slice trajectory")
    ap.add_argument("--ring", action="store_true", help="also run the risk testbed ring step")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--set", default="", help="fabric.dcqcn overrides, e.g. byte_counter=2MB,rate_ai=5Mbps")
    a = ap.parse_args(argv)
    presets = [p for p in a.presets.split(",") if p]
    over = dict(kv.split("=", 1) for kv in a.set.split(",") if kv)
    print(
        f"dumbbell: {a.flows} flows x {a.size / 2**20:g} MiB into one port; ECN {KMIN / 1e3:g} / "
        f"{KMAX / 1e3:g} KB, Pmax {PMAX:g}; slices of {a.slice_us:g} µs; conv = within ±{a.tol:.0%} of fair; overrides {over or 'none'}\n"
    )
    print(
        "| preset | Gb/s | conv (µs) | Jain | min rate (Gb/s) | CNPs/flow | queue mean / max (KB) | "
        "last FCT / max-min (µs) | wall (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in presets:
        for gbps in (int(r) for r in a.rates.split(",")):
            t0 = time.perf_counter()
            sc, topo, flows = dumbbell(p, gbps, a.flows, a.size, over=over)
            until = 200 * a.size * 8 * a.flows / (gbps * 1e3)  # 200× the max-min time, in µs
            st, s = trace(sc, topo, flows, a.slice_us, until)
            r = summarize(st, s, gbps, a.flows, a.size, a.slice_us, a.tol)
            conv = "never" if r["conv_us"] is None else f"{r['conv_us']:.0f}"
            print(
                f"| {p} | {gbps} | {conv} | {r['jain']:.3f} | {r['min_rate_gbps']:.3g} | "
                f"{r['cnps_per_flow']:.0f} | {r['q_mean_kb']:.0f} / {r['q_max_kb']:.0f} | "
                f"{r['last_us']:.0f} / {r['maxmin_us']:.0f} | {time.perf_counter() - t0:.1f} |",
                flush=True,
            )
            if a.trace:
                for i, t in enumerate(s["t_us"]):
                    thr = s["bytes"][i] * 8 / (a.slice_us * 1e3)
                    print(
                        f"    t={t:8.1f}  rate "
                        + " ".join(f"{x / 1e9:7.2f}" for x in s["rate"][i])
                        + "  tgt "
                        + " ".join(f"{x / 1e9:7.2f}" for x in s["target"][i])
                        + "  alpha "
                        + " ".join(f"{x:5.3f}" for x in s["alpha"][i])
                        + "  thr "
                        + " ".join(f"{x:7.2f}" for x in thr)
                        + f"  cnp {s['cnps'][i].tolist()}  q {s['queue'][i] / 1e3:7.1f}KB"
                    )
    if a.ring:
        ring(presets, [int(x) for x in a.seeds.split(",")], over)
    return 0


if __name__ == "__main__":
    sys.exit(main())
