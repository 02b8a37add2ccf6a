"""Counter snapshot readers: one file → a :class:`Scrape` (samples of canonical counters).

Formats (detected from the content, see :func:`read_counters`):

* **Prometheus text exposition** — node_exporter's infiniband and ethtool collectors
  (``node_infiniband_*``, ``node_ethtool_*``), guilbaults/infiniband-exporter (``infiniband_*_total``
  with ``local_name`` / ``local_port`` / ``remote_*`` labels), rdma_exporter
  (``rdma_port_stat_total`` / ``rdma_port_hw_stat_total`` with a ``counter`` label) and SONiC
  COUNTERS_DB stat names (``sai_port_stat{stat="SAI_PORT_STAT_PFC_3_RX_PKTS"}``). The device is the
  ``instance`` (or ``hostname`` / ``host`` / ``node`` / ``local_name``) label, else the file name.
* **PromQL range-query JSON** (``/api/v1/query_range``: ``data.resultType: matrix``): the first
  and last point of each series, with their times.
* **SONiC** ``show pfc counters`` (Rx / Tx tables) and ``show queue counters`` text.
* **perfquery** (``# Port counters: Lid L port P`` / ``# Port extended counters``) and
  ``ethtool -S`` text.

Text formats name the device by a shell prompt line (``admin@leaf0:~$ show pfc counters``) or a
``# device: NAME`` line before the block, else by the file name. Every file may also say how long
its counters accumulated with a ``# interval: SECONDS`` line (what ``aifabric simulate
--counters-out`` writes). A file that is none of these is one :class:`~aifabric.errors.InputError`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from aifabric.diagnose import metrics as M
from aifabric.errors import InputError

MAX_BYTES = 256 * 2**20
PROMPT = re.compile(r"^\s*[\w.-]+@([\w.-]+)(?::[^$#]*)?[$#]\s*(.*)$")
DEVICE_LINE = re.compile(r"^#\s*device:\s*(\S+)", re.I)
INTERVAL_LINE = re.compile(r"^#\s*interval:\s*([0-9.eE+-]+)", re.I)
PROM_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+(-?\d+))?\s*$")
PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')
DEVICE_LABELS = ("hostname", "host", "node", "instance", "local_name", "device_name")


@dataclass(frozen=True)
class Sample:
    """One counter of one port: device and port as the source names them."""

    device: str
    port: str
    counter: str
    value: float
    prio: int | None = None
    time_s: float | None = None
    peer: tuple[str, str] | None = None  # (device, port) when the source names the far end


@dataclass
class Scrape:
    """One file's samples."""

    source: str
    format: str
    samples: list[Sample] = field(default_factory=list)
    interval_s: float | None = None  # how long the counters accumulated, when the file says


def _fail(path, problem: str, allowed: str, line: int | None = None) -> InputError:
    return InputError(problem, file=str(path), field=f"line {line}" if line else None, allowed=allowed)


FORMATS_ALLOWED = (
    "Prometheus text exposition, PromQL range-query JSON, SONiC 'show pfc counters' / "
    "'show queue counters', perfquery or 'ethtool -S' output"
)


