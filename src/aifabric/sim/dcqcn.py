"""DCQCN presets: the reaction-point (NIC) and notification-point parameters, each with its source.

Values are in base units (bit/s, picoseconds, bytes). Rates that the sources give for a 25 Gb/s or
40 Gb/s port scale with the line rate where the source says so (``*_per_gbps``); the ConnectX
firmware gives absolute rates (``rate_ai`` / ``rate_hai``: "The rate, in Mbits per second, used to
increase rpTargetRate", no line-rate term). The references are hardware-facts.md §E.4 (and
peer-baselines.md for ``ns3-mellanox``).

Sources quoted below: [HPCC run.py] github.com/alibaba-edu/High-Precision-Congestion-Control
simulation/run.py (``config_template`` and the ``--cc dcqcn`` line: the configuration of the
ns-3 runs in peer-baselines.md); [HPCC rdma-hw.cc] the same repository,
simulation/src/point-to-point/model/rdma-hw.cc; [mlx5 PRM] the ConnectX congestion-parameter
descriptions as the FreeBSD mlx5ib driver carries them (``MLX5_IB_CONG_PARAMS``, sys/dev/mlx5/
mlx5_ib/mlx5_ib.h) and mstflint's mlxconfig parameter table; [NVIDIA DCQCN] NVIDIA's "DCQCN
Parameters" page (community.mellanox.com DOC-2790; DOCA "DCQCN CC Parameters").
"""

from __future__ import annotations

US = 1_000_000  # ps per µs

