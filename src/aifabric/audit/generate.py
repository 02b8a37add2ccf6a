"""``roce-config``: a SONiC config_db fragment with a correct lossless-RoCE profile.

What it writes (nested config_db.json form, formats.md §1):
PFC on one lossless priority (default 3, NVIDIA/Cumulus convention, hardware-facts §E.3), the
NIC's RoCE DSCP (default 26) → that TC/PG/queue, CNP DSCP 48 → TC 6 on a STRICT queue, headroom
from the SONiC formula (:func:`aifabric.audit.headroom.sonic_headroom`, Spectrum-4 constants by
default, hardware-facts "Recommended defaults"), ECN on the lossless queue (NVIDIA RoCE preset
150 KB / 1.5 MB / 100 %, hardware-facts §E.3 [S11]), and the PFC watchdog (200 ms detect /
200 ms restore / 200 ms poll, action drop, §E.2). The result passes :func:`aifabric.audit.audit_files`.
"""

from __future__ import annotations

from aifabric.audit.headroom import ASICS, DEFAULT_PORT_MTU, sonic_headroom
from aifabric.errors import InputError
from aifabric.units import UnitError, parse_length_m, parse_rate, parse_size

OSES = ("sonic",)
# ECN presets (hardware-facts §E.3): Kmin, Kmax in bytes, Pmax in percent.
# A platform string per ASIC, so that the audit applies that ASIC's headroom formula (formats.md §1.5).
PLATFORMS = {
    "spectrum-1": "x86_64-mlnx_msn2700-r0",
    "spectrum-2": "x86_64-mlnx_msn3800-r0",
    "spectrum-3": "x86_64-mlnx_msn4600c-r0",
    "spectrum-4": "x86_64-nvidia_sn5600-r0",
}
ECN_PRESETS = {"nvidia": (150_000, 1_500_000, 100), "sonic": (1_048_576, 2_097_152, 5)}
PFCWD_MS = 200  # hardware-facts §E.2 defaults (detection, restoration, poll)


def _ports(spec: str | int, speed_mbps: int) -> list[str]:
    if isinstance(spec, int) or str(spec).isdigit():
        n = int(spec)
        if not 1 <= n <= 512:
            raise InputError("port count out of range", field="--ports", value=n, allowed="1..512")
        step = 8 if speed_mbps >= 400000 else 4  # lanes per port on the usual SONiC numbering
        return [f"Ethernet{i * step}" for i in range(n)]
    names = [p.strip() for p in str(spec).split(",") if p.strip()]
    if not names or not all(p.startswith("Ethernet") and p[8:].isdigit() for p in names):
        raise InputError(
            "bad port list", field="--ports", value=spec, allowed="a count or Ethernet0,Ethernet8,..."
        )
    return names


