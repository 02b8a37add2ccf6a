"""``roce-config``: one lossless-RoCE design written in the SONiC, NVUE and EOS dialects, plus the
host commands — and the audit of what it writes is clean (tests/test_audit_generate.py).

``--os sonic`` (:func:`roce_config`) writes a config_db fragment, ``--os nvue`` ``nv set`` lines,
``--os eos`` a running-config, ``--os host`` the NIC-side shell commands (``mlnx_qos``,
``mlxconfig``, sysfs ECN, NCCL environment); :func:`render` returns any of them as text.

What it writes (nested config_db.json form, formats.md §1):
PFC on one lossless priority (default 3, NVIDIA/Cumulus convention, hardware-facts §E.3), the
NIC's RoCE DSCP (default 26) → that TC/PG/queue, CNP DSCP 48 → TC 6 on a STRICT queue, headroom
from the SONiC formula (:func:`aifabric.audit.headroom.sonic_headroom`, Spectrum-4 constants by
default, hardware-facts "Recommended defaults"), ECN on the lossless queue (NVIDIA RoCE preset
150 KB / 1.5 MB / 100 %, hardware-facts §E.3 [S11]), and the PFC watchdog (200 ms detect /
200 ms restore / 200 ms poll, action drop, §E.2). The result passes :func:`aifabric.audit.audit_files`.
"""

from __future__ import annotations

import re

from aifabric.audit.headroom import ASICS, DEFAULT_PORT_MTU, sonic_headroom
from aifabric.errors import InputError
from aifabric.units import UnitError, parse_length_m, parse_rate, parse_size

OSES = ("sonic", "nvue", "eos", "host")
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
# Ethernet port speeds in Mb/s (IEEE 802.3 rates SONiC's PORT.speed takes, formats.md §1.1 and
# pg_profile_lookup.ini rows): a speed between them (400.5G) is no port speed.
PORT_SPEEDS_MBPS = (1000, 10000, 25000, 40000, 50000, 100000, 200000, 400000, 800000, 1600000)
# Port MTU per dialect: at least 1280 (IPv6's minimum link MTU, RFC 8200 §5; RoCEv2 runs over
# IP), at most SONiC PORT.mtu's YANG range top 9216 (formats.md §1.1), NVUE 9216, EOS 9214.
MTU_RANGE = {"sonic": (1280, 9216), "nvue": (1280, 9216), "eos": (1280, 9214)}
# ASSUMPTION (no public source): a shared buffer above 1 GiB is a typing mistake — on-chip switch
# buffers are tens to hundreds of MB (the largest in the packaged catalog: 165 MB).
MAX_BUFFER_BYTES = 2**30
_HOSTNAME = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
)


def _check_switch(switch: str) -> None:
    """A hostname as RFC 1123 allows it: labels of letters, digits and hyphens, ≤ 63 characters."""
    if not isinstance(switch, str) or not _HOSTNAME.fullmatch(switch):
        raise InputError(
            "bad switch name",
            field="--switch",
            value=switch,
            allowed="a hostname (RFC 1123: letters, digits, hyphens, dots; labels ≤ 63 characters)",
        )


def _check_mtu(mtu: int, os: str) -> None:
    lo, hi = MTU_RANGE[os]
    if isinstance(mtu, bool) or not lo <= mtu <= hi:
        raise InputError(f"MTU out of range for {os}", field="--mtu", value=mtu, allowed=f"{lo}..{hi}")


def _check_speed(speed: str, rate_bps: int) -> int:
    """The port speed in Mb/s, one of :data:`PORT_SPEEDS_MBPS`."""
    mbps = rate_bps / 10**6
    if mbps not in PORT_SPEEDS_MBPS:
        raise InputError(
            "not an Ethernet port speed",
            field="--speed",
            value=speed,
            allowed=", ".join(f"{m // 1000}G" for m in PORT_SPEEDS_MBPS),
        )
    return int(mbps)


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
    dup = sorted({p for p in names if names.count(p) > 1})
    if dup:
        raise InputError(
            f"port {dup[0]} given more than once", field="--ports", value=spec, allowed="each port once"
        )
    if len(names) > 512:
        raise InputError("too many ports", field="--ports", value=len(names), allowed="1..512")
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
    if os != "sonic":
        raise InputError("roce_config writes SONiC; use render() for other dialects", field="--os", value=os)
    if asic not in ASICS:
        raise InputError("unknown ASIC", field="--asic", value=asic, allowed=", ".join(ASICS))
    if ecn not in ECN_PRESETS:
        raise InputError("unknown ECN preset", field="--ecn", value=ecn, allowed=", ".join(ECN_PRESETS))
    _check_switch(switch)
    _check_mtu(mtu, "sonic")
    try:
        s = speed.strip()
        rate = parse_rate(s + "bps" if s[-1:].upper() in "GMK" else s)
        cable_m = parse_length_m(cable)
        buffer_bytes = parse_size(buffer)
    except UnitError as exc:
        raise InputError(
            "cannot read the value", field="--speed/--cable/--buffer", value=exc.value, allowed=exc.allowed
        ) from None
    speed_mbps = _check_speed(speed, rate)
    if not 0 < buffer_bytes <= MAX_BUFFER_BYTES:
        raise InputError(
            "shared buffer out of range", field="--buffer", value=buffer, allowed="above 0 up to 1GiB"
        )
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


