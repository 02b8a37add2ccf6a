"""The intra-server domains: NVLink (:class:`NvlinkDomain`) and NVLink SHARP
(:class:`NvlsDomain`), with the large-size busbw of a collective inside one server."""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.errors import InputError
from aifabric.workload.collectives.base import NVLS_GPUS, OPS


@dataclass(frozen=True)
class NvlinkDomain:
    """The intra-server domain: per-GPU, per-direction bandwidth and a per-step latency."""

    gbytes_per_s: float
    source: str = ""

    @classmethod
    def for_gpu(cls, gpu: str = "h100") -> NvlinkDomain:
        """NCCL's effective NVLink bandwidth for ``gpu``: min(catalog line rate per direction,
        NCCL's model of 18 links × per-link bandwidth — 20.6 GB/s on SM90, 40.1 on SM100
        [S16]). H100: min(450, 370.8) = 370.8 GB/s, matching the ~370 GB/s measured 8-GPU ring
        busbw (hardware-facts §G.3)."""
        line, sm = 450.0, "sm90"
        src = "hardware-facts §H (450 GB/s per direction)"
        try:
            from aifabric.hardware.catalog import default_value, load_catalog

            rec = load_catalog().gpus[gpu]
            line = float(rec.nvlink_gbytes_per_s)
            src = f"catalog gpus.{gpu}.nvlink_gbytes_per_s"
            per_link = default_value("nccl.nvlink_bw_per_link")
        except KeyError as exc:
            raise InputError("unknown GPU", field="gpu", value=gpu, allowed="h100, h200, b200") from exc
        except Exception:
            per_link = {"sm90": 20.6, "sm100": 40.1}
        if gpu.startswith("b"):
            sm = "sm100"
        model = 18 * float(per_link[sm])
        return cls(min(line, model), f"min({src} = {line:g}, NCCL 18 × {per_link[sm]} GB/s [S16])")


# Measured NVLS all-reduce busbw of 8 × H100 [S3][S80] and NCCL's NVLS efficiency per architecture
# [S16]; used when the catalog's defaults are not available.
_NVLS_FALLBACK = {"busbw": 480.0, "gpus": 8, "eff": {"hopper": 0.85, "blackwell": 0.74}, "h100_line": 450.0}


def nvls_allreduce_busbw(gbytes_per_s: float, gpus: int) -> float:
    """Large-size NVLS all-reduce busbw on ``gpus`` GPUs of one server at a per-GPU NVLS rate:
    algbw = rate / (1 + 1/G), busbw = 2(G−1)/G · algbw = 2(G−1)/(G+1) · rate."""
    g = int(gpus)
    return 2 * (g - 1) / (g + 1) * float(gbytes_per_s) if g > 1 else 0.0


@dataclass(frozen=True)
class NvlsDomain:
    """NVLink SHARP (NVSwitch multicast + in-switch reduction): the rate at which one GPU moves
    NVLS traffic through its NVLink ports, per direction (GB/s)."""

    gbytes_per_s: float
    estimate: bool = False
    source: str = ""

    @classmethod
    def for_gpu(cls, gpu: str = "h100") -> NvlsDomain:
        """Calibrated on H100: the measured 8-GPU NVLS all-reduce busbw, 480 GB/s [S3][S80]
        (defaults ``nccl.h100_8gpu_nvls_allreduce_busbw``), inverted through
        :func:`nvls_allreduce_busbw` → 480 · 9/14 = 308.6 GB/s per GPU per direction (≈ 0.83 ×
        NCCL's 18 × 20.6 GB/s, next to NCCL's own NVLS efficiency 0.85 [S16]). Other GPUs are an
        **estimate**: × catalog NVLink rate / H100's (450 GB/s) × NCCL's NVLS efficiency of the
        architecture / Hopper's (0.74 / 0.85 for Blackwell, defaults ``nccl.nvls_efficiency``):
        H200 308.6, B200 537.3 GB/s."""
        if gpu not in NVLS_GPUS:
            raise InputError(
                "NVLS needs an NVSwitch GPU of Hopper or later",
                field="gpu",
                value=gpu,
                allowed=", ".join(NVLS_GPUS),
            )
        arch = NVLS_GPUS[gpu]
        c = dict(_NVLS_FALLBACK)
        line = c["h100_line"]
        src = "fallback constants"
        try:
            from aifabric.hardware.catalog import default_value, load_catalog

            cat = load_catalog()
            c["busbw"] = float(default_value("nccl.h100_8gpu_nvls_allreduce_busbw"))
            c["eff"] = {k: float(v) for k, v in default_value("nccl.nvls_efficiency").items()}
            c["h100_line"] = float(cat.gpus["h100"].nvlink_gbytes_per_s)
            line = float(cat.gpus[gpu].nvlink_gbytes_per_s)
            src = "catalog + defaults"
        except Exception:  # catalog absent or reshaped: the cited constants above
            pass
        g = c["gpus"]
        h100 = c["busbw"] * (g + 1) / (2 * (g - 1))
        if gpu == "h100":
            return cls(h100, False, f"{c['busbw']:g} GB/s 8 × H100 NVLS busbw [S3][S80] × 9/14 ({src})")
        scale = line / c["h100_line"] * c["eff"][arch] / c["eff"]["hopper"]
        return cls(
            h100 * scale,
            True,
            f"estimate: H100 {h100:.1f} GB/s × NVLink {line:g}/{c['h100_line']:g} × NVLS efficiency "
            f"{c['eff'][arch]:g}/{c['eff']['hopper']:g} [S16] ({src})",
        )


def nvlink_busbw_gbps(op: str = "all-reduce", gpu: str = "h100", gpus: int = 8) -> tuple[float, str]:
    """Large-size busbw (GB/s) of ``op`` inside one server of ``gpus`` GPUs and the algorithm that
    gives it — the faster of the NVLink ring (busbw = NCCL's NVLink rate, 370.8 GB/s on H100) and,
    on NVLS GPUs, NVLS (all-reduce 2(G−1)/(G+1) × NVLS rate = 480 GB/s on 8 × H100; reduce-scatter /
    all-gather (G−1)/G × NVLS rate, slower than the ring). Latency terms not included."""
    if op not in OPS:
        raise InputError("unknown collective", field="workload.op", value=op, allowed=", ".join(OPS))
    ring = NvlinkDomain.for_gpu(gpu).gbytes_per_s
    g = int(gpus)
    if gpu not in NVLS_GPUS or g < 2 or op not in ("all-reduce", "reduce-scatter", "all-gather"):
        return ring, "ring"
    rate = NvlsDomain.for_gpu(gpu).gbytes_per_s
    nvls = nvls_allreduce_busbw(rate, g) if op == "all-reduce" else (g - 1) / g * rate
    return (nvls, "nvls") if nvls > ring else (ring, "ring")