# name -> {param: (value, source)}
DCQCN_PRESETS: dict[str, dict[str, tuple[float, str]]] = {
    "ns3-mellanox": {
        "g": (1 / 256, "HPCC ns-3 EWMA_GAIN 1/256 (hardware-facts E.4, peer-baselines)"),
        "rate_ai_per_gbps": (20e6 / 100, "HPCC repo RATE_AI 5 Mb/s × B/25G = 20 Mb/s at 100G (E.4)"),
        "rate_hai_per_gbps": (200e6 / 100, "HPCC repo RATE_HAI 50 Mb/s × B/25G = 200 Mb/s at 100G (E.4)"),
        "min_rate": (
            1000e6,
            "HPCC run.py MIN_RATE 1000Mb/s (the attribute default 100 Mb/s is overridden; E.4)",
        ),
        "alpha_update_timer": (1 * US, "HPCC repo default t_alpha (ALPHA_RESUME_INTERVAL) 1 µs (E.4)"),
        "rate_decrease_interval": (4 * US, "HPCC repo default RATE_DECREASE_INTERVAL 4 µs (E.4)"),
        "rate_increase_timer": (300 * US, "HPCC repo default RP_TIMER 300 µs (E.4)"),
        "byte_counter": (10_000_000, "DCQCN byte counter B = 10 MB (paper / ns-3 model, E.4)"),
        "fast_recovery_stages": (
            1,
            "HPCC run.py FAST_RECOVERY_TIMES 1 (the attribute default 5 is overridden)",
        ),
        "cnp_interval": (
            0,
            "HPCC rdma-hw.cc ReceiveUdp: every ACK of an ECN-marked packet carries the CNP "
            "flag (ACK per packet, run.py L2_ACK_INTERVAL 1): no NP pacing",
        ),
        "alpha0": (1.0, "INITIAL_ALPHA_VALUE 1023/1024 ≈ 1 (E.4)"),
        "min_dec_fac": (0.5, "RPG_MIN_DEC_FAC 50 %: a single cut at most halves the rate (E.4)"),
        "clamp_target": (0, "HPCC ns-3 CLAMP_TARGET_RATE 0: target follows the rate only after an increase"),
        "timer_only": (1, "HPCC ns-3 Mellanox model: increase stages from RP_TIMER only, no byte counter"),
    },
    "paper": {
        "g": (1 / 256, "DCQCN paper g = 1/256 (E.4)"),
        "rate_ai_per_gbps": (40e6 / 40, "DCQCN paper R_AI 40 Mb/s on a 40G testbed (E.4)"),
        "rate_hai_per_gbps": (
            400e6 / 40,
            "R_HAI = 10 × R_AI, the HPCC-repo ratio (50 vs 5 Mb/s per 25G, E.4); the paper gives none",
        ),
        "min_rate": (100e6, "HPCC ns-3 default MIN_RATE 100 Mb/s (paper gives none, E.4)"),
        "alpha_update_timer": (55 * US, "paper α-update timer K = 55 µs (E.4)"),
        "rate_decrease_interval": (50 * US, "paper variant rate-decrease interval 50 µs (E.4)"),
        "rate_increase_timer": (55 * US, "paper rate-increase timer T = 55 µs (E.4)"),
        "byte_counter": (10_000_000, "paper byte counter B = 10 MB (E.4)"),
        "fast_recovery_stages": (5, "paper F = 5 (E.4)"),
        "cnp_interval": (50 * US, "paper NP CNP interval N = 50 µs (E.4)"),
        "alpha0": (1.0, "paper α starts at 1 (E.4)"),
        "min_dec_fac": (0.5, "α ≤ 1 ⇒ the paper's cut R(1 − α/2) is at most a halving"),
        "clamp_target": (1, "paper: every cut sets R_T = R_C"),
        "timer_only": (0, "paper: timer and byte counter both drive the stages"),
    },
    "nvidia-firmware": {
        "g": (5 / 1024, "ConnectX DCE_TCP_G 1019/1024 ⇒ g ≈ 5/1024 (E.4, interpretation)"),
        "rate_ai": (
            5e6,
            "RPG_AI_RATE 5 Mb/s (E.4), absolute: 'The rate, in Mbits per second, used to increase "
            "rpTargetRate in the active increase state' (mlx5 PRM, NVIDIA DCQCN); no line-rate scaling",
        ),
        "rate_hai": (50e6, "RPG_HAI_RATE 50 Mb/s (E.4), absolute, as rate_ai (mlx5 PRM, NVIDIA DCQCN)"),
        "min_rate": (1e6, "RPG_MIN_RATE 1 Mb/s (E.4)"),
        "alpha_update_timer": (1 * US, "DCE_TCP_RTT 1 µs (E.4)"),
        "rate_decrease_interval": (4 * US, "RATE_REDUCE_MONITOR_PERIOD 4 µs (E.4)"),
        "rate_increase_timer": (300 * US, "RPG_TIME_RESET 300 µs (E.4)"),
        "byte_counter": (32767, "RPG_BYTE_RESET 32767 B (E.4)"),
        "fast_recovery_stages": (1, "RPG_THRESHOLD 1 (E.4, interpretation: the paper's F)"),
        "cnp_interval": (4 * US, "MIN_TIME_BETWEEN_CNPS 4 µs (E.4)"),
        "alpha0": (1023 / 1024, "INITIAL_ALPHA_VALUE 1023 (E.4)"),
        "min_dec_fac": (0.5, "RPG_MIN_DEC_FAC 50 % (E.4)"),
        "clamp_target": (
            0,
            "CLAMP_TGT_RATE 0 with CLAMP_TGT_RATE_AFTER_TIME_INC 1 (E.4): a CNP sets target = rate "
            "if the rate was increased since the last cut, by the byte counter or (ATI) the timer",
        ),
        "timer_only": (0, "RPG_TIME_RESET and RPG_BYTE_RESET both drive increases (E.4)"),
    },
}

_OVERRIDES = {  # DcqcnSpec field -> preset key
    "g": "g",
    "min_rate": "min_rate",
    "rate_increase_timer": "rate_increase_timer",
    "alpha_update_timer": "alpha_update_timer",
    "rate_decrease_interval": "rate_decrease_interval",
    "byte_counter": "byte_counter",
    "fast_recovery_stages": "fast_recovery_stages",
    "cnp_interval": "cnp_interval",
}


def dcqcn_params(spec, line_rate_bps: int) -> dict[str, float]:
    """The effective parameters: the preset, scaled to ``line_rate_bps``, with the scenario's
    overrides applied. Keys: g, rate_ai, rate_hai, min_rate (bit/s), timers (ps), byte_counter,
    fast_recovery_stages, cnp_interval, alpha0, min_dec_fac."""
    preset = DCQCN_PRESETS[spec.preset]
    gbps = line_rate_bps / 1e9
    out = {k: v for k, (v, _) in preset.items() if not k.endswith("_per_gbps")}
    for key in ("rate_ai", "rate_hai"):
        if key + "_per_gbps" in preset:
            out[key] = preset[key + "_per_gbps"][0] * gbps
    for field, key in _OVERRIDES.items():
        value = getattr(spec, field)
        if value is not None:
            out[key] = value
    if spec.rate_ai is not None:
        out["rate_ai"] = spec.rate_ai
    if spec.rate_hai is not None:
        out["rate_hai"] = spec.rate_hai
    return out