def _checked(
    switch: str,
    speed: str,
    cable: str,
    ports: str | int,
    nic_dscp: int,
    cnp_dscp: int,
    lossless_priority: int,
    mtu: int,
    ecn: str,
) -> tuple[int, int, int, int]:
    """Validate the shared settings → (port count, cable metres, CNP TC, speed Mb/s). Raises InputError."""
    if ecn not in ECN_PRESETS:
        raise InputError("unknown ECN preset", field="--ecn", value=ecn, allowed=", ".join(ECN_PRESETS))
    for name, v, hi in (
        ("--nic-dscp", nic_dscp, 63),
        ("--cnp-dscp", cnp_dscp, 63),
        ("--priority", lossless_priority, 7),
    ):
        if not 0 <= v <= hi:
            raise InputError("out of range", field=name, value=v, allowed=f"0..{hi}")
    if nic_dscp == cnp_dscp:
        raise InputError("RoCE and CNP DSCP must differ", field="--cnp-dscp", value=cnp_dscp)
    try:
        sp = speed.strip()
        rate = parse_rate(sp + "bps" if sp[-1:].upper() in "GMK" else sp)
        cable_m = parse_length_m(cable)
    except UnitError as exc:
        raise InputError(
            "cannot read the value", field="--speed/--cable", value=exc.value, allowed=exc.allowed
        ) from None
    if cable_m <= 0 or cable_m != int(cable_m):
        raise InputError(
            "cable length must be a whole number of metres above 0", field="--cable", value=cable
        )
    mbps = _check_speed(speed, rate)
    n = len(_ports(ports, mbps))
    _check_switch(switch)
    return n, int(cable_m), 6 if lossless_priority != 6 else 7, mbps


def nvue_commands(
    switch: str,
    speed: str = "400G",
    cable: str = "5m",
    *,
    ports: str | int = 32,
    nic_dscp: int = 26,
    cnp_dscp: int = 48,
    lossless_priority: int = 3,
    mtu: int = 9216,
    ecn: str = "nvidia",
) -> str:
    """The design as ``nv set`` lines (Cumulus Linux 5.x NVUE, formats.md §3.2)."""
    _check_mtu(mtu, "nvue")
    n, cable_m, cnp_tc, _ = _checked(
        switch, speed, cable, ports, nic_dscp, cnp_dscp, lossless_priority, mtu, ecn
    )
    p = lossless_priority
    kmin, kmax, pmax = ECN_PRESETS[ecn]
    lines = [
        f"nv set system hostname {switch}",
        f"nv set interface swp1-{n} type swp" if n > 1 else "nv set interface swp1 type swp",
        f"nv set interface swp1-{n} link mtu {mtu}" if n > 1 else f"nv set interface swp1 link mtu {mtu}",
        "nv set qos roce mode lossless",
        f"nv set qos pfc default-global switch-priority {p}",
        f"nv set qos pfc default-global cable-length {cable_m}",
        "nv set qos mapping default-global trust l3",
        f"nv set qos mapping default-global dscp {nic_dscp} switch-priority {p}",
        f"nv set qos mapping default-global dscp {cnp_dscp} switch-priority {cnp_tc}",
        f"nv set qos egress-queue-mapping default-global switch-priority {p} traffic-class {p}",
        f"nv set qos egress-queue-mapping default-global switch-priority {cnp_tc} traffic-class {cnp_tc}",
    ]
    if p != 3:
        lines.append("nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 0")
        lines.append("nv set qos congestion-control default-global traffic-class 3 ecn disable")
    lines += [
        f"nv set qos congestion-control default-global traffic-class {p} ecn enable",
        f"nv set qos congestion-control default-global traffic-class {p} min-threshold {kmin}",
        f"nv set qos congestion-control default-global traffic-class {p} max-threshold {kmax}",
        f"nv set qos congestion-control default-global traffic-class {p} probability {pmax}",
        f"nv set qos egress-scheduler default-global traffic-class {cnp_tc} mode strict",
        f"nv set qos egress-scheduler default-global traffic-class {p} mode dwrr",
        f"nv set qos egress-scheduler default-global traffic-class {p} bw-percent 50",
        "nv config apply",
    ]
    return "\n".join(lines) + "\n"


def _eos_threshold(b: int) -> str:
    return f"{b // 1000} kbytes" if b % 1000 == 0 else f"{b} bytes"


