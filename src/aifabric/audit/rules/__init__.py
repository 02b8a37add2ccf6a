"""Lossless-RoCE audit rules over parsed SONiC devices.

:data:`RULES` maps a rule id to a :class:`Rule` (one function each). A rule takes a
:class:`Fabric` (the devices, the links between them, the host-side assumptions) and returns
:class:`Finding` records. Rules are vendor-aware (formats.md §1.5): ``size = xon + xoff`` is never
assumed, headroom is judged against a physical floor on every vendor and against the SONiC
formula only where the formula reproduces the vendor's own tables (Spectrum-4/5).

Objects are named like CONFIG_DB keys (``BUFFER_PROFILE|pg_lossless_100000_300m_profile``,
``QUEUE|Ethernet0,Ethernet4|3``) so the fix can be applied where it is reported.

One module per rule family: :mod:`~aifabric.audit.rules.pfc` (PFC priorities),
:mod:`~aifabric.audit.rules.qos_maps` (DSCP/TC/PG/queue maps, the NICs' RoCE and CNP DSCPs),
:mod:`~aifabric.audit.rules.thresholds` (PFC thresholds across a role),
:mod:`~aifabric.audit.rules.buffers` (headroom, lookup table, cable length, pools),
:mod:`~aifabric.audit.rules.ecn` (ECN / WRED), :mod:`~aifabric.audit.rules.pfcwd` (PFC watchdog),
:mod:`~aifabric.audit.rules.mtu`, :mod:`~aifabric.audit.rules.skipped` (tables absent); the shared
records in :mod:`~aifabric.audit.rules.model` and :mod:`~aifabric.audit.rules.common`; the registry
and :func:`run_rules` in :mod:`~aifabric.audit.rules.registry`. A new rule goes into its family's
module and into :data:`RULES`.
"""

from aifabric.audit.rules.common import _port_order, _ports_key
from aifabric.audit.rules.model import (
    NVIDIA_CNP_DSCP,
    NVIDIA_ROCE_DSCP,
    SEVERITIES,
    Fabric,
    Finding,
    Link,
    Rule,
    find_links,
)
from aifabric.audit.rules.mtu import ROCE_MIN_PORT_MTU
from aifabric.audit.rules.pfcwd import PFCWD_ACTIONS, PFCWD_DETECT_MS, PFCWD_POLL_MS, PFCWD_RESTORE_MS
from aifabric.audit.rules.registry import EXTRA_IDS, RULES, SUPERSEDED_BY, run_rules

__all__ = [
    "EXTRA_IDS",
    "NVIDIA_CNP_DSCP",
    "NVIDIA_ROCE_DSCP",
    "PFCWD_ACTIONS",
    "PFCWD_DETECT_MS",
    "PFCWD_POLL_MS",
    "PFCWD_RESTORE_MS",
    "ROCE_MIN_PORT_MTU",
    "RULES",
    "SEVERITIES",
    "SUPERSEDED_BY",
    "Fabric",
    "Finding",
    "Link",
    "Rule",
    "find_links",
    "run_rules",
    "_port_order",
    "_ports_key",
]
