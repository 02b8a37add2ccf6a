"""Topology as pure data (:class:`Topology`), builders, file import/export, routing tables."""

from aifabric.topology.builders import (
    TOPOLOGIES,
    RailDesign,
    dumbbell,
    fat_tree,
    from_spec,
    leaf_ports,
    leaf_spine,
    max_rail_gpus,
    rail_optimized,
    rail_sizing,
    ring,
    star,
)
from aifabric.topology.core import HOST_TIER, Topology
from aifabric.topology.io import read_hpcc_topology, read_ibnetdiscover, write_hpcc_topology
from aifabric.topology.routing import (
    NextHops,
    ecmp_hash,
    ib_linear_forwarding,
    path_of,
    shortest_path_next_hops,
    switch_salt,
    up_down_next_hops,
)

__all__ = [
    "HOST_TIER",
    "TOPOLOGIES",
    "NextHops",
    "RailDesign",
    "Topology",
    "dumbbell",
    "ecmp_hash",
    "fat_tree",
    "from_spec",
    "from_spec",
    "ib_linear_forwarding",
    "leaf_ports",
    "leaf_spine",
    "max_rail_gpus",
    "path_of",
    "rail_optimized",
    "rail_sizing",
    "read_hpcc_topology",
    "read_ibnetdiscover",
    "ring",
    "shortest_path_next_hops",
    "star",
    "switch_salt",
    "up_down_next_hops",
    "write_hpcc_topology",
]
