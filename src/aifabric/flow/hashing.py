"""Vectorised twin of :func:`aifabric.topology.routing.ecmp_hash` / :func:`switch_salt`.

The flow model must pick the *same* equal-cost next hop the packet engine picks, so that flows
collide exactly as they would. These functions compute splitmix64 over numpy ``uint64`` arrays
(wrapping arithmetic, as the scalar version masks to 64 bits); a test asserts bit-equality with
the scalar functions.

The selection rule shared with the packet engine: at node ``u`` the equal-cost egress links are
sorted by link id ascending and the flow takes ``options[ecmp_hash(...) % len(options)]``, with
``salt = switch_salt(seed, u)``. RoCEv2 5-tuple: ``sport`` = :func:`flow_sport` (one UDP source
port per QP), ``dport`` = 4791, ``proto`` = 17.
"""

from __future__ import annotations

import numpy as np

ROCE_DPORT = 4791
UDP_PROTO = 17
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a ``uint64`` array (wraps modulo 2**64)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x + _GOLDEN
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def switch_salts(seed: int, nodes: np.ndarray) -> np.ndarray:
    """``switch_salt(seed, node)`` for an array of node ids."""
    nodes = np.asarray(nodes, dtype=np.uint64)
    return mix64((np.uint64((seed << 32) & 0xFFFFFFFFFFFFFFFF)) ^ nodes)


def ecmp_hashes(src, dst, sport, dport, proto, salt) -> np.ndarray:
    """``ecmp_hash`` element-wise over arrays (broadcasting)."""
    m32 = np.uint64(0xFFFFFFFF)
    src = np.asarray(src).astype(np.uint64) & m32
    dst = np.asarray(dst).astype(np.uint64) & m32
    key = src | (dst << np.uint64(32))
    x = mix64(key ^ np.asarray(salt, dtype=np.uint64))
    tup = (
        (np.asarray(sport).astype(np.uint64) & np.uint64(0xFFFF))
        | ((np.asarray(dport).astype(np.uint64) & np.uint64(0xFFFF)) << np.uint64(16))
        | ((np.asarray(proto).astype(np.uint64) & np.uint64(0xFF)) << np.uint64(32))
    )
    return mix64(x ^ tup)


def flow_sport(flow_id) -> np.ndarray:
    """The UDP source port of a flow (one QP per flow): 49152 + id mod 16384 (IANA dynamic range),
    the convention shared with the packet engine."""
    return 49152 + (np.asarray(flow_id, dtype=np.int64) % 16384)