def eos_config(
    switch: str,
    speed: str = "400G",
    cable: str = "5m",
    *,
    ports: str | int = 32,
    nic_dscp: int = 26,
    cnp_dscp: int = 48,
    lossless_priority: int = 3,
    mtu: int = 9214,
    ecn: str = "nvidia",
) -> str:
    """The design as an Arista EOS running-config fragment."""
    _check_mtu(mtu, "eos")
    n, _cable_m, cnp_tc, _ = _checked(
        switch, speed, cable, ports, nic_dscp, cnp_dscp, lossless_priority, mtu, ecn
    )
    p = lossless_priority
    kmin, kmax, pmax = ECN_PRESETS[ecn]
    out = [
        f"hostname {switch}",
        "!",
        f"qos map dscp {nic_dscp} to traffic-class {p}",
        f"qos map dscp {cnp_dscp} to traffic-class {cnp_tc}",
        "!",
        "priority-flow-control pause watchdog default timeout 0.2",
        "!",
    ]
    for i in range(1, n + 1):
        out += [
            f"interface Ethernet{i}/1",
            f"   mtu {mtu}",
            "   qos trust dscp",
            "   priority-flow-control on",
            f"   priority-flow-control priority {p} no-drop",
            "   priority-flow-control pause watchdog",
            "   !",
            f"   tx-queue {p}",
            "      bandwidth percent 50",
            f"      random-detect ecn minimum-threshold {_eos_threshold(kmin)} maximum-threshold "
            f"{_eos_threshold(kmax)} max-mark-probability {pmax}",
            "   !",
            f"   tx-queue {cnp_tc}",
            "      priority strict",
            "!",
        ]
    out.append("end")
    return "\n".join(out) + "\n"


def host_commands(
    *,
    interface: str = "eth0",
    nic_dscp: int = 26,
    cnp_dscp: int = 48,
    lossless_priority: int = 3,
) -> str:
    """The NIC side (ConnectX, MLNX_OFED tools) as shell commands the host reader also audits."""
    for name, v, hi in (
        ("--nic-dscp", nic_dscp, 63),
        ("--cnp-dscp", cnp_dscp, 63),
        ("--priority", lossless_priority, 7),
    ):
        if not 0 <= v <= hi:
            raise InputError("out of range", field=name, value=v, allowed=f"0..{hi}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,15}", interface):
        raise InputError(
            "bad interface name", field="--interface", value=interface, allowed="e.g. eth0, ens1f0np0"
        )
    p = lossless_priority
    cnp_tc = 6 if p != 6 else 7
    pfc = ",".join("1" if i == p else "0" for i in range(8))
    return (
        "\n".join(
            [
                "#!/bin/sh",
                "# NIC side of the lossless RoCE class (aifabric roce-config --os host); run as root.",
                f"mlnx_qos -i {interface} --trust dscp",
                f"mlnx_qos -i {interface} --pfc {pfc}",
                f"mlnx_qos -i {interface} --dscp2prio set,{nic_dscp},{p}",
                f"mlnx_qos -i {interface} --dscp2prio set,{cnp_dscp},{cnp_tc}",
                "# firmware settings, effective after a reset; MST_DEV from `mst status`, e.g. /dev/mst/mt4129_pciconf0",
                f'mlxconfig -y -d "$MST_DEV" set CNP_DSCP_P1={cnp_dscp} CNP_802P_PRIO_P1={cnp_tc} ROCE_CC_PRIO_MASK_P1=255',
                f"echo 1 > /sys/class/net/{interface}/ecn/roce_np/enable/{p}",
                f"echo 1 > /sys/class/net/{interface}/ecn/roce_rp/enable/{p}",
                "# for the training job: ToS = DSCP << 2 | ECT(0)",
                f"export NCCL_IB_TC={nic_dscp * 4 + 2}",
                "export NCCL_IB_GID_INDEX=3  # the RoCE v2 IPv4 GID: check with show_gids",
            ]
        )
        + "\n"
    )


def render(os: str, switch: str, speed: str = "400G", cable: str = "5m", **kw) -> str:
    """``--os`` sonic | nvue | eos | host → the text ``roce-config`` prints."""
    import json

    if os not in OSES:
        raise InputError("unsupported OS", field="--os", value=os, allowed=", ".join(OSES))
    common = {k: kw[k] for k in ("ports", "nic_dscp", "cnp_dscp", "lossless_priority", "ecn") if k in kw}
    if os == "sonic":
        skw = {k: v for k, v in kw.items() if k != "interface"}
        return json.dumps(roce_config(switch, speed, cable, **skw), indent=4) + "\n"
    if "mtu" in kw and kw["mtu"] != DEFAULT_PORT_MTU:
        common["mtu"] = kw["mtu"]
    if os == "nvue":
        return nvue_commands(switch, speed, cable, **common)
    if os == "eos":
        return eos_config(switch, speed, cable, **common)
    return host_commands(
        interface=kw.get("interface", "eth0"),
        **{k: common[k] for k in ("nic_dscp", "cnp_dscp", "lossless_priority") if k in common},
    )
