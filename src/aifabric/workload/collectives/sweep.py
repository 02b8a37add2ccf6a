"""nccl-tests style sweeps over message sizes and their table."""

from __future__ import annotations

import pandas as pd

from aifabric.topology.core import Topology
from aifabric.workload.collectives.decompose import collective_flows
from aifabric.workload.collectives.run import run_collective
from aifabric.workload.nic import NIC_EFFICIENCY

_TEST_NAME = {
    "all-reduce": "all_reduce_perf",
    "reduce-scatter": "reduce_scatter_perf",
    "all-gather": "all_gather_perf",
    "all-to-all": "alltoall_perf",
    "broadcast": "broadcast_perf",
}


def default_sizes(min_bytes: int = 8, max_bytes: int = 8 * 2**30) -> list[int]:
    """nccl-tests' ``-b 8 -e 8G -f 2`` size ladder."""
    out, s = [], int(min_bytes)
    while s <= max_bytes:
        out.append(s)
        s *= 2
    return out


def nccl_sweep(op: str, sizes, topology: Topology, dtype_bytes: int = 4, **kw) -> pd.DataFrame:
    """One row per size: ``size_bytes, count, type, redop, root, time_us, algbw_gbytes_per_s,
    busbw_gbytes_per_s`` (GB/s; ``algbw_gbps`` / ``busbw_gbps`` the deprecated aliases), ``wrong,
    protocol, model, algorithm``, like nccl-tests' out-of-place columns (``count`` = size /
    type). ``kw`` go to :func:`run_collective`; ``algorithm="auto"`` picks per size (the
    ``algorithm`` column says which)."""
    rows = []
    cache: dict = {}
    algorithm = kw.get("algorithm", "ring")
    r = None
    for s in sizes:
        steps = (
            None
            if algorithm == "auto"
            else collective_flows(
                op,
                s,
                topology,
                ranks=kw.get("ranks"),
                algorithm=algorithm,
                gpus_per_node=kw.get("gpus_per_node"),
                sharp=kw.get("sharp", False),
            )
        )
        r = run_collective(op, s, topology, steps=steps, _ctx_cache=cache, **kw)
        cache.clear()
        count = max(int(s) // dtype_bytes, 1)
        if op in ("reduce-scatter", "all-gather", "all-to-all"):
            count = max(int(s) // dtype_bytes // r.ranks, 1)  # nccl-tests prints the per-rank count
        rows.append(
            {
                "size_bytes": int(s),
                "count": count,
                "type": {4: "float", 2: "half", 1: "int8"}.get(dtype_bytes, "float"),
                "redop": "sum" if op in ("all-reduce", "reduce-scatter") else "none",
                "root": 0 if op == "broadcast" else -1,
                "time_us": r.time_s * 1e6,
                "algbw_gbytes_per_s": r.algbw_gbps,  # GB/s, as nccl-tests prints them
                "busbw_gbytes_per_s": r.busbw_gbps,
                "algbw_gbps": r.algbw_gbps,  # deprecated aliases (GB/s despite the name), one release
                "busbw_gbps": r.busbw_gbps,
                "wrong": "N/A",
                "protocol": r.protocol,
                "model": r.model,
                "algorithm": r.algorithm,
                "nccl_choice": r.nccl_choice,
            }
        )
    df = pd.DataFrame(rows)
    df.attrs.update(
        {
            "op": op,
            "ranks": r.ranks if rows else 0,
            "engine": kw.get("engine", "flow"),
            "algorithm": algorithm,
            "nic_efficiency": r.nic_efficiency if rows else NIC_EFFICIENCY,
        }
    )
    return df


def _num(x: float, width: int) -> str:
    """nccl-tests' number formatting: %.2f, then .1f, .0f, then %.1e when too wide."""
    for fmt in ("{:.2f}", "{:.1f}", "{:.0f}"):
        s = fmt.format(x)
        if len(s) <= width:
            return s.rjust(width)
    return f"{x:.1e}".rjust(width)


def format_nccl_table(df: pd.DataFrame) -> str:
    """The sweep as nccl-tests prints it (out-of-place half), so it lays next to a real run."""
    op = df.attrs.get("op", "all-reduce")
    algo = str(df.attrs.get("algorithm", "ring"))
    if "algorithm" in df.columns and len(df):  # which algorithm ran, by size range (auto switches)
        runs, start = [], 0
        col = df["algorithm"].tolist()
        for i in range(1, len(col) + 1):
            if i == len(col) or col[i] != col[start]:
                runs.append(f"{col[start]} {df['size_bytes'].iloc[start]}–{df['size_bytes'].iloc[i - 1]} B")
                start = i
        chosen = ", ".join(runs) if len(runs) > 1 else col[0]
        algo = f"auto: {chosen}" if algo == "auto" else chosen
    lines = [
        f"# aifabric estimate: {_TEST_NAME.get(op, op)}  nranks {df.attrs.get('ranks', '?')}  "
        f"engine {df.attrs.get('engine', 'flow')}  algorithm {algo}",
        "#",
        "#                                                              out-of-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)",
    ]
    for r in df.itertuples(index=False):
        lines.append(
            f"{r.size_bytes:12d}  {r.count:12d}  {r.type:>8s}  {r.redop:>6s}  {r.root:6d}  "
            f"{_num(r.time_us, 7)} {_num(r.algbw_gbps, 7)} {_num(r.busbw_gbps, 7)}  {r.wrong:>5s}"
        )
    avg = float(df["busbw_gbps"].mean()) if len(df) else 0.0
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {avg:.6g}", "#"]
    return "\n".join(lines)