def read_counters(path) -> Scrape:
    """Read one counter file (format detected from its content)."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise _fail(p, f"larger than {MAX_BYTES // 2**20} MiB", "a counter snapshot")
        text = p.read_text(errors="replace")
    except FileNotFoundError:
        raise InputError("no such file", file=str(p), field="--counters") from None
    except IsADirectoryError:
        raise InputError("a folder, not a file", file=str(p), field="--counters") from None
    head = text.lstrip()[:1]
    if head in "{[" and head:
        return _promql(p, text)
    lines = text.splitlines()
    if any("Port Rx" in s and "PFC0" in s for s in lines) or any("Counter/pkts" in s for s in lines):
        return _sonic(p, lines)
    if any(s.startswith("# Port") and "counters" in s for s in lines):
        return _perfquery(p, lines)
    if any(s.strip() == "NIC statistics:" for s in lines):
        return _ethtool(p, lines)
    if any(_is_sample(s) for s in lines[:200] if s and not s.startswith("#")):
        return _prometheus(p, lines)
    raise _fail(p, "not a counter snapshot this tool reads", FORMATS_ALLOWED)


def _is_sample(line: str) -> bool:
    m = PROM_LINE.match(line.strip())
    if not m:
        return False
    try:
        float(m.group(3))
    except ValueError:
        return False
    return True


def _interval(lines: list[str]) -> float | None:
    for s in lines[:50]:
        m = INTERVAL_LINE.match(s.strip())
        if m:
            return float(m.group(1))
    return None


def _num(path, tok: str, lineno: int) -> float:
    try:
        return float(tok.replace(",", ""))
    except ValueError:
        raise _fail(path, f"not a number: {tok[:30]!r}", "a counter value", lineno) from None


# ---- Prometheus ------------------------------------------------------------------------------
def _labels(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    return {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in PROM_LABEL.findall(text)}


def _device(labels: dict[str, str], default: str) -> str:
    for k in DEVICE_LABELS:
        if labels.get(k):
            return labels[k].split(":")[0] if k == "instance" else labels[k]
    return default


def prom_sample(name: str, labels: dict[str, str], value: float, default_device: str, t=None):
    """A Prometheus series → a :class:`Sample` (None for series we do not use)."""
    dev = _device(labels, default_device)
    port = labels.get("port", "")
    nic = labels.get("device", "")
    if name in M.NODE_INFINIBAND:
        return Sample(dev, _nic_port(nic, port), M.NODE_INFINIBAND[name], value, None, t)
    if name == M.NODE_INFINIBAND_RATE:
        return Sample(dev, _nic_port(nic, port), "rate_gbps", value * 8 / 1e9, None, t)
    if name == M.NODE_INFINIBAND_STATE:
        return Sample(dev, _nic_port(nic, port), "oper_up", float(value == 5), None, t)
    if name.startswith("node_ethtool_"):
        hit = M.ethtool_counter(name.removeprefix("node_ethtool_"))
        if hit:
            c, s, prio = hit
            return Sample(dev, nic or port, c, value * s, prio, t)
        return None
    if name in M.IB_EXPORTER:
        c, s = M.IB_EXPORTER[name]
        peer = None
        if labels.get("remote_name"):
            peer = (labels["remote_name"], labels.get("remote_port", ""))
        return Sample(
            labels.get("local_name", dev), labels.get("local_port", port), c, value * s, None, t, peer
        )
    if name in ("rdma_port_stat_total", "rdma_port_hw_stat_total") and labels.get("counter") in M.SYSFS:
        c, s = M.SYSFS[labels["counter"]]
        return Sample(dev, _nic_port(nic, port), c, value * s, None, t)
    if name == "sai_port_stat" or name in _AIFABRIC_PORT:
        dev = labels.get("device") or labels.get("hostname") or default_device
    if name == "sai_port_stat":
        hit = M.sai_counter(labels.get("stat", ""))
        if hit:
            c, s, prio = hit
            return Sample(dev, labels.get("interface", port), c, value * s, prio, t)
        return None
    if name in _AIFABRIC_PORT:
        prio = int(labels["priority"]) if labels.get("priority", "").isdigit() else None
        return Sample(dev, labels.get("interface", port), _AIFABRIC_PORT[name], value, prio, t)
    return None


# SONiC per-port gauges and counters that no SAI stat name covers (queue watermark, PFC watchdog,
# oper status): vinted/sonic-exporter's queue watermark name, and sai_* spellings of the rest
_AIFABRIC_PORT = {
    "sai_queue_watermark_bytes": "queue_watermark_bytes",
    "sai_queue_ecn_marked_packets": "ecn_marked_packets",
    "sai_pfcwd_storm_detected": "pfcwd_storms",
    "sai_port_oper_status": "oper_up",
    "sai_port_speed_gbps": "rate_gbps",
}


def _nic_port(nic: str, port: str) -> str:
    return f"{nic}/{port}" if nic and port else (nic or port)


def _prometheus(path, lines: list[str]) -> Scrape:
    sc = Scrape(str(path), "prometheus", interval_s=_interval(lines))
    default = Path(path).stem
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        m = PROM_LINE.match(s)
        if not m:
            raise _fail(path, "unreadable sample line", 'name{label="v",...} value [timestamp]', lineno)
        name, lab, val, ts = m.groups()
        v = _num(path, val, lineno)
        t = int(ts) / 1000 if ts else None
        smp = prom_sample(name, _labels(lab), v, default, t)
        if smp is not None:
            sc.samples.append(smp)
    return sc


def _promql(path, text: str) -> Scrape:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(path, f"not JSON ({exc.msg})", "a PromQL query_range result", exc.lineno) from None
    res = data.get("data", {}) if isinstance(data, dict) else {}
    if not isinstance(res, dict) or res.get("resultType") != "matrix":
        raise _fail(
            path, "not a PromQL range result", 'a query_range answer: {"data": {"resultType": "matrix"}}'
        )
    sc = Scrape(str(path), "promql")
    default = Path(path).stem
    for series in res.get("result", []):
        metric = dict(series.get("metric", {}))
        name = metric.pop("__name__", "")
        values = series.get("values") or []
        for t, v in (values[0], values[-1]) if len(values) > 1 else values[:1]:
            smp = prom_sample(name, metric, float(v), default, float(t))
            if smp is not None:
                sc.samples.append(smp)
    return sc


# ---- text tables ---------------------------------------------------------------------------------
def _blocks(lines: list[str], default: str):
    """(device, command, [(lineno, line)]) per prompt / ``# device:`` block."""
    dev, cmd, block = default, "", []
    for lineno, raw in enumerate(lines, 1):
        m = PROMPT.match(raw)
        d = DEVICE_LINE.match(raw.strip())
        if m or d:
            if block:
                yield dev, cmd, block
            dev, cmd, block = (m.group(1), m.group(2), []) if m else (d.group(1), "", [])
            continue
        block.append((lineno, raw))
    if block:
        yield dev, cmd, block


