"""NCCL's latency constants and NVLS timing the measure stage's collective times use
(:mod:`aifabric.stages.measure.network`; hardware-facts §D/§G)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=8)
def _nccl_step_us(domain: str) -> float:
    """NCCL's tuner per-step latency, ring/Simple (the bandwidth-bound protocol), hardware-facts §D."""
    from aifabric.workload.collectives import nccl_constants

    return float(nccl_constants()[domain]["ring"]["simple"])


@lru_cache(maxsize=1)
def _collnet_us() -> float:
    """NCCL's tuner network latency of CollNet-Direct (SHARP), Simple: 31 µs (hardware-facts §D [S16])."""
    from aifabric.workload.collectives import nccl_constants

    return float(nccl_constants()["net"]["collnet-direct"]["simple"])


@lru_cache(maxsize=64)
def _nvls_busbw_bytes(gpu: str, n: int) -> float | None:
    from aifabric.workload.collectives import nvlink_busbw_gbps

    busbw, algo = nvlink_busbw_gbps("all-reduce", gpu, n)
    return busbw * 1e9 if algo == "nvls" else None


def _nvls_allreduce_s(gpu: str, n: int, size_bytes: float) -> float | None:
    """NVLS all-reduce inside one server (NVSwitch reduction + multicast, hardware-facts §D/§G):
    NCCL's one NVLS latency (25 µs, S16) + size at the NVLS busbw (480 GB/s on 8 × H100, S3/S80);
    None when the GPU has no NVLS or the ring is faster at large sizes."""
    bw = _nvls_busbw_bytes(gpu, n)
    if bw is None:
        return None
    return _nvls_latency_us() * 1e-6 + size_bytes * 2 * (n - 1) / n / bw


@lru_cache(maxsize=1)
def _nvls_latency_us() -> float:
    from aifabric.workload.collectives import nccl_constants

    return float(nccl_constants()["nvlink"]["nvls"]["simple"])