def roce_config(
    switch: str,
    speed: str = "400G",
    cable: str = "5m",
    *,
    os: str = "sonic",
    ports: str | int = 32,
    nic_dscp: int = 26,
    cnp_dscp: int = 48,
    lossless_priority: int = 3,
    asic: str = "spectrum-4",
    mtu: int = DEFAULT_PORT_MTU,
    ecn: str = "nvidia",
    buffer: str = "128MiB",
    role: str = "LeafRouter",
) -> dict:
    """Return the config_db fragment as a dict (``json.dumps`` it to write config_db.json)."""
    if os not in OSES:
        raise InputError("unsupported switch OS", field="--os", value=os, allowed=", ".join(OSES))
    if asic not in ASICS:
        raise InputError("unknown ASIC", field="--asic", value=asic, allowed=", ".join(ASICS))
    if ecn not in ECN_PRESETS:
        raise InputError("unknown ECN preset", field="--ecn", value=ecn, allowed=", ".join(ECN_PRESETS))
    try:
        s = speed.strip()
        rate = parse_rate(s + "bps" if s[-1:].upper() in "GMK" else s)
        cable_m = parse_length_m(cable)
        buffer_bytes = parse_size(buffer)
    except UnitError as exc:
        raise InputError(
            "cannot read the value", field="--speed/--cable/--buffer", value=exc.value, allowed=exc.allowed
        ) from None
    speed_mbps = rate // 10**6
    if rate % 10**6 or speed_mbps <= 0 or speed_mbps > 1600000:
        raise InputError("speed out of range", field="--speed", value=speed, allowed="10G..1600G")
    if cable_m <= 0 or cable_m != int(cable_m):
        raise InputError(
            "cable length must be a whole number of metres above 0", field="--cable", value=cable
        )
    for name, v, hi in (
        ("--nic-dscp", nic_dscp, 63),
        ("--cnp-dscp", cnp_dscp, 63),
        ("--priority", lossless_priority, 7),
    ):
        if not 0 <= v <= hi:
            raise InputError("out of range", field=name, value=v, allowed=f"0..{hi}")
    if nic_dscp == cnp_dscp:
        raise InputError("RoCE and CNP DSCP must differ", field="--cnp-dscp", value=cnp_dscp)
    cnp_tc = 6 if lossless_priority != 6 else 7
    cable_s = f"{int(cable_m)}m"
    plist = _ports(ports, speed_mbps)
    h = sonic_headroom(speed_mbps, cable_m, asic=asic, port_mtu=mtu)
    prof = f"pg_lossless_{speed_mbps}_{cable_s}_profile"
    reserved = len(plist) * h.size_bytes
    if reserved * 2 > buffer_bytes:
        raise InputError(
            f"lossless headroom for {len(plist)} ports ({reserved} B) leaves too little shared buffer",
            field="--buffer",
            value=buffer,
            allowed="a larger buffer or fewer ports",
        )
    ingress_pool = buffer_bytes - reserved
    kmin, kmax, pmax = ECN_PRESETS[ecn]
    lp = str(lossless_priority)
    dscp = {str(d): "0" for d in range(64)}
    dscp[str(nic_dscp)] = lp
    dscp[str(cnp_dscp)] = str(cnp_tc)
    ident = {str(i): str(i) for i in range(8)}
    tc_pg = {str(i): "0" for i in range(8)}
    tc_pg[lp] = lp
    cfg: dict = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": switch,
                "type": role,
                **({"platform": PLATFORMS[asic]} if asic in PLATFORMS else {}),
                "buffer_model": "traditional",
                "default_pfcwd_status": "enable",
            }
        },
        "PORT": {p: {"speed": str(speed_mbps), "mtu": str(mtu), "admin_status": "up"} for p in plist},
        "CABLE_LENGTH": {"AZURE": {p: cable_s for p in plist}},
        "BUFFER_POOL": {
            "ingress_lossless_pool": {
                "type": "ingress",
                "mode": "dynamic",
                "size": str(ingress_pool),
                "xoff": "0",
            },
            "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": str(buffer_bytes)},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": str(ingress_pool)},
        },
        "BUFFER_PROFILE": {
            prof: {
                "pool": "ingress_lossless_pool",
                "xon": str(h.xon_bytes),
                "xoff": str(h.xoff_bytes),
                "size": str(h.size_bytes),
                "dynamic_th": "0",
            },
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
        },
        "BUFFER_PG": {},
        "BUFFER_QUEUE": {},
        "DSCP_TO_TC_MAP": {"AZURE": dscp},
        "TC_TO_PRIORITY_GROUP_MAP": {"AZURE": tc_pg},
        "TC_TO_QUEUE_MAP": {"AZURE": dict(ident)},
        "MAP_PFC_PRIORITY_TO_QUEUE": {"AZURE": dict(ident)},
        "PORT_QOS_MAP": {},
        "SCHEDULER": {
            "scheduler.strict": {"type": "STRICT"},
            "scheduler.roce": {"type": "DWRR", "weight": "50"},
            "scheduler.other": {"type": "DWRR", "weight": "50"},
        },
        "WRED_PROFILE": {
            "ROCE_LOSSLESS": {
                "wred_green_enable": "true",
                "wred_yellow_enable": "true",
                "wred_red_enable": "true",
                "ecn": "ecn_all",
                **{f"{c}_min_threshold": str(kmin) for c in ("green", "yellow", "red")},
                **{f"{c}_max_threshold": str(kmax) for c in ("green", "yellow", "red")},
                **{f"{c}_drop_probability": str(pmax) for c in ("green", "yellow", "red")},
            }
        },
        "QUEUE": {},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": str(PFCWD_MS)}},
    }
    for p in plist:
        cfg["BUFFER_PG"][f"{p}|0"] = {"profile": "ingress_lossy_profile"}
        cfg["BUFFER_PG"][f"{p}|{lp}"] = {"profile": prof}
        for q in range(8):
            cfg["BUFFER_QUEUE"][f"{p}|{q}"] = {
                "profile": "egress_lossless_profile" if q == lossless_priority else "egress_lossy_profile"
            }
            if q == lossless_priority:
                cfg["QUEUE"][f"{p}|{q}"] = {"scheduler": "scheduler.roce", "wred_profile": "ROCE_LOSSLESS"}
            elif q == cnp_tc:
                cfg["QUEUE"][f"{p}|{q}"] = {"scheduler": "scheduler.strict"}
            else:
                cfg["QUEUE"][f"{p}|{q}"] = {"scheduler": "scheduler.other"}
        cfg["PORT_QOS_MAP"][p] = {
            "dscp_to_tc_map": "AZURE",
            "tc_to_pg_map": "AZURE",
            "tc_to_queue_map": "AZURE",
            "pfc_to_queue_map": "AZURE",
            "pfc_enable": lp,
            "pfcwd_sw_enable": lp,
        }
        cfg["PFC_WD"][p] = {
            "action": "drop",
            "detection_time": str(PFCWD_MS),
            "restoration_time": str(PFCWD_MS),
            "pfc_stat_history": "disable",
        }
    return cfg