def _sonic(path, lines: list[str]) -> Scrape:
    sc = Scrape(str(path), "sonic", interval_s=_interval(lines))
    for dev, cmd, block in _blocks(lines, Path(path).stem):
        if ETH_HEAD.search(cmd):  # a host's ethtool -S in the same session log
            sc.samples.extend(_ethtool_block(path, dev, cmd, block))
            continue
        direction = None
        qcols: list[str] | None = None
        for lineno, raw in block:
            toks = raw.split()
            if not toks or set(raw.strip()) <= {"-", " "}:
                continue
            if toks[:2] == ["Port", "Rx"] or toks[:2] == ["Port", "Tx"]:
                direction, qcols = toks[1].lower(), None
                continue
            if "Counter/pkts" in raw:
                qcols, direction = toks, None
                continue
            if direction and len(toks) == 9 and toks[0] != "Port":
                for prio, tok in enumerate(toks[1:]):
                    if tok != "N/A":
                        v = _num(path, tok, lineno)
                        sc.samples.append(Sample(dev, toks[0], f"pfc_{direction}_frames", v, prio))
            elif qcols and len(toks) == len(qcols) and toks[0] != "Port":
                sc.samples.extend(_queue_row(path, dev, dict(zip(qcols, toks, strict=True)), lineno))
    if not sc.samples:
        raise _fail(
            path,
            "no port rows under the SONiC table headers",
            "show pfc counters / show queue counters output",
        )
    return sc


def _queue_row(path, dev: str, row: dict[str, str], lineno: int) -> list[Sample]:
    q = row.get("TxQ", "")
    if not q[2:].isdigit():
        return []
    prio = int(q[2:])
    out = []
    for col, c in (("Counter/bytes", "tx_bytes"), ("Counter/pkts", "tx_packets"), ("Drop/pkts", "tx_drops")):
        tok = row.get(col)
        if tok is not None and tok != "N/A":
            out.append(Sample(dev, row["Port"], c, _num(path, tok, lineno), prio))
    return out


PERF_HEAD = re.compile(r"^# Port (?:extended )?counters:\s*Lid\s+(\d+)\s+port\s+(\d+)", re.I)
PERF_FIELD = re.compile(r"^(\w+):\.*\s*(\S+)$")


def _perfquery(path, lines: list[str]) -> Scrape:
    sc = Scrape(str(path), "perfquery", interval_s=_interval(lines))
    for dev, _cmd, block in _blocks(lines, Path(path).stem):
        port = None
        for lineno, raw in block:
            s = raw.strip()
            m = PERF_HEAD.match(s)
            if m:
                lid, port = m.groups()
                if dev == Path(path).stem:
                    dev = f"lid:{lid}"
                continue
            f = PERF_FIELD.match(s)
            if port is None or not f or f.group(1) not in M.PERFQUERY:
                continue
            c, scale = M.PERFQUERY[f.group(1)]
            sc.samples.append(Sample(dev, port, c, _num(path, f.group(2), lineno) * scale))
    if not sc.samples:
        raise _fail(
            path, "no perfquery counter blocks", "'# Port counters: Lid L port P' followed by Name:....value"
        )
    return sc


ETH_FIELD = re.compile(r"^\s*([\w.\[\]-]+):\s*(-?\d+)\s*$")
ETH_HEAD = re.compile(r"ethtool\s+-S\s+(\S+)")


def _ethtool(path, lines: list[str]) -> Scrape:
    sc = Scrape(str(path), "ethtool", interval_s=_interval(lines))
    for dev, cmd, block in _blocks(lines, Path(path).stem):
        sc.samples.extend(_ethtool_block(path, dev, cmd, block))
    if not sc.samples:
        raise _fail(
            path, "no ethtool statistics this tool reads", "ethtool -S output (NIC statistics: name: value)"
        )
    return sc


def _ethtool_block(path, dev: str, cmd: str, block) -> list[Sample]:
    m = ETH_HEAD.search(cmd)
    nic = m.group(1) if m else ""
    out = []
    for lineno, raw in block:
        f = ETH_FIELD.match(raw)
        if not f:
            continue
        hit = M.ethtool_counter(f.group(1))
        if hit:
            c, scale, prio = hit
            out.append(Sample(dev, nic, c, _num(path, f.group(2), lineno) * scale, prio))
    return out
